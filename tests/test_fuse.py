"""Fusion (lsr-lucene fuse): RRF, min-max and z-score linear fusion against hand-computed scores, ties by
docid, agreement with pyserini.fusion, fitting on training topics only, and one error line for bad input."""
from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from lsr_lucene.cli import run_main
from lsr_lucene.eval.trec import evaluate
from lsr_lucene.io.runs import read_run
from lsr_lucene.fuse import fit as fit_module
from lsr_lucene.fuse.cli import main as fuse_main
from lsr_lucene.fuse.topics import split_ids

A = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
B = {"q1": {"d3": 5.0, "d1": 4.0, "d4": 1.0}}


def write_run(path: Path, run: dict, shuffle: bool = False) -> Path:
    lines = []
    for qid, docs in run.items():
        ranked = sorted(docs, key=lambda d: (-docs[d], d))
        lines += [f"{qid} Q0 {d} {r} {docs[d]} t\n" for r, d in enumerate(ranked, 1)]
    if shuffle:
        random.Random(0).shuffle(lines)
    path.write_text("".join(lines))
    return path


def fused(tmp_path: Path, *args: str, runs=(A, B)) -> list[tuple[str, str, float]]:
    paths = [write_run(tmp_path / f"{n}.run", r) for n, r in zip("ab", runs)]
    out = tmp_path / "fused.run"
    assert run_main(fuse_main, [f"--run=a={paths[0]}", f"--run=b={paths[1]}", "--output", str(out),
                                "--overwrite", *args]) == 0
    rows = [line.split() for line in out.read_text().splitlines()]
    assert [int(r[3]) for r in rows if r[0] == "q1"] == list(range(1, 1 + sum(r[0] == "q1" for r in rows)))
    return [(r[0], r[2], float(r[4])) for r in rows]


def test_rrf_by_hand(tmp_path):
    # ranks: a = d1 1, d2 2, d3 3; b = d3 1, d1 2, d4 3
    expected = {"d1": 1 / 61 + 1 / 62, "d3": 1 / 63 + 1 / 61, "d2": 1 / 62, "d4": 1 / 63}
    got = fused(tmp_path, "--method", "rrf")
    assert [d for _, d, _ in got] == ["d1", "d3", "d2", "d4"]
    for _, doc, score in got:
        assert score == pytest.approx(expected[doc], abs=1e-9)


def test_weighted_rrf_and_k_by_hand(tmp_path):
    expected = {"d1": 1 / 11 + 3 / 12, "d3": 1 / 13 + 3 / 11, "d2": 1 / 12, "d4": 3 / 13}
    got = fused(tmp_path, "--method", "rrf", "--rrf-k", "10", "--weight", "b=3")
    assert [d for _, d, _ in got] == ["d3", "d1", "d4", "d2"]
    for _, doc, score in got:
        assert score == pytest.approx(expected[doc], abs=1e-9)


def test_linear_minmax_by_hand(tmp_path):
    # min-max: a = d1 1, d2 .5, d3 0; b = d3 1, d1 .75, d4 0; a run missing a document gives it 0
    expected = {"d1": 0.5 * 1 + 0.75, "d2": 0.5 * 0.5 + 0, "d3": 0.5 * 0 + 1, "d4": 0 + 0}
    got = fused(tmp_path, "--method", "linear", "--weight", "a=0.5")
    assert [d for _, d, _ in got] == ["d1", "d3", "d2", "d4"]
    for _, doc, score in got:
        assert score == pytest.approx(expected[doc], abs=1e-9)


def test_linear_raw_scores_missing_gets_the_runs_lowest(tmp_path):
    expected = {"d1": 3 + 4, "d2": 2 + 1, "d3": 1 + 5, "d4": 1 + 1}
    got = fused(tmp_path, "--method", "linear", "--normalisation", "none")
    assert {d: s for _, d, s in got} == pytest.approx(expected)


def test_zscore_by_hand(tmp_path):
    za = {"d1": 1 / math.sqrt(2 / 3), "d2": 0.0, "d3": -1 / math.sqrt(2 / 3)}
    mean_b, std_b = 10 / 3, math.sqrt(78 / 27)
    zb = {d: (s - mean_b) / std_b for d, s in B["q1"].items()}
    expected = {"d1": za["d1"] + zb["d1"], "d2": za["d2"] + zb["d4"], "d3": za["d3"] + zb["d3"],
                "d4": za["d3"] + zb["d4"]}  # absent: the run's lowest z-score
    got = fused(tmp_path, "--method", "zscore")
    assert [d for _, d, _ in got] == ["d1", "d3", "d2", "d4"]
    for _, doc, score in got:
        assert score == pytest.approx(expected[doc], abs=1e-8)


