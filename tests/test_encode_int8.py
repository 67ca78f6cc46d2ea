"""--dtype int8 (CPU): the int8 vocabulary projection pooled in int32 equals its definition, stays near fp32, gives a
document the same vector whatever it is batched with, is recorded in metadata, and leaves queries in fp32."""
import json
from pathlib import Path

import pytest
import torch

from lsr_lucene.encode.encoder import SparseEncoder
from lsr_lucene.encode.int8 import Int8Projection
from lsr_lucene.errors import InputError
from lsr_lucene.io.vectors import quantise, read_metadata, write_vectors

pytestmark = pytest.mark.usefixtures("one_torch_thread")
CRANFIELD = Path(__file__).resolve().parents[2] / "shared" / "data" / "cranfield"


def _texts(n=24):
    if (CRANFIELD / "corpus.jsonl").is_file():
        rows = [json.loads(line) for _, line in zip(range(n), (CRANFIELD / "corpus.jsonl").open())]
        return [f"{r['title']} {r['text']}".strip() for r in rows]
    words = "wing flow pressure boundary layer shock heat transfer supersonic jet plate".split()
    return [" ".join(words[(i * 7 + k) % len(words)] for k in range(3 + i % 30)) for i in range(n)]


@pytest.fixture(scope="module")
def encoders():
    return (SparseEncoder("splade-tiny", max_length=64, threads=1, dtype="fp32"),
            SparseEncoder("splade-tiny", max_length=64, threads=1, dtype="int8"))


@pytest.mark.parametrize("layout", ["terms x positions", "positions x terms"])
@pytest.mark.parametrize("int_mm", ["probed", "float64 fallback"])
def test_projection_equals_its_definition(int_mm, layout, monkeypatch):
    """Exact int32 products whichever path runs: torch._int_mm where the probe found it exact (VNNI/AMX), float64
    products where it saturates (AVX2's int16 pair sums)."""
    from lsr_lucene.encode import int8

    if int_mm == "float64 fallback":
        monkeypatch.setattr(int8, "_EXACT_INT_MM", [False])
    generator = torch.Generator().manual_seed(1)
    weight, bias = torch.randn(1000, 24, generator=generator), torch.randn(1000, generator=generator)
    hidden = torch.randn(3, 7, 24, generator=generator)
    lengths = [7, 4, 1]
    # chunks of 96 and a last one padded to whole groups of 8
    projection = Int8Projection(weight, bias, chunk=96, layout=layout)
    raw_max, raw_min = projection.pooled(hidden, lengths, need_min=True)
    scales = weight.abs().amax(dim=1) / 127
    q_weight = torch.round(weight / scales[:, None]).to(torch.int64)
    for row, n in enumerate(lengths):
        states = hidden[row, :n]
        scale = states.abs().max() / 127
        acc = torch.round(states / scale).to(torch.int64) @ q_weight.T  # exact integer products
        assert torch.allclose(raw_max[row], acc.amax(0).float() * scale * scales + bias, rtol=1e-6, atol=1e-5)
        assert torch.allclose(raw_min[row], acc.amin(0).float() * scale * scales + bias, rtol=1e-6, atol=1e-5)
        # and near the float product (int8 steps: about 1 % of the largest logit)
        reference = ((states @ weight.T) + bias).amax(0)
        assert (raw_max[row] - reference).abs().max() < 0.02 * reference.abs().max()


def test_the_faster_layout_is_chosen_and_recorded(monkeypatch, encoders):
    """The layout timed faster is kept (cached per shape); without exact int8 kernels nothing is timed; the choice is
    in the precision reason (metadata.json)."""
    from lsr_lucene.encode import int8

    blocks = [torch.zeros(64, 16, dtype=torch.int8)] * 3
    for faster in int8.LAYOUTS:
        monkeypatch.setattr(int8, "_LAYOUT", {})
        timings = {name: (1.0 if name == faster else 2.0) for name in int8.LAYOUTS}
        assert int8.choose_layout(blocks, timer=lambda b: timings) == faster
    monkeypatch.setattr(int8, "_LAYOUT", {})
    monkeypatch.setattr(int8, "_EXACT_INT_MM", [False])
    assert int8.choose_layout(blocks, timer=lambda b: pytest.fail("timed")) == int8.LAYOUTS[0]
    seconds = int8.time_layouts([torch.ones(64, 16, dtype=torch.int8)], length=8, repeats=1)
    assert set(seconds) == set(int8.LAYOUTS)
    _, encoder = encoders
    assert f"int8 logits {encoder._int8.layout}" in encoder.precision.reason


