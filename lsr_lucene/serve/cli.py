"""Serve an impact index over HTTP/JSON (Anserini's REST v1 shape): search, compose, batch, documents.

``lsr-lucene serve --index DIR [--name NAME] [--host 127.0.0.1] [--port 8081] [--threads N] [--encoder NAME]
[--heap-factor H] [--max-body-mb MB]``. The port is taken, the index opened in the
JVM and the encoder's name checked, then the port is served (one process; no worker fork after the JVM starts) and
one line ``serving NAME (N docs) at http://HOST:PORT`` says so; the models load behind it (requests wait for them,
``/health`` is 503 "loading" until then) and a line on stderr says when they are ready. A missing or non-impact
index, an unknown encoder or a port in use is one ``error:`` line and exit status 2 before listening; a model that
fails to load is one too, and the server stops. SIGINT / SIGTERM stop it gracefully (uvicorn finishes the requests
in flight).
"""
from __future__ import annotations

import errno
import socket
import sys
import threading
import time
from typing import Callable

from lsr_lucene import cli_options as opt
from lsr_lucene.errors import InputError, SetupError
from lsr_lucene.serve import MAX_BODY_MB

DEFAULT_PORT = 8081
STARTED = time.perf_counter()  # when the command's modules were imported: "ready" lines count from here


def build_parser():
    parser = opt.Parser(prog="lsr-lucene serve", description=__doc__.splitlines()[0])
    opt.add_index(parser, "impact index folder (lsr-lucene index)")
    parser.add_argument("--name", default=None, type=url_name,
                        help="the index's name in URLs /v1/NAME/... (default: the folder's)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine)")
    opt.add_number(parser, "--port", kind=opt.PORT, default=DEFAULT_PORT,
                   help=f"port (default {DEFAULT_PORT}; 0: a free port, shown in the ready line)")
    opt.add_threads(parser, help="search worker threads (each attached to the JVM once)")
    opt.add_encoder(parser, None, "query encoder: registry name, HF id or local folder (default: the index's model)")
    opt.add_retired(parser, "--approximate", "--query-cut")
    opt.add_heap_factor(parser)  # the default of every text and vector search; a request may give its own
    opt.add_number(parser, "--max-body-mb", kind=opt.POSITIVE_NUMBER, default=MAX_BODY_MB,
                   help=f"largest request body in MiB; a larger one is answered 413 before it is read whole "
                        f"(default {MAX_BODY_MB})")
    return parser


def url_name(text: str) -> str:
    """``--name``: one URL path segment (a "/", "?", "#", "%" or a space would serve the index where no URL reaches
    it), else InputError."""
    if not text or any(ch in text for ch in "/?#% \t\\") or text in (".", ".."):
        raise InputError(f"--name must be one URL path segment (no /, ?, #, %, spaces), got {text!r}")
    return text


def bind(host: str, port: int) -> socket.socket:
    """The listening address taken now (served later): a port in use is an error before anything loads."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InputError(f"--host {host}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        why = "port in use" if exc.errno == errno.EADDRINUSE else exc.strerror
        raise InputError(f"cannot listen on {host}:{port}: {why}") from None
    sock.set_inheritable(True)
    return sock


def main(argv: list[str] | None = None) -> int:
    try:
        import importlib

        importlib.import_module("fastapi")
        import uvicorn
    except ImportError as exc:
        raise SetupError(f"lsr-lucene serve needs {exc.name}: pip install -c constraints.txt -e '.[serve]'") from None
    from lsr_lucene.serve.app import create_app
    from lsr_lucene.serve.engine import SearchEngine
    from lsr_lucene.verbosity import is_verbose

    args = build_parser().parse_args(argv)
    sock = bind(args.host, args.port)
    try:
        engine = SearchEngine(args.index, args.name, args.encoder, heap_factor=args.heap_factor,
                              loading="later")  # loaded once it listens
    except BaseException:
        sock.close()
        raise
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    ready = f"serving {engine.name} ({engine.num_docs} docs) at http://{shown}:{port}"
    limit = int(args.max_body_mb * 2 ** 20)
    config = uvicorn.Config(create_app(engine, args.threads, limit), log_level="info" if is_verbose() else "warning",
                            access_log=is_verbose(), lifespan="on", timeout_graceful_shutdown=8)
    server = ready_server(config, ready, engine.load_in_thread)  # the models load once the port is served
    failure: list[BaseException] = []
    threading.Thread(target=report_loaded, args=([engine], lambda: setattr(server, "should_exit", True), failure),
                     daemon=True).start()
    try:
        server.run(sockets=[sock])
        failed = list(failure)  # a load that failed stopped the server (not one that close() cut short)
    except KeyboardInterrupt:  # uvicorn re-raises the SIGINT it caught, after its graceful shutdown
        return 130
    finally:
        engine.close()
        sock.close()
    if failed:
        raise failed[0]
    return 1 if server.failed else 0


def report_loaded(engines: list, stop, failure: list[BaseException]) -> None:
    """Once the engines have loaded: one stderr line with the seconds since start (each part's with -v); a failed
    load calls ``stop()`` (the server's) and is kept in ``failure`` for the command's error line."""
    from lsr_lucene.verbosity import is_verbose

    for engine in engines:
        try:
            engine.wait()
        except BaseException as exc:  # noqa: BLE001  (the command reports it after the server stopped)
            failure.append(exc)
            stop()
            return
    since = time.perf_counter() - STARTED
    parts = "; ".join(f"{engine.name}: " + ", ".join(f"{part} {s:.1f} s" for part, s in engine.seconds.items())
                      for engine in engines)
    print(f"ready: models loaded {since:.1f} s after start" + (f" ({parts})" if is_verbose() else ""),
          file=sys.stderr, flush=True)


def ready_server(config, ready: str, listening: Callable[[], None] | None = None):
    """uvicorn's Server that prints the ready line once it listens, then calls ``listening()`` (e.g. starts loading
    the models: not before, where they would slow the start; ``failed``: its startup failed)."""
    import uvicorn

    class ReadyServer(uvicorn.Server):
        failed = False

        async def startup(self, sockets=None) -> None:
            await super().startup(sockets=sockets)
            if self.should_exit:
                self.failed = True
            else:
                print(ready, flush=True)
                if listening is not None:
                    listening()

    return ReadyServer(config)


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
