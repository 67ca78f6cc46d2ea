"""Document runs from segment scores: score-max collapsing of segments into documents and the reranked head above
the first-stage tail (run files are read and written by lsr_lucene.io.runs)."""
from __future__ import annotations

from typing import Mapping

from lsr_lucene.io.ranking import ranking
from lsr_lucene.longdocs.segment import parse_segment_id


def collapse(segment_scores: Mapping[str, float], k: int | None) -> dict[str, float]:
    """score-max: each document's best score over its segments numbered < k (all when k is None)."""
    out: dict[str, float] = {}
    for seg_id, score in segment_scores.items():
        doc_id, number = parse_segment_id(seg_id)
        if k is None or number < k:
            if doc_id not in out or score > out[doc_id]:
                out[doc_id] = score
    return out


def with_tail(reranked: Mapping[str, float], first_stage: Mapping[str, float], hits: int = 1000) -> dict[str, float]:
    """The reranked documents, then the rest of the first-stage ranking below them (order kept), ``hits`` in all."""
    out = dict(reranked)
    if len(out) >= hits:
        return out
    floor = min(out.values(), default=0.0)
    tail = [d for d in ranking(first_stage) if d not in out][:hits - len(out)]
    for i, doc_id in enumerate(tail, 1):
        out[doc_id] = floor - i
    return out
