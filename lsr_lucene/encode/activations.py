"""SPLADE and signed (SNReLU) term activations and their pooling over token positions.

Definitions (Krasakis et al., paper 000, eqs. 2 and 11-13):

- ``splade``: ``log(1 + ReLU(x))`` (non-negative weights).
- ``snrelu``: ``log(1 + ReLU(x - eps)) - log(1 + ReLU(-x - eps))``: positive part above ``+eps``,
  negative part below ``-eps``, exactly zero in the dead zone ``[-eps, +eps]``.

Pooling over the attention-masked positions of one text, per vocabulary term:

- ``max``: the largest value (standard SPLADE max pooling).
- ``absmax``: the value with the largest magnitude, sign kept; a tie between ``+a`` and ``-a`` goes to ``+a``
  (eq. 12 uses ``>=``).
- ``sum``: the largest positive value plus the most negative value (each 0 when absent; eq. 13).

All activations are non-decreasing functions of the logit, so pooling commutes with them:
``max_l f(x_l) = f(max_l x_l)`` and ``min_l f(x_l) = f(min_l x_l)``. :func:`pool_raw` uses this to pool raw
logits first (the encoder's fast path) and gives the same result as :func:`pool` applied to activated logits.
"""
from __future__ import annotations

import torch

from lsr_lucene.encode.choices import ACTIVATIONS, POOLINGS  # noqa: F401  (named here too: act.ACTIVATIONS)
DEFAULT_EPSILON = 1.0


def splade(x: torch.Tensor) -> torch.Tensor:
    """SPLADE activation log(1 + ReLU(x)): sparse, non-negative, log-saturated."""
    return torch.log1p(torch.relu(x))


def snrelu(x: torch.Tensor, epsilon: float = DEFAULT_EPSILON) -> torch.Tensor:
    """Signed SNReLU: log(1+ReLU(x-eps)) - log(1+ReLU(-x-eps)); zero on [-eps, eps], odd-symmetric."""
    return torch.log1p(torch.relu(x - epsilon)) - torch.log1p(torch.relu(-x - epsilon))


def activate(x: torch.Tensor, activation: str = "splade", epsilon: float = DEFAULT_EPSILON) -> torch.Tensor:
    """Apply the named activation (``splade`` or ``snrelu``) element-wise."""
    if activation == "splade":
        return splade(x)
    if activation == "snrelu":
        return snrelu(x, epsilon)
    raise ValueError(f"unknown activation {activation!r}; expected one of {', '.join(ACTIVATIONS)}")


def positive_part(x: torch.Tensor, activation: str = "splade", epsilon: float = DEFAULT_EPSILON) -> torch.Tensor:
    """Non-negative part of the activation: log(1+ReLU(x)) for splade, log(1+ReLU(x-eps)) for snrelu."""
    if activation == "splade":
        return splade(x)
    if activation == "snrelu":
        return torch.log1p(torch.relu(x - epsilon))
    raise ValueError(f"unknown activation {activation!r}; expected one of {', '.join(ACTIVATIONS)}")


def combine(mx: torch.Tensor, mn: torch.Tensor | None, pooling: str) -> torch.Tensor:
    """Pooled value per term from the per-term max ``mx`` and min ``mn`` of activated values over positions."""
    if pooling == "max":
        return mx
    if mn is None:
        raise ValueError(f"pooling {pooling!r} needs the minimum over positions")
    if pooling == "absmax":
        return torch.where(mx >= -mn, mx, mn)
    if pooling == "sum":
        return torch.clamp(mx, min=0) + torch.clamp(mn, max=0)
    raise ValueError(f"unknown pooling {pooling!r}; expected one of {', '.join(POOLINGS)}")


def _check_pooling(pooling: str) -> None:
    if pooling not in POOLINGS:
        raise ValueError(f"unknown pooling {pooling!r}; expected one of {', '.join(POOLINGS)}")


def pool(values: torch.Tensor, mask: torch.Tensor, pooling: str = "max") -> torch.Tensor:
    """Pool activated ``values`` (batch, length, vocab) over positions where ``mask`` (batch, length) is set."""
    _check_pooling(pooling)
    keep = mask.bool().unsqueeze(-1)
    mx = values.masked_fill(~keep, float("-inf")).amax(dim=1)
    mn = None if pooling == "max" else values.masked_fill(~keep, float("inf")).amin(dim=1)
    return combine(mx, mn, pooling)


def needs_min(activation: str, pooling: str) -> bool:
    """Whether pooling raw logits needs their minimum too (only signed activations with absmax/sum do)."""
    return activation != "splade" and pooling != "max"


def pool_raw(raw_max: torch.Tensor, raw_min: torch.Tensor | None, activation: str = "splade",
             pooling: str = "max", epsilon: float = DEFAULT_EPSILON) -> torch.Tensor:
    """Pooled weights from the max (and min) of RAW logits over positions: equals pool(activate(logits)).

    Valid because the activations are non-decreasing; for ``splade`` every value is >= 0, so absmax and sum
    reduce to max and the minimum is not needed.
    """
    _check_pooling(pooling)
    mx = activate(raw_max, activation, epsilon)
    if not needs_min(activation, pooling):
        return mx
    if raw_min is None:
        raise ValueError(f"{activation}/{pooling} pooling needs the minimum raw logit")
    return combine(mx, activate(raw_min, activation, epsilon), pooling)