def test_probe_finds_an_inexact_int_mm(monkeypatch):
    """The probe compares torch._int_mm with exact products: a kernel off by one anywhere is found."""
    from lsr_lucene.encode import int8

    real = torch._int_mm
    monkeypatch.setattr(int8, "_EXACT_INT_MM", [])
    monkeypatch.setattr(torch, "_int_mm", lambda a, b: real(a, b).clamp(max=32767))  # int16 saturation
    assert not int8.int_mm_is_exact()
    monkeypatch.setattr(int8, "_EXACT_INT_MM", [])
    monkeypatch.setattr(torch, "_int_mm", lambda a, b: (a.double() @ b.double()).to(torch.int32))
    assert int8.int_mm_is_exact()


def test_int8_is_near_fp32_and_batch_independent(encoders):
    fp32, int8 = encoders
    texts = _texts()
    exact = [quantise(v, 100) for v in fp32.encode_documents(texts, batch_size=8)]
    approx = [quantise(v, 100) for v in int8.encode_documents(texts, batch_size=8)]
    gaps = [abs(a.get(t, 0) - b.get(t, 0)) for a, b in zip(exact, approx) for t in set(a) | set(b)]
    assert sum(gaps) / len(gaps) < 3 and max(gaps) < 40  # splade-tiny on SciFact: mean 1.1, max 11
    assert approx != exact  # int8 really ran


def test_a_documents_projection_does_not_depend_on_its_batch():
    """One activation scale per document (not per batch): the int8 pooled logits of a text are the same alone and
    padded among others."""
    generator = torch.Generator().manual_seed(2)
    projection = Int8Projection(torch.randn(500, 16, generator=generator), torch.randn(500, generator=generator))
    hidden = torch.randn(4, 9, 16, generator=generator) * torch.tensor([1.0, 30.0, 0.1, 5.0])[:, None, None]
    lengths = [9, 5, 2, 7]
    together, _ = projection.pooled(hidden, lengths, need_min=False)
    for row, n in enumerate(lengths):
        alone, _ = projection.pooled(hidden[row:row + 1, :n], [n], need_min=False)
        assert torch.equal(alone[0], together[row])


def test_queries_stay_fp32_and_metadata_records_int8(encoders, tmp_path):
    fp32, int8 = encoders
    queries = ["shock wave boundary layer", "heat transfer"]
    assert int8.encode_queries(queries) == fp32.encode_queries(queries)
    meta = write_vectors([(f"d{i}", t) for i, t in enumerate(_texts(6))], int8, tmp_path / "v")
    assert meta["dtype"] == "int8" and meta["dtype_requested"] == "int8"
    assert read_metadata(tmp_path / "v")["dtype"] == "int8"


def test_int8_is_cpu_only():
    from lsr_lucene.encode import precision as prec

    with pytest.raises(InputError, match="CPU only"):
        prec.resolve("int8", "cuda", 128, 30522)
    assert prec.resolve("int8", "cpu", 128, 30522).dtype == "int8"


def test_cli_encodes_int8_and_records_it(tmp_path):
    from lsr_lucene.encode.cli import main

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(_texts(5))))
    assert main(["--corpus", str(corpus), "--output", str(tmp_path / "v"), "--dtype", "int8", "--max-length", "32",
                 "--threads", "1"]) == 0
    meta = read_metadata(tmp_path / "v")
    assert meta["dtype"] == "int8" and "int8 vocabulary projection" in meta["precision_reason"]


