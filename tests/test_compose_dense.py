"""The dense positive leg of the negation `default` (issue 36): with ``<index>/dense`` present, compose blends the
dense cosine of A's text and each candidate's cosine with the best A match d* into Â
(Â ← minmax(Â + w·minmax(cos) + v·minmax(cos(·, d*))), d* the top of Â + w·minmax(cos)) with λ 0.7; the run equals
that formula computed here from the sparse legs' exact scores, independently encoded cosines and the stored document
vectors; without the folder the default is the sparse one, with a one-line note."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from lsr_lucene.cli import run_main
from lsr_lucene.compose.cli import main
from lsr_lucene.errors import InputError
from lsr_lucene.io.corpus import read_corpus
from lsr_lucene.io.runs import read_hits

pytest.importorskip("faiss")
pytest.importorskip("all_minilm_l6_v2")
QUERIES = ["tea without caffeine", "coffee drinks but not espresso", "training pets, excluding dogs"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, one_torch_thread, demo_head):
    """40 demo documents: splade-tiny vectors and impact index, and a copy of the index with ``dense/`` inside."""
    from lsr_lucene.dense.cli import main as dense_main
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.index import impact as index
    from lsr_lucene.io.vectors import write_vectors

    root = tmp_path_factory.mktemp("compose-dense")
    docs, corpus = demo_head
    write_vectors(read_corpus(corpus), SparseEncoder("splade-tiny", max_length=64, threads=1), root / "vectors")
    index.build_impact_index(root / "vectors", root / "sparse", threads=1)
    shutil.copytree(root / "sparse", root / "index")
    assert run_main(dense_main, ["encode", "--corpus", str(corpus), "--output", str(root / "index" / "dense"),
                                 "--threads", "1", "--dtype", "fp32", "--max-length", "64"]) == 0
    return {"root": root, "docs": docs}


def expected_scores(traces: list, cosines: dict, doc_vectors: dict | None = None, lam: float = 0.7, gate: float = 0.9,
                    w: float = 1.0, v: float = 1.0) -> dict:
    """The dense default's formula by hand, from the sparse legs' scores (A, B), the cosines of A's text and (the
    neighbour term, when ``doc_vectors`` are given) the documents' stored unit vectors."""
    def mm(x: dict) -> dict:
        lo, hi = min(x.values()), max(x.values())
        return {d: (s - lo) / (hi - lo) if hi > lo else 0.0 for d, s in x.items()}

    a, b = mm(traces[0]), mm(traces[1])
    c = mm(cosines)
    a = {d: a[d] + w * c[d] for d in a}
    if doc_vectors is not None:
        best = sorted(a, key=lambda d: (-a[d], d))[0]
        near = mm({d: float(doc_vectors[d] @ doc_vectors[best]) for d in a})
        a = {d: a[d] + v * near[d] for d in a}
    a = mm(a)
    return {d: max(a[d] - lam * max(0.0, b[d] - gate) / (1 - gate), 0.05 * a[d]) for d in a}


