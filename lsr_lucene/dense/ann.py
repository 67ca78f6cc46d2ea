"""The dense leg's approximate index (issue 68): a Faiss HNSW graph over an embeddings folder's unit vectors,
``<folder>/ann.faiss`` with its settings in ``ann.json``, built by ``index --dense`` (and ``dense encode``).

Negated queries take the dense leg's own nearest documents to A's text as extra candidates (``DenseLeg.search``);
an exact flat scan of every embedding is linear in the collection, the graph is not. Hits keep their exact inner
products (HNSW-Flat stores the vectors) and are ordered as the flat scan orders them (scores rounded to
``search.DECIMALS``, ties by docid); only a document the graph misses is lost (recall against the exact scan:
runs/dense/ann.md). A folder without the file is searched exactly (one note).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from lsr_lucene.dense.search import DECIMALS, TIE_MARGIN, import_faiss
from lsr_lucene.dense.store import Embeddings
from lsr_lucene.errors import InputError
from lsr_lucene.io.output import atomic_output, write_text_atomic

ANN_INDEX, ANN_META = "ann.faiss", "ann.json"
NEIGHBOURS = 32  # HNSW M: links per node
EF_CONSTRUCTION = 200
EF_FACTOR = 1.0  # efSearch = max(EF_MIN, EF_FACTOR * k): the list of candidates kept while the graph is walked
EF_MIN = 128


def ann_path(folder: str | Path) -> Path:
    return Path(folder) / ANN_INDEX


def build_ann(folder: str | Path, embeddings: Embeddings, threads: int | None = None, overwrite: bool = False,
              neighbours: int = NEIGHBOURS, ef_construction: int = EF_CONSTRUCTION) -> dict:
    """Write ``ann.faiss`` and ``ann.json`` into the embeddings ``folder`` (refused where they exist unless
    ``overwrite``); returns the settings written."""
    faiss = import_faiss()
    if threads:
        faiss.omp_set_num_threads(int(threads))
    started = time.perf_counter()
    index = faiss.IndexHNSWFlat(embeddings.vectors.shape[1], int(neighbours), faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = int(ef_construction)
    step = 1 << 16
    for start in range(0, len(embeddings.docids), step):  # from the memory map a block at a time
        index.add(np.ascontiguousarray(embeddings.vectors[start:start + step], dtype=np.float32))
    settings = {"kind": "hnsw-flat", "metric": "inner product", "neighbours": int(neighbours),
                "ef_construction": int(ef_construction), "ef_search": f"max({EF_MIN}, {EF_FACTOR:g} x k)",
                "count": len(embeddings.docids), "seconds": round(time.perf_counter() - started, 2)}
    with atomic_output(Path(folder) / ANN_INDEX, overwrite) as tmp:
        faiss.write_index(index, str(tmp))
    write_text_atomic(Path(folder) / ANN_META, json.dumps(settings, indent=2) + "\n")
    return settings


class AnnSearcher:
    """Approximate top-k by inner product over an embeddings folder's HNSW graph, exact scores, flat-scan order."""

    def __init__(self, folder: str | Path, embeddings: Embeddings, threads: int | None = None):
        faiss = import_faiss()
        if threads:
            faiss.omp_set_num_threads(int(threads))
        self.index = faiss.read_index(str(ann_path(folder)))
        if self.index.ntotal != len(embeddings.docids):
            raise InputError(f"{ann_path(folder)}: {self.index.ntotal} vectors for {len(embeddings.docids)} "
                             f"embeddings; build it again: lsr-lucene index --index INDEX --dense --overwrite")
        self.docids = embeddings.docids
        self._rank = np.empty(len(self.docids), dtype=np.int64)
        self._rank[np.argsort(np.asarray(self.docids, dtype=object), kind="stable")] = np.arange(len(self.docids))

    def search(self, queries: np.ndarray, k: int = 1000) -> list[list[tuple[str, float]]]:
        """Per query row, up to ``k`` (docid, score), score descending (rounded as the flat scan's), ties by docid."""
        k = min(int(k), len(self.docids))
        if k <= 0:
            return [[] for _ in range(len(queries))]
        fetch = min(k + TIE_MARGIN, len(self.docids))  # documents tied with the k-th, ordered by docid
        self.index.hnsw.efSearch = max(EF_MIN, int(EF_FACTOR * fetch))
        scores, rows = self.index.search(np.ascontiguousarray(queries, dtype=np.float32), fetch)
        out = []
        for score, row in zip(scores, rows):
            found = row >= 0
            row, score = row[found].astype(np.int64), np.round(score[found].astype(np.float64), DECIMALS)
            order = np.lexsort((self._rank[row], -score))[:k]
            out.append([(self.docids[r], float(s)) for r, s in zip(row[order], score[order])])
        return out
