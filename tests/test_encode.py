"""SparseEncoder: fast pooled-raw path equals the naive full-logits computation; order, config, token weights, CLI."""
import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from lsr_lucene.encode import activations as act
from lsr_lucene.encode import precision as prec
from lsr_lucene.encode.cli import main
from lsr_lucene.encode.encoder import SparseEncoder
from lsr_lucene.errors import InputError
from lsr_lucene.encode.models import load, resolve
from lsr_lucene.io.vectors import read_metadata

pytestmark = pytest.mark.usefixtures("one_torch_thread")
CRANFIELD = Path(__file__).resolve().parents[2] / "shared" / "data" / "cranfield"
MAX_LENGTH = 48


def _texts(n=50):
    if (CRANFIELD / "corpus.jsonl").is_file():
        rows = [json.loads(line) for _, line in zip(range(n), (CRANFIELD / "corpus.jsonl").open())]
        return [f"{r['title']} {r['text']}".strip() for r in rows]
    words = "wing flow pressure boundary layer shock heat transfer supersonic jet plate".split()
    rng = random.Random(0)
    return [" ".join(rng.choices(words, k=rng.randint(3, 60))) for _ in range(n)]


@pytest.fixture(scope="module")
def texts():
    return _texts()


@pytest.fixture(scope="module")
def encoder():
    return SparseEncoder("splade-tiny", max_length=MAX_LENGTH, query_max_length=16, dtype="fp32")  # exact reference


@pytest.fixture(scope="module")
def reference_model():
    """An untouched Hugging Face masked-LM: the naive reference computation."""
    return load("splade-tiny")


def _reference(reference_model, texts, max_length, activation="splade", pooling="max", epsilon=1.0):
    tokenizer, model = reference_model
    out = []
    with torch.inference_mode():
        for start in range(0, len(texts), 8):
            enc = tokenizer(texts[start:start + 8], max_length=max_length, truncation=True, padding=True,
                            return_tensors="pt")
            logits = model(**enc).logits
            pooled = act.pool(act.activate(logits, activation, epsilon), enc["attention_mask"], pooling)
            out.extend(pooled)
    return out


def _dense(encoder, vectors):
    index = {token: i for i, token in enumerate(encoder.vocab)}
    dense = torch.zeros(len(vectors), len(encoder.vocab))
    for row, vector in enumerate(vectors):
        for term, weight in vector.items():
            dense[row, index[term]] = weight
    return dense


def test_fast_path_equals_naive_full_logits(encoder, reference_model, texts):
    fast = _dense(encoder, encoder.encode_documents(texts, batch_size=8))
    reference = torch.stack(_reference(reference_model, texts, MAX_LENGTH))
    assert fast.shape == reference.shape
    assert (reference > 0).sum() > 50 * 20  # a real, non-trivial expansion
    assert torch.allclose(fast, reference, atol=1e-4)
    # the built-in naive path agrees too
    assert torch.allclose(_dense(encoder, encoder.encode_naive(texts)), reference, atol=1e-4)
    # and so does the fast path with bf16 screening switched the other way (an encoder built so: screening
    # needs the bf16 weights made at construction), whichever way this CPU's default goes
    other = SparseEncoder("splade-tiny", max_length=MAX_LENGTH, query_max_length=16, dtype="fp32",
                          screen=not encoder._screen)
    assert other._screen != encoder._screen
    assert torch.allclose(_dense(other, other.encode_documents(texts)), reference, atol=1e-4)


@pytest.mark.parametrize("pooling", act.POOLINGS)
@pytest.mark.parametrize("dense_fallback", [True, False])
def test_signed_activation_matches_naive(encoder, reference_model, texts, pooling, dense_fallback):
    epsilon = 6.0  # splade-tiny is not trained for SNReLU: its strongly negative logits give dense negative weights
    old = (encoder.activation, encoder.pooling, encoder.epsilon, encoder._dense_fraction)
    encoder.activation, encoder.pooling, encoder.epsilon = "snrelu", pooling, epsilon
    encoder._dense_fraction = 0.25 if dense_fallback else 1.0  # 1.0: exercise bf16 screening on signed weights too
    try:
        few = texts[:4]
        fast = _dense(encoder, encoder.encode_documents(few, batch_size=3))
    finally:
        encoder.activation, encoder.pooling, encoder.epsilon, encoder._dense_fraction = old
    reference = torch.stack(_reference(reference_model, few, MAX_LENGTH, "snrelu", pooling, epsilon))
    assert (reference < 0).any() and (reference > 0).any()
    assert torch.allclose(fast, reference, atol=1e-4)


