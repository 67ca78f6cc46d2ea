"""The dense-impacts sidecar (issue 40): exact search summing frequent terms from byte rows gives the brute-force
top k over several windows of docids (skipped and scored windows, terms with impacts above a byte left on their
postings, ties by docid), is ignored once stale, and is written by ``lsr-lucene index --dense-impacts``."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from lsr_lucene.index.dense_impacts import DENSE_IMPACTS_DIR, build_dense_impacts
from lsr_lucene.index.impact import build_impact_index

DOCS = 9_500  # three windows of 4,096 docids, the last one partial
VOCAB = [f"t{i}" for i in range(40)]


def brute_force(rows: list[dict], terms: dict, k: int) -> list[tuple[str, float]]:
    scored = [(f"d{i:05d}", sum(w * row.get(t, 0) for t, w in terms.items())) for i, row in enumerate(rows)]
    scored = [(d, s) for d, s in scored if any(t in rows[int(d[1:])] for t in terms)]
    scored.sort(key=lambda x: (-x[1], x[0]))
    return [(d, float(s)) for d, s in scored[:k]]


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    """Documents with Zipf-like term frequencies (t0 in most documents, t39 in few), small impacts so that scores
    tie often; t1's impacts reach 300 (it stays on its postings); one window of documents holds no frequent term."""
    rng = np.random.default_rng(7)
    rows = []
    for i in range(DOCS):
        row = {}
        for j, term in enumerate(VOCAB):
            if rng.random() < 0.9 / (1 + j) and not 4096 <= i < 4300:
                row[term] = int(rng.integers(1, 300 if term == "t1" else 6))
        if not row:
            row["t39"] = 1
        rows.append(row)
    root = tmp_path_factory.mktemp("dense")
    (root / "vectors").mkdir()
    (root / "vectors" / "part-00000.jsonl").write_text(
        "".join(json.dumps({"id": f"d{i:05d}", "contents": "", "vector": r}) + "\n" for i, r in enumerate(rows)))
    plain = root / "plain"
    build_impact_index(root / "vectors", plain, threads=1)
    dense = root / "dense"
    meta = build_impact_index(root / "vectors", dense, threads=1, dense_impacts=0.05)
    return rows, plain, dense, meta, root


