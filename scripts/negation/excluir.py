"""ExcluIR with composed queries: runs of every configuration, the metrics table, and the choice of operation and λ.

Every query ranks the whole corpus (exact dot products of the quantised vectors in memory, or the Lucene
index). The operation and λ are selected by R@1 + ΔR@1 + RR on the given queries, and the selection
procedure itself is scored by k-fold cross-validation within them (chosen on k−1 folds, measured on the
held-out one).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Mapping, Sequence

from lsr_lucene.compose.backends import LuceneBackend
from lsr_lucene.compose.compositions import parse_topics
from lsr_lucene.compose.execute import compose, execute
from lsr_lucene.compose.query_encoder import QueryEncoder
from lsr_lucene.errors import InputError
from scripts.negation.contrastive_configs import Config
from lsr_lucene.eval.contrastive_metrics import excluir_metrics
from lsr_lucene.io.vectors import metadata_file

EXCLUIR_COLUMNS = ("R@1", "MRR@10", "ΔR@1", "ΔMRR@10", "RR", "RR ties")
# How the RR columns count (said above every table that has them): ties are neither wins nor losses.
RR_NOTE = ("RR: share of queries whose positive document scores strictly above the excluded one; RR ties: "
           "share where the two score the same or neither is retrieved (counted apart, as NevIR counts ties); "
           "losses = 1 − RR − RR ties.\n\n")


def ensure_index(corpus: str | Path, work: str | Path, model: str = "splade-tiny", threads: int = 2,
                 max_length: int = 512) -> tuple[Path, Path]:
    """Encode and index ``corpus`` under ``work`` (vectors/, index/) unless already there; returns both paths."""
    from lsr_lucene.index.impact import build_impact_index

    vectors, index = ensure_vectors(corpus, work, model, threads, max_length), Path(work) / "index"
    if not index.is_dir():
        build_impact_index(vectors, index, threads=threads)
    return vectors, index


def ensure_vectors(corpus: str | Path, work: str | Path, model: str = "splade-tiny", threads: int = 2,
                   max_length: int = 512) -> Path:
    """Encode ``corpus`` into ``work``/vectors unless already there (exact scoring needs no index); returns it."""
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.io.corpus import count_docs, read_corpus
    from lsr_lucene.io.vectors import write_vectors

    vectors = Path(work) / "vectors"
    if not (metadata_file(vectors) is not None):
        vectors.parent.mkdir(parents=True, exist_ok=True)
        encoder = SparseEncoder(model=model, max_length=max_length, threads=threads)
        write_vectors(read_corpus(corpus), encoder, vectors, total=count_docs(corpus), source=str(corpus))
    return vectors


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
    """DataFrame: one row per configuration, columns R@1, MRR@10, ΔR@1, ΔMRR@10, RR, RR ties."""
    import pandas as pd

    data = {label: {k: excluir_metrics(run, rows)[k] for k in EXCLUIR_COLUMNS} for label, run in runs.items()}
    df = pd.DataFrame.from_dict(data, orient="index")
    df.index.name = "operation"
    return df


def objective(metrics: Mapping[str, float]) -> float:
    """Selection objective on dev: R@1 + ΔR@1 + RR (all three figures the issue asks for, equally weighted)."""
    return metrics["R@1"] + metrics["ΔR@1"] + metrics["RR"]


def select(runs: Mapping[str, Mapping], rows: Sequence[Mapping]) -> str:
    """Label of the configuration with the best objective on ``rows`` (ties: first in order)."""
    best, best_value = None, -float("inf")
    for label, run in runs.items():
        value = objective(excluir_metrics(run, rows))
        if value > best_value + 1e-12:
            best, best_value = label, value
    assert best is not None, "no configuration to select from"
    return best


def cross_validate(runs: Mapping[str, Mapping], rows: Sequence[Mapping], folds: int = 5) -> dict:
    """k-fold cross-validation of :func:`select` within dev: choose on k−1 folds, score the held-out fold.

    Folds are fixed by row order (row i goes to fold i mod k). Returns the held-out metrics (query-weighted
    over folds) and the label chosen for each fold.
    """
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


def selection_table(runs: Mapping[str, Mapping], rows: Sequence[Mapping], chosen: str, cv: Mapping,
                    split: str = "dev"):
    """DataFrame of two rows: the setting chosen on all of ``split`` with its figures, and the held-out figures of
    the same selection under cross-validation (:func:`cross_validate`) with the setting each fold chose."""
    import pandas as pd

    return pd.DataFrame([{**excluir_table({chosen: runs[chosen]}, rows).loc[chosen].to_dict(), "setting": chosen},
                         {**cv["metrics"], "setting": "per fold: " + "; ".join(cv["chosen"])}],
                        index=pd.Index([f"selected on all of {split}",
                                        f"{cv['folds']}-fold CV within {split} (held-out)"], name="selection"))


def excluir_lucene_check(rows: Sequence[Mapping], configs: Sequence[Config], index: str | Path,
                         encoders: Mapping[str, QueryEncoder], scale: float, exact, threads: int = 2):
    """The configurations' metrics through the Lucene index, and whether each row equals ``exact`` (the
    :func:`excluir_table` of the in-memory runs)."""
    backend = LuceneBackend(index, threads)
    try:
        runs = excluir_runs(rows, configs, backend, encoders, scale)
    finally:
        backend.close()
    lucene = excluir_table(runs, rows)
    lucene["same as exact"] = [bool((abs(lucene.loc[k, list(EXCLUIR_COLUMNS)] - exact.loc[k, list(EXCLUIR_COLUMNS)])
                                     < 1e-9).all()) for k in lucene.index]
    return lucene
