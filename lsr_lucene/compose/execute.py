"""Composed queries end to end: encode the atomic texts, build plans, search them and fuse rankings.

A :class:`~lsr_lucene.compose.operations.VectorPlan` is searched as one signed query. ``fusion`` /
``fusion-scaled`` plans instead search each child separately: the top ``fusion_depth`` documents of every
fused leaf form the candidates, every leaf gets its exact score on every candidate (from its own hits, else by
exact scoring; a leaf that does not match a candidate scores 0 there), the scores are fused (score(A) −
λ·score(B), ·, +; min-max normalised per child over the candidates for fusion-scaled) and the best ``hits`` are
kept. A node with a dense leg (the `default` when the index has one, :mod:`lsr_lucene.compose.dense_leg`) also
gets the dense cosine of A's text on every candidate, and the dense leg's own top ``fusion_depth`` documents for A's
text join the candidates; a fusion-gated node reads the stored texts of candidates that match both legs for B stated
absent (:mod:`lsr_lucene.compose.absence`, through the backend's ``texts`` and ``containing``). A composed vector
with no positive weight matches no document: that query gets no hits and a
warning.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from lsr_lucene.compose.backends import make_spec, spec_matches
from lsr_lucene.compose.compositions import Composition
from lsr_lucene.compose.exclusion import filtered, kept_candidates, plan_exclusion, with_exclusion
from lsr_lucene.compose.operations import (VECTOR_OPS, FusionPlan, Plan, Settings, VectorPlan, build_plan,
                                           first_fusion, fuse, plan_inputs, plan_vectors, required_texts)
from lsr_lucene.compose.query_encoder import QueryEncoder
from lsr_lucene.errors import InputError
from lsr_lucene.io.ranking import top_hits

DEFAULT_FUSION_DEPTH = 1000


def compose(compositions: Sequence[Composition], settings: Settings, encoder: QueryEncoder) -> list[Plan]:
    """Plans of every composition (texts encoded once, in one batch)."""
    texts: list[str] = []
    for comp in compositions:
        texts.extend(required_texts(comp.tree, settings, comp.text))
    unique = list(dict.fromkeys(texts))
    vectors = dict(zip(unique, encoder.encode(unique)))
    # a query's strict filter (explicit exclusions) travels with its plan: execute applies it to every spec
    return [filtered(build_plan(c.tree, settings, vectors, c.text, where=f"query {c.qid}"), c.exclude)
            for c in compositions]


# the vector operation suggested in place of a fusion on each node type (the first of each row in README's table)
SPEC_OPERATION = {"not": "disentangled", "and": "cpt", "or": "maxpool"}


def single_spec_refusal(qid: str, node_op: str, name: str, where: str = "") -> str:
    """The one-line reason why a fused query has no query spec, naming the vector operation to choose instead."""
    others = [op for op in VECTOR_OPS[node_op] if op != SPEC_OPERATION[node_op]]
    return (f"{where + ': ' if where else ''}query {qid} uses {name} on a {node_op!r} node, which fuses separate "
            f"searches and cannot be one Anserini query spec; choose --{node_op}-op {SPEC_OPERATION[node_op]} "
            f"(or {'/'.join(others)}) to write specs")


def require_single_specs(compositions: Sequence[Composition], settings: Settings, where: str = "") -> None:
    """InputError (one line) when a composition would be score-fused under ``settings``; checked on the trees
    alone, so a caller can refuse before encoding or searching anything."""
    for comp in compositions:
        fused = first_fusion(comp.tree, settings)
        if fused is not None:
            raise InputError(single_spec_refusal(comp.qid, *fused, where=where))


def composed_specs(qids: Sequence[str], plans: Sequence[Plan], scale: float,
                   exclude: Mapping[str, dict | None] | None = None) -> list[dict]:
    """The query spec of every vector plan that can match (what ``execute`` searches), e.g. for Anserini's
    SearchCollection; a fusion plan searches several specs and fuses them, so it has no single spec. ``exclude``:
    the strict filter of each query's explicit exclusions (default: the one its plan carries), carried by its spec."""
    specs = []
    for qid, plan in zip(qids, plans):
        if not isinstance(plan, VectorPlan):
            op = "fusion-scaled" if plan.scaled and plan.gate is None else "fusion-gated" if plan.scaled else "fusion"
            raise InputError(single_spec_refusal(qid, plan.node_op, op))
        spec = with_exclusion(make_spec(qid, plan.vector, scale), (exclude or {}).get(qid) or plan_exclusion(plan))
        if spec is not None and spec_matches(spec):
            specs.append(spec)
    return specs


