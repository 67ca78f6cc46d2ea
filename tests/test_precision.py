"""Encoder precision (issues 22, 28): fp32 by default, queries always fp32 and unpadded, auto's choice (capability,
native bf16, calibration), the --dtype flags, metadata, the mixed-precision note, resumption, the SoftSDM top-k
projection, and bf16/auto vectors within tolerance of fp32 (where bf16 is native)."""
import argparse
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from lsr_lucene.encode import activations as act
from lsr_lucene.encode import precision as prec
from lsr_lucene.encode.cli import main as encode_main
from lsr_lucene.encode.encoder import SparseEncoder
from lsr_lucene.errors import InputError
from lsr_lucene.io.vectors import write_vectors
from lsr_lucene.io.vectors import read_metadata

pytestmark = pytest.mark.usefixtures("one_torch_thread")
native_bf16_only = pytest.mark.skipif(
    not prec.native_bf16(prec.cpu_features()),
    reason="bf16 is emulated on this CPU (no AMX or AVX512_BF16): the bf16 path is tested where it is native")
CRANFIELD = Path(__file__).resolve().parents[2] / "shared" / "data" / "cranfield"
MAX_LENGTH = 64
FALLBACK = ["the boundary layer on a flat plate in supersonic flow with heat transfer",
            "pressure distribution over a swept wing at transonic speeds",
            "shock wave interaction with a turbulent jet near the wall",
            "laminar flow separation behind a cylinder at low reynolds number",
            "heat transfer in hypersonic flow over blunt bodies"]


@pytest.fixture(scope="module")
def texts():
    if (CRANFIELD / "corpus.jsonl").is_file():
        rows = [json.loads(line) for _, line in zip(range(6), (CRANFIELD / "corpus.jsonl").open())]
        return [f"{r['title']} {r['text']}".strip() for r in rows]
    return FALLBACK


@pytest.fixture(scope="module")
def fp32():
    return SparseEncoder("splade-tiny", max_length=MAX_LENGTH, dtype="fp32", threads=1)


def _native(monkeypatch):
    """Pretend this CPU has AMX (auto then picks bf16 without calibrating)."""
    monkeypatch.setattr(prec, "cpu_features", lambda: {"amx_bf16": True})


def _no_timer(hidden, vocab):
    raise AssertionError("calibration should not run here")


# ---- the choice ---------------------------------------------------------------------------------------------
def test_capability_parsing():
    assert prec.native_bf16({"amx_bf16": True, "avx512_bf16": True, "avx2": True}) == ["AMX_BF16", "AVX512_BF16"]
    assert prec.native_bf16({"avx512_bf16": False, "avx2": True}) == []
    assert prec.capability_string("AVX512", {"amx_bf16": True}) == "AVX512+AMX_BF16"
    assert prec.capability_string("AVX2", {}) == "AVX2"
    here = prec.capability_string()
    assert here.split("+")[0] == torch.backends.cpu.get_cpu_capability()


def test_explicit_and_bad_requests():
    for dtype in ("fp32", "bf16"):
        chosen = prec.resolve(dtype, "cpu", 128, 30522, timer=_no_timer)
        assert (chosen.dtype, chosen.topk, chosen.reason) == (dtype, dtype, "as requested")
    with pytest.raises(InputError, match="dtype must be one of auto, fp32, bf16"):
        prec.resolve("fp16", "cpu", 128, 30522)


def test_auto_native_bf16_and_no_onednn_bf16(monkeypatch):
    _native(monkeypatch)
    chosen = prec.resolve("auto", "cpu", 128, 30522, timer=_no_timer)
    assert (chosen.dtype, chosen.topk) == ("bf16", "bf16") and "AMX_BF16" in chosen.reason
    assert chosen.capability.endswith("+AMX_BF16")
    monkeypatch.setattr(prec, "cpu_features", lambda: {})
    monkeypatch.setattr(prec, "bf16_matmul_is_fast", lambda device: False)  # AVX2: oneDNN has no bf16 kernels
    chosen = prec.resolve("auto", "cpu", 128, 30522, timer=_no_timer)
    assert (chosen.dtype, chosen.topk) == ("fp32", "fp32") and "emulated" in chosen.reason


@pytest.mark.parametrize("timings, expected", [((1.0, 0.5), "bf16"), ((1.0, 0.95), "fp32"), ((0.5, 1.0), "fp32")])
def test_auto_calibration_keeps_the_faster(monkeypatch, timings, expected):
    monkeypatch.setattr(prec, "cpu_features", lambda: {})
    monkeypatch.setattr(prec, "bf16_matmul_is_fast", lambda device: True)  # e.g. AVX512 without BF16: unsure
    seen = []
    chosen = prec.resolve("auto", "cpu", 256, 50000, timer=lambda h, v: seen.append((h, v)) or timings)
    assert seen == [(256, 50000)]  # the model's own projection shape
    assert (chosen.dtype, chosen.topk) == (expected, expected) and "calibration" in chosen.reason