def test_order_is_restored_and_batching_does_not_matter(encoder, texts):
    shuffled = list(range(len(texts)))
    random.Random(1).shuffle(shuffled)
    base = encoder.encode_documents(texts, batch_size=7)
    encoder.threads = 2  # batches in two worker threads
    try:
        again = encoder.encode_documents([texts[i] for i in shuffled], batch_size=6)
    finally:
        encoder.threads = 1
    assert torch.get_num_threads() == 1  # restored after the parallel section
    for position, original in enumerate(shuffled):
        assert again[position].keys() == base[original].keys()
        for term, weight in base[original].items():
            assert again[position][term] == pytest.approx(weight, abs=1e-4)


def test_queries_use_query_max_length(encoder, reference_model):
    query = "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft"
    vector = encoder.encode_queries([query])[0]
    reference = _reference(reference_model, [query], 16)[0]
    assert torch.allclose(_dense(encoder, [vector])[0], reference, atol=1e-4)
    assert encoder.encode_queries([]) == []


@pytest.mark.skipif(not prec.native_bf16(prec.cpu_features()),
                    reason="bf16 is emulated on this CPU (no AMX or AVX512_BF16): the bf16 path is tested where native")
def test_bf16_fast_equals_bf16_naive(texts):
    bf16 = SparseEncoder("splade-tiny", max_length=MAX_LENGTH, dtype="bf16")
    few = texts[:6]
    fast = _dense(bf16, bf16.encode_documents(few, batch_size=1))
    naive = _dense(bf16, bf16.encode_naive(few, batch_size=1))
    assert torch.allclose(fast, naive, atol=1e-4)


def test_token_weights_are_own_position_activations(encoder, reference_model, texts):
    tokenizer, model = reference_model
    few = texts[:5]
    result = encoder.token_weights(few, max_length=MAX_LENGTH)
    for text, positions in zip(few, result):
        enc = tokenizer(text, max_length=MAX_LENGTH, truncation=True, return_tensors="pt")
        ids = enc["input_ids"][0]
        with torch.inference_mode():
            logits = model(**enc).logits[0]
        own = act.splade(logits[torch.arange(len(ids)), ids])
        tokens = tokenizer.convert_ids_to_tokens(ids.tolist())
        expected = [(t, float(w)) for t, w, i in zip(tokens, own, ids.tolist()) if i not in tokenizer.all_special_ids]
        assert [t for t, _ in positions] == [t for t, _ in expected]
        assert "[CLS]" not in dict(positions) and "[SEP]" not in dict(positions)
        assert [w for _, w in positions] == pytest.approx([w for _, w in expected], abs=1e-4)
        assert any(w > 0 for _, w in positions)


def test_one_pass_vectors_and_token_weights(encoder, texts):
    vectors, tokens = encoder.encode_with_token_weights(texts[:9], batch_size=4)
    for got, expected in zip(tokens, encoder.token_weights(texts[:9], batch_size=3)):
        assert [t for t, _ in got] == [t for t, _ in expected]
        assert [w for _, w in got] == pytest.approx([w for _, w in expected], abs=1e-5)
    for got, expected in zip(vectors, encoder.encode_documents(texts[:9])):
        assert got.keys() == expected.keys()
        assert list(got.values()) == pytest.approx(list(expected.values()), abs=1e-5)


def test_one_pass_segments_match_the_separate_calls(encoder, texts):
    segments = encoder.encode_segments(texts[:7], top_k=4, batch_size=3)
    vectors, tokens = encoder.encode_with_token_weights(texts[:7], batch_size=3)  # same batches: equal values
    for (vector, own, (ids, weights)), v, t, (top_ids, top_weights) in zip(
            segments, vectors, tokens, encoder.position_topk(texts[:7], 4, batch_size=3)):
        assert vector == v and own == t
        np.testing.assert_array_equal(ids, top_ids)
        np.testing.assert_array_equal(weights, top_weights)
    assert [s[2] for s in encoder.encode_segments(texts[:2])] == [None, None]


