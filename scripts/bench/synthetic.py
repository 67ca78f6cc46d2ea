"""A synthetic N-document collection made from real vectors, for the scale benchmark.

Document i takes the vector of a pool document (each pool vector is used ⌊N/P⌋ or ⌈N/P⌉ times, in seeded
random order) and remaps each of its terms to another term of similar document frequency: terms are sorted
by pool df and cut into buckets of similar df (the df within a bucket varies by at most ``ratio``), and in
document i the terms of bucket b are rotated by a shift drawn from a hash of (seed, i, b). A rotation is a
bijection, so a document never gets a term twice; weights stay as they were; every term's expected df is
its bucket's mean df times N/P, so posting-list lengths follow the pool's df curve. The same map renames the
per-position tokens used by window clauses. Everything is deterministic given the seed.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scripts.bench.pool import Pool
from lsr_lucene.errors import InputError
from lsr_lucene.io.output import atomic_output

DOC_ID = "d{:08d}"  # zero-padded: string order is numeric order (ties are broken by docid)
CHUNK = 50_000  # documents generated per vectorised step
_M1, _M2, _M3 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


@dataclass
class Buckets:
    """For each term id: the first id of its bucket (in df order), the bucket size and its place in it."""

    order: np.ndarray  # term ids sorted by df descending: bucket members are contiguous here
    bucket: np.ndarray  # bucket number of each term id
    start: np.ndarray  # per term id: offset of its bucket in ``order``
    size: np.ndarray  # per term id: size of its bucket
    place: np.ndarray  # per term id: its offset inside the bucket


@dataclass
class Collection:
    """N synthetic documents as CSR rows over the pool's vocabulary, plus the pool row each came from."""

    vocab: list[str]
    indptr: np.ndarray
    terms: np.ndarray
    weights: np.ndarray
    source: np.ndarray  # int32 pool row of each document
    seed: int

    @property
    def num_docs(self) -> int:
        return len(self.indptr) - 1

    def doc_id(self, i: int) -> str:
        return DOC_ID.format(i)


