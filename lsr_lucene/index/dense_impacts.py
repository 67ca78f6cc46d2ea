"""The dense-impacts sidecar (``<index>/dense-impacts``): the most frequent terms' impacts as one byte per document.

Exact search (``ImpactMaxScoreQuery``'s ``DenseBlockMaxScorer``) bounds blocks of 32 documents with these terms'
block maxima and sums their rows with array loops only in the blocks that can still reach the top k, instead of
decoding their long postings lists: on wiki2015 the terms in at least 1/16 of the passages hold about 92 % of a
query's postings, and the sidecar is about a quarter of the index's size (``runs/real/666k/``). Terms with an impact
above 255 stay on their postings. The index itself stays as Anserini writes it (Anserini and Pyserini ignore the
folder); the sidecar is tied to the index's segments and ignored (exact search falls back to postings) once they
change. Search reads the rows from the memory-mapped files, off the JVM heap, which keeps only their block maxima
(1/32 of the sidecar): runs/memory/dense_heap.md.

Its share by default (``auto``, issue 51): the terms in at least 1/16 of the documents, as many of the most frequent
as fit in a quarter of the index's size (:func:`auto_share`), so the sidecar never grows past 0.25x the index; its
build reads only those terms' postings (seconds at 100k passages, a few percent of the build).
"""
from __future__ import annotations

from pathlib import Path

from lsr_lucene.errors import InputError
from lsr_lucene.jvm.classes import java_class, java_errors

DENSE_IMPACTS_DIR = "dense-impacts"  # DenseImpacts.DIR
DEFAULT_SHARE = 0.0625  # terms in at least 1/16 of the documents
AUTO = "auto"  # DEFAULT_SHARE, raised where its terms would exceed MAX_SIZE_RATIO of the index's size
MAX_SIZE_RATIO = 0.25  # the sidecar's bytes at most this share of the index's (issue 51: never above 0.3x)


def parse_share(text: str) -> float | str:
    """A dense-impacts share as given on a command line: ``auto`` or a number from 0 (none) to 1."""
    value = str(text).strip().lower()
    if value == AUTO:
        return AUTO
    try:
        share = float(value)
    except ValueError:
        share = -1.0
    if not 0 <= share <= 1:
        raise InputError(f"--dense-impacts must be auto or a number from 0 (none) to 1, got {text}")
    return share


def auto_share(index_dir: str | Path, field: str = "contents") -> float:
    """The sidecar's share for this index (0: no term qualifies): DEFAULT_SHARE, raised just above a term's
    document-frequency share where the terms at or above it would take more than MAX_SIZE_RATIO of the index's
    bytes (a dense term costs a byte per document of its segment)."""
    import numpy as np

    shares, costs = _document_frequency_shares(index_dir, field)
    keep = shares >= DEFAULT_SHARE
    shares, costs = shares[keep], costs[keep]
    order = np.argsort(-shares, kind="stable")
    shares, spent = shares[order], np.cumsum(costs[order])
    budget = MAX_SIZE_RATIO * _main_index_bytes(index_dir)
    fitting = int(np.searchsorted(spent, budget, side="right"))  # the most frequent terms that fit
    if fitting == len(shares):
        return DEFAULT_SHARE if len(shares) else 0.0
    cut = shares[fitting]  # the most frequent term that does not fit: it and every term as rare are left out
    return float(cut * (1 + 1e-9)) if (shares > cut).any() else 0.0


def _document_frequency_shares(index_dir: str | Path, field: str):
    """(df / documents of its segment, documents of its segment) of every term of ``field`` in every segment."""
    import numpy as np

    from lsr_lucene.jvm import runtime as jvm

    directory = jvm.autoclass("org.apache.lucene.store.FSDirectory").open(
        jvm.autoclass("java.nio.file.Paths").get(str(index_dir)))
    shares: list[float] = []
    costs: list[int] = []
    try:
        reader = jvm.autoclass("org.apache.lucene.index.DirectoryReader").open(directory)
        try:
            for leaf in reader.leaves().toArray():
                segment = leaf.reader()
                terms = segment.terms(field)
                if terms is None:
                    continue
                documents = segment.maxDoc()
                enum = terms.iterator()
                while enum.next() is not None:
                    shares.append(enum.docFreq() / documents)
                    costs.append(documents)
        finally:
            reader.close()
    finally:
        directory.close()
    return np.asarray(shares, dtype=np.float64), np.asarray(costs, dtype=np.float64)


def _main_index_bytes(index_dir: str | Path) -> int:
    """Bytes of the Lucene index itself (its files, not its sidecar folders)."""
    return sum(p.stat().st_size for p in Path(index_dir).iterdir() if p.is_file())


def resolve_share(index_dir: str | Path, share: float | str) -> float:
    """A share as given (a number, or ``auto``: :func:`auto_share`) as the number the sidecar is built with."""
    return auto_share(index_dir) if share == AUTO else float(share)


def build_dense_impacts(index_dir: str | Path, min_df_share: float | str = AUTO,
                        field: str = "contents") -> dict:
    """Write ``<index>/dense-impacts`` holding every term of ``field`` in at least ``min_df_share`` (``auto``:
    :func:`auto_share`) of a segment's documents (impacts up to 255) as a byte per document; an old sidecar is
    replaced once the new one is complete. Where ``auto`` finds no term worth it, nothing is written (terms 0)."""
    import time

    if not Path(index_dir, "segments.gen").exists() and not any(Path(index_dir).glob("segments_*")):
        raise InputError(f"{index_dir}: no Lucene index here")
    started = time.perf_counter()
    share = resolve_share(index_dir, min_df_share)
    if min_df_share == AUTO and share == 0:
        return {"min_df_share": 0.0, "rule": AUTO, "terms": 0, "size_bytes": 0, "postings": 0, "seconds": 0.0}
    if not 0 < share <= 1:
        raise InputError(f"the dense-impacts share must be in (0, 1], got {min_df_share}")
    cls = java_class("index.DenseImpactsIndexer")
    with java_errors(str(index_dir)):
        terms, size, postings = cls.build(str(index_dir), str(field), float(share))
    return {"min_df_share": share, "rule": AUTO if min_df_share == AUTO else "given", "terms": int(terms),
            "size_bytes": int(size), "postings": int(postings), "index_bytes": _main_index_bytes(index_dir),
            "seconds": round(time.perf_counter() - started, 3)}


def dense_impacts_share(index_dir: str | Path) -> float:
    """The share an index's dense-impacts sidecar was built with, 0 when it has none (read from its folder)."""
    path = Path(index_dir, DENSE_IMPACTS_DIR, "min_df_share")  # DenseImpactsIndexer.SHARE_FILE
    try:
        return float(path.read_text().strip()) if path.is_file() else 0.0
    except ValueError:
        raise InputError(f"{path}: not a number; rebuild the sidecar with lsr-lucene index --dense-impacts") from None


def dense_impacts_summary(info: dict) -> str:
    """One line on a dense-impacts sidecar."""
    if not info["terms"]:
        return "dense-impacts sidecar: none (no term is in 1/16 of the documents within a quarter of the index's size)"
    rule = " (auto)" if info.get("rule") == AUTO else ""
    ratio = f", {info['size_bytes'] / info['index_bytes']:.2f}x the index" if info.get("index_bytes") else ""
    return (f"dense-impacts sidecar{rule}: {info['terms']:,} terms in at least {info['min_df_share']:.4g} of the "
            f"documents ({info['postings']:,} postings, {info['size_bytes'] / 1e6:.1f} MB{ratio}, "
            f"built in {info.get('seconds', 0):.1f} s)")
