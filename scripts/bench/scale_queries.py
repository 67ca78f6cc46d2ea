"""Query sets of the scale benchmark: real encoded queries of the pool and the query specs built from them.

Kinds: ``plain`` (positive weights: every engine), and, for our searcher only, ``signed`` (A − B*, B* = B
without A's terms, as ``bench.queries``), ``union`` (A + B, the baseline of CPT), ``cpt`` (A + B with
Combined Pseudo-Term pairs of their top terms) and ``window`` (A plus ExactSDM ordered-bigram and unordered-window
clauses over A's WordPieces, reranking the top ``rerank``). A and B are consecutive queries of the seeded sample.
"""
from __future__ import annotations

import numpy as np

from lsr_lucene.errors import InputError

KINDS = ("plain", "signed", "union", "cpt", "window")
CPT_TOP = 5  # top terms of A and B paired (paper: 5)
RERANK = 1000  # documents reranked by window clauses
WIDTH = 8  # unordered window width
ORDERED_WEIGHT, UNORDERED_WEIGHT = 0.1, 0.05  # as bench.queries


def sample_queries(queries: list[dict], n: int, seed: int, known: set[str] | None = None) -> list[dict]:
    """``n`` queries drawn without replacement (seeded); with ``known``, only queries holding a known term."""
    usable = [q for q in queries if known is None or any(t in known for t, w in q["vector"].items() if w > 0)]
    if len(usable) < 2:
        raise InputError(f"the pool has {len(usable)} usable queries; the benchmark needs at least 2")
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(usable), size=min(n, len(usable)), replace=False)
    return [usable[i] for i in picked]


def _positive(vector: dict[str, int]) -> dict[str, int]:
    return {t: int(w) for t, w in vector.items() if w > 0}


def _entry(qid: str, spec: dict) -> dict:
    """A query as engines take it: qid, the term weights and our full spec."""
    return {"qid": qid, "terms": dict(spec["terms"]), "spec": spec}


def window_clauses(tokens: list[str], vector: dict[str, int], width: int = WIDTH) -> list[dict]:
    """Ordered bigrams and unordered windows over the query's WordPieces (weight 0 breaks adjacency)."""
    from lsr_lucene.longdocs.sdm import query_clauses, window_dicts

    clauses = query_clauses([[(t, float(vector.get(t, 0))) for t in tokens]])
    return window_dicts(clauses, ordered=True, weight=ORDERED_WEIGHT) + \
        window_dicts(clauses, ordered=False, width=width, weight=UNORDERED_WEIGHT)


def build_query_sets(sample: list[dict], kinds: tuple[str, ...] = KINDS, rerank: int = RERANK) -> dict[str, list[dict]]:
    """Engine queries of every kind from the sampled pool queries (same count per kind)."""
    from lsr_lucene.search.specs import query_pairs, validate_spec

    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise InputError(f"unknown query kind(s) {sorted(unknown)}; known: {', '.join(KINDS)}")
    sets: dict[str, list[dict]] = {kind: [] for kind in kinds}
    for i, query in enumerate(sample):
        a, b = query, sample[(i + 1) % len(sample)]
        va, vb = _positive(a["vector"]), _positive(b["vector"])
        pair_id = f"{a['qid']}~{b['qid']}"
        if "plain" in sets:
            sets["plain"].append(_entry(a["qid"], {"qid": a["qid"], "terms": va}))
        if "signed" in sets:
            terms = dict(va)
            terms.update({t: -w for t, w in vb.items() if t not in va})
            sets["signed"].append(_entry(pair_id, {"qid": pair_id, "terms": terms}))
        terms = dict(va)
        for t, w in vb.items():
            terms[t] = terms.get(t, 0) + w
        if "union" in sets:
            sets["union"].append(_entry(pair_id, {"qid": pair_id, "terms": dict(terms)}))
        if "cpt" in sets:
            sets["cpt"].append(_entry(pair_id, {"qid": pair_id, "terms": terms, "pairs": query_pairs(va, vb, CPT_TOP)}))
        if "window" in sets:
            spec = {"qid": a["qid"], "terms": va}
            windows = window_clauses(a.get("tokens") or [], va)
            if windows:
                spec.update(windows=windows, rerank=rerank)
            sets["window"].append(_entry(a["qid"], spec))
    for entries in sets.values():
        for entry in entries:
            validate_spec(entry["spec"])
    return sets
