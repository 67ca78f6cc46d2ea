"""The pool of real vectors behind the scale benchmark: encoded documents and queries of real collections.

Each pooled collection (a folder with ``corpus.jsonl`` and topics, e.g. ``../shared/data/scifact``, or
``demo`` for the shipped demo collection) is encoded once with :class:`SparseEncoder` through
:func:`lsr_lucene.io.vectors.write_vectors` (with per-position token weights, for window clauses) and cached
under ``<cache>/<name>.vectors``, ``<name>.positions.jsonl`` and ``<name>.queries.jsonl``; later runs reuse
them. :func:`load_pool` reads everything back as CSR arrays over one vocabulary.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lsr_lucene.demo import DEMO_DATA
from lsr_lucene.errors import InputError
from lsr_lucene.io.output import atomic_output, open_jsonl
from lsr_lucene.io.vectors import read_metadata

DEFAULT_POOL = ("scifact", "npl", "cisi", "cacm", "med", "cranfield", "excluir")
TOPIC_FILES = ("topics.tsv", "topics.train.tsv", "queries.jsonl", "dev.jsonl")
QUERY_TOKENS = 64  # query WordPieces kept for window clauses (as bench.queries)
DEMO_DIR = DEMO_DATA  # the shipped demo collection, in the installed package


@dataclass(frozen=True)
class PoolSource:
    """One pooled collection: its short name, corpus file and topics file."""

    name: str
    corpus: Path
    topics: Path


@dataclass
class Pool:
    """Encoded pool: documents as CSR rows over ``vocab`` (integer impacts), positions and queries."""

    vocab: list[str]
    indptr: np.ndarray  # int64, documents + 1
    terms: np.ndarray  # int32 term ids
    weights: np.ndarray  # int32 impacts (> 0)
    collections: list[str]  # the pooled collections, in order
    doc_collection: np.ndarray  # int16: index into ``collections`` of each document
    scale: float
    queries: list[dict] = field(default_factory=list)  # {"qid", "vector": {t: int}, "tokens": [str]}
    pos_indptr: np.ndarray | None = None  # int64, documents + 1 (None: no positions)
    pos_terms: np.ndarray | None = None  # int32 token ids (tokens added to ``vocab`` when new)
    pos_weights: np.ndarray | None = None  # float32 per-position weights

    @property
    def num_docs(self) -> int:
        return len(self.indptr) - 1


def resolve_sources(spec: str, data_dir: str | Path) -> list[PoolSource]:
    """Pool sources from a comma list of names (folders under ``data_dir``), folders, or ``demo``."""
    sources, seen = [], set()
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        folder = DEMO_DIR if item == "demo" else Path(item) if ("/" in item or Path(item).is_dir()) \
            else Path(data_dir) / item
        name = "demo" if item == "demo" else folder.name
        if not (folder / "corpus.jsonl").is_file():
            raise InputError(f"pool collection {item!r}: no corpus.jsonl in {folder} (names are looked up "
                             f"under --data {data_dir})")
        topics = next((folder / n for n in TOPIC_FILES if (folder / n).is_file()), None)
        if topics is None:
            raise InputError(f"pool collection {item!r}: no topics in {folder} (expected one of "
                             f"{', '.join(TOPIC_FILES)})")
        if name in seen:
            raise InputError(f"pool collection {name!r} is listed twice")
        seen.add(name)
        sources.append(PoolSource(name, folder / "corpus.jsonl", topics))
    if not sources:
        raise InputError("--pool names no collection")
    return sources


def cache_paths(cache: Path, name: str) -> dict[str, Path]:
    """Where one collection's encoded vectors, positions and queries are cached."""
    return {"vectors": cache / f"{name}.vectors", "positions": cache / f"{name}.positions.jsonl",
            "queries": cache / f"{name}.queries.jsonl"}


