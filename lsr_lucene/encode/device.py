"""Document encoding on a GPU: pooling, rounding and nonzero selection on the device, only nonzero weights copied back.

``SparseEncoder.encode_documents_quantised`` runs each padded batch through the transformer, the screened vocabulary
projection and max pooling (``SparseEncoder._weights``), then rounds ``|w| × scale`` in float64 (half to even, as
Python's ``round`` does in ``io.vectors.quantise``) and selects the nonzero impacts on the device: the host receives a
few hundred (term, impact) pairs per document instead of a batch × vocabulary matrix. Batches are padded with numpy and
copied in plain blocking copies (pinning each batch first was slower); tokenisation uses the fast tokenizer's Rust batch
call (no Python objects per token beyond the id lists), which releases the GIL, so ``io.vectors.write_vectors`` can keep
several windows in flight (``SparseEncoder.pipeline_depth``): one window's tokens and JSON lines are made while
another's batches run.
"""
from __future__ import annotations

import copy
from typing import Sequence

import torch

from lsr_lucene.encode.host_workers import encode_fast, impact_dicts


class FastTokenizer:
    """The fast tokenizer's Rust core with truncation at ``max_length`` and no padding: ``ids(texts)`` equals
    ``tokenizer(texts, max_length=..., truncation=True)["input_ids"]``."""

    def __init__(self, tokenizer, max_length: int):
        self.core = copy.deepcopy(tokenizer.backend_tokenizer)
        self.core.no_padding()
        self.core.enable_truncation(int(max_length))

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        return [encoding.ids for encoding in encode_fast(self.core, list(texts))]


def quantised_arrays(encoder, input_ids: torch.Tensor, mask: torch.Tensor, scale: float) -> tuple:
    """A padded batch's nonzero impacts round(|w| × scale), selected on the device and copied back in one transfer:
    numpy (counts per row, term ids, impacts, negative flags or None when no weight is negative, finite per row), the
    pairs in row-major order (terms ascending within a row)."""
    hidden = encoder._hidden(input_ids, mask)
    weights = encoder._weights(hidden, mask, input_ids)  # (batch, vocabulary) on the device
    finite = torch.isfinite(weights).all(dim=1)
    weights = torch.nan_to_num(weights, nan=0.0, posinf=0.0, neginf=0.0)
    impacts = torch.round(weights.double().abs() * scale)  # float32 -> float64, as Python's float(w) * scale
    keep = impacts != 0
    where = keep.nonzero()  # row-major: rows in order, terms ascending
    rows = len(weights)
    packed = torch.cat([keep.sum(dim=1), finite.to(torch.int64), where[:, 1], impacts[keep].to(torch.int64),
                        (weights[keep] < 0).to(torch.int64)]).cpu().numpy()  # one round trip, small
    pairs = len(where)
    counts, finite = packed[:rows], packed[rows:2 * rows].astype(bool)
    terms, values = packed[2 * rows:2 * rows + pairs], packed[2 * rows + pairs:2 * rows + 2 * pairs]
    negative = packed[2 * rows + 2 * pairs:].astype(bool)
    return counts, terms, values, (negative if negative.any() else None), finite


def quantised_batch(encoder, input_ids: torch.Tensor, mask: torch.Tensor, scale: float) -> list[dict | None]:
    """Per row of a padded batch, its impact vector {term: round(|w| × scale)} (``neg_<term>`` for negative w, zeros
    dropped, terms in vocabulary order), or None when a weight is not finite."""
    counts, terms, values, negative, finite = quantised_arrays(encoder, input_ids, mask, scale)
    return impact_dicts(encoder.vocab, counts.tolist(), terms.tolist(), values.tolist(),
                        None if negative is None else negative.tolist(), finite.tolist())
