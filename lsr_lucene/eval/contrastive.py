"""Contrastive figures of TREC runs from a pairs file, no qrels: what ``lsr-lucene eval --contrastive`` prints.

ExcluIR-style files (``{"id","query","pos_id","neg_id"}``: ExcluIR, BoolQuestions NOT) give R@1, ΔR@1, MRR@10,
ΔMRR@10 and RR with its ties; NevIR files (``{"id","q1","doc1","q2","doc2"}``) give pairwise accuracy with its
outcome categories, and the same per-query figures over the 2·rows queries (q1: doc1 positive, doc2 negative;
q2 the other way round). Definitions, tie rules and the NevIR id convention: :mod:`lsr_lucene.eval.contrastive_metrics`.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from lsr_lucene.eval.contrastive_metrics import (NEVIR_CATEGORIES, excluir_metrics, excluir_outcome, nevir_as_excluir,
                                                 nevir_category, nevir_ids, nevir_pairwise_accuracy, nevir_run_scores)

Run = Mapping[str, Mapping[str, float]]
EXCLUIR_TABLE = ("queries", "R@1", "ΔR@1", "MRR@10", "ΔMRR@10", "RR", "RR ties", "RR losses", "tied",
                 "neither retrieved")
NEVIR_TABLE = ("rows", "pairwise_accuracy", *NEVIR_CATEGORIES)
TIES_NOTE = ("RR: share of queries whose positive document scores strictly above the negative one; RR ties: equal "
             "scores (tied) or neither retrieved; RR losses = 1 − RR − RR ties. R@1 / MRR@10: ranks in run order (ties "
             "by docid).")
NEVIR_NOTE = (" NevIR: a row is correct when q1 scores doc1 strictly above doc2 and q2 doc2 strictly above doc1; an "
              "equal pair in either query is a tie; the per-query figures count q1 and q2 of every row.")


def ties_note(kind: str) -> str:
    """The paragraph printed above a table: how ties count."""
    return TIES_NOTE + (NEVIR_NOTE if kind == "nevir" else "") + "\n\n"


def required_qids(kind: str, rows: Sequence[Mapping], lines: Sequence[int]) -> list[tuple[str, int]]:
    """(qid, line in the pairs file) of every query a run must answer: the row ids (ExcluIR-style), or
    ``<id>/q1`` and ``<id>/q2`` (NevIR)."""
    if kind == "nevir":
        return [(nevir_ids(r["id"])[q], line) for r, line in zip(rows, lines) for q in ("q1", "q2")]
    return [(r["id"], line) for r, line in zip(rows, lines)]


def missing_queries(kind: str, rows: Sequence[Mapping], lines: Sequence[int], run: Run) -> list[tuple[str, int]]:
    """The required (qid, line) pairs the run has no line for."""
    return [(qid, line) for qid, line in required_qids(kind, rows, lines) if qid not in run]


def contrastive_table(kind: str, rows: Sequence[Mapping], runs: Mapping[str, Run], per_query: bool = False):
    """DataFrame of the contrastive figures, rows = runs (``per_query``: rows = (run, qid) for ExcluIR-style files
    with both documents' ranks, scores and the RR outcome; (run, id) for NevIR with the four scores and the
    row's category)."""
    import pandas as pd

    data: list[dict] = []
    index: list[str | tuple[str, str]] = []
    for name, run in runs.items():
        if per_query:
            for qid, figures in _per_query(kind, rows, run):
                data.append(figures)
                index.append((name, qid))
            continue
        figures = {}
        queries: Sequence[Mapping]
        if kind == "nevir":
            nevir = nevir_pairwise_accuracy(nevir_run_scores(run, rows))
            figures.update({k: nevir[k] for k in NEVIR_TABLE})
            queries = nevir_as_excluir(rows)
        else:
            queries = rows
        excluir = excluir_metrics(run, queries)
        figures.update({k: excluir[k] for k in EXCLUIR_TABLE})
        data.append(figures)
        index.append(name)
    if per_query:
        return pd.DataFrame(data, index=pd.MultiIndex.from_tuples(index, names=["run", "qid"]))
    return pd.DataFrame(data, index=pd.Index(index, name="run"))


def _shown(value):
    return "-" if value is None else value


def _per_query(kind: str, rows: Sequence[Mapping], run: Run):
    if kind == "nevir":
        for row, scores in zip(rows, nevir_run_scores(run, rows)):
            names = ("q1·doc1", "q1·doc2", "q2·doc1", "q2·doc2")
            figures = {n: ("-" if s == float("-inf") else s) for n, s in zip(names, scores)}
            yield row["id"], {**figures, "category": nevir_category(*scores)}
        return
    for row in rows:
        outcome = excluir_outcome(run.get(row["id"], {}), row["pos_id"], row["neg_id"])
        yield row["id"], {k: _shown(v) for k, v in outcome.items()}