def queries(n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for q in range(n):
        picked = rng.choice(len(VOCAB), size=int(rng.integers(1, 12)), replace=False)
        out.append({"qid": f"q{q}", "terms": {VOCAB[j]: int(rng.integers(1, 4)) for j in picked}})
    return out


def test_dense_search_matches_brute_force(collection):
    from lsr_lucene.search.spec_searcher import SpecSearcher

    rows, plain, dense, meta, _ = collection
    info = meta["dense_impacts"]
    assert 0 < info["terms"] < len(VOCAB) - 1  # frequent terms dense, rare ones and t1 (impacts > 255) not
    with SpecSearcher(dense) as searcher, SpecSearcher(plain) as reference:
        assert searcher._java.denseImpactsProblem() == ""
        assert reference._java.denseImpactsProblem() == "absent"
        for spec in queries(40, 1):
            for k in (1, 10, 1000):
                expected = brute_force(rows, spec["terms"], k)
                assert searcher.search(spec, k) == expected, (spec, k)
                assert reference.search(spec, k) == expected, (spec, k)


def test_stale_sidecar_is_ignored(collection):
    """A sidecar copied from another index (other segment ids) is reported and not used: results stay exact."""
    from lsr_lucene.search.spec_searcher import SpecSearcher

    rows, plain, dense, _, root = collection
    other = root / "other"
    shutil.copytree(plain, other)
    shutil.copytree(dense / DENSE_IMPACTS_DIR, other / DENSE_IMPACTS_DIR)
    with SpecSearcher(other) as searcher:
        assert searcher._java.denseImpactsProblem() not in ("", "absent")
        spec = queries(1, 2)[0]
        assert searcher.search(spec, 10) == brute_force(rows, spec["terms"], 10)


def test_cli_adds_the_sidecar(collection, capsys):
    from lsr_lucene.cli import main as cli

    _, plain, _, _, root = collection
    index = root / "added"
    shutil.copytree(plain, index)
    assert cli(["index", "--index", str(index), "--dense-impacts", "0.2"]) == 0
    assert "dense-impacts sidecar" in capsys.readouterr().out
    assert (index / DENSE_IMPACTS_DIR).is_dir()
    # refuses to replace it without --overwrite: one error line, exit 2
    assert cli(["index", "--index", str(index), "--dense-impacts", "0.2"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert build_dense_impacts(index, 0.5)["terms"] >= 1


def test_reorder_rebuilds_the_sidecar_in_the_new_order(collection):
    from lsr_lucene.index.dense_impacts import dense_impacts_share
    from lsr_lucene.index.impact import reorder_impact_index
    from lsr_lucene.search.spec_searcher import SpecSearcher

    rows, _, dense, meta, root = collection
    assert dense_impacts_share(dense) == 0.05
    reorder_impact_index(dense, root / "reordered", seed=3)
    assert dense_impacts_share(root / "reordered") == 0.05
    with SpecSearcher(root / "reordered") as searcher:
        assert searcher._java.denseImpactsProblem() == ""
        for spec in queries(10, 3):
            assert searcher.search(spec, 10) == brute_force(rows, spec["terms"], 10), spec


@pytest.mark.parametrize("index", ["dense", "plain"])
def test_heap_factor_keeps_clear_winners_and_exact_scores(collection, index):
    """Heap factor h < 1 (approximate block-max search): every hit has its exact score, in run order, and every
    document scoring at least the exact k-th score / h is found (pruning is against threshold / h, the threshold
    never above the exact k-th); h = 1 is exact. On the sidecar's block scorer and on postings alone."""
    from lsr_lucene.search.spec_searcher import SpecSearcher

    rows, plain, dense, _, _ = collection
    missed = 0
    with SpecSearcher(dense if index == "dense" else plain, heap_factor=0.5) as searcher:
        assert searcher.heap_factor == 0.5
        for spec in queries(30, 5):
            for k in (10, 100):
                exact = brute_force(rows, spec["terms"], k)
                got = searcher.search(spec, k)
                every = dict(brute_force(rows, spec["terms"], DOCS))
                assert all(every[d] == s for d, s in got), spec
                assert got == sorted(got, key=lambda h: (-h[1], h[0]))
                kth = exact[-1][1]
                assert {d for d, s in exact if s >= kth / 0.5} <= {d for d, _ in got}, (spec, k)
                missed += len({d for d, _ in exact} - {d for d, _ in got})
        searcher.heap_factor = 1.0
        for spec in queries(10, 6):
            assert searcher.search(spec, 10) == brute_force(rows, spec["terms"], 10)
    assert missed > 0  # h = 0.5 does prune: the test would not notice a heap factor that is ignored


def test_heap_factor_is_checked(collection, tmp_path, capsys):
    from lsr_lucene.cli import main as cli
    from lsr_lucene.errors import InputError
    from lsr_lucene.search.spec_searcher import SpecSearcher

    _, _, dense, _, _ = collection
    with SpecSearcher(dense) as searcher:
        for bad in (0, 1.5, float("nan")):
            with pytest.raises(InputError, match="heap_factor must be"):
                searcher.heap_factor = bad
    vectors = tmp_path / "q.jsonl"
    vectors.write_text(json.dumps({"id": "q1", "vector": {"t0": 2, "t3": 1}}) + "\n")
    base = ["search", "--index", str(dense), "--query-vectors", str(vectors)]
    assert cli(base + ["--output", str(tmp_path / "bad.run"), "--heap-factor", "0"]) == 2
    assert "--heap-factor must be a number above 0 and at most 1, got 0" in capsys.readouterr().err
    assert not (tmp_path / "bad.run").exists()
    assert cli(base + ["--output", str(tmp_path / "h.run"), "--heap-factor", "0.8"]) == 0
    assert (tmp_path / "h.run").read_text().startswith("q1 Q0 ")