def encode_pool(sources: list[PoolSource], cache: Path, model: str = "splade-tiny", max_length: int = 256,
                threads: int | None = None, batch_size: int = 16) -> None:
    """Encode every source not cached yet (documents with positions, then queries); resumable."""
    from lsr_lucene.io.corpus import count_docs, read_corpus
    from lsr_lucene.io.topics import read_topics
    from lsr_lucene.io.vectors import quantise_query, write_vectors

    cache.mkdir(parents=True, exist_ok=True)
    encoder = None
    for source in sources:
        paths = cache_paths(cache, source.name)
        if paths["vectors"].is_dir() and paths["positions"].is_file() and paths["queries"].is_file():
            continue
        if encoder is None:
            from lsr_lucene.encode.encoder import SparseEncoder

            encoder = SparseEncoder(model, max_length=max_length, threads=threads)
        if not (paths["vectors"].is_dir() and paths["positions"].is_file()):
            # pool documents are only sources of vectors: number them (a shared corpus may repeat an id, as
            # CACM's does), so vectors and positions still join one to one
            numbered = ((str(n), doc.contents) for n, doc in enumerate(read_corpus(source.corpus)))
            write_vectors(numbered, encoder, paths["vectors"], batch_size=batch_size,
                          positions=paths["positions"], total=count_docs(source.corpus), source=str(source.corpus),
                          overwrite=True)
        scale = read_metadata(paths["vectors"])["scale"]
        topics = read_topics(source.topics)
        qids = list(topics)
        vectors = encoder.encode_queries([topics[q] for q in qids])
        with atomic_output(paths["queries"], overwrite=True) as tmp:
            with open(tmp, "w", encoding="utf-8") as out:
                for qid, vector in zip(qids, vectors):
                    tokens = encoder.tokenizer.tokenize(topics[qid])[:QUERY_TOKENS]
                    out.write(json.dumps({"id": f"{source.name}-{qid}".replace(" ", "_"), "contents": topics[qid],
                                          "vector": quantise_query(vector, scale, qid), "tokens": tokens},
                                         ensure_ascii=False) + "\n")


def load_pool(sources: list[PoolSource], cache: Path, positions: bool = True) -> Pool:
    """Read the cached vectors (and positions, queries) of ``sources`` into one :class:`Pool`."""
    from lsr_lucene.io.vectors import read_metadata, read_vectors

    vocab: list[str] = []
    index: dict[str, int] = {}
    lengths: list[int] = []
    terms: list[int] = []
    weights: list[float] = []
    owner: list[int] = []
    pos_lengths: list[int] = []
    pos_terms: list[int] = []
    pos_weights: list[float] = []
    queries: list[dict] = []
    scales = set()

    def tid(term: str) -> int:
        got = index.get(term)
        if got is None:
            got = index[term] = len(vocab)
            vocab.append(term)
        return got

    for number, source in enumerate(sources):
        paths = cache_paths(cache, source.name)
        scales.add(float(read_metadata(paths["vectors"]).get("scale", 100)))
        order: dict[str, int] = {}
        for doc_id, vector in read_vectors(paths["vectors"]):
            kept = [(tid(t), int(w)) for t, w in vector.items() if w > 0]
            if not kept:
                continue
            order[doc_id] = len(order)
            lengths.append(len(kept))
            terms.extend(t for t, _ in kept)
            weights.extend(w for _, w in kept)
            owner.append(number)
        if positions:
            rows: list[list] = [[] for _ in order]
            for _, obj in open_jsonl(paths["positions"]):
                row = order.get(str(obj.get("id")))
                if row is not None:
                    rows[row] = obj.get("tokens") or []
            for tokens in rows:
                pos_lengths.append(len(tokens))
                pos_terms.extend(tid(t) for t, _ in tokens)
                pos_weights.extend(float(w) for _, w in tokens)
        for _, obj in open_jsonl(paths["queries"]):
            vector = {t: int(w) for t, w in obj["vector"].items() if w}
            if vector:
                queries.append({"qid": str(obj["id"]), "vector": vector, "tokens": list(obj.get("tokens") or [])})
    if len(scales) > 1:
        raise InputError(f"pooled vectors use different scales {sorted(scales)}; encode them alike")
    if not lengths:
        raise InputError("the pool holds no non-empty document vector")
    pool = Pool(vocab, _indptr(lengths), np.asarray(terms, dtype=np.int32), np.asarray(weights, dtype=np.int32),
                [s.name for s in sources], np.asarray(owner, dtype=np.int16), scales.pop(), queries)
    if positions:
        pool.pos_indptr = _indptr(pos_lengths)
        pool.pos_terms = np.asarray(pos_terms, dtype=np.int32)
        pool.pos_weights = np.asarray(pos_weights, dtype=np.float32)
    return pool


def _indptr(lengths: list[int]) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lengths, dtype=np.int64), out=out[1:])
    return out