def test_calibration_runs_and_is_cached():
    prec.clear_calibration()
    first = prec.calibrate(64, 1024, rows=8, repeats=1)
    assert all(math.isfinite(s) and s > 0 for s in first)
    assert prec.calibrate(64, 1024) is first  # cached per shape
    prec.clear_calibration()


def test_gpu_keeps_the_earlier_rule():
    chosen = prec.resolve("auto", "meta", 128, 30522, timer=_no_timer)  # any non-CPU device
    assert (chosen.dtype, chosen.topk) == ("fp32", "bf16")


def test_announced_once_and_never_for_plain_fp32(capsys, monkeypatch):
    monkeypatch.setattr(prec, "_announced", set())
    chosen = prec.Precision("auto", "fp32", "fp32", "TESTCAP", "test line")
    prec.announce(chosen)
    prec.announce(chosen)
    err = capsys.readouterr().err.splitlines()
    assert err == [chosen.line()] and "CPU TESTCAP" in err[0] and "test line" in err[0]
    prec.announce(prec.Precision("fp32", "fp32", "fp32", "TESTCAP", "as requested"))
    assert capsys.readouterr().err == ""
    SparseEncoder("splade-tiny", max_length=MAX_LENGTH, threads=1)  # the default: fp32, nothing to say
    assert "precision:" not in capsys.readouterr().err
    SparseEncoder("splade-tiny", max_length=MAX_LENGTH, dtype="bf16", threads=1)
    assert capsys.readouterr().err.count("precision: bf16 (requested bf16; CPU ") == 1


def test_mixed_precision_note_once(capsys, monkeypatch):
    monkeypatch.setattr(prec, "_announced", set())
    for documents in ("fp32", None, "fp16", {}):
        prec.note_documents_precision(documents)
    assert capsys.readouterr().err == ""
    prec.note_documents_precision("bf16")
    prec.note_documents_precision("bf16")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("note: documents were encoded in bf16, queries in fp32")


# ---- the encoder -------------------------------------------------------------------------------------------
def _close(a: dict, b: dict, atol: float = 0.1) -> None:
    """bf16 vs fp32 vectors: every weight within ``atol``, cosine ≥ 0.999, clearly positive terms kept."""
    keys = a.keys() | b.keys()
    assert max(abs(a.get(k, 0) - b.get(k, 0)) for k in keys) <= atol
    dot = sum(a.get(k, 0) * b.get(k, 0) for k in keys)
    assert dot / math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values())) >= 0.999
    assert all(k in b for k, v in a.items() if v > atol)


@native_bf16_only
def test_bf16_and_auto_vectors_within_tolerance_of_fp32(fp32, texts, monkeypatch):
    reference = fp32.encode_documents(texts)
    auto = SparseEncoder("splade-tiny", max_length=MAX_LENGTH, dtype="auto", threads=1)
    assert auto.precision.requested == "auto" and auto.dtype in ("fp32", "bf16")
    _native(monkeypatch)
    native = SparseEncoder("splade-tiny", max_length=MAX_LENGTH, dtype="auto", threads=1)
    assert (native.dtype, native.precision.topk, native.settings()["dtype"]) == ("bf16", "bf16", "bf16")
    for encoder in (auto, native):
        for got, expected in zip(encoder.encode_documents(texts), reference):
            if encoder.dtype == "fp32":
                assert got.keys() == expected.keys()
                assert list(got.values()) == pytest.approx(list(expected.values()), abs=1e-5)
            else:
                _close(expected, got)


def test_topk_projection_follows_the_precision(fp32, texts):
    """fp32 top-k equals the fp32 logits' top-k (no more hard-coded bf16)."""
    few = texts[:2]
    tops = fp32.position_topk(few, top_k=5)
    assert fp32.precision.topk == "fp32"
    for text, (ids, weights) in zip(few, tops):
        enc = fp32.tokenizer([text], max_length=MAX_LENGTH, truncation=True, return_tensors="pt")
        with torch.inference_mode():
            hidden = fp32._hidden(enc["input_ids"], enc["attention_mask"]).float()[0, 1:-1]
            best = act.splade(hidden @ fp32._weight.T + fp32._bias).topk(5, dim=1)
        assert np.allclose(weights.astype(float), best.values.numpy(), rtol=1e-3, atol=1e-3)  # float16 storage
        clear = best.values[:, 0] - best.values[:, 1] > 1e-2
        assert (ids[:, 0][clear.numpy()] == best.indices[:, 0][clear].numpy()).all()


