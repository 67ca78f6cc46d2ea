"""Contrastive negation sets for composed queries: NevIR pairwise accuracy and ExcluIR exclusion metrics.

``python -m lsr_lucene.contrastive excluir --corpus C --queries dev.jsonl --work W --output-dir D`` and
``python -m lsr_lucene.contrastive nevir --data dev.jsonl --work W --output-dir D`` evaluate every
set-difference operation (and the encoder ablations) on queries split by the cue parser
(:mod:`lsr_lucene.parse_negation`); a query without a cue is searched as it is by every operation.

- ExcluIR: the corpus is encoded and indexed under ``--work`` (once); every query ranks the whole corpus
  by exact dot products of the quantised vectors (in memory; ``--lucene`` confirms the same figures
  through the Lucene index). Metrics (``lsr_lucene.eval.excluir_metrics``): R@1, MRR@10, ΔR@1,
  ΔMRR@10 (positive minus negative document) and RR (share of queries ranking the positive above the
  negative). λ is chosen on dev alone: the table of the λ sweep is on dev, and the selection procedure
  (operation and λ maximising R@1 + ΔR@1 + RR) is also scored by k-fold cross-validation within dev,
  so the figure of the selected setting is measured on queries it was not chosen on.
- NevIR: each query scores its row's two documents (exact dot products, the NevIR protocol); pairwise
  accuracy and the error categories of ``lsr_lucene.eval.nevir_pairwise_accuracy`` (prefers doc1 for
  both, prefers doc2 for both, reversed, tie), as a table and a PNG bar chart. ``--lucene`` indexes the
  dev documents as a small collection and checks that Lucene's scores give the same categories.
  ``fusion-scaled`` normalises over the two documents, so its scaled scores are 0 or 1 (many ties).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from .compose import (Composition, ExactBackend, LuceneBackend, QueryEncoder, compose, execute, make_spec,
                      parse_topics)
from .errors import InputError
from .operations import Plan, Settings, VectorPlan, fuse, plan_vectors

NEGATION_OPS = ("vanilla", "ignore", "subtract", "nrf", "orthogonal", "disentangled", "fusion", "fusion-scaled")
LAMBDA_OPS = ("nrf", "disentangled", "fusion", "fusion-scaled")
LAMBDA_GRID = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
MODES = ("full", "no-expansion", "no-term-weights")
EXCLUIR_COLUMNS = ("R@1", "MRR@10", "ΔR@1", "ΔMRR@10", "RR")


@dataclass(frozen=True)
class Config:
    """One evaluated setting: operation on ``not`` nodes, its λ (None: default) and the encoder mode."""

    operation: str
    lam: float | None = None
    mode: str = "full"

    @property
    def label(self) -> str:
        """Row label, e.g. ``disentangled λ=0.3 [no-expansion]``."""
        text = self.operation + (f" λ={self.lam:g}" if self.lam is not None else "")
        return text + (f" [{self.mode}]" if self.mode != "full" else "")

    def settings(self) -> Settings:
        """Compose settings of this configuration."""
        return Settings(self.operation, lam=self.lam)


def default_configs(modes: Sequence[str] = MODES) -> list[Config]:
    """Every negation operation at its default settings, for each encoder mode."""
    return [Config(op, None, mode) for mode in modes for op in NEGATION_OPS]


def lambda_configs(grid: Sequence[float] = LAMBDA_GRID) -> list[Config]:
    """The λ sweep of the operations that have a λ (full encoder)."""
    return [Config(op, lam) for op in LAMBDA_OPS for lam in grid]


def make_encoders(model: str, modes: Sequence[str], threads: int | None = None, **options) -> dict[str, QueryEncoder]:
    """One QueryEncoder per mode, sharing one loaded model."""
    base = QueryEncoder(model, "full", threads=threads, **options)
    return {mode: QueryEncoder(mode=mode, encoder=base.encoder) for mode in modes}


# ---------------------------------------------------------------------------------------------- ExcluIR
def ensure_index(corpus: str | Path, work: str | Path, model: str = "splade-tiny", threads: int = 2,
                 max_length: int = 512) -> tuple[Path, Path]:
    """Encode and index ``corpus`` under ``work`` (vectors/, index/) unless already there; returns both paths."""
    from .corpus import count_docs, read_corpus
    from .encode import SparseEncoder
    from .index import build_impact_index
    from .vectors import write_vectors

    work = Path(work)
    vectors, index = work / "vectors", work / "index"
    if not (vectors / "metadata.json").is_file():
        encoder = SparseEncoder(model=model, max_length=max_length, threads=threads)
        write_vectors(read_corpus(corpus), encoder, vectors, total=count_docs(corpus), source=str(corpus))
    if not index.is_dir():
        build_impact_index(vectors, index, threads=threads)
    return vectors, index


def excluir_runs(rows: Sequence[Mapping], configs: Sequence[Config], backend, encoders: Mapping[str, QueryEncoder],
                 scale: float, hits: int = 1000, progress: bool = True) -> dict[str, dict[str, dict[str, float]]]:
    """Run ``{label: {qid: {doc: score}}}`` of every configuration over the parsed ExcluIR queries."""
    comps = parse_topics({str(r["id"]): str(r["query"]) for r in rows})
    qids = [c.qid for c in comps]
    runs = {}
    for config in configs:
        started = time.perf_counter()
        plans = compose(comps, config.settings(), encoders[config.mode])
        results = execute(qids, plans, backend, scale, hits)
        runs[config.label] = {q: dict(r) for q, r in results.items()}
        if progress:
            print(f"  {config.label}: {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return runs


def excluir_table(runs: Mapping[str, Mapping], rows: Sequence[Mapping]):
    """DataFrame: one row per configuration, columns R@1, MRR@10, ΔR@1, ΔMRR@10, RR."""
    import pandas as pd

    from .eval import excluir_metrics

    data = {label: {k: excluir_metrics(run, rows)[k] for k in EXCLUIR_COLUMNS} for label, run in runs.items()}
    df = pd.DataFrame.from_dict(data, orient="index")
    df.index.name = "operation"
    return df


def objective(metrics: Mapping[str, float]) -> float:
    """Selection objective on dev: R@1 + ΔR@1 + RR (all three figures the issue asks for, equally weighted)."""
    return metrics["R@1"] + metrics["ΔR@1"] + metrics["RR"]


def select(runs: Mapping[str, Mapping], rows: Sequence[Mapping]) -> str:
    """Label of the configuration with the best objective on ``rows`` (ties: first in order)."""
    from .eval import excluir_metrics

    best, best_value = None, -float("inf")
    for label, run in runs.items():
        value = objective(excluir_metrics(run, rows))
        if value > best_value + 1e-12:
            best, best_value = label, value
    return best


def cross_validate(runs: Mapping[str, Mapping], rows: Sequence[Mapping], folds: int = 5) -> dict:
    """k-fold cross-validation of :func:`select` within dev: choose on k−1 folds, score the held-out fold.

    Folds are fixed by row order (row i goes to fold i mod k). Returns the held-out metrics (query-weighted
    over folds) and the label chosen for each fold.
    """
    from .eval import excluir_metrics

    if folds < 2 or folds > len(rows):
        raise InputError(f"folds must be between 2 and the number of queries, got {folds}")
    sums = dict.fromkeys(EXCLUIR_COLUMNS, 0.0)
    chosen = []
    for k in range(folds):
        train = [r for i, r in enumerate(rows) if i % folds != k]
        test = [r for i, r in enumerate(rows) if i % folds == k]
        label = select(runs, train)
        chosen.append(label)
        metrics = excluir_metrics(runs[label], test)
        for key in EXCLUIR_COLUMNS:
            sums[key] += metrics[key] * len(test)
    return {"metrics": {k: v / len(rows) for k, v in sums.items()}, "chosen": chosen, "folds": folds}


def _title_words(title: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", title.lower()) if len(w) > 2 and w not in {"the", "and", "film", "album"}}


def excluir_coverage(rows: Sequence[Mapping], corpus: str | Path | None = None) -> dict:
    """Parser coverage on ExcluIR queries; with the corpus also how often B names the negative document.

    ``B names neg`` counts parsed queries whose B shares a word (3+ letters) with the negative document's
    title; ``B names pos`` the same for the positive document (a wrong split).
    """
    from .parse_negation import coverage, parse

    cov = coverage(str(r["query"]) for r in rows)
    if corpus is not None:
        from .corpus import read_corpus

        wanted = {str(r["neg_id"]) for r in rows} | {str(r["pos_id"]) for r in rows}
        titles = {d.id: (d.title or "") for d in read_corpus(corpus) if d.id in wanted}
        names_neg = names_pos = 0
        for row in rows:
            result = parse(str(row["query"]))
            if not result.composed:
                continue
            b_words = set(re.findall(r"[a-z0-9]+", " ".join(c.b for c in result.cues).lower()))
            neg = _title_words(titles.get(str(row["neg_id"]), ""))
            pos = _title_words(titles.get(str(row["pos_id"]), "")) - neg
            names_neg += bool(b_words & neg)
            names_pos += bool(b_words & pos)
        cov["B names neg"] = names_neg / max(cov["parsed"], 1)
        cov["B names pos"] = names_pos / max(cov["parsed"], 1)
    return cov


# ---------------------------------------------------------------------------------------------- NevIR
def plan_scores(plan: Plan, backend, scale: float, docs: Sequence[str]) -> list[float]:
    """Exact scores of a plan for the given documents (fusion: fused over exactly these documents)."""
    if isinstance(plan, VectorPlan):
        spec = make_spec("q", plan.vector, scale)
        return backend.score(spec, list(docs)) if spec else [0.0] * len(docs)
    per_leaf = []
    for i, vec in enumerate(plan_vectors(plan)):
        spec = make_spec(f"q#{i}", vec, scale)
        per_leaf.append(dict(zip(docs, backend.score(spec, list(docs)) if spec else [0.0] * len(docs))))
    fused = fuse(plan, per_leaf)
    return [fused[d] for d in docs]


def nevir_documents(rows: Sequence[Mapping]) -> list[tuple[str, str]]:
    """(doc id, text) of every NevIR document: ``<row id>/1`` and ``<row id>/2``."""
    docs = []
    for row in rows:
        docs += [(f"{row['id']}/1", str(row["doc1"])), (f"{row['id']}/2", str(row["doc2"]))]
    return docs


def nevir_compositions(rows: Sequence[Mapping]) -> list[Composition]:
    """Parsed q1 and q2 of every row (ids ``<row id>/q1``, ``<row id>/q2``)."""
    topics = {}
    for row in rows:
        topics[f"{row['id']}/q1"] = str(row["q1"])
        topics[f"{row['id']}/q2"] = str(row["q2"])
    return parse_topics(topics)


def nevir_scores(rows: Sequence[Mapping], configs: Sequence[Config], backend, encoders: Mapping[str, QueryEncoder],
                 scale: float) -> dict[str, list[tuple[float, float, float, float]]]:
    """``{label: [(q1·doc1, q1·doc2, q2·doc1, q2·doc2), ...]}`` for every configuration."""
    comps = nevir_compositions(rows)
    out = {}
    for config in configs:
        plans = dict(zip((c.qid for c in comps), compose(comps, config.settings(), encoders[config.mode])))
        scores = []
        for row in rows:
            docs = [f"{row['id']}/1", f"{row['id']}/2"]
            s1 = plan_scores(plans[f"{row['id']}/q1"], backend, scale, docs)
            s2 = plan_scores(plans[f"{row['id']}/q2"], backend, scale, docs)
            scores.append((s1[0], s1[1], s2[0], s2[1]))
        out[config.label] = scores
    return out


def nevir_table(scores: Mapping[str, Sequence]):
    """DataFrame: pairwise accuracy and the error-category counts per configuration."""
    import pandas as pd

    from .eval import nevir_pairwise_accuracy

    data = {label: nevir_pairwise_accuracy(rows) for label, rows in scores.items()}
    df = pd.DataFrame.from_dict(data, orient="index")
    df.index.name = "operation"
    return df


def nevir_chart(df, path: str | Path, overwrite: bool = False, title: str = "NevIR dev: outcome per operation") -> Path:
    """Grouped bar chart (PNG) of the NevIR outcome categories per operation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from .eval import NEVIR_CATEGORIES
    from .io_utils import atomic_output

    categories = [c for c in NEVIR_CATEGORIES if c in df.columns]
    labels = list(df.index)
    x = np.arange(len(labels))
    width = 0.8 / len(categories)
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(labels) + 2), 4.8))
    for i, cat in enumerate(categories):
        share = 100 * df[cat] / df["rows"]
        ax.bar(x + (i - (len(categories) - 1) / 2) * width, share, width, label=cat)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=30, ha="right")
    ax.set_ylabel("% of rows")
    ax.axhline(25, color="grey", linestyle=":", linewidth=1)
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_output(path, overwrite=overwrite) as tmp:
        fig.savefig(tmp, format="png", dpi=120)
    plt.close(fig)
    return Path(path)


