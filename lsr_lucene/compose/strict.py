"""Strict exclusions of the explicit syntax where they meet the rest of compose: the query specs of syntax topics (for
searches of specs alone, e.g. distributed search) and ``--explain``'s account of what the filter removed."""
from __future__ import annotations

from typing import Mapping, Sequence

from lsr_lucene.compose.compositions import Composition, parse_topics
from lsr_lucene.compose.exclusion import split_exclusions, written
from lsr_lucene.compose.query_syntax import written as syntax_written
from lsr_lucene.compose.execute import compose, composed_specs, require_single_specs
from lsr_lucene.compose.operations import Settings
from lsr_lucene.compose.query_encoder import QueryEncoder


def syntax_specs(topics: Mapping[str, str], encoder, scale: float) -> list[dict]:
    """The query spec of each topic in the explicit syntax (its kept tree composed by the default vector operations,
    its exclusions as ``exclude``), as ``compose --write-specs --not-op ignore`` writes it: what a search of specs
    alone (distributed search) needs: a spec cannot fuse, so each not node ranks its A side alone there."""
    comps = [Composition(c.qid, split_exclusions(c.tree)[0], None, c.exclude) for c in parse_topics(topics)]
    settings = Settings.of()
    require_single_specs(comps, settings)
    plans = compose(comps, settings, QueryEncoder(mode="full", encoder=encoder))
    return composed_specs([c.qid for c in comps], plans, scale, {c.qid: c.exclude for c in comps})


def filter_report(searcher, comp, ranked: Sequence[tuple[str, float]], top: int) -> list[str]:
    """``--explain`` lines of a query's strict filter: how many documents it removed, and the top ``top`` of what the
    query keeps (its not nodes' A sides) searched alone without the filter, each marked removed or with its rank in
    ``ranked``; [] without a filter."""
    if not comp.exclude or top <= 0:
        return []
    backend = searcher.backend
    kept = Composition(comp.qid, split_exclusions(comp.tree)[0])
    would = searcher.rank([kept], searcher.plans([kept]), top)[comp.qid]
    gone = backend.excluded(comp.exclude, [d for d, _ in would])
    rank = {d: r for r, (d, _) in enumerate(ranked, 1)}
    lines = [f"strict filter (explicit syntax): removed the {backend.excluded_count(comp.exclude):,} documents whose "
             f"text matches {written(comp.exclude)}; the top {len(would)} of {syntax_written(kept.tree, False)!r} "
             "alone, without the filter:"]
    for r, ((doc, score), removed) in enumerate(zip(would, gone), 1):
        where = "removed (its text matches)" if removed else f"kept, rank {rank[doc]}" if doc in rank else \
            f"kept, below the {len(ranked)} hits asked for"
        lines.append(f"  {r}. {doc} {score:.6f}: {where}")
    return lines