def test_ties_by_docid(tmp_path):
    # x and y swap places between the runs: equal RRF scores; "d10" < "d9" as strings (Anserini's order)
    got = fused(tmp_path, "--method", "rrf", runs=({"q": {"d9": 2.0, "d10": 1.0}}, {"q": {"d10": 2.0, "d9": 1.0}}))
    assert [d for _, d, _ in got] == ["d10", "d9"] and got[0][2] == got[1][2]
    # ranks come from scores (ties by docid), not from the file's line order or rank column
    shuffled = write_run(tmp_path / "s.run", {"q": {"b": 1.0, "a": 1.0, "c": 0.5}}, shuffle=True)
    other = write_run(tmp_path / "o.run", {"q": {"c": 1.0}})
    out = tmp_path / "t.run"
    assert run_main(fuse_main, ["--run", f"s={shuffled}", "--run", f"o={other}", "--output", str(out),
                                "--weight", "o=0.01"]) == 0
    assert [line.split()[2] for line in out.read_text().splitlines()] == ["a", "b", "c"]


def test_depth_and_hits(tmp_path):
    got = fused(tmp_path, "--method", "rrf", "--depth", "1", "--hits", "2")
    # depth 1: only d1 (from a) and d3 (from b) count, each 1/61: tie by docid
    assert [(d, s) for _, d, s in got] == [("d1", pytest.approx(1 / 61)), ("d3", pytest.approx(1 / 61))]


def random_runs(n_queries=5, n_docs=30, seed=1) -> list[dict]:
    rng = random.Random(seed)
    return [{f"q{q}": {f"doc{d}": round(rng.uniform(-5, 20), 4) for d in rng.sample(range(n_docs), 20)}
             for q in range(n_queries)} for _ in range(3)]


@pytest.mark.parametrize("method", ["rrf", "normalize"])
def test_matches_pyserini_fusion(tmp_path, method):
    from pyserini.fusion import normalize, reciprocal_rank_fusion
    from pyserini.trectools import TrecRun

    runs = random_runs()
    paths = [write_run(tmp_path / f"r{i}.run", run) for i, run in enumerate(runs)]
    ours = tmp_path / "ours.run"
    args = ["--method", "rrf"] if method == "rrf" else ["--method", "linear", "--normalisation", "minmax"]
    assert run_main(fuse_main, [*(f"--run=r{i}={p}" for i, p in enumerate(paths)), *args, "--output",
                                str(ours)]) == 0
    trec_runs = [TrecRun(str(p)) for p in paths]
    theirs = (reciprocal_rank_fusion(trec_runs, rrf_k=60, depth=1000, k=1000) if method == "rrf"
              else normalize(trec_runs, depth=1000, k=1000))
    expected = {(str(r.topic), r.docid): r.score for r in theirs.run_data.itertuples()}
    got = read_run(ours)
    assert {(q, d): s for q, docs in got.items() for d, s in docs.items()} == pytest.approx(expected, abs=1e-8)


# ---------------------------------------------------------------- fitting on training topics only


def fit_fixture(tmp_path: Path) -> dict[str, Path]:
    """Two runs over 8 queries: run a ranks d0 first (relevant for the train queries q0-q3), run b ranks d5
    first and d0 last (d5 is relevant for the eval queries q4-q7): on the train queries only a alone is perfect,
    while the eval judgements would pull the fit towards b if the fit could see them."""
    a, b, qrels = {}, {}, []
    for i in range(8):
        q = f"q{i}"
        docs = [f"{q}d{j}" for j in range(10)]
        a[q] = {d: 10.0 - j for j, d in enumerate(docs)}
        b[q] = {d: float(j) for j, d in enumerate(docs)}
        b[q][docs[5]], b[q][docs[0]] = 20.0, -1.0
        rel = docs[0] if i < 4 else docs[5]
        qrels.append(f"{q} 0 {rel} 1\n")
    paths = {"a": write_run(tmp_path / "a.run", a), "b": write_run(tmp_path / "b.run", b)}
    (tmp_path / "qrels.all.txt").write_text("".join(qrels))
    (tmp_path / "qrels.train.txt").write_text("".join(qrels[:4]))
    (tmp_path / "topics.train.tsv").write_text("".join(f"q{i}\tquery {i}\n" for i in range(4)))
    (tmp_path / "topics.eval.tsv").write_text("".join(f"q{i}\tquery {i}\n" for i in range(4, 8)))
    return paths


