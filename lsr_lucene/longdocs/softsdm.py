"""SoftSDM (Nguyen et al., SIGIR'23, paper 001, eqs. 4-6): SDM potentials with soft matching through the MLM logits.

A query token q matches position r of a segment with weight W[r, q] = activation of the MLM logit of q at
r (its expansion weight), not only where the segment's token is q. Storing W (positions × 30k
vocabulary) is impossible, so each position keeps its ``top_k`` vocabulary terms with a positive weight
(and the token's own weight, from the positional token file); W[r, q] = 0 for every other term. Size
cost: 8 bytes per kept entry before compression (2-byte position, 4-byte term id, 2-byte float16
weight), at most ``top_k`` entries a position; :func:`store_report` measures the real cost (on
FIRE 2017 with top-8 about 2 entries a position are positive). Since the potentials need these per-position
vocabulary weights, SoftSDM is a reranker over the candidates of a first-stage run, computed in Python:

- ordered:   ψ_SO = max_r Σ_l q_l · W[r+l, v(q_l)]                (eq. 5; no exact-match mask)
- unordered: ψ_SU = max_r Σ_h q_h · max_{r ≤ l < r+p} W[l, v(q_h)]  (eq. 6; windows of ``width`` p)

summed over the query's n-grams (the same clauses as ExactSDM, :func:`lsr_lucene.longdocs.sdm.query_clauses`);
the unigram feature T is the impact score, as for ExactSDM. A segment shorter than the n-gram has no
ordered match; one shorter than the window is a single window.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator, Mapping, Sequence

import numpy as np

from lsr_lucene.errors import InputError
from lsr_lucene.io.output import atomic_output

DEFAULT_TOP_K = 8
STORE_PATTERN = "soft-{:05d}.npz"


# ---- the sparse top-k store --------------------------------------------------------------------------------
def write_store(path: str | Path, seg_ids: Sequence[str], tops: Sequence[tuple[np.ndarray, np.ndarray]]) -> int:
    """Write one shard of per-position top-k entries with weight > 0 (atomically); returns its size in bytes.

    Layout (npz): ``ids`` segment ids, ``lengths`` positions per segment, ``offsets`` entry offsets per
    segment, and per entry ``pos`` (uint16), ``term`` (int32 vocabulary id), ``weight`` (float16).
    """
    path = Path(path)
    lengths, pos, term, weight, counts = [], [], [], [], []
    for top_ids, top_w in tops:
        lengths.append(len(top_ids))
        p, slot = np.nonzero(top_w > 0)
        pos.append(p.astype(np.uint16))
        term.append(top_ids[p, slot].astype(np.int32))
        weight.append(top_w[p, slot].astype(np.float16))
        counts.append(len(p))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    def cat(arrays: list, dtype) -> np.ndarray:
        return np.concatenate(arrays).astype(dtype) if arrays else np.zeros(0, dtype)

    with atomic_output(path, overwrite=True) as tmp, open(tmp, "wb") as out:
        np.savez_compressed(out, ids=np.array(list(seg_ids), dtype=str), lengths=np.array(lengths, dtype=np.int32),
                            offsets=offsets, pos=cat(pos, np.uint16), term=cat(term, np.int32),
                            weight=cat(weight, np.float16), top_k=np.array([tops[0][0].shape[1] if tops else 0]))
    return path.stat().st_size


class TopKStore:
    """Read access to the per-position top-k entries of every stored segment (all shards of a directory, in memory)."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        files = sorted(self.directory.glob("soft-*.npz"))
        if not files:
            raise InputError(f"{directory}: no SoftSDM top-k store (soft-*.npz); encode with --top-k")
        self._where: dict[str, tuple[int, int, int, int]] = {}
        self._shards: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.bytes = 0
        self.positions = 0
        self.entries = 0
        self.top_k = 0
        for shard, file in enumerate(files):
            data = np.load(file)
            self._shards.append((data["pos"], data["term"], data["weight"]))
            offsets, lengths = data["offsets"], data["lengths"]
            for i, seg_id in enumerate(data["ids"].tolist()):
                self._where[seg_id] = (shard, int(offsets[i]), int(offsets[i + 1]), int(lengths[i]))
            self.bytes += file.stat().st_size
            self.positions += int(lengths.sum())
            self.entries += int(offsets[-1])
            self.top_k = max(self.top_k, int(data["top_k"][0]))

    def __contains__(self, seg_id: str) -> bool:
        return seg_id in self._where

    def __len__(self) -> int:
        return len(self._where)

    def get(self, seg_id: str) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """(positions, entry positions, entry term ids, entry weights) of one segment."""
        shard, lo, hi, length = self._where[seg_id]
        pos, term, weight = self._shards[shard]
        return length, pos[lo:hi], term[lo:hi], weight[lo:hi]


