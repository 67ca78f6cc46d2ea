"""Composed queries end to end: input files, encoder ablations, Lucene search vs brute-force dot products."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from lsr_lucene.compose.backends import ExactBackend, LuceneBackend, make_spec
from lsr_lucene.compose.compositions import Composition, parse_topics, read_compositions
from lsr_lucene.compose.execute import compose, execute
from lsr_lucene.compose.operations import OPERATIONS, Settings, VectorPlan
from lsr_lucene.compose.query_encoder import QueryEncoder
from lsr_lucene.compose.tree import Node
from lsr_lucene.index import impact as index
from lsr_lucene.errors import InputError
from lsr_lucene.io.runs import write_run

# hand-made quantised document vectors (neg_ = negative document weight)
DOCS = {
    "tea-green": {"tea": 150, "green": 120, "caffeine": 60, "leaf": 30},
    "tea-herbal": {"tea": 140, "herbal": 110, "chamomile": 90, "evening": 20},
    "tea-black": {"tea": 130, "black": 100, "caffeine": 110, "strong": 40},
    "coffee": {"coffee": 160, "caffeine": 140, "espresso": 50},
    "decaf": {"coffee": 120, "decaf": 130, "neg_caffeine": 40},
    "cats-dogs": {"cats": 120, "dogs": 110, "pets": 60, "together": 40},
    "cats": {"cats": 150, "pets": 50, "purr": 40},
    "dogs": {"dogs": 150, "pets": 60, "bark": 50},
}
# hand-made atomic query vectors (float weights, scale 100)
ATOMS = {
    "tea": {"tea": 1.5, "leaf": 0.3, "drink": 0.2},
    "caffeine": {"caffeine": 1.4, "tea": 0.2, "coffee": 0.3},
    "cats": {"cats": 1.6, "pets": 0.4},
    "dogs": {"dogs": 1.5, "pets": 0.5},
    "tea that are not caffeine": {"tea": 1.2, "caffeine": 0.9, "not": 0.5},
    "cats that are also dogs": {"cats": 1.1, "dogs": 1.0, "also": 0.2},
    "tea without caffeine": {"tea": 1.3, "caffeine": 0.8, "without": 0.4},
    "tea that are not caffeine or cats": {"tea": 1.0, "caffeine": 0.7, "cats": 0.9},
}
QUERIES = [Composition("q1", Node("not", "tea", "caffeine"), "tea without caffeine"),
           Composition("q2", Node("and", "cats", "dogs")),
           Composition("q3", Node("or", Node("not", "tea", "caffeine"), "cats"))]


class FakeTokenizer:
    all_special_ids = [0]

    def __init__(self, vocab):
        self.ids = {t: i for i, t in enumerate(vocab)}

    def __call__(self, texts, max_length=64, **_):
        return {"input_ids": [[0] + [self.ids[w] for w in t.split() if w in self.ids][:max_length - 2] + [0]
                              for t in texts]}


class FakeEncoder:
    """Stands in for SparseEncoder: hand-made vectors per text, whitespace tokens."""

    query_max_length = 64

    def __init__(self):
        self.vocab = ["[CLS]"] + sorted({t for v in ATOMS.values() for t in v} | {w for t in ATOMS for w in t.split()})
        self.tokenizer = FakeTokenizer(self.vocab)

    def encode_queries(self, texts):
        return [dict(ATOMS[t]) for t in texts]


def brute_force(spec: dict) -> list[tuple[str, float]]:
    """Independent reference: Σ q·(impact − neg impact) + Σ w·sqrt(a·b); candidates need a positive part."""
    out = {}
    for doc, vec in DOCS.items():
        score, positive = 0.0, False
        for t, q in spec["terms"].items():
            v = vec.get(t, 0) - vec.get(f"neg_{t}", 0)
            score += q * v
            positive |= q * v > 0
        for a, b, w in spec.get("pairs", []):
            if vec.get(a, 0) > 0 and vec.get(b, 0) > 0:
                score += w * math.sqrt(vec[a] * vec[b])
                positive |= w > 0
        if positive:
            out[doc] = score
    return sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))


@pytest.fixture(scope="module")
def small_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("compose")
    vectors = root / "vectors"
    vectors.mkdir()
    (vectors / "part-00000.jsonl").write_text("".join(json.dumps({"id": d, "contents": d, "vector": v}) + "\n"
                                                      for d, v in DOCS.items()))
    index.build_impact_index(vectors, root / "index", threads=1)
    return root


@pytest.fixture(scope="module")
def lucene(small_index):
    backend = LuceneBackend(small_index / "index", threads=1)
    yield backend
    backend.close()


def test_exact_backend_equals_brute_force():
    backend = ExactBackend(DOCS.items())
    spec = {"qid": "x", "terms": {"tea": 150, "caffeine": -90, "coffee": 20}, "pairs": [["cats", "dogs", 70]]}
    got, expected = backend.search(spec, 100), brute_force(spec)
    assert [d for d, _ in got] == [d for d, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected])
    assert backend.score(spec, ["decaf", "cats-dogs", "nope"]) == pytest.approx(
        [20 * 120 + 90 * 40, 70 * math.sqrt(120 * 110), 0.0])


def test_lucene_backend_scores_as_its_hits(lucene):
    """Fusion mixes a leaf's hits with exact rescoring of other candidates: both carry the run file's precision."""
    spec = {"qid": "x", "terms": {"tea": 1 / 3, "caffeine": -0.7, "coffee": 0.1}, "pairs": [["cats", "dogs", 0.7]]}
    hits = lucene.search(spec, 100)
    assert any(not s.is_integer() for _, s in hits)
    assert lucene.score(spec, [d for d, _ in hits]) == [s for _, s in hits]  # equal, not approximately


@pytest.mark.parametrize("operation", OPERATIONS)
def test_every_operation_lucene_equals_brute_force(operation, lucene):
    encoder = QueryEncoder(encoder=FakeEncoder())
    settings = Settings(operation)
    plans = compose(QUERIES, settings, encoder)
    qids = [q.qid for q in QUERIES]
    got = execute(qids, plans, lucene, 100, hits=10, fusion_depth=3)
    exact = execute(qids, plans, ExactBackend(DOCS.items()), 100, hits=10, fusion_depth=3)
    for qid, plan in zip(qids, plans):
        assert [d for d, _ in got[qid]] == [d for d, _ in exact[qid]]
        assert [s for _, s in got[qid]] == pytest.approx([s for _, s in exact[qid]], rel=1e-5)
        if isinstance(plan, VectorPlan):
            spec = make_spec(qid, plan.vector, 100)
            assert [d for d, _ in got[qid]] == [d for d, _ in brute_force(spec)][:10]


def test_fusion_is_exact_over_the_candidates(lucene):
    """Depth 1 forces deepening and exact rescoring; the fused scores equal full brute-force fusion."""
    encoder = QueryEncoder(encoder=FakeEncoder())
    for name, combine in (("fusion", lambda a, b: a - b), ("fusion-scaled", None), ("fusion-gated", None)):
        plan = compose([QUERIES[0]], Settings(name), encoder)[0]
        ranked = dict(execute(["q1"], [plan], lucene, 100, hits=10, fusion_depth=1)["q1"])
        spec_a = make_spec("a", ATOMS["tea"], 100)
        spec_b = make_spec("b", ATOMS["caffeine"], 100)
        a = dict(brute_force(spec_a)[:1])
        b = dict(brute_force(spec_b)[:1])
        candidates = set(a) | set(b)
        full_a, full_b = dict(brute_force(spec_a)), dict(brute_force(spec_b))
        assert set(ranked) == candidates
        if combine:
            for doc in candidates:
                assert ranked[doc] == pytest.approx(combine(full_a.get(doc, 0), full_b.get(doc, 0)))


def test_cpt_pairs_reach_lucene(lucene):
    encoder = QueryEncoder(encoder=FakeEncoder())
    plan = compose([QUERIES[1]], Settings("cpt", top_pairs=1), encoder)[0]
    spec = make_spec("q2", plan.vector, 100)
    assert spec["pairs"] == [["cats", "dogs", round(100 * math.sqrt(1.6 * 1.5))]]
    hits = lucene.search(spec, 3)
    assert hits[0][0] == "cats-dogs"
    expected = brute_force(spec)[:3]
    assert [d for d, _ in hits] == [d for d, _ in expected]
    assert [s for _, s in hits] == pytest.approx([s for _, s in expected])


def test_no_positive_weight_gives_no_hits_and_a_warning(lucene):
    warned = []
    plan = VectorPlan({"caffeine": -1.0})
    out = execute(["q"], [plan], lucene, 100, warn=lambda q, why: warned.append(q))
    assert out == {"q": []} and warned == ["q"]


def test_encoder_ablations():
    enc = QueryEncoder(encoder=FakeEncoder())
    assert enc.encode(["tea"]) == [ATOMS["tea"]]
    no_exp = QueryEncoder(mode="no-expansion", encoder=FakeEncoder())
    assert no_exp.encode(["tea", "tea without caffeine"]) == [{"tea": 1.5},
                                                              {"tea": 1.3, "caffeine": 0.8, "without": 0.4}]
    no_tw = QueryEncoder(mode="no-term-weights", encoder=FakeEncoder())
    assert no_tw.encode(["tea without caffeine"]) == [{"tea": 1.0, "without": 1.0, "caffeine": 1.0}]
    with pytest.raises(InputError, match="unknown encoder mode"):
        QueryEncoder(mode="bogus", encoder=FakeEncoder())


def test_read_compositions_and_errors(tmp_path):
    good = tmp_path / "c.jsonl"
    good.write_text('{"id": "1", "query": {"op": "not", "a": "tea", "b": "caffeine"}, "text": "tea w/o caffeine"}\n'
                    '\n{"id": "2", "query": "plain atomic"}\n')
    comps = read_compositions(good)
    assert comps[0].tree == Node("not", "tea", "caffeine") and comps[0].text == "tea w/o caffeine"
    assert comps[1].tree == "plain atomic" and comps[1].text is None

    def bad(text, match):
        path = tmp_path / "bad.jsonl"
        path.write_text(text)
        with pytest.raises(InputError, match=match):
            read_compositions(path)

    bad('{"id": "1", "query": {"op": "not", "a": "tea", "b": ""}}\n', r"bad\.jsonl:1: query 1\.b: empty atomic")
    bad('{"id": "1", "query": "a"}\n{"id": "1", "query": "b"}\n', r":2: duplicate id '1'")
    bad('{"id": "1", "query": {"op": "minus", "a": "x", "b": "y"}}\n', "unknown op 'minus'")
    bad('{"id": "1"}\n', 'no "query" field')
    bad("{oops\n", r":1: malformed JSON")
    deep = "x"
    for _ in range(40):
        deep = {"op": "and", "a": deep, "b": "y"}
    bad(json.dumps({"id": "1", "query": deep}) + "\n", "deeper than 32 levels")
    very_deep = '{"id": "1", "query": ' + '{"op": "and", "a": ' * 5000 + '"x"' + ', "b": "y"}' * 5000 + "}\n"
    bad(very_deep, "deeper than 32 levels")
    bad("", "no compositions")


def test_parse_topics_keeps_uncued_text():
    comps = parse_topics({"1": "tea without caffeine", "2": "green tea"})
    assert comps[0].tree == Node("not", "tea", "caffeine") and comps[0].text == "tea without caffeine"
    assert comps[1].tree == "green tea"


def test_write_run_orders_by_score_then_docid(tmp_path):
    write_run({"q": [("b", 1.0), ("a", 1.0), ("c", 2.0)]}, tmp_path / "r", "t")
    assert [line.split()[2] for line in (tmp_path / "r").read_text().splitlines()] == ["c", "a", "b"]
    with pytest.raises(InputError, match="already exists"):
        write_run({}, tmp_path / "r", "t")


def test_compositions_given_as_a_folder_or_a_pipe_say_so(tmp_path):
    import os

    from lsr_lucene.compose.compositions import read_compositions
    from lsr_lucene.errors import InputError

    with pytest.raises(InputError, match=rf"^{tmp_path}: is a directory, not a file$"):
        read_compositions(tmp_path)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(InputError, match=r"fifo: not a regular file \(a pipe"):
        read_compositions(tmp_path / "fifo")


def test_the_dense_leg_adds_its_own_candidates_that_the_index_holds():
    """A document neither splade leg matches enters the fused ranking when the dense leg ranks it (issue 49: at scale
    the wanted passage fell out of A's sparse hits); a dense hit the index lacks is left out."""
    from lsr_lucene.compose.backends import ExactBackend
    from lsr_lucene.compose.execute import execute
    from lsr_lucene.compose.operations import FusionPlan, VectorPlan

    backend = ExactBackend([("d1", {"tea": 2.0}), ("d2", {"caffeine": 3.0}), ("d3", {"herbal": 1.0})])

    class Dense:  # the DenseLeg calls execute makes: its own top documents, and cosines of A's text
        def __init__(self, top):
            self.top = top

        def search(self, texts, k):
            return [self.top[:k] for _ in texts]

        def scores(self, texts, candidates):
            return [{d: 0.9 if d == "d3" else 0.1 for d in candidates} for _ in texts]

    plan = FusionPlan("not", True, 0.7, VectorPlan({"tea": 1.0}), VectorPlan({"caffeine": 1.0}), gate=0.9,
                      dense_text="tea", dense_weight=1.0)
    ranked = dict(execute(["q"], [plan], backend, 1, hits=10, dense=Dense(["d3", "ghost"]))["q"])
    assert "d3" in ranked and "ghost" not in ranked and ranked["d3"] > ranked["d2"]
    alone = dict(execute(["q"], [plan], backend, 1, hits=10, dense=Dense([]))["q"])
    assert "d3" not in alone and set(alone) == {"d1", "d2"}
