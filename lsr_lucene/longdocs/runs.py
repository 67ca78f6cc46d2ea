"""Document runs from segment scores: reading run files, score-max collapsing of segments into documents, the
reranked head above the first-stage tail, and TREC run writing."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Mapping, Sequence

from lsr_lucene.longdocs.segment import parse_segment_id


def read_run_lines(path: str | Path) -> dict[str, list[tuple[str, float]]]:
    """``{qid: [(docid, score), ...]}`` in file order."""
    out: dict[str, list[tuple[str, float]]] = defaultdict(list)
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            cols = line.split()
            if len(cols) == 6:
                out[cols[0]].append((cols[2], float(cols[4])))
    return dict(out)


def collapse(segment_scores: Mapping[str, float], k: int | None) -> dict[str, float]:
    """score-max: each document's best score over its segments numbered < k (all when k is None)."""
    out: dict[str, float] = {}
    for seg_id, score in segment_scores.items():
        doc_id, number = parse_segment_id(seg_id)
        if k is None or number < k:
            if doc_id not in out or score > out[doc_id]:
                out[doc_id] = score
    return out


def write_run(scores: Mapping[str, Mapping[str, float]], output: str | Path, tag: str, hits: int = 1000,
              qids: Sequence[str] | None = None) -> None:
    """A TREC run (score descending, ties by docid ascending), top ``hits`` per query, written atomically."""
    from lsr_lucene.io.output import write_run as write_trec_run
    from lsr_lucene.longdocs.sdm import rank

    top = {}
    for qid in (qids if qids is not None else scores):
        docs = scores.get(qid, {})
        top[qid] = [(d, docs[d]) for d in rank(docs)[:hits]]
    write_trec_run(top, output, tag, overwrite=True)


def with_tail(reranked: Mapping[str, float], first_stage: Mapping[str, float], hits: int = 1000) -> dict[str, float]:
    """The reranked documents, then the rest of the first-stage ranking below them (order kept), ``hits`` in all."""
    from lsr_lucene.longdocs.sdm import rank

    out = dict(reranked)
    if len(out) >= hits:
        return out
    floor = min(out.values(), default=0.0)
    tail = [d for d in rank(first_stage) if d not in out][:hits - len(out)]
    for i, doc_id in enumerate(tail, 1):
        out[doc_id] = floor - i
    return out
