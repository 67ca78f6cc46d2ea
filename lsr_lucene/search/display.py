"""Where a searching verb's run goes (issue 51): a file (``--output FILE``), standard output (``--output -``), or
without ``--output`` the top hits of each query on screen as Pyserini's interactive searcher prints them (rank,
docid, score), each with the start of the document's stored text.

The run is written as always (a temporary file for stdout and the screen), so all three show the same hits.
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

STDOUT = "-"
SCREEN_HITS = 10  # hits per query on screen unless --hits says otherwise (a run file keeps DEFAULT_HITS)
TEXT_CHARS = 90  # characters of each hit's stored text shown


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


def print_hits(results: Mapping[str, list[tuple[str, float]]], index: str | Path, hits: int,
               queries: Mapping[str, str], stream: TextIO) -> None:
    """Per query a header line, then ``rank docid score  text...`` lines (Pyserini's ``{rank:2} {docid} {score}``)."""
    from lsr_lucene.io.runs import format_score

    shown = {qid: ranked[:hits] for qid, ranked in results.items()}
    texts = stored_texts(index, {docid for ranked in shown.values() for docid, _ in ranked})
    width = max((len(d) for ranked in shown.values() for d, _ in ranked), default=1)
    for number, qid in enumerate(queries or shown):
        text = queries.get(qid)
        print(("\n" if number else "") + f"query {qid}" + (f": {text}" if text else ""), file=stream)
        ranked = shown.get(qid, [])
        if not ranked:
            print("   (no hits)", file=stream)
        for rank, (docid, score) in enumerate(ranked, 1):
            print(f"{rank:2} {docid:{width}} {format_score(score)}  {texts.get(docid, '')}".rstrip(), file=stream)


def stored_texts(index: str | Path, docids: set[str], chars: int = TEXT_CHARS) -> dict[str, str]:
    """The start of each document's stored text (the ``contents`` of its stored ``raw`` field: the vector line of
    an impact index, the JSON document of Anserini's BM25 index), on one line; absent where nothing is stored."""
    from lsr_lucene.jvm import runtime as jvm
    from lsr_lucene.search.impact_searcher import contents_of

    if not docids:
        return {}
    directory = jvm.autoclass("org.apache.lucene.store.FSDirectory").open(
        jvm.autoclass("java.nio.file.Paths").get(str(index)))
    out: dict[str, str] = {}
    try:
        reader = jvm.autoclass("org.apache.lucene.index.DirectoryReader").open(directory)
        try:
            searcher = jvm.autoclass("org.apache.lucene.search.IndexSearcher")(
                reader, signature="(Lorg/apache/lucene/index/IndexReader;)V")  # not its IndexReaderContext one
            Term, TermQuery = (jvm.autoclass(f"org.apache.lucene.{c}") for c in ("index.Term", "search.TermQuery"))
            stored = reader.storedFields()
            for docid in sorted(docids):
                found = searcher.search(TermQuery(Term("id", docid)), 1).scoreDocs
                raw = stored.document(found[0].doc).get("raw") if len(found) else None
                text = " ".join((contents_of(raw) or "").split())
                if text:
                    out[docid] = text if len(text) <= chars else text[:chars - 1].rstrip() + "…"
        finally:
            reader.close()
    finally:
        directory.close()
    return out
