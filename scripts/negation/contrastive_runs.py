"""The contrastive experiments as functions of plain parameters (``python -m scripts.negation.contrastive`` is
their command line): ExcluIR, NevIR, transfer across exclusion benchmarks, and operations on a collection."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Sequence

from lsr_lucene.compose.backends import ExactBackend, LuceneBackend
from lsr_lucene.compose.compositions import read_compositions
from lsr_lucene.compose.operations import Settings
from lsr_lucene.errors import InputError
from lsr_lucene.eval.contrastive_metrics import read_excluir, read_nevir
from lsr_lucene.eval.trec import table_paths, to_markdown, write_table
from scripts.negation.collection import collection_runs, root_operation_table, root_operations
from scripts.negation.contrastive_configs import (DEFAULT, MODES, NEGATION_OPS, Config, default_configs,
                                                        lambda_configs, make_encoders)
from scripts.negation.excluir import (RR_NOTE, cross_validate, ensure_index, excluir_lucene_check,
                                            excluir_runs, excluir_table, select, selection_table)
from scripts.negation.nevir import nevir_chart, nevir_documents, nevir_lucene_check, nevir_scores, nevir_table
from scripts.negation.parser_coverage import coverage_frame, excluir_coverage, nevir_coverage
from lsr_lucene.io.output import refuse_existing
from lsr_lucene.io.vectors import read_metadata


def split_name(dataset: str, path: str | Path) -> str:
    """Name of the evaluated split in table headings: the data set and the input file's stem ("ExcluIR dev")."""
    return f"{dataset} {Path(path).stem}"


def _write(df, stem: Path, overwrite: bool) -> None:
    has_rr = any("RR" in str(column) for column in df.columns)
    write_table(df, stem, overwrite=overwrite, preamble=RR_NOTE if has_rr else "")


def _refuse_existing_tables(out: Path, names: list[str], overwrite: bool) -> None:
    """Refuse before any work when a table (``name``) or chart (``name.png``) this run writes exists."""
    for name in names:
        for path in ([out / name] if name.endswith(".png") else table_paths(out / name)):
            refuse_existing(path, overwrite)


def _print_report(main, tables: dict, coverage: dict, check) -> None:
    """The operations table, the further ``{heading: table}``, the parser coverage and the Lucene check (if any)."""
    print(to_markdown(main))
    for heading, table in tables.items():
        print(f"## {heading}\n")
        print(to_markdown(table))
    print("## parser coverage\n")
    print(json.dumps(coverage, ensure_ascii=False, indent=1))
    if check is not None:
        print("\n## Lucene check\n")
        print(to_markdown(check))


def run_excluir(corpus: str | Path, queries: str | Path, work: str | Path, output_dir: str | Path,
                model: str = "splade-tiny", threads: int = 2, folds: int = 5, lucene: bool = False,
                overwrite: bool = False) -> int:
    """ExcluIR: every operation on ``queries`` over ``corpus`` (exact dot products; ``lucene`` also through a Lucene
    index), the λ sweep, parser coverage and the cross-validated selection, as tables in ``output_dir``."""
    from lsr_lucene.search.impact import index_settings

    rows = read_excluir(queries)
    split = Path(queries).stem
    name = split_name("ExcluIR", queries)
    out = Path(output_dir)
    _refuse_existing_tables(out, ["operations", "lambda", "parser_coverage", "selected"]
                            + (["lucene_check"] if lucene else []), overwrite)
    out.mkdir(parents=True, exist_ok=True)
    vectors, index = ensure_index(corpus, work, model, threads)
    scale = index_settings(index).get("scale") or 100
    encoders = make_encoders(model, MODES, threads=threads)
    print(f"loading {vectors} for exact scoring", file=sys.stderr)
    backend = ExactBackend(vectors)
    main_configs = default_configs()
    sweep = lambda_configs()
    runs = excluir_runs(rows, main_configs + [c for c in sweep if c not in main_configs], backend, encoders, scale)
    cov = excluir_coverage(rows, corpus)
    main = excluir_table({c.label: runs[c.label] for c in main_configs}, rows)
    lam = excluir_table({c.label: runs[c.label] for c in sweep}, rows)
    candidates = {c.label: runs[c.label] for c in [Config(op) for op in NEGATION_OPS if op != "vanilla"] + sweep}
    chosen = select(candidates, rows)
    cv = cross_validate(candidates, rows, folds)
    _write(main, out / "operations", overwrite)
    _write(lam, out / "lambda", overwrite)
    _write(coverage_frame(cov, name), out / "parser_coverage", overwrite)
    sel = selection_table(runs, rows, chosen, cv, split)
    _write(sel, out / "selected", overwrite)
    check = None
    if lucene:
        print("confirming through the Lucene index", file=sys.stderr)
        check = excluir_lucene_check(rows, [c for c in main_configs if c.mode == "full"], index, encoders, scale, main,
                                      threads)
        _write(check, out / "lucene_check", overwrite)
    print(f"## {name}: every operation (exact dot product, whole corpus)\n")
    _print_report(main, {"λ sweep": lam, "selected setting": sel}, cov, check)
    return 0


