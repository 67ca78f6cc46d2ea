"""The top-postings sidecar (``<index>/top-postings``): each term's highest-impact postings, for approximate search.

Approximate search (``lsr-lucene search --approximate D``, ``ImpactSearcher(approximate=D)``) takes the top D
documents of a query's heaviest terms on these short lists and scores them exactly from the sidecar's forward field
(each document's whole vector). Exact search does not read it. The index itself stays as Anserini writes it
(Anserini and Pyserini ignore the sidecar folder); on wiki2015 N = 2.4 % of the passages served well
(``runs/real/``).
"""
from __future__ import annotations

from pathlib import Path

from lsr_lucene.errors import InputError
from lsr_lucene.jvm.classes import java_class, java_errors

TOP_POSTINGS_DIR = "top-postings"  # TopPostingsIndexer.DIR


def build_top_postings(index_dir: str | Path, postings_per_term: int,
                       field: str = "contents") -> dict:
    """Write ``<index>/top-postings`` keeping each term's ``postings_per_term`` highest impacts (ties: lower docid);
    an old sidecar is replaced only once the new one is complete."""
    if postings_per_term <= 0:
        raise InputError(f"postings per term must be positive, got {postings_per_term}")
    if not Path(index_dir, "segments.gen").exists() and not any(Path(index_dir).glob("segments_*")):
        raise InputError(f"{index_dir}: no Lucene index here")
    cls = java_class("index.TopPostingsIndexer")
    with java_errors(str(index_dir)):
        docs, terms, kept, postings = cls.build(str(index_dir), str(field), int(postings_per_term))
    return {"postings_per_term": int(postings_per_term), "documents": int(docs), "terms": int(terms),
            "kept_postings": int(kept), "postings": int(postings)}


def top_postings_per_term(index_dir: str | Path) -> int:
    """Postings per term of an index's top-postings sidecar, 0 when it has none."""
    if not Path(index_dir, TOP_POSTINGS_DIR).is_dir():
        return 0
    cls = java_class("index.TopPostingsIndexer")  # starts the JVM our way before java_errors imports jnius
    with java_errors(str(index_dir)):
        return int(cls.postingsPerTerm(str(index_dir)))
