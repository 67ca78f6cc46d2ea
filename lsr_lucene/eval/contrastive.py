"""Contrastive negation sets for composed queries: NevIR pairwise accuracy and ExcluIR exclusion metrics.

``python -m lsr_lucene.eval.contrastive excluir --corpus C --queries dev.jsonl --work W --output-dir D`` and
``python -m lsr_lucene.eval.contrastive nevir --data dev.jsonl --work W --output-dir D`` evaluate every
set-difference operation (and the encoder ablations) on queries split by the cue parser
(:mod:`lsr_lucene.compose.negation_parser`); a query without a cue is searched as it is by every operation.

- ExcluIR: the corpus is encoded and indexed under ``--work`` (once); every query ranks the whole corpus
  by exact dot products of the quantised vectors (in memory; ``--lucene`` confirms the same figures
  through the Lucene index). Metrics (``lsr_lucene.eval.contrastive_metrics.excluir_metrics``): R@1, MRR@10, ΔR@1,
  ΔMRR@10 (positive minus negative document) and RR (share of queries ranking the positive above the
  negative). λ is chosen on dev alone: the table of the λ sweep is on dev, and the selection procedure
  (operation and λ maximising R@1 + ΔR@1 + RR) is also scored by k-fold cross-validation within dev,
  so the figure of the selected setting is measured on queries it was not chosen on.
- transfer: ``--data DIR`` repeated (ExcluIR layout: corpus.jsonl + dev.jsonl; e.g. ExcluIR and BoolQuestions
  NOT) runs every set-difference setting on every benchmark from cached vectors and writes one table per
  benchmark, one with a column group per benchmark and the worst case, and the selection table
  (:mod:`lsr_lucene.eval.transfer`).
- NevIR: each query scores its row's two documents (exact dot products, the NevIR protocol); pairwise
  accuracy and the error categories of ``lsr_lucene.eval.contrastive_metrics.nevir_pairwise_accuracy`` (prefers doc1 for
  both, prefers doc2 for both, reversed, tie), as a table and a PNG bar chart. ``--lucene`` indexes the
  dev documents as a small collection and checks that Lucene's scores give the same categories.
  ``fusion-scaled`` normalises over the two documents, so its scaled scores are 0 or 1 (many ties).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from lsr_lucene.compose.backends import ExactBackend, LuceneBackend
from lsr_lucene.compose.compositions import read_compositions
from lsr_lucene.compose.operations import Settings
from lsr_lucene.errors import InputError
from lsr_lucene.eval.collection import collection_runs, root_operation_table, root_operations
from lsr_lucene.eval.contrastive_configs import (DEFAULT, MODES, NEGATION_OPS, Config, default_configs,
                                                 lambda_configs, make_encoders)
from lsr_lucene.eval.contrastive_metrics import read_excluir, read_nevir
from lsr_lucene.eval.excluir import (cross_validate, ensure_index, excluir_lucene_check, excluir_runs, excluir_table,
                                     select, selection_table)
from lsr_lucene.eval.nevir import nevir_chart, nevir_documents, nevir_lucene_check, nevir_scores, nevir_table
from lsr_lucene.eval.parser_coverage import coverage_frame, excluir_coverage, nevir_coverage
from lsr_lucene.eval.trec import table_paths, to_markdown, write_table
from lsr_lucene.io.output import refuse_existing


def split_name(dataset: str, path: str | Path) -> str:
    """Name of the evaluated split in table headings: the data set and the input file's stem ("ExcluIR dev")."""
    return f"{dataset} {Path(path).stem}"


def _write(df, stem: Path, overwrite: bool) -> None:
    write_table(df, stem, overwrite=overwrite)


def _refuse_existing_tables(out: Path, names: list[str], overwrite: bool) -> None:
    """Refuse before any work when a table (``name``) or chart (``name.png``) this run writes exists."""
    for name in names:
        for path in ([out / name] if name.endswith(".png") else table_paths(out / name)):
            refuse_existing(path, overwrite)