@native_bf16_only
def test_bf16_topk_projection_stays_close(fp32, texts, monkeypatch):
    few = texts[:2]
    tops = fp32.position_topk(few, top_k=5)
    _native(monkeypatch)
    bf16 = SparseEncoder("splade-tiny", max_length=MAX_LENGTH, dtype="auto", threads=1)
    assert bf16.precision.topk == "bf16"
    for (ids, weights), (ref_ids, ref_weights) in zip(bf16.position_topk(few, top_k=5), tops):
        assert np.allclose(weights.astype(float), ref_weights.astype(float), atol=0.1)
        assert (ids[:, 0] == ref_ids[:, 0]).mean() >= 0.9


def test_default_is_fp32_whatever_the_cpu_and_only_auto_adopts(monkeypatch):
    _native(monkeypatch)  # even where bf16 is native, the default stays fp32
    default = SparseEncoder("splade-tiny", max_length=MAX_LENGTH, threads=1)
    assert (default.precision.requested, default.dtype, default.precision.topk) == ("fp32", "fp32", "fp32")
    assert not default.adopt_dtype("bf16") and default.dtype == "fp32"
    auto = SparseEncoder("splade-tiny", max_length=MAX_LENGTH, dtype="auto", threads=1)
    assert auto.dtype == "bf16"
    assert auto.adopt_dtype("fp32") and auto.dtype == "fp32" and auto.settings()["dtype"] == "fp32"
    assert auto.precision.topk == "fp32"
    assert not auto.adopt_dtype(None) and not auto.adopt_dtype("fp16")


def test_queries_are_fp32_and_do_not_depend_on_their_batch(fp32, texts):
    """A bf16 document encoder encodes queries exactly as the fp32 one, and a query alone exactly as in a batch."""
    queries = ["heat transfer in hypersonic flow", "boundary layer", texts[0][:120], "shock waves on a wing",
               "flow"]
    bf16 = SparseEncoder("splade-tiny", max_length=MAX_LENGTH, dtype="bf16", threads=1)
    alone = [fp32.encode_queries([q])[0] for q in queries]
    assert fp32.encode_queries(queries) == alone
    assert bf16.encode_queries(queries, batch_size=2) == alone
    assert bf16.token_weights(queries, queries=True) == fp32.token_weights(queries, queries=True)
    assert np.array_equal(bf16.mean_hidden(queries, queries=True), fp32.mean_hidden(queries, queries=True))
    assert [fp32.token_weights([q], queries=True)[0] for q in queries] == fp32.token_weights(queries, queries=True)
    # documents are padded in their batch: fp32 stays within rounding, bf16 within its tolerance
    for single, batched in zip([fp32.encode_documents([q])[0] for q in queries], fp32.encode_documents(queries)):
        assert single.keys() == batched.keys()
        assert list(single.values()) == pytest.approx(list(batched.values()), abs=1e-5)


# ---- outputs, resumption and command lines --------------------------------------------------------------------
class _Interrupted(Exception):
    pass


def test_resume_compares_the_resolved_dtype(fp32, texts, tmp_path, monkeypatch):
    docs = [(f"d{i}", t) for i, t in enumerate(texts[:4])]
    out = tmp_path / "vectors"
    real = fp32.encode_documents
    calls = []

    def flaky(batch, **kwargs):
        calls.append(len(batch))
        if len(calls) == 2:
            raise _Interrupted
        return real(batch, **kwargs)

    monkeypatch.setattr(fp32, "encode_documents", flaky)
    with pytest.raises(_Interrupted):
        write_vectors(docs, fp32, out, shard_size=2, window=2)  # first shard complete, then killed
    monkeypatch.undo()
    _native(monkeypatch)
    explicit = SparseEncoder("splade-tiny", max_length=MAX_LENGTH, dtype="bf16", threads=1)
    with pytest.raises(InputError, match="dtype='fp32'"):
        write_vectors(docs, explicit, out, shard_size=2, window=2)
    auto = SparseEncoder("splade-tiny", max_length=MAX_LENGTH, dtype="auto", threads=1)
    assert auto.dtype == "bf16"
    meta = write_vectors(docs, auto, out, shard_size=2, window=2)  # auto keeps the interrupted run's fp32
    assert (meta["dtype"], meta["dtype_requested"], meta["resumed_after_documents"]) == ("fp32", "auto", 2)
    assert meta["precision_reason"].startswith("resuming")


def _corpus(path: Path, texts) -> Path:
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(texts)))
    return path


