"""Grid search of fusion weights (and RRF k) on training topics only, scored by trec_eval in a few calls.

Only the queries of the training subset are kept from the runs and the qrels before anything is computed, so
neither the rankings nor the judgements of other topics can influence the choice, and trec_eval sees training
queries only. Weights range over the simplex in steps of ``step`` (a weight of 0 drops a run); RRF also tries
each k of ``rrf_ks``. Equal scores go to the setting with the most even weights, then the k nearest 60.
"""
from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from lsr_lucene.errors import InputError
from lsr_lucene.eval.trec import canonical_measure, evaluate_rankings, measure_key, read_qrels
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
    candidates: list[tuple[float, np.ndarray]] = []
    rankings: list[dict[str, list[str]]] = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(ks) * len(pools), desc=f"fit {method}", unit=" queries", file=sys.stderr, leave=False)
    for rrf_k in ks:
        per_candidate: list[dict[str, list[str]]] = [{} for _ in grid]
        for qid, pool in pools.items():
            if pool.docids:
                feats = features(pool, method, rrf_k, normalisation)
                for c, ids in enumerate(ranked_ids(pool, feats, grid, k)):
                    per_candidate[c][qid] = ids
            if bar is not None:
                bar.update(1)
        rankings += per_candidate
        candidates += [(rrf_k, row) for row in grid]
    if bar is not None:
        bar.close()
    scores = evaluate_rankings(qrels, rankings, measure)
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

