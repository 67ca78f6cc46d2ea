"""The blind label audit of the dev sets (issue 49): blind order, mapping back to the labels, merge, report."""
from __future__ import annotations

import csv
import json

import pytest

from lsr_lucene.errors import InputError
from scripts.negation import negation_label_audit as audit

FIELDS = list(audit.ANNOTATION_FIELDS)


def _folder(tmp_path, name, rows):
    folder = tmp_path / name
    folder.mkdir()
    docs = [{"id": f"{r['id']}p", "title": "Wanted", "text": f"answer {r['id']}"} for r in rows]
    docs += [{"id": f"{r['id']}n", "title": "", "text": f"excluded {r['id']}"} for r in rows]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "dev.jsonl").write_text("".join(json.dumps({**r, "pos_id": f"{r['id']}p", "neg_id": f"{r['id']}n"})
                                              + "\n" for r in rows))
    return folder


def _annotate(path, rows, choose):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({"id": r["id"], "exclusion_stated": "yes", "excluded": "x", "choice": choose(r),
                        "chosen_mentions_excluded": "no", "other_about_excluded": "yes", "reason": "r"})


def test_blind_rows_hide_the_labels_and_map_back(tmp_path):
    """Both orders occur, the text shows which passage is which only through the hash, and an annotator who always
    picks the wanted passage maps back to ``positive`` on every row."""
    rows = [{"id": str(i), "query": f"q{i} besides z"} for i in range(40)]
    blind = audit.blind_rows(_folder(tmp_path, "ex", rows))
    shown_second = [audit.positive_shown_second(r["id"]) for r in blind]
    assert 0 < sum(shown_second) < len(blind)
    for r, second in zip(blind, shown_second):
        assert (r["Y"] if second else r["X"]) == f"Wanted: answer {r['id']}"
        picked = "Y" if r["Y"].startswith("Wanted") else "X"
        assert audit.label_of(picked, r["id"]) == "positive"
        assert audit.label_of("X" if picked == "Y" else "Y", r["id"]) == "negative"
        assert audit.label_of("tie", r["id"]) == "tie"


def test_prepare_writes_chunks_and_refuses_an_existing_folder(tmp_path):
    """prepare writes both sets' chunks and the rubric; a second run refuses the folder unless --overwrite."""
    ex = _folder(tmp_path, "ex", [{"id": str(i), "query": f"q{i}"} for i in range(5)])
    bq = _folder(tmp_path, "bq", [{"id": f"b{i}", "query": f"q{i}"} for i in range(3)])
    out = tmp_path / "chunks"
    paths = audit.prepare({"ExcluIR dev": ex, "BoolQuestions dev": bq}, out)
    assert sorted(p.name for p in out.iterdir()) == ["RUBRIC.md", "boolq-1.jsonl", "boolq-2.jsonl", "excluir-1.jsonl",
                                                     "excluir-2.jsonl"]
    assert sum(len(p.read_text().splitlines()) for p in paths) == 8
    (out / "excluir-1.jsonl").write_text("annotated by hand")
    args = ["prepare", "--excluir", str(ex), "--boolq", str(bq), "--output", str(out)]
    assert audit.main(args) == 2 and (out / "excluir-1.jsonl").read_text() == "annotated by hand"
    assert audit.main(args + ["--overwrite"]) == 0 and (out / "excluir-1.jsonl").read_text().startswith("{")


