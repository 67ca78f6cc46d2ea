"""trec_eval tables against hand computations, run validation, table output, contrastive metrics."""
from __future__ import annotations

import math
import random
from pathlib import Path

import pandas as pd
import pytest

from lsr_lucene.errors import InputError
from lsr_lucene.eval.cli import main
from lsr_lucene.eval.contrastive_metrics import (excluir_metrics, nevir_category, nevir_pairwise_accuracy, read_excluir,
                                                 read_nevir)
from lsr_lucene.eval.trec import canonical_measure, column_name, evaluate, expand_measures, read_qrels, write_table

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"

QRELS = """q1 0 d1 2
q1 0 d2 1
q1 0 d3 0
q1 0 d4 1
q2 0 d5 1
q3 0 d9 1
"""
# q1 retrieves d3 (gain 0), d1 (gain 2), dX (unjudged), d2 (gain 1); d4 is never retrieved.
# q2 retrieves d6 (unjudged), d5 (gain 1). q3 is not in the run at all (-c counts it as zero).
RUN = """q1 Q0 d3 1 3.0 hand
q1 Q0 d1 2 2.5 hand
q1 Q0 dX 3 2.0 hand
q1 Q0 d2 4 1.5 hand
q2 Q0 d6 1 1.0 hand
q2 Q0 d5 2 0.5 hand
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture()
def hand(tmp_path):
    return write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)


def hand_values() -> dict[str, dict[str, float]]:
    """nDCG@10 (gain / log2(rank + 1)) and AP for the hand-made run, worked out term by term."""
    dcg_q1 = 0 / math.log2(2) + 2 / math.log2(3) + 0 / math.log2(4) + 1 / math.log2(5)
    idcg_q1 = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)  # ideal order: gains 2, 1, 1
    ndcg_q2 = (1 / math.log2(3)) / 1.0
    ap_q1 = (1 / 2 + 2 / 4) / 3  # relevant at ranks 2 and 4; 3 relevant in all (d4 missed)
    ap_q2 = (1 / 2) / 1
    return {"q1": {"nDCG@10": dcg_q1 / idcg_q1, "MAP": ap_q1, "R@100": 2 / 3},
            "q2": {"nDCG@10": ndcg_q2, "MAP": ap_q2, "R@100": 1.0},
            "q3": {"nDCG@10": 0.0, "MAP": 0.0, "R@100": 0.0}}


def test_measure_names():
    assert canonical_measure("ndcg_cut_10") == canonical_measure("ndcg_cut.10") == canonical_measure("nDCG@10") \
        == ("ndcg_cut", "10")
    assert canonical_measure("MAP") == ("map", None)
    assert canonical_measure("R@1000") == ("recall", "1000")
    assert canonical_measure("P_5") == ("P", "5")
    assert canonical_measure("iprec_at_recall_0.10") == ("iprec_at_recall", "0.10")
    assert [column_name(m) for m in ("ndcg_cut_10", "map", "recall_100", "recall.1000", "recip_rank", "bpref")] \
        == ["nDCG@10", "MAP", "R@100", "R@1000", "MRR", "bpref"]
    assert expand_measures(["map,ndcg_cut.5,10", "P_10"]) == ["map", "ndcg_cut.5", "ndcg_cut.10", "P_10"]


def test_evaluate_matches_hand_computation(hand):
    qrels, run = hand
    table = evaluate(qrels, {"hand": run}, measures=("ndcg_cut_10", "map", "recall_100"))
    assert list(table.columns) == ["nDCG@10", "MAP", "R@100"] and list(table.index) == ["hand"]
    expected = hand_values()
    for column in table.columns:
        mean = sum(v[column] for v in expected.values()) / 3  # -c: q3 (no run line) counts as zero
        assert table.loc["hand", column] == pytest.approx(mean, abs=5e-5)


def test_evaluate_per_query_and_several_runs(hand, tmp_path):
    qrels, run = hand
    perfect = write(tmp_path / "perfect.txt", "q1 Q0 d1 1 3 p\nq1 Q0 d2 2 2 p\nq1 Q0 d4 3 1 p\nq2 Q0 d5 1 1 p\n"
                    "q3 Q0 d9 1 1 p\n")
    table = evaluate(qrels, [run, perfect], measures=["nDCG@10", "MAP"])
    assert list(table.index) == ["run", "perfect"]
    assert table.loc["perfect"].tolist() == [1.0, 1.0]
    per_query = evaluate(qrels, {"hand": run}, measures=["nDCG@10", "MAP"], per_query=True)
    expected = hand_values()
    assert sorted(per_query.loc["hand"].index) == ["q1", "q2"]
    for qid in ("q1", "q2"):
        for column in ("nDCG@10", "MAP"):
            assert per_query.loc[("hand", qid), column] == pytest.approx(expected[qid][column], abs=5e-5)


@pytest.mark.skipif(not (SHARED / "cranfield" / "qrels.txt").exists(), reason="shared data not present")
def test_trec_eval_agrees_with_reference_code_on_cranfield(tmp_path):
    """Plumbing on real qrels: a shuffled run scored by trec_eval and by the textbook formulas."""
    qrels = read_qrels(SHARED / "cranfield" / "qrels.txt")
    all_docs = sorted({d for judged in qrels.values() for d in judged})
    rng = random.Random(7)
    lines, ndcg, ap, rec = [], [], [], []
    for qid, judged in qrels.items():
        pool = sorted(set(rng.sample(all_docs, 60)) | set(rng.sample(sorted(judged), max(1, len(judged) // 2))))
        rng.shuffle(pool)
        ranked = pool[:100]
        lines += [f"{qid} Q0 {doc} {rank} {1000 - rank} rand" for rank, doc in enumerate(ranked, 1)]
        gains = [judged.get(doc, 0) for doc in ranked]
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)
        dcg = sum(max(g, 0) / math.log2(r + 1) for r, g in enumerate(gains[:10], 1))
        idcg = sum(g / math.log2(r + 1) for r, g in enumerate(ideal[:10], 1))
        ndcg.append(dcg / idcg if idcg else 0.0)
        hits, precisions = 0, []
        for r, g in enumerate(gains, 1):
            if g > 0:
                hits += 1
                precisions.append(hits / r)
        ap.append(sum(precisions) / len(ideal) if ideal else 0.0)
        rec.append(hits / len(ideal) if ideal else 0.0)
    run = write(tmp_path / "cran.run", "\n".join(lines) + "\n")
    table = evaluate(SHARED / "cranfield" / "qrels.txt", {"rand": run}, ("ndcg_cut_10", "map", "recall_100"))
    judged_queries = [i for i, q in enumerate(qrels) if any(g > 0 for g in qrels[q].values())]
    n = len(judged_queries)
    assert table.loc["rand", "nDCG@10"] == pytest.approx(sum(ndcg[i] for i in judged_queries) / n, abs=5e-5)
    assert table.loc["rand", "MAP"] == pytest.approx(sum(ap[i] for i in judged_queries) / n, abs=5e-5)
    assert table.loc["rand", "R@100"] == pytest.approx(sum(rec[i] for i in judged_queries) / n, abs=5e-5)


@pytest.mark.parametrize("line, words", [
    ("q1 Q0 d1 1 2.0", "expected 6 columns"),
    ("q1 Q0 d1 one 2.0 tag", "rank 'one' is not an integer"),
    ("q1 Q0 d1 1 high tag", "score 'high' is not a number"),
    ("q1 Q0 d1 1 inf tag", "not finite"),
    ("q1 Q0 d3 9 0.1 tag", "appears twice"),
])
def test_malformed_run_line_names_file_and_line(hand, tmp_path, line, words):
    qrels, _ = hand
    run = write(tmp_path / "bad.run", RUN + line + "\n")
    with pytest.raises(InputError) as err:
        evaluate(qrels, {"bad": run})
    assert f"{run}:7: " in str(err.value) and words in str(err.value)


def test_bad_qrels_empty_run_and_unknown_measure(hand, tmp_path):
    qrels, run = hand
    bad = write(tmp_path / "bad.qrels", QRELS + "q4 0 d1 high\n")
    with pytest.raises(InputError, match=rf"{bad}:7: relevance 'high'"):
        evaluate(bad, {"x": run})
    with pytest.raises(InputError, match="empty run"):
        evaluate(qrels, {"x": write(tmp_path / "empty.run", "\n")})
    with pytest.raises(InputError, match="bogus"):
        evaluate(qrels, {"x": run}, measures=["bogus"])


def test_write_table_csv_and_markdown(hand, tmp_path):
    qrels, run = hand
    table = evaluate(qrels, {"hand": run}, measures=["nDCG@10", "MAP"])
    csv_path, md_path = write_table(table, tmp_path / "out" / "table")
    back = pd.read_csv(csv_path, index_col=0)
    assert list(back.columns) == ["nDCG@10", "MAP"]
    assert back.loc["hand"].tolist() == pytest.approx(table.loc["hand"].tolist(), abs=1e-4)
    md = md_path.read_text().splitlines()
    assert md[0] == "| run | nDCG@10 | MAP |" and md[1] == "|:---|---:|---:|"
    assert md[2] == f"| hand | {table.loc['hand', 'nDCG@10']:.4f} | {table.loc['hand', 'MAP']:.4f} |"
    with pytest.raises(InputError, match="already exists"):
        write_table(table, tmp_path / "out" / "table.csv")
    write_table(table, tmp_path / "out" / "table", overwrite=True)


def test_cli(hand, tmp_path, capsys):
    qrels, run = hand
    assert main(["--qrels", str(qrels), "--run", f"mine={run}", "--measures", "ndcg_cut_10,map",
                 "--output", str(tmp_path / "t")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "| run | nDCG@10 | MAP |" and "| mine |" in out
    assert (tmp_path / "t.csv").exists() and (tmp_path / "t.md").exists()
    assert main(["--qrels", str(qrels), "--run", str(run), "--output", str(tmp_path / "t")]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["--qrels", str(qrels), "--run", str(run), "--per-query", "--measures", "map"]) == 0
    assert "| run | q1 |" in capsys.readouterr().out
    bad = write(tmp_path / "bad.run", "q1 Q0 d1\n")
    assert main(["--qrels", str(qrels), "--run", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and f"{bad}:1" in err and len(err.strip().splitlines()) == 1


# ---- contrastive metrics


def test_nevir_categories_and_accuracy():
    rows = [
        (3, 1, 1, 3),  # q1 -> doc1, q2 -> doc2: correct
        (3, 1, 3, 1),  # both queries prefer doc1
        (1, 3, 1, 3),  # both queries prefer doc2
        (1, 3, 3, 1),  # each prefers the other's document: reversed
        (2, 2, 1, 3),  # q1 cannot separate the documents: tie
        {"q1_doc1": 5, "q1_doc2": 4, "q2_doc1": 0, "q2_doc2": 0.5},  # correct
    ]
    assert [nevir_category(*r) for r in rows[:5]] == ["correct", "prefers doc1 for both", "prefers doc2 for both",
                                                      "reversed", "tie"]
    result = nevir_pairwise_accuracy(rows)
    assert result["rows"] == 6 and result["correct"] == 2
    assert result["pairwise_accuracy"] == pytest.approx(2 / 6)
    assert (result["prefers doc1 for both"], result["prefers doc2 for both"], result["reversed"], result["tie"]) \
        == (1, 1, 1, 1)
    with pytest.raises(InputError):
        nevir_pairwise_accuracy([])
    with pytest.raises(InputError):
        nevir_pairwise_accuracy([(1, 2, 3)])


def test_excluir_metrics_by_hand(tmp_path):
    run = {
        "qa": {"p": 3, "n": 2, "x": 1},                      # pos 1st, neg 2nd
        "qb": {"x": 5, "n": 4, "p": 3},                      # pos 3rd, neg 2nd
        "qc": {"x": 1},                                      # both missing: not "pos above neg"
        "qd": {"z": 2, "p": 2, "n": 1},                      # tie broken by doc id: p 1st, z 2nd, n 3rd
        "qf": {"n": 9},                                      # neg 1st, pos missing
        "qg": {**{f"o{i:02d}": 20 - i for i in range(10)}, "p": 1},  # pos 11th (outside MRR@10), neg missing
    }                                                        # qe: query not in the run at all
    rows = [{"id": q, "query": "text", "pos_id": "p", "neg_id": "n"}
            for q in ("qa", "qb", "qc", "qd", "qe", "qf", "qg")]
    m = excluir_metrics(run, rows)
    n = 7
    assert m["queries"] == n
    assert m["R@1"] == pytest.approx(2 / n)                                 # qa, qd
    assert m["ΔR@1"] == pytest.approx(2 / n - 1 / n)                        # neg first only in qf
    mrr_pos = (1 + 1 / 3 + 1) / n                                           # qa, qb, qd
    mrr_neg = (1 / 2 + 1 / 2 + 1 / 3 + 1) / n                               # qa, qb, qd, qf
    assert m["MRR@10"] == pytest.approx(mrr_pos)
    assert m["ΔMRR@10"] == pytest.approx(mrr_pos - mrr_neg)
    assert m["RR"] == pytest.approx(3 / n)                                  # qa, qd, qg
    assert m["RR ties"] == pytest.approx(2 / n)                             # qc, qe: neither retrieved
    assert m["RR losses"] == pytest.approx(2 / n)                           # qb, qf
    path = write(tmp_path / "run.txt", "".join(
        f"{q} Q0 {d} {r} {s} t\n" for q, docs in run.items()
        for r, (d, s) in enumerate(sorted(docs.items(), key=lambda kv: (-kv[1], kv[0])), 1)))
    assert excluir_metrics(path, rows) == m


def test_excluir_rr_counts_equal_scores_as_ties_whatever_the_docids():
    rows = [{"id": q, "query": "t", "pos_id": pos, "neg_id": neg}
            for q, pos, neg in (("q1", "a", "b"), ("q2", "b", "a"), ("q3", "a", "b"))]
    run = {"q1": {"a": 2.0, "b": 2.0}, "q2": {"a": 2.0, "b": 2.0}, "q3": {"a": 3.0, "b": 1.0}}
    m = excluir_metrics(run, rows)
    # q1 and q2 tie (docid order would have made one a win and the other a loss); q3 is a win
    assert (m["RR"], m["RR ties"], m["RR losses"]) == pytest.approx((1 / 3, 2 / 3, 0.0))


def test_contrastive_readers(tmp_path):
    good = write(tmp_path / "n.jsonl", '{"id": "1", "q1": "a", "doc1": "b", "q2": "c", "doc2": "d"}\n')
    assert read_nevir(good)[0]["doc2"] == "d"
    bad = write(tmp_path / "e.jsonl", '{"id": "1", "query": "q", "pos_id": "p", "neg_id": "n"}\n'
                '{"id": "2", "query": "q", "pos_id": "p"}\n')
    with pytest.raises(InputError, match=rf"{bad}:2: missing or empty field\(s\) neg_id"):
        read_excluir(bad)
    if (SHARED / "excluir" / "dev.jsonl").exists():
        rows = read_excluir(SHARED / "excluir" / "dev.jsonl")
        assert all(r["pos_id"] != r["neg_id"] for r in rows)
        assert len(read_nevir(SHARED / "nevir" / "dev.jsonl")) > 0


# ---- in-process measures against trec_eval itself (Pyserini's bundled trec_eval, run through Java: the only
# place it still runs) on runs made from the shared collections

REFERENCE_MEASURES = ["ndcg_cut.10", "ndcg_cut.100", "map", "recall.100", "recall.1000", "P.10", "recip_rank",
                      "bpref", "Rprec", "num_q", "num_rel", "num_rel_ret", "gm_map", "success.1"]
COLLECTIONS = {"cranfield": ("topics.tsv", "qrels.txt"), "scifact": ("topics.train.tsv", "qrels.train.txt"),
               "npl": ("topics.tsv", "qrels.txt")}


def tfidf_run(folder: Path, topics_name: str, path: Path) -> Path:
    """A TF-IDF run (top 1000, scores rounded to 2 decimals so that many tie) from a shared collection; every
    seventh query is left out (trec_eval -c counts it as zero) and one unjudged query is added."""
    import json
    import re

    import numpy as np
    import scipy.sparse as sp

    docs = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")]
    topics = [line.rstrip("\n").split("\t", 1) for line in (folder / topics_name).open(encoding="utf-8")]
    vocab: dict[str, int] = {}

    def bag(text: str) -> dict[int, int]:
        out: dict[int, int] = {}
        for token in re.findall(r"\w+", text.lower()):
            col = vocab.setdefault(token, len(vocab))
            out[col] = out.get(col, 0) + 1
        return out

    def matrix(bags: list[dict[int, int]]):
        rows = [i for i, b in enumerate(bags) for _ in b]
        cols = [c for b in bags for c in b]
        vals = [float(v) for b in bags for v in b.values()]
        return sp.csr_matrix((vals, (rows, cols)), shape=(len(bags), len(vocab)))

    doc_bags = [bag(f"{d.get('title', '')} {d['text']}") for d in docs]
    query_bags = [bag(text) for _, text in topics]
    d, q = matrix(doc_bags), matrix(query_bags)
    idf = np.log(len(docs) / (1 + np.asarray((d > 0).sum(axis=0)).ravel()))
    scores = (q.multiply(idf) @ d.T).toarray()
    lines = []
    for i, (qid, _) in enumerate(topics + [["unjudged-query", ""]]):
        if i % 7 == 3 or i >= len(topics):
            continue
        rounded = np.round(scores[i], 2)
        for rank, row in enumerate(np.lexsort((np.arange(len(docs)), -rounded))[:1000], 1):
            lines.append(f"{qid} Q0 {docs[row]['id']} {rank} {rounded[row]:.2f} tfidf")
    lines.append(f"unjudged-query Q0 {docs[0]['id']} 1 1.00 tfidf")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def trec_eval_reference(args: list[str]) -> dict[str, dict[str, float]]:
    """``{qid or "all": {measure: value}}`` printed by Pyserini's trec_eval (run through Java)."""
    import subprocess

    from lsr_lucene.jvm import runtime as jvm

    home = jvm.prepare_environment()
    proc = subprocess.run([str(home / "bin" / "java"), "-cp", str(jvm.anserini_jar()), "trec_eval", *args],
                          capture_output=True, text=True, timeout=600, check=True)
    parsed: dict[str, dict[str, float]] = {}
    for line in proc.stdout.splitlines():
        measure, qid, value = line.split()
        if measure != "runid":
            parsed.setdefault(qid, {})[measure] = float(value)
    return parsed


