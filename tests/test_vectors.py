"""Quantisation and the resumable JsonVectorCollection shard writer (with a fake encoder: fast and exact)."""
import json
import math

import pytest

from lsr_lucene.io.corpus import read_corpus
from lsr_lucene.errors import InputError
from lsr_lucene.io.vectors import (quantise, quantise_query, read_metadata, read_vectors, signed, write_vectors)


class FakeEncoder:
    """Deterministic stand-in: weight of a word = 0.01 × (its count) − 0.02 for words starting with 'not'."""

    def __init__(self, nan_for: str | None = None, tag: str = "fake"):
        self.nan_for = nan_for
        self.tag = tag
        self.encoded: list[str] = []
        self.calls: list[list[str]] = []  # the texts of each encoder call (one window each)

    def settings(self) -> dict:
        return {"model": self.tag, "max_length": 32, "activation": "splade", "pooling": "max", "epsilon": 1.0,
                "dtype": "fp32"}

    def _vector(self, text: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for word in text.split():
            out[word] = out.get(word, 0.0) + (-0.02 if word.startswith("not") else 0.0123)
        if self.nan_for and self.nan_for in out:
            out[self.nan_for] = math.nan
        return out

    def encode_documents(self, texts, batch_size=16):
        self.encoded.extend(texts)
        self.calls.append(list(texts))
        return [self._vector(t) for t in texts]

    def token_weights(self, texts, max_length=None, batch_size=16):
        return [[(w, 0.5) for w in t.split()] for t in texts]


def test_quantise_rounding_neg_split_and_zero_drop():
    weights = {"wing": 1.234, "flow": 0.004, "tiny": 0.0049, "drag": -0.5, "lift": 0.0, "half": 0.125, "odd": 0.375}
    assert quantise(weights, 100) == {"wing": 123, "neg_drag": 50, "half": 12, "odd": 38}  # half to even
    assert quantise({"a": 2.0}, 10) == {"a": 20}
    assert all(isinstance(v, int) for v in quantise(weights).values())


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_quantise_non_finite_names_document(bad):
    with pytest.raises(InputError, match="doc-7.*'wing'"):
        quantise({"wing": bad}, 100, doc_id="doc-7")
    with pytest.raises(InputError, match="q3"):
        quantise_query({"wing": bad}, 100, query_id="q3")


def test_quantise_query_keeps_signs_and_signed_merges():
    assert quantise_query({"wing": 0.5, "drag": -0.25, "zero": 0.001}, 100) == {"wing": 50, "drag": -25}
    assert signed({"wing": 50, "neg_drag": 25, "neg_wing": 10}) == {"wing": 40, "drag": -25}


def _corpus(tmp_path, texts, name="corpus.jsonl"):
    path = tmp_path / name
    with path.open("w") as handle:
        for i, text in enumerate(texts):
            handle.write(json.dumps({"id": f"d{i:02d}", "title": "", "text": text}) + "\n")
    return path


TEXTS = [f"wing{i % 5} flow{i % 3} not{i % 2} lift" for i in range(23)]


def _outputs(directory):
    return {p.name: p.read_text() for p in sorted(directory.glob("part-*.jsonl"))}


def test_write_and_read_vectors(tmp_path):
    corpus = _corpus(tmp_path, TEXTS)
    out = tmp_path / "vectors"
    meta = write_vectors(read_corpus(corpus), FakeEncoder(), out, scale=100, shard_size=10)
    assert (meta["documents"], meta["shards"], meta["skipped_empty"]) == (23, 3, 0)
    assert read_metadata(out)["scale"] == 100 and read_metadata(out)["model"] == "fake"
    assert sorted(p.name for p in out.iterdir()) == ["part-00000.jsonl", "part-00001.jsonl", "part-00002.jsonl"]
    rows = list(read_vectors(out, with_contents=True))
    assert [r[0] for r in rows] == [f"d{i:02d}" for i in range(23)]
    first_id, first_vector, first_text = rows[0]
    assert first_text == TEXTS[0]
    assert first_vector == {"wing0": 1, "flow0": 1, "neg_not0": 2, "lift": 1}
    assert not list(tmp_path.glob(".vectors*"))  # no partial directory left behind


class Interrupted(Exception):
    pass


def _interrupt_after(docs, n):
    for i, doc in enumerate(docs):
        if i == n:
            raise Interrupted()
        yield doc


def test_resume_after_interruption_gives_same_output(tmp_path):
    corpus = _corpus(tmp_path, TEXTS[:10] + ["", "  "] + TEXTS[10:])
    reference = tmp_path / "reference"
    first = FakeEncoder()
    write_vectors(read_corpus(corpus), first, reference, shard_size=5, window=4)

    out = tmp_path / "resumed"
    with pytest.raises(Interrupted):  # interrupted in the middle of the third shard
        write_vectors(_interrupt_after(read_corpus(corpus), 14), FakeEncoder(), out, shard_size=5, window=4)
    assert not out.exists()
    partial = tmp_path / ".resumed.partial"
    assert sorted(p.name for p in partial.glob("part-*.jsonl")) == ["part-00000.jsonl", "part-00001.jsonl"]

    again = FakeEncoder()
    meta = write_vectors(read_corpus(corpus), again, out, shard_size=5, window=4)
    assert _outputs(out) == _outputs(reference)
    # the two complete shards (10 documents) were not encoded again, except the window the run resumes in
    # (documents 8..11), which is encoded whole, so every batch is the uninterrupted run's
    assert again.calls == first.calls[2:]
    assert len(again.encoded) == 23 - 8
    assert meta["resumed_after_documents"] == 10 and meta["skipped_empty"] == 2 and meta["documents"] == 23
    assert not partial.exists()


@pytest.mark.parametrize("window", [4, 512])
def test_batches_do_not_depend_on_shard_size(tmp_path, window):
    """Windows are counted from the input's start: shard size changes neither the encoder calls nor the vectors."""
    corpus = _corpus(tmp_path, TEXTS[:10] + ["", "  "] + TEXTS[10:])
    calls, outputs = [], []
    for shard_size in (3, 5, 1000):
        encoder = FakeEncoder()
        out = tmp_path / f"v{shard_size}"
        meta = write_vectors(read_corpus(corpus), encoder, out, shard_size=shard_size, window=window)
        calls.append(encoder.calls)
        outputs.append(list(read_vectors(out)))
        assert meta["documents"] == 23 and meta["skipped_empty"] == 2 and meta["encode_window"] == window
    texts = [t for t in TEXTS if t.strip()]
    assert calls[0] == calls[1] == calls[2] == [texts[i:i + window] for i in range(0, len(texts), window)]
    assert outputs[0] == outputs[1] == outputs[2]


def test_encode_window_is_whole_batches():
    from lsr_lucene.io.vectors import encode_window

    assert encode_window(16) == 512 and encode_window(64) == 512 and encode_window(24) == 528
    assert encode_window(256) == 2048 and encode_window(1) == 512


def test_resume_refuses_other_settings_and_changed_input(tmp_path):
    corpus = _corpus(tmp_path, TEXTS)
    out = tmp_path / "vectors"
    with pytest.raises(Interrupted):
        write_vectors(_interrupt_after(read_corpus(corpus), 12), FakeEncoder(), out, shard_size=5, window=4)
    with pytest.raises(InputError, match="scale"):
        write_vectors(read_corpus(corpus), FakeEncoder(), out, shard_size=5, scale=10, window=4)
    with pytest.raises(InputError, match="model"):
        write_vectors(read_corpus(corpus), FakeEncoder(tag="other"), out, shard_size=5, window=4)
    changed = _corpus(tmp_path, ["other text"] + TEXTS[1:], name="changed.jsonl")
    with pytest.raises(InputError, match="differs"):
        write_vectors(read_corpus(changed), FakeEncoder(), out, shard_size=5, window=4)
    meta = write_vectors(read_corpus(corpus), FakeEncoder(), out, shard_size=5, window=4)  # same settings: resumes
    assert meta["documents"] == 23


def test_duplicate_id_names_id_and_line(tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_text('{"id": "a", "text": "wing"}\n{"id": "b", "text": "flow"}\n{"id": "a", "text": "lift"}\n')
    with pytest.raises(InputError, match=r"dup.jsonl:3: duplicate document id 'a' \(first seen as document #1"):
        write_vectors(read_corpus(path), FakeEncoder(), tmp_path / "out")


def test_empty_documents_are_skipped_and_counted(tmp_path):
    corpus = _corpus(tmp_path, ["wing", "", "flow lift", "   ", ""])
    out = tmp_path / "vectors"
    meta = write_vectors(read_corpus(corpus), FakeEncoder(), out, shard_size=1)
    assert meta["skipped_empty"] == 3 and meta["documents"] == 2
    assert read_metadata(out)["skipped_empty"] == 3
    assert [doc_id for doc_id, _ in read_vectors(out)] == ["d00", "d02"]
    with pytest.raises(InputError, match="no non-empty"):
        write_vectors(read_corpus(_corpus(tmp_path, ["", " "], "empty.jsonl")), FakeEncoder(), tmp_path / "none")


def test_nan_weight_names_document_and_line(tmp_path):
    corpus = _corpus(tmp_path, ["wing flow", "lift drag", "wing"])
    with pytest.raises(InputError, match=r"corpus.jsonl:2.*d01.*drag"):
        write_vectors(read_corpus(corpus), FakeEncoder(nan_for="drag"), tmp_path / "out")


def test_existing_output_refused_unless_overwrite(tmp_path):
    corpus = _corpus(tmp_path, TEXTS[:3])
    out = tmp_path / "vectors"
    write_vectors(read_corpus(corpus), FakeEncoder(), out)
    with pytest.raises(InputError, match="already exists"):
        write_vectors(read_corpus(corpus), FakeEncoder(), out)
    meta = write_vectors(read_corpus(_corpus(tmp_path, TEXTS[:5], "five.jsonl")), FakeEncoder(), out, overwrite=True)
    assert meta["documents"] == 5 and len(list(read_vectors(out))) == 5


def test_positions_file(tmp_path):
    corpus = _corpus(tmp_path, TEXTS[:7])
    positions = tmp_path / "positions.jsonl"
    write_vectors(read_corpus(corpus), FakeEncoder(), tmp_path / "vectors", shard_size=3, positions=positions)
    rows = [json.loads(line) for line in positions.open()]
    assert [r["id"] for r in rows] == [f"d{i:02d}" for i in range(7)]
    assert rows[0]["tokens"] == [[w, 0.5] for w in TEXTS[0].split()]
    assert not list((tmp_path / "vectors").glob("positions-*"))


def test_failed_run_without_complete_shard_does_not_block_other_settings(tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_text('{"id": "a", "text": "wing"}\n{"id": "a", "text": "lift"}\n')
    with pytest.raises(InputError, match="duplicate"):
        write_vectors(read_corpus(path), FakeEncoder(), tmp_path / "out", shard_size=5)
    corpus = _corpus(tmp_path, TEXTS[:4])
    meta = write_vectors(read_corpus(corpus), FakeEncoder(), tmp_path / "out", shard_size=2, scale=10)
    assert (meta["documents"], meta["shards"], meta["scale"]) == (4, 2, 10)
