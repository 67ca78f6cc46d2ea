"""Strict exclusions of the explicit syntax: ``-word``, ``NOT word``, ``-"a phrase"``, ``NOT (a OR b)`` remove every
document whose text contains them, as Lucene's MUST_NOT does, inside the search (the top k is filled by the rest).

A tree of the explicit syntax keeps its not nodes for ranking (``A -B`` ranks as "A but not B" does, on the documents
that remain) and gives a filter expression (:mod:`lsr_lucene.search.text_filter`) of the documents to remove, which
every query spec of the query carries as ``exclude`` (Java ``search.TextFilter`` turns it into a bitset that the
collector skips):

- ``A -B``: removed(A) or B's text (a word; several words: a phrase; ``(x OR y)``: either; ``(x AND y)``: both);
- ``A AND C``: removed(A) or removed(C);
- ``A OR C`` (Lucene's reading of ``tea OR (coffee -espresso)``): a document stays when one side keeps it: it
  contains a word of that side and that side does not remove it.

Natural-language exclusions ("tea but not milk") and JSON compositions stay soft (ranked, not removed).
"""
from __future__ import annotations

import dataclasses
from typing import Mapping

from lsr_lucene.compose.tree import Node, Tree, leaves

Expression = dict  # a text filter expression: {"text": s} | {"any": s} | {"or"|"and": [..]} | {"not": e}


def split_exclusions(tree: Tree) -> tuple[Tree, Expression | None]:
    """(the tree to rank, the filter of the documents to remove: None when nothing is removed)."""
    if isinstance(tree, str):
        return tree, None
    a, removed_a = split_exclusions(tree.a)
    if tree.op == "not":
        return a, _either(removed_a, contains(tree.b))
    b, removed_b = split_exclusions(tree.b)
    if tree.op == "and":
        return Node("and", a, b), _either(removed_a, removed_b)
    if removed_a is None and removed_b is None:
        return Node("or", a, b), None
    return Node("or", a, b), {"and": [_either(removed_a, _lacks(a)), _either(removed_b, _lacks(b))]}


def read_exclusion(value, where: str) -> Expression:
    """A strict filter as a compositions line or a composition dict gives it (``"exclude"``): a word or phrase, a
    list of them (any one removes), or a filter expression; InputError naming ``where`` otherwise."""
    from lsr_lucene.search.specs import check_exclude

    if isinstance(value, str):
        value = {"text": value}
    elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        value = {"or": [{"text": v} for v in value]} if len(value) > 1 else {"text": value[0]}
    check_exclude(value, f"{where}: \"exclude\"")
    return dict(value)


def contains(tree: Tree) -> Expression:
    """The documents whose text holds an excluded part: a leaf as a phrase (one word: that word), or/and/not."""
    if isinstance(tree, str):
        return {"text": tree}
    if tree.op == "not":
        return {"and": [contains(tree.a), {"not": contains(tree.b)}]}
    return {tree.op: [contains(tree.a), contains(tree.b)]}


def _lacks(tree: Tree) -> Expression:
    """The documents that hold no word of a ranked side (Lucene's SHOULD clauses of that side match nothing)."""
    return {"not": {"or": [{"any": leaf} for leaf in leaves(tree)]}}


def _either(x: Expression | None, y: Expression | None) -> Expression | None:
    if x is None or y is None:
        return x if y is None else y
    return {"or": [x, y]}


_FILTERED: dict[type, type] = {}  # plan class -> its subclass that also carries ``exclude``


def filtered(plan, expression: Mapping | None):
    """``plan`` carrying its query's strict filter as ``plan.exclude`` (a subclass of the plan's own dataclass), which
    ``execute`` applies to every spec of the plan: the filter travels with the plan, so no caller of compose and
    execute can drop it; the plan itself without a filter."""
    if not expression:
        return plan
    base = unfiltered(plan).__class__
    cls = _FILTERED.get(base)
    if cls is None:
        cls = _FILTERED[base] = dataclasses.make_dataclass(
            f"Filtered{base.__name__}", [("exclude", dict, dataclasses.field(default=None))], bases=(base,))
    return cls(**{f.name: getattr(plan, f.name) for f in dataclasses.fields(base)}, exclude=dict(expression))


def unfiltered(plan):
    """The plan without its strict filter."""
    if type(plan) not in _FILTERED.values():
        return plan
    base = type(plan).__mro__[1]
    return base(**{f.name: getattr(plan, f.name) for f in dataclasses.fields(base)})


def plan_exclusion(plan) -> dict | None:
    """The strict filter a plan carries (None: none)."""
    return getattr(plan, "exclude", None)


def with_exclusion(spec: dict | None, expression: Mapping | None) -> dict | None:
    """A query spec that also removes the documents ``expression`` matches (the spec itself without one)."""
    if spec is None or not expression:
        return spec
    return {**spec, "exclude": dict(expression)}


def kept_candidates(candidates: Mapping[str, list[str]], exclude: Mapping[str, Mapping | None],
                    backend) -> dict[str, list[str]]:
    """Each query's extra candidates (the dense leg's own) without the documents its strict filter removes."""
    out = {}
    for qid, docs in candidates.items():
        expression = exclude.get(qid)
        out[qid] = docs if not expression or not docs else [
            d for d, gone in zip(docs, backend.excluded(expression, docs)) if not gone]
    return out


def written(expression: Mapping) -> str:
    """An expression in the explicit syntax, for explanations ('"hot dogs" OR cats')."""
    (op, value), = expression.items()
    if op == "text":
        return f'"{value}"' if " " in value.strip() else value
    if op == "any":
        return f"any word of {value!r}"
    if op == "not":
        return f"NOT {written(value)}"
    if len(value) == 1:
        return written(value[0])
    return "(" + f" {op.upper()} ".join(written(v) for v in value) + ")"
