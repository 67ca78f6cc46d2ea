"""Fixtures shared by test modules."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

DEMO = Path(__file__).resolve().parents[1] / "lsr_lucene" / "data" / "demo"


@pytest.fixture(autouse=True)
def jvm_signal_handlers():
    """Tests start Ray themselves (ray.init, ray.shutdown), which resets SIGSEGV: the JVM that earlier tests started
    in this process gets its handlers back before and after every test (lsr_lucene.jvm.signals)."""
    from lsr_lucene.jvm.signals import kept_jvm_handlers, restore_jvm_handlers

    restore_jvm_handlers()
    with kept_jvm_handlers():
        yield


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread: on a shared 2-core machine two OpenMP threads stall on every small operation."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    """The shipped demo collection encoded with splade-tiny (max length 64) and indexed, once per session:
    ``<root>/vectors`` and ``<root>/index``."""
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.index import impact as index
    from lsr_lucene.io.corpus import read_corpus
    from lsr_lucene.io.vectors import write_vectors

    root = tmp_path_factory.mktemp("demo-compose")
    encoder = SparseEncoder("splade-tiny", max_length=64, threads=1)  # demo documents are short
    write_vectors(read_corpus(DEMO / "corpus.jsonl"), encoder, root / "vectors")
    index.build_impact_index(root / "vectors", root / "index", threads=1)
    return root


@pytest.fixture(scope="session")
def demo_head(tmp_path_factory):
    """The first 40 demo documents and a corpus file of them (JSONL), for tests that encode a small corpus."""
    import json
    from itertools import islice

    from lsr_lucene.io.corpus import read_corpus

    docs = list(islice(read_corpus(DEMO / "corpus.jsonl"), 40))
    corpus = tmp_path_factory.mktemp("demo-head") / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d.id, "title": d.title, "text": d.text}) + "\n" for d in docs))
    return docs, corpus


class ZipfCollection:
    """9,500 synthetic documents (three windows of 4,096 docids, the last partial) with Zipf-like term frequencies
    (t0 in most documents, t39 in few), small impacts so that scores tie often; t1's impacts reach 300; one window
    of documents holds no frequent term. ``vectors`` (one part file), ``plain`` (its impact index); brute-force
    scores, random plain queries and the heap factor's property for every entry point's tests."""

    DOCS = 9_500
    VOCAB = [f"t{i}" for i in range(40)]

    def __init__(self, root: Path):
        import json

        import numpy as np
        from lsr_lucene.index.impact import build_impact_index

        rng = np.random.default_rng(7)
        self.rows: list[dict] = []
        for i in range(self.DOCS):
            row = {}
            for j, term in enumerate(self.VOCAB):
                if rng.random() < 0.9 / (1 + j) and not 4096 <= i < 4300:
                    row[term] = int(rng.integers(1, 300 if term == "t1" else 6))
            if not row:
                row["t39"] = 1
            self.rows.append(row)
        self.root = root
        self.vectors = root / "vectors"
        self.vectors.mkdir()
        (self.vectors / "part-00000.jsonl").write_text("".join(
            json.dumps({"id": f"d{i:05d}", "contents": "", "vector": r}) + "\n" for i, r in enumerate(self.rows)))
        self.plain = root / "plain"
        build_impact_index(self.vectors, self.plain, threads=1)

    def scores(self, terms: dict) -> dict[str, float]:
        """Brute-force dot product of every document matching some query term."""
        return {f"d{i:05d}": float(sum(w * row.get(t, 0) for t, w in terms.items()))
                for i, row in enumerate(self.rows) if any(t in row for t in terms)}

    def brute_force(self, terms: dict, k: int) -> list[tuple[str, float]]:
        """The exact top k (score descending, ties by docid)."""
        return sorted(self.scores(terms).items(), key=lambda x: (-x[1], x[0]))[:k]

    def queries(self, n: int, seed: int) -> list[dict]:
        """``n`` plain query specs of 1 to 11 terms with weights 1 to 3."""
        import numpy as np

        rng = np.random.default_rng(seed)
        out = []
        for q in range(n):
            picked = rng.choice(len(self.VOCAB), size=int(rng.integers(1, 12)), replace=False)
            out.append({"qid": f"q{q}", "terms": {self.VOCAB[j]: int(rng.integers(1, 4)) for j in picked}})
        return out

    def check_heap_factor(self, got: list[tuple[str, float]], terms: dict, k: int, h: float) -> int:
        """The heap factor's promise for one query's hits ``got`` (docid, score), searched with heap factor ``h``:
        every hit has its exact score, in run order, and every document scoring at least the exact k-th score / h
        is found (h = 1: the exact top k itself). Returns how many of the exact top k were missed."""
        every = self.scores(terms)
        exact = self.brute_force(terms, k)
        got = [(d, float(s)) for d, s in got]
        if h == 1:
            assert got == exact, terms
            return 0
        assert all(every[d] == s for d, s in got), terms
        assert got == sorted(got, key=lambda x: (-x[1], x[0]))
        kth = exact[-1][1]
        assert {d for d, s in exact if s >= kth / h} <= {d for d, _ in got}, (terms, k)
        return len({d for d, _ in exact} - {d for d, _ in got})


@pytest.fixture(scope="session")
def zipf(tmp_path_factory) -> ZipfCollection:
    """The synthetic collection on which a heap factor below 1 prunes (ZipfCollection), built once per session."""
    return ZipfCollection(tmp_path_factory.mktemp("zipf"))


def pytest_configure(config):
    config.addinivalue_line("markers", "registry: a fresh install from the package registry (minutes); run with "
                                       "LSR_REGISTRY_TESTS=1, as .ci/run does")


def pytest_collection_modifyitems(config, items):
    """Registry tests (a fresh install from the package registry) run only when LSR_REGISTRY_TESTS=1."""
    import os

    if os.environ.get("LSR_REGISTRY_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="registry: set LSR_REGISTRY_TESTS=1 (.ci/run does)")
    for item in items:
        if "registry" in item.keywords:
            item.add_marker(skip)