def execute(qids: Sequence[str], plans: Sequence[Plan], backend, scale: float, hits: int = 1000,
            fusion_depth: int = DEFAULT_FUSION_DEPTH, warn=None,
            traces: dict | None = None, dense=None, threads: int | None = None,
            dense_depth: int | None = None, exclude: Mapping[str, dict | None] | None = None
            ) -> dict[str, list[tuple[str, float]]]:
    """Ranked (doc, score) lists for every plan: one batch search of the vector plans, fusion otherwise.

    ``traces``, when given, receives for every fused query its leaves' scores over the candidates (in
    :func:`plan_inputs` order, dense cosines included): what ``--explain`` needs to show both legs' scores.
    ``dense``: the :class:`~lsr_lucene.compose.dense_leg.DenseLeg` that plans with a dense leg need;
    ``dense_depth``: how many of its own nearest documents join the candidates (None: ``fusion_depth``; 0: none).
    ``threads``: the batch searches' threads (default: the backend's own; 1 searches in memory, no files).
    ``exclude``: per query, the strict filter of its explicit exclusions (default: the one its plan carries, from
    :func:`compose`), which every spec of the query carries (the search skips what it removes;
    :mod:`lsr_lucene.compose.exclusion`)."""
    exclude = {qid: (exclude or {}).get(qid) or plan_exclusion(plan) for qid, plan in zip(qids, plans)}
    results: dict[str, list[tuple[str, float]]] = {}
    direct: list[dict] = []
    fused: list[tuple[str, FusionPlan, list[dict | None]]] = []
    leaf_specs: list[dict] = []
    for qid, plan in zip(qids, plans):
        if isinstance(plan, VectorPlan):
            spec = with_exclusion(make_spec(qid, plan.vector, scale), exclude.get(qid))
            if spec is None or not spec_matches(spec):
                if warn:
                    warn(qid, "the composed vector has no positive weight, so it matches no document")
                results[qid] = []
                continue
            direct.append(spec)
        else:
            specs = [with_exclusion(make_spec(f"{qid}#{i}", vec, scale), exclude.get(qid))
                     for i, vec in enumerate(plan_vectors(plan))]
            fused.append((qid, plan, specs))
            leaf_specs.extend(s for s in specs if s is not None and spec_matches(s))
    results.update(backend.search_many(direct, hits, threads))
    if fused:
        leaf_hits = backend.search_many(leaf_specs, fusion_depth, threads)
        extra = dense_candidates({qid: plan for qid, plan, _ in fused}, dense, backend,
                                 fusion_depth if dense_depth is None else dense_depth)
        extra = kept_candidates(extra, exclude, backend)
        for qid, plan, specs in fused:
            results[qid] = _fused_ranking(qid, plan, specs, leaf_hits, backend, hits, fusion_depth, warn, traces,
                                          dense, extra.get(qid, ()))
    return {qid: results.get(qid, []) for qid in qids}