def nevir_coverage(rows: Sequence[Mapping]) -> dict:
    """Parser coverage on NevIR: share of q1, q2 and of rows with at least one parsed query."""
    from .parse_negation import coverage, parse

    q1 = coverage(str(r["q1"]) for r in rows)
    q2 = coverage(str(r["q2"]) for r in rows)
    both = coverage([str(r["q1"]) for r in rows] + [str(r["q2"]) for r in rows])
    any_row = sum(parse(str(r["q1"])).composed or parse(str(r["q2"])).composed for r in rows)
    return {"queries": both["queries"], "parsed": both["parsed"], "coverage": both["coverage"],
            "q1 coverage": q1["coverage"], "q2 coverage": q2["coverage"], "rows with a parsed query": any_row / len(rows),
            "by_cue": both["by_cue"]}


# ---------------------------------------------------------------------------------------------- outputs
def _write(df, stem: Path, overwrite: bool) -> None:
    from .eval import write_table

    write_table(df, stem, overwrite=overwrite)


def _coverage_frame(cov: Mapping, name: str):
    import pandas as pd

    flat = {k: v for k, v in cov.items() if not isinstance(v, dict)}
    flat["cues (first per query)"] = ", ".join(f"{k} {v}" for k, v in cov.get("by_cue", {}).items())
    df = pd.DataFrame([flat], index=pd.Index([name], name="set"))
    return df


