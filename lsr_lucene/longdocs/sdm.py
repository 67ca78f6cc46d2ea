"""ExactSDM for learned sparse retrieval (Nguyen et al., SIGIR'23, paper 001): clauses, potentials, pooling, λ fitting.

score(d) = λ_T · T(d) + λ_O · O(d) + λ_U · U(d) where, per segment s,

- T(s) is the unigram impact score (the dot product of the query vector and the segment vector),
- O(s) = Σ over query n-grams (n consecutive query tokens, default bigrams) of the ordered exact
  potential: max over positions p of Σ_i q_i · w_s(p+i), where the segment's tokens at p..p+n-1 are
  exactly the n-gram's tokens and w_s is the per-position weight stored as a payload,
- U(s) = Σ over the same n-grams of the unordered potential: max over windows of ``width`` positions
  (default 8) that hold every token of the n-gram of Σ_i q_i · (best w_s of token i in the window),

computed in Lucene by WindowQuery clauses over the positional payload field. A clause that does not
match contributes 0. Pooling over the first k segments follows the authors' code (lsr-long,
``exact_sdm_reranker_long.py``): each of T, O, U is max-pooled over segments separately
(``pooling="feature"``, the default); ``pooling="segment"`` instead takes the best segment's combined
score (what a single Lucene query over segments gives).

Query side: q_i are the weights the encoder gives each query WordPiece token at its own position
(``SparseEncoder.token_weights``). Tokens of weight 0 break adjacency (the paper's code masks them),
repeated n-grams count once (with the largest weights seen), and an unordered clause needs distinct
tokens (WindowQuery's rule), so an n-gram that repeats a token only gets its ordered clause. A
one-token query has no n-gram: O = U = 0 and ExactSDM reduces to the unigram score.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from lsr_lucene.errors import InputError
from lsr_lucene.io.output import update_json

DEFAULT_NGRAM = 2
DEFAULT_WIDTH = 8
FEATURES = ("T", "O", "U")
POOLINGS = ("feature", "segment")
LAMBDAS_FILE = "sdm_lambdas.json"


@dataclass(frozen=True)
class Clause:
    """One query n-gram: its tokens and their query weights q_i (all > 0)."""

    terms: tuple[str, ...]
    weights: tuple[float, ...]

    @property
    def distinct(self) -> bool:
        """True when no token repeats (an unordered window needs distinct tokens)."""
        return len(set(self.terms)) == len(self.terms)


def query_clauses(sequences: Iterable[Sequence[tuple[str, float]]], ngram: int = DEFAULT_NGRAM,
                  min_weight: float = 0.0, max_clauses: int | None = None) -> list[Clause]:
    """The query's n-grams: runs of ``ngram`` consecutive tokens with weight > ``min_weight`` inside each sequence.

    Each sequence is one query text (e.g. one citation context) as ``[(token, weight), ...]``; n-grams never
    cross sequences. Repeated n-grams are merged keeping the largest weight per position; with
    ``max_clauses`` only the n-grams of largest total weight are kept (ties: first seen).
    """
    if ngram < 2:
        raise InputError(f"n-gram size must be at least 2, got {ngram}")
    merged: dict[tuple[str, ...], list[float]] = {}
    for sequence in sequences:
        tokens = list(sequence)
        for start in range(len(tokens) - ngram + 1):
            gram = tokens[start:start + ngram]
            if any(not term or not (weight > min_weight) for term, weight in gram):
                continue
            key = tuple(term for term, _ in gram)
            weights = [float(weight) for _, weight in gram]
            if key in merged:
                merged[key] = [max(a, b) for a, b in zip(merged[key], weights)]
            else:
                merged[key] = weights
    clauses = [Clause(key, tuple(weights)) for key, weights in merged.items()]
    if max_clauses is not None and len(clauses) > max_clauses:
        order = sorted(range(len(clauses)), key=lambda i: -sum(clauses[i].weights))
        clauses = [clauses[i] for i in sorted(order[:max_clauses])]
    return clauses


def window_dicts(clauses: Sequence[Clause], ordered: bool, width: int = DEFAULT_WIDTH,
                 weight: float = 1.0) -> list[dict]:
    """The clauses as BatchSearcher ``windows`` entries (unordered ones skip n-grams with a repeated token)."""
    out = []
    for clause in clauses:
        if not ordered and not clause.distinct:
            continue
        entry = {"terms": [[t, w] for t, w in zip(clause.terms, clause.weights)], "ordered": ordered}
        if not ordered:
            if width < len(clause.terms):
                raise InputError(f"window width {width} is smaller than the n-gram size {len(clause.terms)}")
            entry["width"] = width
        if weight != 1.0:
            entry["weight"] = weight
        out.append(entry)
    return out


# ---- brute force (the reference the Lucene scores are tested against) ------------------------------------
DocTokens = Sequence[tuple[str, float]]  # a token without positive weight is a gap: never indexed, never matched


def ordered_potential(doc: DocTokens, clause: Clause) -> float | None:
    """max over p of Σ_i q_i · w(p+i) where doc tokens p..p+n-1 equal the n-gram; None without a match."""
    n = len(clause.terms)
    best = None
    for p in range(len(doc) - n + 1):
        if all(doc[p + i][0] == clause.terms[i] and doc[p + i][1] > 0 for i in range(n)):
            score = sum(clause.weights[i] * doc[p + i][1] for i in range(n))
            best = score if best is None else max(best, score)
    return best


def unordered_potential(doc: DocTokens, clause: Clause, width: int = DEFAULT_WIDTH) -> float | None:
    """max over windows [s, s+width) holding every n-gram token of Σ_i q_i · max w(token i in window); None without."""
    best = None
    for start in range(len(doc)):
        window = doc[start:start + width]
        total = 0.0
        for term, q in zip(clause.terms, clause.weights):
            values = [q * w for t, w in window if t == term and w > 0]
            if not values:
                break
            total += max(values)
        else:
            best = total if best is None else max(best, total)
    return best


def brute_force_features(doc: DocTokens, clauses: Sequence[Clause], width: int = DEFAULT_WIDTH) -> tuple[float, float]:
    """(O, U) of one segment: sums of the ordered and unordered potentials over the clauses (0 when no match)."""
    ordered = sum(ordered_potential(doc, c) or 0.0 for c in clauses)
    unordered = sum(unordered_potential(doc, c, width) or 0.0 for c in clauses if c.distinct)
    return ordered, unordered


# ---- pooling over segments ----------------------------------------------------------------------------
SegmentFeatures = Mapping[str, Mapping[int, Sequence[float]]]  # docid -> segment number -> (T, O, U, ...)


def pool_features(segments: Mapping[int, Sequence[float]], k: int | None) -> np.ndarray:
    """Feature-wise max over the first ``k`` segments (segment numbers < k; all when k is None)."""
    rows = [values for number, values in segments.items() if k is None or number < k]
    if not rows:
        return np.zeros(len(next(iter(segments.values()))) if segments else len(FEATURES))
    return np.asarray(rows, dtype=float).max(axis=0)


def segment_matrix(segments: Mapping[int, Sequence[float]], k: int | None) -> np.ndarray:
    """The (segments × features) matrix of the first ``k`` segments."""
    rows = [values for number, values in sorted(segments.items()) if k is None or number < k]
    return np.asarray(rows, dtype=float) if rows else np.zeros((1, len(FEATURES)))


def score_documents(features: SegmentFeatures, lambdas: Sequence[float], k: int | None,
                    pooling: str = "feature") -> dict[str, float]:
    """Document scores λ · pooled features (feature pooling) or max over segments of λ · features (segment pooling)."""
    lam = np.asarray(lambdas, dtype=float)
    out = {}
    for doc_id, segments in features.items():
        if pooling == "feature":
            out[doc_id] = float(pool_features(segments, k) @ lam)
        elif pooling == "segment":
            out[doc_id] = float((segment_matrix(segments, k) @ lam).max())
        else:
            raise InputError(f"pooling must be one of {', '.join(POOLINGS)}, got {pooling!r}")
    return out


# ---- ranking metrics for fitting (trec_eval definitions) ------------------------------------------------
def average_precision(ranking: Sequence[str], relevant: Mapping[str, int]) -> float:
    """trec_eval ``map`` for one query (relevance > 0 counts; divided by all relevant documents)."""
    positives = sum(1 for g in relevant.values() if g > 0)
    if positives == 0:
        return 0.0
    hits, total = 0, 0.0
    for i, doc in enumerate(ranking, 1):
        if relevant.get(doc, 0) > 0:
            hits += 1
            total += hits / i
    return total / positives


def ndcg(ranking: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    """trec_eval ``ndcg_cut_k`` for one query (gain = judged relevance, log2 discount)."""
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 1) for i, doc in enumerate(ranking[:k], 1)
              if relevant.get(doc, 0) > 0)
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, 1))
    return dcg / idcg if idcg > 0 else 0.0


METRICS = {"map": average_precision, "ndcg@10": ndcg}


# ---- λ fitting ---------------------------------------------------------------------------------------
def _metric_from_ranks(ranks: np.ndarray, gains: np.ndarray, relevant: Mapping[str, int], metric: str) -> float:
    """AP or nDCG@10 from the 1-based ranks (and gains) of the relevant candidates."""
    order = np.argsort(ranks, kind="stable")
    ranks, gains = ranks[order], gains[order]
    if metric == "map":
        positives = sum(1 for g in relevant.values() if g > 0)
        return float((np.arange(1, len(ranks) + 1) / ranks).sum() / positives) if positives else 0.0
    top = ranks <= 10
    dcg = float((gains[top] / np.log2(ranks[top] + 1)).sum())
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, 1))
    return dcg / idcg if idcg > 0 else 0.0


class _Prepared:
    """Per-query candidate matrices so a λ vector is evaluated with a few numpy operations."""

    def __init__(self, features: Mapping[str, SegmentFeatures], qrels: Mapping[str, Mapping[str, int]],
                 k: int | None, pooling: str, metric: str):
        if metric not in METRICS:
            raise InputError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        if pooling not in POOLINGS:
            raise InputError(f"pooling must be one of {', '.join(POOLINGS)}, got {pooling!r}")
        self.metric = metric
        self.pooling = pooling
        self.queries = []
        for qid, docs in features.items():
            relevant = qrels.get(qid, {})
            if not any(g > 0 for g in relevant.values()):
                continue
            ids = sorted(docs)
            rel = np.array([i for i, d in enumerate(ids) if relevant.get(d, 0) > 0], dtype=int)
            gains = np.array([relevant[ids[i]] for i in rel], dtype=float)
            if pooling == "feature":
                data = np.stack([pool_features(docs[d], k) for d in ids]) if ids else np.zeros((0, 3))
                starts = None
            else:
                mats = [segment_matrix(docs[d], k) for d in ids]
                data = np.concatenate(mats) if mats else np.zeros((0, 3))
                starts = np.cumsum([0] + [len(m) for m in mats[:-1]]) if mats else None
            self.queries.append((qid, len(ids), rel, gains, data, starts))
        self.qrels = qrels

    def evaluate(self, lambdas: Sequence[float]) -> float:
        lam = np.asarray(lambdas, dtype=float)
        total = 0.0
        for qid, n, rel, gains, data, starts in self.queries:
            if len(rel) == 0:
                continue
            scores = data @ lam
            if starts is not None:
                scores = np.maximum.reduceat(scores, starts)
            # rank = documents scoring higher, plus equal scores with a smaller docid, plus one
            s = scores[rel]
            ranks = (scores[None, :] > s[:, None]).sum(1) + \
                ((scores[None, :] == s[:, None]) & (np.arange(n)[None, :] < rel[:, None])).sum(1) + 1
            total += _metric_from_ranks(ranks.astype(float), gains, self.qrels[qid], self.metric)
        return total / len(self.queries) if self.queries else 0.0


def evaluate_lambdas(features: Mapping[str, SegmentFeatures], qrels: Mapping[str, Mapping[str, int]],
                     lambdas: Sequence[float], k: int | None = None, pooling: str = "feature",
                     metric: str = "ndcg@10") -> float:
    """Mean AP or nDCG@10 (trec_eval definitions, judged queries only) of the λ-combined candidate rankings."""
    return _Prepared(features, qrels, k, pooling, metric).evaluate(lambdas)


GRID = (0.0,) + tuple(10.0 ** (e / 2) for e in range(-8, 7))  # 0 and 1e-4 .. 1e3 in half decades


def fit_lambdas(features: Mapping[str, SegmentFeatures], qrels: Mapping[str, Mapping[str, int]],
                k: int | None = None, pooling: str = "feature", metric: str = "map",
                grid: Sequence[float] = GRID, rounds: int = 3) -> dict:
    """Fit (λ_T, λ_O, λ_U) on training queries: λ_T = 1 (scores are scale free), grid search over λ_O × λ_U,
    then coordinate ascent with shrinking steps around the best point. Returns the λ and the training metric.

    ``features``: qid -> docid -> segment number -> (T, O, U) for each query's candidate documents.
    """
    prepared = _Prepared(features, qrels, k, pooling, metric)
    if not prepared.queries:
        raise InputError("no training query has both candidates and a relevant document in the qrels")
    baseline = prepared.evaluate((1.0, 0.0, 0.0))
    best: tuple[float, ...] = (1.0, 0.0, 0.0)
    best_value = baseline
    for lo in grid:
        for lu in grid:
            value = prepared.evaluate((1.0, lo, lu))
            if value > best_value + 1e-12:
                best, best_value = (1.0, lo, lu), value
    step = 0.5
    for _ in range(rounds):  # multiplicative refinement of each non-zero coordinate
        improved = False
        for coord in (1, 2):
            if best[coord] == 0.0:
                continue
            for factor in (1 - step, 1 + step):
                cand = list(best)
                cand[coord] = best[coord] * factor
                value = prepared.evaluate(cand)
                if value > best_value + 1e-12:
                    best, best_value, improved = tuple(cand), value, True
        step /= 2
        if not improved and step < 0.1:
            break
    return {"lambda_T": best[0], "lambda_O": best[1], "lambda_U": best[2], "train_" + metric: best_value,
            "train_" + metric + "_unigram_only": baseline, "train_queries": len(prepared.queries),
            "pooling": pooling, "k": k}


def save_lambdas(index_dir: str | Path, key: str, fitted: dict) -> Path:
    """Record fitted λ under ``key`` (e.g. ``exact/k=3``) in ``<index>/sdm_lambdas.json``."""
    path = Path(index_dir) / LAMBDAS_FILE
    update_json(path, lambda data: {**data, key: fitted})
    return path


def drop_lambdas(index_dir: str | Path, prefix: str) -> None:
    """Forget the λ saved under keys starting with ``prefix`` (before refitting them)."""
    path = Path(index_dir) / LAMBDAS_FILE
    if path.exists():
        update_json(path, lambda data: {k: v for k, v in data.items() if not k.startswith(prefix)})


def parse_lambdas(text: str) -> tuple[float, float, float]:
    """``--lambdas λ_T,λ_O,λ_U``: three finite numbers (NaN or inf would write a run of nan scores), else
    InputError."""
    try:
        lambdas = tuple(float(x) for x in text.split(","))
    except ValueError:
        lambdas = ()
    if len(lambdas) != 3 or not all(math.isfinite(x) for x in lambdas):
        raise InputError(f"--lambdas must be three finite numbers λ_T,λ_O,λ_U, got {text!r}")
    return lambdas


def load_lambdas(index_dir: str | Path, key: str) -> tuple[float, float, float]:
    """(λ_T, λ_O, λ_U) saved under ``key`` in ``<index>/sdm_lambdas.json``."""
    path = Path(index_dir) / LAMBDAS_FILE
    if not path.exists():
        raise InputError(f"{path}: no fitted λ; run `lsr-lucene longdocs fit` or pass --lambdas")
    data = json.loads(path.read_text())
    if key not in data:
        raise InputError(f"{path}: no λ for {key!r} (has: {', '.join(sorted(data)) or 'none'})")
    entry = data[key]
    return entry["lambda_T"], entry["lambda_O"], entry["lambda_U"]
