"""The GPU document path (lsr_lucene.encode.device), run here on CPU: impacts rounded and selected by torch equal
io.vectors.quantise of the float vectors, byte for byte; several windows in flight change nothing."""
import json

import numpy as np
import pytest

from lsr_lucene.encode.device import FastTokenizer
from lsr_lucene.encode.encoder import SparseEncoder
from lsr_lucene.io.vectors import quantise, write_vectors
from test_encode_batches import cranfield_docs  # tests/ is on sys.path (rootdir conftest)

pytestmark = pytest.mark.usefixtures("one_torch_thread")



@pytest.mark.parametrize("activation", ["splade", "snrelu"])
def test_device_quantised_vectors_equal_quantised_floats(activation):
    texts = [t for _, t in cranfield_docs(30)]
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
    texts = [t for _, t in cranfield_docs(30)] + ["", "a", "é ü ß 日本 " * 40]
    assert FastTokenizer(encoder.tokenizer, 32).ids(texts) == encoder._tokenize(texts, 32)


def test_windows_in_flight_give_the_same_shards(tmp_path):
    docs = cranfield_docs(30)
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


def test_worker_processes_give_the_same_shards_and_resume(tmp_path):
    """encode.pipeline (tokens and JSON lines in worker processes, batches in one device thread) writes the shards of
    the one-process path byte for byte, negative terms included, and resumes an interrupted run to the same files."""
    import sys

    from lsr_lucene.errors import Interrupted

    docs = cranfield_docs(30)
    main_file = getattr(sys.modules["__main__"], "__file__", None)
    outputs = {}
    for workers in (0, 2):
        encoder = SparseEncoder("splade-tiny", max_length=64, threads=1, dtype="fp32", activation="snrelu",
                                epsilon=0.5, device="cpu", device_quantise=True)
        encoder.host_workers = workers
        out = tmp_path / f"w{workers}"
        meta = write_vectors(docs, encoder, out, shard_size=7, batch_size=4, window=8)
        assert meta["documents"] == 30 and meta["shards"] == 5
        outputs[workers] = {p.name: p.read_bytes() for p in sorted(out.glob("part-*.jsonl"))}
        if workers:
            encoder.window_pipeline().depth = 2  # windows collected (and shards written) before the interruption

            def stop_after(n):
                for i, doc in enumerate(docs):
                    if i == n:
                        raise KeyboardInterrupt
                    yield doc
            with pytest.raises(Interrupted):
                write_vectors(stop_after(26), encoder, tmp_path / "resumed", shard_size=7, batch_size=4, window=8)
            write_vectors(docs, encoder, tmp_path / "resumed", shard_size=7, batch_size=4, window=8)
            resumed = {p.name: p.read_bytes() for p in sorted((tmp_path / "resumed").glob("part-*.jsonl"))}
            assert resumed == outputs[workers]
            encoder.close()
    assert outputs[2] == outputs[0]
    assert b'"neg_' in b"".join(outputs[2].values())
    assert getattr(sys.modules["__main__"], "__file__", None) == main_file  # shown again after the workers started


@pytest.mark.parametrize("vocab", [["a", 'q"uote', "b\\s", "ü😀", "neg_x", "c"],  # keys encoded once per term
                                   ["a", 'q"uote', "b\\s", "ü😀", "neg_a", "c"]])  # "neg_a" and -a: dicts
def test_worker_lines_are_json_dumps_of_the_documents(vocab, monkeypatch):
    """A worker's lines are byte for byte json.dumps of {"id", "contents", "vector"} (the one-process path's)."""
    from lsr_lucene.encode import host_workers

    monkeypatch.setattr(host_workers, "_STATE", {"vocab": vocab, "keys": host_workers.json_keys(vocab)})
    ids, texts = ["d1", 'we"ird\\id', "ü"], ["plain", 'quote " \\ \n \t \x01 \u2028 😀', "three"]
    counts, finite = np.array([3, 2, 1]), np.array([True, True, False])
    terms, values = np.array([0, 1, 4, 2, 3, 5]), np.array([7, 1, 300, 2, 9, 4])
    for negative in (None, np.array([True, False, False, True, False, False])):
        expected = []
        for row, start in enumerate((0, 3, 5)):
            pairs = range(start, start + counts[row])
            vector = {("neg_" if negative is not None and negative[i] else "") + vocab[terms[i]]: int(values[i])
                      for i in pairs}
            expected.append((json.dumps({"id": ids[row], "contents": texts[row], "vector": vector},
                                        ensure_ascii=False) + "\n").encode("utf-8") if finite[row] else None)
        lines, postings = host_workers.format_lines(ids, texts, counts, terms, values, negative, finite)
        assert lines == expected
        assert postings == [len(json.loads(line)["vector"]) if line else 0 for line in expected]
    assert (host_workers._STATE["keys"] is None) == ("neg_a" in vocab)


def test_host_only_replay_writes_the_recordings_files(tmp_path):
    """bench.encode_host replays the device's recorded results: the replayed run writes the recording's shards byte
    for byte and leaves the real device function in place; the CLI keeps one recording per corpus."""
    from scripts.bench import encode_host, encode_host_cli
    from lsr_lucene.encode import device

    real = device.quantised_arrays
    encoder = SparseEncoder("splade-tiny", max_length=64, threads=1, dtype="fp32", device="cpu", device_quantise=True)
    seconds, same = encode_host.host_only(encoder, cranfield_docs(12), 4, tmp_path / "rec", repeats=2)
    assert seconds > 0 and same and device.quantised_arrays is real
    assert (tmp_path / "rec" / "recorded" / "part-00000.jsonl").read_bytes().count(b"\n") == 12

    folders = []
    for n, docs in enumerate((cranfield_docs(6), cranfield_docs(6)[::-1])):
        corpus = tmp_path / f"corpus{n}.jsonl"
        corpus.write_text("".join(json.dumps({"id": i, "contents": t}) + "\n" for i, t in docs))
        assert encode_host_cli.main(["--corpus", str(corpus), "--passages", "6", "--batch-size", "4", "--workers", "0",
                                     "--repeats", "1", "--csv", str(tmp_path / "rows.csv"),
                                     "--work", str(tmp_path / "work")]) == 0
        folders = sorted(p.name for p in (tmp_path / "work").iterdir())
    assert len(folders) == 2  # the reversed corpus did not replay the first one's recording
