"""The trainable sparse encoder: a masked-LM whose pooled vocabulary weights are differentiable.

The vocabulary projection is the costly part on CPUs: it is computed without autograd (optionally in
bfloat16), pooled over positions on raw logits (max, and min for signed pooling), and differentiated only
through the winning position of each term (exactly the gradient of max/min pooling); see
:class:`PooledLogits`.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Sequence

import torch

from lsr_lucene.encode import activations as act
from lsr_lucene.encode import negative_head as nh
from lsr_lucene.encode.encoder import MODEL_CONFIG, model_config
from lsr_lucene.errors import InputError, SetupError

MATMUL_DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


class PooledLogits(torch.autograd.Function):
    """Per-term max (and min) over each text's positions of ``hidden @ weight.T + bias``, differentiable.

    Forward projects one text at a time (its own length, no padding) without autograd, in ``dtype``, and
    keeps only the winning position of each term. Backward is exactly the gradient of max/min pooling:
    each term's gradient goes to its winning position only, i.e. a sparse (positions × vocabulary) matrix
    S with one entry per term and text, so grad_hidden = S @ W and grad_W = S.T @ hidden (sparse products).
    """

    @staticmethod
    def forward(ctx, hidden, weight, bias, sign, lengths: tuple, need_min: bool, dtype: torch.dtype,  # type: ignore[override]
                epsilon: float):
        n, length, dim = hidden.shape
        vocab = weight.shape[0]
        out = torch.float64 if hidden.dtype == torch.float64 else torch.float32
        w = weight.detach().to(dtype)
        raw_max = torch.empty((n, vocab), dtype=out, device=hidden.device)
        arg_max = torch.empty((n, vocab), dtype=torch.long, device=hidden.device)
        raw_min = torch.empty((n, vocab) if need_min else (0,), dtype=out, device=hidden.device)
        arg_min = torch.empty((n, vocab) if need_min else (0,), dtype=torch.long, device=hidden.device)
        # scope head: the gated logit at each winning position (the sign's gradient needs it)
        gated_max = torch.zeros((n, vocab) if sign is not None else (0,), dtype=out, device=hidden.device)
        gated_min = torch.zeros((n, vocab) if sign is not None and need_min else (0,), dtype=out,
                                device=hidden.device)
        for i in range(n):
            logits = w @ hidden[i, :lengths[i]].detach().to(dtype).T  # vocabulary × positions
            if sign is not None:  # sign * gate(logit + bias) per position (the bias cannot wait until after pooling)
                logits = logits.to(out) + bias.detach().to(out).unsqueeze(1)
                gated = nh.gate(logits, epsilon)
                logits = gated * sign[i, :lengths[i]].detach().to(out)
            values, index = logits.max(dim=1)
            raw_max[i], arg_max[i] = values, index
            if sign is not None:
                gated_max[i] = gated.gather(1, index.unsqueeze(1)).squeeze(1)
            if need_min:
                values, index = logits.min(dim=1)
                raw_min[i], arg_min[i] = values, index
                if sign is not None:
                    gated_min[i] = gated.gather(1, index.unsqueeze(1)).squeeze(1)
        if sign is None:
            raw_max += bias.detach()
            if need_min:
                raw_min += bias.detach()
        ctx.save_for_backward(hidden, weight, sign, arg_max, arg_min, gated_max, gated_min)
        ctx.need_min = need_min
        return raw_max, raw_min

    @staticmethod
    def backward(ctx, grad_max, grad_min):  # type: ignore[override]
        hidden, weight, sign, arg_max, arg_min, gated_max, gated_min = ctx.saved_tensors
        n, length, dim = hidden.shape
        vocab = weight.shape[0]
        want_h, want_w, want_b, want_s = ctx.needs_input_grad[:4]
        grads = [(grad_max, arg_max, gated_max)]
        if ctx.need_min and grad_min is not None and grad_min.numel():
            grads.append((grad_min, arg_min, gated_min))
        grads = [g for g in grads if g[0] is not None]
        grad_hidden = grad_weight = grad_bias = grad_sign = None
        rows, cols, vals = [], [], []
        offsets = (torch.arange(n, device=hidden.device) * length).unsqueeze(1)
        if sign is not None and want_s:
            grad_sign = torch.zeros((n * length,), dtype=sign.dtype, device=sign.device)
        for g, arg, gated in grads:
            text, term = torch.nonzero(g, as_tuple=True)
            position = (offsets + arg)[text, term]
            value = g[text, term]
            if sign is not None:  # d(sign * gate(x)) = gate(x) dsign + sign [x > eps] dx
                won = gated[text, term]
                if grad_sign is not None:
                    grad_sign.index_add_(0, position, (value * won).to(sign.dtype))
                value = value * sign.detach().reshape(-1)[position].to(value.dtype) * (won != 0).to(value.dtype)
            rows.append(position)
            cols.append(term)
            vals.append(value)
        index = torch.stack([torch.cat(rows), torch.cat(cols)]) if rows else torch.zeros((2, 0), dtype=torch.long)
        values = torch.cat(vals) if vals else torch.zeros(0)
        if want_h or want_w:
            with warnings.catch_warnings():  # "sparse invariant checks are disabled": indices are in range
                warnings.simplefilter("ignore")
                scattered = torch.sparse_coo_tensor(index, values.to(hidden.dtype), (n * length, vocab))
            if want_h:
                grad_hidden = torch.sparse.mm(scattered, weight.detach().to(hidden.dtype)).view(n, length, dim)
            if want_w:
                flat = hidden.detach().reshape(n * length, dim)
                grad_weight = torch.sparse.mm(scattered.t(), flat).to(weight.dtype)
        if want_b:
            grad_bias = torch.zeros(vocab, dtype=weight.dtype, device=weight.device).index_add_(
                0, index[1], values.to(weight.dtype))
        if grad_sign is not None:
            grad_sign = grad_sign.view(n, length)
        return grad_hidden, grad_weight, grad_bias, grad_sign, None, None, None, None


def pooled_logits(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, need_min: bool,
                  dtype: torch.dtype = torch.float32, lengths: Sequence[int] | None = None,
                  sign: torch.Tensor | None = None, epsilon: float = 0.0) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(raw max, raw min or None) over positions of the vocabulary logits; see :class:`PooledLogits`.

    ``lengths`` gives each text's number of real positions (default: all); padding beyond it is ignored.
    With ``sign`` (texts × positions, a scope head's output) the pooled values are those of
    ``sign * gate(logit)`` (:func:`negative_head.scoped`, gate at ``epsilon``).
    """
    if lengths is None:
        lengths = [hidden.shape[1]] * hidden.shape[0]
    if min(lengths, default=1) < 1:
        raise InputError("every text needs at least one position")
    raw_max, raw_min = PooledLogits.apply(hidden, weight, bias, sign, tuple(int(x) for x in lengths), need_min,
                                          dtype, float(epsilon))
    return raw_max, (raw_min if need_min else None)


