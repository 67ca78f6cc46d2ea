"""Cranfield end to end with splade-tiny (document max length 256): Lucene search equals brute force.

The pipeline runs through the same CLI entry points users call. Skipped when ../shared/data is absent.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cranfield"
pytestmark = pytest.mark.skipif(not (DATA / "corpus.jsonl").exists(), reason="../shared/data/cranfield not present")


def brute_force_run(doc_vectors: list[tuple[str, dict]], query_vectors: dict[str, dict], path: Path, k: int) -> None:
    """Exact dot products with scipy; ranks ties by docid like Anserini; candidates need a positive term."""
    vocab: dict[str, int] = {}
    def matrix(vectors):
        rows, cols, vals = [], [], []
        for i, vec in enumerate(vectors):
            for term, weight in vec.items():
                rows.append(i)
                cols.append(vocab.setdefault(term, len(vocab)))
                vals.append(weight)
        return rows, cols, vals
    d_rows, d_cols, d_vals = matrix([v for _, v in doc_vectors])
    qids = list(query_vectors)
    q_rows, q_cols, q_vals = matrix([query_vectors[q] for q in qids])
    docs = sp.csr_matrix((d_vals, (d_rows, d_cols)), shape=(len(doc_vectors), len(vocab)), dtype=np.float64)
    queries = sp.csr_matrix((q_vals, (q_rows, q_cols)), shape=(len(qids), len(vocab)), dtype=np.float64)
    scores = (queries @ docs.T).toarray()
    matches = ((queries > 0).astype(np.float64) @ (docs > 0).astype(np.float64).T).toarray() > 0
    doc_ids = [d for d, _ in doc_vectors]
    with path.open("w") as out:
        for qi, qid in enumerate(qids):
            hits = sorted(((-scores[qi, j], doc_ids[j]) for j in np.flatnonzero(matches[qi])))[:k]
            for rank, (neg, doc) in enumerate(hits, 1):
                out.write(f"{qid} Q0 {doc} {rank} {-neg:.6f} brute\n")


@pytest.fixture(scope="module")
def cranfield(tmp_path_factory):
    from lsr_lucene.encode import cli as encode
    from lsr_lucene.index import cli as index
    from lsr_lucene.search import cli as search

    root = tmp_path_factory.mktemp("cranfield")
    assert encode.main(["--corpus", str(DATA / "corpus.jsonl"), "--output", str(root / "vectors"),
                        "--max-length", "256", "--threads", "2"]) == 0
    assert encode.main(["--topics", str(DATA / "topics.tsv"), "--output", str(root / "queries.jsonl")]) == 0
    assert index.main(["--input", str(root / "vectors"), "--index", str(root / "index")]) == 0
    assert search.main(["--index", str(root / "index"), "--query-vectors", str(root / "queries.jsonl"),
                        "--output", str(root / "lucene.run"), "--hits", "1000"]) == 0
    return root


def test_lucene_scores_equal_brute_force(cranfield):
    from lsr_lucene.eval.trec import read_run
    from lsr_lucene.io.topics import read_query_vectors
    from lsr_lucene.io.vectors import read_vectors

    docs = list(read_vectors(cranfield / "vectors"))
    queries = read_query_vectors(cranfield / "queries.jsonl")
    sample = dict(list(queries.items())[::9])  # 25 queries
    brute_force_run(docs, sample, cranfield / "brute.run", k=1000)
    lucene, brute = read_run(cranfield / "lucene.run"), read_run(cranfield / "brute.run")
    for qid in sample:
        assert list(lucene[qid]) == list(brute[qid]), f"ranking differs for query {qid}"
        assert list(lucene[qid].values()) == pytest.approx(list(brute[qid].values()), abs=1e-3)


def test_ndcg_through_lucene_matches_brute_force(cranfield):
    from lsr_lucene.eval.trec import evaluate
    from lsr_lucene.io.topics import read_query_vectors
    from lsr_lucene.io.vectors import read_vectors

    brute_force_run(list(read_vectors(cranfield / "vectors")), read_query_vectors(cranfield / "queries.jsonl"),
                    cranfield / "brute-all.run", k=1000)
    table = evaluate(DATA / "qrels.txt", {"lucene": cranfield / "lucene.run", "brute": cranfield / "brute-all.run"})
    lucene, brute = table.loc["lucene", "nDCG@10"], table.loc["brute", "nDCG@10"]
    assert lucene >= 0.355
    assert abs(lucene - brute) <= 0.002
