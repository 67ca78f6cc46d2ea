"""The do-no-harm experiment of issue 36: per-set table of plain vs compose, fired topics apart, seeded parts."""
from __future__ import annotations

import json
import math
import os

import pytest

from scripts.negation import negation_harm
from scripts.negation.negation_harm import harm_rows, held_out, part_ids

TOPICS = {"1": "tea without caffeine", "2": "Coffee does not cause cancer.", "3": "green tea"}
QRELS = {"1": {"d1": 1}, "2": {"d2": 1}}
PLAIN = {"1": {"d1": 2.0, "d3": 1.0}, "2": {"d2": 1.0}, "3": {"d3": 1.0}}
COMPOSED = {"1": {"d3": 2.0, "d1": 1.0}, "2": {"d2": 1.0}, "3": {"d3": 1.0}}


def test_held_out_is_a_fixed_third():
    ids = [str(i) for i in range(3000)]
    held = part_ids(ids, "held-out")
    assert held == [q for q in ids if held_out(q)] and 900 < len(held) < 1100
    assert sorted(held + part_ids(ids, "tune"), key=int) == ids and part_ids(ids, "all") == ids
    with pytest.raises(Exception, match="unknown part"):
        part_ids(ids, "test")


def test_rows_count_fired_topics_and_score_both_runs():
    [row] = harm_rows("toy", TOPICS, QRELS, PLAIN, COMPOSED)
    assert (row["topics"], row["judged"], row["fired"], row["fired judged"]) == (3, 2, 1, 1)
    assert row["plain nDCG@10"] == pytest.approx(1.0)
    assert row["compose nDCG@10"] == pytest.approx((1 / math.log2(3) + 1) / 2)
    assert row["fired: plain"] == pytest.approx(1.0) and row["fired: compose"] == pytest.approx(1 / math.log2(3))
    assert row["Δ"] == pytest.approx(row["compose nDCG@10"] - 1.0)
    assert 0 < row["parse µs mean"] <= row["parse µs max"]


def test_cli_writes_the_table_and_refuses_to_overwrite(tmp_path):
    topics, qrels = tmp_path / "topics.tsv", tmp_path / "qrels.txt"
    topics.write_text("".join(f"{q}\t{t}\n" for q, t in TOPICS.items()))
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    runs = {}
    for name, run in (("plain", PLAIN), ("compose", COMPOSED)):
        runs[name] = tmp_path / f"{name}.run"
        runs[name].write_text("".join(f"{q} Q0 {d} {r} {s} x\n" for q, docs in run.items()
                                      for r, (d, s) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1]), 1)))
    args = ["harm", "--set", f"toy={topics},{qrels},{runs['plain']},{runs['compose']},split",
            "--fired", f"unjudged={topics}", "--output", str(tmp_path / "harm")]
    assert negation_harm.main(args) == 0
    text = (tmp_path / "harm.md").read_text()
    assert "| toy | 3 | 2 | 1 | 1 |" in text and "toy (held-out)" in text and "| unjudged | 3 | 0 | 1 | 0 |" in text
    with pytest.raises(Exception, match="exists"):
        negation_harm.main(args)
    with pytest.raises(Exception, match="expected NAME=TOPICS"):
        negation_harm.main(["harm", "--set", "toy=missing", "--output", str(tmp_path / "x")])


def test_each_dense_model_has_its_own_cache_and_a_stale_one_is_refused(tmp_path):
    slug = tmp_path / "excluir"
    assert negation_harm.dense_folder(slug, None) == slug / "dense" == negation_harm.dense_folder(slug, "all-minilm-l6-v2")
    assert negation_harm.dense_folder(slug, "/models/all-mpnet-base-v2") == slug / "dense-all-mpnet-base-v2"
    folder = slug / "dense"
    folder.mkdir(parents=True)
    (folder / "metadata.json").write_text('{"model": "/models/all-mpnet-base-v2"}')
    with pytest.raises(Exception, match="embeddings by /models/all-mpnet-base-v2, not all-minilm-l6-v2"):
        negation_harm.ensure_dense(tmp_path / "corpus.jsonl", folder)
    assert negation_harm.ensure_dense(tmp_path / "corpus.jsonl", folder, model="/models/all-mpnet-base-v2") == folder
    local = tmp_path / "models" / "mpnet"  # a local model folder is recorded by its absolute path
    local.mkdir(parents=True)
    (folder / "metadata.json").write_text(json.dumps({"model": str(local)}))
    assert negation_harm.ensure_dense(tmp_path / "corpus.jsonl", folder, model=os.path.relpath(local)) == folder
