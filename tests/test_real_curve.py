"""Held-out split and query-term cut of issue 68's benchmarks (small synthetic inputs, no timing)."""
from __future__ import annotations

import hashlib
import json

import pytest

from scripts.bench.real_curve import cut_query
from scripts.bench.real_heldout import held_out, main, split
from lsr_lucene.errors import InputError


def test_held_out_rule_is_sha1_mod_3_and_splits_about_a_third():
    ids = [f"test{i}" for i in range(3000)]
    held = [q for q in ids if held_out(q)]
    assert all(int(hashlib.sha1(q.encode()).hexdigest(), 16) % 3 == 0 for q in held)
    assert 900 < len(held) < 1100


def test_split_keeps_every_line_once_in_order(tmp_path):
    lines = [json.dumps({"id": f"q{i}", "vector": {"a": i}}) for i in range(50)]
    held, tuning = split(lines, "x.jsonl")
    assert sorted(held + tuning) == sorted(line + "\n" for line in lines)
    assert held == [line + "\n" for line in lines if held_out(json.loads(line)["id"])]
    source = tmp_path / "q.jsonl"
    source.write_text("\n".join(lines) + "\n")
    assert main([str(source), "--heldout", str(tmp_path / "h"), "--tuning", str(tmp_path / "t")]) == 0
    assert (tmp_path / "h").read_text() == "".join(held)
    with pytest.raises(InputError):  # refuses to overwrite without --overwrite
        main([str(source), "--heldout", str(tmp_path / "h"), "--tuning", str(tmp_path / "t")])


def test_split_names_the_bad_line():
    with pytest.raises(InputError, match="x.jsonl:2"):
        split(['{"id": "a"}', "not json"], "x.jsonl")


def test_cut_keeps_heaviest_terms_reaching_the_share():
    vector = {"a": 50, "b": 30, "c": 15, "d": 5}
    assert cut_query(vector, 1.0) == vector
    assert cut_query(vector, 0.5) == {"a": 50}
    assert cut_query(vector, 0.8) == {"a": 50, "b": 30}
    assert cut_query(vector, 0.81) == {"a": 50, "b": 30, "c": 15}
    assert cut_query(vector, 0.01) == {"a": 50}
    assert cut_query({"x": 2, "y": 2}, 0.5) == {"x": 2}  # ties by term
    with pytest.raises(ValueError):
        cut_query(vector, 0)
