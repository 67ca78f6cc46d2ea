"""Exact inner-product search of unit vectors (cosine) in Faiss flat indexes over blocks of a memory-mapped
store; ties by docid."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from lsr_lucene.dense.store import Embeddings
from lsr_lucene.errors import SetupError

DECIMALS = 6  # scores are rounded (and written) to this many decimals before ordering, so ties are by docid
TIE_MARGIN = 16  # extra hits fetched so that documents tied with the last one can be ordered by docid


def import_faiss():
    try:
        import faiss
    except ImportError:
        raise SetupError("the dense leg needs Faiss (pip install faiss-cpu)") from None
    return faiss


BLOCK_ROWS = 1 << 14  # document rows searched at a time: memory is one block (plus the top k), not the store


class FlatSearcher:
    """Exact top-k by inner product (cosine for unit vectors): Faiss ``IndexFlatIP`` over one block of the
    (memory-mapped) embeddings at a time, each block's best merged into a running top k, so memory is bounded
    by a block, not by the collection."""

    def __init__(self, embeddings: Embeddings, threads: int | None = None, block_rows: int = BLOCK_ROWS):
        self._faiss = import_faiss()
        if threads:
            self._faiss.omp_set_num_threads(int(threads))
        self.docids = embeddings.docids
        self.vectors = embeddings.vectors  # a read-only memory map when read by read_embeddings: not copied
        self.block_rows = max(1, int(block_rows))
        self._order = np.argsort(np.asarray(self.docids, dtype=object), kind="stable")  # docid rank per row
        self._rank = np.empty(len(self.docids), dtype=np.int64)
        self._rank[self._order] = np.arange(len(self.docids))

    def _block_hits(self, start: int, queries: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per query, rows (global) and rounded scores of a block's candidates: its top k and all tied with the
        k-th (scored in full when Faiss's extra TIE_MARGIN hits may not reach past the tie)."""
        block = np.ascontiguousarray(self.vectors[start:start + self.block_rows], dtype=np.float32)
        n = len(block)
        fetch = min(n, k + TIE_MARGIN)
        index = self._faiss.IndexFlatIP(block.shape[1])
        index.add(block)
        scores, rows = index.search(queries, fetch)
        out = []
        for q in range(len(queries)):
            last = np.round(float(scores[q, min(k, n) - 1]), DECIMALS)
            if fetch < n and np.round(float(scores[q, fetch - 1]), DECIMALS) >= last:
                out.append((np.arange(start, start + n), np.round((block @ queries[q]).astype(np.float64), DECIMALS)))
            else:
                out.append((rows[q].astype(np.int64) + start, np.round(scores[q].astype(np.float64), DECIMALS)))
        return out

    def search(self, queries: np.ndarray, k: int = 1000) -> list[list[tuple[str, float]]]:
        """Per query row, the top ``k`` (docid, score), score descending, ties by docid."""
        from lsr_lucene.io.ranking import top_k

        n = len(self.docids)
        k = min(k, n)
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        best: list[tuple[np.ndarray, np.ndarray]] = [(np.empty(0, np.int64), np.empty(0))] * len(queries)
        for start in range(0, n, self.block_rows):
            for q, (rows, scores) in enumerate(self._block_hits(start, queries, k)):
                rows, scores = np.concatenate([best[q][0], rows]), np.concatenate([best[q][1], scores])
                keep = top_k(scores, k, self._rank[rows])  # exact: ties by docid, so merging blocks is exact
                best[q] = (rows[keep], scores[keep])
        return [[(self.docids[r], float(s)) for r, s in zip(rows, scores)] for rows, scores in best]


def dense_run(searcher: FlatSearcher, encoder, topics: Mapping[str, str], k: int = 1000,
              batch_size: int = 64) -> dict[str, list[tuple[str, float]]]:
    """``{qid: [(docid, score), ...]}`` for topics encoded with ``encoder`` (a ``DenseEncoder``)."""
    qids: Sequence[str] = list(topics)
    vectors = encoder.encode_queries([topics[q] for q in qids], batch_size=batch_size, desc="encoding queries")
    return dict(zip(qids, searcher.search(vectors, k)))
