"""NevIR and ExcluIR: their row files, and the contrastive metrics that score a system on them.

NevIR (pairs of queries and documents that differ by a negation) is scored by pairwise accuracy with its error
categories; ExcluIR (exclusionary queries with a positive and a negative document) by R@1, MRR@10, their
differences between the positive and the negative document, and RR.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

from lsr_lucene.errors import InputError
from lsr_lucene.io.ranking import ranking
from lsr_lucene.io.runs import read_run
from lsr_lucene.io.corpus import jsonl_objects

NEVIR_CATEGORIES = ("correct", "prefers doc1 for both", "prefers doc2 for both", "reversed", "tie")


def nevir_category(q1_doc1: float, q1_doc2: float, q2_doc1: float, q2_doc2: float) -> str:
    """Classify one NevIR row: q1 should prefer doc1 and q2 should prefer doc2 (strictly)."""
    if q1_doc1 == q1_doc2 or q2_doc1 == q2_doc2:
        return "tie"
    q1_right, q2_right = q1_doc1 > q1_doc2, q2_doc2 > q2_doc1
    if q1_right and q2_right:
        return "correct"
    if q1_right:
        return "prefers doc1 for both"
    if q2_right:
        return "prefers doc2 for both"
    return "reversed"


def _four_scores(row) -> tuple[float, float, float, float]:
    if isinstance(row, Mapping):
        return row["q1_doc1"], row["q1_doc2"], row["q2_doc1"], row["q2_doc2"]
    values = tuple(row)
    if len(values) != 4:
        raise InputError(f"a NevIR row needs 4 scores (q1·doc1, q1·doc2, q2·doc1, q2·doc2), got {len(values)}")
    return values  # type: ignore[return-value]


def nevir_pairwise_accuracy(rows_scores: Iterable) -> dict[str, float]:
    """NevIR pairwise accuracy plus error counts from rows of scores (q1·doc1, q1·doc2, q2·doc1, q2·doc2).

    A row counts only when q1 ranks doc1 first and q2 ranks doc2 first; rows may also be mappings with keys
    q1_doc1, q1_doc2, q2_doc1, q2_doc2. Returns ``rows``, ``pairwise_accuracy`` and a count per category.
    """
    counts = dict.fromkeys(NEVIR_CATEGORIES, 0)
    for row in rows_scores:
        counts[nevir_category(*_four_scores(row))] += 1
    total = sum(counts.values())
    if total == 0:
        raise InputError("no NevIR rows to score")
    return {"rows": total, "pairwise_accuracy": counts["correct"] / total, **counts}


def _rank_of(order: Mapping[str, int], doc: str) -> float:
    return order.get(doc, math.inf)  # not retrieved: below everything retrieved


def excluir_metrics(run: Mapping[str, Mapping[str, float]] | str | Path, rows: Iterable[Mapping]) -> dict[str, float]:
    """ExcluIR metrics: R@1, MRR@10 of the positive, ΔR@1 / ΔMRR@10 (positive minus negative), RR.

    ``run`` is ``{qid: {docid: score}}`` or a run file; ``rows`` carry ``id``, ``pos_id``, ``neg_id``.
    RR is the share of queries whose positive scores strictly above the negative (a win), comparing only the
    two documents' scores; ties are counted apart, as NevIR counts them: ``RR ties`` is the share where the two
    scores are equal or neither document is retrieved, ``RR losses`` the rest (RR + ties + losses = 1). A
    document missing from the run scores below every retrieved one. Ranks (R@1, MRR@10) follow the run
    convention (ties by docid). All figures are fractions in [0, 1] (Δ in [-1, 1]); queries missing from the
    run count as misses.
    """
    if isinstance(run, (str, Path)):
        run = read_run(run)
    sums = dict.fromkeys(("pos_r1", "neg_r1", "pos_rr10", "neg_rr10", "rr", "rr_ties"), 0.0)
    n = 0
    for row in rows:
        try:
            qid, pos, neg = str(row["id"]), str(row["pos_id"]), str(row["neg_id"])
        except KeyError as exc:
            raise InputError(f"ExcluIR row {row.get('id', '?')} lacks field {exc.args[0]!r}") from None
        scores = run.get(qid, {})
        order = {doc: rank for rank, doc in enumerate(ranking(scores), 1)}
        pos_rank, neg_rank = _rank_of(order, pos), _rank_of(order, neg)
        sums["pos_r1"] += pos_rank == 1
        sums["neg_r1"] += neg_rank == 1
        sums["pos_rr10"] += 1 / pos_rank if pos_rank <= 10 else 0.0
        sums["neg_rr10"] += 1 / neg_rank if neg_rank <= 10 else 0.0
        pos_score, neg_score = scores.get(pos, -math.inf), scores.get(neg, -math.inf)
        sums["rr"] += pos_score > neg_score
        sums["rr_ties"] += pos_score == neg_score
        n += 1
    if n == 0:
        raise InputError("no ExcluIR rows to score")
    mean = {k: v / n for k, v in sums.items()}
    return {"queries": n, "R@1": mean["pos_r1"], "MRR@10": mean["pos_rr10"],
            "ΔR@1": mean["pos_r1"] - mean["neg_r1"], "ΔMRR@10": mean["pos_rr10"] - mean["neg_rr10"],
            "RR": mean["rr"], "RR ties": mean["rr_ties"], "RR losses": 1.0 - mean["rr"] - mean["rr_ties"],
            "R@1 (neg)": mean["neg_r1"], "MRR@10 (neg)": mean["neg_rr10"]}


def read_nevir(path: str | Path) -> list[dict[str, str]]:
    """NevIR rows ``{"id","q1","doc1","q2","doc2"}`` from JSONL, checking fields (InputError names file:line)."""
    return _read_rows(path, ("id", "q1", "doc1", "q2", "doc2"))


def read_excluir(path: str | Path) -> list[dict[str, str]]:
    """ExcluIR rows ``{"id","query","pos_id","neg_id"}`` from JSONL, checking fields (InputError names file:line)."""
    return _read_rows(path, ("id", "query", "pos_id", "neg_id"))


def _read_rows(path: str | Path, fields: tuple[str, ...]) -> list[dict[str, str]]:
    if not Path(path).is_file():
        raise InputError(f"{path}: no such file")
    rows, seen = [], set()
    for line_no, obj in jsonl_objects(Path(path)):
        missing = [f for f in fields if not isinstance(obj.get(f), (str, int)) or str(obj[f]).strip() == ""]
        if missing:
            raise InputError(f"{path}:{line_no}: missing or empty field(s) {', '.join(missing)}")
        row = {f: str(obj[f]) for f in fields}
        if row["id"] in seen:
            raise InputError(f"{path}:{line_no}: duplicate id {row['id']!r}")
        seen.add(row["id"])
        rows.append(row)
    if not rows:
        raise InputError(f"{path}: no rows (empty file?)")
    return rows
