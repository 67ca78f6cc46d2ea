"""Exact scores by brute force (scipy sparse products) over the scale benchmark's synthetic collections, which every
engine of that benchmark is checked against. (The project's one brute-force reference for signed models is
lsr_lucene.compose.backends.ExactBackend; this is the benchmark's scorer at millions of documents, windows included.)

Scores follow our query specs: Σ w·impact over ``terms`` (weights of either sign), plus Σ w·sqrt(impact_a·impact_b)
over ``pairs`` (documents holding both terms), plus, with ``windows`` and ``rerank``, the window clauses'
ExactSDM potentials added to the top ``rerank`` documents. A document is returned only when it holds a
positive-weight query term or pair (as in an inverted index); ties are broken by docid (ascending).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable, Mapping, Sequence

import numpy as np

from scripts.bench.synthetic import DOC_ID, Collection

Hits = list[tuple[str, float]]
REL_TOL = 1e-5  # float32 sums in the engines against float64 here


class BruteForce:
    """Term-major sparse matrix of a collection; exact top-k of query specs."""

    def __init__(self, collection: Collection, weights: np.ndarray | None = None):
        import scipy.sparse as sp

        self.n = collection.num_docs
        self.vocab = {t: i for i, t in enumerate(collection.vocab)}
        data = np.asarray(collection.weights if weights is None else weights, dtype=np.float64)
        docs = sp.csr_matrix((data, collection.terms, collection.indptr), shape=(self.n, len(collection.vocab)))
        self.by_term = docs.T.tocsr()  # one row of postings per term
        self.nbytes = self.by_term.data.nbytes + self.by_term.indices.nbytes + self.by_term.indptr.nbytes

    def scores(self, terms: Mapping[str, float], pairs: Sequence[Sequence] = ()) -> tuple[np.ndarray, np.ndarray]:
        """(score of every document, whether it matches) for terms and CPT pairs."""
        known = [(self.vocab[t], float(w)) for t, w in terms.items() if t in self.vocab and w != 0]
        scores = np.zeros(self.n)
        matched = np.zeros(self.n, dtype=bool)
        if known:
            rows = np.array([t for t, _ in known])
            weights = np.array([w for _, w in known])
            sub = self.by_term[rows]
            scores = np.asarray(sub.T @ weights).ravel()
            positive = rows[weights > 0]
            if len(positive):
                matched[self.by_term[positive].indices] = True
        for a, b, w in pairs:
            if a not in self.vocab or b not in self.vocab or not w:
                continue
            ra, rb = self.by_term[self.vocab[a]], self.by_term[self.vocab[b]]
            both, ia, ib = np.intersect1d(ra.indices, rb.indices, assume_unique=True, return_indices=True)
            scores[both] += float(w) * np.sqrt(ra.data[ia] * rb.data[ib])
            if w > 0:
                matched[both] = True
        return scores, matched

    def top(self, scores: np.ndarray, matched: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The k best matching documents as (row, score): score descending, then row (= docid order)."""
        from lsr_lucene.io.ranking import top_k

        return [(int(row), float(scores[row])) for row in top_k(scores, k, candidates=np.flatnonzero(matched))]

    def search(self, terms: Mapping[str, float], k: int) -> Hits:
        """Exact top-k (docid, score) of a weighted term query."""
        scores, matched = self.scores(terms)
        return [(DOC_ID.format(row), score) for row, score in self.top(scores, matched, k)]


@dataclass
class Reference:
    """Exact answer to one query: its top-k and a lookup of any document's exact score."""

    top: Hits
    score_of: Callable[[str], float]


def references(brute: BruteForce, spec: Mapping, ks: Sequence[int],
               positions: Callable[[np.ndarray], list[list[tuple[str, float]]]] | None = None) -> dict[int, Reference]:
    """Exact top-k of a query spec (terms, pairs, window rerank) for each k, sharing one score array (float32:
    exact for integer scores below 2^24); ``positions`` gives documents' tokens for window clauses."""
    base, matched = brute.scores(spec.get("terms", {}), spec.get("pairs", ()))
    windows, rerank = spec.get("windows") or [], int(spec.get("rerank", 0) or 0)
    out, base32 = {}, None
    for k in ks:
        scores, keep = base, matched
        if windows and rerank:
            if positions is None:
                raise ValueError("window clauses need document positions")
            candidates = brute.top(base, matched, max(k, rerank))
            rows = np.array([row for row, _ in candidates], dtype=np.int64)
            scores = base.copy()
            scores[rows] += np.array([window_score(tokens, windows) for tokens in positions(rows)])
            keep = np.zeros(brute.n, dtype=bool)
            keep[rows] = True
        top = [(DOC_ID.format(row), score) for row, score in brute.top(scores, keep, k)]
        if scores is base:
            base32 = base.astype(np.float32) if base32 is None else base32
        stored = base32 if scores is base else scores.astype(np.float32)
        assert stored is not None  # base32 is set above when scores is base
        out[k] = Reference(top, partial(_stored_score, stored))
    return out


def _stored_score(stored: np.ndarray, doc: str) -> float:
    """The exact score of synthetic document ``doc`` (``d<row>``) in ``stored``."""
    return float(stored[int(doc[1:])])


def reference(brute: BruteForce, spec: Mapping, k: int,
              positions: Callable[[np.ndarray], list[list[tuple[str, float]]]] | None = None) -> Reference:
    """Exact top-k of one query spec (see :func:`references`)."""
    return references(brute, spec, [k], positions)[k]


def window_score(tokens: Sequence[tuple[str, float]], windows: Sequence[Mapping]) -> float:
    """Σ over window clauses of their best ExactSDM potential in one document (0 where a clause has no match)."""
    from lsr_lucene.longdocs.sdm import Clause, ordered_potential, unordered_potential

    total = 0.0
    present = {t for t, w in tokens if w > 0}
    for win in windows:
        items = [(t, 1.0) if isinstance(t, str) else (t[0], float(t[1])) for t in win["terms"]]
        if any(t not in present for t, _ in items):
            continue  # a clause matches only where all its tokens occur
        weight = float(win.get("weight", 1.0))
        clause = Clause(tuple(t for t, _ in items), tuple(np.float32(q * weight) for _, q in items))  # type: ignore[misc]
        best = ordered_potential(tokens, clause) if win.get("ordered", True) else \
            unordered_potential(tokens, clause, int(win.get("width", len(items))))
        if best is not None:
            total += float(np.float32(best))
    return total


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= REL_TOL * max(1.0, abs(a), abs(b))


def compare(hits: Hits, ref: Reference) -> dict[str, float | bool]:
    """How an engine's hits agree with the exact answer: same order, exact up to ties, recall@k.

    ``exact`` allows another order among documents of equal score (engines break ties their own way):
    every returned score is the document's exact score and the sorted scores equal the exact top-k's.
    """
    want = [s for _, s in ref.top]
    true = [ref.score_of(doc) for doc, _ in hits]
    scores_ok = all(_close(s, t) for (_, s), t in zip(hits, true))
    distinct = len({d for d, _ in hits}) == len(hits)
    ranked_ok = len(hits) == len(want) and all(_close(a, b) for a, b in zip(sorted(true, reverse=True), want))
    kth = want[-1] if want else 0.0
    found = sum(1 for t in true if t >= kth or _close(t, kth))
    recall = min(found, len(want)) / len(want) if want else 1.0
    return {"same_order": [d for d, _ in hits] == [d for d, _ in ref.top],
            "exact": bool(scores_ok and distinct and ranked_ok), "recall": recall}
