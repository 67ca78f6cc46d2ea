"""QUEST-style set-compositional queries: load template queries with atomic parts, write a collection, evaluate.

QUEST (Malaviya et al. 2023) query files are JSONL rows ``{"query", "docs": [titles], "original_query",
"metadata": {"template", "domain", ...}}`` where ``original_query`` marks the atomic queries
(``<mark>Birds of Colombia</mark> that are also <mark>Birds of Venezuela</mark>``) and the template is
one of :data:`~scripts.negation.quest_queries.TEMPLATES`; the corpus is JSONL ``{"title", "text"}`` (a
document is named by its title).

``python -m scripts.negation.quest convert --queries test.jsonl --documents documents.jsonl --output-dir D``
writes ``D/corpus.jsonl`` (ids ``d1, d2, ...``; titles kept), ``D/compositions.jsonl`` (the trees, the
template text as ``text`` for vanilla, and the template), ``D/topics.tsv``, ``D/qrels.txt`` and
``D/titles.tsv``. Encode/index the corpus and search the compositions with ``lsr-lucene compose``;
``python -m scripts.negation.quest evaluate --collection D --run name=run ...`` reports NDCG@10 and R@100,
overall and per template (trec_eval through :mod:`lsr_lucene.eval.trec`).

``--queries irds:<dataset id>`` reads queries and qrels from ir_datasets instead; its query texts are
read as QUEST template texts (:func:`~scripts.negation.quest_queries.template_tree`), documents are then
ir_datasets' doc ids.
Queries without marks and without a known template (QUEST's augmented rows) are parsed with the cue
parser.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scripts.negation.quest_collection import convert, evaluate_runs, templates_of
from scripts.negation.quest_queries import read_irds_queries, read_quest_documents, read_quest_queries
from lsr_lucene.eval.trec import to_markdown


def _parse_run(spec: str) -> tuple[str, str]:
    name, sep, path = spec.partition("=")
    return (name, path) if sep else (Path(spec).stem, spec)


def main(argv: list[str] | None = None) -> int:
    """CLI: ``convert`` a QUEST-style query file (and corpus), or ``evaluate`` runs on a converted collection."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m scripts.negation.quest", description=__doc__.splitlines()[0])
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
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
