"""Document encoding on a GPU: pooling, rounding and nonzero selection on the device, only nonzero weights copied back.

``SparseEncoder.encode_documents_quantised`` runs each padded batch through the transformer, the screened vocabulary
projection and max pooling (``SparseEncoder._weights``), then rounds ``|w| × scale`` in float64 (half to even, as
Python's ``round`` does in ``io.vectors.quantise``) and selects the nonzero impacts on the device: the host receives a
few hundred (term, impact) pairs per document instead of a batch × vocabulary matrix. Batches are padded with numpy and
copied from pinned memory without blocking; tokenisation uses the fast tokenizer's Rust batch call (no Python objects
per token beyond the id lists), which releases the GIL, so ``io.vectors.write_vectors`` can keep several windows in
flight (``SparseEncoder.pipeline_depth``): one window's tokens and JSON lines are made while another's batches run.
"""
from __future__ import annotations

import copy
from typing import Sequence

import torch


class FastTokenizer:
    """The fast tokenizer's Rust core with truncation at ``max_length`` and no padding: ``ids(texts)`` equals
    ``tokenizer(texts, max_length=..., truncation=True)["input_ids"]``."""

    def __init__(self, tokenizer, max_length: int):
        self.core = copy.deepcopy(tokenizer.backend_tokenizer)
        self.core.no_padding()
        self.core.enable_truncation(int(max_length))

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        return [encoding.ids for encoding in self.core.encode_batch(list(texts), add_special_tokens=True)]


def quantised_batch(encoder, input_ids: torch.Tensor, mask: torch.Tensor, scale: float) -> list[dict | None]:
    """Per row of a padded batch, its impact vector {term: round(|w| × scale)} (``neg_<term>`` for negative w, zeros
    dropped, terms in vocabulary order), or None when a weight is not finite."""
    hidden = encoder._hidden(input_ids, mask)
    weights = encoder._weights(hidden, mask, input_ids)  # (batch, vocabulary) on the device
    finite = torch.isfinite(weights).all(dim=1)
    weights = torch.nan_to_num(weights, nan=0.0, posinf=0.0, neginf=0.0)
    impacts = torch.round(weights.double().abs() * scale)  # float32 -> float64, as Python's float(w) * scale
    keep = impacts != 0
    counts = keep.sum(dim=1)
    where = keep.nonzero()  # row-major: rows in order, terms ascending
    values = impacts[keep].to(torch.int64)
    negative = weights[keep] < 0
    # one round trip: everything the host needs, small
    counts, terms, values, negative, finite = (t.to("cpu", non_blocking=False) for t in
                                               (counts, where[:, 1], values, negative, finite))
    vocab = encoder.vocab
    terms, values, finite = terms.tolist(), values.tolist(), finite.tolist()
    signs = negative.tolist() if bool(negative.any()) else None
    out: list[dict | None] = []
    start = 0
    for row, count in enumerate(counts.tolist()):
        end = start + count
        if not finite[row]:
            out.append(None)
        elif signs is None:
            out.append({vocab[t]: v for t, v in zip(terms[start:end], values[start:end])})
        else:
            out.append({(f"neg_{vocab[t]}" if neg else vocab[t]): v
                        for t, v, neg in zip(terms[start:end], values[start:end], signs[start:end])})
        start = end
    return out
