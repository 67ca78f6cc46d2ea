"""Dev figures logged each epoch: NevIR pairwise accuracy by exact dot product, sparsity and sign statistics."""
from __future__ import annotations

from typing import Sequence

import torch

from lsr_lucene.train.data import NevirRow
from lsr_lucene.train.model import TrainableEncoder


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
    from lsr_lucene.eval.contrastive_metrics import nevir_pairwise_accuracy

    docs = model.encode([t for r in rows for t in (r.doc1, r.doc2)], max_length)
    queries = model.encode([t for r in rows for t in (r.q1, r.q2)], query_max_length)
    d1, d2 = docs[0::2], docs[1::2]
    q1, q2 = queries[0::2], queries[1::2]
    scores = zip((q1 * d1).sum(1).tolist(), (q1 * d2).sum(1).tolist(),
                 (q2 * d1).sum(1).tolist(), (q2 * d2).sum(1).tolist())
    result = nevir_pairwise_accuracy(scores)
    return {**result, "docs": weight_stats(docs), "queries": weight_stats(queries)}
