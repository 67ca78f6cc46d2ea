"""Fine-tune a (signed) SPLADE encoder on contrastive pairs (NevIR rows) and query/positive/negative triples.

Training data (JSONL, one row per line, both kinds may be mixed):

- NevIR rows ``{"q1", "doc1", "q2", "doc2"}``: q1 is relevant to doc1 only, q2 to doc2 only;
- triples ``{"query", "positive", "negative"}`` (``negative`` may be a list of texts).

Loss: InfoNCE of each query over all documents of the batch (its row's other document is the hard
negative, the other rows' documents are in-batch negatives; ``--no-in-batch-negatives`` keeps the row's own
documents only) plus FLOPS regularisation
(Formal et al.: sum over the vocabulary of the squared mean |weight|, for queries and documents, with a
quadratic warm-up). Signed models (SNReLU, Krasakis et al.) use |weight|, so negative weights cost
sparsity like positive ones.

The vocabulary projection is the costly part on CPUs: it is computed without autograd (optionally in
bfloat16), pooled over positions on raw logits (max, and min for signed pooling), and differentiated only
through the winning position of each term (exactly the gradient of max/min pooling); see
:class:`PooledLogits`.

The output directory holds the best model (dev pairwise accuracy, or the last epoch without a dev set) as a
Hugging Face masked-LM plus ``lsr_lucene.json`` (activation, pooling, epsilon), so that
``SparseEncoder(model=<output>)`` and ``lsr-lucene encode --model <output>`` reproduce its vectors;
``checkpoints/epoch-N`` hold every epoch, ``train_log.jsonl`` the loss and dev figures per epoch.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import torch
import torch.nn.functional as F
import warnings

from . import activations as act
from . import negative_head as nh
from .encode import MODEL_CONFIG, model_config
from .errors import InputError, SetupError

TRAINER_STATE = "trainer_state.pt"
LOG_FILE = "train_log.jsonl"
ARGS_FILE = "train_args.json"
NEVIR_FIELDS = ("q1", "doc1", "q2", "doc2")
TRIPLE_FIELDS = ("query", "positive", "negative")
MATMUL_DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
FIT_EVAL_ROWS = 50  # training rows whose pairwise accuracy is logged each epoch


# ---------------------------------------------------------------------------------------------- data
@dataclass
class Example:
    """One training row: documents, and (query, index of its relevant document) pairs."""

    id: str
    docs: list[str]
    queries: list[tuple[str, int]]


def _text(obj: dict, key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise InputError(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InputError(f"{where}: field {key!r} is empty")
    return value


def parse_example(obj: dict, where: str, default_id: str) -> Example:
    """A NevIR row or a triple as an :class:`Example`; InputError names ``where`` and the missing field."""
    row_id = str(obj.get("id", default_id))
    if any(k in obj for k in NEVIR_FIELDS):
        missing = [k for k in NEVIR_FIELDS if k not in obj]
        if missing:
            raise InputError(f"{where}: NevIR row lacks field(s) {', '.join(missing)} "
                             f"(expected {{\"q1\", \"doc1\", \"q2\", \"doc2\"}})")
        q1, d1, q2, d2 = (_text(obj, k, where) for k in NEVIR_FIELDS)
        return Example(row_id, [d1, d2], [(q1, 0), (q2, 1)])
    if any(k in obj for k in TRIPLE_FIELDS):
        missing = [k for k in TRIPLE_FIELDS if k not in obj]
        if missing:
            raise InputError(f"{where}: triple lacks field(s) {', '.join(missing)} "
                             f"(expected {{\"query\", \"positive\", \"negative\"}})")
        query, positive = _text(obj, "query", where), _text(obj, "positive", where)
        negatives = obj["negative"] if isinstance(obj["negative"], list) else [obj["negative"]]
        if not negatives:
            raise InputError(f"{where}: field 'negative' is an empty list")
        negs = [_text({"negative": n}, "negative", where) for n in negatives]
        return Example(row_id, [positive, *negs], [(query, 0)])
    raise InputError(f"{where}: row has neither NevIR fields (q1, doc1, q2, doc2) nor triple fields "
                     f"(query, positive, negative)")


def read_examples(path: str | Path) -> list[Example]:
    """Training rows from a JSONL file; a malformed row raises InputError naming file:line."""
    from .io_utils import open_jsonl

    examples = [parse_example(obj, f"{path}:{line_no}", f"line{line_no}") for line_no, obj in open_jsonl(path)]
    if not examples:
        raise InputError(f"{path}: no training rows (empty file?)")
    return examples


@dataclass
class NevirRow:
    """A dev row: q1 should rank doc1 above doc2, q2 doc2 above doc1."""

    id: str
    q1: str
    doc1: str
    q2: str
    doc2: str


def read_nevir_rows(path: str | Path) -> list[NevirRow]:
    """NevIR dev rows ``{"id"?, "q1", "doc1", "q2", "doc2"}``; InputError on a missing field, empty text or no rows."""
    from .io_utils import open_jsonl

    rows = []
    for line_no, obj in open_jsonl(path):
        where = f"{path}:{line_no}"
        missing = [k for k in NEVIR_FIELDS if k not in obj]
        if missing:
            raise InputError(f"{where}: NevIR row lacks field(s) {', '.join(missing)}")
        rows.append(NevirRow(str(obj.get("id", f"line{line_no}")), *(_text(obj, k, where) for k in NEVIR_FIELDS)))
    if not rows:
        raise InputError(f"{path}: no NevIR rows (empty file?); the dev file needs rows "
                         f"{{\"q1\", \"doc1\", \"q2\", \"doc2\"}}")
    return rows


def split_holdout(examples: Sequence[Example], count: int, seed: int) -> tuple[list[Example], list[Example]]:
    """Hold out about ``count`` rows for early stopping; rows sharing a document text stay on the same side."""
    if count <= 0:
        return list(examples), []
    parent = list(range(len(examples)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, ex in enumerate(examples):
        for doc in ex.docs:
            j = owner.setdefault(doc, i)
            parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(examples)):
        groups.setdefault(find(i), []).append(i)
    order = sorted(groups.values(), key=lambda g: g[0])
    random.Random(seed).shuffle(order)
    held: set[int] = set()
    for group in order:
        if len(held) >= count:
            break
        held.update(group)
    if len(held) >= len(examples):
        raise InputError(f"--holdout {count} leaves no training rows ({len(examples)} rows)")
    return ([ex for i, ex in enumerate(examples) if i not in held],
            [ex for i, ex in enumerate(examples) if i in held])


def examples_as_nevir(examples: Iterable[Example]) -> list[NevirRow]:
    """Held-out NevIR examples as dev rows (triples are skipped: pairwise accuracy needs both queries)."""
    return [NevirRow(ex.id, ex.queries[0][0], ex.docs[0], ex.queries[1][0], ex.docs[1])
            for ex in examples if len(ex.queries) == 2 and len(ex.docs) == 2]


# ---------------------------------------------------------------------------------------------- model
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
        from .models import load, resolve

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
        self.head = None
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


# ---------------------------------------------------------------------------------------------- loss
def flops(weights: torch.Tensor) -> torch.Tensor:
    """FLOPS regulariser: sum over terms of (mean |weight| over the batch)^2."""
    return (weights.abs().mean(dim=0) ** 2).sum()


def batch_loss(model: TrainableEncoder, batch: Sequence[Example], lambda_q: float, lambda_d: float,
               max_length: int, query_max_length: int,
               doc_to_query: float = 0.0, in_batch: bool = True) -> tuple[torch.Tensor, dict[str, float]]:
    """InfoNCE of every query over all the batch's documents + FLOPS; returns (loss, parts).

    ``in_batch=False`` ranks each query among its own row's documents only (for NevIR rows: the pairwise
    objective itself, q1 doc1 over doc2 and q2 doc2 over doc1, with the topical match the two share cancelled).

    ``doc_to_query`` > 0 adds (with that weight) the reverse InfoNCE of every relevant document over all the
    batch's queries: for a NevIR row it compares q1 and q2 on the same document, i.e. it trains the
    query difference against the document difference without the documents' shared part in the way.
    """
    docs: list[str] = []
    queries: list[str] = []
    labels: list[int] = []
    rows: list[tuple[int, int]] = []  # each query's own documents: [start, end)
    for ex in batch:
        offset = len(docs)
        docs.extend(ex.docs)
        for text, target in ex.queries:
            queries.append(text)
            labels.append(offset + target)
            rows.append((offset, len(docs)))
    q = model(queries, query_max_length)
    d = model(docs, max_length)
    scores = q @ d.T
    if not in_batch:
        column = torch.arange(len(docs), device=scores.device)
        own = torch.stack([(column >= start) & (column < end) for start, end in rows])
        scores = scores.masked_fill(~own, float("-inf"))
    target = torch.tensor(labels, device=scores.device)
    ce = F.cross_entropy(scores, target)
    reg_q, reg_d = flops(q), flops(d)
    loss = ce + lambda_q * reg_q + lambda_d * reg_d
    reverse = torch.zeros((), device=scores.device)
    if doc_to_query > 0:
        reverse = F.cross_entropy(scores.T[target], torch.arange(len(labels), device=scores.device))
        loss = loss + doc_to_query * reverse
    parts = {"loss": loss.item(), "ce": ce.item(), "ce_reverse": reverse.item(), "flops_q": reg_q.item(),
             "flops_d": reg_d.item(),
             "nnz_q": float((q != 0).sum(1).float().mean()), "nnz_d": float((d != 0).sum(1).float().mean())}
    return loss, parts


def weight_stats(weights: torch.Tensor) -> dict[str, float]:
    """Average non-zero and negative terms per text, and the share of non-zero weights that are negative."""
    nonzero = (weights != 0).sum().item()
    negative = (weights < 0).sum().item()
    rows = max(1, weights.shape[0])
    return {"nonzero": nonzero / rows, "negative": negative / rows,
            "negative_share": negative / nonzero if nonzero else 0.0}


@torch.no_grad()
def evaluate_nevir(model: TrainableEncoder, rows: Sequence[NevirRow], max_length: int,
                   query_max_length: int) -> dict:
    """Pairwise accuracy on NevIR rows by exact dot product, plus sparsity/sign statistics."""
    from .eval import nevir_pairwise_accuracy

    docs = model.encode([t for r in rows for t in (r.doc1, r.doc2)], max_length)
    queries = model.encode([t for r in rows for t in (r.q1, r.q2)], query_max_length)
    d1, d2 = docs[0::2], docs[1::2]
    q1, q2 = queries[0::2], queries[1::2]
    scores = zip((q1 * d1).sum(1).tolist(), (q1 * d2).sum(1).tolist(),
                 (q2 * d1).sum(1).tolist(), (q2 * d2).sum(1).tolist())
    result = nevir_pairwise_accuracy(scores)
    return {**result, "docs": weight_stats(docs), "queries": weight_stats(queries)}


# ---------------------------------------------------------------------------------------------- training
@dataclass
class TrainConfig:
    """Everything that determines a training run (saved as train_args.json)."""

    model: str = "splade-tiny"
    train: list[str] = field(default_factory=list)
    dev: str | None = None
    holdout: int = 0
    output: str = ""
    activation: str = "snrelu"
    pooling: str | None = None
    epsilon: float | None = None
    init_shift: float | None = None
    dead_zone_grad: float = 0.0
    epsilon_start: float | None = None
    anneal: float = 0.5
    freeze_vocabulary: bool = False
    negative_head: str | None = None
    doc_to_query: float = 0.0
    in_batch: bool = True
    epochs: int = 4
    batch_size: int = 8
    lr: float = 1e-4
    weight_decay: float = 0.01
    warmup: float = 0.1
    lambda_q: float = 1e-3
    lambda_d: float = 1e-3
    flops_warmup: float = 0.3
    max_length: int = 256
    query_max_length: int = 64
    seed: int = 13
    patience: int = 2
    max_steps: int = 0
    matmul: str = "bf16"
    device: str | None = None
    threads: int | None = None
    grad_clip: float = 1.0


def _set_seed(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def _epoch_batches(examples: Sequence[Example], batch_size: int, seed: int, epoch: int) -> list[list[Example]]:
    order = list(range(len(examples)))
    random.Random(seed * 1000 + epoch).shuffle(order)
    return [[examples[i] for i in order[s:s + batch_size]] for s in range(0, len(order), batch_size)]


def _schedule(step: int, total: int, warmup: int) -> float:
    """Linear warm-up then linear decay to 10% of the peak learning rate."""
    if warmup and step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return max(0.1, 1.0 - 0.9 * progress)


def _widening(step: int, total: int, start: float | None, end: float, fraction: float) -> float:
    """Dead-zone annealing: extra half-width (start - end) shrinking linearly to 0 over ``fraction`` of the steps."""
    if start is None or start <= end:
        return 0.0
    ramp = int(total * fraction)
    if ramp <= 0 or step >= ramp:
        return 0.0
    return (start - end) * (1.0 - step / ramp)


def _flops_factor(step: int, total: int, fraction: float) -> float:
    """Quadratic FLOPS warm-up (SPLADE): lambda grows as (step/T)^2 over the first ``fraction`` of steps."""
    ramp = int(total * fraction)
    if ramp <= 0 or step >= ramp:
        return 1.0
    return ((step + 1) / ramp) ** 2


def _latest_checkpoint(work: Path) -> Path | None:
    found = sorted((p for p in (work / "checkpoints").glob("epoch-*") if (p / TRAINER_STATE).is_file()),
                   key=lambda p: int(p.name.split("-")[1]))
    return found[-1] if found else None


class Trainer:
    """Runs the epochs: batches, optimiser, dev evaluation, checkpoints, early stopping."""

    def __init__(self, config: TrainConfig, progress: bool = True):
        self.config = config
        self.progress = progress
        self.final = Path(config.output)
        self.work = self.final.with_name(self.final.name + ".partial")

    def _load_data(self) -> tuple[list[Example], list[NevirRow]]:
        cfg = self.config
        if not cfg.train:
            raise InputError("no training file given (--train FILE)")
        examples = [ex for path in cfg.train for ex in read_examples(path)]
        dev: list[NevirRow] = []
        if cfg.holdout:
            examples, held = split_holdout(examples, cfg.holdout, cfg.seed)
            dev = examples_as_nevir(held)
            if not dev:
                raise InputError("--holdout needs NevIR rows (q1, doc1, q2, doc2) in the training data")
        if cfg.dev:
            dev = read_nevir_rows(cfg.dev)
        return examples, dev

    def run(self, resume: bool = False, overwrite: bool = False) -> dict:
        """Train; returns a summary (best epoch, dev figures, time). The model ends up in ``config.output``."""
        cfg = self.config
        if self.final.exists() and not overwrite:
            raise InputError(f"{self.final} already exists; pass --overwrite to replace it")
        for name, value in (("epochs", cfg.epochs), ("batch-size", cfg.batch_size)):
            if value < 1:
                raise InputError(f"--{name} must be at least 1, got {value}")
        if cfg.max_length < 2 or cfg.query_max_length < 2:
            raise InputError("--max-length and --query-max-length must be at least 2")
        if cfg.epsilon_start is not None and cfg.activation != "snrelu":
            raise InputError("--epsilon-start (dead-zone annealing) applies to --activation snrelu only")
        if cfg.epsilon_start is not None and cfg.negative_head:
            raise InputError("--epsilon-start (dead-zone annealing) and --negative-head do not combine")
        examples, dev = self._load_data()
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        checkpoint = _latest_checkpoint(self.work) if resume else None
        if resume and checkpoint is None:
            print(f"no checkpoint in {self.work}; starting from scratch", file=sys.stderr)
        if checkpoint is None:
            if self.work.exists():
                if not (overwrite or resume):
                    raise InputError(f"{self.work} holds an interrupted run; pass --resume to continue it "
                                     f"or --overwrite to start again")
                shutil.rmtree(self.work)
            self.work.mkdir(parents=True)
        _set_seed(cfg.seed)
        model = TrainableEncoder(str(checkpoint) if checkpoint else cfg.model, activation=cfg.activation,
                                 pooling=cfg.pooling, epsilon=cfg.epsilon, device=cfg.device, matmul=cfg.matmul,
                                 dead_zone_grad=cfg.dead_zone_grad,
                                 init_shift=0.0 if checkpoint else cfg.init_shift,
                                 negative_head=cfg.negative_head)
        model.source = cfg.model
        cfg.pooling, cfg.epsilon = model.pooling, model.epsilon
        if checkpoint is None:
            cfg.init_shift = model.init_shift
        if cfg.epsilon_start is not None and cfg.epsilon_start < model.epsilon:
            raise InputError(f"--epsilon-start {cfg.epsilon_start} is below --epsilon {model.epsilon}")
        (self.work / ARGS_FILE).write_text(json.dumps(asdict(cfg), indent=2) + "\n")
        if cfg.freeze_vocabulary:  # vocabulary embeddings (tied to the projection) and biases stay as they are
            model.decoder.weight.requires_grad_(False)
            model.decoder.bias.requires_grad_(False)
            model.net.get_input_embeddings().weight.requires_grad_(False)
        params = [p for p in model.parameters() if p.requires_grad]
        decay = [p for p in params if p.dim() >= 2]
        no_decay = [p for p in params if p.dim() < 2]
        optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                       {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr)
        steps_per_epoch = math.ceil(len(examples) / cfg.batch_size)
        total = steps_per_epoch * cfg.epochs
        if cfg.max_steps:
            total = min(total, cfg.max_steps)
        warmup = int(total * cfg.warmup)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: _schedule(s, total, warmup))
        state = {"epoch": 0, "step": 0, "best": None, "best_epoch": None, "bad_epochs": 0, "elapsed": 0.0}
        if checkpoint is not None:
            saved = torch.load(checkpoint / TRAINER_STATE, weights_only=False)
            optimizer.load_state_dict(saved["optimizer"])
            scheduler.load_state_dict(saved["scheduler"])
            state = saved["state"]
            torch.set_rng_state(saved["torch_rng"])
            print(f"resuming after epoch {state['epoch']} from {checkpoint}", file=sys.stderr)
        log_path = self.work / LOG_FILE
        started = time.perf_counter() - state["elapsed"]
        if checkpoint is None and dev:
            record = {"epoch": 0, "step": 0, "dev": evaluate_nevir(model, dev, cfg.max_length,
                                                                      cfg.query_max_length)}
            self._log(log_path, record)
            state["baseline_dev"] = record["dev"]["pairwise_accuracy"]
        fit_rows = examples_as_nevir(examples[:FIT_EVAL_ROWS])
        model.train()
        stopped_early = False
        while state["epoch"] < cfg.epochs and state["step"] < total:
            epoch = state["epoch"] + 1
            sums: dict[str, float] = {}
            batches = _epoch_batches(examples, cfg.batch_size, cfg.seed, epoch)
            bar = None
            if self.progress:
                from tqdm import tqdm

                bar = tqdm(total=min(len(batches), total - state["step"]), desc=f"epoch {epoch}/{cfg.epochs}",
                           unit="batch", file=sys.stderr, leave=False)
            count = 0
            for batch in batches:
                if state["step"] >= total:
                    break
                factor = _flops_factor(state["step"], total, cfg.flops_warmup)
                model.widen = _widening(state["step"], total, cfg.epsilon_start, model.epsilon, cfg.anneal)
                loss, parts = batch_loss(model, batch, cfg.lambda_q * factor, cfg.lambda_d * factor,
                                         cfg.max_length, cfg.query_max_length, cfg.doc_to_query, cfg.in_batch)
                if not torch.isfinite(loss):
                    raise SetupError(f"loss became {float(loss)} at step {state['step']}; lower --lr")
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if cfg.grad_clip:
                    torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
                optimizer.step()
                scheduler.step()
                state["step"] += 1
                count += 1
                for k, v in parts.items():
                    sums[k] = sums.get(k, 0.0) + v
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(loss=f"{sums['loss'] / count:.3f}", ce=f"{sums['ce'] / count:.3f}",
                                    nnz_d=f"{parts['nnz_d']:.0f}")
            if bar is not None:
                bar.close()
            model.widen = 0.0  # evaluate and save the model as it will be used
            state["epoch"] = epoch
            record = {"epoch": epoch, "step": state["step"], "train": {k: v / max(1, count) for k, v in sums.items()}}
            improved = True
            if fit_rows:  # how well the training pairs themselves are separated (under/over-fitting)
                record["train"]["pairwise_accuracy"] = evaluate_nevir(
                    model, fit_rows, cfg.max_length, cfg.query_max_length)["pairwise_accuracy"]
            if dev:
                record["dev"] = evaluate_nevir(model, dev, cfg.max_length, cfg.query_max_length)
                score = record["dev"]["pairwise_accuracy"]
                improved = state["best"] is None or score > state["best"]
            state["elapsed"] = time.perf_counter() - started
            record["elapsed_s"] = round(state["elapsed"], 1)
            annealing = _widening(state["step"], total, cfg.epsilon_start, model.epsilon, cfg.anneal) > 0
            if annealing:  # the dead zone is still being narrowed: not a candidate, patience not counted
                record["annealing"] = True
            elif improved:
                state["best"] = record["dev"]["pairwise_accuracy"] if dev else None
                state["best_epoch"] = epoch
                state["bad_epochs"] = 0
            else:
                state["bad_epochs"] += 1
            state["last_epoch"] = epoch
            self._log(log_path, record)
            self._checkpoint(model, optimizer, scheduler, state, epoch)
            if self.progress:
                dev_text = f", dev pairwise accuracy {record['dev']['pairwise_accuracy']:.3f}" if dev else ""
                print(f"epoch {epoch}: loss {record['train'].get('loss', float('nan')):.4f}{dev_text} "
                      f"({record['elapsed_s']:.0f}s)", file=sys.stderr)
            if dev and cfg.patience and state["bad_epochs"] >= cfg.patience:
                stopped_early = state["epoch"] < cfg.epochs and state["step"] < total
                break
        return self._finish(state, stopped_early, bool(dev))

    @staticmethod
    def _log(path: Path, record: dict) -> None:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def _checkpoint(self, model: TrainableEncoder, optimizer, scheduler, state: dict, epoch: int) -> None:
        target = self.work / "checkpoints" / f"epoch-{epoch}"
        tmp = target.with_name(target.name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        model.save(tmp, {"epoch": epoch})
        torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "state": state,
                    "torch_rng": torch.get_rng_state()}, tmp / TRAINER_STATE)
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
        for older in (self.work / "checkpoints").glob("epoch-*"):  # optimiser state: latest epoch only
            if older != target and (older / TRAINER_STATE).is_file():
                (older / TRAINER_STATE).unlink()

    def _finish(self, state: dict, stopped_early: bool, has_dev: bool) -> dict:
        if state["best_epoch"] is None:  # every epoch was still annealing: keep the last one
            state["best_epoch"], state["best"] = state["last_epoch"], None
        best = self.work / "checkpoints" / f"epoch-{state['best_epoch']}"
        for item in best.iterdir():
            if item.is_file() and item.name != TRAINER_STATE:
                shutil.copy2(item, self.work / item.name)
        summary = {"best_epoch": state["best_epoch"], "epochs_run": state["epoch"], "steps": state["step"],
                   "stopped_early": stopped_early, "elapsed_s": round(state["elapsed"], 1)}
        if has_dev:
            summary["dev_pairwise_accuracy"] = state["best"]
            summary["dev_pairwise_accuracy_before"] = state.get("baseline_dev")
        (self.work / "train_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        if self.final.exists():
            shutil.rmtree(self.final)
        os.replace(self.work, self.final)
        return summary


def train(config: TrainConfig, resume: bool = False, overwrite: bool = False, progress: bool = True) -> dict:
    """Train a sparse encoder as configured; returns the summary written to ``<output>/train_summary.json``."""
    return Trainer(config, progress=progress).run(resume=resume, overwrite=overwrite)


# ---------------------------------------------------------------------------------------------- CLI
def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``python -m lsr_lucene.train`` / ``lsr-lucene train``."""
    d = TrainConfig()
    p = argparse.ArgumentParser(prog="lsr-lucene train", description=__doc__.splitlines()[0])
    p.add_argument("--train", action="append", required=True,
                   help="training JSONL: NevIR rows {q1,doc1,q2,doc2} and/or triples {query,positive,negative}; "
                        "repeatable")
    p.add_argument("--output", required=True, help="model directory to write (loadable by lsr-lucene encode --model)")
    p.add_argument("--model", default=d.model, help="starting masked-LM sparse model: registry name, HF id or directory")
    p.add_argument("--dev", default=None, help="NevIR-format dev JSONL for early stopping on pairwise accuracy")
    p.add_argument("--holdout", type=int, default=0,
                   help="hold out about N training rows (grouped by shared documents) as the dev set")
    p.add_argument("--activation", choices=act.ACTIVATIONS, default=d.activation,
                   help="snrelu: signed weights (default); splade: positive-only")
    p.add_argument("--pooling", choices=act.POOLINGS, default=None,
                   help="default: absmax for snrelu, max for splade")
    p.add_argument("--epsilon", type=float, default=None,
                   help=f"SNReLU dead-zone half width (default: the model's, else {act.DEFAULT_EPSILON})")
    p.add_argument("--init-shift", type=float, default=None,
                   help="add this to every vocabulary bias before training (default: epsilon when turning a SPLADE "
                        "model into SNReLU, so its positive weights start equal to SPLADE's; else 0)")
    p.add_argument("--epsilon-start", type=float, default=None,
                   help="dead-zone annealing: start with this half-width (negatives only below -2*START in SPLADE "
                        "logit units) and narrow it linearly to --epsilon over the first --anneal share of steps")
    p.add_argument("--anneal", type=float, default=d.anneal, help="share of steps for dead-zone annealing")
    p.add_argument("--doc-to-query", type=float, default=d.doc_to_query,
                   help="weight of the reverse InfoNCE (each relevant document over the batch's queries)")
    p.add_argument("--no-in-batch-negatives", dest="in_batch", action="store_false",
                   help="rank each query among its own row's documents only (the contrastive pair), not the "
                        "other rows' documents")
    p.add_argument("--freeze-vocabulary", action="store_true",
                   help="keep the vocabulary embeddings (tied to the output projection) and output biases fixed; "
                        "only the transformer and the projection head learn")
    p.add_argument("--negative-head", choices=nh.HEAD_KINDS, default=None,
                   help="snrelu only: negative weights from a head instead of the MLM logits' negative tail: "
                        "'mean' adds a per-text, per-term offset (zero at the start), 'scope' multiplies each "
                        "position's logits by a learned sign (-1 inside a negation); see lsr_lucene/negative_head.py")
    p.add_argument("--dead-zone-grad", type=float, default=d.dead_zone_grad,
                   help="surrogate gradient slope inside the dead zone during training (0: exact gradient)")
    p.add_argument("--epochs", type=int, default=d.epochs)
    p.add_argument("--batch-size", type=int, default=d.batch_size, help="rows per batch")
    p.add_argument("--lr", type=float, default=d.lr)
    p.add_argument("--weight-decay", type=float, default=d.weight_decay)
    p.add_argument("--warmup", type=float, default=d.warmup, help="share of steps with linear lr warm-up")
    p.add_argument("--lambda-q", type=float, default=d.lambda_q, help="FLOPS weight for queries")
    p.add_argument("--lambda-d", type=float, default=d.lambda_d, help="FLOPS weight for documents")
    p.add_argument("--flops-warmup", type=float, default=d.flops_warmup,
                   help="share of steps over which the FLOPS weights grow quadratically")
    p.add_argument("--max-length", type=int, default=d.max_length, help="document truncation in tokens")
    p.add_argument("--query-max-length", type=int, default=d.query_max_length)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--patience", type=int, default=d.patience,
                   help="stop after this many epochs without dev improvement (0: never)")
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: no limit)")
    p.add_argument("--matmul", choices=tuple(MATMUL_DTYPES), default=d.matmul,
                   help="precision of the vocabulary projection during training (bf16: faster on recent CPUs)")
    p.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda when present)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run from its last checkpoint")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output directory")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    """Train from the command line; prints the summary as JSON."""
    args = build_parser().parse_args(argv)
    names = set(TrainConfig.__dataclass_fields__)
    config = TrainConfig(**{k: v for k, v in vars(args).items() if k in names})
    try:
        summary = train(config, resume=args.resume, overwrite=args.overwrite, progress=not args.quiet)
    except KeyboardInterrupt:
        print(f"interrupted; checkpoints kept in {Trainer(config).work} (rerun with --resume)", file=sys.stderr)
        return 130
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    from .cli import run_main

    sys.exit(run_main(main))
