"""QUEST-style set-compositional queries: load template queries with atomic parts, write a collection, evaluate.

QUEST (Malaviya et al. 2023) query files are JSONL rows ``{"query", "docs": [titles], "original_query",
"metadata": {"template", "domain", ...}}`` where ``original_query`` marks the atomic queries
(``<mark>Birds of Colombia</mark> that are also <mark>Birds of Venezuela</mark>``) and the template is
one of :data:`TEMPLATES`; the corpus is JSONL ``{"title", "text"}`` (a document is named by its title).

``python -m lsr_lucene.quest convert --queries test.jsonl --documents documents.jsonl --output-dir D``
writes ``D/corpus.jsonl`` (ids ``d1, d2, ...``; titles kept), ``D/compositions.jsonl`` (the trees, the
template text as ``text`` for vanilla, and the template), ``D/topics.tsv``, ``D/qrels.txt`` and
``D/titles.tsv``. Encode/index the corpus and search the compositions with ``lsr-lucene compose``;
``python -m lsr_lucene.quest evaluate --collection D --run name=run ...`` reports NDCG@10 and R@100,
overall and per template (trec_eval through :mod:`lsr_lucene.eval`).

``--queries irds:<dataset id>`` reads queries and qrels from ir_datasets instead; its query texts are
read as QUEST template texts (:func:`template_tree`), documents are then ir_datasets' doc ids.
Queries without marks and without a known template (QUEST's augmented rows) are parsed with the cue
parser.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from .errors import InputError
from .operations import Node, Tree, tree_to_json

TEMPLATES = ("_", "_ or _", "_ or _ or _", "_ that are also _", "_ that are also both _ and _",
             "_ that are not _", "_ that are also _ but not _")
MEASURES = ("ndcg_cut_10", "recall_100")
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
    from .io_utils import open_jsonl
    from .parse_negation import parse

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
    from .corpus import load_irds

    dataset = load_irds(dataset_id, "queries")
    qrels: dict[str, list[str]] = {}
    if dataset.has_qrels():
        for qrel in dataset.qrels_iter():
            if qrel.relevance > 0:
                qrels.setdefault(str(qrel.query_id), []).append(str(qrel.doc_id))
    out = []
    for query in dataset.queries_iter():
        text = getattr(query, "text", None) or getattr(query, "title", "")
        template, tree = template_tree(text)
        out.append(QuestQuery(str(query.query_id), tree, " ".join(text.split()), template,
                              qrels.get(str(query.query_id), [])))
    return out


def read_quest_documents(path: str | Path) -> Iterator[tuple[str, str]]:
    """(title, text) of the QUEST corpus JSONL ``{"title", "text"}``."""
    from .io_utils import open_jsonl

    for line_no, obj in open_jsonl(path):
        title = obj.get("title")
        if not isinstance(title, str) or not title.strip():
            raise InputError(f"{path}:{line_no}: document without a \"title\"")
        yield title, str(obj.get("text") or "")


def convert(queries: list[QuestQuery], documents: Iterable[tuple[str, str]] | None, out_dir: str | Path,
            overwrite: bool = False) -> dict:
    """Write corpus.jsonl, compositions.jsonl, topics.tsv, qrels.txt and titles.tsv under ``out_dir``.

    With ``documents`` (titles, texts) documents get ids ``d1, d2, ...`` and relevant titles are mapped to
    them (titles missing from the corpus are counted and left out); without, relevant ids are used as given.
    """
    from .io_utils import atomic_output

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    title_id: dict[str, str] = {}
    if documents is not None:
        with atomic_output(out / "corpus.jsonl", overwrite) as tmp_c, atomic_output(out / "titles.tsv", overwrite) as tmp_t:
            with open(tmp_c, "w", encoding="utf-8") as corpus, open(tmp_t, "w", encoding="utf-8") as titles:
                for n, (title, text) in enumerate(documents, 1):
                    if title in title_id:
                        continue
                    doc_id = f"d{n}"
                    title_id[title] = doc_id
                    corpus.write(json.dumps({"id": doc_id, "title": title, "text": text}, ensure_ascii=False) + "\n")
                    titles.write(f"{doc_id}\t{title}\n")
    missing = 0
    with atomic_output(out / "compositions.jsonl", overwrite) as tmp_q, \
            atomic_output(out / "topics.tsv", overwrite) as tmp_t, atomic_output(out / "qrels.txt", overwrite) as tmp_r:
        with open(tmp_q, "w", encoding="utf-8") as comps, open(tmp_t, "w", encoding="utf-8") as topics, \
                open(tmp_r, "w", encoding="utf-8") as qrels:
            for q in queries:
                comps.write(json.dumps({"id": q.qid, "query": tree_to_json(q.tree), "text": q.text,
                                        "template": q.template}, ensure_ascii=False) + "\n")
                topics.write(f"{q.qid}\t{q.text}\n")
                for doc in q.relevant:
                    doc_id = title_id.get(doc) if documents is not None else doc
                    if doc_id is None:
                        missing += 1
                        continue
                    qrels.write(f"{q.qid} 0 {doc_id} 1\n")
    return {"queries": len(queries), "documents": len(title_id), "relevant titles not in corpus": missing}


def templates_of(compositions: str | Path) -> dict[str, str]:
    """qid -> template of a compositions.jsonl written by :func:`convert` ("_" when absent)."""
    from .io_utils import open_jsonl

    return {str(obj.get("id")): str(obj.get("template", "_")) for _, obj in open_jsonl(compositions)}


def evaluate_runs(qrels: str | Path, runs: dict[str, str | Path], templates: dict[str, str] | None = None):
    """NDCG@10 and R@100 per run: overall (trec_eval -c) and, given templates, the mean per template."""
    import pandas as pd

    from .eval import evaluate

    overall = evaluate(qrels, runs, MEASURES)
    if not templates:
        return overall, None
    per_query = evaluate(qrels, runs, MEASURES, per_query=True)
    frames = []
    for run_name in runs:
        rows = per_query.loc[run_name]
        rows = rows[rows.index.isin(list(templates))]
        grouped = rows.groupby(rows.index.map(lambda q: templates.get(q, "_"))).mean()
        grouped.index = pd.MultiIndex.from_tuples([(run_name, t) for t in grouped.index], names=["run", "template"])
        frames.append(grouped)
    return overall, pd.concat(frames)


def _parse_run(spec: str) -> tuple[str, str]:
    name, sep, path = spec.partition("=")
    return (name, path) if sep else (Path(spec).stem, spec)


def main(argv: list[str] | None = None) -> int:
    """CLI: ``convert`` a QUEST-style query file (and corpus), or ``evaluate`` runs on a converted collection."""
    parser = argparse.ArgumentParser(prog="python -m lsr_lucene.quest", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    conv = sub.add_parser("convert", help="QUEST JSONL (or irds:<id>) -> compositions, topics, qrels, corpus")
    conv.add_argument("--queries", required=True, help="QUEST query JSONL, or irds:<dataset id>")
    conv.add_argument("--documents", help="QUEST documents JSONL {title, text} (omit for irds: datasets)")
    conv.add_argument("--output-dir", required=True)
    conv.add_argument("--overwrite", action="store_true")
    ev = sub.add_parser("evaluate", help="NDCG@10 and R@100 of runs, overall and per template")
    ev.add_argument("--collection", required=True, help="directory written by convert (qrels.txt, compositions.jsonl)")
    ev.add_argument("--run", action="append", required=True, help="NAME=RUN or RUN (repeatable)")
    args = parser.parse_args(argv)
    from .eval import to_markdown

    if args.command == "convert":
        if args.queries.startswith("irds:"):
            queries = read_irds_queries(args.queries[len("irds:"):])
        else:
            queries = read_quest_queries(args.queries)
        docs = read_quest_documents(args.documents) if args.documents else None
        counts = convert(queries, docs, args.output_dir, args.overwrite)
        print(json.dumps(counts))
        return 0
    collection = Path(args.collection)
    runs = dict(_parse_run(spec) for spec in args.run)
    overall, per_template = evaluate_runs(collection / "qrels.txt", runs, templates_of(collection / "compositions.jsonl"))
    print(to_markdown(overall))
    if per_template is not None:
        print(to_markdown(per_template))
    return 0


if __name__ == "__main__":
    from .cli import run_main

    sys.exit(run_main(main))
