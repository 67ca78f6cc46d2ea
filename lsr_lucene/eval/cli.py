"""Evaluate TREC runs with trec_eval's measures (in process, pytrec_eval; no JVM), or contrastive pairs: runs side by side.

``lsr-lucene eval --qrels qrels.txt --run bm25=runs/bm25.txt --run splade=runs/splade.txt`` prints a Markdown
table, lsr_lucene's own form (rows = runs; columns nDCG@10, MAP, R@100, R@1000 by default, averaged over every qrels
query as ``trec_eval -c``; ``--baseline bm25`` adds PyTerrier's +, - and paired t-test p-value columns against that
run).
``lsr-lucene eval [trec_eval's options] QRELS RUN`` is trec_eval: the trec_eval binary of Pyserini's Anserini jar
runs on these arguments (its default measures, ``-m all_trec``, ``-q``, ``-c``, ``-J``, ``-M N``, ``-l N``, repeated
``-m``), so the output is trec_eval's, byte for byte; QRELS or RUN may be ``-`` (stdin), a pipe or ``<(...)``
(lsr_lucene.eval.trec_eval_binary).
``lsr-lucene eval --contrastive PAIRS.jsonl --run RUN`` needs no qrels: ExcluIR-style pairs
(``{"id","query","pos_id","neg_id"}``: ExcluIR, BoolQuestions NOT) give R@1, ΔR@1, MRR@10, ΔMRR@10 and RR with its
ties; NevIR rows (``{"id","q1","doc1","q2","doc2"}``; run qids ``<id>/q1``, ``<id>/q2``, docids ``<id>/1``,
``<id>/2``) give pairwise accuracy with its categories too (:mod:`lsr_lucene.eval.contrastive`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lsr_lucene import cli_options as opt
from lsr_lucene.errors import InputError, LsrError
from lsr_lucene.eval.trec import (DEFAULT_MEASURES, evaluate, paired_tests, read_qrels, table_paths, to_markdown,
                                  trec_eval_lines, write_table)
from lsr_lucene.io.output import refuse_existing
from lsr_lucene.io.runs import iter_run, read_run


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


def contrastive(pairs: str, runs: dict[str, str], per_query: bool = False, missing_as_miss: bool = False):
    """(table, note on ties) of ``eval --contrastive``; a run lacking a query of ``pairs`` is one error naming
    the run, the query and its line in ``pairs`` (unless ``missing_as_miss``)."""
    from lsr_lucene.eval.contrastive import contrastive_table, missing_queries, required_qids, ties_note
    from lsr_lucene.eval.contrastive_metrics import read_contrastive

    kind, rows, lines = read_contrastive(pairs)
    loaded = {name: read_run(path) for name, path in runs.items()}
    wanted = {qid for qid, _ in required_qids(kind, rows, lines)}
    for name, run in loaded.items():
        missing = missing_queries(kind, rows, lines, run)
        if missing and not missing_as_miss:
            qid, line = missing[0]
            more = f" (and {len(missing) - 1} more of its {len(wanted)} queries)" if len(missing) > 1 else ""
            raise InputError(f"{runs[name]}: no line for query {qid} of {pairs}:{line}{more}; "
                             + ("NevIR qids are <id>/q1 and <id>/q2; " if kind == "nevir" else "")
                             + "--missing-as-miss counts such queries as misses")
        extra = len(set(run) - wanted)
        if extra:
            print(f"note: {runs[name]}: {extra} queries not in {pairs} are ignored", file=sys.stderr)
    return contrastive_table(kind, rows, loaded, per_query), ties_note(kind)


def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``lsr-lucene eval``."""
    parser = opt.Parser(prog="lsr-lucene eval", description=(
        "Evaluate TREC runs, in one of two forms. trec_eval's: lsr-lucene eval [trec_eval's options] QRELS RUN runs "
        "the trec_eval binary itself (its output, its default measures). lsr_lucene's table: --qrels QRELS --run "
        "A --run B prints runs side by side with the table's own defaults (nDCG@10 MAP R@100 R@1000, averaged "
        "over every qrels query as trec_eval -c). Or --contrastive PAIRS: contrastive metrics, no qrels."))
    parser.add_argument("files", nargs="*", metavar="QRELS RUN",
                        help="trec_eval's form: a qrels file and one run (either may be - for stdin, a pipe or "
                             "<(...)), evaluated by the trec_eval binary itself: its output, its default measures")
    trec = parser.add_argument_group("trec_eval's options (with QRELS RUN; as trec_eval -h describes them)")
    trec.add_argument("-q", dest="trec_per_query", action="store_true",
                      help="per-query lines before the 'all' lines")
    trec.add_argument("-c", dest="trec_complete", action="store_true",
                      help="average over every qrels query (a query the run lacks scores 0); the table always does")
    trec.add_argument("-m", "--measure", dest="trec_measures", action="append", default=None, metavar="MEASURE",
                      help="a trec_eval measure or set (repeatable: -m ndcg_cut.10 -m map, -m all_trec; "
                           "default: trec_eval's official set)")
    trec.add_argument("-J", dest="trec_judged_only", action="store_true",
                      help="evaluate over judged documents only (unjudged ones removed from the ranking)")
    opt.add_number(trec, "-M", kind=opt.POSITIVE_INT, dest="trec_max_retrieved", default=None, metavar="N",
                      help="use at most N documents per query")
    opt.add_number(trec, "-l", kind=opt.INTEGER, dest="trec_level", default=None, metavar="N",
                      help="minimum judgement counted relevant (default 1)")
    opt.add_number(trec, "-N", kind=opt.POSITIVE_INT, dest="trec_collection_size", default=None, metavar="N",
                      help="number of documents in the collection")
    trec.add_argument("-n", dest="trec_no_summary", action="store_true", help="no summary ('all') lines")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--qrels", help="lsr_lucene's table form: TREC qrels file (qid 0 docid gain)")
    source.add_argument("--contrastive", metavar="PAIRS.jsonl",
                        help="contrastive pairs instead of qrels: ExcluIR / BoolQuestions rows {id, query, pos_id, "
                             "neg_id} (qid = id) or NevIR rows {id, q1, doc1, q2, doc2} (qids <id>/q1, <id>/q2; "
                             "docids <id>/1, <id>/2): R@1, ΔR@1, MRR@10, ΔMRR@10, RR and ties (NevIR: pairwise "
                             "accuracy too)")
    parser.add_argument("--run", action="append", metavar="NAME=PATH",
                        help="a TREC run, optionally named (repeat for several runs)")
    parser.add_argument("--baseline", metavar="NAME",
                        help="--qrels table: per measure, the queries better (+) and worse (-) than this run and the "
                             "paired t-test p-value (scipy ttest_rel over every qrels query, as PyTerrier reports)")
    parser.add_argument("--missing-as-miss", action="store_true",
                        help="--contrastive: count queries without a run line as misses (default: an error; a "
                             "query with no hits has no line)")
    parser.add_argument("--measures", nargs="+", default=None,
                        help="trec_eval measures: ndcg_cut_10 ndcg_cut.10 nDCG@10 map recall_100 R@1000 P_10 "
                             f"recip_rank ... (comma lists ok; default: {' '.join(DEFAULT_MEASURES)})")
    parser.add_argument("--qids", metavar="FILE", default=None,
                        help="evaluate only these queries: one qid per line, or a topics file (TSV, JSONL, TREC)")
    parser.add_argument("--per-query", action="store_true", help="one row per (run, query) instead of means")
    opt.add_output(parser, "also write the table as STEM.csv and STEM.md", required=False, metavar="STEM")
    opt.add_overwrite(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Evaluate runs against qrels and print (and optionally write) the table, or print trec_eval's lines."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        measures = (args.measures or []) + (args.trec_measures or [])
        if args.files:
            return trec_eval_form(args, measures)
        given = [flag for flag, value in trec_flags(args) if value not in (None, False)]
        if given:
            raise InputError(f"{' '.join(given)}: trec_eval's options, for its form: lsr-lucene eval [-q] [-c] "
                             "[-m MEASURE] QRELS RUN")
        if not (args.qrels or args.contrastive) or not args.run:
            raise InputError("give --qrels QRELS (or --contrastive PAIRS) and --run NAME=PATH, or trec_eval's form "
                             "QRELS RUN")
        runs: dict[str, str] = {}
        for spec in args.run:
            name, path = _parse_run(spec)
            if name in runs:
                raise InputError(f"two runs named {name!r}; name them with NAME=PATH")
            runs[name] = path
        if args.output:  # refuse before spending time on trec_eval
            for table_path in table_paths(args.output):
                refuse_existing(table_path, args.overwrite)
        preamble = ""
        if args.contrastive:
            if measures or args.baseline:
                raise InputError("--measures, -m and --baseline apply to --qrels (trec_eval measures), not to "
                                 "--contrastive")
            table, preamble = contrastive(args.contrastive, runs, args.per_query, args.missing_as_miss)
        else:
            qrels = read_qrels(args.qrels)  # each file read once, for the measures and the unjudged warnings
            loaded = {name: read_run(path) for name, path in runs.items()}
            if args.qids:  # a topic subset: qrels and runs restricted to it
                from lsr_lucene.eval.judged import read_qids, subset

                qids = read_qids(args.qids)
                qrels = subset(qrels, qids, args.qids)
                keep = set(qids)
                loaded = {name: {q: hits for q, hits in run.items() if q in keep} for name, run in loaded.items()}
            table = evaluate(qrels, loaded, measures or DEFAULT_MEASURES, per_query=args.per_query)
            if args.baseline:
                if args.per_query:
                    raise InputError("--baseline compares the runs' means: leave out --per-query")
                tests = paired_tests(qrels, loaded, measures or DEFAULT_MEASURES, args.baseline)
                table = table.join(tests)
                preamble = (f"+ / -: queries above / below {args.baseline}; p-value: two-sided paired t-test over "
                            f"the {len(qrels)} qrels queries (scipy ttest_rel)\n\n")
        sys.stdout.write(preamble + to_markdown(table))
        if not args.contrastive:
            warn_unjudged(qrels, args.qrels, loaded)
        if args.output:
            for written in write_table(table, args.output, overwrite=args.overwrite, preamble=preamble):
                print(f"wrote {written}", file=sys.stderr)
    except LsrError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def trec_flags(args: argparse.Namespace) -> list[tuple[str, object]]:
    """(trec_eval flag, value given) of each trec_eval option but -m."""
    return [("-q", args.trec_per_query), ("-c", args.trec_complete), ("-J", args.trec_judged_only),
            ("-M", args.trec_max_retrieved), ("-l", args.trec_level), ("-N", args.trec_collection_size),
            ("-n", args.trec_no_summary)]


def trec_eval_options(args: argparse.Namespace, measures: list[str]) -> list[str]:
    """trec_eval's arguments before QRELS RUN: the flags given, then each -m in the order given (a friendly name
    such as nDCG@10 or ndcg_cut_10 becomes trec_eval's ndcg_cut.10; trec_eval's own names pass unchanged)."""
    from lsr_lucene.eval.trec import canonical_measure

    options: list[str] = []
    for flag, value in trec_flags(args):
        if value is True:
            options.append(flag)
        elif value is not None and value is not False:
            options += [flag, str(value)]
    for name in measures:
        base, param = canonical_measure(name)
        options += ["-m", f"{base}.{param}" if param is not None else base]
    return options


def trec_eval_form(args: argparse.Namespace, measures: list[str]) -> int:
    """``lsr-lucene eval [trec_eval's options] QRELS RUN``: trec_eval's own output on stdout (the binary of
    Anserini's jar; where this platform has none, pytrec_eval's lines for -m/-q/-c, said on stderr)."""
    from lsr_lucene.eval import trec_eval_binary

    if len(args.files) != 2:
        raise InputError(f"trec_eval's form takes a qrels file and one run (QRELS RUN), got {len(args.files)} "
                         "files; for several runs side by side: --qrels QRELS --run A --run B")
    mixed = [flag for flag, given in (("--qrels", args.qrels), ("--contrastive", args.contrastive),
                                      ("--run", args.run), ("--baseline", args.baseline), ("--output", args.output),
                                      ("--qids", args.qids), ("--per-query", args.per_query)) if given]
    if mixed:
        raise InputError(f"{', '.join(mixed)}: not with trec_eval's form QRELS RUN (use -q for per-query lines)")
    qrels_path, run_path = args.files
    if qrels_path == "-" and run_path == "-":
        raise InputError("QRELS and RUN cannot both be - (stdin): give one of them as a file")
    if trec_eval_binary.available():
        sys.stdout.write(trec_eval_binary.run(trec_eval_options(args, measures), qrels_path, run_path))
        return 0
    return _pytrec_eval_form(args, measures, qrels_path, run_path)


def _pytrec_eval_form(args: argparse.Namespace, measures: list[str], qrels_path: str, run_path: str) -> int:
    """trec_eval's lines from pytrec_eval (trec_eval's code in process) where no trec_eval binary runs here."""
    import tempfile

    from lsr_lucene.eval.trec_eval_binary import readable

    beyond = [flag for flag, value in trec_flags(args)[2:] if value not in (None, False)]
    if beyond:
        raise InputError(f"{' '.join(beyond)}: needs the trec_eval binary, which Anserini's jar lacks for this "
                         "platform (or Pyserini is not installed)")
    print(f"note: no trec_eval binary here: lines from pytrec_eval for {' '.join(measures or DEFAULT_MEASURES)}",
          file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="lsr-trec-eval-") as tmp:
        qrels_file = readable(qrels_path, "qrels", Path(tmp), sys.stdin.buffer)
        run_file = readable(run_path, "run", Path(tmp), sys.stdin.buffer)
        qrels, run = read_qrels(qrels_file), read_run(run_file)
        tag = next((row.tag for row in iter_run(run_file)), "")  # what trec_eval prints as runid
    lines = trec_eval_lines(qrels, run, measures or DEFAULT_MEASURES, args.trec_per_query, args.trec_complete, tag)
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