def run_transfer(data: Sequence[str | Path], work: str | Path, output_dir: str | Path, split: str = "dev",
                 model: str = "splade-tiny", threads: int = 2, folds: int = 5, overwrite: bool = False) -> int:
    """Every setting on several ExcluIR-layout benchmarks (folders in ``data``), the worst case and the selection
    table."""
    from lsr_lucene.compose.query_encoder import CachedQueryEncoder
    from scripts.negation.excluir import ensure_vectors
    from scripts.negation.transfer import (benchmark_name, benchmark_tables, cross_table, query_figures,
                                          selection_table, transfer_configs)

    folders = [Path(d) for d in data]
    benchmarks = {}
    for folder in folders:
        for name in ("corpus.jsonl", f"{split}.jsonl"):
            if not (folder / name).is_file():
                raise InputError(f"{folder / name}: no such file (a benchmark folder holds corpus.jsonl and "
                                 f"{split}.jsonl)")
        name = benchmark_name(folder, split)
        if name in benchmarks:
            raise InputError(f"{folder}: benchmark {name!r} given twice")
        benchmarks[name] = (folder, read_excluir(folder / f"{split}.jsonl"))
    slugs = {name: Path(folder).resolve().name for name, (folder, _) in benchmarks.items()}
    out = Path(output_dir)
    _refuse_existing_tables(out, ["transfer", "selection"] + [f"{s}/operations" for s in slugs.values()],
                            overwrite)
    configs = transfer_configs()
    base = make_encoders(model, ("full",), threads=threads)["full"]
    cache_path = Path(work) / f"query-vectors-{Path(model).name}.json"
    encoder = CachedQueryEncoder(base, read_query_cache(cache_path))
    runs, rows_by_bench = {}, {}
    for name, (folder, rows) in benchmarks.items():
        vectors = ensure_vectors(folder / "corpus.jsonl", Path(work) / slugs[name], model, threads)
        print(f"== {name}: {len(rows)} queries, {len(configs)} settings (vectors {vectors})", file=sys.stderr)
        scale = read_metadata(vectors).get("scale") or 100
        runs[name] = excluir_runs(rows, configs, ExactBackend(vectors), {"full": encoder}, scale)
        rows_by_bench[name] = rows
    write_query_cache(cache_path, encoder.cache)
    tables = benchmark_tables(runs, rows_by_bench)
    cross = cross_table(tables)
    labels = [c.label for c in configs if c.operation not in (DEFAULT, "vanilla")]
    figures = {name: query_figures(runs[name], rows) for name, rows in rows_by_bench.items()}
    sel = selection_table(figures, rows_by_bench, labels, folds)
    out.mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        (out / slugs[name]).mkdir(exist_ok=True)
        _write(df, out / slugs[name] / "operations", overwrite)
    _write(cross, out / "transfer", overwrite)
    _write(sel, out / "selection", overwrite)
    print(f"## every setting on {', '.join(benchmarks)} and the worst case (exact dot products, whole corpora)\n")
    print(to_markdown(cross))
    print(f"\n## selection (objective R@1 + ΔR@1 + RR; {folds}-fold CV)\n")
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


