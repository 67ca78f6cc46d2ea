"""Training objective: InfoNCE over the batch's documents plus FLOPS regularisation.

Loss: InfoNCE of each query over all documents of the batch (its row's other document is the hard
negative, the other rows' documents are in-batch negatives; ``--no-in-batch-negatives`` keeps the row's own
documents only) plus FLOPS regularisation
(Formal et al.: sum over the vocabulary of the squared mean |weight|, for queries and documents, with a
quadratic warm-up). Signed models (SNReLU, Krasakis et al.) use |weight|, so negative weights cost
sparsity like positive ones.
"""
from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F

from lsr_lucene.train.data import Example
from lsr_lucene.train.model import TrainableEncoder


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
