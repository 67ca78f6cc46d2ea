"""The dense positive leg of negated queries: document embeddings kept beside the impact index (``<index>/dense/``,
written by ``lsr-lucene dense encode``) give the dense cosine of A's text, which the `default` (fusion-gated) blends
into A's scaled scores before the penalty (issue 36: splade-tiny alone finds A weakly on question-style exclusions),
and each candidate's cosine with the best A match d* (the candidate on top of that blend): a one-document dense
feedback that lifts the documents most like d*, which is often the very document that carries B and pays the penalty
(:func:`blend`; runs/negation/leg_fusion.md).

The candidates of a fused query are the splade legs' hits and the dense leg's own top documents for A's text (an
exact flat search of the folder, :meth:`DenseLeg.search`: issue 49, a wanted passage that A's sparse leg misses in a
large collection); they are scored by exact dot products with their stored unit vectors. Queries are encoded in
fp32 one token length per batch (``DenseEncoder.encode_queries``), so a query's cosines do not depend on the queries
searched with it.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Mapping, Sequence

from lsr_lucene.compose.scaling import minmax
from lsr_lucene.dense.leg import DENSE_DIR  # the sidecar folder inside an impact index (index --dense)
from lsr_lucene.errors import InputError

AUTO, NONE = "auto", "none"
# dense query encodings a DenseLeg keeps: a negated query's A text is encoded once for the dense leg's own candidates
# (DenseLeg.search) and read again for the cosines (DenseLeg.scores); exact, since an encoding does not depend on the
# queries it is batched with
QUERY_MEMO = 1024
ANN_NOTE_ABOVE = 50_000  # embeddings above which a folder without its approximate index is said to be scanned


def dense_location(index_dir: str | Path, dense: str | Path | None = AUTO) -> Path | None:
    """The embeddings folder a searcher uses: ``auto`` (default): ``<index>/dense`` when present, else none;
    ``none``: none; a path: that folder (InputError when it is missing)."""
    if dense is None or str(dense) == AUTO:
        found = Path(index_dir) / DENSE_DIR
        return found if found.is_dir() else None
    if str(dense) == NONE:
        return None
    if not Path(dense).is_dir():
        raise InputError(f"{dense}: no such dense embeddings folder (make one with lsr-lucene dense encode)")
    return Path(dense)


class MissingDenseLegWarning(UserWarning):
    """The negation default runs without its dense leg (``<index>/dense`` absent): weaker, and said so."""


def missing_note(index_dir: str | Path) -> str:
    """The one line said when the default runs without a dense leg: what is lost and the command that adds it."""
    return (f"note: no dense leg ({Path(index_dir) / DENSE_DIR} not found): negated queries use the weaker sparse-only "
            f"default (fusion-gated λ 1); add the dense leg with: lsr-lucene index --index {index_dir} --dense")


def memo_encode(encoder, memo: dict, texts: Sequence[str]):
    """The encodings of ``texts`` (rows in order): those not in ``memo`` (text -> encoding) encoded in one batch and
    added; then the memo keeps only its ``QUERY_MEMO`` latest."""
    import numpy as np

    missing = [t for t in dict.fromkeys(texts) if t not in memo]
    if missing:
        memo.update(zip(missing, encoder.encode_queries(missing)))
    out = np.stack([memo[t] for t in texts])
    for text in list(memo)[:max(0, len(memo) - QUERY_MEMO)]:
        del memo[text]
    return out


def leg_query_encoder(path: str | Path, metadata: Mapping, dim: int, threads: int | None = 1):
    """The dense query encoder of an embeddings folder (``metadata`` its record, ``dim`` its vectors' dimension):
    queries in fp32 whatever the documents' precision, on CPU; InputError when the model's
    dimension differs."""
    from lsr_lucene.dense.encoder import DEFAULT_MAX_LENGTH, DenseEncoder, query_dtype

    encoder = DenseEncoder(metadata.get("model"), int(metadata.get("max_length", DEFAULT_MAX_LENGTH)), threads or 1,
                           query_dtype(metadata.get("dtype")), "cpu")
    if encoder.dim != dim:
        raise InputError(f"{path}: {dim}-dimensional embeddings, but model {metadata.get('model')} gives "
                         f"{encoder.dim}")
    return encoder


class DenseLeg:
    """Dense cosines of texts with the documents of an embeddings folder (the model recorded there)."""

    def __init__(self, path: str | Path, documents: int | None = None, threads: int | None = 1):
        from lsr_lucene.dense.store import read_embeddings

        self.path = Path(path)
        self.embeddings = read_embeddings(self.path)
        # at least the index's documents (dense encode keeps the empty ones that the sparse index skips); every
        # candidate must have an embedding (checked when scored)
        if documents is not None and len(self.embeddings.docids) < int(documents):
            raise InputError(f"{self.path}: {len(self.embeddings.docids)} document embeddings for an index of "
                             f"{documents} documents; encode the index's corpus (lsr-lucene dense encode)")
        self.row = {d: i for i, d in enumerate(self.embeddings.docids)}
        self.threads = threads or 1
        self._encoder = None
        self._flat: Any = None  # the approximate (or exact flat) searcher of the folder, made on first :meth:`search`
        self._memo: dict[str, Any] = {}  # text -> its encoding, the QUERY_MEMO latest (insertion order)
        self._lock = threading.Lock()  # one encoder (and tokenizer: not thread-safe) shared by a server's requests

    @property
    def encoder(self):
        """The dense query encoder (loaded on first use; fp32 queries whatever the documents' precision)."""
        with self._lock:
            return self._load()

    def _load(self):
        if self._encoder is None:
            self._encoder = leg_query_encoder(self.path, self.embeddings.metadata, self.embeddings.vectors.shape[1],
                                              self.threads)
        return self._encoder

    def _queries(self, texts: Sequence[str]):
        """The encodings of ``texts`` (rows in order), those not in the memo encoded in one batch; call under the
        lock."""
        return memo_encode(self._load(), self._memo, texts)

    def scores(self, texts: Sequence[str], candidates: Sequence[str]) -> list[dict[str, float]]:
        """Per text, ``{docid: cosine}`` over ``candidates`` (InputError naming a candidate the folder lacks)."""
        for doc in candidates:
            if doc not in self.row:
                raise InputError(f"{self.path}: no embedding for document {doc}; the dense folder was made from "
                                 "another corpus than the index")
        if not texts:
            return []
        with self._lock:
            queries = self._queries(texts)
        return self.cosines(queries, candidates)

    def cosines(self, queries, candidates: Sequence[str]) -> list[dict[str, float]]:
        """Per encoded query row, ``{docid: cosine}`` over the ``candidates`` this folder holds (the others left
        out): exact float64 dot products, each a function of its document and query alone (a distributed index's
        shards compute them where the embeddings are)."""
        import numpy as np

        held = [doc for doc in candidates if doc in self.row]
        if not held or not len(queries):
            return [{} for _ in range(len(queries))]
        block = np.asarray(self.embeddings.vectors[np.asarray([self.row[d] for d in held], dtype=np.int64)],
                           dtype=np.float32)
        values = np.einsum("qd,cd->qc", np.asarray(queries).astype(np.float64), block.astype(np.float64))  # similar
        return [dict(zip(held, row.tolist())) for row in values]

    def search(self, texts: Sequence[str], k: int) -> list[list[str]]:
        """Per text, the ``k`` documents of highest cosine in the whole folder (by its HNSW index when it has one,
        else exact; ties by docid): the dense leg's own candidates, so a wanted document that neither splade leg
        retrieves can still be ranked."""
        if not texts or k <= 0:
            return [[] for _ in texts]
        with self._lock:
            queries = self._queries(texts)
        return [[doc for doc, _ in hits] for hits in self.nearest(queries, k)]

    def nearest(self, queries, k: int) -> list[list[tuple[str, float]]]:
        """Per encoded query row, the ``k`` (docid, cosine rounded as ``dense.search`` rounds it) of highest cosine,
        cosine descending, ties by docid (:meth:`search`'s documents, with their scores: the top k of several
        folders merged in that order is the top k of their union)."""
        with self._lock:
            if self._flat is None:
                self._flat = self._searcher()
            flat = self._flat
        return flat.search(queries, k) if k > 0 and len(queries) else [[] for _ in range(len(queries))]

    def _searcher(self):
        """The approximate HNSW index of the folder (``ann.faiss``, built by ``index --dense``) when it has one,
        else the exact flat scan, said once (linear in the collection)."""
        import sys

        from lsr_lucene.dense.ann import AnnSearcher, ann_path
        from lsr_lucene.dense.search import FlatSearcher

        if ann_path(self.path).is_file():
            return AnnSearcher(self.path, self.embeddings, self.threads)
        if len(self.embeddings.docids) > ANN_NOTE_ABOVE:
            print(f"note: {self.path} has no approximate dense index ({ann_path(self.path).name}): the dense leg's "
                  f"candidates come from an exact scan of {len(self.embeddings.docids):,} embeddings; add it with: "
                  f"lsr-lucene index --index {self.path.parent} --dense", file=sys.stderr, flush=True)
        return FlatSearcher(self.embeddings, self.threads)

    def similar(self, doc: str, candidates: Sequence[str]) -> dict[str, float]:
        """``{candidate: cosine with document doc}`` (exact float64 dot products of the stored unit vectors)."""
        import numpy as np

        missing = [d for d in [doc, *candidates] if d not in self.row]
        if missing:
            raise InputError(f"{self.path}: no embedding for document {missing[0]}; the dense folder was made from "
                             "another corpus than the index")
        return self.similar_to(np.asarray(self.embeddings.vectors[self.row[doc]], dtype=np.float32), candidates)

    def vector(self, doc: str):
        """The stored unit vector of ``doc`` (float32), None when this folder lacks it."""
        import numpy as np

        return None if doc not in self.row else np.array(self.embeddings.vectors[self.row[doc]], dtype=np.float32)

    def similar_to(self, target, candidates: Sequence[str]) -> dict[str, float]:
        """``{candidate: cosine with the unit vector target}`` over the candidates this folder holds (exact float64
        dot products, each a function of its two vectors alone)."""
        import numpy as np

        held = [d for d in candidates if d in self.row]
        if not held:
            return {}
        rows = np.asarray([self.row[d] for d in held], dtype=np.int64)
        block = np.asarray(self.embeddings.vectors[rows], dtype=np.float32).astype(np.float64)
        # einsum, not BLAS: after torch has run, its OpenMP threads spin and a BLAS product of this size took 16-94 ms
        # against 0.6 on 2 loaded cores (scripts/bench/negation_latency)
        vector = np.asarray(target, dtype=np.float32).astype(np.float64)
        return dict(zip(held, np.einsum("cd,d->c", block, vector).tolist()))

    def describe(self) -> str:
        """One line: where the embeddings are and their model."""
        return f"dense leg {self.embeddings.metadata.get('model')} from {self.path}"


class Neighbours:
    """What a node with a neighbour leg reads: ``similar(doc)``, every candidate's dense cosine with ``doc``
    (computed once per document, so that ``--explain`` re-fusing the same inputs reads the same values)."""

    def __init__(self, dense: DenseLeg, candidates: Sequence[str]):
        self.dense, self.candidates = dense, list(candidates)
        self._seen: dict[str, dict[str, float]] = {}

    def similar(self, doc: str) -> dict[str, float]:
        if doc not in self._seen:
            self._seen[doc] = self.dense.similar(doc, self.candidates)
        return self._seen[doc]


def blend(a: Mapping[str, float], cosines: Mapping[str, float], weight: float, neighbours=None,
          neighbour_weight: float = 0.0) -> tuple[dict[str, float], dict | None, str | None]:
    """Â' = minmax(Â + w·minmax(cos) + v·minmax(cos(·, d*))), d* the best candidate of Â + w·minmax(cos) (ties: the
    smallest docid); without ``neighbours`` (or v 0) the last term is left out. Returns Â', the neighbour cosines
    (None without) and d*."""
    cos = minmax(cosines)
    mixed = {d: a.get(d, 0.0) + weight * cos.get(d, 0.0) for d in a.keys() | cos.keys()}
    if neighbours is None or neighbour_weight <= 0 or not mixed:
        return minmax(mixed), None, None
    best = min(mixed, key=lambda d: (-mixed[d], d))
    near = dict(neighbours.similar(best))
    scaled = minmax(near)
    return minmax({d: v + neighbour_weight * scaled.get(d, 0.0) for d, v in mixed.items()}), near, best


def leaf_inputs(inputs: Sequence[tuple[str, object]], leaf_scores: Sequence[Mapping[str, float]], dense,
                candidates: Sequence[str], doc_texts=None, containing=None) -> list:
    """:func:`~lsr_lucene.compose.operations.fuse`'s input list: the leaves' scores, with each node's dense cosines
    (``dense``: a :class:`DenseLeg`), its :class:`Neighbours` and its
    :class:`~lsr_lucene.compose.absence.Absence` (reading ``doc_texts``: docids -> {docid: stored text}; None: no
    texts, nothing is stated absent; ``containing``: (items, docids) -> whether each text contains one, e.g. a backend's
    ``containing``; None: judged on the texts read) in the places :func:`~lsr_lucene.compose.operations.plan_inputs`
    gives."""
    from lsr_lucene.compose.absence import Absence

    texts = [text for kind, text in inputs if kind == "dense"]
    if (texts or any(kind == "neighbour" for kind, _ in inputs)) and dense is None:
        raise InputError("the plan blends a dense leg, but no dense embeddings folder is open")
    cosines = iter(dense.scores(texts, candidates) if texts else [])
    leaves = iter(leaf_scores)
    out: list = []
    for kind, value in inputs:
        if kind == "neighbour":
            out.append(Neighbours(dense, candidates))
        elif kind == "absence":
            out.append(Absence(value, doc_texts or (lambda docs: {}),  # type: ignore[arg-type]  # B's words
                               containing if doc_texts else None))
        else:
            out.append(dict(next(cosines)) if kind == "dense" else dict(next(leaves)))
    return out
