"""Fused scores: per-run features (RRF terms or normalised scores), weighted sums, top-k with ties by docid.

Semantics follow ``pyserini.fusion`` where it has them: RRF adds 1/(k + rank) of each run that retrieved the
document (nothing from a run that did not); min-max maps a run's scores for a query onto [0, 1] (all 1 when
they are equal); a document a run did not retrieve gets 0 there, which is that run's lowest min-max score. The
same rule (the run's lowest normalised score for the query) applies to z-scores and raw scores, where 0 would
rank a missing document above retrieved ones. Ranks come from scores (ties by docid), the top ``depth`` of
each run is normalised and fused, and fused scores are rounded to ``DECIMALS`` so that the order written is
the order of the scores written.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from lsr_lucene.fuse.pools import Pool
from lsr_lucene.io.ranking import top_k  # ties by index: pools list docids ascending, so ties by docid
from lsr_lucene.fuse.setting import Setting

DECIMALS = 9  # fused scores are rounded (and written) to this many decimals


def normalise(scores: np.ndarray, how: str) -> np.ndarray:
    """One run's scores for one query (NaN where absent) normalised; absent documents get the lowest value."""
    present = ~np.isnan(scores)
    out = np.zeros(len(scores))
    if not present.any():
        return out
    values = scores[present]
    if how == "minmax":
        low, high = values.min(), values.max()
        values = np.ones_like(values) if high == low else (values - low) / (high - low)
    elif how == "zscore":
        std = values.std()
        values = np.zeros_like(values) if std == 0 else (values - values.mean()) / std
    elif how != "none":
        raise ValueError(how)
    out[:] = values.min()
    out[present] = values
    return out


def features(pool: Pool, method: str, rrf_k: float = 60.0, normalisation: str = "minmax") -> np.ndarray:
    """docs × runs matrix that fusion weights and adds: 1/(k + rank) (0 where absent) or normalised scores."""
    if method == "rrf":
        ranks = pool.ranks.astype(float)
        return np.where(pool.ranks > 0, 1.0 / (rrf_k + np.where(ranks > 0, ranks, 1.0)), 0.0)
    how = "zscore" if method == "zscore" else normalisation
    return np.stack([normalise(pool.scores[:, col], how) for col in range(pool.scores.shape[1])], axis=1) \
        if pool.scores.size else np.zeros(pool.scores.shape)


def weighted_sums(feats: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """docs × candidates fused scores for a candidates × runs weight matrix, added run by run in run order (the
    same arithmetic for one candidate as for many, so a fitted setting reproduces its fit), rounded."""
    total = np.zeros((feats.shape[0], weights.shape[0]))
    for col in range(feats.shape[1]):
        total += feats[:, col:col + 1] * weights[None, :, col]
    return np.round(total, DECIMALS)


def fuse_pools(pools: Mapping[str, Pool], setting: Setting, hits: int = 1000
               ) -> dict[str, list[tuple[str, float]]]:
    """``{qid: [(docid, fused score), ...]}``, best first, ``hits`` per query."""
    weights = np.asarray([setting.vector()])
    out = {}
    for qid, pool in pools.items():
        if not pool.docids:
            continue
        scores = weighted_sums(features(pool, setting.method, setting.rrf_k, setting.normalisation), weights)[:, 0]
        out[qid] = [(pool.docids[i], float(scores[i])) for i in top_k(scores, hits)]
    return out


def ranked_ids(pool: Pool, feats: np.ndarray, weights: np.ndarray, k: int) -> list[list[str]]:
    """For each candidate weight vector (rows of ``weights``), the top ``k`` docids of this pool."""
    scores = weighted_sums(feats, weights)
    return [[pool.docids[i] for i in top_k(scores[:, c], k)] for c in range(weights.shape[0])]
