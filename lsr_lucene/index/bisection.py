"""Recursive graph bisection (BP) of a document-term graph: a docid order with small posting-list gaps.

The order is computed by our Java ``index.Bisection`` (Dhulipala et al., KDD 2016, with the choices of
Mackenzie et al., ECIR 2019 and PISA's ``reorder-docids --bp``: log-gap cost, a fixed number of swap rounds
per level, halves in parallel), run as a separate JVM over the graph written to scratch files. It replaced a
numpy version of the same algorithm, slower here (runs/scale/README.md has both timings). This module holds
the graph, the cost function and the call.
"""
from __future__ import annotations

import math
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse
from lsr_lucene.progress import progress_bar

from lsr_lucene.jvm.runtime import java_command

ITERATIONS = 20  # swap rounds per level (Dhulipala et al.; PISA's default)
LEAF_LOG2 = 5  # default depth log2(N) - 5, as PISA's reorder-docids: leaves of 32 to 64 documents


@dataclass
class DocTermGraph:
    """Term-major postings of a field: term i's documents are ``docs[offsets[i]:offsets[i + 1]]``, ascending."""

    num_docs: int
    offsets: np.ndarray  # int64, one more than the terms
    docs: np.ndarray  # int32 docids

    @property
    def num_postings(self) -> int:
        return int(self.offsets[-1])

    @classmethod
    def from_csr(cls, indptr: np.ndarray, terms: np.ndarray, num_terms: int) -> "DocTermGraph":
        """Build from document-major CSR rows (document i's term ids ``terms[indptr[i]:indptr[i + 1]]``)."""
        rows = sparse.csr_matrix((np.ones(len(terms), dtype=np.int8), terms, indptr),
                                 shape=(len(indptr) - 1, num_terms))
        matrix = rows.tocsc()
        matrix.sum_duplicates()
        matrix.sort_indices()
        return cls(len(indptr) - 1, matrix.indptr.astype(np.int64), matrix.indices.astype(np.int32))

    @classmethod
    def from_doc_terms(cls, doc_terms: list[list[int]], num_terms: int | None = None) -> "DocTermGraph":
        """Build from each document's term ids (for tests and small collections)."""
        indptr = np.concatenate(([0], np.cumsum([len(t) for t in doc_terms]))).astype(np.int64)
        terms = np.fromiter((t for row in doc_terms for t in row), dtype=np.int64, count=int(indptr[-1]))
        count = int(num_terms if num_terms is not None else (terms.max() + 1 if len(terms) else 0))
        return cls.from_csr(indptr, terms, count)


def default_depth(num_docs: int) -> int:
    """PISA's default recursion depth, log2(N) - 5 levels (at least one for two documents or more)."""
    return max(1, int(math.log2(num_docs)) - LEAF_LOG2) if num_docs >= 2 else 0


def _heap_for(graph: DocTermGraph) -> str:
    """JVM heap for a bisection: the forward index (4 bytes a posting) and a few arrays per document."""
    return f"{int((4 * graph.num_postings + 64 * graph.num_docs) / 2**30 * 1.25) + 1}g"


def bisect(graph: DocTermGraph, depth: int | None = None, iterations: int = ITERATIONS, seed: int | None = None,
           progress: bool = True, threads: int | None = None, on_disk: str | Path | None = None) -> np.ndarray:
    """BP order of the graph's documents: ``new_to_old[i]`` is the old docid of new docid i (int32). The input
    order decides ties and leaf order; with a seed it is first shuffled by that seed. Same result for any
    ``threads`` (default: all cores). ``on_disk``: the prefix of the graph's files when they exist already
    (``<prefix>.offsets`` and ``<prefix>.docs`` as the Java ``Reorderer`` exports them), so they are not written
    again."""
    n = graph.num_docs
    depth = default_depth(n) if depth is None else depth
    with tempfile.TemporaryDirectory(prefix="lsr-bp-") as scratch:
        prefix = on_disk or Path(scratch, "graph")
        if on_disk is None:
            graph.offsets.astype("<i8").tofile(f"{prefix}.offsets")
            graph.docs.astype("<i4").tofile(f"{prefix}.docs")
        rank_file = "-"
        if seed is not None:
            rank = np.empty(n, dtype="<i4")
            rank[np.random.default_rng(seed).permutation(n)] = np.arange(n)
            rank_file = str(Path(scratch, "rank.i32"))
            rank.tofile(rank_file)
        output = Path(scratch, "new_to_old.i32")
        command = java_command("io.github.lsrlucene.index.Bisection", str(prefix), str(n), rank_file, str(depth),
                               str(iterations), str(threads or os.cpu_count() or 1), str(output),
                               max_heap=_heap_for(graph))
        with progress_bar(total=n * depth, desc="BP", unit=" doc-levels", unit_scale=True, disable=not progress) as bar, \
                tempfile.TemporaryFile(mode="w+") as errors:
            job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True)
            assert job.stdout is not None  # stdout=PIPE
            for line in job.stdout:
                if line.startswith("progress "):
                    bar.update(int(line.split()[1]) - bar.n)
            if job.wait() != 0:
                errors.seek(0)
                raise RuntimeError(f"BP of {n} documents failed:\n{errors.read().strip()}")
        return np.fromfile(output, dtype="<i4").astype(np.int32)


def inverse(new_to_old: np.ndarray) -> np.ndarray:
    """old_to_new of a permutation."""
    out = np.empty_like(new_to_old)
    out[new_to_old] = np.arange(len(new_to_old), dtype=new_to_old.dtype)
    return out


def log_gap_cost(graph: DocTermGraph, new_to_old: np.ndarray | None = None) -> float:
    """Mean log2 of the docid gaps of every posting list (bits per posting under an ideal gap code) in an order."""
    if graph.num_postings == 0:
        return 0.0
    docs = graph.docs if new_to_old is None else inverse(np.asarray(new_to_old, dtype=np.int32))[graph.docs]
    matrix = sparse.csr_matrix((np.ones(len(docs), dtype=np.int8), docs, graph.offsets),
                               shape=(len(graph.offsets) - 1, graph.num_docs))
    matrix.has_sorted_indices = False
    matrix.sort_indices()
    ids = matrix.indices.astype(np.int64)
    gaps = ids + 1
    gaps[1:] -= ids[:-1] + 1
    starts = graph.offsets[:-1][np.diff(graph.offsets) > 0]
    gaps[starts] = ids[starts] + 1
    return float(np.log2(gaps).sum() / len(ids))


def random_order(num_docs: int, seed: int = 0) -> np.ndarray:
    """A random permutation (the baseline BP must beat)."""
    return np.random.default_rng(seed).permutation(num_docs).astype(np.int32)