def test_encode_cli_dtype_flag_alias_and_metadata(texts, tmp_path):
    corpus = _corpus(tmp_path / "corpus.jsonl", texts[:3])
    common = ["--corpus", str(corpus), "--max-length", "32", "--threads", "1"]
    assert encode_main(common + ["--output", str(tmp_path / "default")]) == 0
    meta = read_metadata(tmp_path / "default")
    assert (meta["dtype"], meta["dtype_requested"]) == ("fp32", "fp32")
    assert meta["cpu_capability"] == prec.capability_string()
    assert encode_main(common + ["--output", str(tmp_path / "auto"), "--dtype", "auto"]) == 0
    meta = read_metadata(tmp_path / "auto")
    assert meta["dtype_requested"] == "auto" and meta["dtype"] in ("fp32", "bf16")
    assert encode_main(common + ["--output", str(tmp_path / "alias"), "--bf16"]) == 0
    meta = read_metadata(tmp_path / "alias")
    assert (meta["dtype"], meta["dtype_requested"]) == ("bf16", "bf16")
    assert encode_main(common + ["--output", str(tmp_path / "fp32"), "--dtype", "fp32"]) == 0
    assert read_metadata(tmp_path / "fp32")["dtype"] == "fp32"
    with pytest.raises(SystemExit):
        encode_main(common + ["--output", str(tmp_path / "both"), "--bf16", "--dtype", "auto"])
    with pytest.raises(SystemExit):
        encode_main(common + ["--output", str(tmp_path / "bad"), "--dtype", "fp16"])


def test_longdocs_encode_cli_dtype_and_resume(texts, tmp_path, monkeypatch):
    from lsr_lucene.longdocs.cli import main as longdocs_main

    segments = tmp_path / "segments.jsonl"
    segments.write_text("".join(json.dumps({"id": f"doc@@{i}", "text": t}) + "\n" for i, t in enumerate(texts[:2])))
    argv = ["encode", "--segments", str(segments), "--output", str(tmp_path / "enc"), "--max-length", "32",
            "--threads", "1"]
    assert longdocs_main(argv + ["--dtype", "fp32"]) == 0
    state = json.loads((tmp_path / "enc" / "state.json").read_text())
    meta = read_metadata(tmp_path / "enc" / "vectors")
    assert state["settings"]["dtype"] == "fp32" and meta["dtype_requested"] == "fp32"
    _native(monkeypatch)  # auto would now pick bf16
    with pytest.raises(InputError, match="complete encoding"):  # a complete encoding is not encoded again
        longdocs_main(argv + ["--dtype", "auto"])
    # adding the SoftSDM store to the fp32 encoding keeps fp32 under auto
    assert longdocs_main(argv + ["--top-k", "3", "--dtype", "auto"]) == 0
    assert json.loads((tmp_path / "enc" / "state.json").read_text())["settings"]["dtype"] == "fp32"
    with pytest.raises(InputError, match="dtype='fp32'"):
        longdocs_main(argv + ["--top-k", "3", "--dtype", "bf16"])


def test_query_commands_have_no_dtype_and_note_bf16_documents(tmp_path, capsys, monkeypatch):
    """Queries are always fp32: search and compose take no --dtype; searching an index of bf16 documents says so."""
    from lsr_lucene.compose.cli import build_parser
    from lsr_lucene.index.impact import INDEX_METADATA
    from lsr_lucene.search.cli import add_search_arguments, load_queries

    parser = argparse.ArgumentParser()
    add_search_arguments(parser)
    assert "dtype" not in vars(parser.parse_args(["--index", "i", "--output", "o"]))
    for argv in (["--index", "i", "--output", "o", "--dtype", "bf16"],):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
        with pytest.raises(SystemExit):
            build_parser().parse_args(argv + ["--query", "a not b"])
    monkeypatch.setattr(prec, "_announced", set())
    topics = tmp_path / "topics.tsv"
    topics.write_text("1\tboundary layer\n")
    for documents in ("fp32", "bf16"):
        index = tmp_path / documents
        index.mkdir()
        (index / INDEX_METADATA).write_text(json.dumps({"encoder": {"model": "splade-tiny", "dtype": documents,
                                                                    "scale": 100}}))
        args = argparse.Namespace(index=str(index), query_vectors=None, topics=str(topics), encoder=None,
                                  scale=None, query_max_length=None, threads=1)
        assert load_queries(args)["1"]
        notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
        assert notes == ([] if documents == "fp32" else
                         ["note: documents were encoded in bf16, queries in fp32 (scores differ slightly from an "
                          "all-fp32 index)"])


def test_precision_line_names_an_accelerator_as_such():
    """Off the CPU the start-up line names the device ("GPU <name>"), not a CPU capability."""
    assert prec.resolve("bf16", "meta", 8, 16).line() == "precision: bf16 (requested bf16; GPU meta)"
    assert "; CPU " in prec.resolve("bf16", "cpu", 8, 16).line()
