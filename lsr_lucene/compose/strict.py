"""Strict exclusions of the explicit syntax where they meet the rest of compose: the query specs of syntax topics (for
searches of specs alone, e.g. distributed search) and ``--explain``'s account of what the filter removed."""
from __future__ import annotations

from typing import Mapping, Sequence

from lsr_lucene.compose.compositions import Composition, parse_topics
from lsr_lucene.compose.exclusion import unfiltered, written
from lsr_lucene.compose.execute import compose, composed_specs, require_single_specs
from lsr_lucene.compose.operations import Settings
from lsr_lucene.compose.query_encoder import QueryEncoder


def syntax_specs(topics: Mapping[str, str], encoder, scale: float) -> list[dict]:
    """The query spec of each topic in the explicit syntax (its ranked tree composed by the default vector operations,
    its exclusions as ``exclude``), as ``compose --write-specs`` writes it: what a search of specs alone (distributed
    search) needs."""
    comps = parse_topics(topics)
    settings = Settings.of()
    require_single_specs(comps, settings)
    plans = compose(comps, settings, QueryEncoder(mode="full", encoder=encoder))
    return composed_specs([c.qid for c in comps], plans, scale, {c.qid: c.exclude for c in comps})


def filter_report(searcher, comp, plan, ranked: Sequence[tuple[str, float]], top: int) -> list[str]:
    """``--explain`` lines of a query's strict filter: how many documents it removed, and the would-be top ``top``
    (the same plan searched without it), each marked removed or with its rank in ``ranked``; [] without a filter."""
    if not comp.exclude or top <= 0:
        return []
    backend = searcher.backend
    unfiltered_comp = Composition(comp.qid, comp.tree, comp.text)
    would = searcher.rank([unfiltered_comp], [unfiltered(plan)], top)[comp.qid]
    gone = backend.excluded(comp.exclude, [d for d, _ in would])
    rank = {d: r for r, (d, _) in enumerate(ranked, 1)}
    lines = [f"strict filter (explicit syntax): removed the {backend.excluded_count(comp.exclude):,} documents whose "
             f"text matches {written(comp.exclude)}; the top {len(would)} without it:"]
    for r, ((doc, score), removed) in enumerate(zip(would, gone), 1):
        where = "removed (its text matches)" if removed else f"kept, rank {rank[doc]}" if doc in rank else \
            f"kept, below the {len(ranked)} hits asked for"
        lines.append(f"  {r}. {doc} {score:.6f}: {where}")
    return lines