def test_fit_sees_training_topics_only(tmp_path, monkeypatch, capsys):
    paths = fit_fixture(tmp_path)
    seen: list[set] = []
    real = fit_module.evaluator

    class Spy:  # trec_eval's judge as fit uses it: the qrels it is made with and every run it scores
        def __init__(self, qrels, measures):
            self.judge, self.qrels = real(qrels, measures), set(qrels)

        def evaluate(self, run):
            seen.append(self.qrels | set(run))
            return self.judge.evaluate(run)

    monkeypatch.setattr(fit_module, "evaluator", Spy)
    eval_qrels = tmp_path / "qrels.eval.txt"  # evaluation judgements exist only in qrels.all, never passed
    setting = tmp_path / "setting.json"
    assert run_main(fuse_main, ["--run", f"a={paths['a']}", "--run", f"b={paths['b']}", "--method", "linear",
                                "--fit", str(tmp_path / "qrels.all.txt"), "--topics-subset",
                                str(tmp_path / "topics.train.tsv"), "--grid-step", "0.5",
                                "--save-setting", str(setting)]) == 0
    assert not eval_qrels.exists()
    assert seen and all(qids <= {"q0", "q1", "q2", "q3"} for qids in seen)
    chosen = json.loads(setting.read_text())
    assert chosen["weights"] == {"a": 1.0, "b": 0.0} and chosen["fitted"]["score"] == 1.0
    assert chosen["fitted"]["topics"] == 4
    assert "fitted linear minmax a=1 b=0" in capsys.readouterr().out


def test_fit_is_unchanged_by_evaluation_topics(tmp_path):
    paths = fit_fixture(tmp_path)
    train = tmp_path / "topics.train.tsv"
    with_eval = fit_module.fit_files(paths, tmp_path / "qrels.all.txt", train, "rrf", step=0.5, progress=False)
    without = fit_module.fit_files(paths, tmp_path / "qrels.train.txt", train, "rrf", step=0.5, progress=False)
    assert with_eval.setting == without.setting and with_eval.score == without.score
    assert [s for _, s in with_eval.tried] == [s for _, s in without.tried]


def test_fitted_setting_reproduces_its_score_when_applied(tmp_path):
    runs = random_runs(n_queries=12, seed=3)
    paths = {f"r{i}": write_run(tmp_path / f"r{i}.run", run) for i, run in enumerate(runs)}
    rng = random.Random(5)
    (tmp_path / "qrels.txt").write_text("".join(f"q{q} 0 doc{d} {rng.choice([1, 2])}\n" for q in range(12)
                                                for d in rng.sample(range(30), 4)))
    (tmp_path / "train.tsv").write_text("".join(f"q{q}\tx\n" for q in range(6)))
    setting = tmp_path / "s.json"
    runs_args = [f"--run=r{i}={p}" for i, p in enumerate(paths.values())]
    assert run_main(fuse_main, [*runs_args, "--method", "zscore", "--fit", str(tmp_path / "qrels.txt"),
                                "--topics-subset", str(tmp_path / "train.tsv"), "--grid-step", "0.25",
                                "--save-setting", str(setting)]) == 0
    out = tmp_path / "applied.run"
    assert run_main(fuse_main, [*runs_args, "--setting", str(setting), "--topics-subset",
                                str(tmp_path / "train.tsv"), "--output", str(out)]) == 0
    assert set(read_run(out)) == {f"q{q}" for q in range(6)}
    (tmp_path / "qrels.train.txt").write_text("".join(
        line + "\n" for line in (tmp_path / "qrels.txt").read_text().splitlines() if int(line.split()[0][1:]) < 6))
    score = evaluate(tmp_path / "qrels.train.txt", {"f": out}, measures=["ndcg_cut_10"]).iloc[0, 0]
    assert score == pytest.approx(json.loads(setting.read_text())["fitted"]["score"], abs=1e-4)


def test_split_is_fixed_and_disjoint():
    ids = [str(i) for i in range(11)]
    fit, held = split_ids(ids, seed=17)
    assert (fit, held) == split_ids(list(reversed(ids)), seed=17)
    assert not set(fit) & set(held) and sorted(fit + held, key=int) == ids and len(fit) == 6
    assert split_ids(ids, seed=18) != (fit, held)


# ---------------------------------------------------------------- bad input: one error line


def one_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


def test_malformed_run_line_names_file_and_line(tmp_path, capsys):
    good = write_run(tmp_path / "a.run", A)
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 t\n")
    out = tmp_path / "f.run"
    assert run_main(fuse_main, ["--run", f"a={good}", "--run", f"b={bad}", "--output", str(out)]) == 2
    assert f"{bad}:2:" in one_error(capsys)
    assert not out.exists()