def test_dense_default_equals_the_formula(tiny):
    from lsr_lucene.compose import ComposeSearcher
    from lsr_lucene.compose.searcher import composition
    from lsr_lucene.dense.encoder import DenseEncoder
    from lsr_lucene.dense.store import read_embeddings

    root = tiny["root"]
    # the blend's formula alone: documents that state B absent (compose/absence.py) are tested in test_negation_absence
    with ComposeSearcher(root / "index", absence=False) as dense, \
            ComposeSearcher(root / "index", dense="none", absence=False) as sparse, \
            ComposeSearcher(root / "index", neighbour_weight=0, absence=False) as plain_blend, \
            ComposeSearcher(root / "index", absence=False, dense_depth=0) as own_hits_only:
        assert dense.dense_path == root / "index" / "dense" and sparse.dense_path is None
        assert dense.settings.dense_leg() and dense.settings.lam_for("fusion-gated") == 0.7
        assert sparse.settings.lam_for("fusion-gated") == 1.0
        emb = read_embeddings(root / "index" / "dense")
        encoder = DenseEncoder(threads=1, dtype="fp32")
        changed = moved = 0
        for query in QUERIES:
            tree = sparse.parse(query).tree
            assert not isinstance(tree, str) and tree.op == "not" and isinstance(tree.a, str), query  # cue fires
            a_text = tree.a
            traces: dict = {}
            comp = composition(query, "q")
            sparse.rank([comp], sparse.plans([comp]), 40, traces=traces)
            # candidates: the splade legs' hits and the dense leg's own top documents (its top 1,000: every one of
            # the 40), where a leg that does not match a document scores 0
            cand = sorted(set(traces["q"][0]) | set(emb.docids))
            legs = [{d: leg.get(d, 0.0) for d in cand} for leg in traces["q"][:2]]
            assert len(cand) > len(traces["q"][0])  # the dense leg adds candidates (else this could not fail)
            q = encoder.encode_queries([a_text])[0].astype(np.float64)
            rows = {d: i for i, d in enumerate(emb.docids)}
            vectors = {d: np.asarray(emb.vectors[rows[d]], dtype=np.float32).astype(np.float64) for d in cand}
            cos = {d: float(vectors[d] @ q) for d in cand}
            for searcher, docs in ((dense, vectors), (plain_blend, None)):  # with and without the neighbour term
                want = expected_scores(legs, cos, docs)
                want_order = sorted(want, key=lambda d: (-round(want[d], 6), d))[:10]
                got = searcher.search(query, k=10)
                assert [h.docid for h in got] == want_order, query
                assert [h.score for h in got] == pytest.approx([want[d] for d in want_order], abs=1e-6)
            sparse_cand = list(traces["q"][0])  # --dense-depth 0: the splade legs' hits only, as before issue 49
            want = expected_scores(traces["q"], {d: cos[d] for d in sparse_cand},
                                   {d: vectors[d] for d in sparse_cand})
            want_order = sorted(want, key=lambda d: (-round(want[d], 6), d))[:10]
            assert [h.docid for h in own_hits_only.search(query, k=10)] == want_order, query
            changed += [h.docid for h in got] != [h.docid for h in sparse.search(query, k=10)]
            moved += [(h.docid, round(h.score, 6)) for h in dense.search(query, k=10)] != \
                [(h.docid, round(h.score, 6)) for h in got]
        assert changed and moved  # the dense leg and its neighbour term change rankings (else this could not fail)
        uncued = "green tea from japan"  # no cue: one vector, the dense leg is not used
        assert [(h.docid, h.score) for h in dense.search(uncued, k=5)] == \
            [(h.docid, h.score) for h in sparse.search(uncued, k=5)]


def test_cli_uses_the_dense_folder_explains_it_and_notes_its_absence(tiny, tmp_path, capsys):
    from lsr_lucene.compose import ComposeSearcher

    root = tiny["root"]
    args = ["--query", QUERIES[0], "--query", QUERIES[1], "--hits", "10"]
    assert main(["--index", str(root / "index"), *args, "--output", str(tmp_path / "d.run"), "--explain"]) == 0
    captured = capsys.readouterr()
    assert "dense A leg w 1" in captured.err and "dense leg all-minilm-l6-v2 from" in captured.err
    assert "·dense " in captured.out and "λ=0.7" in captured.out
    assert "best-match neighbour leg v 1" in captured.err and "1·cos with best A match " in captured.out
    with ComposeSearcher(root / "index") as s:
        got = s.batch_search(QUERIES[:2], ["1", "2"], k=10)
    run = read_hits(tmp_path / "d.run")
    assert {q: [(h.docid, h.score) for h in hits] for q, hits in got.items()} == run
    assert main(["--index", str(root / "sparse"), *args, "--output", str(tmp_path / "s.run")]) == 0
    err = capsys.readouterr().err
    assert sum(line.startswith("note: no dense leg") for line in err.splitlines()) == 1
    assert main(["--index", str(root / "index"), *args, "--dense", "none", "--output", str(tmp_path / "n.run")]) == 0
    assert read_hits(tmp_path / "n.run") == read_hits(tmp_path / "s.run")  # the fallback is the sparse default
    assert main(["--index", str(root / "sparse"), *args, "--dense", str(root / "index" / "dense"),
                 "--output", str(tmp_path / "e.run")]) == 0
    assert read_hits(tmp_path / "e.run") == run  # a folder given with --dense


