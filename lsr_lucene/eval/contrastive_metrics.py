"""NevIR and ExcluIR: their row files, and the contrastive metrics that score a system on them.

NevIR (pairs of queries and documents that differ by a negation) is scored by pairwise accuracy with its error
categories; ExcluIR (exclusionary queries with a positive and a negative document; BoolQuestions NOT has the same
layout) by R@1, MRR@10, their differences between the positive and the negative document, and RR.

How ties count (the papers define the figures by rank and "ranked higher"; equal scores are our convention):
R@1 and MRR@10 read ranks in run order (ties by docid, as run files break them); RR and NevIR compare the two
documents' scores, and equal scores are neither a win nor a loss: RR counts them apart (``RR ties``; also when
neither document is retrieved) and a NevIR row with a tie in either query is category ``tie`` (not correct).

Runs and ids: an ExcluIR-style query's qid is the row's ``id``. A NevIR row ``id`` gives two queries, qids
``<id>/q1`` and ``<id>/q2``, and two documents, docids ``<id>/1`` (doc1) and ``<id>/2`` (doc2)
(:func:`nevir_ids`; the ids ``scripts.negation.nevir`` gives its queries and documents).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

from lsr_lucene.errors import InputError
from lsr_lucene.io.ranking import ranking
from lsr_lucene.io.runs import read_run
from lsr_lucene.io.corpus import jsonl_objects, missing as missing_input

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


def nevir_ids(row_id: str) -> dict[str, str]:
    """The qids and docids of one NevIR row in runs: ``q1``/``q2`` -> ``<id>/q1``/``<id>/q2``, ``doc1``/``doc2`` ->
    ``<id>/1``/``<id>/2``."""
    return {"q1": f"{row_id}/q1", "q2": f"{row_id}/q2", "doc1": f"{row_id}/1", "doc2": f"{row_id}/2"}


def nevir_run_scores(run: Mapping[str, Mapping[str, float]], rows: Iterable[Mapping]) -> list[tuple[float, ...]]:
    """(q1·doc1, q1·doc2, q2·doc1, q2·doc2) of every NevIR row read from a run ``{qid: {docid: score}}`` with
    :func:`nevir_ids`; a document the query did not retrieve scores −inf (below every retrieved one)."""
    out: list[tuple[float, ...]] = []
    for row in rows:
        ids = nevir_ids(str(row["id"]))
        q1, q2 = run.get(ids["q1"], {}), run.get(ids["q2"], {})
        out.append((q1.get(ids["doc1"], -math.inf), q1.get(ids["doc2"], -math.inf),
                    q2.get(ids["doc1"], -math.inf), q2.get(ids["doc2"], -math.inf)))
    return out


def nevir_as_excluir(rows: Iterable[Mapping]) -> list[dict[str, str]]:
    """ExcluIR-style rows of NevIR rows: q1 with positive doc1 and negative doc2, q2 with doc2 and doc1 (so R@1,
    MRR@10, their Δ and RR apply per query)."""
    out = []
    for row in rows:
        ids = nevir_ids(str(row["id"]))
        out.append({"id": ids["q1"], "query": str(row["q1"]), "pos_id": ids["doc1"], "neg_id": ids["doc2"]})
        out.append({"id": ids["q2"], "query": str(row["q2"]), "pos_id": ids["doc2"], "neg_id": ids["doc1"]})
    return out


def excluir_outcome(scores: Mapping[str, float], pos: str, neg: str) -> dict:
    """One query's figures: the positive's and the negative's rank (None: not retrieved) and score, and the RR
    outcome ``win`` (positive scores strictly higher), ``tie`` (equal, or neither retrieved) or ``loss``."""
    order = {doc: rank for rank, doc in enumerate(ranking(scores), 1)}
    pos_score, neg_score = scores.get(pos, -math.inf), scores.get(neg, -math.inf)
    outcome = "win" if pos_score > neg_score else "tie" if pos_score == neg_score else "loss"
    return {"pos rank": order.get(pos), "neg rank": order.get(neg), "pos score": scores.get(pos),
            "neg score": scores.get(neg), "outcome": outcome}


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
    run count as misses. ``tied`` counts the queries whose two documents are retrieved with equal scores,
    ``neither retrieved`` those where neither is (together the ``RR ties`` share).
    """
    if isinstance(run, (str, Path)):
        run = read_run(run)
    sums = dict.fromkeys(("pos_r1", "neg_r1", "pos_rr10", "neg_rr10", "rr", "rr_ties", "neither"), 0.0)
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
        sums["neither"] += pos_score == neg_score == -math.inf
        n += 1
    if n == 0:
        raise InputError("no ExcluIR rows to score")
    mean = {k: v / n for k, v in sums.items()}
    return {"queries": n, "R@1": mean["pos_r1"], "MRR@10": mean["pos_rr10"],
            "ΔR@1": mean["pos_r1"] - mean["neg_r1"], "ΔMRR@10": mean["pos_rr10"] - mean["neg_rr10"],
            "RR": mean["rr"], "RR ties": mean["rr_ties"], "RR losses": 1.0 - mean["rr"] - mean["rr_ties"],
            "R@1 (neg)": mean["neg_r1"], "MRR@10 (neg)": mean["neg_rr10"],
            "tied": int(sums["rr_ties"] - sums["neither"]), "neither retrieved": int(sums["neither"])}


