"""Recursive graph bisection (BP) of a document-term graph: a docid order with small posting-list gaps.

Dhulipala et al. (KDD 2016), with the practical choices of Mackenzie et al. (ECIR 2019) and PISA's
``reorder-docids --bp``: the documents are split in two halves (the first half of the current order on the
left), then for a fixed number of iterations every document's *move gain* is computed from the log-gap cost
estimate of each term in each half, ``deg·(log2 n - log2(deg + 1))`` (n documents in the half, deg of them
holding the term), both halves are sorted by decreasing gain and the i-th documents of the two halves are
swapped while the sum of their gains is positive; then both halves are bisected in turn, down to a depth of
``log2(N) - 5`` (leaves of 32 to 64 documents), and each leaf keeps the input order.

The whole level is processed at once instead of partition by partition (numpy and scipy.sparse over all
partitions): every posting belongs to a *slot* (partition, term); the degrees of a level are one sparse
product, the documents' gains another, and the swaps of all partitions one sort. A slot with a single
posting is dropped from the next levels: its term is in one document of the partition, and moving that
document changes the cost by log2(n_left / n_right) at most (0.04 bits for 32 vs 33 documents), the same
for every document of a half. The order is deterministic: with a seed the input order is first shuffled
by that seed, else the input order decides (as in PISA).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from tqdm import tqdm

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


def _move_cost_table(max_degree: int) -> np.ndarray:
    """h(x) = x·log2(x + 1) - (x - 1)·log2(x), x = 0..max_degree + 1: with g(x) = x·log2(x + 1), moving one of
    a slot's documents from a half of n_a documents and degree x_a to one of n_b and x_b saves
    log2 n_a - log2 n_b - h(x_a) + h(x_b + 1), PISA's move gain of its cost x·(log2 n - log2(x + 1))."""
    x = np.arange(max_degree + 2, dtype=np.float64)
    g = x * np.log2(x + 1)
    h = np.zeros_like(g)
    h[1:] = g[1:] - g[:-1]
    return h


