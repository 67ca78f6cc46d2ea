"""Exact search over windows of docids (ImpactMaxScoreQuery), checked against brute-force dot products on a collection
of several windows (12,000 documents); an index that still holds the sidecar of the retired top-postings mode
(issue 29, retired in issue 66) searches exactly too, and the retired options fail in one line."""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from lsr_lucene.cli import main as cli
from lsr_lucene.index.impact import build_impact_index
from lsr_lucene.io.runs import read_hits

N_DOCS, VOCAB = 12_000, 300


def collection(seed: int = 5) -> list[dict[str, int]]:
    """Zipf-like sparse vectors: frequent terms with long lists, impacts skewed towards small values (many ties),
    a few negative weights (``neg_`` terms, which signed scoring subtracts)."""
    rng = random.Random(seed)
    terms = [f"t{i}" for i in range(VOCAB)]
    weights = [1.0 / (i + 2) for i in range(VOCAB)]
    return [{("neg_" if rng.random() < 0.03 else "") + t: min(255, int(rng.paretovariate(1.5) * 3))
             for t in rng.choices(terms, weights, k=rng.randint(3, 40))} for _ in range(N_DOCS)]


DOCS = collection()
IDS = [f"d{i:05d}" for i in range(N_DOCS)]
random.Random(9).shuffle(IDS)  # docid order is not id order: ties (broken by id) can go either way in a window
ID_RANK = np.argsort(np.argsort(IDS))


def matrix() -> sp.csr_matrix:
    rows, cols, vals = [], [], []
    for i, vec in enumerate(DOCS):
        for t, w in vec.items():
            rows.append(i)
            cols.append(column(t))
            vals.append(w)
    return sp.csr_matrix((vals, (rows, cols)), shape=(N_DOCS, 2 * VOCAB), dtype=np.float64)


def column(term: str) -> int:
    """t<i> is column i, neg_t<i> column VOCAB + i."""
    return VOCAB + int(term[5:]) if term.startswith("neg_") else int(term[1:])


MATRIX = matrix()


def brute_force(terms: dict[str, float], k: int) -> list[tuple[str, float]]:
    """Top k by signed double dot product, w·(impact − neg_ impact), among the documents that a positive clause
    matches (a positive weight's term, a negative weight's neg_ term), ties by docid."""
    q = np.zeros(2 * VOCAB)
    for t, w in terms.items():
        q[int(t[1:])] += w
        q[VOCAB + int(t[1:])] -= w
    scores = MATRIX @ q
    matching = np.flatnonzero((MATRIX[:, q > 0].getnnz(axis=1)) > 0)
    order = matching[np.lexsort((ID_RANK[matching], -scores[matching]))][:k]
    return [(IDS[i], float(scores[i])) for i in order]


