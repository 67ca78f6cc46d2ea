"""Text renderings of composed queries for ``--explain``: a vector in the paper's Table-2 style and a plan's fused
children with their fusion formula."""
from __future__ import annotations

from typing import Mapping

from lsr_lucene.compose.operations import GATED_FLOOR, Key, Plan, VectorPlan


def _key_text(key: Key) -> str:
    return key if isinstance(key, str) else f"{key[0]} ∩ {key[1]}"


def format_vector(vec: Mapping, top: int = 12, scale: float | None = None) -> str:
    """Table-2 style rendering: ``(term: weight, …)`` sorted by weight, negative terms shown after ``…``.

    At most ``top`` positive and ``top`` negative entries; ``scale`` divides quantised integer weights.
    """
    div = scale or 1.0
    items = sorted(((k, w) for k, w in vec.items() if abs(w / div) >= 0.005),  # shown as 0.00 otherwise
                   key=lambda kv: (-kv[1], _key_text(kv[0])))
    pos = [kv for kv in items if kv[1] > 0]
    neg = [kv for kv in items if kv[1] < 0]
    shown = [f"{_key_text(k)}: {w / div:.2f}" for k, w in pos[:top]]
    if len(pos) > top or neg:
        shown.append("…")
    shown += [f"{_key_text(k)}: {w / div:.2f}" for k, w in neg[-top:]]
    return "(" + ", ".join(shown) + ")"


def format_plan(plan: Plan, top: int = 12, scale: float | None = None, indent: str = "") -> str:
    """Rendering of a plan: its vector, or the fused children's vectors with the fusion operator."""
    if isinstance(plan, VectorPlan):
        return indent + format_vector(plan.vector, top, scale)
    symbol = {"not": f"score(A) − {plan.lam:g}·score(B)", "and": "score(A) · score(B)",
              "or": "score(A) + score(B)"}[plan.node_op]
    if plan.gate is not None:
        symbol = (f"max(score(A) − {plan.lam:g}·max(0, score(B) − {plan.gate:g})/{1 - plan.gate:g}, "
                  f"{GATED_FLOOR:g}·score(A))")
    label = ("scaled " if plan.scaled else "") + "fusion: " + symbol
    if plan.dense_text is not None:
        label += (f"; score(A) blended with {plan.dense_weight:g}·dense cosine of {plan.dense_text!r} "
                  "(min-max scaled)")
        if plan.neighbour_weight > 0:
            label += f" + {plan.neighbour_weight:g}·dense cosine with the best A match (min-max scaled)"
    return "\n".join([indent + label, format_plan(plan.a, top, scale, indent + "  A "),
                      format_plan(plan.b, top, scale, indent + "  B ")])
