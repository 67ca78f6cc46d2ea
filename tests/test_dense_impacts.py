"""The dense-impacts sidecar (issue 40): exact search summing frequent terms from byte rows gives the brute-force
top k over several windows of docids (skipped and scored windows, terms with impacts above a byte left on their
postings, ties by docid), is ignored once stale, and is written by ``lsr-lucene index --dense-impacts``."""
from __future__ import annotations

import json
import shutil

import pytest
from lsr_lucene.index.dense_impacts import DENSE_IMPACTS_DIR, build_dense_impacts
from lsr_lucene.index.impact import build_impact_index


@pytest.fixture(scope="module")
def collection(zipf):
    """The session's synthetic collection (conftest.ZipfCollection: Zipf-like term frequencies, ties, t1's impacts
    above a byte, a window without frequent terms), its plain index and one with the dense-impacts sidecar."""
    dense = zipf.root / "dense"
    meta = build_impact_index(zipf.vectors, dense, threads=1, dense_impacts=0.05)
    return zipf, zipf.plain, dense, meta, zipf.root


def test_dense_search_matches_brute_force(collection):
    from lsr_lucene.search.spec_searcher import SpecSearcher

    zipf, plain, dense, meta, _ = collection
    info = meta["dense_impacts"]
    assert 0 < info["terms"] < len(zipf.VOCAB) - 1  # frequent terms dense, rare ones and t1 (impacts > 255) not
    with SpecSearcher(dense) as searcher, SpecSearcher(plain) as reference:
        assert searcher._java.denseImpactsProblem() == ""
        assert reference._java.denseImpactsProblem() == "absent"
        for spec in zipf.queries(40, 1):
            for k in (1, 10, 1000):
                expected = zipf.brute_force(spec["terms"], k)
                assert searcher.search(spec, k) == expected, (spec, k)
                assert reference.search(spec, k) == expected, (spec, k)



def test_rows_read_from_the_mapped_files_or_the_heap_give_the_same_hits(collection):
    """The rows are read from the memory-mapped files by default (off the JVM heap); the former on-heap layout
    (system property lsr.denseImpacts.onHeap, kept for the benchmark comparing them) gives the same exact hits."""
    from lsr_lucene.jvm.runtime import autoclass
    from lsr_lucene.search.spec_searcher import SpecSearcher

    zipf, _, dense, _, _ = collection
    system = autoclass("java.lang.System")
    with SpecSearcher(dense) as mapped:
        system.setProperty("lsr.denseImpacts.onHeap", "true")
        try:
            heap = SpecSearcher(dense)
        finally:
            system.clearProperty("lsr.denseImpacts.onHeap")
        with heap:
            assert (mapped._java.denseImpactsLayout(), heap._java.denseImpactsLayout()) == ("mapped", "heap")
            for spec in zipf.queries(20, 7):
                for k in (10, 1000):
                    expected = zipf.brute_force(spec["terms"], k)
                    assert mapped.search(spec, k) == expected == heap.search(spec, k), (spec, k)