def test_bf16_document_transformer_masks_padding_and_stays_near_fp32():
    """The int8 documents' transformer (a bf16 copy with eager attention): each text's hidden states are near the fp32
    net's, the same alone as padded in a batch (padding is masked), and the fp32 net used for queries is untouched."""
    from lsr_lucene.encode.int8 import bf16_transformer
    from lsr_lucene.encode.models import load
    from lsr_lucene.encode.projection import swap_output_embeddings

    tokenizer, net = load("splade-tiny")
    swap_output_embeddings(net)
    net.eval()
    documents = bf16_transformer(net)
    assert next(net.parameters()).dtype == torch.float32 and next(documents.parameters()).dtype == torch.bfloat16
    texts = _texts(3) + ["heat transfer"]  # one short text: most of its row is padding
    batch = tokenizer(texts, max_length=48, truncation=True, padding=True, return_tensors="pt",
                      return_token_type_ids=False)
    lengths = batch["attention_mask"].sum(dim=1).tolist()
    assert len(set(lengths)) > 1  # really padded
    with torch.inference_mode():
        together = documents(**batch).logits.float()
        reference = net(**batch).logits
        for row, n in enumerate(lengths):
            alone = documents(input_ids=batch["input_ids"][row:row + 1, :n],
                              attention_mask=batch["attention_mask"][row:row + 1, :n]).logits.float()[0]
            scale = reference[row, :n].abs().max()
            assert (alone - together[row, :n]).abs().max() < 0.01 * scale  # (unmasked padding: 4 % and more)
            assert (together[row, :n] - reference[row, :n]).abs().max() < 0.1 * scale


def test_int8_documents_use_the_bf16_copy_where_bf16_is_native(encoders):
    """Native bf16: documents go through the bf16 copy, recorded in the precision reason; elsewhere the fp32 net."""
    from lsr_lucene.encode import precision as prec

    _, int8 = encoders
    native = bool(prec.native_bf16(prec.cpu_features()))
    assert (int8._documents_net is not None) == native
    assert ("bf16 with eager attention" in int8.precision.reason) == native
    if native:
        with torch.inference_mode():
            ids = torch.tensor([[101, 7592, 2088, 102]])
            assert int8._hidden(ids, torch.ones_like(ids)).dtype == torch.bfloat16
            assert int8._hidden(ids, torch.ones_like(ids), queries=True).dtype == torch.float32


@pytest.mark.parametrize("features", [{}, {"amx_bf16": True}, {"avx512_bf16": True}])
def test_the_transformer_precision_is_chosen_per_cpu(features, monkeypatch):
    """Without native bf16 the int8 encoder keeps the fp32 transformer; with AMX_BF16 or AVX512_BF16 it makes the bf16
    copy; either way the choice is in the precision reason that metadata.json records."""
    from lsr_lucene.encode import precision as prec

    monkeypatch.setattr(prec, "cpu_features", lambda: features)
    encoder = SparseEncoder("splade-tiny", max_length=32, threads=1, dtype="int8")
    if features:
        assert encoder._documents_net is not None and "bf16 with eager attention" in encoder.precision.reason
    else:
        assert encoder._documents_net is None and "fp32 (no native bf16)" in encoder.precision.reason
        with torch.inference_mode():
            ids = torch.tensor([[101, 7592, 2088, 102]])
            assert encoder._hidden(ids, torch.ones_like(ids)).dtype == torch.float32
    assert encoder.precision.metadata()["precision_reason"] == encoder.precision.reason


def test_stage_seconds_times_every_stage(encoders):
    from scripts.bench.encode_speed import STAGES, stage_seconds

    _, int8 = encoders
    seconds = stage_seconds(int8, [(f"d{i}", t) for i, t in enumerate(_texts(6))], batch_size=4, repeats=1)
    assert set(seconds) == set(STAGES) and all(v > 0 for v in seconds.values())


def test_projection_split_times_each_variant():
    from scripts.bench.encode_speed import projection_split

    split = projection_split(hidden=16, vocab=300, length=24, chunk=64, repeats=1)
    assert set(split) == {"int8_product", "int8_terms_x_positions", "int8_positions_x_terms", "bf16_screen"}
    assert all(v >= 0 for v in split.values())
