"""Exact at the edges (issue 37): each case of the issue on its tiny collection, through the entry points it broke.

Every search must give the brute-force top k in double (ties by docid) or one ``error:`` line: search past 65,536
terms or impacts (the edges of the retired top-postings mode), a window rerank pool, window weights, weights that
round to zero or a subnormal in float32, lone surrogates, ``--indexer anserini`` over several shards, and the
benchmark's recall at tied cut-offs.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsr_lucene.cli import main as cli
from lsr_lucene.errors import InputError
from lsr_lucene.index.impact import build_impact_index
from lsr_lucene.io.runs import iter_run
from lsr_lucene.search.spec_searcher import SpecSearcher


def build(root: Path, docs: list[tuple[str, dict]], tokens: dict | None = None, **options) -> Path:
    """Index (id, vector) documents in this order (our indexer), with per-position tokens when given."""
    (root / "vectors").mkdir(parents=True)
    (root / "vectors" / "part-00000.jsonl").write_text(
        "".join(json.dumps({"id": d, "contents": "", "vector": v}) + "\n" for d, v in docs))
    positions = None
    if tokens:
        positions = root / "tokens.jsonl"
        positions.write_text("".join(json.dumps({"id": d, "tokens": t}) + "\n" for d, t in tokens.items()))
    build_impact_index(root / "vectors", root / "index", threads=1, positions=positions, **options)
    return root / "index"


def cli_search(index: Path, spec: dict, out: Path, *extra: str) -> list[tuple[str, float]]:
    specs = out.with_suffix(".specs.jsonl")
    specs.write_text(json.dumps(spec) + "\n")
    assert cli(["search", "--index", str(index), "--specs", str(specs), "--output", str(out), *extra]) == 0
    return [(row.docid, row.score) for row in iter_run(out)]


def exact(searcher: SpecSearcher, spec: dict, k: int, **options) -> list[tuple[str, float]]:
    return [(d, s) for d, _, s in searcher.search_exact(spec, k, **options)]


def test_search_past_16_bit_impacts(tmp_path):
    index = build(tmp_path, [("d1", {"a": 70000, "b": 5}), ("d2", {"a": 3, "b": 9})])
    spec = {"qid": "q1", "terms": {"a": 1, "b": 1}}
    with SpecSearcher(index) as searcher:
        assert exact(searcher, spec, 5) == [("d1", 70005.0), ("d2", 12.0)]
    assert cli_search(index, spec, tmp_path / "run") == [("d1", 70005.0), ("d2", 12.0)]


def test_search_past_65536_terms(tmp_path):
    docs = [("d1", {f"t{i}": 1 + i % 3 for i in range(65_600)}), ("d2", {"t65599": 9, "t7": 4})]
    index = build(tmp_path, docs)
    terms = {"t7": 2, "t65599": 1.5, "t100": -1}
    with SpecSearcher(index) as searcher:
        assert exact(searcher, {"qid": "q", "terms": terms}, 5) == brute_force(docs, terms)


def test_scores_sum_in_double_past_2_to_53(tmp_path):
    """Σ w·impact past 2^53 (integral weights up to 2^31, 16-bit impacts): scores must be the double sums of brute
    force, to the bit."""
    docs = [("d1", {f"t{i}": 65535 - i for i in range(80)}), ("d2", {f"t{i}": 65535 - 2 * i for i in range(80)})]
    index = build(tmp_path, docs)
    terms = {f"t{i}": 2**31 - 1 - 7 * i for i in range(80)}
    expected = brute_force(docs, terms)
    assert expected[0][1] > 2**53 and expected[0][1] != sum(w * docs[0][1][t] for t, w in terms.items())  # rounded
    with SpecSearcher(index) as searcher:
        for k in (1, 2):
            assert exact(searcher, {"qid": "q", "terms": terms}, k) == expected[:k]


def test_window_rerank_pool_is_the_exact_first_stage(tmp_path):
    index = build(tmp_path, [("d1", {"a": 100}), ("d2", {"b": 100})],
                  tokens={"d1": [["a", 1.0]], "d2": [["b", 1.0], ["c", 1.0]]})
    spec = {"qid": "q", "terms": {"a": 1, "b": 1.00000001},
            "windows": [{"terms": [["b", 1.0], ["c", 1.0]], "ordered": True}], "rerank": 1}
    with SpecSearcher(index) as searcher:
        assert exact(searcher, spec, 1) == [("d2", 100.000001 + 2.0)]
    assert cli_search(index, spec, tmp_path / "run", "--hits", "1") == [("d2", 102.000001)]


def test_window_weights_in_double(tmp_path):
    index = build(tmp_path, [("d1", {"a": 100})], tokens={"d1": [["a", 100000.0], ["b", 100000.0]]})
    spec = {"qid": "q", "terms": {"a": 1}, "windows": [{"terms": [["a", 0.1], ["b", 0.1]], "ordered": True}]}
    with SpecSearcher(index) as searcher:
        assert exact(searcher, spec, 1) == [("d1", 100 + (0.1 * 100000.0 + 0.1 * 100000.0))]


TINY = [("d1", {"a": 100}), ("d2", {"b": 100}), ("d3", {"p": 9}), ("d4", {"q": 1}), ("d5", {"a": 1, "neg_b": 2})]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("tiny"), TINY)


def brute_force(docs: list[tuple[str, dict]], terms: dict[str, float]) -> list[tuple[str, float]]:
    """Σ w·(impact − neg_ impact) in double, in spec order, over the documents a positive clause matches."""
    hits = []
    for docid, vec in docs:
        if any((w > 0 and vec.get(t, 0) > 0) or (w < 0 and vec.get("neg_" + t, 0) > 0) for t, w in terms.items()):
            score = 0.0
            for t, w in terms.items():
                score += w * (vec.get(t, 0) - vec.get("neg_" + t, 0))
            hits.append((docid, score))
    return sorted(hits, key=lambda h: (-h[1], h[0]))


@pytest.mark.parametrize("terms, ranking", [
    ({"a": 1e-300}, ["d1", "d5"]),  # rounds to zero in float32
    ({"a": 1e-300, "b": 1e-30}, ["d2", "d1", "d5"]),
    ({"p": 1.47e-44, "q": 1.3229e-43}, ["d3", "d4"]),  # subnormal in float32: d3 scores 1.323e-43
    ({"b": -1e-320, "a": 1e-310}, ["d1", "d5"]),  # subnormal in double
])
def test_weights_below_float32_are_served_exactly(tiny, tmp_path, terms, ranking):
    from lsr_lucene import ImpactSearcher

    spec = {"qid": "q", "terms": terms}
    expected = brute_force(TINY, terms)
    assert [d for d, _ in expected] == ranking
    with SpecSearcher(tiny) as searcher:
        assert exact(searcher, spec, 10) == expected
        assert exact(searcher, spec, 1) == expected[:1]
    with ImpactSearcher(str(tiny)) as searcher:
        assert [h.docid for h in searcher.search_spec(spec, k=10)] == [d for d, _ in expected]
    assert [d for d, _ in cli_search(tiny, spec, tmp_path / "run")] == [d for d, _ in expected]


def test_anserini_hook_refuses_weights_float_scores_cannot_hold():
    from jnius import JavaException

    from lsr_lucene.jvm.classes import java_class

    specs = java_class("search.AnseriniSpecs")
    with pytest.raises(JavaException, match="search this spec with lsr-lucene search --specs"):
        specs.toQuery(json.dumps({"qid": "q", "terms": {"a": 1e-300}}))
    assert specs.toQuery(json.dumps({"qid": "q", "terms": {"a": 1e-30}})) is not None


def test_lone_surrogates_are_one_error_line(tiny, tmp_path, capsys):
    from lsr_lucene import ImpactSearcher

    spec = {"qid": "q", "terms": {"\ud800": 1.0}}
    specs = tmp_path / "specs.jsonl"
    specs.write_text(json.dumps(spec) + "\n")  # JSON escapes it: "\ud800"
    assert cli(["search", "--index", str(tiny), "--specs", str(specs), "--output", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {specs}:1: ") and "lone surrogate (\\ud800)" in err
    with ImpactSearcher(str(tiny)) as searcher:
        with pytest.raises(InputError, match=r"query q: .*lone surrogate"):
            searcher.search_spec(spec)
    with SpecSearcher(tiny) as searcher:
        for bad in (spec, {"qid": "q", "terms": {"a": 1}, "pairs": [["a", "x\udc00", 1]]}):
            with pytest.raises(InputError, match="lone surrogate"):
                searcher.search(bad)
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "part-00000.jsonl").write_text(
        json.dumps({"id": "d1", "contents": "", "vector": {"a": 1}}) + "\n"
        + json.dumps({"id": "d2", "contents": "", "vector": {"\ud800": 5}}) + "\n")
    assert cli(["index", "--input", str(tmp_path / "v"), "--index", str(tmp_path / "i")]) == 2
    err = capsys.readouterr().err
    assert f"error: {tmp_path / 'v' / 'part-00000.jsonl'}:2: " in err and "lone surrogate" in err
    assert not (tmp_path / "i").exists()


def test_lone_surrogates_in_java_specs():
    from jnius import JavaException

    from lsr_lucene.jvm.classes import java_class

    spec = java_class("search.QuerySpec")
    with pytest.raises(JavaException, match="lone surrogate"):
        spec.parse('{"qid": "q", "terms": {"\\ud800": 1}}', "f:1")
    assert spec.parse('{"qid": "q", "terms": {"\\ud83d\\ude00": 1}}', "f:1") is not None  # a proper pair


def test_anserini_indexer_keeps_the_input_order_over_shards(tmp_path):
    from lsr_lucene.io.output import open_jsonl

    (tmp_path / "v").mkdir()
    for f in range(3):
        with open(tmp_path / "v" / f"part-{f:05d}.jsonl", "w") as out:
            for i in range(120):
                vector = {"a": 1 + i % 4, f"t{i % 13}": 2} if i % 50 else {}  # empty vectors are not indexed
                out.write(json.dumps({"id": f"x{(f * 7919 + i * 104729) % 100003:06d}", "contents": "",
                                      "vector": vector}) + "\n")
    expected = [obj["id"] for f in sorted((tmp_path / "v").iterdir()) for _, obj in open_jsonl(f) if obj["vector"]]
    for n in range(2):
        build_impact_index(tmp_path / "v", tmp_path / f"i{n}", threads=2, indexer="anserini")
        with SpecSearcher(tmp_path / f"i{n}") as searcher:
            assert searcher.docids == expected


def test_benchmark_recall_counts_ties_at_the_cut_off():
    from scripts.bench.real_approx import _recall

    truth = [("d1", "9", 9.0), ("d2", "5", 5.0)]  # d3 also scores 5.0: the docid tie-break left it out
    scores = {"d3": 5.0, "d4": 4.0}
    assert _recall([("d1", 9.0), ("d3", 5.0)], truth, lambda ids: [scores[d] for d in ids]) == 1.0
    assert _recall([("d1", 9.0), ("d4", 4.0)], truth, lambda ids: [scores[d] for d in ids]) == 0.5
    assert _recall([("d3", 5.0)], truth, lambda ids: [scores[d] for d in ids]) == 0.5