def run_excluir(args: argparse.Namespace) -> int:
    """The ``excluir`` subcommand."""
    from .eval import read_excluir, to_markdown
    from .search import index_settings

    rows = read_excluir(args.queries)
    out = Path(args.output_dir)
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
    _write(_coverage_frame(cov, "ExcluIR dev"), out / "parser_coverage", args.overwrite)
    import pandas as pd

    sel = pd.DataFrame([{**excluir_table({chosen: runs[chosen]}, rows).loc[chosen].to_dict(), "setting": chosen},
                        {**cv["metrics"], "setting": "per fold: " + "; ".join(cv["chosen"])}],
                       index=pd.Index(["selected on all of dev", f"{cv['folds']}-fold CV within dev (held-out)"],
                                      name="selection"))
    _write(sel, out / "selected", args.overwrite)
    lucene = None
    if args.lucene:
        print("confirming through the Lucene index", file=sys.stderr)
        lb = LuceneBackend(index, args.threads)
        try:
            lruns = excluir_runs(rows, [c for c in main_configs if c.mode == "full"], lb, encoders, scale)
        finally:
            lb.close()
        lucene = excluir_table(lruns, rows)
        lucene["same as exact"] = [bool((abs(lucene.loc[k, list(EXCLUIR_COLUMNS)] - main.loc[k, list(EXCLUIR_COLUMNS)])
                                         < 1e-9).all()) for k in lucene.index]
        _write(lucene, out / "lucene_check", args.overwrite)
    print("## ExcluIR dev: every operation (exact dot product, whole corpus)\n")
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