def run_nevir(data: str | Path, work: str | Path, output_dir: str | Path, model: str = "splade-tiny",
              threads: int = 2, lucene: bool = False, overwrite: bool = False) -> int:
    """NevIR: pairwise accuracy and error categories of every operation on the rows in ``data``."""
    from lsr_lucene.io.vectors import quantise

    rows = read_nevir(data)
    name = split_name("NevIR", data)
    out = Path(output_dir)
    _refuse_existing_tables(out, ["operations", "lambda", "categories.png", "parser_coverage"]
                            + (["lucene_check"] if lucene else []), overwrite)
    out.mkdir(parents=True, exist_ok=True)
    scale = 100
    encoders = make_encoders(model, MODES, threads=threads)
    docs = nevir_documents(rows)
    doc_vectors = encoders["full"].encoder.encode_documents([t for _, t in docs])
    backend = ExactBackend([(d, quantise(v, scale, d)) for (d, _), v in zip(docs, doc_vectors)])
    configs = default_configs() + [c for c in lambda_configs() if c.lam is not None]
    scores = nevir_scores(rows, configs, backend, encoders, scale)
    main_labels = [c.label for c in default_configs()]
    main = nevir_table({k: scores[k] for k in main_labels})
    lam = nevir_table({k: v for k, v in scores.items() if k not in main_labels})
    _write(main, out / "operations", overwrite)
    _write(lam, out / "lambda", overwrite)
    nevir_chart(main.loc[[c.label for c in default_configs(("full",))]], out / "categories.png", overwrite,
                title=f"{name}: outcome per operation")
    cov = nevir_coverage(rows)
    _write(coverage_frame(cov, name), out / "parser_coverage", overwrite)
    check = None
    if lucene:
        check = nevir_lucene_check(rows, docs, [c for c in default_configs(("full",))], encoders, scores,
                                   Path(work), threads)
        _write(check, out / "lucene_check", overwrite)
    print(f"## {name}: every operation (exact dot products of each row's two documents)\n")
    _print_report(main, {"λ sweep": lam}, cov, check)
    return 0


def run_collection(index: str | Path, queries: str | Path, qrels: str | Path, work: str | Path,
                   output_dir: str | Path, topics: str | Path | None = None, hits: int = 1000,
                   ablations: bool = False, model: str = "splade-tiny", threads: int = 2,
                   overwrite: bool = False) -> int:
    """Every operation on a compositions file (``queries``) with qrels, through Lucene."""
    from lsr_lucene.search.impact import index_settings

    comps = read_compositions(queries)
    if topics:
        from lsr_lucene.io.topics import read_topics

        texts = read_topics(topics)
        for comp in comps:
            comp.text = comp.text or texts.get(comp.qid)
    info = index_settings(index)
    scale = info.get("scale") or 100
    out, work = Path(output_dir), Path(work)
    _refuse_existing_tables(out, ["operations"], overwrite)
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    encoders = make_encoders(info.get("model") or model, MODES, threads=threads)
    kinds = root_operations(comps)
    backend = LuceneBackend(index, threads)
    try:
        modes = ("full", "no-expansion", "no-term-weights") if ablations else ("full",)
        runs = collection_runs(comps, modes, backend, encoders, scale, hits, work)
    finally:
        backend.close()
    df = root_operation_table(qrels, runs, kinds)
    counts = {kind: sum(k == kind for k in kinds.values()) for kind in ("not", "and", "or", "atomic")}
    _write(df, out / "operations", overwrite)
    print(f"## {queries}: queries by root operation {counts}; operations that do not apply to a node type "
          f"use the defaults ({Settings().describe()})\n")
    print(to_markdown(df))
    return 0


