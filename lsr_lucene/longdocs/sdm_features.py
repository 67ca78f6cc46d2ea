"""ExactSDM and SoftSDM features of segments: (O, U) through Lucene WindowQuery clauses or the SoftSDM top-k
store, and the (T, O, U) table per document and segment that λ fitting and scoring read."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from lsr_lucene.longdocs.queries import Query
from lsr_lucene.longdocs.segment import parse_segment_id
from lsr_lucene.longdocs.store import read_tokens


@dataclass
class SdmSettings:
    """Query-side SDM settings: n-gram size, unordered window width, clause cap."""

    ngram: int = 2
    width: int = 8
    max_clauses: int | None = None
    min_weight: float = 0.0


def exact_features(searcher, query: Query, seg_ids: Sequence[str], settings: SdmSettings
                   ) -> dict[str, tuple[float, float]]:
    """(O, U) of each segment through Lucene: Σ ordered and Σ unordered WindowQuery scores (0 without match)."""
    from lsr_lucene.longdocs.sdm import query_clauses, window_dicts

    clauses = query_clauses(query.sequences, settings.ngram, settings.min_weight, settings.max_clauses)
    out = {s: [0.0, 0.0] for s in seg_ids}
    if not clauses or not seg_ids:
        return {s: (0.0, 0.0) for s in seg_ids}
    for column, ordered in ((0, True), (1, False)):
        windows = window_dicts(clauses, ordered, settings.width)
        if not windows:
            continue
        scores = searcher.score({"qid": query.qid, "terms": {}, "windows": windows}, list(seg_ids))
        for s, value in zip(seg_ids, scores):
            out[s][column] = float(value)
    return {s: (v[0], v[1]) for s, v in out.items()}


def soft_features_for(store, own: Mapping[str, tuple], query: Query, seg_ids: Sequence[str], settings: SdmSettings,
                      vocab: Mapping[str, int]) -> dict[str, tuple[float, float]]:
    """(soft O, soft U) of each stored segment through the top-k store (SoftSDM, eqs. 5-6);
    ``own``: segment id -> :func:`lsr_lucene.longdocs.softsdm.own_arrays` of its tokens."""
    from lsr_lucene.longdocs.sdm import query_clauses
    from lsr_lucene.longdocs.softsdm import SoftQuery, soft_features

    clauses = query_clauses(query.sequences, settings.ngram, settings.min_weight, settings.max_clauses)
    if not clauses:
        return {s: (0.0, 0.0) for s in seg_ids}
    soft = SoftQuery(clauses, vocab, settings.width)
    out = {s: (0.0, 0.0) for s in seg_ids}
    for seg_id, o, u in soft_features(soft, store, own, seg_ids):
        out[seg_id] = (o, u)
    return out


def read_own_arrays(encoded: str | Path, wanted: set[str] | None, vocab: Mapping[str, int]) -> dict[str, tuple]:
    """Own-token (vocabulary ids, weights) arrays of the wanted encoded segments, for SoftSDM."""
    from lsr_lucene.longdocs.softsdm import own_arrays

    return {s: own_arrays(toks, vocab) for s, toks in read_tokens(encoded, wanted).items()}


def feature_table(t_scores: Mapping[str, float], extra: Mapping[str, tuple[float, float]],
                  norm: float) -> dict[str, dict[int, tuple[float, float, float]]]:
    """docid -> segment number -> (T, O, U), T = impact score / ``norm`` (float units)."""
    out: dict[str, dict[int, tuple[float, float, float]]] = defaultdict(dict)
    for seg_id in set(extra) | set(t_scores):
        doc_id, number = parse_segment_id(seg_id)
        o, u = extra.get(seg_id, (0.0, 0.0))
        out[doc_id][number] = (t_scores.get(seg_id, 0.0) / norm, o, u)
    return dict(out)
