"""Docid reordering of a Lucene index: its document-term graph out, a BP order computed, the index rewritten.

The graph is read from the index itself (the postings of the impact field, exported by our Java
``Reorderer`` as flat int arrays in a scratch file: Lucene decodes postings far faster than Python parses the
vector JSONL, and an index built elsewhere has no vectors beside it). The order is applied with Lucene core
only (``SortingCodecReader`` + ``IndexWriter.addIndexes``) to the index and to its positional sidecar
(``<index>/positions``, aligned with the index by Lucene docid), so both keep matching docid for docid.
"""
from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import numpy as np

from lsr_lucene.errors import InputError
from lsr_lucene.index.bisection import ITERATIONS, DocTermGraph, bisect, default_depth, log_gap_cost, random_order
from lsr_lucene.index.dense_impacts import DENSE_IMPACTS_DIR, build_dense_impacts, dense_impacts_share
from lsr_lucene.index.text_field import TEXT_DIR, build_text_field
from lsr_lucene.index.kind import LEGACY_TOP_POSTINGS_DIR
from lsr_lucene.jvm.classes import java_class, java_errors

FIELD = "contents"  # Anserini's impact field
POSITIONS_DIR = "positions"  # the positional sidecar (PositionalIndexer.POSITIONS_DIR)
# the dense-impacts (exact search) and text (explicit exclusions) sidecars are rebuilt in the new order; the
# retired top-postings sidecar of an older index is left behind
METHODS = ("bp",)
GRAPH_FILES = "graph"  # prefix of the exported postings in the scratch folder


def _is_lucene_file(name: str) -> bool:
    """Lucene's own files: segment files (_*), commits (segments_N, pending_segments_N), the write lock."""
    return name.startswith(("_", "segments", "pending_segments")) or name == "write.lock"


def read_doc_term_graph(index: str | Path, scratch: str | Path, field: str = FIELD) -> tuple[DocTermGraph, int]:
    """The term-major postings of ``field`` (global docids) and the index's number of segments; the exported
    files stay in ``scratch`` as ``GRAPH_FILES`` (the bisection reads them there)."""
    prefix = Path(scratch) / GRAPH_FILES
    cls = java_class("index.Reorderer")  # starts the JVM our way before java_errors imports jnius
    with java_errors(str(index)):
        max_doc, _terms, postings, deleted, segments = (int(x) for x in cls.exportPostings(str(index), field,
                                                                                              str(prefix)))
    if deleted:
        raise InputError(f"{index}: index has {deleted} deleted documents; reordering needs an index without "
                         "deletions (rebuild it)")
    offsets = np.fromfile(f"{prefix}.offsets", dtype="<i8")
    docs = np.fromfile(f"{prefix}.docs", dtype="<i4")
    if len(docs) != postings:
        raise RuntimeError(f"{index}: exported {len(docs)} postings, expected {postings}")
    return DocTermGraph(max_doc, offsets, docs), segments


def _check_extra_entries(src: Path) -> list[Path]:
    """Non-Lucene entries of an index folder to carry over as they are (metadata such as lsr_lucene.json)."""
    extra = []
    for entry in sorted(src.iterdir()):
        if _is_lucene_file(entry.name) or entry.name.startswith(".") or entry.name in (POSITIONS_DIR,
                                                                                          LEGACY_TOP_POSTINGS_DIR,
                                                                                          DENSE_IMPACTS_DIR, TEXT_DIR):
            continue
        if not entry.is_file():
            raise InputError(f"{entry}: unknown folder inside the index; reordering cannot tell whether it is "
                             "aligned with the docids (move it out first)")
        extra.append(entry)
    return extra


def reorder_into(src: str | Path, dst: str | Path, scratch: str | Path, method: str = "bp", seed: int | None = None,
                 depth: int | None = None, iterations: int = ITERATIONS, progress: bool = True,
                 threads: int | None = None) -> dict:
    """Write the index at ``src`` into the (empty or new) folder ``dst`` in BP order, with its positional sidecar
    and its other files; ``src`` is left as it is. Returns what to record: method, seed, time, log-gap costs."""
    src, dst, scratch = Path(src), Path(dst), Path(scratch)
    if method not in METHODS:
        raise InputError(f"unknown reordering method {method!r} (known: {', '.join(METHODS)})")
    if not src.is_dir():
        raise InputError(f"{src}: no such index folder")
    if not any(src.glob("segments_*")):
        raise InputError(f"{src} holds no Lucene index")
    extra = _check_extra_entries(src)
    cls = java_class("index.Reorderer")
    start = time.perf_counter()
    graph, segments = read_doc_term_graph(src, scratch)
    read_seconds = time.perf_counter() - start
    src_index = src
    if segments > 1:  # one segment, one docid space: merge a copy (the input is never changed), read it again
        if (src / POSITIONS_DIR).is_dir():
            raise InputError(f"{src / POSITIONS_DIR}: a positional field beside an index of {segments} segments no "
                             "longer matches its docids; rebuild the index")
        src_index = scratch / "merged"
        print(f"merging the {segments} segments of {src} into one first", file=sys.stderr)
        with java_errors(str(src)):
            cls.mergeInto(str(src), str(src_index))
        graph, segments = read_doc_term_graph(src_index, scratch)
    depth = default_depth(graph.num_docs) if depth is None else depth
    start = time.perf_counter()
    new_to_old = bisect(graph, depth=depth, iterations=iterations, seed=seed, progress=progress, threads=threads,
                        on_disk=scratch / GRAPH_FILES)
    bp_seconds = time.perf_counter() - start
    perm_file = scratch / "new_to_old.i32"
    new_to_old.astype("<i4").tofile(perm_file)
    start = time.perf_counter()
    dst.mkdir(parents=True, exist_ok=True)
    with java_errors(str(src)):
        cls.apply(str(src_index), str(perm_file), str(dst))
    positions = src / POSITIONS_DIR
    if positions.is_dir():
        with java_errors(str(positions)):
            cls.apply(str(positions), str(perm_file), str(dst / POSITIONS_DIR))
    dense_share = dense_impacts_share(src)
    if dense_share:
        build_dense_impacts(dst, dense_share)
    if (src / TEXT_DIR).is_dir():  # derived from the stored text: built again in the new order
        build_text_field(dst)
    write_seconds = time.perf_counter() - start
    for entry in extra:
        shutil.copy2(entry, dst / entry.name)
    return {"method": method, "seed": seed, "depth": depth,
            "iterations": iterations, "documents": graph.num_docs, "postings": graph.num_postings,
            "read_seconds": round(read_seconds, 3), "bp_seconds": round(bp_seconds, 3),
            "write_seconds": round(write_seconds, 3),
            "log_gap_bits_before": round(log_gap_cost(graph), 4),
            "log_gap_bits_random": round(log_gap_cost(graph, random_order(graph.num_docs, 0)), 4),
            "log_gap_bits_after": round(log_gap_cost(graph, new_to_old), 4),
            "positions": positions.is_dir()}


def reorder_summary(info: dict, size_bytes: int) -> str:
    """One line on a reordering: time, log-gap bits per posting before/after, index size before/after."""
    return (f"reordered {info['documents']} documents by {info['method']} in {info['bp_seconds']:.1f} s "
            f"(+{info['read_seconds'] + info['write_seconds']:.1f} s reading and writing): log-gap "
            f"{info['log_gap_bits_before']:.3f} -> {info['log_gap_bits_after']:.3f} bits/posting "
            f"(random order {info['log_gap_bits_random']:.3f}); index {info['natural_size_bytes'] / 1e6:.1f} -> "
            f"{size_bytes / 1e6:.1f} MB")