def df_buckets(df: np.ndarray, ratio: float = 1.1, max_size: int = 256) -> Buckets:
    """Cut terms (sorted by df, descending) into buckets whose largest df is at most ``ratio`` × the smallest.

    Terms with df 0 (tokens seen only in positions or queries) get buckets of their own: never remapped.
    """
    if ratio < 1:
        raise InputError(f"df bucket ratio must be at least 1, got {ratio}")
    order = np.lexsort((np.arange(len(df)), -df)).astype(np.int64)
    bucket = np.zeros(len(df), dtype=np.int64)
    starts = []
    first_df = None
    for rank, term in enumerate(order):
        value = df[term]
        if first_df is None or value == 0 or value * ratio < first_df or rank - starts[-1] >= max_size:
            starts.append(rank)
            first_df = value
        bucket[term] = len(starts) - 1
    starts_arr = np.asarray(starts + [len(df)], dtype=np.int64)
    sizes = np.diff(starts_arr)
    rank_of = np.empty(len(df), dtype=np.int64)
    rank_of[order] = np.arange(len(df))
    return Buckets(order, bucket, starts_arr[bucket], sizes[bucket], rank_of - starts_arr[bucket])


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser over uint64 arrays (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * _M2
        x = (x ^ (x >> np.uint64(27))) * _M3
        return x ^ (x >> np.uint64(31))


def remap(terms: np.ndarray, docs: np.ndarray, buckets: Buckets, seed: int) -> np.ndarray:
    """New term ids: each term rotated inside its df bucket by the shift of (seed, document, bucket)."""
    size = buckets.size[terms]
    with np.errstate(over="ignore"):
        key = (np.uint64(seed) * _M1) ^ (docs.astype(np.uint64) * _M2) ^ (buckets.bucket[terms].astype(np.uint64) * _M3)
    shift = (_mix(key) % size.astype(np.uint64)).astype(np.int64)
    return buckets.order[buckets.start[terms] + (buckets.place[terms] + shift) % size].astype(np.int32)


def pool_df(pool: Pool) -> np.ndarray:
    """Document frequency of every vocabulary term in the pool's document vectors."""
    return np.bincount(pool.terms, minlength=len(pool.vocab)).astype(np.int64)


def sources_for(n: int, pool_docs: int, seed: int) -> np.ndarray:
    """The pool row of each of ``n`` documents: concatenated seeded permutations of the pool."""
    rng = np.random.default_rng(seed)
    copies = -(-n // pool_docs)
    return np.concatenate([rng.permutation(pool_docs) for _ in range(copies)])[:n].astype(np.int32)


def _gather(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(flat positions of the entries of ``rows`` in CSR order, lengths of those rows)."""
    starts, lengths = indptr[rows], indptr[rows + 1] - indptr[rows]
    offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    return offsets + np.arange(int(lengths.sum())), lengths


def generate(pool: Pool, n: int, seed: int, buckets: Buckets) -> Collection:
    """``n`` documents from ``pool`` (rows sorted by term id within each document)."""
    from lsr_lucene.progress import progress_bar

    if n < 1:
        raise InputError(f"--docs must be positive, got {n}")
    source = sources_for(n, pool.num_docs, seed)
    parts_t, parts_w, lengths = [], [], []
    for lo in progress_bar(range(0, n, CHUNK), desc=f"synthesising {n} documents", unit=" chunks", file=sys.stderr):
        rows = source[lo:lo + CHUNK]
        flat, length = _gather(pool.indptr, rows)
        docs = np.repeat(np.arange(lo, lo + len(rows), dtype=np.int64), length)
        new = remap(pool.terms[flat], docs, buckets, seed)
        order = np.lexsort((new, docs))
        parts_t.append(new[order])
        parts_w.append(pool.weights[flat][order])
        lengths.append(length)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.concatenate(lengths), out=indptr[1:])
    return Collection(pool.vocab, indptr, np.concatenate(parts_t), np.concatenate(parts_w), source, seed)


def positions_of(pool: Pool, collection: Collection, buckets: Buckets, docs: np.ndarray) -> list[list[tuple[str, float]]]:
    """Per-position (token, weight) of the given synthetic documents: the source's tokens, renamed like its terms."""
    if pool.pos_indptr is None or pool.pos_terms is None or pool.pos_weights is None:
        raise InputError("the pool was loaded without positions")
    docs = np.asarray(docs, dtype=np.int64)
    flat, lengths = _gather(pool.pos_indptr, collection.source[docs].astype(np.int64))
    tokens = remap(pool.pos_terms[flat], np.repeat(docs, lengths), buckets, collection.seed)
    names = np.asarray(collection.vocab, dtype=object)[tokens].tolist()
    weights = pool.pos_weights[flat].tolist()
    out, at = [], 0
    for length in lengths.tolist():
        out.append(list(zip(names[at:at + length], weights[at:at + length])))
        at += length
    return out


def write_shards(collection: Collection, out_dir: Path, shard_size: int = 100_000, scale: float = 100,
                 metadata: dict | None = None) -> None:
    """JsonVectorCollection shards ``part-NNNNN.jsonl`` (empty contents) and ``metadata.json``, installed at once."""
    from lsr_lucene.progress import progress_bar

    vocab = np.asarray(collection.vocab, dtype=object)
    n = collection.num_docs
    with atomic_output(out_dir, overwrite=True, directory=True) as tmp:
        with progress_bar(total=n, desc=f"writing {out_dir.name}", unit=" docs", file=sys.stderr) as bar:
            for shard, lo in enumerate(range(0, n, shard_size)):
                with open(tmp / f"part-{shard:05d}.jsonl", "w", encoding="utf-8") as out:
                    for i in range(lo, min(n, lo + shard_size)):
                        a, b = collection.indptr[i], collection.indptr[i + 1]
                        vector = dict(zip(vocab[collection.terms[a:b]].tolist(), collection.weights[a:b].tolist()))
                        out.write(json.dumps({"id": DOC_ID.format(i), "contents": "", "vector": vector},
                                             ensure_ascii=False) + "\n")
                bar.update(min(n, lo + shard_size) - lo)
        meta = {"scale": scale, "documents": n, "postings": int(len(collection.terms)), **(metadata or {})}
        (tmp / "metadata.json").write_text(json.dumps(meta, indent=2) + "\n")


def write_positions(pool: Pool, collection: Collection, buckets: Buckets, path: Path, chunk: int = 2000) -> None:
    """Per-position token weights JSONL ``{"id", "tokens"}`` of every synthetic document (for the sidecar)."""
    from lsr_lucene.progress import progress_bar

    n = collection.num_docs
    with atomic_output(path, overwrite=True) as tmp:
        with open(tmp, "w", encoding="utf-8") as out:
            for lo in progress_bar(range(0, n, chunk), desc="writing positions", unit=" chunks", file=sys.stderr):
                docs = np.arange(lo, min(n, lo + chunk))
                for doc, tokens in zip(docs, positions_of(pool, collection, buckets, docs)):
                    out.write(json.dumps({"id": DOC_ID.format(int(doc)), "tokens": [[t, round(w, 5)] for t, w in tokens]},
                                         ensure_ascii=False) + "\n")


def save_arrays(collection: Collection, path: Path) -> None:
    """The collection as an ``.npz`` (CSR arrays and vocabulary) that engines load quickly."""
    with atomic_output(path, overwrite=True) as tmp:
        with open(tmp, "wb") as out:
            np.savez(out, indptr=collection.indptr, terms=collection.terms, weights=collection.weights,
                     source=collection.source, vocab=np.asarray(collection.vocab, dtype=object).astype(str),
                     seed=np.int64(collection.seed))


def load_arrays(path: Path) -> Collection:
    """A collection saved by :func:`save_arrays`."""
    with np.load(path) as data:
        return Collection(data["vocab"].tolist(), data["indptr"], data["terms"], data["weights"], data["source"],
                          int(data["seed"]))
