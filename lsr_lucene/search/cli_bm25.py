"""BM25 baselines (plain, RM3, SDM) with Anserini's default analyzer on the same corpus and topics.

``lsr-lucene bm25`` (also ``python -m lsr_lucene.search.cli_bm25``): builds the BM25 index when missing and
writes a run (``--output FILE``, ``-``: stdout; without ``--output``, the top hits of each query on screen);
the library is lsr_lucene.search.bm25. The index is a cache of the corpus (reused when built from the same one;
``--rebuild-index`` builds it again); ``--overwrite`` replaces the run file, as in every verb. Topics and output
are checked before the index is built.
"""
from __future__ import annotations

import sys

from lsr_lucene import cli_options as opt
from lsr_lucene.search import cli_output
from lsr_lucene.search.bm25 import B, K1, bm25_run, ensure_bm25_index


def main(argv: list[str] | None = None) -> int:
    parser = opt.Parser(prog="lsr-lucene bm25", description=__doc__.splitlines()[0])
    opt.add_index(parser, "BM25 index folder (built from --corpus when missing)")
    parser.add_argument("--corpus", help="corpus to index: JSONL, BEIR folder, TSV or ir_datasets id")
    queries = parser.add_mutually_exclusive_group()
    opt.add_topics(queries)
    queries.add_argument("--query", action="append", metavar="TEXT",
                         help="a query text (repeatable; ids 1, 2, ...), as search and compose take it")
    cli_output.add_output_and_hits(parser, "TREC run file to write (with --topics or --query)")
    opt.add_threads(parser, help="indexing and search threads")
    opt.add_number(parser, "--k1", kind=opt.NON_NEGATIVE_NUMBER, default=K1, help="BM25 k1")
    opt.add_number(parser, "--b", kind=opt.SHARE, default=B, help="BM25 b")
    expansion = parser.add_mutually_exclusive_group()
    expansion.add_argument("--rm3", action="store_true", help="RM3 query expansion (Anserini defaults)")
    expansion.add_argument("--sdm", action="store_true", help="Anserini's sequential dependence model query")
    opt.add_run_tag(parser)
    parser.add_argument("--rebuild-index", action="store_true",
                        help="build the index from --corpus again even if it exists (the index is a cache of the "
                             "corpus: --overwrite does not rebuild it)")
    opt.add_overwrite(parser, "replace an existing run file (without it, an existing --output is refused)")
    args = parser.parse_args(argv)
    if args.output and not (args.topics or args.query):
        parser.error("--output needs --topics or --query")
    topics = None
    if args.topics or args.query:  # every input checked before the index is built
        from lsr_lucene.search.cli import read_query_texts

        cli_output.resolve(args)
        topics = read_query_texts(args)
    ensure_bm25_index(args.corpus, args.index, threads=args.threads, rebuild=args.rebuild_index)
    if topics:
        with cli_output.run_target(args.output) as target:
            bm25_run(args.index, topics, target, hits=args.hits, threads=args.threads, k1=args.k1, b=args.b,
                     rm3=args.rm3, sdm=args.sdm, tag=args.run_tag, overwrite=args.overwrite)
            cli_output.show(target, args.output, args.index, args.hits, topics)
        if cli_output.to_file(args.output):
            print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
