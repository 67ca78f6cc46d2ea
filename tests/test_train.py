"""Training of (signed) sparse encoders: exact pooled-logit gradients, a tiny run, save/reload, bad input."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import torch

from lsr_lucene.encode import activations as act
from lsr_lucene.errors import InputError
from lsr_lucene.train.cli import main
from lsr_lucene.train.data import examples_as_nevir, read_examples, read_nevir_rows, split_holdout
from lsr_lucene.train.losses import batch_loss, flops
from lsr_lucene.train.model import TrainableEncoder, pooled_logits
from lsr_lucene.train.trainer import TrainConfig, train

DEMO = Path(__file__).resolve().parents[1] / "lsr_lucene" / "data" / "demo"
NEVIR_TRAIN = Path(__file__).resolve().parents[2] / "shared" / "data" / "nevir" / "train.jsonl"


def _full_path(hidden, weight, bias, mask, activation, pooling, eps):
    """Reference: full (texts × positions × vocabulary) logits, activation, then pooling."""
    logits = hidden @ weight.T + bias
    return act.pool(act.activate(logits, activation, eps), mask, pooling)


@pytest.mark.parametrize("activation,pooling", [("splade", "max"), ("snrelu", "absmax"), ("snrelu", "sum"),
                                                ("snrelu", "max")])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pooled_logits_match_full_logits_values_and_gradients(seed, activation, pooling):
    torch.manual_seed(seed)
    n, length, dim, vocab = 3, 6, 4, 13
    lengths = [6, 3, 1]
    mask = torch.zeros(n, length)
    for i, k in enumerate(lengths):
        mask[i, :k] = 1
    hidden = torch.randn(n, length, dim, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(vocab, dim, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(vocab, dtype=torch.float64, requires_grad=True)
    upstream = torch.randn(n, vocab, dtype=torch.float64)
    results = []
    for fast in (False, True):
        for t in (hidden, weight, bias):
            t.grad = None
        if fast:
            raw_max, raw_min = pooled_logits(hidden, weight, bias, act.needs_min(activation, pooling),
                                             torch.float64, lengths)
            out = act.pool_raw(raw_max, raw_min, activation, pooling, 0.5)
        else:
            out = _full_path(hidden, weight, bias, mask, activation, pooling, 0.5)
        (out * upstream).sum().backward()
        results.append([out.detach().clone(), hidden.grad.clone(), weight.grad.clone(), bias.grad.clone()])
    for a, b in zip(*results):
        assert torch.allclose(a, b, atol=1e-10)
    # padded positions of short texts never receive gradient
    assert torch.all(results[1][1][1, 3:] == 0) and torch.all(results[1][1][2, 1:] == 0)


@pytest.mark.parametrize("seed", [0, 1])
def test_scoped_pooled_logits_match_full_logits_values_and_gradients(seed):
    from lsr_lucene.encode import negative_head as nh

    torch.manual_seed(seed)
    n, length, dim, vocab, eps = 2, 5, 4, 7, 0.3
    lengths = [5, 3]
    tensors = [torch.randn(n, length, dim, dtype=torch.float64), torch.randn(vocab, dim, dtype=torch.float64),
               torch.randn(vocab, dtype=torch.float64), torch.rand(n, length, dtype=torch.float64) * 2 - 1]
    upstream = torch.randn(2, n, vocab, dtype=torch.float64)
    results = []
    for fast in (False, True):
        hidden, weight, bias, sign = (t.clone().requires_grad_() for t in tensors)
        if fast:
            raw_max, raw_min = pooled_logits(hidden, weight, bias, True, torch.float64, lengths, sign, eps)
        else:  # reference: sign * gate(logit) per position, then max and min over each text's positions
            values = [nh.scoped(hidden[i, :k] @ weight.T + bias, sign[i, :k], eps) for i, k in enumerate(lengths)]
            raw_max = torch.stack([v.max(0).values for v in values])
            raw_min = torch.stack([v.min(0).values for v in values])
        (raw_max * upstream[0] + raw_min * upstream[1]).sum().backward()
        results.append([raw_max.detach(), raw_min.detach(), hidden.grad, weight.grad, bias.grad, sign.grad])
    for a, b in zip(*results):
        assert torch.allclose(a, b, atol=1e-10)


def test_without_in_batch_negatives_each_query_ranks_its_own_pair_only():
    import torch.nn.functional as F

    rows = [{"q1": "dogs that bark", "doc1": "the dog barks", "q2": "dogs that do not bark",
             "doc2": "the dog does not bark"},
            {"q1": "dogs that bite", "doc1": "the dog bites", "q2": "dogs that do not bite",
             "doc2": "the dog does not bite"}]  # same topic: the other row's documents compete in-batch
    from lsr_lucene.train.data import parse_example

    examples = [parse_example(r, "test", str(i)) for i, r in enumerate(rows)]
    model = TrainableEncoder("splade-tiny", matmul="fp32", device="cpu").eval()
    with torch.no_grad():
        loss, parts = batch_loss(model, examples, 0.0, 0.0, 32, 16, in_batch=False)
        in_batch, _ = batch_loss(model, examples, 0.0, 0.0, 32, 16)
        q = model([r[k] for r in rows for k in ("q1", "q2")], 16)
        d = model([r[k] for r in rows for k in ("doc1", "doc2")], 32)
    pair = [F.cross_entropy((q[i] @ d[2 * (i // 2):2 * (i // 2) + 2].T).unsqueeze(0), torch.tensor([i % 2]))
            for i in range(4)]
    assert loss.item() == pytest.approx(float(sum(pair) / 4), rel=1e-5) and loss.item() < in_batch.item()


def test_pooled_logits_hand_made_signs_dead_zone_and_gradient_routes():
    # one text, 3 positions, identity projection: the logits are the hidden states themselves
    hidden = torch.tensor([[[3.0, -0.5, -4.0, 2.0],
                            [-2.0, 0.5, 1.0, -2.0],
                            [0.0, 0.2, -1.0, -3.0]]], requires_grad=True)
    weight, bias = torch.eye(4), torch.zeros(4)
    raw_max, raw_min = pooled_logits(hidden, weight, bias, True)
    assert raw_max.tolist() == [[3.0, 0.5, 1.0, 2.0]] and raw_min.tolist() == [[-2.0, -0.5, -4.0, -3.0]]
    eps = 1.0
    absmax = act.pool_raw(raw_max, raw_min, "snrelu", "absmax", eps)
    total = act.pool_raw(raw_max, raw_min, "snrelu", "sum", eps)
    f = lambda x: torch.log1p(torch.tensor(float(x))).item()  # noqa: E731
    # term 0: +3 wins; term 1: all in the dead zone -> 0; term 2: -4 wins (max 1.0 is on the dead zone's edge);
    # term 3: +2 vs -3: the negative is larger in magnitude and wins under absmax, sum adds both
    assert absmax[0].tolist() == pytest.approx([f(2), 0.0, -f(3), -f(2)])
    assert total[0].tolist() == pytest.approx([f(2) - f(1), 0.0, -f(3), f(1) - f(2)])
    total.sum().backward()
    grad = hidden.grad[0]
    # sum pooling sends gradient to the argmax AND the argmin position of a term, nothing to the dead zone
    assert grad[0, 0] > 0 and grad[1, 0] > 0 and grad[2, 0] == 0
    assert torch.all(grad[:, 1] == 0)
    assert grad[0, 2] > 0 and grad[1, 2] == 0 and grad[2, 2] == 0  # max 1.0 is inside the dead zone


def test_dead_zone_surrogate_keeps_values_and_adds_gradient():
    model = TrainableEncoder("splade-tiny", activation="snrelu", pooling="sum", epsilon=4.0, init_shift=4.0,
                             matmul="fp32", dead_zone_grad=0.0, device="cpu")
    texts = ["negation is hard for retrieval models"]
    model.train()
    torch.manual_seed(0)
    model.net.eval()  # no dropout, so both passes see the same network
    exact = model(texts, 32)
    model.dead_zone_grad = 0.5
    surrogate = model(texts, 32)
    assert torch.equal(exact, surrogate)
    exact.sum().backward()
    g_exact = model.decoder.bias.grad.clone()
    model.zero_grad()
    surrogate.sum().backward()
    g_surrogate = model.decoder.bias.grad
    zero = exact[0] == 0
    assert zero.any() and (~zero).any()
    assert torch.all(g_exact[zero] == 0) and torch.all(g_surrogate[zero] > 0)


def _demo_triples(path: Path, count: int = 6) -> Path:
    """Triples from the shipped demo collection: exclusion queries, a relevant and an excluded document."""
    docs = {json.loads(l)["id"]: json.loads(l) for l in (DEMO / "corpus.jsonl").open()}
    topics = dict(line.rstrip("\n").split("\t", 1) for line in (DEMO / "topics.tsv").open())
    judged: dict[str, dict[str, int]] = {}
    for line in (DEMO / "qrels.txt").open():
        qid, _, doc, gain = line.split()
        judged.setdefault(qid, {})[doc] = int(gain)
    rows = []
    for qid in sorted(judged, key=int):
        pos = [d for d, g in judged[qid].items() if g > 0]
        neg = [d for d, g in judged[qid].items() if g == 0]
        if pos and neg:
            text = lambda d: f"{docs[d].get('title', '')} {docs[d]['text']}".strip()  # noqa: E731
            rows.append({"query": topics[qid], "positive": text(pos[0]), "negative": text(neg[0])})
        if len(rows) == count:
            break
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_tiny_training_run_lowers_the_loss_and_reloads_identically(tmp_path):
    from lsr_lucene.encode.encoder import SparseEncoder

    data = _demo_triples(tmp_path / "triples.jsonl")
    examples = read_examples(data)
    config = TrainConfig(train=[str(data)], output=str(tmp_path / "model"), activation="snrelu", pooling="sum",
                         epsilon=10.0, init_shift=10.0, epochs=4, batch_size=len(examples), lr=5e-4,
                         lambda_q=0.0, lambda_d=0.0, max_length=64, query_max_length=16, matmul="fp32",
                         device="cpu", warmup=0.0, seed=3, dead_zone_grad=0.1)
    start = TrainableEncoder("splade-tiny", activation="snrelu", pooling="sum", epsilon=10.0, init_shift=10.0,
                             matmul="fp32", device="cpu").eval()
    with torch.no_grad():
        before, _ = batch_loss(start, examples, 0.0, 0.0, 64, 16)
    summary = train(config, progress=False)
    assert summary["steps"] == 4 and (tmp_path / "model" / "checkpoints" / "epoch-4").is_dir()
    trained = TrainableEncoder(str(tmp_path / "model"), matmul="fp32", device="cpu").eval()
    assert trained.settings() == {"activation": "snrelu", "pooling": "sum", "epsilon": 10.0}
    with torch.no_grad():
        after, _ = batch_loss(trained, examples, 0.0, 0.0, 64, 16)
    assert after.item() < before.item()
    log = [json.loads(l) for l in (tmp_path / "model" / "train_log.jsonl").open()]
    assert [r["epoch"] for r in log] == [1, 2, 3, 4]

    # SparseEncoder picks up activation/pooling/epsilon from lsr_lucene.json and gives the training vectors
    texts = [ex.docs[0] for ex in examples[:3]]
    encoder = SparseEncoder(model=str(tmp_path / "model"), max_length=64, device="cpu", dtype="fp32")
    assert (encoder.activation, encoder.pooling, encoder.epsilon) == ("snrelu", "sum", 10.0)
    encoded = encoder.encode_documents(texts)
    reference = trained.to_dicts(trained.encode(texts, 64))
    for got, want in zip(encoded, reference):
        assert got.keys() == want.keys()
        assert all(abs(got[t] - want[t]) < 1e-4 for t in want)
    # saving the reloaded model again gives identical vectors
    trained.save(tmp_path / "again")
    again = SparseEncoder(model=str(tmp_path / "again"), max_length=64, device="cpu",
                          dtype="fp32").encode_documents(texts)
    assert again == encoded


def test_holdout_keeps_rows_sharing_a_document_together():
    if not NEVIR_TRAIN.is_file():
        pytest.skip("NevIR data not available")
    examples = read_examples(NEVIR_TRAIN)
    fit, held = split_holdout(examples, 40, seed=5)
    assert len(fit) + len(held) == len(examples) and len(held) >= 40
    held_docs = {d for ex in held for d in ex.docs}
    assert not any(d in held_docs for ex in fit for d in ex.docs)
    assert len(examples_as_nevir(held)) == len(held)


# ------------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("row,message", [
    ({"q1": "a", "doc1": "b", "q2": "c"}, "lacks field(s) doc2"),
    ({"query": "a", "positive": "b"}, "lacks field(s) negative"),
    ({"q1": "a", "doc1": " ", "q2": "c", "doc2": "d"}, "'doc1' is empty"),
    ({"query": "", "positive": "b", "negative": "c"}, "'query' is empty"),
    ({"query": "a", "positive": "b", "negative": []}, "empty list"),
    ({"text": "a"}, "neither NevIR fields"),
])
def test_bad_training_rows_name_file_and_line(tmp_path, row, message):
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps({"q1": "a", "doc1": "b", "q2": "c", "doc2": "d"}) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(InputError) as info:
        read_examples(path)
    assert message in str(info.value)
    assert f"{path}:2" in str(info.value)


def test_empty_training_and_dev_files(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(InputError, match="no training rows"):
        read_examples(empty)
    with pytest.raises(InputError, match="no NevIR rows"):
        read_nevir_rows(empty)
    bad = tmp_path / "dev.jsonl"
    bad.write_text(json.dumps({"id": "1", "q1": "a", "doc1": "b", "q2": "c"}) + "\n")
    with pytest.raises(InputError, match=r"dev.jsonl:1: NevIR row lacks field\(s\) doc2"):
        read_nevir_rows(bad)


def test_cli_reports_bad_input_before_loading_a_model(tmp_path, capsys):
    from lsr_lucene.cli import run_main

    train_file = tmp_path / "train.jsonl"
    train_file.write_text(json.dumps({"q1": "a", "doc1": "b", "q2": "c", "doc2": "d"}) + "\n")
    empty_dev = tmp_path / "dev.jsonl"
    empty_dev.write_text("")
    code = run_main(main, ["--train", str(train_file), "--dev", str(empty_dev), "--output", str(tmp_path / "m")])
    assert code == 2
    assert "no NevIR rows" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
    (tmp_path / "m").mkdir()
    assert run_main(main, ["--train", str(train_file), "--output", str(tmp_path / "m")]) == 2
    assert "already exists" in capsys.readouterr().err


def test_flops_counts_negative_weights_like_positive_ones():
    w = torch.tensor([[1.0, -2.0, 0.0], [1.0, 2.0, 0.0]])
    assert flops(w).item() == pytest.approx(1.0 + 4.0)
    assert flops(-w).item() == flops(w).item()


def test_dead_zone_widening_keeps_positive_weights_and_removes_negatives():
    from lsr_lucene.train.trainer import _widening

    assert _widening(0, 100, 12.0, 4.0, 0.5) == 8.0
    assert _widening(25, 100, 12.0, 4.0, 0.5) == 4.0
    assert _widening(50, 100, 12.0, 4.0, 0.5) == 0.0 and _widening(10, 100, None, 4.0, 0.5) == 0.0
    # max pooling: a term's weight is snrelu(max logit), so its positive part depends on the positive side only
    model = TrainableEncoder("splade-tiny", activation="snrelu", pooling="max", epsilon=4.0, matmul="fp32",
                             device="cpu")
    assert model.init_shift == 4.0  # SPLADE -> SNReLU: positive part starts equal to SPLADE's
    texts = ["a dog that does not bark", "tea without caffeine"]
    narrow = model.encode(texts, 32)
    model.widen = 6.0
    wide = model.encode(texts, 32)
    assert torch.allclose(narrow.clamp(min=0), wide.clamp(min=0), atol=1e-5)
    assert (wide < 0).sum() < (narrow < 0).sum()
    splade = TrainableEncoder("splade-tiny", activation="splade", matmul="fp32", device="cpu").encode(texts, 32)
    assert torch.allclose(narrow.clamp(min=0), splade, atol=1e-5)


def test_resume_continues_from_the_last_checkpoint(tmp_path):
    data = _demo_triples(tmp_path / "triples.jsonl", count=2)
    out = tmp_path / "model"
    config = TrainConfig(train=[str(data)], output=str(out), activation="splade", epochs=1, batch_size=2,
                         max_length=24, query_max_length=8, matmul="fp32", device="cpu")
    train(config, progress=False)
    # pretend the run was interrupted after epoch 1: the work directory is what an interrupted run leaves
    out.rename(tmp_path / "model.partial")
    config.epochs = 2
    summary = train(config, resume=True, progress=False)
    assert summary["epochs_run"] == 2 and summary["steps"] == 2
    log = [json.loads(l) for l in (out / "train_log.jsonl").open()]
    assert [r["epoch"] for r in log] == [1, 2]
    assert not (out / "checkpoints" / "epoch-1" / "trainer_state.pt").exists()
    assert (out / "checkpoints" / "epoch-2" / "trainer_state.pt").is_file()


def _model_tensors(path: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return {k: v for f in sorted(path.glob("*.safetensors")) for k, v in load_file(f).items()}


def _without_time(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "elapsed_s"}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def test_resumed_run_equals_an_uninterrupted_one(tmp_path, monkeypatch):
    from lsr_lucene.train.trainer import Trainer

    data = _demo_triples(tmp_path / "triples.jsonl", count=2)

    def config(name: str) -> TrainConfig:  # dropout on: the resumed run needs the saved RNG state
        return TrainConfig(train=[str(data)], output=str(tmp_path / name), activation="splade", epochs=2,
                           batch_size=1, max_length=24, query_max_length=8, matmul="fp32", device="cpu",
                           warmup=0.5, seed=7)

    whole = train(config("whole"), progress=False)
    original = Trainer._checkpoint

    def interrupted(self, model, optimizer, scheduler, state, epoch):
        original(self, model, optimizer, scheduler, state, epoch)
        if epoch == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(Trainer, "_checkpoint", interrupted)
    with pytest.raises(KeyboardInterrupt):
        train(config("resumed"), progress=False)
    monkeypatch.setattr(Trainer, "_checkpoint", original)
    work = tmp_path / "resumed.partial"
    with (work / "train_log.jsonl").open("a") as log:  # a run killed after logging epoch 2, before its checkpoint
        log.write(json.dumps({"epoch": 2, "step": 4}) + "\n")
    dead = next(pid for pid in range(4_194_000, 1, -1) if not _alive(pid))
    stale = work / "checkpoints" / f".epoch-2.tmp-{dead}-x"  # ... or killed while writing the checkpoint
    stale.mkdir()
    (stale / "trainer_state.pt").write_bytes(b"partial")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    resumed = train(config("resumed"), resume=True, progress=False)

    assert _without_time(resumed) == _without_time(whole) and whole["steps"] == 4
    a, b = _model_tensors(tmp_path / "whole"), _model_tensors(tmp_path / "resumed")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    first = _model_tensors(tmp_path / "whole" / "checkpoints" / "epoch-1")
    assert a and any(not torch.equal(a[k], first[k]) for k in a)  # epoch 2 did change the weights
    logs = [[_without_time(json.loads(line)) for line in (tmp_path / name / "train_log.jsonl").open()]
            for name in ("whole", "resumed")]
    assert logs[0] == logs[1] and [r["epoch"] for r in logs[0]] == [1, 2]
    assert not [p for p in (tmp_path / "resumed").rglob("*") if ".tmp-" in p.name or p.name.endswith(".lock")]


class _Payload:
    """Unpickling this runs code: what a checkpoint loaded with weights_only=False would do."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "unpickled"))


