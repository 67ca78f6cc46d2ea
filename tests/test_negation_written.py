"""Written exclusion requests (issue 49): the committed set is well formed and the table reads per-row outcomes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts.negation import negation_written as written

PAIRS = Path(__file__).resolve().parents[1] / "runs" / "negation" / "written_pairs.jsonl"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def test_committed_rows_name_unused_pairs_of_their_corpus():
    """Every written row names two passages of its corpus that no dev row uses, and ids are unique."""
    rows = written.read_pairs(PAIRS)
    sets = {"replica", "fresh-1", "fresh-2", "overlap", "broad", "broad-2"}
    assert len({r["id"] for r in rows}) == len(rows) and {r["set"] for r in rows} == sets
    folders = {"ExcluIR": DATA / "excluir", "BoolQuestions": DATA / "boolquestions_not"}
    if not all((f / "dev.jsonl").exists() for f in folders.values()):
        pytest.skip("../shared/data not present")
    for source, folder in folders.items():
        ids = {json.loads(line)["id"] for line in open(folder / "corpus.jsonl", encoding="utf-8")}
        dev = {json.loads(line)[k] for line in open(folder / "dev.jsonl", encoding="utf-8") for k in ("pos_id", "neg_id")}
        for r in (r for r in rows if r["source"] == source):
            assert {r["pos_id"], r["neg_id"]} <= ids - dev and r["pos_id"] != r["neg_id"]


def test_table_and_refusals(tmp_path):
    rows = [{"id": str(i), "set": "fresh-2", "source": "ExcluIR", "r1": str(int(i < 3)), "rr": "1"} for i in range(4)]
    (cell,) = written.table({"HEAD": rows})
    assert (cell["code"], cell["queries"], cell["R@1"], cell["RR"]) == ("HEAD", 4, 0.75, 1.0)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "1", "set": "x", "source": "Other", "query": "q", "pos_id": "1",
                               "neg_id": "2"}) + "\n")
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        written.read_pairs(bad)
    assert written.main(["score", "--pairs", str(bad), "--excluir", "x", "--boolq", "y", "--work", str(tmp_path),
                         "--output", str(tmp_path / "o.csv")]) == 2