def run_nevir(args: argparse.Namespace) -> int:
    """The ``nevir`` subcommand."""
    from .eval import read_nevir, to_markdown
    from .vectors import quantise

    rows = read_nevir(args.data)
    out = Path(args.output_dir)
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
    nevir_chart(main.loc[[c.label for c in default_configs(("full",))]], out / "categories.png", args.overwrite)
    cov = nevir_coverage(rows)
    _write(_coverage_frame(cov, "NevIR dev"), out / "parser_coverage", args.overwrite)
    check = None
    if args.lucene:
        check = nevir_lucene_check(rows, docs, [c for c in default_configs(("full",))], encoders, scores,
                                   Path(args.work), args.threads)
        _write(check, out / "lucene_check", args.overwrite)
    print("## NevIR dev: every operation (exact dot products of each row's two documents)\n")
    print(to_markdown(main))
    print("## λ sweep\n")
    print(to_markdown(lam))
    print("## parser coverage\n")
    print(json.dumps(cov, ensure_ascii=False, indent=1))
    if check is not None:
        print("\n## Lucene check\n")
        print(to_markdown(check))
    return 0


def nevir_lucene_check(rows, docs, configs, encoders, exact_scores, work: Path, threads: int = 2):
    """Index the NevIR documents as a small collection and compare Lucene's scores with the exact ones."""
    import pandas as pd

    from .encode import SparseEncoder
    from .eval import nevir_category
    from .index import build_impact_index
    from .vectors import write_vectors

    vectors, index = work / "vectors", work / "index"
    if not (vectors / "metadata.json").is_file():
        encoder: SparseEncoder = encoders["full"].encoder
        write_vectors(docs, encoder, vectors, source="nevir documents")
    if not index.is_dir():
        build_impact_index(vectors, index, threads=threads)
    backend = LuceneBackend(index, threads)
    try:
        lucene = nevir_scores(rows, configs, backend, encoders, 100)
    finally:
        backend.close()
    data = {}
    for config in configs:
        exact, luc = exact_scores[config.label], lucene[config.label]
        same = sum(nevir_category(*a) == nevir_category(*b) for a, b in zip(exact, luc))
        diff = max(abs(x - y) / max(1.0, abs(x)) for a, b in zip(exact, luc) for x, y in zip(a, b))
        data[config.label] = {"rows": len(rows), "same category": same, "max relative score difference": diff}
    df = pd.DataFrame.from_dict(data, orient="index")
    df.index.name = "operation"
    return df