@pytest.mark.parametrize("args, words", [
    (["--weight", "c=2"], "no run named 'c'"),
    (["--weight", "a=x"], "is not a number"),
    (["--weight", "a=0", "--weight", "b=0"], "every weight is 0"),
    (["--method", "rrf", "--normalisation", "zscore"], "--normalisation goes with --method linear"),
])
def test_bad_options(tmp_path, capsys, args, words):
    a, b = write_run(tmp_path / "a.run", A), write_run(tmp_path / "b.run", B)
    out = tmp_path / "f.run"
    assert run_main(fuse_main, ["--run", f"a={a}", "--run", f"b={b}", "--output", str(out), *args]) == 2
    assert words in one_error(capsys)
    assert not out.exists()


def test_fewer_than_two_runs_and_fit_without_subset(tmp_path, capsys):
    a = write_run(tmp_path / "a.run", A)
    assert run_main(fuse_main, ["--run", f"a={a}", "--output", str(tmp_path / "f.run")]) == 2
    assert "at least two runs" in one_error(capsys)
    b = write_run(tmp_path / "b.run", B)
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    assert run_main(fuse_main, ["--run", f"a={a}", "--run", f"b={b}", "--fit", str(tmp_path / "q.txt")]) == 2
    assert "--topics-subset" in one_error(capsys)
    out = tmp_path / "exists.run"
    out.write_text("keep\n")
    assert run_main(fuse_main, ["--run", f"a={a}", "--run", f"b={b}", "--output", str(out)]) == 2
    assert "--overwrite" in one_error(capsys) and out.read_text() == "keep\n"


def test_python_m_entry_point(tmp_path):
    import subprocess
    import sys

    a, b = write_run(tmp_path / "a.run", A), write_run(tmp_path / "b.run", B)
    proc = subprocess.run([sys.executable, "-m", "lsr_lucene.fuse", "--run", f"a={a}", "--run", f"b={b}",
                           "--output", str(tmp_path / "f.run")], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "f.run").read_text().split()[2] == "d1"


def test_rankings_scored_together_equal_one_by_one_and_by_hand():
    import math

    import lsr_lucene.eval.trec as trec

    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}}
    rankings = [{"q1": ["b", "a"], "q2": ["c"]}, {"q1": ["b", "x"]}, {"q2": ["x", "c"]}]
    whole = trec.evaluate_rankings(qrels, rankings, "ndcg_cut_10")
    assert whole == pytest.approx([trec.evaluate_rankings(qrels, [r], "ndcg_cut_10")[0] for r in rankings])
    ideal_q1 = 2 + 1 / math.log2(3)
    # -c: a query a ranking does not answer counts as 0 in the mean over both qrels queries
    assert whole == pytest.approx([1.0, (2 / ideal_q1) / 2, (1 / math.log2(3)) / 2])


@pytest.mark.parametrize("method,measure", [("rrf", "ndcg_cut_10"), ("linear", "map"), ("linear", "gm_map")])
def test_streamed_fit_scores_equal_whole_rankings_evaluated_at_once(monkeypatch, method, measure):
    """fit scores a few queries' candidate rankings at a time; its means equal trec_eval -c of whole rankings."""
    import numpy as np

    from lsr_lucene.eval.trec import evaluate_rankings
    from lsr_lucene.fuse.methods import features, ranked_ids
    from lsr_lucene.fuse.pools import build_pools

    rng = random.Random(3)
    docs = [f"d{i}" for i in range(30)]
    runs = {name: {f"q{q}": {d: round(rng.random(), 3) for d in rng.sample(docs, 12)} for q in range(9)}
            for name in ("a", "b", "c")}
    qrels = {f"q{q}": {d: rng.randint(0, 2) for d in rng.sample(docs, 6)} for q in range(11)}  # q9, q10 unanswered
    monkeypatch.setattr(fit_module, "QUERY_CHUNK", 2)
    result = fit_module.fit(runs, qrels, method, measure=measure, step=0.5, rrf_ks=(10.0, 60.0), hits=20,
                            progress=False)
    pools = build_pools(runs, fit_module.DEFAULT_DEPTH)
    grid = fit_module.simplex_grid(3, 0.5)
    rankings = []
    for rrf_k in ((10.0, 60.0) if method == "rrf" else (fit_module.DEFAULT_RRF_K,)):
        per = [{} for _ in grid]
        for qid, pool in pools.items():
            for c, ids in enumerate(ranked_ids(pool, features(pool, method, rrf_k, "minmax"), grid,
                                               min(fit_module.cutoff(measure) or 20, 20))):
                per[c][qid] = ids
        rankings += per
    expected = evaluate_rankings(qrels, rankings, measure)
    assert [score for _, score in result.tried] == pytest.approx(expected, abs=1e-12)
    assert len(set(np.round(expected, 9))) > 1  # the candidates differ: the comparison means something
