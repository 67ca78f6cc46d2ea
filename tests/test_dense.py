"""Dense leg (lsr-lucene dense): all-MiniLM-L6-v2 from its wheel, mean pooling + L2 normalisation, and a Faiss
flat search whose top-k equals brute-force cosine on a small collection, ties by docid."""
from __future__ import annotations

from itertools import islice
from pathlib import Path

import numpy as np
import pytest

from lsr_lucene.cli import run_main
from lsr_lucene.dense.cli import main as dense_main
from lsr_lucene.dense.search import FlatSearcher
from lsr_lucene.dense.store import Embeddings, read_embeddings
from lsr_lucene.io.runs import read_run
from lsr_lucene.io.topics import read_topics

DEMO = Path(__file__).resolve().parents[1] / "lsr_lucene" / "data" / "demo"
pytest.importorskip("faiss")
pytest.importorskip("all_minilm_l6_v2")


@pytest.fixture(scope="module")
def small(tmp_path_factory, one_torch_thread, demo_head):
    """40 demo documents and 6 demo topics, encoded and searched through the command line."""
    tmp = tmp_path_factory.mktemp("dense")
    docs, corpus = demo_head
    topics = dict(islice(read_topics(DEMO / "topics.tsv").items(), 6))
    (tmp / "topics.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in topics.items()))
    assert run_main(dense_main, ["encode", "--corpus", str(corpus), "--output", str(tmp / "emb"), "--threads",
                                 "1", "--dtype", "fp32"]) == 0
    assert run_main(dense_main, ["search", "--index", str(tmp / "emb"), "--topics", str(tmp / "topics.tsv"),
                                 "--output", str(tmp / "dense.run"), "--hits", "15", "--threads", "1"]) == 0
    return {"docs": docs, "topics": topics, "dir": tmp}


def reference_vectors(texts: list[str]) -> np.ndarray:
    """Embeddings by sentence-transformers when installed (an independent implementation of the recipe),
    else by our encoder; unnormalised, so that the brute force divides by the norms itself."""
    from lsr_lucene.dense.models import resolve

    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        from lsr_lucene.dense.encoder import DenseEncoder

        return DenseEncoder(threads=1, dtype="fp32").encode(texts)
    model = SentenceTransformer(resolve("all-minilm-l6-v2"), device="cpu")
    return model.encode(texts, normalize_embeddings=False, convert_to_numpy=True, batch_size=8)


def brute_force(doc_vectors: np.ndarray, query: np.ndarray, docids: list[str], k: int) -> list[tuple[str, float]]:
    docs = doc_vectors.astype(np.float64)
    q = query.astype(np.float64)
    cosine = docs @ q / (np.linalg.norm(docs, axis=1) * np.linalg.norm(q))
    order = sorted(range(len(docids)), key=lambda i: (-round(cosine[i], 6), docids[i]))
    return [(docids[i], float(cosine[i])) for i in order[:k]]


def test_embeddings_are_mean_pooled_unit_vectors(small):
    stored = read_embeddings(small["dir"] / "emb")
    assert stored.docids == [d.id for d in small["docs"]]
    assert stored.metadata["dim"] == 384 and stored.metadata["pooling"] == "mean"
    assert np.allclose(np.linalg.norm(stored.vectors, axis=1), 1.0, atol=1e-5)
    reference = reference_vectors([d.contents for d in small["docs"]])
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    assert np.abs(stored.vectors - reference).max() < 1e-5


def test_run_top_k_equals_brute_force_cosine(small):
    docs = small["docs"]
    doc_vectors = reference_vectors([d.contents for d in docs])
    query_vectors = reference_vectors(list(small["topics"].values()))
    run = read_run(small["dir"] / "dense.run")
    assert set(run) == set(small["topics"])
    for qid, query in zip(small["topics"], query_vectors):
        expected = brute_force(doc_vectors, query, [d.id for d in docs], 15)
        got = sorted(run[qid].items(), key=lambda ds: (-ds[1], ds[0]))
        assert [d for d, _ in got] == [d for d, _ in expected], qid
        assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=2e-6)


def test_flat_searcher_equals_brute_force_at_every_depth(small):
    stored = read_embeddings(small["dir"] / "emb")
    searcher = FlatSearcher(stored, threads=1)
    queries = stored.vectors[:5] * 0.5 + stored.vectors[5:10] * 0.5  # mixtures: no exact self-match
    for k in (1, 7, len(stored.docids)):
        for query, got in zip(queries, searcher.search(queries, k)):
            expected = brute_force(stored.vectors, query, stored.docids, k)
            assert [d for d, _ in got] == [d for d, _ in expected]


def test_ties_by_docid_beyond_what_faiss_returns():
    rng = np.random.default_rng(0)
    base = rng.normal(size=8).astype(np.float32)
    vectors = np.tile(base / np.linalg.norm(base), (40, 1))  # 40 identical documents: all tied
    docids = [f"d{i}" for i in range(40)]
    searcher = FlatSearcher(Embeddings(list(reversed(docids)), vectors, {}), threads=1)
    (hits,) = searcher.search(vectors[:1], 5)
    assert [d for d, _ in hits] == sorted(docids)[:5]


def test_not_an_embeddings_directory_is_one_error_line(tmp_path, capsys):
    (tmp_path / "t.tsv").write_text("1\tx\n")
    assert run_main(dense_main, ["search", "--index", str(tmp_path), "--topics", str(tmp_path / "t.tsv"),
                                 "--output", str(tmp_path / "r.run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "not a dense embeddings directory" in err[0]
    assert not (tmp_path / "r.run").exists()


def test_blocked_search_of_the_memory_mapped_store_equals_brute_force(small):
    """The store is memory-mapped and searched block by block: small blocks (ties across blocks) stay exact."""
    stored = read_embeddings(small["dir"] / "emb")
    assert isinstance(stored.vectors, np.memmap)
    queries = stored.vectors[:5] * 0.5 + stored.vectors[5:10] * 0.5
    for block_rows in (1, 3, 7):
        searcher = FlatSearcher(stored, threads=1, block_rows=block_rows)
        for k in (1, 7, len(stored.docids)):
            for query, got in zip(queries, searcher.search(queries, k)):
                assert [d for d, _ in got] == [d for d, _ in brute_force(stored.vectors, query, stored.docids, k)]
    rng = np.random.default_rng(0)
    base = rng.normal(size=8).astype(np.float32)
    tied = np.tile(base / np.linalg.norm(base), (40, 1))
    docids = [f"d{i}" for i in range(40)]
    (hits,) = FlatSearcher(Embeddings(list(reversed(docids)), tied, {}), threads=1, block_rows=6).search(tied[:1], 5)
    assert [d for d, _ in hits] == sorted(docids)[:5]
