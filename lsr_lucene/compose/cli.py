"""Search set-compositional and negated queries: encode atomic queries, combine them, search Lucene.

The zero-shot framework of Krasakis, Yates and Kanoulas (paper 000): each atomic query of a composition
tree (``not`` / ``and`` / ``or``, see :mod:`lsr_lucene.compose.operations`) is encoded by the sparse query
encoder, the vectors are combined with the selected linear algebra operation, quantised with the index's
scale and searched as one signed query (``SignedImpactQuery`` + ``CombinedTermQuery`` for CPT pairs) in
the JVM. ``fusion`` / ``fusion-scaled`` instead search each child separately: the top ``--fusion-depth``
documents of every fused leaf form the candidates, every leaf gets its exact score on every candidate
(from its own hits, else by exact scoring, unless its list is complete; a leaf that
does not match a candidate scores 0 there), the scores are fused (score(A) − λ·score(B), ·, +; min-max
normalised per child over the candidates for fusion-scaled; fusion-gated penalises only the documents whose
scaled B score is above ``--gate``) and the best ``--hits`` are written. Without ``--operation``, not nodes use
the documented `default` (fusion-gated, gate 0.9; with the index's dense embeddings ``<index>/dense``, the dense
cosine of A's text and each candidate's cosine with the best A match blended into A's scores and λ 0.7, else sparse
only and λ 1; docs/negation.md).

Queries come from a JSONL file (``{"id", "query": {"op": "not", "a": "...", "b": "..."}, "text"?}``,
nesting allowed; a plain string ``query`` is one atomic query; ``text``, when given, is what ``vanilla``
encodes), from a topics file or ``--query`` texts parsed with the cue parser
(:mod:`lsr_lucene.compose.negation_parser`) or, when a text opts in with an upper-case NOT/AND/OR or a ``-term``,
read by the explicit query syntax (:mod:`lsr_lucene.compose.query_syntax`: ``films -dogs -cats``, ``films NOT
(dogs OR cats)``, whose exclusions are strict: every document whose text contains dogs or cats is removed inside the
search; docs/negation.md), or from ``--composition`` JSON on the command line.

Encoder ablations (paper Table 3), applied to every encoded text: ``--no-expansion`` keeps only the
query's own WordPiece tokens with their learned weights; ``--no-term-weights`` gives each of the
query's own tokens weight 1 (special tokens excluded).

Documented behaviour: an empty atomic text is an input error naming the file, line and tree position;
a composed vector with no positive weight (e.g. ``subtract`` when B covers A) matches no document, so
that query gets no hits and a warning; trees deeper than 32 levels, unknown operations and operations
that do not fit a node type are input errors.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

from lsr_lucene import cli_options as opt
from lsr_lucene.compose.compositions import Composition, parse_topics, read_compositions
from lsr_lucene.compose.strict import filter_report
from lsr_lucene.compose.execute import DEFAULT_FUSION_DEPTH, composed_specs, require_single_specs
from lsr_lucene.compose.dense_leg import MissingDenseLegWarning, missing_note
from lsr_lucene.compose.explain import explain_docs, explain_query
from lsr_lucene.compose.query_syntax import read_query
from lsr_lucene.compose.operations import (DEFAULT_DENSE_WEIGHT, DEFAULT_GATE, DEFAULT_NEIGHBOUR_WEIGHT, DEFAULTS,
                                           DENSE_NOT_LAMBDA, OPERATIONS, plan_inputs, required_texts)
from lsr_lucene.compose.tree import MAX_DEPTH, NODE_OPS, has_not, tree_from_json
from lsr_lucene.errors import InputError, json_problem
from lsr_lucene.io.runs import write_run


def add_operation_arguments(parser: argparse.ArgumentParser) -> None:
    """Operation and encoder-ablation options of ``lsr-lucene compose``."""
    parser.add_argument("--operation", default=None, choices=OPERATIONS, metavar="NAME",
                        help=f"operation for every node type it applies to ({', '.join(OPERATIONS)}); other "
                             f"node types use the defaults: not: {DEFAULTS['not']} (gate {DEFAULT_GATE:g}, λ 1; "
                             f"with a dense leg λ {DENSE_NOT_LAMBDA:g}; "
                             f"the `default` of runs/compositional/transfer), and: {DEFAULTS['and']}, "
                             f"or: {DEFAULTS['or']}")
    for node_op in NODE_OPS:
        parser.add_argument(f"--{node_op}-op", default=None, metavar="NAME",
                            help=f"operation for {node_op!r} nodes (overrides --operation)")
    opt.add_number(parser, "--lam", kind=opt.NUMBER, default=None,
                        help="λ of nrf (default 0.5), orthonrf (0.3), adaptive (0.5), disentangled and fusion on not "
                             "nodes (default 1)")
    opt.add_number(parser, "--gate", kind=opt.SHARE, default=DEFAULT_GATE,
                        help=f"fusion-gated: share of B's scaled score below which nothing is penalised "
                             f"(default {DEFAULT_GATE:g})")
    parser.add_argument("--dense", default="auto", metavar="DIR|auto|none",
                        help="dense leg of fusion-gated not nodes: document embeddings of lsr-lucene dense encode "
                             "(default auto: <index>/dense when present, else none, with a one-line note)")
    opt.add_number(parser, "--dense-weight", kind=opt.NON_NEGATIVE_NUMBER, default=DEFAULT_DENSE_WEIGHT,
                   help="w of the dense leg: Â ← minmax(Â + w·minmax(dense cosine of A's text) + v·…); 0: off")
    opt.add_number(parser, "--neighbour-weight", kind=opt.NON_NEGATIVE_NUMBER, default=DEFAULT_NEIGHBOUR_WEIGHT,
                   help="v of the dense leg's neighbour term: v·minmax(dense cosine of each candidate with the best "
                        "A match, the top of Â + w·cos) joins the blend; 0: off")
    opt.add_number(parser, "--dense-depth", kind=opt.NON_NEGATIVE_INT, default=None, metavar="N",
                   help="the dense leg's own nearest documents to A's text that join a negated query's candidates "
                        "(default: --fusion-depth; 0: the splade legs' hits only); from the leg's approximate HNSW "
                        "index (index --dense builds it), else an exact scan of the embeddings (about 0.2 s a "
                        "query at 666k documents on 2 cores)")
    opt.add_number(parser, "--top-pairs", default=5, help="CPT: pairs kept per intersection")
    opt.add_number(parser, "--pair-weight", kind=opt.NON_NEGATIVE_NUMBER, default=1.0,
                   help="CPT: multiplier of pair weights")
    ablation = parser.add_mutually_exclusive_group()
    ablation.add_argument("--no-expansion", action="store_true",
                          help="query encoder ablation: keep only the query's own tokens (learned weights)")
    ablation.add_argument("--no-term-weights", action="store_true",
                          help="query encoder ablation: the query's own tokens with weight 1")


def searcher_from_args(args: argparse.Namespace):
    """The :class:`~lsr_lucene.compose.searcher.ComposeSearcher` the options describe (the command's code path)."""
    from lsr_lucene.compose.searcher import ComposeSearcher

    return ComposeSearcher(args.index, encoder=args.encoder, operation=args.operation, not_op=args.not_op,
                           and_op=args.and_op, or_op=args.or_op, depth=args.fusion_depth, lam=args.lam,
                           gate=args.gate, top_pairs=args.top_pairs, pair_weight=args.pair_weight,
                           no_expansion=args.no_expansion, no_term_weights=args.no_term_weights, scale=args.scale,
                           query_max_length=args.query_max_length, threads=args.threads, vectors=args.vectors,
                           dense=args.dense, dense_weight=args.dense_weight,
                           neighbour_weight=args.neighbour_weight, dense_depth=args.dense_depth)


def load_compositions(args: argparse.Namespace) -> tuple[list[Composition], dict[str, list[str]]]:
    """Compositions from --queries / --topics / --query / --composition, and parse reports for --explain."""
    if args.queries:
        return read_compositions(args.queries), {}
    if args.composition:
        comps = []
        for i, raw in enumerate(args.composition, 1):
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(f"--composition {i}: malformed JSON ({json_problem(exc)})") from None
            except RecursionError:
                raise InputError(f"--composition {i}: nested deeper than {MAX_DEPTH} levels") from None
            comps.append(Composition(str(i), tree_from_json(obj, f"--composition {i}")))
        return comps, {}
    if args.topics:
        from lsr_lucene.io.topics import read_topics

        topics = read_topics(args.topics)
    else:
        topics = {str(i): q for i, q in enumerate(args.query, 1)}
        for qid, text in topics.items():
            if not text.strip():
                raise InputError(f"--query {qid}: empty query")
    reports = {qid: read_query(text, f"query {qid}").decisions() for qid, text in topics.items()} if args.explain else {}
    return parse_topics(topics), reports


def build_parser() -> argparse.ArgumentParser:
    """Argument parser of ``lsr-lucene compose``."""
    from lsr_lucene.search.cli import add_search_arguments

    parser = opt.Parser(prog="lsr-lucene compose", description=__doc__.splitlines()[0])
    add_search_arguments(parser, tag="compose-<--operation, else the operation of not nodes>: "
                                     "compose-fusion-gated by default")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--queries", help="compositions JSONL {id, query: {op, a, b}, text?}")
    opt.add_topics(source, help="natural-language topics (TSV, JSONL, ...) parsed with the cue parser")
    source.add_argument("--query", action="append",
                        help="a natural-language query, or one in the explicit syntax ('films -dogs -cats', "
                             "'films NOT (dogs OR cats)': upper-case NOT/AND/OR or a -term opts in) (repeatable; "
                             "ids 1, 2, ...)")
    source.add_argument("--composition", action="append", help="a composition as JSON (repeatable)")
    add_operation_arguments(parser)
    opt.add_number(parser, "--fusion-depth", default=DEFAULT_FUSION_DEPTH,
                   help="fusion: hits per fused leaf that form the candidates")
    parser.add_argument("--vectors", default=None,
                        help="score by exact in-memory dot products over these document vectors instead of Lucene")
    parser.add_argument("--write-specs", default=None, metavar="FILE",
                        help="also write the composed query specs (JSONL), e.g. for Anserini's SearchCollection; a "
                             "score-fused query (the default on not nodes) has none and is refused before any work: "
                             "choose a vector operation, e.g. --not-op disentangled")
    parser.add_argument("--explain", action="store_true",
                        help="print each query's cue decisions, tree, composed representation and, per top "
                             "document, both legs' scores (raw, scaled), gate, penalty and fused score (vector "
                             "operations: each term's contribution)")
    opt.add_number(parser, "--explain-docs", kind=opt.NON_NEGATIVE_INT, default=3,
                   help="documents explained per query")
    return parser


def main(argv: list[str] | None = None) -> int:
    """CLI: compose, search and write a TREC run or show the top hits (through a ComposeSearcher: the Python API's
    code path)."""
    from lsr_lucene.io.output import refuse_existing
    from lsr_lucene.search import cli_output
    from lsr_lucene.search.impact import report_unanswered, warn_truncated

    args = build_parser().parse_args(argv)
    if not Path(args.index).is_dir():
        raise InputError(f"{args.index}: no such index directory")
    cli_output.resolve(args)
    if args.write_specs:
        refuse_existing(args.write_specs, args.overwrite, directory=False)
    with warnings.catch_warnings():  # the command says it in its own note line, when a query has a not node
        warnings.simplefilter("ignore", MissingDenseLegWarning)
        searcher = searcher_from_args(args)
    settings = searcher.settings
    comps, reports = load_compositions(args)
    if args.write_specs:  # before any work: a fused query has no single spec (one line naming what to choose)
        require_single_specs(comps, settings, "--write-specs")
    started = time.perf_counter()
    texts = dict.fromkeys(t for c in comps for t in required_texts(c.tree, settings, c.text))
    warn_truncated(searcher.query_encoder.encoder, list(texts), noun="query texts")  # said, not silent
    try:
        plans = searcher.plans(comps)
        print(f"composed {len(comps)} queries ({settings.describe()}; encoder {searcher.mode})", file=sys.stderr)
        if any(kind == "dense" for p in plans for kind, _ in plan_inputs(p)):
            print(f"  {searcher.dense_leg.describe()}", file=sys.stderr)
        elif searcher.dense_path is None and settings.not_is_default() and any(has_not(c.tree) for c in comps):
            print(missing_note(searcher.index_dir), file=sys.stderr)
        if args.write_specs:
            from lsr_lucene.search.specs import save_query_specs

            n = save_query_specs(composed_specs([c.qid for c in comps], plans, searcher.scale,
                                                {c.qid: c.exclude for c in comps}), args.write_specs, args.overwrite)
            print(f"wrote {args.write_specs} ({n} query specs)", file=sys.stderr)

        def warn(qid: str, why: str) -> None:
            print(f"warning: query {qid}: {why}; no hits", file=sys.stderr)

        traces: dict | None = {} if args.explain else None
        results = searcher.rank(comps, plans, args.hits, args.threads, warn, traces)
        if args.explain:
            for comp, plan in zip(comps, plans):
                docs = explain_docs(plan, results[comp.qid], searcher.backend, searcher.scale, args.explain_docs,
                                    (traces or {}).get(comp.qid))
                removed = filter_report(searcher, comp, results[comp.qid], max(args.explain_docs, 10))
                print("\n".join([explain_query(comp, plan, settings, docs, reports.get(comp.qid))]
                                + ["  " + line for line in removed]),
                      file=sys.stderr if args.output == cli_output.STDOUT else sys.stdout)
    finally:
        searcher.close()
    qids = [c.qid for c in comps]
    tag = args.run_tag or f"compose-{settings.op_for('not') if settings.operation is None else settings.operation}"
    missing = [q for q in qids if not results[q]]
    report_unanswered(missing, len(qids))
    with cli_output.run_target(args.output) as target:
        write_run(results, target, tag, args.overwrite)
        shown_texts = {c.qid: c.text for c in comps if c.text} if args.output is None else None
        cli_output.show(target, args.output, args.index, args.hits, shown_texts)
    if cli_output.to_file(args.output):
        print(f"wrote {args.output} ({len(qids) - len(missing)} of {len(qids)} queries with hits, "
              f"{time.perf_counter() - started:.1f}s)")
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