def test_merge_and_report(tmp_path):
    """One annotator always picks the wanted passage, the other picks the excluded one on row 0 and a tie on row 1:
    those two rows are disputed; the report counts agreement and gives the default's figures per consensus label."""
    ex_rows = [{"id": str(i), "query": f"q{i}"} for i in range(6)]
    bq_rows = [{"id": f"b{i}", "query": f"q{i}"} for i in range(4)]
    ex, bq = _folder(tmp_path, "ex", ex_rows), _folder(tmp_path, "bq", bq_rows)
    notes = tmp_path / "notes"
    notes.mkdir()
    for prefix, folder in (("excluir", ex), ("boolq", bq)):
        blind = audit.blind_rows(folder)
        right = {r["id"]: ("Y" if r["Y"].startswith("Wanted") else "X") for r in blind}
        wrong = {**right, "0": "X" if right.get("0") == "Y" else "Y", "1": "tie"}
        _annotate(notes / f"{prefix}-1-a.csv", blind, lambda r, right=right: right[r["id"]])
        _annotate(notes / f"{prefix}-1-b.csv", blind, lambda r, wrong=wrong: wrong[r["id"]])
    merged = audit.merge(notes, {"ExcluIR dev": ex, "BoolQuestions dev": bq})
    assert [r["consensus"] for r in merged[:6]] == ["disputed", "disputed", "positive", "positive", "positive",
                                                   "positive"]
    assert {r["consensus"] for r in merged[6:]} == {"positive"}
    outcomes = [{"source": "ExcluIR dev", "id": r["id"], "part": "held-out" if i < 3 else "tune",
                 "default R@1": str(int(i > 0)), "default RR": str(int(i > 1))} for i, r in enumerate(ex_rows)]
    outcomes += [{"source": "BoolQuestions dev", "id": r["id"], "part": "tune", "default R@1": "1", "default RR": "1"}
                 for r in bq_rows]
    summary, table = audit.report(merged, outcomes)
    assert "ExcluIR dev: 6 rows, the annotators agree on 4" in summary
    cell = {(t["set"], t["part"], t["consensus"]): t for t in table}
    assert cell[("ExcluIR dev", "all", "disputed")]["RR"] == 0.0 and cell[("ExcluIR dev", "all", "disputed")][
        "RR misses"] == 2
    assert cell[("ExcluIR dev", "all", "positive")]["RR"] == 1.0
    assert cell[("ExcluIR dev", "held-out", "all")]["queries"] == 3
    assert cell[("BoolQuestions dev", "all", "all")]["R@1"] == 1.0


def test_merge_refuses_a_missing_judgement_and_a_bad_choice(tmp_path):
    rows = [{"id": str(i), "query": "q"} for i in range(3)]
    ex = _folder(tmp_path, "ex", rows)
    notes = tmp_path / "notes"
    notes.mkdir()
    blind = audit.blind_rows(ex)
    _annotate(notes / "excluir-1-a.csv", blind, lambda r: "X")
    _annotate(notes / "excluir-1-b.csv", blind[:2], lambda r: "X")
    with pytest.raises(InputError, match="row 2 by annotator b"):
        audit.merge(notes, {"ExcluIR dev": ex})
    _annotate(notes / "excluir-1-b.csv", blind, lambda r: "maybe")
    with pytest.raises(InputError, match=r"excluir-1-b.csv:2: choice 'maybe'"):
        audit.merge(notes, {"ExcluIR dev": ex})


def test_reasons_name_the_passages_and_the_report_keeps_its_audit(tmp_path):
    """A reason's X / Y become [wanted] / [excluded] as the labels have them (not inside "X-ray"); ``report`` refuses
    an output stem that would overwrite the audit it reads, and any existing output without --overwrite."""
    qid = next(str(i) for i in range(50) if audit.positive_shown_second(str(i)))
    assert audit.unblind("Y's answer; X is about X-rays", qid) == "[wanted]'s answer; [excluded] is about X-rays"
    stem = tmp_path / "label_audit"
    stem.with_suffix(".csv").write_text("set,id\n")
    code = audit.main(["report", "--audit", str(stem.with_suffix(".csv")), "--outcomes", "x.csv",
                       "--output", str(stem)])
    assert code == 2 and stem.with_suffix(".csv").read_text() == "set,id\n"
    code = audit.main(["report", "--audit", str(stem.with_suffix(".csv")), "--outcomes", "x.csv",
                       "--output", str(tmp_path / "other")])
    assert code == 2  # x.csv is missing: one error line, nothing written
    assert not (tmp_path / "other.md").exists()