class _Slots:
    """The slots of one level, over document-major postings that never move: ``slot`` gives each posting's
    slot (partition, term); postings of a slot with fewer than two of them go to a last, dead slot."""

    def __init__(self, doc_ptr: np.ndarray, slot: np.ndarray, slot_group: np.ndarray, num_docs: int):
        self.slot, self.slot_group = slot, slot_group  # slot_group: the partition of each live slot
        self.live = len(slot_group)
        self.count = np.bincount(slot, minlength=self.live + 1)
        ones = np.ones(len(slot), dtype=np.float32)
        self.doc_by_slot = sparse.csr_matrix((ones, slot, doc_ptr), shape=(num_docs, self.live + 1))

    def refine(self, side: np.ndarray, doc_of_posting: np.ndarray) -> "_Slots":
        """The next level's slots: each slot split by its documents' sides; fewer than two postings: dead."""
        key = 2 * self.slot.astype(np.int64) + side[doc_of_posting]
        counts = np.bincount(key, minlength=2 * self.live + 2)
        counts[2 * self.live:] = 0  # the dead slot stays dead
        live = counts >= 2
        remap = np.where(live, np.cumsum(live) - 1, live.sum()).astype(np.int32)
        kept = np.flatnonzero(live)
        slot_group = 2 * self.slot_group[kept // 2] + (kept % 2)
        return _Slots(self.doc_by_slot.indptr, remap[key], slot_group, len(side))

    def gains(self, side: np.ndarray, log_ratio: np.ndarray, h: np.ndarray) -> np.ndarray:
        """Every document's move gain: the sum over its slots of the cost saved by moving it to the other half."""
        d_right = np.rint(self.doc_by_slot.T @ side.astype(np.float32)).astype(np.int64)[:self.live]
        d_left = self.count[:self.live] - d_right
        left_to_right = np.zeros(self.live + 1, dtype=np.float32)  # the dead slot gains nothing
        right_to_left = np.zeros(self.live + 1, dtype=np.float32)
        left_to_right[:self.live] = log_ratio - h[d_left] + h[d_right + 1]
        right_to_left[:self.live] = -log_ratio - h[d_right] + h[d_left + 1]
        return np.where(side == 1, self.doc_by_slot @ right_to_left, self.doc_by_slot @ left_to_right)


def _initial_sides(group: np.ndarray, rank: np.ndarray, n_left: np.ndarray) -> np.ndarray:
    """Each partition's first n_left documents in rank order go left (side 0), the others right (side 1)."""
    order = np.lexsort((rank, group))
    sizes = np.bincount(group, minlength=len(n_left))
    starts = np.cumsum(sizes) - sizes
    side = np.empty(len(group), dtype=np.int8)
    side[order] = (np.arange(len(group)) - starts[group[order]]) >= n_left[group[order]]
    return side


def _pair_positions(n_left: np.ndarray, n_right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions, in the documents sorted by (partition, side, gain desc), of the i-th left and i-th right document."""
    half_sizes = np.stack([n_left, n_right], axis=1).ravel()
    half_starts = (np.cumsum(half_sizes) - half_sizes).reshape(-1, 2)
    pairs = np.minimum(n_left, n_right)
    part = np.repeat(np.arange(len(n_left)), pairs)
    i = np.arange(part.size) - np.repeat(np.cumsum(pairs) - pairs, pairs)
    return half_starts[part, 0] + i, half_starts[part, 1] + i


def bisect(graph: DocTermGraph, depth: int | None = None, iterations: int = ITERATIONS, seed: int | None = None,
           progress: bool = True) -> np.ndarray:
    """BP order of the graph's documents: ``new_to_old[i]`` is the old docid of new docid i (int32)."""
    n = graph.num_docs
    depth = default_depth(n) if depth is None else depth
    rank = np.arange(n, dtype=np.int64)
    if seed is not None:
        rank[np.random.default_rng(seed).permutation(n)] = np.arange(n)
    doc_major = sparse.csc_matrix((np.ones(graph.num_postings, dtype=np.int8), graph.docs, graph.offsets),
                                  shape=(n, len(graph.offsets) - 1)).tocsr()
    df = np.diff(graph.offsets)
    live_terms = df >= 2  # a term of one document never changes a gap
    term_slot = np.where(live_terms, np.cumsum(live_terms) - 1, live_terms.sum()).astype(np.int32)
    slots = _Slots(doc_major.indptr, term_slot[doc_major.indices], np.zeros(int(live_terms.sum()), np.int64), n)
    doc_of_posting = np.repeat(np.arange(n, dtype=np.int32), np.diff(doc_major.indptr))
    del doc_major
    group = np.zeros(n, dtype=np.int64)
    h = _move_cost_table(n)
    log2 = np.log2(np.maximum(np.arange(n + 1, dtype=np.float64), 1))
    bar = tqdm(total=depth * iterations, desc="BP", unit=" rounds", disable=not progress)
    for lv in range(depth):
        sizes = np.bincount(group, minlength=1 << lv)
        n_left, n_right = sizes // 2, sizes - sizes // 2
        side = _initial_sides(group, rank, n_left)
        pair_l, pair_r = _pair_positions(n_left, n_right)
        log_ratio = (log2[n_left] - log2[n_right])[slots.slot_group]
        for it in range(iterations):
            gain = slots.gains(side, log_ratio, h)
            order = np.lexsort((-gain, side, group))
            left, right = order[pair_l], order[pair_r]
            swap = gain[left] + gain[right] > 0
            bar.update(1)
            bar.set_postfix(level=f"{lv + 1}/{depth}", swaps=int(swap.sum()), refresh=False)
            if not swap.any():
                bar.update(iterations - it - 1)
                break
            side[left[swap]] = 1
            side[right[swap]] = 0
        if lv + 1 < depth:
            slots = slots.refine(side, doc_of_posting)
        group = 2 * group + side
    bar.close()
    return np.lexsort((rank, group)).astype(np.int32)


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
