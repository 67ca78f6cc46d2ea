"""Activation and pooling functions on hand-made logits: signs, dead zone, ties, masking, raw-pooling identity."""
import math

import pytest
import torch
from hypothesis import given, settings, strategies as st

from lsr_lucene.encode import activations as act


def test_splade_is_log1p_relu():
    x = torch.tensor([-3.0, -0.0, 0.0, 0.5, 2.0])
    expected = [0.0, 0.0, 0.0, math.log1p(0.5), math.log1p(2.0)]
    assert act.splade(x).tolist() == pytest.approx(expected)


def test_snrelu_signs_and_dead_zone():
    eps = 0.5
    x = torch.tensor([-2.0, -0.5, -0.3, 0.0, 0.3, 0.5, 2.0])
    out = act.snrelu(x, eps).tolist()
    assert out == pytest.approx([-math.log1p(1.5), 0.0, 0.0, 0.0, 0.0, 0.0, math.log1p(1.5)])
    # odd symmetry and monotonicity on a grid
    grid = torch.linspace(-5, 5, 201)
    values = act.snrelu(grid, eps)
    assert torch.allclose(values, -act.snrelu(-grid, eps))
    assert bool((values[1:] >= values[:-1]).all())
    assert bool((values[(grid.abs() <= eps)] == 0).all())


def test_positive_part():
    x = torch.tensor([-2.0, 0.2, 1.0, 3.0])
    assert act.positive_part(x, "splade").tolist() == pytest.approx([0, math.log1p(0.2), math.log1p(1), math.log1p(3)])
    assert act.positive_part(x, "snrelu", 1.0).tolist() == pytest.approx([0, 0, 0, math.log1p(2)])


def _values():
    # batch 2, length 3, vocabulary 4; position 2 of text 1 is padding (huge values must be ignored)
    v = torch.tensor([
        [[0.5, -2.0, 0.0, 1.0], [0.2, -1.0, 0.0, -1.0], [0.1, 0.5, 0.0, -0.5]],
        [[-0.5, 0.0, 3.0, -0.25], [-0.75, 0.0, -4.0, 0.25], [9.0, -9.0, 9.0, -9.0]],
    ])
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    return v, mask


def test_max_pooling_respects_mask():
    v, mask = _values()
    assert act.pool(v, mask, "max").tolist() == [[0.5, 0.5, 0.0, 1.0], [-0.5, 0.0, 3.0, 0.25]]


def test_absmax_pooling_keeps_sign_and_breaks_ties_positive():
    v, mask = _values()
    out = act.pool(v, mask, "absmax").tolist()
    # text 0: term1 -> -2 (|−2| > 0.5); term3 has +1 and -1: the tie goes to +1
    assert out[0] == [0.5, -2.0, 0.0, 1.0]
    # text 1: term0 -> -0.75; term2 -> -4 beats 3; term3 tie ±0.25 -> +0.25; padding's ±9 ignored
    assert out[1] == [-0.75, 0.0, -4.0, 0.25]


def test_sum_pooling_adds_max_positive_and_min_negative():
    v, mask = _values()
    out = act.pool(v, mask, "sum").tolist()
    assert out[0] == pytest.approx([0.5, 0.5 - 2.0, 0.0, 1.0 - 1.0])
    assert out[1] == pytest.approx([-0.75, 0.0, 3.0 - 4.0, 0.25 - 0.25])


def _brute_pool(values, mask, pooling):
    """Independent per-term Python loop (the definition, not the vectorised code)."""
    batch, length, vocab = values.shape
    out = torch.zeros(batch, vocab)
    for b in range(batch):
        for t in range(vocab):
            col = [float(values[b, p, t]) for p in range(length) if mask[b, p]]
            if pooling == "max":
                out[b, t] = max(col)
            elif pooling == "absmax":
                best = max(col, key=lambda x: (abs(x), x > 0))  # largest magnitude; ties to the positive value
                out[b, t] = best
            else:
                out[b, t] = max(max(col), 0.0) + min(min(col), 0.0)
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), activation=st.sampled_from(act.ACTIVATIONS),
       pooling=st.sampled_from(act.POOLINGS), eps=st.sampled_from([0.0, 0.3, 1.0]))
def test_pool_raw_equals_pool_of_activated(seed, activation, pooling, eps):
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(3, 5, 7, generator=gen) * 3
    logits[0, 1, 0], logits[0, 2, 0] = 2.0, -2.0  # an exact ± tie
    mask = torch.ones(3, 5, dtype=torch.long)
    mask[1, 3:] = 0
    mask[2, 1:] = 0
    activated = act.activate(logits, activation, eps)
    reference = _brute_pool(activated, mask, pooling)
    assert torch.allclose(act.pool(activated, mask, pooling), reference)
    keep = mask.bool().unsqueeze(-1)
    raw_max = logits.masked_fill(~keep, float("-inf")).amax(1)
    raw_min = logits.masked_fill(~keep, float("inf")).amin(1)
    fast = act.pool_raw(raw_max, raw_min if act.needs_min(activation, pooling) else None, activation, pooling, eps)
    assert torch.allclose(fast, reference, atol=1e-6)


def test_unknown_names_raise():
    with pytest.raises(ValueError):
        act.activate(torch.zeros(1), "gelu")
    with pytest.raises(ValueError):
        act.pool(torch.zeros(1, 1, 1), torch.ones(1, 1), "mean")