def test_corrupt_sidecar_is_ignored(collection):
    """A sidecar file with a byte changed in a row fails its checksum on opening: reported, not used, exact."""
    from lsr_lucene.search.spec_searcher import SpecSearcher

    zipf, plain, dense, _, root = collection
    corrupt = root / "corrupt"
    shutil.copytree(dense, corrupt)
    dim = max((corrupt / DENSE_IMPACTS_DIR).glob("*.dim"), key=lambda f: f.stat().st_size)
    data = bytearray(dim.read_bytes())
    data[len(data) // 2] ^= 0x40
    dim.write_bytes(bytes(data))
    with SpecSearcher(corrupt) as searcher:
        assert "checksum" in searcher._java.denseImpactsProblem()
        assert searcher._java.denseImpactsLayout() == ""
        spec = zipf.queries(1, 8)[0]
        assert searcher.search(spec, 10) == zipf.brute_force(spec["terms"], 10)

def test_stale_sidecar_is_ignored(collection):
    """A sidecar copied from another index (other segment ids) is reported and not used: results stay exact."""
    from lsr_lucene.search.spec_searcher import SpecSearcher

    zipf, plain, dense, _, root = collection
    other = root / "other"
    shutil.copytree(plain, other)
    shutil.copytree(dense / DENSE_IMPACTS_DIR, other / DENSE_IMPACTS_DIR)
    with SpecSearcher(other) as searcher:
        assert searcher._java.denseImpactsProblem() not in ("", "absent")
        spec = zipf.queries(1, 2)[0]
        assert searcher.search(spec, 10) == zipf.brute_force(spec["terms"], 10)


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

    zipf, _, dense, meta, root = collection
    assert dense_impacts_share(dense) == 0.05
    reorder_impact_index(dense, root / "reordered", seed=3)
    assert dense_impacts_share(root / "reordered") == 0.05
    with SpecSearcher(root / "reordered") as searcher:
        assert searcher._java.denseImpactsProblem() == ""
        for spec in zipf.queries(10, 3):
            assert searcher.search(spec, 10) == zipf.brute_force(spec["terms"], 10), spec


@pytest.mark.parametrize("index", ["dense", "plain"])
def test_heap_factor_keeps_clear_winners_and_exact_scores(collection, index):
    """Heap factor h < 1 (approximate block-max search): every hit has its exact score, in run order, and every
    document scoring at least the exact k-th score / h is found (pruning is against threshold / h, the threshold
    never above the exact k-th); h = 1 is exact. On the sidecar's block scorer and on postings alone."""
    from lsr_lucene.search.spec_searcher import SpecSearcher

    zipf, plain, dense, _, _ = collection
    missed = 0
    with SpecSearcher(dense if index == "dense" else plain, heap_factor=0.5) as searcher:
        assert searcher.heap_factor == 0.5
        for spec in zipf.queries(30, 5):
            for k in (10, 100):
                missed += zipf.check_heap_factor(searcher.search(spec, k), spec["terms"], k, 0.5)
                # a heap factor per call overrides the searcher's, which stays as it is
                assert searcher.search(spec, k, heap_factor=1) == zipf.brute_force(spec["terms"], k)
        assert searcher.heap_factor == 0.5
        searcher.heap_factor = 1.0
        for spec in zipf.queries(10, 6):
            assert searcher.search(spec, 10) == zipf.brute_force(spec["terms"], 10)
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
            with pytest.raises(InputError, match="heap_factor must be"):
                searcher.search({"qid": "q", "terms": {"t0": 1}}, 10, heap_factor=bad)
    vectors = tmp_path / "q.jsonl"
    vectors.write_text(json.dumps({"id": "q1", "vector": {"t0": 2, "t3": 1}}) + "\n")
    base = ["search", "--index", str(dense), "--query-vectors", str(vectors)]
    assert cli(base + ["--output", str(tmp_path / "bad.run"), "--heap-factor", "0"]) == 2
    assert "--heap-factor must be a number above 0 and at most 1, got 0" in capsys.readouterr().err
    assert not (tmp_path / "bad.run").exists()
    assert cli(base + ["--output", str(tmp_path / "h.run"), "--heap-factor", "0.8"]) == 0
    assert (tmp_path / "h.run").read_text().startswith("q1 Q0 ")


def test_index_builds_the_sidecar_by_default_within_its_size_rule(collection, capsys, monkeypatch):
    """``lsr-lucene index`` writes the sidecar unless ``--dense-impacts 0`` (issue 51); ``auto`` keeps it within a
    quarter of the index's size, raising the share above 1/16 when the frequent terms would not fit."""
    from lsr_lucene.cli import main as cli
    from lsr_lucene.index import dense_impacts
    from lsr_lucene.index.dense_impacts import DEFAULT_SHARE, auto_share, dense_impacts_share

    zipf, plain, _, _, root = collection
    assert cli(["index", "--input", str(zipf.vectors), "--index", str(root / "default"), "--threads", "1"]) == 0
    assert "dense-impacts sidecar (auto)" in capsys.readouterr().out
    share = dense_impacts_share(root / "default")
    assert share >= DEFAULT_SHARE
    main_bytes = dense_impacts._main_index_bytes(root / "default")
    side = sum(p.stat().st_size for p in (root / "default" / DENSE_IMPACTS_DIR).iterdir())
    assert 0 < side <= 0.3 * main_bytes
    assert cli(["index", "--input", str(zipf.vectors), "--index", str(root / "none"), "--threads", "1",
                "--dense-impacts", "0"]) == 0
    assert not (root / "none" / DENSE_IMPACTS_DIR).exists()
    # a tighter size rule raises the share: fewer, more frequent terms, still within it
    monkeypatch.setattr(dense_impacts, "MAX_SIZE_RATIO", 0.5 * side / main_bytes)
    tighter = auto_share(plain)
    assert tighter > share
    info = build_dense_impacts(root / "none", "auto")
    assert 0 < info["terms"] and info["size_bytes"] <= 0.5 * side * 1.05  # headers aside
    monkeypatch.setattr(dense_impacts, "MAX_SIZE_RATIO", 1e-9)  # nothing fits: no sidecar, said so
    assert auto_share(plain) == 0 and build_dense_impacts(root / "none", "auto")["terms"] == 0
    assert cli(["index", "--input", str(zipf.vectors), "--index", str(root / "bad"), "--dense-impacts", "x"]) == 2
    assert "--dense-impacts must be auto or a number" in capsys.readouterr().err


def test_reorder_follows_the_default(collection):
    """``lsr-lucene reorder`` of an index without the sidecar builds it (auto); ``--dense-impacts 0`` drops it."""
    from lsr_lucene.cli import main as cli

    zipf, plain, _, _, root = collection
    assert cli(["reorder", "--input", str(plain), "--index", str(root / "bp-auto"), "--seed", "1",
                "--threads", "1"]) == 0
    assert (root / "bp-auto" / DENSE_IMPACTS_DIR).is_dir()
    assert cli(["reorder", "--input", str(root / "bp-auto"), "--index", str(root / "bp-none"), "--seed", "1",
                "--threads", "1", "--dense-impacts", "0"]) == 0
    assert not (root / "bp-none" / DENSE_IMPACTS_DIR).exists()