def test_checkpoint_with_an_arbitrary_pickled_object_is_refused(tmp_path, capsys):
    from lsr_lucene.cli import run_main

    data = _demo_triples(tmp_path / "triples.jsonl", count=2)
    out = tmp_path / "model"
    args = ["--train", str(data), "--output", str(out), "--activation", "splade", "--epochs", "1",
            "--batch-size", "2", "--max-length", "24", "--query-max-length", "8", "--matmul", "fp32",
            "--device", "cpu", "--quiet"]
    assert run_main(main, args) == 0
    out.rename(tmp_path / "model.partial")  # an interrupted run's work directory
    state_file = tmp_path / "model.partial" / "checkpoints" / "epoch-1" / "trainer_state.pt"
    saved = torch.load(state_file, weights_only=True)  # what we write loads safely ...
    assert set(saved) == {"optimizer", "scheduler", "state", "rng"}
    marker = tmp_path / "marker.txt"
    torch.save({**saved, "state": {**saved["state"], "extra": _Payload(marker)}}, state_file)
    capsys.readouterr()
    assert run_main(main, args + ["--epochs", "2", "--resume"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(err) == 1 and f"{state_file}: not a trainer state that loads safely" in err[0]
    assert not marker.exists()  # ... and nothing in the file ran
    assert not out.exists() and state_file.is_file()


def test_a_work_directory_without_a_checkpoint_does_not_block_a_new_run(tmp_path):
    """What a run that stopped before its first checkpoint leaves (nothing to resume) is started again, not refused
    with "holds an interrupted run"."""
    data = _demo_triples(tmp_path / "triples.jsonl", count=2)
    out = tmp_path / "model"
    (tmp_path / "model.partial").mkdir()
    (tmp_path / "model.partial" / "train_log.jsonl").write_text("")
    config = TrainConfig(train=[str(data)], output=str(out), activation="splade", epochs=1, batch_size=2,
                         max_length=24, query_max_length=8, matmul="fp32", device="cpu")
    assert train(config, progress=False)["epochs_run"] == 1
    assert out.is_dir() and not (tmp_path / "model.partial").exists()
