"""``eval_hits``: trec_eval measures of one query's hits against a qrels file, as ``lsr-lucene eval`` computes them."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from lsr_lucene.errors import InputError

DEFAULT_MEASURES = ("ndcg_cut.10", "recall.100", "recip_rank")


def hit_scores(hits: Sequence[Mapping[str, Any]] | Mapping[str, Any]) -> dict[str, float]:
    """``{docid: score}`` of candidates ``[{docid, score}, ...]`` (a search answer's) or of such a dict itself;
    InputError naming ``hits`` otherwise."""
    if isinstance(hits, Mapping):
        pairs = list(hits.items())
    else:
        pairs = []
        for i, hit in enumerate(hits):
            if not isinstance(hit, Mapping) or "docid" not in hit or "score" not in hit:
                raise InputError(f"hits[{i}]: expected an object with docid and score, got {hit!r}"[:200])
            pairs.append((hit["docid"], hit["score"]))
    scores: dict[str, float] = {}
    for docid, score in pairs:
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise InputError(f"hits: the score of {docid!r} is not a number ({score!r})")
        if str(docid) in scores:
            raise InputError(f"hits: document {docid!r} appears twice")
        scores[str(docid)] = float(score)
    if not scores:
        raise InputError("hits: no hit to evaluate")
    return scores


def evaluate_hits(qrels_path: str, query_id: str, hits, measures: Sequence[str] | None = None) -> dict:
    """Each measure's value for ``query_id``'s ``hits``, with the query's relevant and judged-hit counts."""
    from lsr_lucene.eval.trec import evaluator, expand_measures, measure_key, read_qrels, unique_measures

    try:
        qrels = read_qrels(qrels_path)
    except InputError as exc:
        raise InputError(f"qrels: {exc}") from None
    if str(query_id) not in qrels:
        raise InputError(f"query_id: {query_id!r} is not judged in {qrels_path} ({len(qrels)} queries there)")
    judged = qrels[str(query_id)]
    names = unique_measures(expand_measures(measures or DEFAULT_MEASURES))
    if not names:
        raise InputError("measures: no measure given")
    scores = hit_scores(hits)
    try:
        values = evaluator({str(query_id): judged}, names).evaluate({str(query_id): scores}).get(str(query_id), {})
    except InputError as exc:
        raise InputError(f"measures: {exc}") from None
    unknown = [n for n in names if measure_key(n) not in values]
    if unknown:
        raise InputError(f"measures: trec_eval reports no {', '.join(unknown)} (unknown measure or parameter?)")
    return {"query_id": str(query_id), "measures": {n: values[measure_key(n)] for n in names},
            "relevant": sum(1 for gain in judged.values() if gain > 0), "hits": len(scores),
            "judged_hits": sum(1 for d in scores if d in judged)}
