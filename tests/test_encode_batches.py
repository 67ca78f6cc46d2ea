"""Batches are a function of the input order and the batch size alone (issue 37): neither the shard size, nor where an
interrupted run resumes, nor the thread count changes which documents a document is batched (and padded) with, so
the same input and options give the same vectors on any CPU (fp32 kernels sum in an order that depends on a batch's
shape; on AMX hosts a document moved to another batch gets other weights)."""
import json
from pathlib import Path

import pytest

from lsr_lucene.encode.encoder import SparseEncoder
from lsr_lucene.errors import Interrupted
from lsr_lucene.io.vectors import read_vectors, write_vectors

pytestmark = pytest.mark.usefixtures("one_torch_thread")
CRANFIELD = Path(__file__).resolve().parents[2] / "shared" / "data" / "cranfield"


def cranfield_docs(n=40) -> list[tuple[str, str]]:
    """The first n Cranfield documents as (id, text), or made-up aeronautics word lists without ../shared."""
    if (CRANFIELD / "corpus.jsonl").is_file():
        rows = [json.loads(line) for _, line in zip(range(n), (CRANFIELD / "corpus.jsonl").open())]
        return [(f"d{i}", f"{r['title']} {r['text']}".strip()) for i, r in enumerate(rows)]
    words = "wing flow pressure boundary layer shock heat transfer supersonic jet plate".split()
    return [(f"d{i}", " ".join(words[(i * 7 + k) % len(words)] for k in range(3 + i % 30))) for i in range(n)]


@pytest.fixture(scope="module")
def encoder():
    return SparseEncoder("splade-tiny", max_length=64, threads=1, dtype="fp32")


def _record(encoder, monkeypatch) -> list:
    """The padded batches fed to the model from now on, in order (each a tuple of token-id rows)."""
    batches = []
    original = encoder._pad

    def pad(ids):
        batches.append(tuple(tuple(x) for x in ids))
        return original(ids)

    monkeypatch.setattr(encoder, "_pad", pad)
    return batches


def _interrupt_after(docs, n):
    for i, doc in enumerate(docs):
        if i == n:
            raise Interrupted()
        yield doc


def test_shard_size_and_resumption_leave_batches_and_vectors_unchanged(encoder, tmp_path, monkeypatch):
    docs = cranfield_docs()
    batches = _record(encoder, monkeypatch)
    write_vectors(docs, encoder, tmp_path / "s5", shard_size=5, batch_size=4, window=12)
    reference = list(batches)
    batches.clear()
    write_vectors(docs, encoder, tmp_path / "s7", shard_size=7, batch_size=4, window=12)
    assert batches == reference  # the same documents in the same batches, in the same order
    assert list(read_vectors(tmp_path / "s7")) == list(read_vectors(tmp_path / "s5"))

    with pytest.raises(Interrupted):  # 3 complete shards (21 documents); the run resumes inside window 12..23
        write_vectors(_interrupt_after(docs, 30), encoder, tmp_path / "resumed", shard_size=7, batch_size=4,
                      window=12)
    batches.clear()
    meta = write_vectors(docs, encoder, tmp_path / "resumed", shard_size=7, batch_size=4, window=12)
    assert meta["resumed_after_documents"] == 21
    assert batches == reference[3:]  # windows 12..23, 24..35, 36..39 as the uninterrupted run batched them
    assert list(read_vectors(tmp_path / "resumed")) == list(read_vectors(tmp_path / "s5"))


def test_thread_count_leaves_vectors_unchanged(tmp_path):
    docs = cranfield_docs(24)
    outputs = []
    for threads in (1, 2):
        encoder = SparseEncoder("splade-tiny", max_length=64, threads=threads, dtype="fp32")
        write_vectors(docs, encoder, tmp_path / f"t{threads}", batch_size=4)
        outputs.append(list(read_vectors(tmp_path / f"t{threads}")))
    assert outputs[0] == outputs[1]