def test_server_compose_route_uses_the_dense_leg(tiny):
    from lsr_lucene.compose import ComposeSearcher
    from lsr_lucene.serve.engine import SearchEngine

    root = tiny["root"]
    engine = SearchEngine(root / "index")
    try:
        _, found = engine.compose(QUERIES[0], hits=5)
        _, named = engine.compose(QUERIES[0], hits=5, options={"not_op": "fusion-gated", "lam": 1.0})
    finally:
        engine.close()
    with ComposeSearcher(root / "index") as s, ComposeSearcher(root / "index", not_op="fusion-gated", lam=1.0) as t:
        assert [(c["docid"], c["score"]) for c in found] == [(h.docid, h.score) for h in s.search(QUERIES[0], k=5)]
        assert t.settings.dense_leg()  # options keep the searcher's leg (fusion-gated named, λ 1, dense blend)
        assert [(c["docid"], c["score"]) for c in named] == [(h.docid, h.score) for h in t.search(QUERIES[0], k=5)]


def test_dense_folder_of_another_corpus_is_one_error_line(tiny, tmp_path):
    from lsr_lucene.compose import ComposeSearcher
    from lsr_lucene.dense.store import read_embeddings, write_embeddings

    root = tiny["root"]
    emb = read_embeddings(root / "index" / "dense")
    write_embeddings(tmp_path / "other", emb.docids[:30], np.asarray(emb.vectors[:30]), emb.metadata)
    with ComposeSearcher(root / "sparse", dense=tmp_path / "other") as s, pytest.raises(InputError) as err:
        s.search(QUERIES[0], k=5)
    assert "30 document embeddings for an index of 40 documents" in str(err.value) and "\n" not in str(err.value)
    extra = np.vstack([np.asarray(emb.vectors), np.asarray(emb.vectors[:1])])  # a document the index skipped (empty)
    write_embeddings(tmp_path / "more", emb.docids + ["empty-doc"], extra, emb.metadata)
    with ComposeSearcher(root / "sparse", dense=tmp_path / "more") as s, \
            ComposeSearcher(root / "index") as t:
        assert [(h.docid, h.score) for h in s.search(QUERIES[0], k=5)] == \
            [(h.docid, h.score) for h in t.search(QUERIES[0], k=5)]
    with pytest.raises(InputError, match="no such dense embeddings folder"):
        ComposeSearcher(root / "sparse", dense=tmp_path / "missing")


def test_a_query_text_is_encoded_once_for_its_candidates_and_its_cosines(tiny):
    """execute asks the dense leg for its own candidates and then for the cosines of the same A text: one encoding,
    and the memo gives the same cosines as a fresh leg."""
    from lsr_lucene.compose.dense_leg import DenseLeg

    leg = DenseLeg(tiny["root"] / "index" / "dense")
    calls: list = []
    original = leg.encoder.encode_queries
    leg.encoder.encode_queries = lambda texts, *a, **k: calls.append(list(texts)) or original(texts, *a, **k)
    top = leg.search(["herbal tea"], 5)[0]
    cosines = leg.scores(["herbal tea"], top)[0]
    assert calls == [["herbal tea"]]
    assert cosines == DenseLeg(tiny["root"] / "index" / "dense").scores(["herbal tea"], top)[0]
    assert [d for d, _ in sorted(cosines.items(), key=lambda kv: (-kv[1], kv[0]))] == top