COLLECTION_OPS = ("vanilla", "subtract", "ignore", "nrf", "orthogonal", "disentangled", "add", "maxpool", "cpt",
                  "fusion", "fusion-scaled")


def run_collection(args: argparse.Namespace) -> int:
    """The ``collection`` subcommand: every operation on a compositions file with qrels, through Lucene."""
    import pandas as pd

    from .compose import read_compositions
    from .io_utils import write_run
    from .eval import evaluate, to_markdown
    from .search import index_settings

    comps = read_compositions(args.queries)
    if args.topics:
        from .topics import read_topics

        texts = read_topics(args.topics)
        for comp in comps:
            comp.text = comp.text or texts.get(comp.qid)
    info = index_settings(args.index)
    scale = info.get("scale") or 100
    out, work = Path(args.output_dir), Path(args.work)
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    encoders = make_encoders(info.get("model") or args.model, MODES, threads=args.threads)
    kinds = {c.qid: (c.tree.op if not isinstance(c.tree, str) else "atomic") for c in comps}
    backend = LuceneBackend(args.index, args.threads)
    runs = {}
    try:
        for mode in ("full", "no-expansion", "no-term-weights") if args.ablations else ("full",):
            for op in COLLECTION_OPS:
                config = Config(op, None, mode)
                plans = compose(comps, config.settings(), encoders[mode])
                results = execute([c.qid for c in comps], plans, backend, scale, args.hits)
                path = work / f"{config.label.replace(' ', '_').replace('[', '').replace(']', '')}.run"
                write_run(results, path, f"compose-{op}", overwrite=True)
                runs[config.label] = path
    finally:
        backend.close()
    per_query = evaluate(args.qrels, runs, ("ndcg_cut_10", "recall_100"), per_query=True)
    table = {}
    for label in runs:
        rows = per_query.loc[label]
        entry = {}
        for kind in ("not", "and", "or"):
            ids = [q for q, k in kinds.items() if k == kind and q in rows.index]
            if ids:
                entry[f"{kind} nDCG@10"] = rows.loc[ids, "nDCG@10"].mean()
                entry[f"{kind} R@100"] = rows.loc[ids, "R@100"].mean()
        ids = [q for q in kinds if q in rows.index]
        entry["all nDCG@10"] = rows.loc[ids, "nDCG@10"].mean()
        table[label] = entry
    df = pd.DataFrame.from_dict(table, orient="index")
    df.index.name = "operation"
    counts = {kind: sum(k == kind for k in kinds.values()) for kind in ("not", "and", "or", "atomic")}
    _write(df, out / "operations", args.overwrite)
    print(f"## {args.queries}: queries by root operation {counts}; operations that do not apply to a node type "
          "use the defaults (not: disentangled, and: cpt, or: maxpool)\n")
    print(to_markdown(df))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``python -m lsr_lucene.contrastive``."""
    parser = argparse.ArgumentParser(prog="python -m lsr_lucene.contrastive", description=__doc__.splitlines()[0])
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
    co = sub.add_parser("collection", help="every operation on compositions + qrels through Lucene (nDCG@10, R@100)")
    co.add_argument("--index", required=True, help="impact index of the collection")
    co.add_argument("--queries", required=True, help="compositions JSONL")
    co.add_argument("--topics", help="natural-language topics with the same ids (what vanilla encodes)")
    co.add_argument("--qrels", required=True)
    co.add_argument("--work", required=True, help="directory for the run files")
    co.add_argument("--hits", type=int, default=1000)
    co.add_argument("--ablations", action="store_true", help="also the no-expansion / no-term-weights encoders")
    for p in (ex, nv, co):
        p.add_argument("--output-dir", required=True, help="tables (.md/.csv) and charts go here")
        p.add_argument("--model", default="splade-tiny")
        p.add_argument("--threads", type=int, default=2)
        p.add_argument("--overwrite", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    args = build_parser().parse_args(argv)
    return {"excluir": run_excluir, "nevir": run_nevir, "collection": run_collection}[args.command](args)


if __name__ == "__main__":
    from .cli import run_main

    sys.exit(run_main(main))
