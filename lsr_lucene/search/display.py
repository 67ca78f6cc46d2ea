"""The top hits of each query on screen, as Pyserini's interactive searcher prints them (rank, docid, score), each
with the start of the document's stored text (issue 51; the options: lsr_lucene.search.cli_output).
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, TextIO

SCREEN_HITS = 10  # hits per query on screen unless --hits says otherwise (a run file keeps DEFAULT_HITS)
TEXT_CHARS = 90  # characters of each hit's stored text shown


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
