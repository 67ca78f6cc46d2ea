"""Cranfield end to end with splade-tiny (document max length 256): Lucene search equals brute force.

The pipeline runs through the same CLI entry points users call. Skipped when ../shared/data is absent.
"""
from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cranfield"
pytestmark = pytest.mark.skipif(not (DATA / "corpus.jsonl").exists(), reason="../shared/data/cranfield not present")


def brute_force_run(doc_vectors: list[tuple[str, dict]], query_vectors: dict[str, dict], path: Path, k: int) -> None:
    """The project's signed brute-force reference (exact double dot products, ties by docid), written as a run."""
    from lsr_lucene.compose.backends import ExactBackend
    from lsr_lucene.io.runs import write_run

    backend = ExactBackend(doc_vectors)
    write_run({qid: backend.search({"terms": q}, k) for qid, q in query_vectors.items()}, path, "brute",
              overwrite=True)


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
    from lsr_lucene.io.runs import read_run
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
