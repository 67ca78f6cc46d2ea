"""The analysed text field (``<index>/text`` sidecar) that the strict filter of explicit exclusions reads.

Built from each document's stored text (the ``contents`` of the stored ``raw`` field, what ``lsr-lucene index``
and Anserini's ``-storeRaw`` keep), docid by docid (Java ``index.TextIndexer``; Lucene's EnglishAnalyzer with
positions, the analyser of :mod:`lsr_lucene.search.text_filter`); ``lsr-lucene index`` writes it by default,
``lsr-lucene index --index DIR --text`` adds it to an existing or Pyserini-built index, and ``reorder`` carries it.
"""
from __future__ import annotations

import time
from pathlib import Path

from lsr_lucene.jvm.classes import java_class, java_errors

TEXT_DIR = "text"  # search.TextFilter.DIR


def build_text_field(index_dir: str | Path, raw_field: str = "raw") -> dict:
    """Write (or replace) ``<index>/text`` from the index's stored ``raw_field``; its documents, those with text,
    its size and build time."""
    cls = java_class("index.TextIndexer")
    started = time.perf_counter()
    with java_errors(str(index_dir)):
        docs, with_text = cls.build(str(index_dir), raw_field)
    folder = Path(index_dir) / TEXT_DIR
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return {"documents": int(docs), "with_text": int(with_text), "size_bytes": size,
            "seconds": round(time.perf_counter() - started, 3), "analyzer": "EnglishAnalyzer"}


def text_field_summary(info: dict) -> str:
    """One line on a text field: documents with text, size, time."""
    return (f"text field (explicit exclusions): {info['with_text']:,} of {info['documents']:,} documents with text, "
            f"{info['size_bytes'] / 1e6:.1f} MB, {info['seconds']:.1f} s")


def has_text_field(index_dir: str | Path) -> bool:
    """Whether an index has the text field of explicit exclusions."""
    return (Path(index_dir) / TEXT_DIR).is_dir()