NEVIR_FIELDS = ("id", "q1", "doc1", "q2", "doc2")
EXCLUIR_FIELDS = ("id", "query", "pos_id", "neg_id")


def read_contrastive(path: str | Path) -> tuple[str, list[dict[str, str]], list[int]]:
    """(kind, rows, line numbers) of a contrastive file, its kind told by the first row's fields: ``excluir``
    (``{"id","query","pos_id","neg_id"}``: ExcluIR, BoolQuestions NOT) or ``nevir`` (``{"id","q1","doc1","q2",
    "doc2"}``); another shape is an InputError naming the file and line."""
    if not Path(path).is_file():
        raise missing_input(path)
    fields: tuple[str, ...]
    for line_no, obj in jsonl_objects(Path(path)):
        if set(EXCLUIR_FIELDS) <= obj.keys():
            kind, fields = "excluir", EXCLUIR_FIELDS
        elif set(NEVIR_FIELDS) <= obj.keys():
            kind, fields = "nevir", NEVIR_FIELDS
        else:
            raise InputError(f"{path}:{line_no}: unknown contrastive row shape (fields {', '.join(sorted(obj))}); "
                             f"expected {{{', '.join(EXCLUIR_FIELDS)}}} (ExcluIR, BoolQuestions) or "
                             f"{{{', '.join(NEVIR_FIELDS)}}} (NevIR)")
        lines: list[int] = []
        return kind, _read_rows(path, fields, lines), lines
    raise InputError(f"{path}: no rows (empty file?)")


def read_nevir(path: str | Path) -> list[dict[str, str]]:
    """NevIR rows ``{"id","q1","doc1","q2","doc2"}`` from JSONL, checking fields (InputError names file:line)."""
    return _read_rows(path, NEVIR_FIELDS)


def read_excluir(path: str | Path) -> list[dict[str, str]]:
    """ExcluIR rows ``{"id","query","pos_id","neg_id"}`` from JSONL, checking fields (InputError names file:line)."""
    return _read_rows(path, EXCLUIR_FIELDS)


def _read_rows(path: str | Path, fields: tuple[str, ...], lines: list[int] | None = None) -> list[dict[str, str]]:
    """Rows with ``fields`` (all present, non-empty, ids unique); ``lines`` receives each row's line number."""
    if not Path(path).is_file():
        raise missing_input(path)
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
        if lines is not None:
            lines.append(line_no)
    if not rows:
        raise InputError(f"{path}: no rows (empty file?)")
    return rows