def test_model_directory_config_sets_defaults(tmp_path):
    model_dir = tmp_path / "signed-model"
    model_dir.mkdir()
    for item in Path(resolve("splade-tiny")).iterdir():
        (model_dir / item.name).symlink_to(item)
    (model_dir / "lsr_lucene.json").write_text(json.dumps({"activation": "snrelu", "pooling": "sum", "epsilon": 0.7}))
    enc = SparseEncoder(str(model_dir), max_length=16)
    assert (enc.activation, enc.pooling, enc.epsilon) == ("snrelu", "sum", 0.7)
    assert enc.settings()["model"] == str(model_dir.resolve())
    explicit = SparseEncoder(str(model_dir), max_length=16, activation="splade", pooling="max")
    assert (explicit.activation, explicit.pooling) == ("splade", "max")


def test_bad_settings_raise_input_error():
    with pytest.raises(InputError):
        SparseEncoder("splade-tiny", dtype="fp16")
    with pytest.raises(InputError):
        SparseEncoder("splade-tiny", pooling="mean")
    with pytest.raises(InputError):
        SparseEncoder("splade-tiny", max_length=4096)


def _write_corpus(path, texts):
    with path.open("w") as handle:
        for i, text in enumerate(texts):
            handle.write(json.dumps({"id": f"d{i}", "title": "", "text": text}) + "\n")


def test_cli_documents_queries_and_positions(tmp_path, texts, encoder):
    corpus = tmp_path / "corpus.jsonl"
    _write_corpus(corpus, texts[:10] + ["   "])
    out = tmp_path / "vectors"
    positions = tmp_path / "positions.jsonl"
    argv = ["--corpus", str(corpus), "--output", str(out), "--max-length", str(MAX_LENGTH), "--threads", "1",
            "--shard-size", "4", "--positions", str(positions), "--dtype", "fp32"]  # the fixture's precision
    assert main(argv) == 0
    meta = read_metadata(out)
    assert (meta["documents"], meta["skipped_empty"], meta["shards"]) == (10, 1, 3)
    assert sorted(p.name for p in out.iterdir()) == ["part-00000.jsonl", "part-00001.jsonl", "part-00002.jsonl"]
    rows = [json.loads(line) for part in sorted(out.glob("part-*.jsonl")) for line in part.open()]
    assert [r["id"] for r in rows] == [f"d{i}" for i in range(10)]
    expected = encoder.encode_documents(texts[:10])
    for row, vector in zip(rows, expected):
        assert row["vector"] == {t: round(w * 100) for t, w in vector.items() if round(w * 100)}
        assert all(isinstance(v, int) and v > 0 for v in row["vector"].values())
    pos_rows = [json.loads(line) for line in positions.open()]
    assert [r["id"] for r in pos_rows] == [f"d{i}" for i in range(10)]
    for row, expected_tokens in zip(pos_rows, encoder.token_weights(texts[:10])):
        assert [t for t, _ in row["tokens"]] == [t for t, _ in expected_tokens]
        assert [w for _, w in row["tokens"]] == pytest.approx([w for _, w in expected_tokens], abs=1e-4)
    with pytest.raises(InputError, match="already exists"):
        main(argv)
    assert main(argv + ["--overwrite"]) == 0

    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\twing flow pressure\nq2\tshock wave boundary layer\n")
    qfile = tmp_path / "queries.jsonl"
    assert main(["--topics", str(topics), "--output", str(qfile), "--query-max-length", "16", "--dtype", "fp32"]) == 0
    queries = [json.loads(line) for line in qfile.open()]
    assert [q["id"] for q in queries] == ["q1", "q2"] and queries[0]["contents"] == "wing flow pressure"
    q_expected = encoder.encode_queries(["wing flow pressure"])[0]
    assert queries[0]["vector"] == {t: round(w * 100) for t, w in q_expected.items() if round(w * 100)}
