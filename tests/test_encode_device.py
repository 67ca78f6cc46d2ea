"""The GPU document path (lsr_lucene.encode.device), run here on CPU: impacts rounded and selected by torch equal
io.vectors.quantise of the float vectors, byte for byte; several windows in flight change nothing."""
import json
from pathlib import Path

import pytest

from lsr_lucene.encode.device import FastTokenizer
from lsr_lucene.encode.encoder import SparseEncoder
from lsr_lucene.io.vectors import quantise, write_vectors

pytestmark = pytest.mark.usefixtures("one_torch_thread")
CRANFIELD = Path(__file__).resolve().parents[2] / "shared" / "data" / "cranfield"


def _docs(n=30):
    if (CRANFIELD / "corpus.jsonl").is_file():
        rows = [json.loads(line) for _, line in zip(range(n), (CRANFIELD / "corpus.jsonl").open())]
        return [(f"d{i}", f"{r['title']} {r['text']}".strip()) for i, r in enumerate(rows)]
    words = "wing flow pressure boundary layer shock heat transfer supersonic jet plate".split()
    return [(f"d{i}", " ".join(words[(i * 7 + k) % len(words)] for k in range(3 + i % 30))) for i in range(n)]


@pytest.mark.parametrize("activation", ["splade", "snrelu"])
def test_device_quantised_vectors_equal_quantised_floats(activation):
    texts = [t for _, t in _docs()]
    encoder = SparseEncoder("splade-tiny", max_length=64, threads=1, dtype="fp32", activation=activation,
                            epsilon=0.5, device="cpu", device_quantise=True)
    for scale in (100, 37.5):
        got = encoder.encode_documents_quantised(texts, scale, batch_size=8)
        want = [quantise(v, scale) for v in encoder.encode_documents(texts, batch_size=8)]
        assert got == want
        assert [list(g) for g in got] == [list(w) for w in want]  # the same term order: the same JSON bytes
    if activation == "snrelu":
        assert any(t.startswith("neg_") for v in got for t in v)


def test_fast_tokenizer_equals_the_wrapper():
    encoder = SparseEncoder("splade-tiny", max_length=32, threads=1, dtype="fp32", device="cpu")
    texts = [t for _, t in _docs()] + ["", "a", "é ü ß 日本 " * 40]
    assert FastTokenizer(encoder.tokenizer, 32).ids(texts) == encoder._tokenize(texts, 32)


def test_windows_in_flight_give_the_same_shards(tmp_path):
    docs = _docs()
    outputs = []
    for depth, device_quantise in ((1, False), (3, True)):
        encoder = SparseEncoder("splade-tiny", max_length=64, threads=1, dtype="fp32", device="cpu",
                                device_quantise=device_quantise)
        encoder.pipeline_depth = depth
        out = tmp_path / f"d{depth}"
        meta = write_vectors(docs, encoder, out, shard_size=7, batch_size=4, window=8)
        outputs.append({p.name: p.read_text() for p in sorted(out.glob("part-*.jsonl"))})
        assert meta["documents"] == 30 and meta["shards"] == 5
    assert outputs[0] == outputs[1]
