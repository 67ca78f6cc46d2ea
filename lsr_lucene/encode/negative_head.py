"""Signed heads for SNReLU models: where negative weights come from, instead of the MLM logits' negative tail.

Two kinds (``lsr_lucene.json`` names one as ``"negative_head"``):

- ``mean``: ``out = gate(MLM logit) + offset(text)``, a per-text, per-term offset (below);
- ``scope``: ``out = sign(position) * gate(MLM logit)``, a per-position sign near -1 inside a negation's scope
  and near +1 elsewhere (:class:`ScopeHead`): the negated concept itself gets a negative weight.

The ``mean`` head:

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

from lsr_lucene.errors import InputError, SetupError

HEAD_FILE = "negative_head.pt"  # beside the masked-LM files; lsr_lucene.json says "negative_head": "mean"
HEAD_KINDS = ("mean", "scope")


class NegativeHead(torch.nn.Module):
    """Per-text, per-term offset from the mean of the transformed hidden states (zero at initialisation)."""

    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(vocab, dim))
        self.bias = torch.nn.Parameter(torch.zeros(vocab))

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(batch, vocabulary) offsets from ``hidden`` (batch, length, dim) over the positions ``mask`` keeps."""
        return mean_state(hidden, mask).to(self.weight.dtype) @ self.weight.T + self.bias


def mean_state(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(batch, dim) mean of ``hidden`` (batch, length, dim) over the positions ``mask`` keeps: the mean head's input."""
    keep = mask.to(hidden.dtype).unsqueeze(-1)
    return (hidden * keep).sum(1) / keep.sum(1).clamp(min=1)


NEGATION_CUES = ("not", "no", "never", "without", "nor", "cannot", "unable", "neither", "none", "nothing")
CLAUSE_ENDS = (".", ",", ";", ":", "?", "!")
SCOPE_WINDOW = 12  # tokens after a cue; chosen on NevIR train rows (runs/nevir/README.md)


class NegationScope:
    """1.0 at the positions that follow a negation cue (a word of NEGATION_CUES, or n't) within ``window``
    tokens of the same clause (special tokens end it), else 0.0.

    Why: the scope head's prior. The transformed hidden states of splade-tiny hardly encode negation scope
    (a linear probe on them finds 11% of it), so the head gets this rule as an input and learns how far to
    trust it, and corrections from the hidden states.
    """

    def __init__(self, tokenizer, window: int = SCOPE_WINDOW):
        vocab = tokenizer.get_vocab()
        self.cues = {vocab[w] for w in NEGATION_CUES if w in vocab}
        self.ends = {vocab[w] for w in CLAUSE_ENDS if w in vocab} | set(tokenizer.all_special_ids)
        self.apostrophe, self.t = vocab.get("'"), vocab.get("t")  # WordPiece splits "doesn't" as doesn ' t
        self.window = int(window)

    def __call__(self, input_ids: torch.Tensor) -> torch.Tensor:
        """(batch, length) 0/1 floats for a batch of token ids."""
        out = torch.zeros(input_ids.shape)
        for row, seq in enumerate(input_ids.tolist()):
            left = 0
            for i, token in enumerate(seq):
                if token in self.ends:
                    left = 0
                elif left:
                    out[row, i] = 1.0
                    left -= 1
                if token in self.cues or (token == self.t and i and seq[i - 1] == self.apostrophe):
                    left = self.window
        return out.to(input_ids.device)


class ScopeHead(torch.nn.Module):
    """Per-position sign ``1 - 2 sigmoid(h . a + c * in_scope + b)`` from the transformed hidden state h and
    the :class:`NegationScope` rule.

    Why: negation is local ("not X"), so a sign per position lets a text weigh the negated concept X
    negatively while keeping the rest of its SPLADE weights; a vector ``a`` (zero at the start) and two
    scalars generalise from a few hundred training pairs where a per-term head memorises them. At the start
    (b = INIT_BIAS, c = -2 INIT_BIAS) the sign is +0.96 outside the rule's scope and -0.96 inside it.
    """

    INIT_BIAS = -4.0

    def __init__(self, dim: int, window: int = SCOPE_WINDOW):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(dim))
        self.cue_weight = torch.nn.Parameter(torch.tensor(-2.0 * self.INIT_BIAS))
        self.bias = torch.nn.Parameter(torch.tensor(self.INIT_BIAS))
        self.register_buffer("window", torch.tensor(int(window)))

    def forward(self, hidden: torch.Tensor, in_scope: torch.Tensor) -> torch.Tensor:
        """(batch, length) signs in (-1, 1) from ``hidden`` (batch, length, dim) and the rule's 0/1 scope."""
        z = hidden.to(self.weight.dtype) @ self.weight + self.cue_weight * in_scope.to(self.weight.dtype)
        return 1.0 - 2.0 * torch.sigmoid(z + self.bias)


def gate(raw: torch.Tensor, epsilon: float) -> torch.Tensor:
    """MLM logits kept only above the dead zone (``x if x > eps else 0``): they never make a weight negative."""
    return torch.where(raw > epsilon, raw, torch.zeros_like(raw))


def pooled_out(raw_max: torch.Tensor, raw_min: torch.Tensor | None, offset: torch.Tensor,
               epsilon: float) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Max and min over positions of ``gate(logit) + offset`` from the max and min of the raw logits
    (the min stays None when the pooling does not need it)."""
    return gate(raw_max, epsilon) + offset, None if raw_min is None else gate(raw_min, epsilon) + offset


def scoped(logits: torch.Tensor, sign: torch.Tensor, epsilon: float) -> torch.Tensor:
    """Per-position values of a ``scope`` head: ``sign * gate(logit)`` (logits: ..., length, vocabulary)."""
    return gate(logits, epsilon) * sign.unsqueeze(-1).to(logits.dtype)


def check_kind(kind: str, where: str) -> None:
    """InputError naming ``where`` unless ``kind`` is one of HEAD_KINDS (the one place that decides)."""
    if kind not in HEAD_KINDS:
        raise InputError(f"{where}: negative head must be one of {', '.join(HEAD_KINDS)}, got {kind!r}")


def create(kind: str, vocab: int, dim: int) -> torch.nn.Module:
    """A new head of ``kind`` for a model with this vocabulary and hidden size."""
    check_kind(kind, "new head")
    return NegativeHead(vocab, dim) if kind == "mean" else ScopeHead(dim)


def save(head: torch.nn.Module, directory: str | Path) -> None:
    """Write the head's tensors beside a saved model."""
    torch.save({k: v.detach().cpu() for k, v in head.state_dict().items()}, Path(directory) / HEAD_FILE)


def load(directory: str | Path, kind: str = "mean") -> torch.nn.Module:
    """The head of ``kind`` saved in a model directory; a one-line error when the file is missing or malformed."""
    path = Path(directory) / HEAD_FILE
    check_kind(kind, str(path))
    if not path.is_file():
        raise SetupError(f"{path}: missing (the model's lsr_lucene.json names a negative head)")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        shape = state["weight"].shape
        head = NegativeHead(*shape) if kind == "mean" else ScopeHead(*shape)
        head.load_state_dict(state)
    except (KeyError, RuntimeError, ValueError, TypeError, pickle.UnpicklingError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise SetupError(f"{path}: not a negative head ({type(exc).__name__}: {first})") from None
    return head