def dense_candidates(plans: Mapping[str, FusionPlan], dense, backend, depth: int) -> dict[str, list[str]]:
    """Per fused query with a dense leg, the dense leg's own top ``depth`` documents for each of its dense texts
    (one batch), those the index holds: candidates beside the splade legs' hits, so that a document A's sparse
    leg misses in a large collection can still be ranked (issue 49: at scale the wanted passage fell out of A's
    1,000 sparse hits)."""
    wanted = {qid: [text for kind, text in plan_inputs(plan) if kind == "dense"] for qid, plan in plans.items()}
    texts = list(dict.fromkeys(t for ts in wanted.values() for t in ts))
    if dense is None or not texts or depth <= 0:
        return {}
    found = dict(zip(texts, dense.search(texts, depth)))
    out = {}
    for qid, ts in wanted.items():
        docs = list(dict.fromkeys(d for t in ts for d in found[t]))
        if docs:
            out[qid] = backend.known(docs)
    return out


def _fused_ranking(qid: str, plan: FusionPlan, specs: Sequence[dict | None], leaf_hits: Mapping, backend,
                   hits: int, depth: int, warn=None, traces: dict | None = None, dense=None,
                   extra: Sequence[str] = ()) -> list[tuple[str, float]]:
    """Candidates = union of the leaves' hits and ``extra`` (the dense leg's own, :func:`dense_candidates`); every
    leaf's exact score on every candidate; fused; best ``hits``.

    A leaf's own hits carry its exact scores (as a run file writes them, as ``backend.score``'s). Candidates missing
    from a leaf's hits are scored exactly (``backend.score``: the same values a deeper search would give them, and
    cheaper than one: 3.6 against 5.7 ms a leaf on NPL, and independent of the collection's size), unless the
    leaf's list is complete (shorter than asked for) and the leaf has no negative weight: then they do not match the
    leaf and score exactly 0 there.
    """
    hit = {doc for s in specs if s is not None for doc, _ in leaf_hits.get(s["qid"], [])}
    candidates = sorted(hit | set(extra))
    if not candidates:
        if warn:
            warn(qid, "no fused part matches any document")
        return []
    per_leaf = []
    for s in specs:
        if s is None:
            per_leaf.append(dict.fromkeys(candidates, 0.0))
            continue
        own = dict(leaf_hits.get(s["qid"], []))
        missing = [d for d in candidates if d not in own]
        scores = {d: own.get(d, 0.0) for d in candidates}
        complete = len(own) < depth and all(w >= 0 for w in s["terms"].values()) and \
            all(p[2] >= 0 for p in s.get("pairs", []))
        if missing and not complete:
            scores.update(zip(missing, backend.score(s, missing)))
        per_leaf.append(scores)
    inputs = plan_inputs(plan)
    if any(kind != "vector" for kind, _ in inputs):
        from lsr_lucene.compose.dense_leg import leaf_inputs

        per_leaf = leaf_inputs(inputs, per_leaf, dense, candidates, getattr(backend, "texts", None),
                               getattr(backend, "containing", None))
    if traces is not None:
        traces[qid] = per_leaf
    fused = fuse(plan, per_leaf)
    return top_hits(fused, hits)


def run_one(qid: str, plan: Plan, backend, scale: float, hits: int = 1000,
            fusion_depth: int = DEFAULT_FUSION_DEPTH, dense=None, dense_depth: int | None = None,
            exclude: dict | None = None) -> list[tuple[str, float]]:
    """Ranked hits of one plan with single-query calls (what an interactive search does; used for latency)."""
    exclude = exclude or plan_exclusion(plan)
    if isinstance(plan, VectorPlan):
        spec = with_exclusion(make_spec(qid, plan.vector, scale), exclude)
        return backend.search(spec, hits) if spec is not None and spec_matches(spec) else []
    specs = [with_exclusion(make_spec(f"{qid}#{i}", vec, scale), exclude) for i, vec in enumerate(plan_vectors(plan))]
    leaf_hits = {s["qid"]: backend.search(s, fusion_depth) for s in specs if s is not None and spec_matches(s)}
    extra = kept_candidates(dense_candidates({qid: plan}, dense, backend,
                                             fusion_depth if dense_depth is None else dense_depth),
                            {qid: exclude}, backend).get(qid, [])
    return _fused_ranking(qid, plan, specs, leaf_hits, backend, hits, fusion_depth, dense=dense, extra=extra)