def _dead_zone(x: torch.Tensor, activation: str, epsilon: float) -> torch.Tensor:
    """x clamped to the activation's flat-zero region (where its true gradient is 0)."""
    if activation == "snrelu":
        return x.clamp(-epsilon, epsilon)
    return x.clamp(max=0.0)


def _find_decoder_parent(net, decoder) -> tuple[object, str]:
    for module in net.modules():
        for name, child in module.named_children():
            if child is decoder:
                return module, name
    raise SetupError(f"could not locate the vocabulary projection of {type(net).__name__}")


class TrainableEncoder(torch.nn.Module):
    """A masked-LM sparse encoder (SPLADE or SNReLU) whose pooled term weights are differentiable."""

    def __init__(self, model: str = "splade-tiny", activation: str | None = None, pooling: str | None = None,
                 epsilon: float | None = None, device: str | None = None, matmul: str = "fp32",
                 dead_zone_grad: float = 0.0, init_shift: float | None = None, negative_head: str | None = None):
        super().__init__()
        from lsr_lucene.encode.models import load, resolve

        saved = model_config(model)
        self.activation = activation or saved.get("activation", "splade")
        default_pooling = saved.get("pooling") if saved.get("activation", "splade") == self.activation else None
        self.pooling = pooling or default_pooling or ("max" if self.activation == "splade" else "absmax")
        self.epsilon = float(epsilon if epsilon is not None else saved.get("epsilon", act.DEFAULT_EPSILON))
        if self.activation not in act.ACTIVATIONS:
            raise InputError(f"activation must be one of {', '.join(act.ACTIVATIONS)}, got {self.activation!r}")
        if self.pooling not in act.POOLINGS:
            raise InputError(f"pooling must be one of {', '.join(act.POOLINGS)}, got {self.pooling!r}")
        if self.epsilon < 0:
            raise InputError(f"epsilon must be >= 0, got {self.epsilon}")
        if matmul not in MATMUL_DTYPES:
            raise InputError(f"matmul precision must be one of {', '.join(MATMUL_DTYPES)}, got {matmul!r}")
        self.matmul = matmul
        self.dead_zone_grad = float(dead_zone_grad)
        saved_head = saved.get("negative_head")
        self.negative_head = negative_head or saved_head
        if self.negative_head is not None:
            nh.check_kind(self.negative_head, f"model {model!r}")
            if self.activation != "snrelu":
                raise InputError("a negative head needs --activation snrelu")
            if saved_head and negative_head and negative_head != saved_head:
                raise InputError(f"model {model!r} has a {saved_head!r} negative head, not {negative_head!r}")
        self.source = model
        self.tokenizer, self.net = load(model)
        decoder = self.net.get_output_embeddings()
        if decoder is None or not hasattr(decoder, "weight"):
            raise SetupError(f"model {model!r} has no vocabulary projection (not a masked-LM model)")
        if getattr(decoder, "bias", None) is None:
            decoder.bias = torch.nn.Parameter(torch.zeros(decoder.weight.shape[0]))
        self.decoder = decoder
        self._parent, self._child = _find_decoder_parent(self.net, decoder)
        setattr(self._parent, self._child, torch.nn.Identity())
        self.head: Any = None  # a torch.nn.Module (negative_head.py)
        if self.negative_head is not None:
            self.head = (nh.load(resolve(model), self.negative_head) if saved_head else
                         nh.create(self.negative_head, *decoder.weight.shape))
            if self.negative_head == "scope":
                self.scope = nh.NegationScope(self.tokenizer, int(self.head.window))
        self.widen = 0.0  # training only: dead zone widened by this much on both sides, logits shifted to match
        if init_shift is None:  # SPLADE -> SNReLU: shift logits by eps so the positive part starts equal to SPLADE's
            converting = self.activation == "snrelu" and saved.get("activation", "splade") != "snrelu"
            init_shift = self.epsilon if converting else 0.0
        self.init_shift = float(init_shift)
        if self.init_shift:
            with torch.no_grad():
                decoder.bias += self.init_shift
        self.device_ = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.to(self.device_)
        vocab = self.tokenizer.get_vocab()
        self.vocab = [""] * max(len(vocab), decoder.weight.shape[0])
        for token, index in vocab.items():
            if index < len(self.vocab):
                self.vocab[index] = token

    @property
    def signed(self) -> bool:
        """Whether weights can be negative (SNReLU)."""
        return self.activation == "snrelu"

    def settings(self) -> dict:
        """The encoding settings saved with the model (``lsr_lucene.json``)."""
        settings = {"activation": self.activation, "pooling": self.pooling, "epsilon": self.epsilon}
        if self.negative_head is not None:
            settings["negative_head"] = self.negative_head
        return settings

    def forward(self, texts: Sequence[str], max_length: int) -> torch.Tensor:
        """Pooled term weights (texts × vocabulary), as SparseEncoder computes them, with gradients."""
        enc = self.tokenizer(list(texts), max_length=max_length, truncation=True, padding=True,
                             return_tensors="pt", return_token_type_ids=False)
        input_ids = enc["input_ids"].to(self.device_)
        mask = enc["attention_mask"].to(self.device_)
        out = self.net(input_ids=input_ids, attention_mask=mask)
        hidden = out.logits if hasattr(out, "logits") else out[0]
        need_min = act.needs_min(self.activation, self.pooling)
        bias, epsilon = self.decoder.bias, self.epsilon
        if self.widen and self.activation == "snrelu":
            # annealing: dead zone [-eps-2w, eps] in the saved model's logit units, i.e. the positive side unchanged
            bias, epsilon = bias + self.widen, epsilon + self.widen
        sign = self.head(hidden, self.scope(input_ids)) if self.negative_head == "scope" else None
        raw_max, raw_min = pooled_logits(hidden, self.decoder.weight, bias, need_min,
                                         MATMUL_DTYPES[self.matmul], mask.sum(1).tolist(), sign, epsilon)
        if self.negative_head == "mean":
            raw_max, raw_min = nh.pooled_out(raw_max, raw_min, self.head(hidden, mask), epsilon)
        weights = act.pool_raw(raw_max, raw_min, self.activation, self.pooling, epsilon)
        if self.training and self.dead_zone_grad > 0:
            # surrogate gradient inside the dead zone (forward value unchanged): lets a term cross from
            # positive to negative (or re-enter) instead of getting stuck at zero
            for raw in (raw_max, raw_min):
                if raw is not None:
                    zone = _dead_zone(raw, self.activation, epsilon)
                    weights = weights + self.dead_zone_grad * (zone - zone.detach())
        return weights

    @torch.no_grad()
    def encode(self, texts: Sequence[str], max_length: int, batch_size: int = 32) -> torch.Tensor:
        """Weights of many texts without gradients (evaluation mode restored afterwards)."""
        was_training = self.training
        self.eval()
        try:
            parts = [self(texts[i:i + batch_size], max_length) for i in range(0, len(texts), batch_size)]
        finally:
            self.train(was_training)
        return torch.cat(parts) if parts else torch.zeros((0, len(self.vocab)))

    def to_dicts(self, weights: torch.Tensor) -> list[dict[str, float]]:
        """Rows of a weight matrix as {term: weight} (non-zero entries)."""
        out = []
        for row in weights.detach().float().cpu():
            index = torch.nonzero(row).squeeze(1)
            out.append({self.vocab[i]: v for i, v in zip(index.tolist(), row[index].tolist())})
        return out

    def save(self, path: str | Path, extra: dict | None = None) -> None:
        """Write the masked-LM, tokenizer and ``lsr_lucene.json`` so SparseEncoder(model=path) reproduces it."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        setattr(self._parent, self._child, self.decoder)
        try:
            self.net.save_pretrained(path)
        finally:
            setattr(self._parent, self._child, torch.nn.Identity())
        self.tokenizer.save_pretrained(path)
        if self.head is not None:
            nh.save(self.head, path)
        config = {**self.settings(), "base_model": str(self.source), **(extra or {})}
        (path / MODEL_CONFIG).write_text(json.dumps(config, indent=2) + "\n")
