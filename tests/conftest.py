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
