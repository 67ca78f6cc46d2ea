"""QUEST queries (Malaviya et al. 2023) as composition trees: the templates, marked atomic parts, and the readers.

A QUEST query row is ``{"query", "docs": [titles], "original_query", "metadata": {"template", ...}}`` where
``original_query`` marks the atomic queries (``<mark>Birds of Colombia</mark> that are also <mark>Birds of
Venezuela</mark>``) and the template is one of :data:`TEMPLATES`. Rows without marks are read as template
texts (:func:`template_tree`); rows without marks or template (QUEST's augmented rows) are parsed with the
cue parser. The corpus is JSONL ``{"title", "text"}`` (a document is named by its title).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from lsr_lucene.compose.negation_parser import parse
from lsr_lucene.compose.tree import Node, Tree
from lsr_lucene.errors import InputError

TEMPLATES = ("_", "_ or _", "_ or _ or _", "_ that are also _", "_ that are also both _ and _",
             "_ that are not _", "_ that are also _ but not _")
_MARK = re.compile(r"<mark>(.*?)</mark>", re.DOTALL)


def build_tree(template: str, parts: list[str], where: str = "query") -> Tree:
    """The composition tree of a QUEST template filled with its atomic parts."""
    need = template.count("_")
    if template not in TEMPLATES:
        raise InputError(f"{where}: unknown QUEST template {template!r}; expected one of {', '.join(TEMPLATES)}")
    parts = [" ".join(p.split()) for p in parts]
    if len(parts) != need or not all(parts):
        raise InputError(f"{where}: template {template!r} needs {need} non-empty atomic parts, got {len(parts)}")
    if template == "_":
        return parts[0]
    if template == "_ or _":
        return Node("or", parts[0], parts[1])
    if template == "_ or _ or _":
        return Node("or", Node("or", parts[0], parts[1]), parts[2])
    if template == "_ that are also _":
        return Node("and", parts[0], parts[1])
    if template == "_ that are also both _ and _":
        return Node("and", Node("and", parts[0], parts[1]), parts[2])
    if template == "_ that are not _":
        return Node("not", parts[0], parts[1])
    return Node("not", Node("and", parts[0], parts[1]), parts[2])  # _ that are also _ but not _


_TEMPLATE_PATTERNS = [  # unmarked template texts, most specific first
    ("_ that are also both _ and _", re.compile(r"^(.+?) that are also both (.+) and (.+)$")),
    ("_ that are also _ but not _", re.compile(r"^(.+?) that are also (.+) but not (.+)$")),
    ("_ that are also _", re.compile(r"^(.+?) that are also (.+)$")),
    ("_ that are not _", re.compile(r"^(.+?) that are not (.+)$")),
    ("_ or _ or _", re.compile(r"^(.+?) or (.+?) or (.+)$")),
    ("_ or _", re.compile(r"^(.+?) or (.+)$")),
]


def template_tree(text: str) -> tuple[str, Tree]:
    """(template, tree) of an unmarked QUEST template text; "_" and the text when nothing matches.

    Ambiguous when an atomic category itself contains " or " / " and "; marked texts are exact.
    """
    clean = " ".join(text.split())
    for template, pattern in _TEMPLATE_PATTERNS:
        match = pattern.match(clean)
        if match:
            return template, build_tree(template, list(match.groups()))
    return "_", clean


@dataclass
class QuestQuery:
    """One QUEST query: id, composition tree, template text, template, relevant document titles/ids."""

    qid: str
    tree: Tree
    text: str
    template: str
    relevant: list[str] = field(default_factory=list)
    paraphrase: str | None = None


def read_quest_queries(path: str | Path) -> list[QuestQuery]:
    """QUEST queries from a local JSONL file (ids: ``id`` field, else the line number)."""
    from lsr_lucene.io.output import open_jsonl

    out: list[QuestQuery] = []
    seen: set[str] = set()
    for line_no, obj in open_jsonl(path):
        where = f"{path}:{line_no}"
        qid = str(obj.get("id", line_no))
        if qid in seen:
            raise InputError(f"{where}: duplicate query id {qid!r}")
        seen.add(qid)
        docs = obj.get("docs") or []
        if not isinstance(docs, list) or not all(isinstance(d, str) for d in docs):
            raise InputError(f"{where}: \"docs\" must be a list of document titles")
        original = obj.get("original_query")
        template = (obj.get("metadata") or {}).get("template")
        paraphrase = obj.get("query")
        if original and template:
            parts = _MARK.findall(original)
            tree = build_tree(template, parts, where)
            text = " ".join(_MARK.sub(lambda m: m.group(1), original).split())
        elif original:
            text = " ".join(_MARK.sub(lambda m: m.group(1), original).split())
            template, tree = template_tree(text)
        elif isinstance(paraphrase, str) and paraphrase.strip():
            text = " ".join(paraphrase.split())
            result = parse(text)
            tree, template = (result.tree, "parsed") if result.composed else (text, "_")
        else:
            raise InputError(f"{where}: no \"original_query\" or \"query\" text")
        out.append(QuestQuery(qid, tree, text, template, list(docs), paraphrase))
    if not out:
        raise InputError(f"{path}: no queries")
    return out


def read_irds_queries(dataset_id: str) -> list[QuestQuery]:
    """Queries and qrels of an ir_datasets dataset, query texts read as QUEST template texts."""
    from lsr_lucene.io.corpus import load_irds

    dataset = load_irds(dataset_id, "queries")
    qrels: dict[str, list[str]] = {}
    if dataset.has_qrels():
        for qrel in dataset.qrels_iter():
            if qrel.relevance > 0:
                qrels.setdefault(str(qrel.query_id), []).append(str(qrel.doc_id))
    out = []
    for query in dataset.queries_iter():
        text = str(getattr(query, "text", None) or getattr(query, "title", ""))
        template, tree = template_tree(text)
        out.append(QuestQuery(str(query.query_id), tree, " ".join(text.split()), template,
                              qrels.get(str(query.query_id), [])))
    return out


def read_quest_documents(path: str | Path) -> Iterator[tuple[str, str]]:
    """(title, text) of the QUEST corpus JSONL ``{"title", "text"}``."""
    from lsr_lucene.io.output import open_jsonl

    for line_no, obj in open_jsonl(path):
        title = obj.get("title")
        if not isinstance(title, str) or not title.strip():
            raise InputError(f"{path}:{line_no}: document without a \"title\"")
        yield title, str(obj.get("text") or "")