@pytest.mark.parametrize("collection", sorted(COLLECTIONS))
def test_in_process_measures_equal_trec_eval(collection, tmp_path):
    folder = SHARED / collection
    topics_name, qrels_name = COLLECTIONS[collection]
    if not (folder / qrels_name).exists():
        pytest.skip("shared data not present")
    run = tfidf_run(folder, topics_name, tmp_path / f"{collection}.run")
    qrels = folder / qrels_name
    measure_args = [arg for m in ("ndcg_cut.10,100", "map", "recall.100,1000", "P.10", "recip_rank", "bpref",
                                  "Rprec", "num_q", "num_rel", "num_rel_ret", "gm_map", "success.1")
                    for arg in ("-m", m)]
    reference = trec_eval_reference(["-c", *measure_args, str(qrels), str(run)])["all"]
    ours = evaluate(qrels, {"tfidf": run}, REFERENCE_MEASURES).loc["tfidf"]
    assert reference["num_q"] == len(read_qrels(qrels)) and 0 < reference["map"] < 1
    for measure in REFERENCE_MEASURES:  # trec_eval prints 4 decimals
        key = measure.replace(".", "_")
        assert ours[column_name(measure)] == pytest.approx(reference[key], abs=5.01e-5), measure
    per_query_ref = trec_eval_reference(["-c", "-q", "-m", "ndcg_cut.10", "-m", "map", str(qrels), str(run)])
    per_query = evaluate(qrels, {"tfidf": run}, ["ndcg_cut.10", "map"], per_query=True).loc["tfidf"]
    assert sorted(per_query.index) == sorted(q for q in per_query_ref if q != "all")
    for qid, row in per_query.iterrows():
        assert row["nDCG@10"] == pytest.approx(per_query_ref[qid]["ndcg_cut_10"], abs=5.01e-5)
        assert row["MAP"] == pytest.approx(per_query_ref[qid]["map"], abs=5.01e-5)


