"""Composition trees: atomic texts (leaves) joined by ``not`` / ``and`` / ``or`` nodes, their JSON form and renderings.

A composition is a binary tree whose leaves are atomic texts and whose nodes are ``not`` (set difference
A \\ B), ``and`` (intersection) or ``or`` (union) (Krasakis, Yates and Kanoulas, paper 000). Trees deeper
than :data:`MAX_DEPTH` levels, unknown node types and empty atomic texts are input errors naming the
place in the tree.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Union

from lsr_lucene.errors import InputError

NODE_OPS = ("not", "and", "or")
MAX_DEPTH = 32


@dataclass(frozen=True)
class Node:
    """One set operation of a composition: ``op`` in not/and/or applied to children ``a`` and ``b``."""

    op: str
    a: "Tree"
    b: "Tree"


Tree = Union[str, Node]

# what ``vanilla`` encodes for a node (QUEST's templates)
TEMPLATES = {"not": "{a} that are not {b}", "and": "{a} that are also {b}", "or": "{a} or {b}"}


def tree_from_json(obj, where: str = "query", depth: int = 1) -> Tree:
    """Validate a JSON composition (a string or ``{"op", "a", "b"}``, nested) and return its tree."""
    if depth > MAX_DEPTH:
        raise InputError(f"{where}: composition nested deeper than {MAX_DEPTH} levels")
    if isinstance(obj, str):
        text = " ".join(obj.split())
        if not text:
            raise InputError(f"{where}: empty atomic query")
        return text
    if not isinstance(obj, Mapping):
        raise InputError(f"{where}: expected a string or an object {{\"op\", \"a\", \"b\"}}, got {type(obj).__name__}")
    unknown = sorted(set(obj) - {"op", "a", "b"})
    if unknown:
        raise InputError(f"{where}: unexpected key(s) {', '.join(map(repr, unknown))}; a node has op, a, b")
    op = obj.get("op")
    if op not in NODE_OPS:
        raise InputError(f"{where}: unknown op {op!r}; expected one of {', '.join(NODE_OPS)}")
    for side in ("a", "b"):
        if side not in obj:
            raise InputError(f"{where}: {op!r} node lacks {side!r}")
    return Node(op, tree_from_json(obj["a"], f"{where}.a", depth + 1), tree_from_json(obj["b"], f"{where}.b", depth + 1))


def tree_to_json(tree: Tree):
    """The JSON form of a tree (inverse of :func:`tree_from_json`)."""
    if isinstance(tree, str):
        return tree
    return {"op": tree.op, "a": tree_to_json(tree.a), "b": tree_to_json(tree.b)}


def leaves(tree: Tree) -> list[str]:
    """Atomic texts of a tree, left to right."""
    return [tree] if isinstance(tree, str) else leaves(tree.a) + leaves(tree.b)


def has_not(tree: Tree) -> bool:
    """Whether a composition tree has a not node."""
    return isinstance(tree, Node) and (tree.op == "not" or has_not(tree.a) or has_not(tree.b))


def depth(tree: Tree) -> int:
    """Levels of a tree (an atomic text has depth 1)."""
    return 1 if isinstance(tree, str) else 1 + max(depth(tree.a), depth(tree.b))


def verbalize(tree: Tree) -> str:
    """One text for a (sub)composition, with the QUEST templates (what ``vanilla`` encodes)."""
    if isinstance(tree, str):
        return tree
    return TEMPLATES[tree.op].format(a=verbalize(tree.a), b=verbalize(tree.b))


def format_tree(tree: Tree, indent: str = "") -> str:
    """Indented multi-line rendering of a tree for ``--explain``."""
    if isinstance(tree, str):
        return f"{indent}{tree!r}"
    symbol = {"not": "NOT (A \\ B)", "and": "AND (A ∩ B)", "or": "OR (A ∪ B)"}[tree.op]
    lines = [f"{indent}{symbol}"]
    for label, child in (("A", tree.a), ("B", tree.b)):
        if isinstance(child, str):
            lines.append(f"{indent}  {label}: {child!r}")
        else:
            lines.append(f"{indent}  {label}:")
            lines.append(format_tree(child, indent + "    "))
    return "\n".join(lines)
