"""The dense-impacts sidecar (``<index>/dense-impacts``): the most frequent terms' impacts as one byte per document.

Exact search (``ImpactMaxScoreQuery``'s ``DenseBlockMaxScorer``) bounds blocks of 32 documents with these terms'
block maxima and sums their rows with array loops only in the blocks that can still reach the top k, instead of
decoding their long postings lists: on wiki2015 the terms in at least 1/16 of the passages hold about 92 % of a
query's postings, and the sidecar is about a quarter of the index's size (``runs/real/666k/``). Terms with an impact
above 255 stay on their postings. The index itself stays as Anserini writes it (Anserini and Pyserini ignore the
folder); the sidecar is tied to the index's segments and ignored (exact search falls back to postings) once they
change. Search reads the rows from the memory-mapped files, off the JVM heap, which keeps only their block maxima
(1/32 of the sidecar): runs/memory/dense_heap.md.
"""
from __future__ import annotations

from pathlib import Path

from lsr_lucene.errors import InputError
from lsr_lucene.jvm.classes import java_class, java_errors

DENSE_IMPACTS_DIR = "dense-impacts"  # DenseImpacts.DIR
DEFAULT_SHARE = 0.0625  # terms in at least 1/16 of the documents


def build_dense_impacts(index_dir: str | Path, min_df_share: float = DEFAULT_SHARE,
                        field: str = "contents") -> dict:
    """Write ``<index>/dense-impacts`` holding every term of ``field`` in at least ``min_df_share`` of a segment's
    documents (impacts up to 255) as a byte per document; an old sidecar is replaced once the new one is complete."""
    if not 0 < min_df_share <= 1:
        raise InputError(f"the dense-impacts share must be in (0, 1], got {min_df_share}")
    if not Path(index_dir, "segments.gen").exists() and not any(Path(index_dir).glob("segments_*")):
        raise InputError(f"{index_dir}: no Lucene index here")
    cls = java_class("index.DenseImpactsIndexer")
    with java_errors(str(index_dir)):
        terms, size, postings = cls.build(str(index_dir), str(field), float(min_df_share))
    return {"min_df_share": float(min_df_share), "terms": int(terms), "size_bytes": int(size),
            "postings": int(postings)}


def dense_impacts_share(index_dir: str | Path) -> float:
    """The share an index's dense-impacts sidecar was built with, 0 when it has none (read from its folder)."""
    path = Path(index_dir, DENSE_IMPACTS_DIR, "min_df_share")  # DenseImpactsIndexer.SHARE_FILE
    try:
        return float(path.read_text().strip()) if path.is_file() else 0.0
    except ValueError:
        raise InputError(f"{path}: not a number; rebuild the sidecar with lsr-lucene index --dense-impacts") from None


def dense_impacts_summary(info: dict) -> str:
    """One line on a dense-impacts sidecar."""
    return (f"dense-impacts sidecar: {info['terms']:,} terms in at least {info['min_df_share']:g} of the documents "
            f"({info['postings']:,} postings, {info['size_bytes'] / 1e6:.1f} MB)")
