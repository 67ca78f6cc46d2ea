"""Signed vectors end to end: neg_ document terms and negative query weights through the Lucene index,
NevIR pairwise accuracy by SignedImpactQuery against brute force, and the sign/sparsity statistics."""
from __future__ import annotations

import json
import random

import pytest

from lsr_lucene.errors import InputError
from lsr_lucene.eval.contrastive_metrics import nevir_pairwise_accuracy
from scripts.studies.signed_stats import (main, nevir_doc_ids, nevir_index_scores, nevir_query_ids, signed_vector,
                                     vector_stats, write_nevir_collection)
from lsr_lucene.io.vectors import quantise, quantise_query

TERMS = ["not", "never", "rain", "sun", "cat", "dog", "tea", "milk"]


def _random_vector(rng: random.Random, signed: bool) -> dict[str, float]:
    chosen = rng.sample(TERMS, rng.randint(1, len(TERMS)))
    return {t: rng.uniform(-2.5, 2.5) if signed else rng.uniform(0.1, 2.5) for t in chosen}


def test_vector_stats_merge_neg_terms():
    docs = [{"rain": 120, "neg_sun": 30}, {"cat": 5, "neg_cat": 5, "neg_dog": 1}]  # cat cancels out
    stats = vector_stats(docs)
    assert stats == {"vectors": 2, "avg_nonzero": 1.5, "avg_positive": 0.5, "avg_negative": 1.0,
                     "negative_share": 2 / 3}
    assert signed_vector({"a": 3, "neg_a": 5}) == {"a": -2}
    with pytest.raises(InputError):
        vector_stats([])


@pytest.fixture(scope="module")
def signed_rows(tmp_path_factory):
    """Random NevIR-like rows with signed float vectors, their quantised documents indexed by Anserini."""
    from lsr_lucene.index.impact import build_impact_index

    rng = random.Random(7)
    work = tmp_path_factory.mktemp("signed")
    rows, queries, docs = [], {}, {}
    for i in range(12):
        row_id = f"r{i}"
        rows.append({"id": row_id})
        for doc_id in nevir_doc_ids(row_id):
            docs[doc_id] = quantise(_random_vector(rng, signed=True), 100, doc_id)
        for qid in nevir_query_ids(row_id):
            queries[qid] = quantise_query(_random_vector(rng, signed=True), 100, qid)
    queries["r3-q2"] = {}  # a query without terms scores 0 for both documents (a tie)
    vectors = work / "vectors"
    vectors.mkdir()
    (vectors / "part-00000.jsonl").write_text("".join(
        json.dumps({"id": d, "contents": "", "vector": v}) + "\n" for d, v in docs.items() if v))
    build_impact_index(vectors, work / "index", threads=1)
    return rows, queries, docs, work


def test_nevir_scores_through_the_index_equal_the_signed_dot_product(signed_rows):
    rows, queries, docs, work = signed_rows
    assert any(t.startswith("neg_") for v in docs.values() for t in v)
    assert any(w < 0 for v in queries.values() for w in v.values())
    got = nevir_index_scores(work / "index", rows, queries)
    expected = []
    for row in rows:
        four = []
        for qid in nevir_query_ids(row["id"]):
            for doc_id in nevir_doc_ids(row["id"]):
                d = signed_vector(docs[doc_id])
                four.append(float(sum(w * d.get(t, 0) for t, w in queries[qid].items())))
        expected.append(tuple(four))
    assert got == expected
    result = nevir_pairwise_accuracy(got)
    assert result["tie"] >= 1 and result["rows"] == len(rows)


def test_missing_query_vector_is_an_input_error(signed_rows):
    rows, queries, _, work = signed_rows
    partial = {k: v for k, v in queries.items() if k != "r0-q1"}
    with pytest.raises(InputError, match="r0-q1"):
        nevir_index_scores(work / "index", rows, partial)


def test_nevir_collection_files_and_bad_dev_file(tmp_path, capsys):
    nevir = tmp_path / "dev.jsonl"
    # the tab inside q1 must not break the topics TSV
    nevir.write_text(json.dumps({"id": "a1", "q1": "is it\training", "doc1": "rain", "q2": "no rain", "doc2": "sun"})
                     + "\n")
    write_nevir_collection(nevir, tmp_path / "docs.jsonl", tmp_path / "q.tsv")
    docs = [json.loads(line) for line in (tmp_path / "docs.jsonl").open()]
    assert [d["id"] for d in docs] == ["a1-d1", "a1-d2"] and docs[1]["text"] == "sun"
    assert (tmp_path / "q.tsv").read_text() == "a1-q1\tis it raining\na1-q2\tno rain\n"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    from lsr_lucene.cli import run_main

    assert run_main(main, ["nevir-corpus", "--nevir", str(empty), "--corpus", str(tmp_path / "c.jsonl"),
                           "--topics", str(tmp_path / "t.tsv")]) == 2
    assert "no rows" in capsys.readouterr().err
    missing = tmp_path / "missing.jsonl"
    missing.write_text(json.dumps({"id": "a1", "q1": "x", "doc1": "y", "q2": "z"}) + "\n")
    assert run_main(main, ["nevir-corpus", "--nevir", str(missing), "--corpus", str(tmp_path / "c.jsonl"),
                           "--topics", str(tmp_path / "t.tsv")]) == 2
    assert "doc2" in capsys.readouterr().err


def test_epochs_table_from_training_logs(tmp_path, capsys):
    dev = {"pairwise_accuracy": 0.26, "correct": 13, "reversed": 11, "prefers doc1 for both": 11,
           "prefers doc2 for both": 15, "docs": {"nonzero": 217.0, "negative_share": 0.03},
           "queries": {"nonzero": 25.0, "negative_share": 0.15}}
    log = tmp_path / "train_log.jsonl"
    log.write_text(json.dumps({"epoch": 0, "step": 0, "dev": dev}) + "\n"
                   + json.dumps({"epoch": 1, "step": 50, "train": {"ce": 1.8},
                                 "dev": {**dev, "pairwise_accuracy": 0.18}}) + "\n")
    assert main(["epochs", "--log", f"scope={log}", "--output", str(tmp_path / "t")]) == 0
    table = (tmp_path / "t.csv").read_text().splitlines()
    assert table[0].startswith("model,epoch,held-out pairwise acc.,reversed,same doc for both,training CE")
    assert table[1].startswith("scope,0,0.26") and ",26," in table[1] and table[2].startswith("scope,1,0.18")
    assert "| scope | 1 | 0.1800 |" in capsys.readouterr().out
    log.write_text(json.dumps({"epoch": 1, "train": {"ce": 1.0}}) + "\n")
    with pytest.raises(InputError, match=r"train_log.jsonl:1: no held-out figures"):
        main(["epochs", "--log", f"scope={log}", "--output", str(tmp_path / "u")])
    with pytest.raises(InputError, match="--log needs NAME=TRAIN_LOG"):
        main(["epochs", "--log", str(log), "--output", str(tmp_path / "u")])