def test_eval_command_starts_no_jvm(hand):
    import subprocess
    import sys

    qrels, run = hand
    code = ("import sys; from lsr_lucene.eval.cli import main; rc = main(['--qrels', sys.argv[1], '--run', "
            "sys.argv[2]]); print('jnius' in sys.modules, rc)")
    proc = subprocess.run([sys.executable, "-c", code, str(qrels), str(run)], capture_output=True, text=True)
    assert proc.stdout.splitlines()[-1] == "False 0", proc.stderr


# ---- trec_eval's form, repeated measures, --baseline (issue 51) ------------------------------------------------

TREC_FORM_MEASURES = ["-m", "ndcg_cut.10", "-m", "map", "-m", "num_q", "-m", "P.1,2", "-m", "recall.100",
                      "-m", "num_rel_ret", "-m", "recip_rank", "-m", "runid"]


def trec_eval_stdout(args: list[str]) -> str:
    """What Pyserini's trec_eval (the C program, run through Java) prints."""
    import subprocess

    from lsr_lucene.jvm import runtime as jvm

    home = jvm.prepare_environment()
    return subprocess.run([str(home / "bin" / "java"), "-cp", str(jvm.anserini_jar()), "trec_eval", *args],
                          capture_output=True, text=True, timeout=600, check=True).stdout


