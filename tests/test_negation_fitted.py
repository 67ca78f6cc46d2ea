"""The fitted negation penalty (issue 49): per-candidate signals from the default's fused node, the pairwise model,
and its nested evaluation, on hand-made fused nodes and synthetic cached rows (no model, no corpus)."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from lsr_lucene.compose.backends import ExactBackend
from lsr_lucene.compose.compositions import parse_topics
from lsr_lucene.compose.execute import compose, execute
from lsr_lucene.compose.operations import FusionPlan, Settings, VectorPlan, fuse
from lsr_lucene.errors import InputError
from scripts.negation import negation_fitted as fitted
from scripts.negation import negation_nested as nested
from scripts.negation.negation_features import FEATURES, gated_node, kept_docs, node_features, row_features

DOCS = {"green": {"tea": 150, "green": 120, "caffeine": 60}, "herbal": {"tea": 140, "herbal": 110},
        "black": {"tea": 130, "caffeine": 110}, "coffee": {"coffee": 160, "caffeine": 140},
        "cats": {"cats": 150, "pets": 50}}
ATOMS = {"tea": {"tea": 1.5, "drink": 0.2}, "caffeine": {"caffeine": 1.4, "coffee": 0.3},
         "cats": {"cats": 1.6}, "coffee": {"coffee": 1.2}}
COSINES = {"tea": {"green": 0.7, "herbal": 0.6, "black": 0.65, "coffee": 0.2, "cats": 0.0},
           "caffeine": {"green": 0.3, "herbal": 0.1, "black": 0.5, "coffee": 0.8, "cats": 0.0},
           "coffee": {"green": 0.6, "herbal": 0.0, "black": 0.2, "coffee": 0.9, "cats": 0.0}}


class FakeEncoder:
    """Hand-made query vectors (what CachedQueryEncoder gives compose), with the cache the writer keeps."""

    cache: dict = {}

    def encode(self, texts):
        return [dict(ATOMS[t]) for t in texts]


class FakeDense:
    """Hand-made dense cosines of texts, and of documents with each other (one-hot: 1 with itself)."""

    def scores(self, texts, candidates):
        return [{d: COSINES[t][d] for d in candidates} for t in texts]

    def similar(self, doc, candidates):
        return {d: float(d == doc) for d in candidates}

    def search(self, texts, k):  # no candidates of its own: the splade legs' hits are the candidates
        return [[] for _ in texts]


def test_node_features_are_the_values_the_default_fused():
    """A gated not node's record gives Â and B̂ min-max scaled, the gated penalty, and the B cosines passed in."""
    plan = FusionPlan("not", True, 0.7, VectorPlan({"a": 1.0}), VectorPlan({"b": 1.0}), gate=0.5)
    record: list = []
    fused = fuse(plan, [{"d1": 4.0, "d2": 2.0, "d3": 0.0}, {"d1": 1.0, "d2": 0.0, "d3": 3.0}], record)
    node = gated_node(record)
    feats = node_features(node, {"d1": 0.3}, ["d1", "d2", "d3"])
    assert len(feats["d1"]) == len(FEATURES)
    assert feats["d1"] == pytest.approx([1.0, 0.0, 1 / 3, 0.3, 0.0, 0.0])
    assert feats["d3"] == pytest.approx([0.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    assert fused["d3"] == pytest.approx(0.0)  # Â 0, so the floor keeps it at 0


def test_row_features_are_the_default_run_and_its_fused_signals(tmp_path, monkeypatch):
    """On a hand-made corpus: each candidate's cached default score is its score in the default's own run, the
    signals are its fused node's, B's dense cosine the largest over B's items, and a row the parser leaves unfused
    keeps its run's scores with zero signals."""
    backend = ExactBackend(DOCS.items())
    monkeypatch.setattr(nested, "open_corpus", lambda *a, **k: (backend, 100, FakeDense()))
    monkeypatch.setattr(nested, "query_encoder", lambda *a, **k: (FakeEncoder(), tmp_path / "cache.json"))
    rows = [{"id": "q1", "query": "tea without caffeine", "pos_id": "herbal", "neg_ids": ["black"], "corpus": "c"},
            {"id": "q2", "query": "tea, excluding caffeine or coffee", "pos_id": "herbal", "neg_ids": ["green"],
             "corpus": "c"},
            {"id": "q3", "query": "cats", "pos_id": "cats", "neg_ids": [], "corpus": "c"}]
    got = {r["id"]: r for r in row_features(rows, {"c": tmp_path / "corpus.jsonl"}, tmp_path, top=2)}
    comps = parse_topics({r["id"]: r["query"] for r in rows})
    run = execute([c.qid for c in comps], compose(comps, Settings(dense=True), FakeEncoder()), backend, 100, 1000,
                  dense=FakeDense())
    for qid, row in got.items():
        assert [(c[0], c[2]) for c in row["candidates"][:2]] == run[qid][:2]
        assert row["outcome"] == list(nested.row_outcome(dict(run[qid]), row["pos"], row["negs"]))
    q1 = {c[0]: c[3:] for c in got["q1"]["candidates"]}
    assert [c[:2] for c in got["q1"]["candidates"]] == [["green", 0], ["black", 1], ["herbal", 2]]  # pos after the cut
    assert q1["green"][:2] == [1.0, COSINES["tea"]["green"]]  # tops A's sparse leg; A's dense cosine
    assert q1["black"][2] == pytest.approx(110 * 1.4 / (140 * 1.4 + 160 * 0.3))  # coffee tops B's leg
    assert q1["black"][4] == 0.0 and q1["herbal"][2:4] == [0.0, COSINES["caffeine"]["herbal"]]
    q2 = {c[0]: c[3:] for c in got["q2"]["candidates"]}
    # B's dense cosine: the largest over its two items (caffeine's for black, coffee's for green)
    assert q2["black"][3] == COSINES["caffeine"]["black"] and q2["green"][3] == COSINES["coffee"]["green"]
    assert all(c[3:] == [0.0] * len(FEATURES) for c in got["q3"]["candidates"])


def test_gated_node_is_the_outermost_gated_not():
    inner = FusionPlan("not", True, 0.7, VectorPlan({"a": 1.0}), VectorPlan({"b": 1.0}), gate=0.5)
    outer = FusionPlan("not", True, 0.7, inner, VectorPlan({"c": 1.0}), gate=0.5)
    record: list = []
    fuse(outer, [{"d1": 1.0, "d2": 2.0}, {"d1": 1.0, "d2": 0.0}, {"d1": 0.0, "d2": 1.0}], record)
    assert [n.path for n in record] == ["A", ""]
    assert gated_node(record).path == ""
    assert gated_node(record[:0]) is None


def test_kept_docs_are_the_best_then_the_wanted_and_excluded_if_retrieved():
    run = [(f"d{k}", 10.0 - k) for k in range(6)]
    assert kept_docs(run, "d5", ["d1", "x"], top=3) == ["d0", "d1", "d2", "d5"]


def _row(default: list[float], feature: list[float], pos: str = "p", negs=("n",), group: str = "g", rid: str = "r",
         docs: list[str] | None = None) -> dict:
    """A cached row: candidates ranked by ``default``, the first feature from ``feature``, the rest zeros."""
    docs = docs or ["p", "n", "o1", "o2"][:len(default)]
    order = sorted(range(len(docs)), key=lambda k: (-default[k], docs[k]))
    cands = [[docs[k], rank, default[k], feature[k]] + [0.0] * (len(FEATURES) - 1) for rank, k in enumerate(order)]
    scores = {docs[k]: default[k] for k in range(len(docs))}
    return {"id": rid, "source": "s", "family": "", "group": group, "part": "tune", "pos": pos, "negs": list(negs),
            "outcome": list(fitted.row_outcome(scores, pos, list(negs))), "candidates": cands}


def test_identity_model_reproduces_the_default_order_ties_by_docid():
    rows = [_row([0.5, 0.9, 0.1], [0, 0, 0]), _row([0.7, 0.7, 0.1], [1, 0, 0]), _row([0.7, 0.7, 0.1], [1, 0, 0],
                                                                                      docs=["b", "a", "c"], pos="b",
                                                                                      negs=["a"])]
    assert [fitted.outcome(r, None) for r in rows] == [(0, 0), (0, 0), (0, 0)]
    assert [fitted.outcome(r, fitted.identity()) for r in rows] == [tuple(r["outcome"]) for r in rows]


def test_a_candidate_below_the_cut_stays_below_whatever_the_weights():
    """The wanted passage cached below the reorderable best keeps its place: no model lifts it."""
    row = _row([0.9, 0.8, 0.2], [1, 1, 0], docs=["n", "o1", "p"])
    row["candidates"][2][1] = 7  # ranked 7th in its run: below the cut of 2
    model = fitted.Model(np.zeros(len(FEATURES)), np.ones(len(FEATURES)), 1.0, np.array([-100.0] + [0.0] * 5))
    assert fitted.reorderable(row["candidates"]) == 2
    assert fitted.outcome(row, model) == (0, 0)
    row["candidates"][2][1] = 2  # inside the cut, the same weights put it first
    assert fitted.outcome(row, model) == (1, 1)


def _separable(n: int, seed: int = 0) -> list[dict]:
    """Rows where the default ranks the excluded passage first half the time, and feature 0 is 1 only on the
    excluded passage: a negative weight on it fixes every row."""
    rng = random.Random(seed)
    rows = []
    for k in range(n):
        wrong = k % 2 == 0
        default = [0.6, 0.9, rng.random() * 0.5] if wrong else [0.9, 0.6, rng.random() * 0.5]
        rows.append(_row(default, [0.0, 1.0, 0.0], group=f"g{k % 10}", rid=f"r{k}"))
    return rows


def test_fit_learns_to_penalise_the_feature_that_marks_the_excluded_passage():
    rows = _separable(40)
    model = fitted.fit(rows, 0.01)
    assert model.w[0] < 0 and model.s > 0
    assert all(fitted.outcome(r, model) == (1, 1) for r in rows)
    assert sum(fitted.outcome(r, None) == (1, 1) for r in rows) == 20


def test_rows_the_parser_left_unfused_do_not_swamp_the_fit():
    """An unfused row carries raw dot products (hundreds of thousands): the default's score is scaled per row, so
    such rows neither drive s to 0 nor change what the fused rows learn."""
    rows = _separable(40)
    raw = [_row([3e5, 2e5, 1e5], [0.0, 0.0, 0.0], rid=f"u{k}") if k % 2 else _row([2e5, 3e5, 1e5], [0.0, 0.0, 0.0],
                                                                                     rid=f"u{k}") for k in range(6)]
    model = fitted.fit(rows + raw, 0.01)
    assert model.s > 0.5 * fitted.fit(rows, 0.01).s
    assert all(fitted.outcome(r, model) == (1, 1) for r in rows)
    assert [fitted.outcome(r, model) for r in raw] == [fitted.outcome(r, None) for r in raw]
    np.testing.assert_allclose(fitted.row_scaled(raw[0]["candidates"]), [1.0, 0.5, 0.0])


def test_strong_l2_shrinks_towards_the_default():
    rows = _separable(40)
    assert np.abs(fitted.fit(rows, 1e6).w).max() < 1e-4
    assert np.abs(fitted.fit(rows, 1e6).w).max() < np.abs(fitted.fit(rows, 0.01).w).max()


def test_nested_procedure_picks_the_fitted_model_when_it_clearly_wins():
    rows = _separable(60)
    res = fitted.nested_fitted(rows)
    assert all(c["chose"].startswith("fitted") for c in res["choices"])
    assert all(o == (1, 1) for o in res["procedure"])
    assert sum(o == (1, 1) for o in res["default"]) == 30


def test_nested_procedure_keeps_the_default_when_nothing_separates():
    rows = [_row([0.9, 0.6, 0.1] if k % 3 else [0.6, 0.9, 0.1], [0.0, 0.0, 0.0], group=f"g{k % 10}", rid=f"r{k}")
            for k in range(60)]
    res = fitted.nested_fitted(rows)
    assert res["procedure"] == res["default"]


def test_paired_difference_and_its_standard_error():
    out = fitted.paired([(1, 1), (1, 1), (0, 1), (0, 0)], [(0, 1), (1, 1), (0, 1), (1, 1)])
    assert out["Δ R@1"] == 0.0 and out["Δ RR"] == -0.25 and out["rows better / worse"] == "1 / 1"


def test_cli_writes_page_and_rows_and_refuses_to_overwrite(tmp_path):
    rows = _separable(45)
    for k, r in enumerate(rows):
        r["part"] = "held-out" if k % 3 == 0 else "tune"
    path = tmp_path / "features.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert fitted.main(["--features", str(path), "--output", str(tmp_path / "fitted")]) == 0
    page = (tmp_path / "fitted.md").read_text(encoding="utf-8")
    assert "Held-out part" in page and "selection procedure (outer folds)" in page
    assert "rows whose cached default outcome differs from its run's: 0" in page
    assert len((tmp_path / "fitted.csv").read_text(encoding="utf-8").splitlines()) == 46
    with pytest.raises(InputError, match="fitted.md"):
        fitted.main(["--features", str(path), "--output", str(tmp_path / "fitted")])
