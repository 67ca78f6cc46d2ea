"""Scores exact in double through every search entry point (issue 28).

Documents d1 {a:100}, d2 {b:100}, d3 {z:5000} and the query {a:1, b:1.0001, z:-100}: the negative clause shifts
scores by 5·10^5, where float32 rounds 100.0 and 100.01 to the same value. The exact scores, from a double brute
force, are 100.01 (d2) and 100.0 (d1): every entry point must rank d2 first with that score.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsr_lucene.cli import main as cli
from lsr_lucene.index import impact as index
from lsr_lucene.io.runs import iter_run

DOCS = [{"id": "d1", "contents": "", "vector": {"a": 100}},
        {"id": "d2", "contents": "", "vector": {"b": 100}},
        {"id": "d3", "contents": "", "vector": {"z": 5000}}]
SPEC = {"qid": "q1", "terms": {"a": 1, "b": 1.0001, "z": -100}}


def brute_force(spec: dict, k: int) -> list[tuple[str, float]]:
    """Signed double-precision scores of the documents any positive clause matches, ties by docid."""
    hits = []
    for doc in DOCS:
        vec = doc["vector"]
        if any(w > 0 and vec.get(t, 0) > 0 for t, w in spec["terms"].items()):
            hits.append((doc["id"], sum(w * vec.get(t, 0) for t, w in spec["terms"].items())))
    return sorted(hits, key=lambda h: (-h[1], h[0]))[:k]


EXPECTED = brute_force(SPEC, 10)


def test_the_example_is_one_float32_cannot_tell_apart():
    import numpy as np

    assert [d for d, _ in EXPECTED] == ["d2", "d1"] and EXPECTED[0][1] == pytest.approx(100.01, abs=1e-9)
    shift = 100 * 5000
    assert np.float32(shift + EXPECTED[0][1]) == np.float32(shift + EXPECTED[1][1])  # what a float32 shift loses


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("exact")
    (root / "vectors").mkdir()
    (root / "vectors" / "part-00000.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    index.build_impact_index(root / "vectors", root / "index", threads=1)
    (root / "specs.jsonl").write_text(json.dumps(SPEC) + "\n")
    return root


def run_hits(path: Path) -> list[tuple[str, float]]:
    return [(row.docid, row.score) for row in iter_run(path)]


def printed(hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
    return [(d, float(f"{s:.6f}")) for d, s in hits]


def test_lsr_lucene_search(example, tmp_path):
    assert cli(["search", "--index", str(example / "index"), "--specs", str(example / "specs.jsonl"),
                "--output", str(tmp_path / "run"), "--hits", "10"]) == 0
    assert run_hits(tmp_path / "run") == printed(EXPECTED)


def test_impact_searcher_search_and_batch_search(example):
    from lsr_lucene import ImpactSearcher

    with ImpactSearcher(str(example / "index")) as searcher:
        one = [(h.docid, h.score) for h in searcher.search_spec(SPEC, k=10)]
        batch = searcher.batch_search_specs([SPEC], k=10, threads=1)
        assert [(h.docid, h.score) for h in batch[SPEC["qid"]]] == one
    assert [d for d, _ in one] == [d for d, _ in EXPECTED]
    assert [s for _, s in one] == pytest.approx([s for _, s in EXPECTED], abs=1e-6)


def test_spec_searcher_exact_scores_are_the_double_sums(example):
    from lsr_lucene.search.spec_searcher import SpecSearcher

    with SpecSearcher(example / "index") as searcher:
        hits = searcher.search_exact(SPEC, 10)
        assert [d for d, _, _ in hits] == [d for d, _ in EXPECTED]
        assert [s for _, _, s in hits] == pytest.approx([s for _, s in EXPECTED], rel=1e-15)
        assert searcher.score(SPEC, ["d1", "d2", "d3"]) == pytest.approx([100.0, 100.01, -5e5], rel=1e-15)


def test_anserini_search_collection(example, tmp_path):
    from test_native import search_collection

    done = search_collection(example / "index", example / "specs.jsonl", tmp_path / "run", 10)
    assert done.returncode == 0, done.stderr[-2000:]
    hits = run_hits(tmp_path / "run")  # SearchCollection reports float scores: the ranking is the exact one
    assert [d for d, _ in hits] == [d for d, _ in EXPECTED]
    assert [s for _, s in hits] == pytest.approx([s for _, s in EXPECTED], abs=1e-5)


@pytest.mark.slow  # starts a Ray instance
def test_distributed_search(example, tmp_path):
    ray = pytest.importorskip("ray")
    from test_distributed import RAY_OPTIONS

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, **RAY_OPTIONS)
    try:
        assert cli(["distributed", "index", "--input", str(example / "vectors"), "--index", str(tmp_path / "dindex"),
                    "--num-workers", "2"]) == 0
        assert cli(["distributed", "search", "--index", str(tmp_path / "dindex"), "--specs",
                    str(example / "specs.jsonl"), "--output", str(tmp_path / "run"), "--hits", "10"]) == 0
    finally:
        if started:
            ray.shutdown()
    assert run_hits(tmp_path / "run") == printed(EXPECTED)


def test_long_queries_need_no_global_clause_limit(tmp_path):
    """3,000 positive terms (over Lucene's 1,024-clause default) search exactly; the JVM-wide limit is untouched."""
    from lsr_lucene.jvm.runtime import autoclass
    from lsr_lucene.search.spec_searcher import SpecSearcher

    docs = [{"id": f"d{i}", "contents": "", "vector": {f"t{j}": 1 + (i * j) % 7 for j in range(i, 3000, 50)}}
            for i in range(50)]
    (tmp_path / "vectors").mkdir()
    (tmp_path / "vectors" / "part-00000.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    index.build_impact_index(tmp_path / "vectors", tmp_path / "index", threads=1)
    limit = autoclass("org.apache.lucene.search.IndexSearcher").getMaxClauseCount()
    terms = {f"t{j}": 1 + j % 3 * 0.5 for j in range(3000)}
    expected = sorted(((d["id"], sum(terms[t] * f for t, f in d["vector"].items())) for d in docs),
                      key=lambda h: (-h[1], h[0]))[:10]
    with SpecSearcher(tmp_path / "index") as searcher:
        for mode in ("signed", "boolean"):
            hits = searcher.search_exact({"qid": "long", "terms": terms, "mode": mode}, 10)
            assert [d for d, _, _ in hits] == [d for d, _ in expected]
            assert [s for _, _, s in hits] == pytest.approx([s for _, s in expected], rel=1e-12)
    assert autoclass("org.apache.lucene.search.IndexSearcher").getMaxClauseCount() == limit
