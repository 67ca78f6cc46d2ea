"""The one ranking rule of every run: score descending, ties by docid ascending (Anserini's convention), for
score mappings (:func:`ranking`, :func:`top_hits`) and numpy score arrays (:func:`top_k`)."""
from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

Hits = list[tuple[str, float]]


def ranking(scores: Mapping[str, float]) -> list[str]:
    """Doc ids by score descending, ties by doc id ascending."""
    return sorted(scores, key=lambda doc: (-scores[doc], doc))


def ordered(hits: Iterable[tuple], score_index: int = 1) -> list:
    """Hits ``(docid, score, ...)`` by score (``hit[score_index]``) descending, ties by docid ascending."""
    return sorted(hits, key=lambda hit: (-hit[score_index], hit[0]))


def top_hits(scores: Mapping[str, float], k: int | None) -> Hits:
    """The ``k`` best (docid, score) of a mapping (all when ``k`` is None), in run order."""
    ranked = ranking(scores)
    return [(doc, scores[doc]) for doc in (ranked if k is None else ranked[:k])]


def top_k(scores: np.ndarray, k: int, tiebreak: np.ndarray | None = None,
          candidates: np.ndarray | None = None) -> np.ndarray:
    """Indices of the ``k`` highest ``scores``, best first, ties by ``tiebreak`` ascending (by index when None).

    ``candidates`` (indices) restricts the choice. Uses argpartition, then orders the documents tied with the
    k-th exactly (lexsort), so the cost is O(n + k log k) and the result equals a full sort's first k.
    """
    keep = np.arange(len(scores)) if candidates is None else np.asarray(candidates, dtype=np.int64)
    if k <= 0 or keep.size == 0:
        return keep[:0]
    values = np.asarray(scores)[keep]
    if k < keep.size:
        kth = np.partition(-values, k - 1)[k - 1]
        tied = -values <= kth  # every document tied with the k-th, so the docid order among them is exact
        keep, values = keep[tied], values[tied]
    keys = keep if tiebreak is None else np.asarray(tiebreak)[keep]
    return keep[np.lexsort((keys, -values))][:k]
