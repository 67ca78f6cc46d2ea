"""Exact search over windows of docids (ImpactMaxScoreQuery) and approximate search on the top-postings sidecar
(issue 29), both checked against brute-force dot products on a collection of several windows (12,000 documents)."""
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
    build_impact_index(root / "vectors", root / "index", threads=1, top_postings=300)
    return root / "index"


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


def test_approximate_hits_are_scored_exactly_and_recall_grows_with_depth(index):
    from lsr_lucene.search.impact_searcher import ImpactSearcher

    recalls = {10: [], 50: [], 2000: []}
    with ImpactSearcher(index, encoder=object(), approximate=10) as searcher:
        for spec in queries(30, seed=2):
            exact = brute_force(spec["terms"], 10)
            truth = dict(brute_force(spec["terms"], N_DOCS))
            for depth in recalls:
                hits = searcher.search_spec(spec, 10, approximate=depth)
                assert all(h.score == pytest.approx(truth[h.docid], abs=1e-6) for h in hits), spec
                assert [(h.score, h.docid) for h in hits] == sorted(((h.score, h.docid) for h in hits),
                                                                   key=lambda x: (-x[0], x[1]))
                recalls[depth].append(len({h.docid for h in hits} & {d for d, _ in exact}) / max(1, len(exact)))
            assert [h.docid for h in searcher.search_spec(spec, 10)] == \
                [h.docid for h in searcher.search_spec(spec, 10, approximate=10)]  # the searcher's default
    mean = {depth: float(np.mean(r)) for depth, r in recalls.items()}
    assert mean[10] < 1.0, "the sidecar must drop postings that matter, or this test shows nothing"
    assert mean[10] <= mean[50] <= mean[2000] and mean[2000] > 0.95, mean


def test_a_sidecar_that_keeps_every_posting_searches_exactly(index, tmp_path):
    from lsr_lucene.search.spec_searcher import SpecSearcher

    assert cli(["index", "--index", str(index), "--top-postings", str(N_DOCS)]) == 2  # exists: refused
    copy = tmp_path / "copy"
    import shutil

    shutil.copytree(index, copy)
    assert cli(["index", "--index", str(copy), "--top-postings", str(N_DOCS), "--overwrite"]) == 0
    with SpecSearcher(copy) as searcher:
        for spec in queries(15, seed=3):
            assert searcher.search(spec, 10, approximate=10, query_cut=0) == searcher.search(spec, 10)


def test_search_verb_and_errors(index, tmp_path, capsys):
    specs = tmp_path / "specs.jsonl"
    specs.write_text("".join(json.dumps(s) + "\n" for s in queries(5, seed=4)))
    run = tmp_path / "approx.run"
    assert cli(["search", "--index", str(index), "--specs", str(specs), "--output", str(run), "--hits", "10",
                "--approximate", "100"]) == 0
    hits = read_hits(run)
    for spec in queries(5, seed=4):
        truth = dict(brute_force(spec["terms"], N_DOCS))
        assert all(score == pytest.approx(truth[d], abs=1e-6) for d, score in hits[spec["qid"]])
    plain = tmp_path / "plain"
    build_impact_index(index.parent / "vectors", plain, threads=1)
    capsys.readouterr()
    assert cli(["search", "--index", str(plain), "--specs", str(specs), "--output", str(tmp_path / "x.run"),
                "--approximate", "100"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "--top-postings" in err and err.count("\n") == 1
    assert not (tmp_path / "x.run").exists()


def test_reorder_rebuilds_the_sidecar_and_anserini_still_reads_the_index(index, tmp_path):
    from pyserini.search.lucene import LuceneImpactSearcher

    from lsr_lucene.index.top_postings import top_postings_per_term
    from lsr_lucene.search.spec_searcher import SpecSearcher

    out = tmp_path / "bp"
    assert cli(["reorder", "--input", str(index), "--index", str(out)]) == 0
    assert top_postings_per_term(out) == 300
    spec = queries(1, seed=6)[0]
    spec["terms"] = {t: int(w) for t, w in spec["terms"].items()}
    with SpecSearcher(out) as searcher:
        truth = dict(brute_force(spec["terms"], N_DOCS))
        assert all(s == pytest.approx(truth[d]) for d, s in searcher.search(spec, 10, approximate=50))
        assert searcher.search(spec, 10) == [(d, s) for d, s in brute_force(spec["terms"], 10)]

    class Encoder:
        def encode(self, text):
            return spec["terms"]

    pyserini = LuceneImpactSearcher(str(index), Encoder())
    got = [(h.docid, h.score) for h in pyserini.search("q", k=10)]
    assert [d for d, _ in got] == [d for d, _ in brute_force(spec["terms"], 10)]


def test_query_cut_keeps_scores_exact_and_trades_recall(index):
    """The first phase on the C heaviest query terms only: hits still exactly scored; fewer terms, less recall."""
    from lsr_lucene.errors import InputError
    from lsr_lucene.search.spec_searcher import SpecSearcher

    rng = random.Random(8)  # many frequent terms of like weights: no single term decides the top 10
    long = [{"qid": f"c{i}", "terms": {f"t{j}": rng.randint(80, 120) for j in rng.sample(range(40), 15)}}
            for i in range(10)]
    recall = {}
    with SpecSearcher(index) as searcher:
        for cut in (0, 1):
            got = []
            for spec in long:
                truth = dict(brute_force(spec["terms"], N_DOCS))
                hits = searcher.search(spec, 10, approximate=100, query_cut=cut)
                assert all(s == pytest.approx(truth[d], abs=1e-6) for d, s in hits)
                exact = {d for d, _ in brute_force(spec["terms"], 10)}
                got.append(len({d for d, _ in hits} & exact) / len(exact))
            recall[cut] = float(np.mean(got))
        with pytest.raises(InputError, match="query_cut"):
            searcher.search(long[0], 10, approximate=100, query_cut=-1)
    assert recall[1] < recall[0], recall
