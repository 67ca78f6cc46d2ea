"""Deterministic cue parser: natural-language negated / exclusionary / conjunctive queries -> composition trees.

``lsr-lucene parse-negation [--explain] [--topics FILE] QUERY ...`` (also
``python -m lsr_lucene.compose.parse_negation``) prints each query's composition as a JSON line (or, with
``--explain``, the cues used and the tree). The parser itself is
:mod:`lsr_lucene.compose.negation_parser`; a query in the explicit syntax (:mod:`lsr_lucene.compose.query_syntax`)
is read by that syntax, as ``compose`` reads it.
"""
from __future__ import annotations

import json
import sys

from lsr_lucene import cli_options as opt
from lsr_lucene.compose.negation_parser import explain
from lsr_lucene.compose.query_syntax import read_query
from lsr_lucene.compose.tree import tree_to_json


def main(argv: list[str] | None = None) -> int:
    """CLI: print the parse of each query (``--explain``) or the JSON composition lines."""
    ap = opt.Parser(prog="lsr-lucene parse-negation", description=__doc__.splitlines()[0])
    ap.add_argument("queries", nargs="*", help="query texts (default: read --topics)")
    ap.add_argument("--topics", help="topics file (TSV, JSONL, ...) to parse")
    ap.add_argument("--explain", action="store_true", help="print cues and trees instead of JSON lines")
    args = ap.parse_args(argv)
    if not args.topics and not args.queries:
        ap.error("give query texts or --topics FILE")
    if args.topics and args.queries:
        ap.error("give query texts or --topics FILE, not both")
    if args.topics:
        from lsr_lucene.io.topics import read_topics

        items = list(read_topics(args.topics).items())
    else:
        items = [(str(i), q) for i, q in enumerate(args.queries, 1)]
    for qid, query in items:
        result = read_query(query, f"query {qid}")
        if args.explain:
            print(f"[{qid}] " + explain(result))
        else:
            print(json.dumps({"id": qid, "query": tree_to_json(result.tree), "text": query}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
