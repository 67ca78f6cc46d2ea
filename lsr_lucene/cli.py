"""The ``lsr-lucene`` command: one subcommand per module, each also runnable as ``python -m lsr_lucene.<module>``."""
from __future__ import annotations

import importlib
import sys
from typing import Callable

from lsr_lucene.errors import LsrError

# subcommand -> (module, one-line help)
SUBCOMMANDS = {
    "encode": ("lsr_lucene.encode.cli", "encode documents or queries into sparse JsonVectorCollection vectors"),
    "index": ("lsr_lucene.index.cli", "build a Lucene impact index (the index Anserini's IndexCollection builds, faster)"),
    "reorder": ("lsr_lucene.reorder", "reorder an index's docids by recursive graph bisection (BP)"),
    "search": ("lsr_lucene.search.cli", "search an impact index and write a TREC run file"),
    "bm25": ("lsr_lucene.bm25", "BM25 (optionally RM3/SDM) baseline run with Anserini on the same corpus"),
    "eval": ("lsr_lucene.eval.cli", "trec_eval tables for several runs side by side"),
    "demo": ("lsr_lucene.demo", "encode, index, search and evaluate the shipped demo collection"),
    "build-java": ("lsr_lucene.jvm.cli", "compile java/ into the lsr_lucene jar"),
    "compose": ("lsr_lucene.compose.cli", "search set-compositional and negated queries"),
    "longdocs": ("lsr_lucene.longdocs.cli", "segment long documents; aggregations and ExactSDM/SoftSDM"),
    "train": ("lsr_lucene.train.cli", "fine-tune a (signed) sparse encoder on contrastive pairs"),
    "fuse": ("lsr_lucene.fuse.cli", "fuse runs (RRF, min-max or z-score linear), weights fitted on training topics"),
    "dense": ("lsr_lucene.dense.cli", "dense leg: encode with all-MiniLM-L6-v2 and search a Faiss flat index"),
    "bench": ("lsr_lucene.bench.cli", "pipeline benchmark: encoding, indexing and search latency"),
    "distributed": ("lsr_lucene.distributed.cli", "encode, index and search on a Ray cluster (identical runs)"),
}


def run_main(main: Callable[[list[str] | None], int], argv: list[str] | None = None) -> int:
    """Run a module's ``main`` and turn user errors into one ``error: ...`` line and exit status 2."""
    try:
        return main(argv)
    except LsrError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; partial outputs were removed", file=sys.stderr)
        return 130


def _usage() -> str:
    lines = ["usage: lsr-lucene <command> [options]   (lsr-lucene <command> --help for its options)", "", "commands:"]
    lines += [f"  {name:<11} {help_text}" for name, (_, help_text) in SUBCOMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0 if argv else 2
    if argv[0] in ("-V", "--version"):
        from lsr_lucene import __version__

        print(__version__)
        return 0
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        print(f"error: unknown command {name!r}\n{_usage()}", file=sys.stderr)
        return 2
    try:
        module = importlib.import_module(SUBCOMMANDS[name][0])
    except ModuleNotFoundError as exc:
        if exc.name == SUBCOMMANDS[name][0]:
            print(f"error: command {name!r} is not available in this version", file=sys.stderr)
            return 2
        raise
    return run_main(module.main, rest)


if __name__ == "__main__":
    sys.exit(main())
