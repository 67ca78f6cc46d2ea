"""Serve impact indexes to agents over the Model Context Protocol (stdio, or streamable HTTP on 127.0.0.1).

``lsr-lucene mcp --index DIR [--index DIR ...] [--encoder NAME] [--transport stdio|http] [--host 127.0.0.1]
[--port 8000]``. The indexes are opened and their encoders' names checked first (a missing or non-impact index,
an unknown encoder or a port in use is one ``error:`` line and exit status 2); then the server answers, and the
models load behind it (a tool call waits for them). Over stdio, stdout carries the protocol only: one line on
stderr says what is served and another when the models are ready. Over HTTP, one line on stdout
``serving NAMES at http://HOST:PORT/mcp`` says it listens. Register it with an MCP client as the command
``lsr-lucene mcp --index /path/to/index``.
"""
from __future__ import annotations

import contextlib
import sys
import threading

from lsr_lucene import cli_options as opt
from lsr_lucene.errors import SetupError

DEFAULT_PORT = 8000  # Pyserini's MCP server's


def build_parser():
    parser = opt.Parser(prog="lsr-lucene mcp", description=__doc__.splitlines()[0])
    opt.add_index(parser, "impact index folder (lsr-lucene index); repeat for several (named by their folders)",
                  action="append")
    opt.add_encoder(parser, None, "query encoder of every index: registry name, HF id or local folder "
                                  "(default: each index's model)")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                        help="stdio (default: an MCP client starts this command) or http (streamable HTTP at /mcp)")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP: address to listen on (default 127.0.0.1)")
    opt.add_number(parser, "--port", kind=opt.PORT, default=DEFAULT_PORT,
                   help=f"HTTP: port (default {DEFAULT_PORT}; 0: a free port, shown in the ready line)")
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        import fastmcp  # noqa: F401
    except ImportError:
        raise SetupError("lsr-lucene mcp needs fastmcp: pip install -c constraints.txt -e '.[mcp]'") from None
    from lsr_lucene.mcp.indexes import Indexes
    from lsr_lucene.mcp.tools import build_server
    from lsr_lucene.serve.cli import bind, report_loaded
    from lsr_lucene.verbosity import is_verbose, redirected

    args = build_parser().parse_args(argv)
    sock = bind(args.host, args.port) if args.transport == "http" else None
    try:
        with redirected((1,), 2) if sock is None else contextlib.nullcontext():
            indexes = Indexes(args.index, args.encoder)
    except BaseException:
        if sock is not None:
            sock.close()
        raise
    server = build_server(indexes)
    names = ", ".join(f"{e.name} ({e.num_docs} docs)" for e in indexes.engines.values())
    failure: list[BaseException] = []
    log_level = "INFO" if is_verbose() else "WARNING"
    try:
        if sock is None:
            print(f"lsr-lucene mcp: serving {names} over stdio; models loading", file=sys.stderr, flush=True)
            threading.Thread(target=report_loaded, args=(list(indexes.engines.values()), lambda: None, failure),
                             daemon=True).start()
            server.run("stdio", show_banner=False, log_level=log_level)
        else:
            return serve_http(server, sock, names, indexes, log_level)
    except KeyboardInterrupt:
        return 130
    finally:
        indexes.close()
        if sock is not None:
            sock.close()
    return 0


def serve_http(server, sock, names: str, indexes, log_level: str) -> int:
    """Streamable HTTP at ``/mcp`` on the bound socket, with the ready line once uvicorn listens."""
    import uvicorn

    from lsr_lucene.serve.cli import ready_server, report_loaded

    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    app = server.http_app(path="/mcp")
    config = uvicorn.Config(app, log_level=log_level.lower(), access_log=log_level == "INFO", lifespan="on",
                            timeout_graceful_shutdown=8)
    http = ready_server(config, f"serving {names} at http://{shown}:{port}/mcp")
    failure: list[BaseException] = []
    threading.Thread(target=report_loaded, args=(list(indexes.engines.values()),
                                                 lambda: setattr(http, "should_exit", True), failure),
                     daemon=True).start()
    http.run(sockets=[sock])
    if failure:  # a load that failed stopped the server
        raise failure[0]
    return 1 if http.failed else 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
