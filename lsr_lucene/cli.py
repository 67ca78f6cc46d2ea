"""The ``lsr-lucene`` command: one subcommand per module, each also runnable as ``python -m lsr_lucene.<module>``."""
from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import Callable

from lsr_lucene.errors import Interrupted, LsrError

# subcommand -> (module, one-line help)
SUBCOMMANDS = {
    "encode": ("lsr_lucene.encode.cli", "encode documents or queries into sparse JsonVectorCollection vectors"),
    "index": ("lsr_lucene.index.cli", "build a Lucene impact index (the index Anserini's IndexCollection builds, faster)"),
    "reorder": ("lsr_lucene.index.cli_reorder", "reorder an index's docids by recursive graph bisection (BP)"),
    "search": ("lsr_lucene.search.cli", "search an impact index and write a TREC run file"),
    "bm25": ("lsr_lucene.search.cli_bm25",
             "BM25 (optionally RM3/SDM) baseline run with Anserini on the same corpus"),
    "eval": ("lsr_lucene.eval.cli", "trec_eval tables for several runs side by side; "
                                    "--contrastive: ExcluIR/NevIR pairs, no qrels"),
    "demo": ("lsr_lucene.demo.cli", "encode, index, search and evaluate the shipped demo collection"),
    "build-java": ("lsr_lucene.jvm.cli", "compile java/ into the lsr_lucene jar"),
    "java-home": ("lsr_lucene.jvm.home", "print the Java 21+ runtime's home (--export: lines for Pyserini's CLI)"),
    "compose": ("lsr_lucene.compose.cli", "search set-compositional and negated queries"),
    "parse-negation": ("lsr_lucene.compose.parse_negation", "print the composition the cue parser reads in "
                                                            "negated queries (JSON lines; --explain: the cues)"),
    "longdocs": ("lsr_lucene.longdocs.cli", "segment long documents; aggregations and ExactSDM/SoftSDM"),
    "train": ("lsr_lucene.train.cli", "fine-tune a (signed) sparse encoder on contrastive pairs"),
    "fuse": ("lsr_lucene.fuse.cli", "fuse runs (RRF, min-max or z-score linear), weights fitted on training topics"),
    "dense": ("lsr_lucene.dense.cli", "dense leg: encode with all-MiniLM-L6-v2 and search a Faiss flat index"),
    "serve": ("lsr_lucene.serve.cli", "serve an impact index over HTTP/JSON (Anserini's REST v1 shape)"),
    "mcp": ("lsr_lucene.mcp.cli", "serve impact indexes to agents over the Model Context Protocol (stdio or HTTP)"),
    "distributed": ("lsr_lucene.distributed.cli", "encode, index and search on a Ray cluster (identical runs)"),
}

# verbs that left the package (issue 66) -> the one line that says where they run now
MOVED = {"bench": "the benchmarks left the package: run them from a checkout of the repository, "
                  "python -m scripts.bench ... (docs/benchmarks.md)"}


def run_main(main: Callable[[list[str] | None], int], argv: list[str] | None = None,
             exit_process: bool | None = None) -> int:
    """Run a module's ``main``: a user error or a Java exception becomes one ``error: ...`` line and exit status 2,
    an interrupt one line saying what was kept and how to resume (exit status 130).

    ``exit_process`` (default: when ``argv`` is None, i.e. the real command line) ends the process at once after an
    interrupt, so that no C++ thread of torch or the JVM dies noisily while the interpreter shuts down.
    """
    from lsr_lucene.verbosity import kept_verbosity, quiet_libraries

    with kept_verbosity():  # this command's -v ends with it
        quiet_libraries()  # library logs and bars only with -v/--verbose
        return _run(main, argv, exit_process)


def _run(main: Callable[[list[str] | None], int], argv: list[str] | None, exit_process: bool | None) -> int:
    """``main(argv)`` with run_main's handling of errors and interrupts."""
    try:
        return main(argv)
    except BrokenPipeError:  # the reader went away (`... | head`): stop quietly, as Unix tools do
        _silence_stdout()
        return 0
    except LsrError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(interrupt_message(exc), file=sys.stderr)
        if exit_process or (exit_process is None and argv is None):
            _exit_now(130)
        return 130
    except Exception as exc:
        jnius = sys.modules.get("jnius")
        if jnius is None or not isinstance(exc, jnius.JavaException):
            raise
        from lsr_lucene.jvm.classes import java_exception_line

        print(f"error: {java_exception_line(exc)}", file=sys.stderr)
        return 2


def interrupt_message(exc: KeyboardInterrupt) -> str:
    """What an interrupt left: what a resumable command kept (lsr_lucene.errors.Interrupted), else that nothing
    unfinished was installed."""
    if isinstance(exc, Interrupted) and str(exc):
        return f"interrupted; {exc}"
    return "interrupted; outputs not yet complete were not installed (their temporaries were removed)"


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that flushing it at exit raises no second BrokenPipeError."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _exit_now(status: int) -> None:
    """Flush, stop a local Ray instance, and end the process without interpreter shutdown (os._exit)."""
    ray = sys.modules.get("ray")
    if ray is not None:
        with contextlib.suppress(Exception):
            if ray.is_initialized():
                ray.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def _usage() -> str:
    lines = ["usage: lsr-lucene [-v] <command> [options]   (lsr-lucene <command> --help for its options)",
             "  -v, --verbose  show library logs, warnings and the model loading bar (hidden by default)", "",
             "commands:"]
    lines += [f"  {name:<14} {help_text}" for name, (_, help_text) in SUBCOMMANDS.items()]
    return "\n".join(lines)


def unknown_command(name: str) -> str:
    """The error line of a command that does not exist, with the closest ones (difflib) or the list of all."""
    import difflib

    close = difflib.get_close_matches(name, SUBCOMMANDS, n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(repr(c) for c in close)}?" if close else \
        f"commands: {', '.join(SUBCOMMANDS)}"
    return f"error: unknown command {name!r}; {hint} (lsr-lucene --help describes them)"


def main(argv: list[str] | None = None) -> int:
    """``lsr-lucene [-v] <command> ...``: run one command; stdout closed early by its reader ends quietly."""
    from lsr_lucene.verbosity import kept_verbosity

    try:
        with kept_verbosity():  # lsr-lucene -v <command>: verbose for this command alone
            return _dispatch(argv)
    except BrokenPipeError:
        _silence_stdout()
        return 0


def _dispatch(argv: list[str] | None) -> int:
    argv_given = argv
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-v", "--verbose"):  # lsr-lucene -v <command>: the same as <command> -v
        from lsr_lucene.verbosity import set_verbose

        set_verbose(True)
        argv = argv[1:]
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0 if argv else 2
    if argv[0] in ("-V", "--version"):
        from lsr_lucene import __version__

        print(__version__)
        return 0
    name, rest = argv[0], argv[1:]
    if name in MOVED:
        print(f"error: {MOVED[name]}", file=sys.stderr)
        return 2
    if name not in SUBCOMMANDS:
        print(unknown_command(name), file=sys.stderr)
        return 2
    try:
        module = importlib.import_module(SUBCOMMANDS[name][0])
    except ModuleNotFoundError as exc:
        if exc.name == SUBCOMMANDS[name][0]:
            print(f"error: command {name!r} is not available in this version", file=sys.stderr)
            return 2
        raise
    return run_main(module.main, rest, exit_process=argv_given is None)


if __name__ == "__main__":
    sys.exit(main())
