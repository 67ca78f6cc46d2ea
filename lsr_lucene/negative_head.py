"""Text-level signed head for SNReLU models: ``out = gate(MLM logit) + offset(text)``, then SNReLU and pooling.

Why: turning a SPLADE model into SNReLU by reusing its MLM logits makes the logits' negative tail (every
position that anti-predicts a term) the negative weights: dense junk (rare, unrelated words), and a dead
zone wide enough to hide it is too wide for training to cross (runs/nevir/README.md). With this head,

- ``gate(x) = x if x > eps else 0`` keeps the MLM logits only where SNReLU makes them positive, so the
  positive side equals the SPLADE model's (its biases shifted by eps) and the MLM tail never turns negative;
- ``offset(text) = mean_position(hidden) @ W.T + b`` (per vocabulary term, one value per text) is where
  negative weights come from. W and b start at zero, so the converted model encodes exactly as SPLADE does
  and training moves only the terms it needs below -eps.

Per position, out = gate(logit) + offset; ``gate`` is non-decreasing, so max/min pooling over positions
still commutes with it: the pooled raw values are ``gate(raw max) + offset`` and ``gate(raw min) + offset``.
"""
from __future__ import annotations

import pickle
from pathlib import Path

import torch

from .errors import SetupError

HEAD_FILE = "negative_head.pt"  # beside the masked-LM files; lsr_lucene.json says "negative_head": "mean"
HEAD_KINDS = ("mean",)


class NegativeHead(torch.nn.Module):
    """Per-text, per-term offset from the mean of the transformed hidden states (zero at initialisation)."""

    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(vocab, dim))
        self.bias = torch.nn.Parameter(torch.zeros(vocab))

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(batch, vocabulary) offsets from ``hidden`` (batch, length, dim) over the positions ``mask`` keeps."""
        keep = mask.to(hidden.dtype).unsqueeze(-1)
        mean = (hidden * keep).sum(1) / keep.sum(1).clamp(min=1)
        return mean.to(self.weight.dtype) @ self.weight.T + self.bias


def gate(raw: torch.Tensor, epsilon: float) -> torch.Tensor:
    """MLM logits kept only above the dead zone (``x if x > eps else 0``): they never make a weight negative."""
    return torch.where(raw > epsilon, raw, torch.zeros_like(raw))


def pooled_out(raw_max: torch.Tensor, raw_min: torch.Tensor | None, offset: torch.Tensor,
               epsilon: float) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Max and min over positions of ``gate(logit) + offset`` from the max and min of the raw logits
    (the min stays None when the pooling does not need it)."""
    return gate(raw_max, epsilon) + offset, None if raw_min is None else gate(raw_min, epsilon) + offset


def save(head: NegativeHead, directory: str | Path) -> None:
    """Write the head's tensors beside a saved model."""
    torch.save({"weight": head.weight.detach().cpu(), "bias": head.bias.detach().cpu()}, Path(directory) / HEAD_FILE)


def load(directory: str | Path) -> NegativeHead:
    """The head saved in a model directory; a one-line error when the file is missing or malformed."""
    path = Path(directory) / HEAD_FILE
    if not path.is_file():
        raise SetupError(f"{path}: missing (the model's lsr_lucene.json names a negative head)")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        head = NegativeHead(*state["weight"].shape)
        head.load_state_dict(state)
    except (KeyError, RuntimeError, ValueError, TypeError, pickle.UnpicklingError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise SetupError(f"{path}: not a negative head ({type(exc).__name__}: {first})") from None
    return head
