"""Signed heads (text-level ``mean``, per-position ``scope``): start, encoder = trainer = naive path, errors."""
from __future__ import annotations

import pytest
import torch

from lsr_lucene.encode import negative_head as nh
from lsr_lucene.errors import InputError, SetupError
from lsr_lucene.train.model import TrainableEncoder

TEXTS = ["a dog that does not bark at night", "tea without caffeine", "negation is hard for retrieval"]


def _head_model(pooling: str = "sum", kind: str = "mean") -> TrainableEncoder:
    return TrainableEncoder("splade-tiny", activation="snrelu", pooling=pooling, epsilon=1.0, matmul="fp32",
                            device="cpu", negative_head=kind).eval()


def test_gate_and_pooled_out_on_hand_made_logits():
    raw = torch.tensor([[2.5, 1.0, 0.3, -7.0]])
    assert nh.gate(raw, 1.0).tolist() == [[2.5, 0.0, 0.0, 0.0]]  # the MLM tail never goes negative
    high, low = nh.pooled_out(raw, raw - 3.0, torch.tensor([[0.0, -2.0, 0.5, 0.0]]), 1.0)
    assert high.tolist() == [[2.5, -2.0, 0.5, 0.0]] and low.tolist() == [[0.0, -2.0, 0.5, 0.0]]
    assert nh.pooled_out(raw, None, torch.zeros(1, 4), 1.0)[1] is None  # max pooling needs no minimum


def test_scoped_values_on_hand_made_logits():
    logits = torch.tensor([[2.5, 0.5, 4.0], [3.0, -7.0, 1.5]])  # positions × vocabulary
    values = nh.scoped(logits, torch.tensor([1.0, -1.0]), 1.0)
    # the negated position flips its strong terms; the MLM tail (-7) and the dead zone (0.5) stay zero
    assert values.tolist() == [[2.5, 0.0, 4.0], [-3.0, 0.0, -1.5]]


def test_negation_scope_rule_on_hand_made_texts():
    from lsr_lucene.encode.models import load

    tokenizer, _ = load("splade-tiny")
    scope = nh.NegationScope(tokenizer, window=3)

    def in_scope(text: str) -> list[str]:
        ids = tokenizer(text, return_tensors="pt")["input_ids"]
        tokens = tokenizer.convert_ids_to_tokens(ids[0])
        return [t for t, flag in zip(tokens, scope(ids)[0].tolist()) if flag]

    assert in_scope("it is not red, but blue") == ["red"]  # the clause ends at the comma
    assert in_scope("the dog doesn't bark") == ["bark"]  # n't (WordPiece: doesn ' t)
    assert in_scope("no one ever saw the old mill") == ["one", "ever", "saw"]  # at most 3 tokens
    assert in_scope("negation is hard for retrieval") == []


def test_zero_head_encodes_exactly_as_the_splade_model():
    model = _head_model()
    splade = TrainableEncoder("splade-tiny", activation="splade", matmul="fp32", device="cpu").eval()
    with torch.no_grad():
        assert torch.allclose(model.encode(TEXTS, 32), splade.encode(TEXTS, 32), atol=1e-5)


def test_scope_head_starts_with_negated_concepts_negative_and_learns():
    model = _head_model("absmax", "scope")
    with torch.no_grad():
        start = model.to_dicts(model.encode(TEXTS, 32))
    assert start[0]["bark"] < 0 and start[1]["caf"] < 0  # negated: "does not bark", "without caffeine"
    assert all(w > 0 for w in start[2].values())  # no cue, no negative weight
    model.train()
    model.net.eval()
    model(TEXTS, 32).sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.head.parameters())


def test_head_gradient_reaches_the_head_through_the_dead_zone():
    model = _head_model()
    model.train()
    model.net.eval()
    model.dead_zone_grad = 0.3
    model(TEXTS, 32)[:, :100].sum().backward()
    assert model.head.weight.grad.abs().sum() > 0 and model.head.bias.grad[:100].abs().min() > 0


@pytest.mark.parametrize("pooling,kind", [("absmax", "mean"), ("sum", "mean"), ("absmax", "scope"),
                                          ("sum", "scope")])
def test_saved_head_model_encodes_alike_in_trainer_encoder_and_naive_path(tmp_path, pooling, kind):
    from lsr_lucene.encode.encoder import SparseEncoder

    model = _head_model(pooling, kind)
    torch.manual_seed(0)
    with torch.no_grad():  # a head that makes some terms strongly negative, others positive
        model.head.weight.normal_(0, 0.05 if kind == "mean" else 0.5)
        model.head.bias.normal_(0, 1.0)
        want = model.to_dicts(model.encode(TEXTS, 32))
    assert any(w < 0 for v in want for w in v.values()) and any(w > 0 for v in want for w in v.values())
    model.save(tmp_path / "m")
    assert (tmp_path / "m" / nh.HEAD_FILE).is_file()
    encoder = SparseEncoder(model=str(tmp_path / "m"), max_length=32, device="cpu", dtype="fp32")
    for got in (encoder.encode_documents(TEXTS), encoder.encode_naive(TEXTS)):
        for g, w in zip(got, want):
            assert g.keys() == w.keys()
            assert all(abs(g[t] - w[t]) < 1e-4 for t in w)
    reloaded = TrainableEncoder(str(tmp_path / "m"), matmul="fp32", device="cpu").eval()
    assert reloaded.settings()["negative_head"] == kind
    assert torch.equal(reloaded.head.weight, model.head.weight)
    with pytest.raises(InputError, match="negative head"):
        encoder.position_topk(TEXTS, 4)


def test_missing_or_malformed_head_file_is_a_one_line_error(tmp_path):
    with pytest.raises(SetupError, match="negative_head.pt: missing"):
        nh.load(tmp_path)
    (tmp_path / nh.HEAD_FILE).write_bytes(b"not a tensor file")
    with pytest.raises(SetupError, match="negative_head.pt: not a negative head"):
        nh.load(tmp_path)
    nh.save(nh.ScopeHead(8), tmp_path)  # a scope head's file read as a mean head
    with pytest.raises(SetupError, match="negative_head.pt: not a negative head"):
        nh.load(tmp_path, "mean")
    assert nh.load(tmp_path, "scope").weight.shape == (8,)
    with pytest.raises(InputError, match="negative head must be one of mean, scope, got 'bogus'"):
        nh.load(tmp_path, "bogus")


def test_negative_head_needs_the_signed_activation(tmp_path):
    with pytest.raises(InputError, match="needs --activation snrelu"):
        TrainableEncoder("splade-tiny", activation="splade", negative_head="mean", device="cpu")
