"""Exact inner-product search of unit vectors (cosine) in a Faiss flat index; ties by docid."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from lsr_lucene.dense.store import Embeddings
from lsr_lucene.errors import SetupError

DECIMALS = 6  # scores are rounded (and written) to this many decimals before ordering, so ties are by docid
TIE_MARGIN = 16  # extra hits fetched so that documents tied with the last one can be ordered by docid


def _faiss():
    try:
        import faiss
    except ImportError:
        raise SetupError("the dense leg needs Faiss (pip install faiss-cpu)") from None
    return faiss


class FlatSearcher:
    """Faiss ``IndexFlatIP`` over document embeddings: exact top-k by inner product (cosine for unit vectors)."""

    def __init__(self, embeddings: Embeddings, threads: int | None = None):
        faiss = _faiss()
        if threads:
            faiss.omp_set_num_threads(int(threads))
        self.docids = embeddings.docids
        self.vectors = np.ascontiguousarray(embeddings.vectors, dtype=np.float32)
        self.index = faiss.IndexFlatIP(self.vectors.shape[1])
        self.index.add(self.vectors)
        self._order = np.argsort(np.asarray(self.docids, dtype=object), kind="stable")  # docid rank per row
        self._rank = np.empty(len(self.docids), dtype=np.int64)
        self._rank[self._order] = np.arange(len(self.docids))

    def _ordered(self, rows: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[str, float]]:
        scores = np.round(scores.astype(np.float64), DECIMALS)
        keep = np.lexsort((self._rank[rows], -scores))[:k]
        return [(self.docids[rows[i]], float(scores[i])) for i in keep]

    def search(self, queries: np.ndarray, k: int = 1000) -> list[list[tuple[str, float]]]:
        """Per query row, the top ``k`` (docid, score), score descending, ties by docid."""
        n = len(self.docids)
        k = min(k, n)
        fetch = min(n, k + TIE_MARGIN)
        scores, rows = self.index.search(np.ascontiguousarray(queries, dtype=np.float32), fetch)
        results = []
        for q in range(len(queries)):
            last = np.round(float(scores[q, k - 1]), DECIMALS)
            if fetch < n and np.round(float(scores[q, fetch - 1]), DECIMALS) >= last:
                # documents beyond what Faiss returned may tie with the k-th: score them all
                all_rows = np.arange(n)
                results.append(self._ordered(all_rows, self.vectors @ queries[q], k))
            else:
                results.append(self._ordered(rows[q], scores[q], k))
        return results


def dense_run(searcher: FlatSearcher, encoder, topics: Mapping[str, str], k: int = 1000,
              batch_size: int = 64) -> dict[str, list[tuple[str, float]]]:
    """``{qid: [(docid, score), ...]}`` for topics encoded with ``encoder`` (a ``DenseEncoder``)."""
    qids: Sequence[str] = list(topics)
    vectors = encoder.encode([topics[q] for q in qids], batch_size=batch_size, desc="encoding queries")
    return dict(zip(qids, searcher.search(vectors, k)))
