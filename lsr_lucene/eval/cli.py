"""Evaluate TREC runs with trec_eval's measures (in process, pytrec_eval; no JVM): runs side by side.

``lsr-lucene eval --qrels qrels.txt --run bm25=runs/bm25.txt --run splade=runs/splade.txt`` prints a Markdown
table (rows = runs; columns nDCG@10, MAP, R@100, R@1000 by default, ``trec_eval -c``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lsr_lucene import cli_options as opt
from lsr_lucene.errors import InputError, LsrError
from lsr_lucene.eval.trec import DEFAULT_MEASURES, evaluate, read_qrels, table_paths, to_markdown, write_table
from lsr_lucene.io.output import refuse_existing
from lsr_lucene.io.runs import read_run


def _parse_run(spec: str) -> tuple[str, str]:
    name, sep, path = spec.partition("=")
    if sep and name and path:
        return name, path
    return Path(spec).stem, spec


def warn_unjudged(qrels: dict[str, dict[str, int]], qrels_path: str,
                  runs: dict[str, dict[str, dict[str, float]]]) -> None:
    """One warning line per run whose queries (or documents) the qrels do not judge (lsr_lucene.eval.judged)."""
    from lsr_lucene.eval.judged import judged_warnings, unanswered_warning

    for name, run in runs.items():
        for line in judged_warnings(qrels, run, name, qrels_path) + [unanswered_warning(qrels, run, name)]:
            if line:
                print(line, file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``lsr-lucene eval``."""
    parser = opt.Parser(prog="lsr-lucene eval", description=__doc__.splitlines()[0])
    parser.add_argument("--qrels", required=True, help="TREC qrels file (qid 0 docid gain)")
    parser.add_argument("--run", action="append", required=True, metavar="NAME=PATH",
                        help="a TREC run, optionally named (repeat for several runs)")
    parser.add_argument("--measures", nargs="+", default=list(DEFAULT_MEASURES),
                        help="trec_eval measures: ndcg_cut_10 ndcg_cut.10 nDCG@10 map recall_100 R@1000 P_10 "
                             f"recip_rank ... (comma lists ok; default: {' '.join(DEFAULT_MEASURES)})")
    parser.add_argument("--qids", metavar="FILE", default=None,
                        help="evaluate only these queries: one qid per line, or a topics file (TSV, JSONL, TREC)")
    parser.add_argument("--per-query", action="store_true", help="one row per (run, query) instead of means")
    opt.add_output(parser, "also write the table as STEM.csv and STEM.md", required=False, metavar="STEM")
    opt.add_overwrite(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Evaluate runs against qrels and print (and optionally write) the table."""
    args = build_parser().parse_args(argv)
    try:
        runs: dict[str, str] = {}
        for spec in args.run:
            name, path = _parse_run(spec)
            if name in runs:
                raise InputError(f"two runs named {name!r}; name them with NAME=PATH")
            runs[name] = path
        if args.output:  # refuse before spending time on trec_eval
            for path in table_paths(args.output):
                refuse_existing(path, args.overwrite)
        qrels = read_qrels(args.qrels)  # each file read once, for the measures and the unjudged warnings
        if args.qids:  # a topic subset: qrels and runs restricted to it
            from lsr_lucene.eval.judged import read_qids, subset

            qids = read_qids(args.qids)
            qrels = subset(qrels, qids, args.qids)
        loaded = {name: read_run(path) for name, path in runs.items()}
        if args.qids:
            keep = set(qids)
            loaded = {name: {q: hits for q, hits in run.items() if q in keep} for name, run in loaded.items()}
        table = evaluate(qrels, loaded, args.measures, per_query=args.per_query)
        sys.stdout.write(to_markdown(table))
        warn_unjudged(qrels, args.qrels, loaded)
        if args.output:
            for path in write_table(table, args.output, overwrite=args.overwrite):
                print(f"wrote {path}", file=sys.stderr)
    except LsrError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