# ---- soft potentials ---------------------------------------------------------------------------------------
class SoftQuery:
    """A query's clauses as vocabulary ids for vectorised soft potentials."""

    def __init__(self, clauses, vocab: Mapping[str, int], width: int):
        self.width = width
        terms = sorted({t for c in clauses for t in c.terms if t in vocab})
        self.row = {t: i for i, t in enumerate(terms)}
        self.term_ids = np.array([vocab[t] for t in terms], dtype=np.int64)
        size = int(max(vocab.values(), default=0)) + 1
        self.lookup = np.full(size, -1, dtype=np.int64)
        self.lookup[self.term_ids] = np.arange(len(self.term_ids))
        usable = [c for c in clauses if all(t in self.row for t in c.terms)]
        self.n = len(usable[0].terms) if usable else 0
        if any(len(c.terms) != self.n for c in usable):
            raise InputError("SoftSDM clauses must all have the same n-gram size")
        self.rows = np.array([[self.row[t] for t in c.terms] for c in usable], dtype=np.int64).reshape(len(usable), self.n)
        self.q = np.array([c.weights for c in usable], dtype=np.float64).reshape(len(usable), self.n)

    def matrix(self, length: int, pos: np.ndarray, term: np.ndarray, weight: np.ndarray,
               own: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
        """W restricted to the query's terms: (terms × positions), from the top-k entries and the own-token
        weights (``own`` = (vocabulary ids, weights) per position, see :func:`own_arrays`)."""
        m = np.zeros((len(self.term_ids), length))
        if len(self.term_ids) == 0 or length == 0:
            return m
        rows = self.lookup[term]
        hit = rows >= 0
        if hit.any():
            np.maximum.at(m, (rows[hit], pos[hit].astype(np.int64)), weight[hit].astype(np.float64))
        if own is not None:
            ids, values = own[0][:length], own[1][:length]
            rows = self.lookup[ids]
            at = np.flatnonzero(rows >= 0)
            if len(at):
                np.maximum.at(m, (rows[at], at), values[at])
        return m

    def potentials(self, m: np.ndarray) -> tuple[float, float]:
        """(Σ ordered ψ_SO, Σ unordered ψ_SU) over the clauses for one segment's matrix ``m``.

        Only clauses with at least one term present in the segment can score; the rest contribute 0.
        """
        if len(self.rows) == 0 or m.shape[1] == 0:
            return 0.0, 0.0
        active = np.asarray(m.any(axis=1))
        keep = active[self.rows].any(axis=1)
        if not keep.any():
            return 0.0, 0.0
        rows, q = self.rows[keep], self.q[keep]
        length = m.shape[1]
        n = self.n
        ordered = 0.0
        if length >= n:
            span = length - n + 1
            total = np.zeros((len(rows), span))
            for i in range(n):
                total += q[:, i:i + 1] * m[rows[:, i], i:i + span]
            ordered = float(total.max(axis=1).sum())
        # sliding maximum over windows of p positions, for the terms present only
        p = min(self.width, length)
        span = length - p + 1
        present = np.flatnonzero(active)
        prox = np.zeros((m.shape[0], span))
        window = m[present, :span].copy()
        for j in range(1, p):
            np.maximum(window, m[present, j:j + span], out=window)
        prox[present] = window
        total = np.zeros((len(rows), span))
        for i in range(n):
            total += q[:, i:i + 1] * prox[rows[:, i]]
        unordered = float(total.max(axis=1).sum())
        return ordered, unordered


def brute_soft_potentials(w: Mapping[tuple[int, str], float], length: int, clauses, width: int) -> tuple[float, float]:
    """Reference for tests: eqs. 5 and 6 straight from a dict W[(position, term)] (0 when absent)."""
    def at(r: int, t: str) -> float:
        return w.get((r, t), 0.0)

    ordered = unordered = 0.0
    for c in clauses:
        n = len(c.terms)
        if length >= n:
            ordered += max(sum(c.weights[i] * at(r + i, c.terms[i]) for i in range(n)) for r in range(length - n + 1))
        if length:
            p = min(width, length)
            unordered += max(sum(q * max(at(pos, t) for pos in range(r, r + p)) for t, q in zip(c.terms, c.weights))
                             for r in range(length - p + 1))
    return ordered, unordered


def own_arrays(tokens: Sequence[tuple[str, float]], vocab: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """A segment's per-position own tokens as (vocabulary ids, weights) arrays ("" and unknown tokens -> -1)."""
    ids = np.array([vocab.get(t, -1) if t else -1 for t, _ in tokens], dtype=np.int64)
    return np.where(ids < 0, 0, ids), np.array([w if i >= 0 else 0.0 for (_, w), i in zip(tokens, ids)], dtype=float)


def soft_features(query: SoftQuery, store: TopKStore, own: Mapping[str, tuple[np.ndarray, np.ndarray]],
                  seg_ids: Sequence[str]) -> Iterator[tuple[str, float, float]]:
    """(segment id, ψ_SO sum, ψ_SU sum) for each stored segment among ``seg_ids`` (``own``: :func:`own_arrays`)."""
    for seg_id in seg_ids:
        if seg_id not in store:
            continue
        m = query.matrix(*store.get(seg_id), own.get(seg_id))
        yield (seg_id, *query.potentials(m))


def store_report(directory: str | Path) -> dict:
    """Size of a top-k store: bytes on disk, segments, positions and bytes per position."""
    store = TopKStore(directory)
    return {"bytes": store.bytes, "segments": len(store), "positions": store.positions, "entries": store.entries,
            "top_k": store.top_k, "entries_per_position": round(store.entries / max(1, store.positions), 2),
            "bytes_per_position": round(store.bytes / max(1, store.positions), 2)}


def write_report(directory: str | Path, path: str | Path) -> None:
    """Save :func:`store_report` as JSON."""
    Path(path).write_text(json.dumps(store_report(directory), indent=2) + "\n")