@pytest.mark.parametrize("flags", [[], ["-q", "-c"]])
def test_trec_eval_form_prints_what_trec_eval_prints(hand, capsys, flags):
    """``lsr-lucene eval -m ... QRELS RUN`` prints trec_eval's lines byte for byte (its measure order, 22-character
    names, counts as integers, -q per-query lines in qid string order, -c averaging over every qrels query)."""
    qrels, run = hand
    args = [*flags, *TREC_FORM_MEASURES, str(qrels), str(run)]
    assert main(args) == 0
    ours = capsys.readouterr().out
    assert ours == trec_eval_stdout(args)
    assert ("num_q                 \tall\t3\n" if "-c" in flags else "num_q                 \tall\t2\n") in ours


def test_repeated_measures_are_counted_once(hand, capsys):
    qrels, run = hand
    assert main(["--qrels", str(qrels), "--run", str(run), "--measures", "map", "map", "nDCG@10",
                 "ndcg_cut_10"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header == "| run | MAP | nDCG@10 |"
    assert main(["-m", "map", "-m", "map", "-m", "MAP", str(qrels), str(run)]) == 0
    assert capsys.readouterr().out.count("map") == 1


def test_baseline_adds_paired_t_test_columns(hand, tmp_path, capsys):
    """--baseline: queries above / below the baseline and the two-sided paired t-test p-value over every qrels query
    (q3, answered by neither run, counts 0 for both), checked against the t statistic worked out here."""
    from scipy.stats import t as student

    qrels, run = hand
    other = write(tmp_path / "other.txt", "q1 Q0 d1 1 3.0 o\nq1 Q0 d3 2 2.0 o\nq2 Q0 d5 1 1.0 o\n")
    assert main(["--qrels", str(qrels), "--run", f"base={run}", "--run", f"other={other}", "--measures", "map",
                 "--baseline", "base", "--output", str(tmp_path / "table")]) == 0
    capsys.readouterr()
    table = pd.read_csv(tmp_path / "table.csv", index_col="run")
    ap_base = [hand_values()[q]["MAP"] for q in ("q1", "q2", "q3")]
    ap_other = [(1 / 1) / 3, 1.0, 0.0]  # q1: d1 relevant at rank 1 of 3 relevant; q2: d5 at rank 1
    diffs = [a - b for a, b in zip(ap_other, ap_base)]
    mean = sum(diffs) / 3
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 2)
    p_value = 2 * student.sf(abs(mean / (sd / math.sqrt(3))), df=2)
    assert table.loc["other", "MAP p-value"] == pytest.approx(p_value, abs=1e-4)
    assert (table.loc["other", "MAP +"], table.loc["other", "MAP -"]) == (1, 0)  # q2 better, q1 and q3 equal
    assert math.isnan(table.loc["base", "MAP p-value"])
    assert main(["--qrels", str(qrels), "--run", str(run), "--baseline", "nope"]) == 2
    assert "--baseline nope: no run of that name" in capsys.readouterr().err


def test_trec_eval_form_and_qids_errors(hand, tmp_path, capsys):
    import os

    qrels, run = hand
    for args, words in (([str(qrels)], "a qrels file and one run"),
                        ([str(qrels), str(run), "--run", str(run)], "--run: not with trec_eval's form"),
                        (["-q", "--qrels", str(qrels), "--run", str(run)], "-q: trec_eval's options, for its form"),
                        ([], "give --qrels QRELS")):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("error: ") and words in err and err.count("\n") == 1, err
    fifo = tmp_path / "qids"
    os.mkfifo(fifo)  # what bash's <(...) hands over
    assert main(["--qrels", str(qrels), "--run", str(run), "--qids", str(fifo)]) == 2
    assert "a pipe" in capsys.readouterr().err


# ---- trec_eval's form is trec_eval (issue 67): the same output as the binary for the same arguments --------------

TREC_EVAL_ARGUMENTS = [[], ["-m", "all_trec"], ["-q"], ["-c"], ["-J"], ["-M", "10"], ["-m", "recall.100", "-m",
                       "recall.1000"], ["-q", "-c", "-m", "all_trec"], ["-l", "2", "-m", "ndcg_cut.5,10", "-m", "map"],
                       ["--measure", "P.10"]]


@pytest.fixture(scope="module")
def cranfield_run(tmp_path_factory):
    folder = SHARED / "cranfield"
    if not folder.is_dir():
        pytest.skip("../shared/data/cranfield is not here")
    return folder / "qrels.txt", tfidf_run(folder, "topics.tsv", tmp_path_factory.mktemp("te") / "tfidf.run")


@pytest.mark.parametrize("arguments", TREC_EVAL_ARGUMENTS, ids=" ".join)
def test_trec_eval_form_equals_the_trec_eval_binary(hand, cranfield_run, capsys, arguments):
    """trec_eval's default set, all_trec, -q, -c, -J, -M, -l and repeated -m (trec_eval's own rule: recall.100
    -m recall.1000 gives recall_100 alone) print what Pyserini's trec_eval prints, byte for byte, on the hand-made
    run and on a TF-IDF run of Cranfield (ties, a query left out, an unjudged query)."""
    for qrels, run in (hand, cranfield_run):
        args = [*arguments, str(qrels), str(run)]
        assert main(args) == 0
        captured = capsys.readouterr()
        reference = trec_eval_stdout(args)
        assert captured.out == reference and captured.err == ""
        if not arguments:  # trec_eval's official set, not the table's four measures
            assert all(f"{m} " in reference for m in ("gm_map", "bpref", "iprec_at_recall_0.50", "P_1000"))


def test_trec_eval_form_reads_stdin_pipes_and_process_substitution(hand, tmp_path):
    """A run (or qrels) from ``-``, a pipe or ``<(...)``, as trec_eval's users put it in a shell pipeline."""
    import shlex
    import subprocess
    import sys

    qrels, run = (shlex.quote(str(p)) for p in hand)
    expected = trec_eval_stdout(["-q", str(hand[0]), str(hand[1])])
    ours = f"{shlex.quote(sys.executable)} -m lsr_lucene.eval -q"
    for command in (f"cat {run} | {ours} {qrels} -", f"{ours} {qrels} - < {run}", f"cat {qrels} | {ours} - {run}",
                    f"{ours} <(cat {qrels}) <(cat {run})", f"gzip -c {run} > {tmp_path}/run.gz && "
                    f"{ours} {qrels} {tmp_path}/run.gz"):
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout == expected, (command, done.stderr)
    done = subprocess.run(["bash", "-c", f"{ours} - - < {run}"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.startswith("error: QRELS and RUN cannot both be -")


def test_trec_eval_form_errors_are_one_line(hand, tmp_path, capsys):
    qrels, run = hand
    for args, words in ((["-m", "bogus", str(qrels), str(run)], "illegal measure 'bogus'"),
                        ([str(qrels), str(tmp_path / "nope.run")], "nope.run: no such run file"),
                        (["-J", "--qrels", str(qrels), "--run", str(run)], "-J: trec_eval's options")):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("error: ") and words in err and err.count("\n") == 1, err


def test_measure_is_trec_evals_long_name_for_m_not_a_positional(hand, capsys):
    """``eval --measure P_10 QRELS RUN`` (trec_eval's --measure) is -m P.10, not a third file."""
    qrels, run = hand
    assert main(["--measure", "P_10", str(qrels), str(run)]) == 0
    assert capsys.readouterr().out == trec_eval_stdout(["-m", "P.10", str(qrels), str(run)])


def test_the_table_form_says_it_is_the_table(hand, capsys):
    qrels, run = hand
    assert main(["--qrels", str(qrels), "--run", str(run)]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == "| run | nDCG@10 | MAP | R@100 | R@1000 |"
    assert "lsr_lucene's table" in build_parser_help() and "the trec_eval binary itself" in build_parser_help()


def build_parser_help() -> str:
    from lsr_lucene.eval.cli import build_parser

    return " ".join(build_parser().format_help().split())


def test_without_the_binary_pytrec_eval_gives_the_lines_it_can_and_says_so(hand, capsys, monkeypatch):
    from lsr_lucene.eval import trec_eval_binary

    monkeypatch.setattr(trec_eval_binary, "available", lambda: False)  # e.g. Linux on ARM: the jar has no binary
    qrels, run = hand
    args = ["-q", "-c", *TREC_FORM_MEASURES, str(qrels), str(run)]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert captured.out == trec_eval_stdout(args) and captured.err.startswith("note: no trec_eval binary here")
    assert main(["-J", str(qrels), str(run)]) == 2
    assert "-J: needs the trec_eval binary" in capsys.readouterr().err
