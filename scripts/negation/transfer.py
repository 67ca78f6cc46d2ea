"""Exclusion across benchmarks: every setting on several ExcluIR-layout benchmarks, the worst case, and selection.

A benchmark is a folder in the ExcluIR layout (``corpus.jsonl`` and a split such as ``dev.jsonl`` with rows
``{id, query, pos_id, neg_id}``): ExcluIR and BoolQuestions NOT. Every setting runs on every benchmark (exact
dot products over the whole corpus, query texts encoded once); the cross-benchmark table holds one column
group per benchmark and the worst case (the minimum over benchmarks of each figure).

Selection (objective R@1 + ΔR@1 + RR, :func:`scripts.negation.excluir.objective`) is scored in several ways:
chosen on one benchmark, chosen on the worst case of all, and each of these cross-validated: the queries of
every benchmark are split into k folds (row i in fold i mod k); the choice for fold j reads only the other
folds' queries (:func:`fold_choice`) and is measured on fold j of every benchmark. A benchmark the criterion
does not read is reported on all its queries (it is held out as a whole).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence, cast

from lsr_lucene.errors import InputError
from scripts.negation.contrastive_configs import DEFAULT, LAMBDA_GRID, Config
from lsr_lucene.eval.contrastive_metrics import excluir_metrics
from scripts.negation.excluir import EXCLUIR_COLUMNS, excluir_table, objective

Runs = Mapping[str, Mapping[str, Mapping[str, float]]]  # label -> qid -> doc -> score
PLAIN_OPS = ("vanilla", "ignore", "subtract", "orthogonal")
TRANSFER_LAMBDA_OPS = ("nrf", "disentangled", "orthonrf", "adaptive", "fusion-scaled")
WORST = "worst case"
KNOWN_NAMES = {"excluir": "ExcluIR", "boolquestions_not": "BoolQuestions"}


@dataclass
class Benchmark:
    """One benchmark: display name, corpus file and its query rows (one split)."""

    name: str
    corpus: Path
    rows: list


def benchmark_name(folder: str | Path, split: str) -> str:
    """Display name of a benchmark folder and split ("ExcluIR dev", "BoolQuestions dev")."""
    base = Path(folder).resolve().name
    return f"{KNOWN_NAMES.get(base, base)} {split}"


GATED_LAMBDAS = (0.5, 0.7, 1.0, 1.5)
GATES = (0.5, 0.7, 0.8, 0.9, 0.95)


def transfer_configs(grid: Sequence[float] = LAMBDA_GRID) -> list[Config]:
    """The settings compared across benchmarks: `default`, the parameter-free operations, the λ grid of every
    operation with a λ (the new orthonrf and adaptive included), and fusion-gated over λ × gate."""
    return ([Config(DEFAULT)] + [Config(op) for op in PLAIN_OPS]
            + [Config(op, lam) for op in TRANSFER_LAMBDA_OPS for lam in grid]
            + [Config("fusion-gated", lam, gate=gate) for gate in GATES for lam in GATED_LAMBDAS])


def cross_table(tables: Mapping[str, object]):
    """One table with a column group per benchmark ("<benchmark>: <figure>") and the worst case over them."""
    import pandas as pd

    if not tables:
        raise InputError("no benchmark to tabulate")
    parts = {name: cast(pd.DataFrame, df)[list(EXCLUIR_COLUMNS)] for name, df in tables.items()}
    index = next(iter(parts.values())).index
    worst = pd.concat([df.loc[index] for df in parts.values()]).groupby(level=0, sort=False).min().loc[index]
    parts[WORST] = worst
    out = pd.concat({name: df.loc[index] for name, df in parts.items()}, axis=1)
    out.columns = [f"{name}: {col}" for name, col in out.columns]
    out.index.name = "operation"
    return out


def query_figures(runs: Runs, rows: Sequence[Mapping]) -> dict:
    """``{label: {qid: figures}}``: the ExcluIR figures of every setting on every single query (each run ranked
    once), so that a selection over many subsets of queries only averages them (:func:`mean_figures`)."""
    return {label: {str(r["id"]): excluir_metrics(run, [r]) for r in rows} for label, run in runs.items()}


def mean_figures(per_query: Mapping[str, Mapping[str, float]], rows: Sequence[Mapping]) -> dict[str, float]:
    """Mean of the per-query figures over ``rows`` (equal to :func:`excluir_metrics` on those rows)."""
    if not rows:
        raise InputError("no ExcluIR rows to score")
    return {key: sum(per_query[str(r["id"])][key] for r in rows) / len(rows) for key in EXCLUIR_COLUMNS}


def _score(runs: Mapping, rows_by_bench: Mapping[str, Sequence[Mapping]], label: str) -> float:
    """Worst-case objective of ``label`` over the benchmarks in ``rows_by_bench``."""
    return min(objective(mean_figures(runs[name][label], rows)) for name, rows in rows_by_bench.items())


def choose(runs: Mapping, rows_by_bench: Mapping[str, Sequence[Mapping]],
           labels: Sequence[str]) -> str:
    """Label with the best worst-case objective over the given benchmarks' rows (ties: first in ``labels``).

    ``runs`` is ``{benchmark: {label: {qid: figures}}}`` (:func:`query_figures`); only the queries in
    ``rows_by_bench`` are read.
    """
    best, best_value = None, -float("inf")
    for label in labels:
        value = _score(runs, rows_by_bench, label)
        if value > best_value + 1e-12:
            best, best_value = label, value
    assert best is not None, "no configuration to select from"
    return best


def fold_rows(rows: Sequence[Mapping], folds: int, k: int, held_out: bool) -> list:
    """Rows of fold ``k`` (``held_out``) or of the other folds; row i belongs to fold i mod ``folds``."""
    return [r for i, r in enumerate(rows) if (i % folds == k) == held_out]


def fold_choice(runs: Mapping, rows_by_bench: Mapping[str, Sequence[Mapping]], criterion: Sequence[str],
                labels: Sequence[str], folds: int, k: int) -> str:
    """The setting chosen for held-out fold ``k``: worst case over the ``criterion`` benchmarks, reading only
    their training folds (never fold ``k``, never a benchmark outside the criterion)."""
    train = {name: fold_rows(rows_by_bench[name], folds, k, held_out=False) for name in criterion}
    return choose(runs, train, labels)


def _check_folds(rows_by_bench: Mapping[str, Sequence[Mapping]], folds: int) -> None:
    smallest = min(len(rows) for rows in rows_by_bench.values())
    if folds < 2 or folds > smallest:
        raise InputError(f"folds must be between 2 and the number of queries of the smallest benchmark ({smallest}), "
                         f"got {folds}")


def cross_validated(runs: Mapping, rows_by_bench: Mapping[str, Sequence[Mapping]],
                    criterion: Sequence[str], labels: Sequence[str], folds: int,
                    chooser: Callable = fold_choice) -> dict:
    """Held-out figures of a criterion under k-fold CV: per benchmark, query-weighted metrics of each fold's
    choice on that fold (benchmarks in the criterion) or on all queries (benchmarks outside it, never read)."""
    _check_folds(rows_by_bench, folds)
    chosen = [chooser(runs, rows_by_bench, criterion, labels, folds, k) for k in range(folds)]
    figures = {}
    for name, rows in rows_by_bench.items():
        sums = dict.fromkeys(EXCLUIR_COLUMNS, 0.0)
        for k, label in enumerate(chosen):
            test = fold_rows(rows, folds, k, held_out=True) if name in criterion else rows
            metrics = mean_figures(runs[name][label], test)
            for key in EXCLUIR_COLUMNS:
                sums[key] += metrics[key] * len(test)
        total = len(rows) * (1 if name in criterion else folds)
        figures[name] = {key: value / total for key, value in sums.items()}
    return {"figures": figures, "chosen": chosen}


def _label_counts(chosen: Sequence[str]) -> str:
    counts: dict[str, int] = {}
    for label in chosen:
        counts[label] = counts.get(label, 0) + 1
    return "; ".join(f"{label} ×{n}" if n > 1 else label for label, n in counts.items())


def selection_table(runs: Mapping, rows_by_bench: Mapping[str, Sequence[Mapping]],
                    labels: Sequence[str], folds: int = 5):
    """For each way of choosing the setting, what it gives on each benchmark (and the worst case); ``runs`` as
    for :func:`choose`.

    Rows: chosen on all queries of each benchmark / of the worst case (figures on the benchmarks it read are
    in-sample, marked in ``read``), the same criteria cross-validated (held-out figures everywhere), and the
    fixed `default`.
    """
    import pandas as pd

    names = list(rows_by_bench)
    criteria = [([name], f"on {name}") for name in names] + ([(names, "on the worst case of all")]
                                                             if len(names) > 1 else [])
    records: list[dict[str, object]] = []
    index: list[str] = []

    def add(title: str, figures: Mapping[str, Mapping[str, float]], setting: str, read: str) -> None:
        rec: dict[str, object] = {f"{name}: {col}": figures[name][col] for name in names for col in EXCLUIR_COLUMNS}
        for col in EXCLUIR_COLUMNS:
            rec[f"{WORST}: {col}"] = min(figures[name][col] for name in names)
        rec.update({"setting": setting, "read": read})
        records.append(rec)
        index.append(title)

    def full(label: str) -> dict:
        return {name: mean_figures(runs[name][label], rows_by_bench[name]) for name in names}

    for criterion, how in criteria:
        label = choose(runs, {name: rows_by_bench[name] for name in criterion}, labels)
        add(f"chosen {how} (all queries)", full(label), label, "in-sample: " + ", ".join(criterion))
    for criterion, how in criteria:
        cv = cross_validated(runs, rows_by_bench, criterion, labels, folds)
        add(f"chosen {how}, {folds}-fold CV", cv["figures"], "per fold: " + _label_counts(cv["chosen"]),
            "held-out folds" + ("" if criterion == names else "; others: whole benchmark, never read"))
    if DEFAULT in runs[names[0]]:
        add(DEFAULT, full(DEFAULT), DEFAULT, "fixed setting (see README)")
    return pd.DataFrame(records, index=pd.Index(index, name="selection"))


def benchmark_tables(runs: Mapping[str, Runs], rows_by_bench: Mapping[str, Sequence[Mapping]]) -> dict:
    """``{benchmark: operations table}`` (rows per setting, columns R@1, MRR@10, ΔR@1, ΔMRR@10, RR)."""
    return {name: excluir_table(runs[name], rows) for name, rows in rows_by_bench.items()}