def run_excluir(args: argparse.Namespace) -> int:
    """The ``excluir`` subcommand."""
    from lsr_lucene.search.impact import index_settings

    rows = read_excluir(args.queries)
    split = Path(args.queries).stem
    name = split_name("ExcluIR", args.queries)
    out = Path(args.output_dir)
    _refuse_existing_tables(out, ["operations", "lambda", "parser_coverage", "selected"]
                            + (["lucene_check"] if args.lucene else []), args.overwrite)
    out.mkdir(parents=True, exist_ok=True)
    vectors, index = ensure_index(args.corpus, args.work, args.model, args.threads)
    scale = index_settings(index).get("scale") or 100
    encoders = make_encoders(args.model, MODES, threads=args.threads)
    print(f"loading {vectors} for exact scoring", file=sys.stderr)
    backend = ExactBackend(vectors)
    main_configs = default_configs()
    sweep = lambda_configs()
    runs = excluir_runs(rows, main_configs + [c for c in sweep if c not in main_configs], backend, encoders, scale)
    cov = excluir_coverage(rows, args.corpus)
    main = excluir_table({c.label: runs[c.label] for c in main_configs}, rows)
    lam = excluir_table({c.label: runs[c.label] for c in sweep}, rows)
    candidates = {c.label: runs[c.label] for c in [Config(op) for op in NEGATION_OPS if op != "vanilla"] + sweep}
    chosen = select(candidates, rows)
    cv = cross_validate(candidates, rows, args.folds)
    _write(main, out / "operations", args.overwrite)
    _write(lam, out / "lambda", args.overwrite)
    _write(coverage_frame(cov, name), out / "parser_coverage", args.overwrite)
    sel = selection_table(runs, rows, chosen, cv, split)
    _write(sel, out / "selected", args.overwrite)
    lucene = None
    if args.lucene:
        print("confirming through the Lucene index", file=sys.stderr)
        lucene = excluir_lucene_check(rows, [c for c in main_configs if c.mode == "full"], index, encoders, scale, main,
                                      args.threads)
        _write(lucene, out / "lucene_check", args.overwrite)
    print(f"## {name}: every operation (exact dot product, whole corpus)\n")
    print(to_markdown(main))
    print("## λ sweep\n")
    print(to_markdown(lam))
    print("## selected setting\n")
    print(to_markdown(sel))
    print("## parser coverage\n")
    print(json.dumps(cov, ensure_ascii=False, indent=1))
    if lucene is not None:
        print("\n## Lucene check\n")
        print(to_markdown(lucene))
    return 0


def run_transfer(args: argparse.Namespace) -> int:
    """The ``transfer`` subcommand: every setting on several benchmarks, the worst case and the selection table."""
    from lsr_lucene.compose.query_encoder import CachedQueryEncoder
    from lsr_lucene.eval.excluir import ensure_vectors
    from lsr_lucene.eval.transfer import (benchmark_name, benchmark_tables, cross_table, query_figures,
                                          selection_table, transfer_configs)

    folders = [Path(d) for d in args.data]
    benchmarks = {}
    for folder in folders:
        for name in ("corpus.jsonl", f"{args.split}.jsonl"):
            if not (folder / name).is_file():
                raise InputError(f"{folder / name}: no such file (a benchmark folder holds corpus.jsonl and "
                                 f"{args.split}.jsonl)")
        name = benchmark_name(folder, args.split)
        if name in benchmarks:
            raise InputError(f"{folder}: benchmark {name!r} given twice")
        benchmarks[name] = (folder, read_excluir(folder / f"{args.split}.jsonl"))
    slugs = {name: Path(folder).resolve().name for name, (folder, _) in benchmarks.items()}
    out = Path(args.output_dir)
    _refuse_existing_tables(out, ["transfer", "selection"] + [f"{s}/operations" for s in slugs.values()],
                            args.overwrite)
    configs = transfer_configs()
    base = make_encoders(args.model, ("full",), threads=args.threads)["full"]
    cache_path = Path(args.work) / f"query-vectors-{Path(args.model).name}.json"
    encoder = CachedQueryEncoder(base, read_query_cache(cache_path))
    runs, rows_by_bench = {}, {}
    for name, (folder, rows) in benchmarks.items():
        vectors = ensure_vectors(folder / "corpus.jsonl", Path(args.work) / slugs[name], args.model, args.threads)
        print(f"== {name}: {len(rows)} queries, {len(configs)} settings (vectors {vectors})", file=sys.stderr)
        scale = json.loads((vectors / "metadata.json").read_text()).get("scale") or 100
        runs[name] = excluir_runs(rows, configs, ExactBackend(vectors), {"full": encoder}, scale)
        rows_by_bench[name] = rows
    write_query_cache(cache_path, encoder.cache)
    tables = benchmark_tables(runs, rows_by_bench)
    cross = cross_table(tables)
    labels = [c.label for c in configs if c.operation not in (DEFAULT, "vanilla")]
    figures = {name: query_figures(runs[name], rows) for name, rows in rows_by_bench.items()}
    sel = selection_table(figures, rows_by_bench, labels, args.folds)
    out.mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        (out / slugs[name]).mkdir(exist_ok=True)
        _write(df, out / slugs[name] / "operations", args.overwrite)
    _write(cross, out / "transfer", args.overwrite)
    _write(sel, out / "selection", args.overwrite)
    print(f"## every setting on {', '.join(benchmarks)} and the worst case (exact dot products, whole corpora)\n")
    print(to_markdown(cross))
    print(f"\n## selection (objective R@1 + ΔR@1 + RR; {args.folds}-fold CV)\n")
    print(to_markdown(sel))
    return 0


