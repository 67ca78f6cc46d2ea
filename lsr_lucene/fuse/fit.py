"""Grid search of fusion weights (and RRF k) on training topics only, scored by trec_eval's measures in process.

Only the queries of the training subset are kept from the runs and the qrels before anything is computed, so
neither the rankings nor the judgements of other topics can influence the choice, and trec_eval sees training
queries only. Weights range over the simplex in steps of ``step`` (a weight of 0 drops a run); RRF also tries
each k of ``rrf_ks``. Equal scores go to the setting with the most even weights, then the k nearest 60.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from lsr_lucene.errors import InputError
from lsr_lucene.eval.trec import canonical_measure, evaluator, measure_key, read_qrels
from lsr_lucene.fuse.methods import features, ranked_ids
from lsr_lucene.fuse.pools import build_pools, read_runs
from lsr_lucene.fuse.setting import DEFAULT_DEPTH, DEFAULT_RRF_K, Setting

WEIGHT_STEP = 0.1
RRF_K_GRID = (5.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0)
CUT_MEASURES = ("ndcg_cut", "P", "recall", "map_cut", "success")  # values depend on the top `cutoff` only


def simplex_grid(n: int, step: float = WEIGHT_STEP) -> np.ndarray:
    """Every weight vector of ``n`` non-negative multiples of ``step`` summing to 1 (candidates × n)."""
    units = round(1 / step) if step > 0 else 0
    if units < 1 or abs(units * step - 1) > 1e-9:
        raise InputError(f"grid step must divide 1 (0.5, 0.25, 0.1, 0.05 ...), got {step}")
    rows = [c for c in itertools.product(range(units + 1), repeat=n) if sum(c) == units]
    return np.asarray(rows, dtype=float) / units


def cutoff(measure: str) -> int | None:
    """The rank cutoff a measure looks at (ndcg_cut_10 -> 10), or None when it reads whole rankings."""
    base, param = canonical_measure(measure)
    if base in CUT_MEASURES and param and "," not in param:
        return int(float(param))
    return None


@dataclass(frozen=True)
class FitResult:
    """The chosen setting, its mean measure on the training topics, and every candidate tried."""

    setting: Setting
    score: float
    tried: list[tuple[Setting, float]]


def _evenness(weights: np.ndarray) -> float:
    return -float(((weights - 1 / len(weights)) ** 2).sum())


QUERY_CHUNK = 64  # queries whose candidate rankings exist at once: memory is a chunk's, not the topic set's


def _streamed_means(qrels: Mapping[str, Mapping[str, int]], pools: Mapping, method: str, normalisation: str,
                    ks: Sequence[float], grid: np.ndarray, k: int, measure: str, bar) -> list[float]:
    """trec_eval ``-c`` mean of ``measure`` of every candidate (each k of ``ks`` × each weight row of ``grid``).

    Rankings are made and scored a chunk of queries at a time and only each query's measure value is kept (a
    float per candidate and query), so memory does not grow with candidates × queries × depth. A qrels query
    a candidate does not answer counts as an empty ranking, as with ``trec_eval -c``.
    """
    import pytrec_eval

    judge = evaluator(qrels, [measure])
    key = measure_key(measure)
    qids = list(qrels)
    column = {q: i for i, q in enumerate(qids)}
    empty = judge.evaluate({q: {} for q in qids})
    values = np.tile(np.array([empty.get(q, {}).get(key, np.nan) for q in qids]), (len(ks) * len(grid), 1))
    answered = [q for q in pools if q in column and pools[q].docids]
    for start in range(0, len(answered), QUERY_CHUNK):
        part = answered[start:start + QUERY_CHUNK]
        for r, rrf_k in enumerate(ks):
            rankings: list[dict[str, dict[str, float]]] = [{} for _ in grid]
            for qid in part:
                feats = features(pools[qid], method, rrf_k, normalisation)
                for c, ids in enumerate(ranked_ids(pools[qid], feats, grid, k)):
                    if ids:  # scores given to trec_eval are rank-based: it keeps each ranking's order exactly
                        rankings[c][qid] = {doc: float(len(ids) - i) for i, doc in enumerate(ids)}
            for c, run in enumerate(rankings):
                for qid, measures in (judge.evaluate(run) if run else {}).items():
                    values[r * len(grid) + c, column[qid]] = measures.get(key, np.nan)
        if bar is not None:
            bar.update(len(part) * len(ks))
    means = []
    for row in values:
        present = row[~np.isnan(row)]
        if present.size == 0:
            raise InputError(f"trec_eval reports no {key} (unknown measure or parameter?)")
        means.append(float(pytrec_eval.compute_aggregated_measure(key, present.tolist())))
    return means


def fit(runs: Mapping[str, Mapping[str, Mapping[str, float]]], qrels: Mapping[str, Mapping[str, int]],
        method: str, measure: str = "ndcg_cut_10", normalisation: str = "minmax",
        depth: int | None = DEFAULT_DEPTH, hits: int = 1000, step: float = WEIGHT_STEP,
        rrf_ks: Sequence[float] = RRF_K_GRID, progress: bool = True) -> FitResult:
    """Best setting of ``method`` for ``runs`` (already restricted to the training topics) on ``qrels``."""
    names = list(runs)
    grid = simplex_grid(len(names), step)
    pools = build_pools(runs, depth)
    k = min(cutoff(measure) or hits, hits)
    ks = [float(x) for x in rrf_ks] if method == "rrf" else [DEFAULT_RRF_K]
    candidates = [(rrf_k, row) for rrf_k in ks for row in grid]
    bar = None
    if progress:
        from lsr_lucene.progress import progress_bar

        bar = progress_bar(total=len(ks) * len(pools), desc=f"fit {method}", unit=" queries", leave=False)
    scores = _streamed_means(qrels, pools, method, normalisation, ks, grid, k, measure, bar)
    if bar is not None:
        bar.close()
    tried = [(Setting(method, dict(zip(names, row.tolist())), rrf_k, normalisation, depth), score)
             for (rrf_k, row), score in zip(candidates, scores)]
    best = max(range(len(tried)), key=lambda i: (round(scores[i], 10), _evenness(candidates[i][1]),
                                                 -abs(candidates[i][0] - DEFAULT_RRF_K)))
    chosen, score = tried[best]
    fitted = {"metric": measure_key(measure), "score": round(score, 6), "topics": len(qrels),
              "settings_tried": len(tried)}
    return FitResult(Setting(chosen.method, chosen.weights, chosen.rrf_k, chosen.normalisation, chosen.depth,
                             fitted), score, tried)


def topic_ids(path: str | Path) -> set[str]:
    """Query ids of a topics file (any format ``read_topics`` reads); only the ids are used."""
    from lsr_lucene.io.topics import read_topics

    return set(read_topics(path))


def fit_files(run_paths: Mapping[str, str | Path], qrels_path: str | Path, topics_path: str | Path,
              method: str, **options) -> FitResult:
    """``fit`` on files: runs and qrels restricted to the queries of ``topics_path`` as they are read."""
    topics = topic_ids(topics_path)
    qrels = {q: docs for q, docs in read_qrels(qrels_path).items() if q in topics}
    if not qrels:
        raise InputError(f"no query of {topics_path} has judgements in {qrels_path}")
    runs = read_runs(run_paths, topics=topics)
    for name, run in runs.items():
        if not run:
            raise InputError(f"run {name} ({run_paths[name]}) answers no query of {topics_path}")
    result = fit(runs, qrels, method, **options)
    fitted = dict(result.setting.fitted, topics_file=str(topics_path), qrels=str(qrels_path))
    setting = result.setting
    return FitResult(Setting(setting.method, setting.weights, setting.rrf_k, setting.normalisation, setting.depth,
                             fitted), result.score, result.tried)

