"""``lsr-lucene eval --contrastive``: hand-made pairs and runs with known answers (ties included), bad input, and
equality with the contrastive experiments' figures on a small case."""
from __future__ import annotations

import csv
import json

import pytest

from lsr_lucene.eval.cli import main
from lsr_lucene.io.runs import write_run

from test_contrastive import DOCS, EXCLUIR, encoders  # tests/ is on sys.path (rootdir conftest)


def jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run_file(path, run):
    write_run(run, path, "t")
    return path


def read_csv(stem):
    with open(f"{stem}.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


EXCLUIR_ROWS = [{"id": q, "query": "x", "pos_id": "p", "neg_id": "n"} for q in ("q1", "q2", "q3", "q4")]
EXCLUIR_RUN = {
    "q1": {"p": 3.0, "n": 2.0},            # win; pos 1st, neg 2nd
    "q2": {"p": 5.0, "n": 5.0},            # equal scores: a tie (in run order n is 1st, p 2nd: docid order)
    "q3": {"x": 9.0, "n": 4.0, "p": 1.0},  # loss; pos 3rd, neg 2nd
    "q4": {"x": 1.0},                      # neither retrieved: a tie too
}


def test_excluir_style_figures_by_hand(tmp_path, capsys):
    pairs = jsonl(tmp_path / "pairs.jsonl", EXCLUIR_ROWS)
    run = run_file(tmp_path / "a.run", EXCLUIR_RUN)
    assert main(["--contrastive", str(pairs), "--run", f"sys={run}", "--output", str(tmp_path / "t")]) == 0
    out = capsys.readouterr().out
    assert "RR ties" in out and "| sys |" in out
    row = read_csv(tmp_path / "t")[0]
    figures = {k: float(v) for k, v in row.items() if k != "run"}
    assert figures["queries"] == 4
    assert figures["R@1"] == pytest.approx(1 / 4, abs=1e-4)                                    # q1
    assert figures["ΔR@1"] == pytest.approx(1 / 4 - 1 / 4)                             # neg first in q2
    assert figures["MRR@10"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 4, abs=1e-4)
    assert figures["ΔMRR@10"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 4 - (1 / 2 + 1 + 1 / 2) / 4, abs=1e-4)
    assert (figures["RR"], figures["RR ties"], figures["RR losses"]) == pytest.approx((1 / 4, 2 / 4, 1 / 4))
    assert (figures["tied"], figures["neither retrieved"]) == (1, 1)
    assert (tmp_path / "t.md").read_text().startswith("RR: share of queries")


def test_excluir_per_query(tmp_path, capsys):
    pairs = jsonl(tmp_path / "pairs.jsonl", EXCLUIR_ROWS)
    run = run_file(tmp_path / "a.run", EXCLUIR_RUN)
    assert main(["--contrastive", str(pairs), "--run", str(run), "--per-query", "--output", str(tmp_path / "t")]) == 0
    rows = {r["qid"]: r for r in read_csv(tmp_path / "t")}
    assert [rows[q]["outcome"] for q in ("q1", "q2", "q3", "q4")] == ["win", "tie", "loss", "tie"]
    assert (rows["q2"]["pos rank"], rows["q2"]["neg rank"]) == ("2", "1")
    assert (rows["q4"]["pos rank"], rows["q4"]["pos score"]) == ("-", "-")


NEVIR_ROWS = [{"id": r, "q1": "a", "doc1": "b", "q2": "c", "doc2": "d"} for r in ("r1", "r2", "r3")]
NEVIR_RUN = {
    "r1/q1": {"r1/1": 5.0, "r1/2": 3.0}, "r1/q2": {"r1/2": 4.0, "r1/1": 2.0},  # correct
    "r2/q1": {"r2/1": 5.0, "r2/2": 5.0}, "r2/q2": {"r2/2": 4.0, "r2/1": 1.0},  # q1 cannot separate them: tie
    "r3/q1": {"r3/1": 5.0, "r3/2": 3.0}, "r3/q2": {"r3/1": 6.0, "r3/2": 2.0},  # doc1 for both
}


def test_nevir_pairwise_accuracy_and_per_query_figures_by_hand(tmp_path):
    pairs = jsonl(tmp_path / "nevir.jsonl", NEVIR_ROWS)
    run = run_file(tmp_path / "n.run", NEVIR_RUN)
    assert main(["--contrastive", str(pairs), "--run", str(run), "--output", str(tmp_path / "t")]) == 0
    row = read_csv(tmp_path / "t")[0]
    assert float(row["pairwise_accuracy"]) == pytest.approx(1 / 3, abs=1e-4)  # tables: 4 decimals
    assert [int(row[c]) for c in ("rows", "correct", "tie", "prefers doc1 for both", "prefers doc2 for both",
                                  "reversed")] == [3, 1, 1, 1, 0, 0]
    # the 6 queries as ExcluIR-style pairs: pos first in all but r3/q2 (r2/q1's tie goes to r2/1 by docid)
    assert float(row["queries"]) == 6 and float(row["R@1"]) == pytest.approx(5 / 6, abs=1e-4)
    assert (float(row["RR"]), float(row["RR ties"])) == pytest.approx((4 / 6, 1 / 6), abs=1e-4)
    assert main(["--contrastive", str(pairs), "--run", str(run), "--per-query", "--output",
                 str(tmp_path / "q")]) == 0
    assert [r["category"] for r in read_csv(tmp_path / "q")] == ["correct", "tie", "prefers doc1 for both"]


@pytest.mark.parametrize("case, expect", [
    ("shape", r"pairs.jsonl:2: unknown contrastive row shape \(fields id, query\)"),
    ("missing", r"a.run: no line for query q4 of .*pairs.jsonl:4; .*--missing-as-miss"),
    ("measures", r"--measures, -m and --baseline apply to --qrels"),
])
def test_bad_input_is_one_error_line(tmp_path, capsys, case, expect):
    rows = EXCLUIR_ROWS if case != "shape" else [{"id": "q1", "query": "x"}]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(("\n" if case == "shape" else "") + "".join(json.dumps(r) + "\n" for r in rows))
    run = run_file(tmp_path / "a.run", {q: d for q, d in EXCLUIR_RUN.items() if q != "q4"})
    extra = ["--measures", "map"] if case == "measures" else []
    assert main(["--contrastive", str(pairs), "--run", str(run), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    import re
    assert re.search(expect, err[0]), err[0]


def test_missing_queries_count_as_misses_when_asked(tmp_path):
    pairs = jsonl(tmp_path / "pairs.jsonl", EXCLUIR_ROWS)
    run = run_file(tmp_path / "a.run", {q: d for q, d in EXCLUIR_RUN.items() if q != "q4"})
    assert main(["--contrastive", str(pairs), "--run", str(run), "--missing-as-miss", "--output",
                 str(tmp_path / "t")]) == 0
    row = read_csv(tmp_path / "t")[0]
    assert float(row["queries"]) == 4 and float(row["neither retrieved"]) == 1   # q4 as in the full run


def test_equals_the_experiments_figures(tmp_path):
    from lsr_lucene.compose.backends import ExactBackend
    from lsr_lucene.compose.execute import compose, execute
    from scripts.negation.contrastive_configs import Config
    from scripts.negation.excluir import EXCLUIR_COLUMNS, excluir_runs, excluir_table
    from scripts.negation.nevir import nevir_compositions, nevir_scores, nevir_table

    configs = [Config("vanilla"), Config("disentangled"), Config("fusion", 1.0)]
    backend = ExactBackend({d: v for d, v in DOCS.items() if "/" not in d}.items())
    runs = excluir_runs(EXCLUIR, configs, backend, encoders(), 100, progress=False)
    expected = excluir_table(runs, EXCLUIR)
    pairs = jsonl(tmp_path / "excluir.jsonl", EXCLUIR)
    args = ["--contrastive", str(pairs), "--output", str(tmp_path / "e")]
    names = {f"r{i}": label for i, label in enumerate(runs)}  # labels hold "=" (fusion λ=1)
    for name, label in names.items():
        args += ["--run", f"{name}={run_file(tmp_path / f'{name}.run', runs[label])}"]
    assert main(args) == 0
    got = {names[r["run"]]: r for r in read_csv(tmp_path / "e")}
    for label in runs:
        for column in EXCLUIR_COLUMNS:
            assert float(got[label][column]) == pytest.approx(expected.loc[label, column], abs=1e-4), (label, column)

    # NevIR: the experiment scores each row's two documents exactly; a run that searched the NevIR documents as a
    # collection (vector operations) holds the same scores under the same ids
    # n1/1 = coffee + sugar, n1/2 = coffee: q1 wants doc1; q2 excludes sugar, so wants doc2
    rows = [{"id": "n1", "q1": "sugar", "doc1": "-", "q2": "coffee without sugar", "doc2": "-"}]
    nevir_backend = ExactBackend({d: v for d, v in DOCS.items() if "/" in d}.items())
    vector_configs = configs[:2]
    expected = nevir_table(nevir_scores(rows, vector_configs, nevir_backend, encoders(), 100))
    comps = nevir_compositions(rows)
    args = ["--contrastive", str(jsonl(tmp_path / "nevir.jsonl", rows)), "--output", str(tmp_path / "n")]
    for config in vector_configs:
        plans = compose(comps, config.settings(), encoders()[config.mode])
        run = execute([c.qid for c in comps], plans, nevir_backend, 100, hits=10)
        args += ["--run", f"{config.label}={run_file(tmp_path / f'n-{config.label}.run', run)}"]
    assert main(args) == 0
    got = {r["run"]: r for r in read_csv(tmp_path / "n")}
    assert set(got) == {c.label for c in vector_configs}
    assert (float(got["vanilla"]["prefers doc1 for both"]), float(got["disentangled"]["correct"])) == (1, 1)
    for label, row in got.items():
        for column in ("pairwise_accuracy", "correct", "prefers doc1 for both", "prefers doc2 for both", "reversed",
                       "tie"):
            assert float(row[column]) == pytest.approx(float(expected.loc[label, column]), abs=1e-4), (label, column)
