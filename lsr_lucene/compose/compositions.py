"""Composed queries as input: compositions from JSONL files, and from natural-language topics via the cue parser.

A compositions file has one JSON object a line, ``{"id", "query": {"op": "not", "a": "...", "b": "..."}, "text"?,
"exclude"?}`` (nesting allowed; a plain string ``query`` is one atomic query; ``text``, when given, is what
``vanilla`` encodes; ``exclude``, a strict filter as the explicit syntax's ``-word`` makes one: a word or phrase, a
list of them, or a filter expression of :mod:`lsr_lucene.search.text_filter`). Empty atomic texts, duplicate ids and
trees deeper than 32 levels are input errors naming the file and line.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from lsr_lucene.compose.tree import MAX_DEPTH, Tree, tree_from_json
from lsr_lucene.errors import InputError, json_problem


@dataclass
class Composition:
    """One composed query: id, tree, the original text (what ``vanilla`` encodes; None: templates) and the strict
    filter of its explicit exclusions (:mod:`lsr_lucene.compose.exclusion`; None: none)."""

    qid: str
    tree: Tree
    text: str | None = None
    exclude: dict | None = None


def read_compositions(path: str | Path) -> list[Composition]:
    """Compositions from JSONL ``{"id", "query": tree, "text"?}`` (InputError names file:line)."""
    path = Path(path)
    if not path.is_file():
        from lsr_lucene.io.corpus import missing

        raise missing(path)
    out: list[Composition] = []
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            where = f"{path}:{line_no}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{where}: malformed JSON ({json_problem(exc)})") from None
            except RecursionError:
                raise InputError(f"{where}: composition nested deeper than {MAX_DEPTH} levels") from None
            if not isinstance(obj, dict):
                raise InputError(f"{where}: expected a JSON object {{\"id\", \"query\"}}")
            qid = obj.get("id", obj.get("qid"))
            if qid is None or str(qid).strip() == "" or any(c.isspace() for c in str(qid)):
                raise InputError(f"{where}: missing or invalid id {qid!r} (a non-empty string without spaces)")
            qid = str(qid)
            if qid in seen:
                raise InputError(f"{where}: duplicate id {qid!r} (first at line {seen[qid]})")
            seen[qid] = line_no
            if "query" not in obj:
                raise InputError(f"{where}: query {qid}: no \"query\" field")
            tree = tree_from_json(obj["query"], f"{where}: query {qid}")
            text = obj.get("text")
            if text is not None and (not isinstance(text, str) or not text.strip()):
                raise InputError(f"{where}: query {qid}: \"text\" must be a non-empty string")
            out.append(Composition(qid, tree, text, _exclusion(obj, f"{where}: query {qid}")))
    if not out:
        raise InputError(f"{path}: no compositions (empty file?)")
    return out


def _exclusion(obj: Mapping, where: str) -> dict | None:
    """The strict filter a compositions line gives (``"exclude"``: a word, phrase, list of them or filter), or None."""
    if obj.get("exclude") is None:
        return None
    from lsr_lucene.compose.exclusion import read_exclusion

    return read_exclusion(obj["exclude"], where)


def parse_topics(topics: Mapping[str, str]) -> list[Composition]:
    """Compositions from text topics: the explicit query syntax where a topic opts in to it, else the cue parser
    (:func:`lsr_lucene.compose.query_syntax.read_query`; uncued topics stay atomic). A syntax topic keeps its not
    nodes, ranked as the natural-language exclusion ranks them (``A -B`` as "A but not B": the default's dense leg and
    penalty), and its exclusions are also strict: a filter that removes B's documents inside every search of the query
    (:func:`lsr_lucene.compose.exclusion.split_exclusions`), so the ranking is that of the collection without them."""
    from lsr_lucene.compose.exclusion import split_exclusions
    from lsr_lucene.compose.query_syntax import read_query, uses_syntax

    out = []
    for qid, text in topics.items():
        result = read_query(text, f"query {qid}")
        if uses_syntax(text):
            out.append(Composition(str(qid), result.tree, text, split_exclusions(result.tree)[1]))
        else:
            out.append(Composition(str(qid), result.tree if result.composed else text, text))
    return out
