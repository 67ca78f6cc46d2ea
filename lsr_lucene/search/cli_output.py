"""Where a searching verb's run goes (issue 51): a file (``--output FILE``), standard output (``--output -``), or
without ``--output`` the top hits of each query on screen (:mod:`lsr_lucene.search.display`), for ``search``,
``compose`` and ``bm25``. The run is written as always (a temporary file for stdout and the screen), so all three
show the same hits.
"""
from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Iterator, Mapping, TextIO

from lsr_lucene import cli_options as opt
from lsr_lucene.search.display import SCREEN_HITS, print_hits

STDOUT = "-"


def add_output_and_hits(parser: argparse.ArgumentParser, what: str = "TREC run file to write") -> None:
    """``--output FILE|-`` (optional) and ``--hits N`` whose default depends on it (resolved by :func:`resolve`)."""
    opt.add_output(parser, f"{what}; '-': the run on standard output; left out: the top hits of each query on "
                           "screen (rank, docid, score and the start of the stored text)", required=False)
    opt.add_number(parser, "--hits", default=None, metavar="N",
                   help=f"results per query (default: {opt.DEFAULT_HITS} in a run, {SCREEN_HITS} on screen)")


def resolve(args: argparse.Namespace, default_hits: int = opt.DEFAULT_HITS) -> None:
    """Fill ``--hits`` by destination and refuse an existing ``--output FILE`` (without ``--overwrite``) before
    any work."""
    from lsr_lucene.io.output import refuse_existing

    if args.hits is None:
        args.hits = SCREEN_HITS if args.output is None else default_hits
    if to_file(args.output):
        refuse_existing(args.output, args.overwrite, directory=False)


def to_file(output: str | None) -> bool:
    """Whether the run goes to a file of the user's (not the screen or stdout)."""
    return output not in (None, STDOUT)


def messages(output: str | None) -> TextIO:
    """Where a verb's own lines go: stdout beside a run file, stderr when stdout holds the run or the hits."""
    return sys.stdout if to_file(output) else sys.stderr


@contextlib.contextmanager
def run_target(output: str | None) -> Iterator[str]:
    """The path to write the run to: ``output``, or a temporary file (removed afterwards) for stdout or screen."""
    if to_file(output):
        yield str(output)
        return
    with tempfile.TemporaryDirectory(prefix="lsr-lucene-run-") as tmp:
        yield str(Path(tmp) / "run")


def show(run: str | Path, output: str | None, index: str | Path, hits: int,
         queries: Mapping[str, str] | None = None, stream: TextIO | None = None) -> None:
    """Copy the run to stdout (``--output -``) or print its top ``hits`` per query (no ``--output``)."""
    stream = stream or sys.stdout
    if output == STDOUT:
        with open(run, encoding="utf-8") as source:
            shutil.copyfileobj(source, stream)
    elif output is None:
        from lsr_lucene.io.runs import read_hits

        print_hits(read_hits(run), index, hits, queries or {}, stream)
    stream.flush()