def queries(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        size = rng.choice([1, 2, 5, 12, 30])
        # frequent and rare terms alike, integral weights (the exact float path) and a few fractional ones
        terms = {f"t{rng.randint(0, VOCAB - 1) if rng.random() < 0.5 else rng.randint(0, 20)}": rng.randint(1, 300)
                 for _ in range(size)}
        if i % 7 == 3:
            terms[next(iter(terms))] += 0.25
        if i % 6 == 1:  # a negated term: signed scoring, the shifted path
            terms[f"t{rng.randint(0, 20)}"] = -rng.randint(1, 300)
        if i % 5 == 0:  # rare heavy terms, frequent light ones: few candidates to advance the long lists to
            terms = {f"t{rng.randint(150, VOCAB - 1)}": 300, f"t{rng.randint(150, VOCAB - 1)}": 200,
                     **{f"t{j}": 1 for j in range(5)}}
        out.append({"qid": f"q{i}", "terms": terms})
    return out


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("approximate")
    (root / "vectors").mkdir()
    with open(root / "vectors" / "part-00000.jsonl", "w") as out:
        for docid, vec in zip(IDS, DOCS):
            out.write(json.dumps({"id": docid, "contents": "", "vector": vec}) + "\n")
    build_impact_index(root / "vectors", root / "index", threads=1)
    return root / "index"


def add_legacy_sidecar(index: Path) -> Path:
    """The folder the retired top-postings indexer wrote, ``<index>/top-postings``: a one-segment Lucene index with
    the main index's docids (its layout: TopPostingsIndexer, removed in issue 66). A sidecar that kept every posting
    held the same postings as the index, so a copy of the index's Lucene files stands for it here."""
    import shutil

    sidecar = index / "top-postings"
    sidecar.mkdir()
    for entry in index.iterdir():
        if entry.is_file() and entry.name.startswith(("_", "segments")):
            shutil.copy2(entry, sidecar / entry.name)
    return sidecar


def test_exact_search_over_windows_equals_brute_force(index):
    """Plain queries (the window scorer) and fractional ones (Lucene's BooleanQuery) give the brute-force top k."""
    from lsr_lucene.search.spec_searcher import SpecSearcher

    with SpecSearcher(index) as searcher:
        for spec in queries(40, seed=1):
            for k in (1, 10, 100, 1000):
                got = searcher.search_exact(spec, k)
                expected = brute_force(spec["terms"], k)
                assert [d for d, _, _ in got] == [d for d, _ in expected], (spec, k)
                assert [s for _, _, s in got] == pytest.approx([s for _, s in expected], rel=1e-12)
                assert searcher.search(spec, k) == [(d, float(f"{s:.6f}")) for d, s in expected]


def test_an_index_with_the_retired_sidecar_searches_exactly_and_says_so_once(index, tmp_path, capfd):
    """The old sidecar is never read: the run equals the plain index's and brute force, one note names it."""
    import shutil

    from lsr_lucene.search.spec_searcher import SpecSearcher

    legacy = tmp_path / "legacy"
    shutil.copytree(index, legacy)
    add_legacy_sidecar(legacy)
    specs = tmp_path / "specs.jsonl"
    specs.write_text("".join(json.dumps(s) + "\n" for s in queries(8, seed=4)))
    capfd.readouterr()
    for name, where in (("plain", index), ("legacy", legacy)):
        assert cli(["search", "--index", str(where), "--specs", str(specs), "--output", str(tmp_path / f"{name}.run"),
                    "--hits", "10"]) == 0
    err = capfd.readouterr().err
    assert err.count("note: ") == 1 and f"note: {legacy / 'top-postings'}" in err and "--heap-factor" in err
    hits = read_hits(tmp_path / "legacy.run")
    assert hits == read_hits(tmp_path / "plain.run")
    for spec in queries(8, seed=4):
        assert [d for d, _ in hits[spec["qid"]]] == [d for d, _ in brute_force(spec["terms"], 10)], spec
    with SpecSearcher(legacy) as first, SpecSearcher(legacy) as second:  # once per index and process
        spec = queries(1, seed=5)[0]
        assert first.search(spec, 10) == second.search(spec, 10, heap_factor=1.0)
    assert "note: " not in capfd.readouterr().err


@pytest.mark.parametrize("option", [["--approximate", "100"], ["--query-cut", "3"], ["--approximate=5"]])
def test_retired_search_options_name_the_heap_factor(index, tmp_path, capsys, option):
    capsys.readouterr()
    assert cli(["search", "--index", str(index), "--query-vectors", str(tmp_path / "none.jsonl"),
                "--output", str(tmp_path / "x.run"), *option]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {option[0].split('=')[0]} is retired") and "--heap-factor H" in err
    assert err.count("\n") == 1 and not (tmp_path / "x.run").exists()


def test_retired_index_option_and_python_keywords(index, tmp_path, capsys):
    from lsr_lucene.search.impact_searcher import ImpactSearcher
    from lsr_lucene.search.spec_searcher import SpecSearcher

    capsys.readouterr()
    assert cli(["index", "--index", str(index), "--top-postings", "300"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --top-postings is retired") and "--heap-factor" in err and err.count("\n") == 1
    assert not (index / "top-postings").exists()
    with pytest.raises(TypeError, match="approximate"):
        ImpactSearcher(index, encoder=object(), approximate=10)
    with SpecSearcher(index) as searcher:
        with pytest.raises(TypeError, match="query_cut"):
            searcher.search(queries(1, seed=1)[0], 10, query_cut=3)


def test_reorder_leaves_the_retired_sidecar_behind_and_anserini_still_reads_the_index(index, tmp_path):
    import shutil

    from pyserini.search.lucene import LuceneImpactSearcher

    from lsr_lucene.search.spec_searcher import SpecSearcher

    legacy = tmp_path / "legacy"
    shutil.copytree(index, legacy)
    add_legacy_sidecar(legacy)
    out = tmp_path / "bp"
    assert cli(["reorder", "--input", str(legacy), "--index", str(out)]) == 0
    assert not (out / "top-postings").exists()
    spec = queries(1, seed=6)[0]
    spec["terms"] = {t: int(w) for t, w in spec["terms"].items()}
    with SpecSearcher(out) as searcher:
        assert searcher.search(spec, 10) == [(d, s) for d, s in brute_force(spec["terms"], 10)]

    class Encoder:
        def encode(self, text):
            return spec["terms"]

    pyserini = LuceneImpactSearcher(str(legacy), Encoder())
    got = [(h.docid, h.score) for h in pyserini.search("q", k=10)]
    assert [d for d, _ in got] == [d for d, _ in brute_force(spec["terms"], 10)]
