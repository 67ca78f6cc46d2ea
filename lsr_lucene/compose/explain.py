"""The ``--explain`` report of a composed query: parse or tree, composed representation, top documents' term scores.

Each top document's score is broken into every term's and pair's contribution (negative ones penalise it).
"""
from __future__ import annotations

from typing import Mapping, Sequence

from lsr_lucene.compose.compositions import Composition
from lsr_lucene.compose.operations import Plan, Settings, VectorPlan, format_plan, quantise_composed
from lsr_lucene.compose.tree import format_tree


def contributions(backend, vector: Mapping, scale: float, docs: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
    """Per document: each term's / pair's non-zero contribution to its score, largest magnitude first."""
    terms, pairs = quantise_composed(vector, scale)
    clauses = [(t, {"qid": "explain", "terms": {t: w}}) for t, w in terms.items()]
    clauses += [(f"{a} ∩ {b}", {"qid": "explain", "terms": {}, "pairs": [[a, b, w]]}) for a, b, w in pairs]
    out: dict[str, list[tuple[str, float]]] = {d: [] for d in docs}
    for label, spec in clauses:
        for doc, value in zip(docs, backend.score(spec, list(docs))):
            if value:
                out[doc].append((label, value))
    return {d: sorted(parts, key=lambda kv: -abs(kv[1])) for d, parts in out.items()}


def explain_query(comp: Composition, plan: Plan, settings: Settings, scale: float, ranked, backend,
                  top_docs: int = 3, parse_text: str | None = None) -> str:
    """The ``--explain`` report of one query: parse, tree, composed representation, why top docs scored so."""
    lines = [f"== query {comp.qid}" + (f": {comp.text}" if comp.text else "")]
    if parse_text:
        lines += ["  " + line for line in parse_text.splitlines()[1:]]
    else:
        lines.append(format_tree(comp.tree, "  "))
    lines.append(f"  operations: {settings.describe()}")
    lines.append("  representation (term: weight, sorted; negative terms penalise documents):")
    lines.append(format_plan(plan, top=12, indent="    "))
    if isinstance(plan, VectorPlan):
        top = [doc for doc, _ in ranked[:top_docs]]
        parts_of = contributions(backend, plan.vector, scale, top) if top else {}
        for rank, (doc, score) in enumerate(ranked[:top_docs], 1):
            parts = parts_of[doc]
            shown = ", ".join(f"{t} {v:+.0f}" for t, v in parts[:8])
            penal = [f"{t} {v:+.0f}" for t, v in parts if v < 0]
            lines.append(f"  {rank}. {doc} score {score:.1f} = {shown}{' …' if len(parts) > 8 else ''}")
            if penal:
                lines.append(f"     penalised by: {', '.join(penal[:8])}")
    else:
        for rank, (doc, score) in enumerate(ranked[:top_docs], 1):
            lines.append(f"  {rank}. {doc} fused score {score:.4f}")
    return "\n".join(lines)