def read_query_cache(path: Path) -> dict:
    """Query vectors encoded by an earlier run (``{text: vector}``), or nothing."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def write_query_cache(path: Path, cache: dict) -> None:
    """Keep the encoded query vectors for the next run (the work directory is a cache, so it is replaced)."""
    from lsr_lucene.io.output import write_text_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(cache, ensure_ascii=False))


def run_nevir(args: argparse.Namespace) -> int:
    """The ``nevir`` subcommand."""
    from lsr_lucene.io.vectors import quantise

    rows = read_nevir(args.data)
    name = split_name("NevIR", args.data)
    out = Path(args.output_dir)
    _refuse_existing_tables(out, ["operations", "lambda", "categories.png", "parser_coverage"]
                            + (["lucene_check"] if args.lucene else []), args.overwrite)
    out.mkdir(parents=True, exist_ok=True)
    scale = 100
    encoders = make_encoders(args.model, MODES, threads=args.threads)
    docs = nevir_documents(rows)
    doc_vectors = encoders["full"].encoder.encode_documents([t for _, t in docs])
    backend = ExactBackend([(d, quantise(v, scale, d)) for (d, _), v in zip(docs, doc_vectors)])
    configs = default_configs() + [c for c in lambda_configs() if c.lam is not None]
    scores = nevir_scores(rows, configs, backend, encoders, scale)
    main_labels = [c.label for c in default_configs()]
    main = nevir_table({k: scores[k] for k in main_labels})
    lam = nevir_table({k: v for k, v in scores.items() if k not in main_labels})
    _write(main, out / "operations", args.overwrite)
    _write(lam, out / "lambda", args.overwrite)
    nevir_chart(main.loc[[c.label for c in default_configs(("full",))]], out / "categories.png", args.overwrite,
                title=f"{name}: outcome per operation")
    cov = nevir_coverage(rows)
    _write(coverage_frame(cov, name), out / "parser_coverage", args.overwrite)
    check = None
    if args.lucene:
        check = nevir_lucene_check(rows, docs, [c for c in default_configs(("full",))], encoders, scores,
                                   Path(args.work), args.threads)
        _write(check, out / "lucene_check", args.overwrite)
    print(f"## {name}: every operation (exact dot products of each row's two documents)\n")
    print(to_markdown(main))
    print("## λ sweep\n")
    print(to_markdown(lam))
    print("## parser coverage\n")
    print(json.dumps(cov, ensure_ascii=False, indent=1))
    if check is not None:
        print("\n## Lucene check\n")
        print(to_markdown(check))
    return 0


def run_collection(args: argparse.Namespace) -> int:
    """The ``collection`` subcommand: every operation on a compositions file with qrels, through Lucene."""
    from lsr_lucene.search.impact import index_settings

    comps = read_compositions(args.queries)
    if args.topics:
        from lsr_lucene.io.topics import read_topics

        texts = read_topics(args.topics)
        for comp in comps:
            comp.text = comp.text or texts.get(comp.qid)
    info = index_settings(args.index)
    scale = info.get("scale") or 100
    out, work = Path(args.output_dir), Path(args.work)
    _refuse_existing_tables(out, ["operations"], args.overwrite)
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    encoders = make_encoders(info.get("model") or args.model, MODES, threads=args.threads)
    kinds = root_operations(comps)
    backend = LuceneBackend(args.index, args.threads)
    try:
        modes = ("full", "no-expansion", "no-term-weights") if args.ablations else ("full",)
        runs = collection_runs(comps, modes, backend, encoders, scale, args.hits, work)
    finally:
        backend.close()
    df = root_operation_table(args.qrels, runs, kinds)
    counts = {kind: sum(k == kind for k in kinds.values()) for kind in ("not", "and", "or", "atomic")}
    _write(df, out / "operations", args.overwrite)
    print(f"## {args.queries}: queries by root operation {counts}; operations that do not apply to a node type "
          f"use the defaults ({Settings().describe()})\n")
    print(to_markdown(df))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``python -m lsr_lucene.eval.contrastive``."""
    parser = argparse.ArgumentParser(prog="python -m lsr_lucene.eval.contrastive", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("excluir", help="ExcluIR: R@1, MRR@10, ΔR@1, ΔMRR@10, RR per operation")
    ex.add_argument("--corpus", required=True, help="ExcluIR corpus.jsonl")
    ex.add_argument("--queries", required=True, help="ExcluIR rows {id, query, pos_id, neg_id} (JSONL)")
    ex.add_argument("--work", required=True, help="directory for the corpus vectors and index (made once)")
    ex.add_argument("--folds", type=int, default=5, help="cross-validation folds of the λ/operation selection")
    ex.add_argument("--lucene", action="store_true", help="also run the full-encoder operations through Lucene")
    nv = sub.add_parser("nevir", help="NevIR: pairwise accuracy and error categories per operation")
    nv.add_argument("--data", required=True, help="NevIR rows {id, q1, doc1, q2, doc2} (JSONL)")
    nv.add_argument("--work", required=True, help="directory for the small Lucene collection of --lucene")
    nv.add_argument("--lucene", action="store_true", help="check the exact scores through a Lucene index")
    tr = sub.add_parser("transfer", help="several ExcluIR-layout benchmarks: every setting, worst case, selection")
    tr.add_argument("--data", action="append", required=True,
                    help="benchmark folder with corpus.jsonl and <split>.jsonl (repeatable: one per benchmark)")
    tr.add_argument("--split", default="dev", help="query file of every benchmark: <split>.jsonl (default dev)")
    tr.add_argument("--work", required=True, help="directory for the corpora's vectors (<work>/<folder>/vectors)")
    tr.add_argument("--folds", type=int, default=5, help="cross-validation folds within each benchmark")
    co = sub.add_parser("collection", help="every operation on compositions + qrels through Lucene (nDCG@10, R@100)")
    co.add_argument("--index", required=True, help="impact index of the collection")
    co.add_argument("--queries", required=True, help="compositions JSONL")
    co.add_argument("--topics", help="natural-language topics with the same ids (what vanilla encodes)")
    co.add_argument("--qrels", required=True)
    co.add_argument("--work", required=True, help="directory for the run files")
    co.add_argument("--hits", type=int, default=1000)
    co.add_argument("--ablations", action="store_true", help="also the no-expansion / no-term-weights encoders")
    for p in (ex, nv, tr, co):
        p.add_argument("--output-dir", required=True, help="tables (.md/.csv) and charts go here")
        p.add_argument("--model", default="splade-tiny")
        p.add_argument("--threads", type=int, default=2)
        p.add_argument("--overwrite", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    args = build_parser().parse_args(argv)
    return {"excluir": run_excluir, "nevir": run_nevir, "transfer": run_transfer,
            "collection": run_collection}[args.command](args)


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
