"""Long documents with learned sparse retrieval: segmenting, aggregations (first, rep-max/sum/mean, score-max),
ExactSDM (Lucene window clauses over a positional payload field) and SoftSDM (reranker), after Nguyen et al.
(SIGIR'23, paper 001).

Pipeline (each step cached and resumable under one work directory)::

    lsr-lucene longdocs segment   --corpus C --output W/segments.jsonl [--max-tokens 400] [--max-segments N]
    lsr-lucene longdocs encode    --segments W/segments.jsonl --output W/encoded [--limit N] [--top-k 8]
    lsr-lucene longdocs index     --encoded W/encoded --index W/index-segments        (segments + positional field)
    lsr-lucene longdocs aggregate --encoded W/encoded --method rep-max --segments 3 --index W/index-rep-max-3
                                  (then `lsr-lucene search --index W/index-rep-max-3 ...`)
    lsr-lucene longdocs fit       --index W/index-segments --method exact-sdm --collection fire2017 --segments 3
                                  (λ fitted on the training half, saved in W/index-segments/sdm_lambdas.json)
    lsr-lucene longdocs search    --index W/index-segments --method score-max|exact-sdm|soft-sdm --segments 3
                                  (--topics T | --collection C) --output run [--lambdas a,b,c] [--full]
    lsr-lucene longdocs experiment --collection fire2017 ...   (the whole sweep behind scripts/run_longdocs.sh)

Segment ids are ``docid@@k`` (k from 0). "First k segments" means segment numbers < k.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

import numpy as np

from .errors import InputError
from .segment import parse_segment_id

AGGREGATIONS = ("first", "rep-max", "rep-sum", "rep-mean")
METHODS = AGGREGATIONS + ("score-max", "exact-sdm", "soft-sdm")
DEFAULT_SHARD = 500
STATE = "state.json"
SEGMENT_COUNTS = (1, 2, 3, 4, 5, 8)  # swept below the cap ("all"): the issue's 1..5, and 8 to show the trend


# =========================================================================================================
# encoding segments (vectors, per-position own weights, optional SoftSDM top-k), resumable by shard
# =========================================================================================================
def _read_segments(path: str | Path) -> Iterator[tuple[str, str]]:
    from .io_utils import open_jsonl

    for line_no, obj in open_jsonl(path):
        seg_id, text = obj.get("id"), obj.get("text")
        if not isinstance(seg_id, str) or not isinstance(text, str):
            raise InputError(f"{path}:{line_no}: expected {{\"id\": str, \"text\": str}}")
        yield seg_id, text


def _shards(items: Iterable, size: int) -> Iterator[list]:
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _write_text_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class _ReusedEncoding:
    """Lines and top-k entries of segments already encoded elsewhere with the same settings (raising a cap
    from 8 to 16 segments then encodes only segments 8..15)."""

    def __init__(self, directory: str | Path, settings: Mapping, top_k: int):
        old = check_encoded(directory)
        changed = [k for k in settings if k != "limit" and old.get(k) != settings[k]]
        if changed:
            raise InputError(f"{directory}: cannot reuse, encoded with other settings "
                             f"({', '.join(f'{k}={old.get(k)!r}' for k in changed)})")
        self.vectors = self._lines(Path(directory) / "vectors")
        self.tokens = self._lines(Path(directory) / "tokens")
        self.store = None
        if top_k and any((Path(directory) / "soft").glob("soft-*.npz")):
            from .softsdm import TopKStore

            self.store = TopKStore(Path(directory) / "soft")

    @staticmethod
    def _lines(folder: Path) -> dict[str, str]:
        return {json.loads(line)["id"]: line for part in sorted(folder.glob("part-*.jsonl"))
                for line in part.open(encoding="utf-8")}

    def __contains__(self, seg_id: str) -> bool:
        return seg_id in self.vectors and seg_id in self.tokens and (self.store is None or seg_id in self.store)

    def top(self, seg_id: str, top_k: int) -> tuple[np.ndarray, np.ndarray]:
        """The stored entries back as (term ids [L, k], weights [L, k]) as ``position_topk`` gives them."""
        length, pos, term, weight = self.store.get(seg_id)
        ids = np.zeros((length, top_k), dtype=np.int32)
        weights = np.zeros((length, top_k), dtype=np.float16)
        slot = np.zeros(length, dtype=np.int64)
        for p, t, w in zip(pos.tolist(), term.tolist(), weight.tolist()):
            ids[p, slot[p]], weights[p, slot[p]] = t, w
            slot[p] += 1
        return ids, weights


def encode_segments_dir(segments: str | Path, output: str | Path, encoder, scale: float = 100, top_k: int = 0,
                        shard_size: int = DEFAULT_SHARD, batch_size: int = 16, limit: int | None = None,
                        reuse: str | Path | None = None) -> dict:
    """Encode a segments JSONL into ``output``/{vectors,tokens,soft}, shard by shard; rerunning resumes.

    ``vectors/`` is a JsonVectorCollection (×scale integer impacts) with ``metadata.json``; ``tokens/`` holds
    per-position own-token weights (``{"id", "tokens": [[tok, w], ...]}``); ``soft/`` the SoftSDM top-k store.
    ``limit`` encodes only the first ``limit`` segments of each document (segment number < limit).
    ``reuse`` names a complete encoded directory with the same settings (another limit) whose segments are
    copied instead of encoded again.
    """
    from tqdm import tqdm

    from .softsdm import encode_segments, write_store
    from .vectors import quantise

    out = Path(output)
    for sub in ("vectors", "tokens", "soft"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    settings = {**encoder.settings(), "scale": scale, "shard_size": shard_size,
                "segments": str(Path(segments).resolve()), "limit": limit}
    state_file = out / STATE
    if state_file.exists():
        old = json.loads(state_file.read_text())["settings"]
        changed = [k for k in settings if old.get(k) != settings[k]]
        if changed:
            raise InputError(f"{out}: encoded with other settings ({', '.join(f'{k}={old.get(k)!r}' for k in changed)}); "
                             "use the same settings to resume, or another --output")
    else:
        _write_text_atomic(state_file, json.dumps({"settings": settings, "complete": False}, indent=2))
    reused = _ReusedEncoding(reuse, settings, top_k) if reuse else None
    items = ((s, t) for s, t in _read_segments(segments) if limit is None or parse_segment_id(s)[1] < limit)
    total = sum(1 for s, _ in _read_segments(segments) if limit is None or parse_segment_id(s)[1] < limit)
    progress = tqdm(total=total, desc="encoding segments", unit=" seg", file=sys.stderr, dynamic_ncols=True)
    started, encoded = time.perf_counter(), 0
    for number, chunk in enumerate(_shards(items, shard_size)):
        vec_file = out / "vectors" / f"part-{number:05d}.jsonl"
        if vec_file.exists():  # complete shard (vectors are written last)
            progress.update(len(chunk))
            continue
        todo = [(s, t) for s, t in chunk if reused is None or s not in reused]
        fresh = dict(zip((s for s, _ in todo),
                         encode_segments(encoder, [t for _, t in todo], top_k=top_k, batch_size=batch_size)
                         if todo else []))
        token_lines, vector_lines, tops = [], [], []
        for s, _ in chunk:
            if s not in fresh:
                token_lines.append(reused.tokens[s])
                vector_lines.append(reused.vectors[s])
                tops.append(reused.top(s, top_k) if top_k > 0 else None)
                continue
            vec, tokens, top = fresh[s]
            token_lines.append(json.dumps({"id": s, "tokens": [[t, round(w, 4)] for t, w in tokens]},
                                          ensure_ascii=False) + "\n")
            vector_lines.append(json.dumps({"id": s, "contents": "", "vector": quantise(vec, scale, s)},
                                           ensure_ascii=False) + "\n")
            tops.append(top)
        _write_text_atomic(out / "tokens" / f"part-{number:05d}.jsonl", "".join(token_lines))
        if top_k > 0:
            write_store(out / "soft" / f"soft-{number:05d}.npz", [s for s, _ in chunk], tops)
        _write_text_atomic(vec_file, "".join(vector_lines))
        encoded += len(todo)
        progress.update(len(chunk))
    progress.close()
    meta = {**encoder.settings(), "scale": scale, "segments": total, "limit": limit}
    _write_text_atomic(out / "vectors" / "metadata.json", json.dumps(meta, indent=2) + "\n")
    _write_text_atomic(state_file, json.dumps({"settings": settings, "complete": True, "segments": total}, indent=2))
    elapsed = time.perf_counter() - started
    return {"segments": total, "encoded_now": encoded, "seconds": round(elapsed, 1),
            "segments_per_second": round(encoded / elapsed, 2) if encoded and elapsed else None}


def encode_topk(segments: str | Path, encoded: str | Path, encoder, wanted: set[str] | None = None, top_k: int = 8,
                shard_size: int = DEFAULT_SHARD, batch_size: int = 16) -> dict:
    """Add the SoftSDM top-k store for the ``wanted`` segments (all encoded ones when None) to ``encoded``/soft,
    skipping segments already stored; resumable (one ``soft-extra-*.npz`` per finished chunk)."""
    from tqdm import tqdm

    from .softsdm import TopKStore, position_topk, write_store

    settings = check_encoded(encoded)
    soft = Path(encoded) / "soft"
    soft.mkdir(exist_ok=True)
    stored: set[str] = set()
    if any(soft.glob("soft-*.npz")):
        store = TopKStore(soft)
        stored = set(store._where)
        if store.top_k not in (0, top_k):
            raise InputError(f"{soft}: holds top-{store.top_k} entries, not top-{top_k}; use another directory")
    limit = settings.get("limit")
    todo = [(s, t) for s, t in _read_segments(segments)
            if (limit is None or parse_segment_id(s)[1] < limit) and s not in stored and (wanted is None or s in wanted)]
    start = len(list(soft.glob("soft-extra-*.npz")))
    progress = tqdm(total=len(todo), desc="SoftSDM top-k", unit=" seg", file=sys.stderr, dynamic_ncols=True)
    started = time.perf_counter()
    for number, chunk in enumerate(_shards(todo, shard_size), start):
        tops = position_topk(encoder, [t for _, t in chunk], top_k, batch_size)
        write_store(soft / f"soft-extra-{number:05d}.npz", [s for s, _ in chunk], tops)
        progress.update(len(chunk))
    progress.close()
    return {"segments": len(todo), "already_stored": len(stored), "seconds": round(time.perf_counter() - started, 1)}


def check_encoded(encoded: str | Path) -> dict:
    """Settings of a complete encoded directory (InputError when missing or unfinished)."""
    state_file = Path(encoded) / STATE
    if not state_file.exists():
        raise InputError(f"{encoded}: not an encoded segments directory (no {STATE}); run longdocs encode")
    state = json.loads(state_file.read_text())
    if not state.get("complete"):
        raise InputError(f"{encoded}: encoding is unfinished; rerun longdocs encode to resume it")
    return state["settings"]


def write_positions_file(encoded: str | Path, output: str | Path) -> int:
    """One positional token file for the index: zero-weight tokens become "" (kept as a gap, never matched,
    like the paper's exact-match mask); returns the number of segments."""
    count = 0
    tmp = Path(output).with_name(f".{Path(output).name}.tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        for part in sorted((Path(encoded) / "tokens").glob("part-*.jsonl")):
            for line in part.open(encoding="utf-8"):
                obj = json.loads(line)
                obj["tokens"] = [[t if w > 0 else "", w] for t, w in obj["tokens"]]
                out.write(json.dumps(obj, ensure_ascii=False) + "\n")
                count += 1
    os.replace(tmp, output)
    return count


def read_tokens(encoded: str | Path, wanted: set[str] | None = None) -> dict[str, list[tuple[str, float]]]:
    """Per-position own-token weights of the encoded segments (only ``wanted`` ids when given)."""
    out = {}
    for part in sorted((Path(encoded) / "tokens").glob("part-*.jsonl")):
        for line in part.open(encoding="utf-8"):
            obj = json.loads(line)
            if wanted is None or obj["id"] in wanted:
                out[obj["id"]] = [(t, float(w)) for t, w in obj["tokens"]]
    return out


def read_segment_vectors(encoded: str | Path) -> Iterator[tuple[str, dict[str, int]]]:
    """(segment id, integer impact vector) of every encoded segment, in corpus order."""
    from .vectors import read_vectors

    yield from read_vectors(Path(encoded) / "vectors")


# =========================================================================================================
# collections: JSONL with long text, FIRE 2017, ir_datasets (MS MARCO Document, Robust04 descriptions)
# =========================================================================================================
CITATION = "[?CITATION?]"
QUERY_MODES = ("citations", "head", "both")
IRDS_COLLECTIONS = {  # name -> (ir_datasets id, query field)
    "msmarco-document": ("msmarco-document/dev", "text"),
    "robust04": ("disks45/nocr/trec-robust-2004", "description"),
}


@dataclass
class Collection:
    """A long-document test collection: corpus spec, queries as one or more passages, qrels."""

    name: str
    corpus: str
    queries: dict[str, list[str]]
    qrels: dict[str, dict[str, int]]
    qrels_path: str | None = None
    note: str = ""

    def bm25_topics(self) -> dict[str, str]:
        """One text per query for Anserini (the passages joined)."""
        return {qid: " ".join(passages) for qid, passages in self.queries.items()}


def citation_contexts(text: str, words: int = 40) -> list[str]:
    """The ``words`` words before and after each [?CITATION?] marker (markers removed), one passage each."""
    tokens = text.replace(CITATION, f" {CITATION} ").split()
    out = []
    for i, token in enumerate(tokens):
        if token == CITATION:
            window = [t for t in tokens[max(0, i - words):i + words + 1] if t != CITATION]
            if window:
                out.append(" ".join(window))
    return out


def head_passage(text: str, tokenizer, tokens: int = 512) -> str:
    """The longest run of leading whole words (markers removed) that fits in ``tokens`` WordPiece tokens."""
    words = " ".join(text.replace(CITATION, " ").split()).split()[:tokens]  # a word is at least one token
    joined = " ".join(words)
    try:
        enc = tokenizer(joined, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    except (NotImplementedError, TypeError, ValueError):  # slow tokenizers have no offsets
        enc = None
    if enc is not None and "offset_mapping" in enc:
        if len(enc["input_ids"]) <= tokens:
            return joined
        cut = enc["offset_mapping"][tokens][0]  # start of the first token that does not fit
        # keep whole words only: drop the word the cut falls into
        return joined[:cut].rsplit(" ", 1)[0] if not joined[cut - 1:cut].isspace() else joined[:cut].rstrip()

    def fits(n: int) -> bool:
        return len(tokenizer(" ".join(words[:n]), add_special_tokens=False, verbose=False)["input_ids"]) <= tokens

    lo, hi = 0, len(words)
    while lo < hi:  # binary search for the largest n that fits
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo])


def load_fire2017(folder: str | Path, query_mode: str = "citations", context_words: int = 40,
                  head_tokens: int = 512, tokenizer=None) -> Collection:
    """FIRE 2017 precedent retrieval: queries are whole current cases; we use the text around each
    [?CITATION?] (``citations``: 2×``context_words`` words per marker, one passage each), the first
    ``head_tokens`` model tokens (``head``), or both. Queries without a marker fall back to the head."""
    from .eval import read_qrels
    from .io_utils import open_jsonl

    folder = Path(folder)
    if query_mode not in QUERY_MODES:
        raise InputError(f"query mode must be one of {', '.join(QUERY_MODES)}, got {query_mode!r}")
    for name in ("corpus.jsonl", "queries.jsonl", "qrels.txt"):
        if not (folder / name).is_file():
            raise InputError(f"{folder / name}: missing (FIRE 2017 folder needs corpus.jsonl, queries.jsonl, qrels.txt)")
    if tokenizer is None and query_mode != "citations":
        from transformers import AutoTokenizer

        from .models import resolve

        tokenizer = AutoTokenizer.from_pretrained(resolve("splade-tiny"))
    queries, fallback = {}, 0
    for line_no, obj in open_jsonl(folder / "queries.jsonl"):
        qid, text = obj.get("id"), obj.get("text")
        if not isinstance(qid, str) or not isinstance(text, str):
            raise InputError(f"{folder / 'queries.jsonl'}:{line_no}: expected {{\"id\", \"text\"}} strings")
        passages = citation_contexts(text, context_words) if query_mode in ("citations", "both") else []
        if query_mode in ("head", "both") or not passages:
            if not passages and query_mode == "citations":
                fallback += 1
            if tokenizer is None:
                from transformers import AutoTokenizer

                from .models import resolve

                tokenizer = AutoTokenizer.from_pretrained(resolve("splade-tiny"))
            passages = passages + [head_passage(text, tokenizer, head_tokens)]
        queries[qid] = [p for p in passages if p.strip()]
    note = {"citations": f"{2 * context_words}-word windows around each [?CITATION?], one query passage each",
            "head": f"first {head_tokens} WordPiece tokens of the query case",
            "both": f"{2 * context_words}-word citation windows plus the first {head_tokens} tokens"}[query_mode]
    if fallback:
        note += f"; {fallback} queries without a marker use the first {head_tokens} tokens"
    return Collection("fire2017", str(folder / "corpus.jsonl"), queries, read_qrels(folder / "qrels.txt"),
                      str(folder / "qrels.txt"), note)


def load_jsonl_collection(corpus: str, topics: str, qrels: str, name: str | None = None) -> Collection:
    """Any collection of long documents: corpus JSONL (long "text"), topics (TSV/JSONL/TREC), TREC qrels."""
    from .eval import read_qrels
    from .topics import read_topics

    return Collection(name or Path(corpus).stem, corpus, {q: [t] for q, t in read_topics(topics).items()},
                      read_qrels(qrels), qrels, "topics as given")


def load_irds_collection(name: str, field_name: str | None = None) -> Collection:
    """MS MARCO Document (dev) or Robust04 (description field) through ir_datasets, when its data is available."""
    from .corpus import irds_iter, load_irds

    if name not in IRDS_COLLECTIONS:
        raise InputError(f"unknown collection {name!r} (known: fire2017, {', '.join(IRDS_COLLECTIONS)}, or a folder)")
    dataset_id, default_field = IRDS_COLLECTIONS[name]
    field_name = field_name or default_field
    dataset = load_irds(dataset_id, "queries")
    queries = {}
    for query in irds_iter(dataset_id, dataset.queries_iter()):
        text = getattr(query, field_name, None)
        if not isinstance(text, str):
            raise InputError(f"irds:{dataset_id}: queries have no {field_name!r} field")
        queries[str(query.query_id)] = [text.strip()]
    qrels: dict[str, dict[str, int]] = {}
    for qrel in irds_iter(dataset_id, dataset.qrels_iter()):
        qrels.setdefault(str(qrel.query_id), {})[str(qrel.doc_id)] = int(qrel.relevance)
    return Collection(name, f"irds:{dataset_id}", queries, qrels, None, f"ir_datasets {dataset_id}, field {field_name}")


def load_collection(spec: str, query_mode: str = "citations", data_root: str | Path | None = None,
                    topics: str | None = None, qrels: str | None = None, field_name: str | None = None) -> Collection:
    """``fire2017`` (or a FIRE-shaped folder), ``msmarco-document``, ``robust04``, or a corpus JSONL with --topics/--qrels."""
    root = Path(data_root) if data_root else Path(__file__).resolve().parents[2] / "shared" / "data"
    if spec == "fire2017":
        return load_fire2017(root / "fire2017", query_mode)
    if spec in IRDS_COLLECTIONS:
        return load_irds_collection(spec, field_name)
    path = Path(spec)
    if path.is_dir() and (path / "queries.jsonl").is_file() and (path / "qrels.txt").is_file() and not topics:
        return load_fire2017(path, query_mode)
    if topics and qrels:
        return load_jsonl_collection(spec, topics, qrels)
    raise InputError(f"{spec}: not a known collection; give fire2017, msmarco-document, robust04, a FIRE-style "
                     "folder, or a corpus JSONL with --topics and --qrels")


# =========================================================================================================
# queries: one vector (passages combined) + per-passage token sequences for SDM n-grams
# =========================================================================================================
QUERY_COMBINE = ("sum", "max")


@dataclass
class Query:
    """An encoded query: per-passage sparse vectors and per-passage (token, own weight) sequences."""

    qid: str
    vectors: list[dict[str, float]]
    sequences: list[list[tuple[str, float]]]

    def vector(self, combine: str = "sum") -> dict[str, float]:
        """The passages' vectors summed or max-pooled into one query vector."""
        if combine not in QUERY_COMBINE:
            raise InputError(f"query combination must be one of {', '.join(QUERY_COMBINE)}, got {combine!r}")
        out: dict[str, float] = {}
        for vec in self.vectors:
            for term, weight in vec.items():
                out[term] = out.get(term, 0.0) + weight if combine == "sum" else max(out.get(term, 0.0), weight)
        return out


def encode_queries(queries: Mapping[str, Sequence[str]], encoder, max_length: int = 512,
                   cache: str | Path | None = None) -> dict[str, Query]:
    """Encode every passage of every query (vector and token weights); cached in ``cache`` JSON when given."""
    if cache and Path(cache).exists():
        data = json.loads(Path(cache).read_text())
        if set(data) == set(queries):
            return {q: Query(q, d["vectors"], [[(t, w) for t, w in seq] for seq in d["sequences"]])
                    for q, d in data.items()}
    qids = [q for q in queries for _ in queries[q]]
    texts = [p for q in queries for p in queries[q]]
    saved = encoder.query_max_length
    encoder.query_max_length = max_length
    try:
        vectors = encoder.encode_queries(texts, batch_size=32)
    finally:
        encoder.query_max_length = saved
    sequences = encoder.token_weights(texts, max_length=max_length)
    out: dict[str, Query] = {q: Query(q, [], []) for q in queries}
    for qid, vec, seq in zip(qids, vectors, sequences):
        out[qid].vectors.append({t: round(w, 5) for t, w in vec.items()})
        out[qid].sequences.append([(t, round(w, 5)) for t, w in seq])
    if cache:
        Path(cache).parent.mkdir(parents=True, exist_ok=True)
        _write_text_atomic(Path(cache), json.dumps({q: {"vectors": v.vectors, "sequences": v.sequences}
                                                    for q, v in out.items()}))
    return out


def quantised_query(query: Query, scale: float, combine: str) -> dict[str, int]:
    """The combined query vector as signed integers round(w × scale) (the index's quantisation)."""
    from .vectors import quantise_query

    return quantise_query(query.vector(combine), scale, query.qid)


# =========================================================================================================
# indexes: segments (+ positional field), and one-vector-per-document aggregations
# =========================================================================================================
def build_segment_index(encoded: str | Path, index: str | Path, threads: int = 2, overwrite: bool = False) -> dict:
    """Impact index of the segments (ids docid@@k) with the positional payload field for WindowQuery."""
    from .index import build_impact_index

    check_encoded(encoded)
    positions = Path(index).with_name(Path(index).name + ".positions.jsonl")
    write_positions_file(encoded, positions)
    try:
        meta = build_impact_index(Path(encoded) / "vectors", index, threads=threads, overwrite=overwrite,
                                  positions=positions)
    finally:
        positions.unlink(missing_ok=True)
    return meta


def aggregate_vectors(segment_vectors: Iterable[tuple[str, Mapping[str, int]]], method: str,
                      k: int | None) -> Iterator[tuple[str, dict[str, int]]]:
    """One integer vector per document from its first ``k`` segment vectors (segments grouped by docid, in order).

    first: segment 0; rep-max: term-wise max; rep-sum: term-wise sum (its dot product is the sum of the
    segment scores); rep-mean: the sum divided by the number of segments used, rounded (0 dropped).
    """
    if method not in AGGREGATIONS:
        raise InputError(f"aggregation must be one of {', '.join(AGGREGATIONS)}, got {method!r}")
    limit = 1 if method == "first" else k
    current, vectors = None, []

    def emit():
        if method in ("first", "rep-max"):
            out: dict[str, int] = {}
            for vec in vectors:
                for t, w in vec.items():
                    if w > out.get(t, 0):
                        out[t] = w
            return out
        total: dict[str, int] = {}
        for vec in vectors:
            for t, w in vec.items():
                total[t] = total.get(t, 0) + w
        if method == "rep-sum":
            return total
        n = len(vectors)
        return {t: int(round(w / n)) for t, w in total.items() if round(w / n) != 0}

    for seg_id, vector in segment_vectors:
        doc_id, number = parse_segment_id(seg_id)
        if doc_id != current:
            if current is not None and vectors:
                yield current, emit()
            current, vectors = doc_id, []
        if limit is None or number < limit:
            vectors.append(vector)
    if current is not None and vectors:
        yield current, emit()


def build_aggregate_index(encoded: str | Path, method: str, k: int | None, index: str | Path, threads: int = 2,
                          overwrite: bool = False) -> dict:
    """Index one aggregated vector per document (rep-max/sum/mean of the first k segments, or the first)."""
    import shutil

    from .index import build_impact_index

    check_encoded(encoded)
    staging = Path(index).with_name(f".{Path(index).name}.vectors")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    try:
        with open(staging / "part-00000.jsonl", "w", encoding="utf-8") as out:
            for doc_id, vector in aggregate_vectors(read_segment_vectors(encoded), method, k):
                if vector:
                    out.write(json.dumps({"id": doc_id, "contents": "", "vector": vector}, ensure_ascii=False) + "\n")
        meta = json.loads((Path(encoded) / "vectors" / "metadata.json").read_text())
        meta.update({"aggregation": method, "segments_used": k})
        (staging / "metadata.json").write_text(json.dumps(meta, indent=2) + "\n")
        return build_impact_index(staging, index, threads=threads, overwrite=overwrite)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# =========================================================================================================
# runs: collapsing segment hits (score-max), SDM features, reranking
# =========================================================================================================
def read_run_lines(path: str | Path) -> dict[str, list[tuple[str, float]]]:
    """``{qid: [(docid, score), ...]}`` in file order."""
    out: dict[str, list[tuple[str, float]]] = defaultdict(list)
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            cols = line.split()
            if len(cols) == 6:
                out[cols[0]].append((cols[2], float(cols[4])))
    return dict(out)


def collapse(segment_scores: Mapping[str, float], k: int | None) -> dict[str, float]:
    """score-max: each document's best score over its segments numbered < k (all when k is None)."""
    out: dict[str, float] = {}
    for seg_id, score in segment_scores.items():
        doc_id, number = parse_segment_id(seg_id)
        if k is None or number < k:
            if doc_id not in out or score > out[doc_id]:
                out[doc_id] = score
    return out


def write_run(scores: Mapping[str, Mapping[str, float]], output: str | Path, tag: str, hits: int = 1000,
              qids: Sequence[str] | None = None) -> None:
    """A TREC run (score descending, ties by docid ascending), top ``hits`` per query, written atomically."""
    from .sdm import rank

    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(f".{output.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        for qid in (qids if qids is not None else scores):
            docs = scores.get(qid, {})
            for i, doc_id in enumerate(rank(docs)[:hits], 1):
                out.write(f"{qid} Q0 {doc_id} {i} {docs[doc_id]:.6f} {tag}\n")
    os.replace(tmp, output)


def with_tail(reranked: Mapping[str, float], first_stage: Mapping[str, float], hits: int = 1000) -> dict[str, float]:
    """The reranked documents, then the rest of the first-stage ranking below them (order kept), ``hits`` in all."""
    from .sdm import rank

    out = dict(reranked)
    if len(out) >= hits:
        return out
    floor = min(out.values(), default=0.0)
    tail = [d for d in rank(first_stage) if d not in out][:hits - len(out)]
    for i, doc_id in enumerate(tail, 1):
        out[doc_id] = floor - i
    return out


def segment_hits(index: str | Path, queries: Mapping[str, Mapping[str, float]], hits: int, threads: int = 2
                 ) -> dict[str, dict[str, float]]:
    """Impact scores of every matching segment (up to ``hits``) per query, as {qid: {segment id: score}}."""
    import tempfile

    from .queries import SpecSearcher

    specs = [{"qid": q, "terms": dict(v)} for q, v in queries.items() if v]
    with tempfile.TemporaryDirectory() as tmp, SpecSearcher(index) as searcher:
        run = Path(tmp) / "segments.run"
        searcher.search_to_run(specs, run, k=hits, threads=threads, tag="segments")
        return {q: dict(lines) for q, lines in read_run_lines(run).items()}


@dataclass
class SdmSettings:
    """Query-side SDM settings: n-gram size, unordered window width, clause cap."""

    ngram: int = 2
    width: int = 8
    max_clauses: int | None = None
    min_weight: float = 0.0


def exact_features(searcher, query: Query, seg_ids: Sequence[str], settings: SdmSettings
                   ) -> dict[str, tuple[float, float]]:
    """(O, U) of each segment through Lucene: Σ ordered and Σ unordered WindowQuery scores (0 without match)."""
    from .sdm import query_clauses, window_dicts

    clauses = query_clauses(query.sequences, settings.ngram, settings.min_weight, settings.max_clauses)
    out = {s: [0.0, 0.0] for s in seg_ids}
    if not clauses or not seg_ids:
        return {s: (0.0, 0.0) for s in seg_ids}
    for column, ordered in ((0, True), (1, False)):
        windows = window_dicts(clauses, ordered, settings.width)
        if not windows:
            continue
        scores = searcher.score({"qid": query.qid, "terms": {}, "windows": windows}, list(seg_ids))
        for s, value in zip(seg_ids, scores):
            out[s][column] = float(value)
    return {s: (v[0], v[1]) for s, v in out.items()}


def soft_features_for(store, own: Mapping[str, tuple], query: Query, seg_ids: Sequence[str], settings: SdmSettings,
                      vocab: Mapping[str, int]) -> dict[str, tuple[float, float]]:
    """(soft O, soft U) of each stored segment through the top-k store (SoftSDM, eqs. 5-6);
    ``own``: segment id -> :func:`lsr_lucene.softsdm.own_arrays` of its tokens."""
    from .sdm import query_clauses
    from .softsdm import SoftQuery, soft_features

    clauses = query_clauses(query.sequences, settings.ngram, settings.min_weight, settings.max_clauses)
    if not clauses:
        return {s: (0.0, 0.0) for s in seg_ids}
    soft = SoftQuery(clauses, vocab, settings.width)
    out = {s: (0.0, 0.0) for s in seg_ids}
    for seg_id, o, u in soft_features(soft, store, own, seg_ids):
        out[seg_id] = (o, u)
    return out


def read_own_arrays(encoded: str | Path, wanted: set[str] | None, vocab: Mapping[str, int]) -> dict[str, tuple]:
    """Own-token (vocabulary ids, weights) arrays of the wanted encoded segments, for SoftSDM."""
    from .softsdm import own_arrays

    return {s: own_arrays(toks, vocab) for s, toks in read_tokens(encoded, wanted).items()}


def feature_table(t_scores: Mapping[str, float], extra: Mapping[str, tuple[float, float]],
                  norm: float) -> dict[str, dict[int, tuple[float, float, float]]]:
    """docid -> segment number -> (T, O, U), T = impact score / ``norm`` (float units)."""
    out: dict[str, dict[int, tuple[float, float, float]]] = defaultdict(dict)
    for seg_id in set(extra) | set(t_scores):
        doc_id, number = parse_segment_id(seg_id)
        o, u = extra.get(seg_id, (0.0, 0.0))
        out[doc_id][number] = (t_scores.get(seg_id, 0.0) / norm, o, u)
    return dict(out)


# =========================================================================================================
# the experiment: every method × number of segments, λ fitted on half the queries, baselines, table, plot
# =========================================================================================================
MEASURES = ("ndcg_cut_10", "map", "recall_100")


def split_queries(qids: Iterable[str]) -> tuple[list[str], list[str]]:
    """Fixed split of the judged queries: sorted ids, even positions train, odd positions test."""
    ordered = sorted(qids)
    return ordered[0::2], ordered[1::2]


def write_qrels(qrels: Mapping[str, Mapping[str, int]], qids: Iterable[str], path: str | Path) -> Path:
    """TREC qrels of the given queries only (so trec_eval -c averages over exactly them)."""
    path = Path(path)
    lines = [f"{q} 0 {d} {g}\n" for q in sorted(qids) for d, g in sorted(qrels.get(q, {}).items())]
    _write_text_atomic(path, "".join(lines))
    return path


def segment_label(k: int | None, cap: int | None) -> str:
    """Column label of a segment count: "1".."5", or "all" (with the cap when segments were capped)."""
    if k is None or (cap is not None and k == cap):
        return f"all({cap})" if cap is not None else "all"
    return str(k)


def _segment_ids_by_doc(encoded: str | Path) -> dict[str, list[str]]:
    """Indexed (non-empty) segment ids of each document, in order."""
    out: dict[str, list[str]] = defaultdict(list)
    for seg_id, vector in read_segment_vectors(encoded):
        if vector:
            out[parse_segment_id(seg_id)[0]].append(seg_id)
    return dict(out)


def _truncated_corpus(segments: str | Path, k: int | None, output: Path) -> Path:
    """Documents made of their first k segments (for the BM25 baselines at the same length)."""
    if output.exists():
        return output
    docs: dict[str, list[str]] = defaultdict(list)
    for seg_id, text in _read_segments(segments):
        doc_id, number = parse_segment_id(seg_id)
        if k is None or number < k:
            docs[doc_id].append(text)
    output.parent.mkdir(parents=True, exist_ok=True)
    _write_text_atomic(output, "".join(json.dumps({"id": d, "title": "", "text": " ".join(t)}, ensure_ascii=False)
                                       + "\n" for d, t in docs.items()))
    return output


def _log(message: str) -> None:
    print(f"[longdocs {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass
class ExperimentConfig:
    """Everything the sweep needs (the ``longdocs experiment`` options)."""

    collection: str = "fire2017"
    work: str = "work/fire2017"
    output: str = "runs/longdocs"
    data: str | None = None
    topics: str | None = None
    qrels: str | None = None
    query_mode: str = "citations"
    query_combine: str = "auto"
    model: str = "splade-tiny"
    max_tokens: int = 400
    max_segments: int | None = 16
    top_k: int = 8
    scale: float = 100
    ngram: int = 2
    width: int = 8
    max_clauses: int | None = None
    depth: int = 1000
    soft_depth: int = 1000
    fit_metric: str = "map"
    threads: int = 2
    baselines: bool = True
    soft: bool = True
    methods: tuple = ()


class Experiment:
    """The long-document sweep of one collection; every artefact is cached under ``work``."""

    def __init__(self, cfg: ExperimentConfig):
        self.cfg = cfg
        self.work = Path(cfg.work)
        self.work.mkdir(parents=True, exist_ok=True)
        self.out = Path(cfg.output)
        self.out.mkdir(parents=True, exist_ok=True)
        self.coll = load_collection(cfg.collection, cfg.query_mode, cfg.data, cfg.topics, cfg.qrels)
        judged = [q for q in self.coll.queries if q in self.coll.qrels]
        if len(judged) < 2:
            raise InputError(f"{cfg.collection}: need at least 2 judged queries to fit λ on half, have {len(judged)}")
        self.train, self.test = split_queries(judged)
        self.qids = sorted(self.coll.queries)
        self.qrels_test = write_qrels(self.coll.qrels, self.test, self.work / "qrels-test.txt")
        cap = cfg.max_segments
        self.cap = cap
        self.ks: list[int | None] = [k for k in SEGMENT_COUNTS if cap is None or k < cap] + [cap]
        self.tag = f"first{cap}" if cap else "all"
        self.runs = self.work / f"runs-{self.tag}"  # SDM candidates and "all" depend on the cap
        self.encoder = None
        self.results: list[dict] = []
        self.notes: list[str] = [f"queries: {self.coll.note}",
                                 f"split: {len(self.train)} training / {len(self.test)} test queries "
                                 "(sorted ids, alternating); figures are on the test half"]

    # ---- artefacts -----------------------------------------------------------------------------------
    def get_encoder(self):
        if self.encoder is None:
            from .encode import SparseEncoder

            self.encoder = SparseEncoder(model=self.cfg.model, max_length=512, threads=self.cfg.threads)
        return self.encoder

    def segments(self) -> Path:
        from .corpus import count_docs, read_corpus
        from .segment import Segmenter, write_segments

        path = self.work / f"segments-{self.cfg.max_tokens}.jsonl"
        if not path.exists():
            _log(f"segmenting {self.coll.corpus} into {path}")
            tokenizer = self.get_encoder().tokenizer
            counts = write_segments(read_corpus(self.coll.corpus), Segmenter(tokenizer, self.cfg.max_tokens), path,
                                    total=count_docs(self.coll.corpus))
            _write_text_atomic(path.with_suffix(".counts.json"), json.dumps(counts, indent=2))
        return path

    def encoded(self) -> Path:
        path = self.work / f"encoded-{self.tag}"
        state = path / STATE
        if not (state.exists() and json.loads(state.read_text()).get("complete")):
            reuse = self.smaller_encoding()
            _log(f"encoding segments into {path} (resumable{f', reusing {reuse}' if reuse else ''})")
            info = encode_segments_dir(self.segments(), path, self.get_encoder(), scale=self.cfg.scale,
                                       top_k=self.cfg.top_k if self.cfg.soft else 0, limit=self.cap, reuse=reuse)
            _log(f"encoded: {info}")
        return path

    def smaller_encoding(self) -> Path | None:
        """The complete encoding with the largest smaller cap (its segments need not be encoded again)."""
        found = []
        for state in self.work.glob("encoded-first*/" + STATE):
            info = json.loads(state.read_text())
            limit = info["settings"].get("limit")
            if info.get("complete") and limit and (self.cap is None or limit < self.cap):
                found.append((limit, state.parent))
        return max(found)[1] if found else None

    def segment_index(self) -> Path:
        path = self.work / f"index-segments-{self.tag}"
        if not path.exists():
            _log(f"indexing segments with positions into {path}")
            build_segment_index(self.encoded(), path, threads=self.cfg.threads)
        return path

    def queries(self) -> dict[str, Query]:
        if not hasattr(self, "_queries"):
            cache = self.work / f"queries-{self.cfg.query_mode}.json"
            self._queries = encode_queries(self.coll.queries, self.get_encoder(), cache=cache)
        return self._queries

    def run_path(self, name: str, k: int | None) -> Path:
        return self.runs / f"{name}-k{segment_label(k, self.cap).replace('(', '').replace(')', '')}.run"

    # ---- first stage: segment impact scores ---------------------------------------------------------
    def segment_scores(self, combine: str) -> dict[str, dict[str, float]]:
        from .index import read_index_metadata

        cache = self.work / f"segment-scores-{self.tag}-{self.cfg.query_mode}-{combine}.json"
        if cache.exists():
            return json.loads(cache.read_text())
        index = self.segment_index()
        hits = read_index_metadata(index).get("indexed", 100000)
        q_int = {q: quantised_query(v, self.cfg.scale, combine) for q, v in self.queries().items()}
        _log(f"impact scores of all segments ({combine}-combined queries)")
        scores = segment_hits(index, q_int, hits=hits, threads=self.cfg.threads)
        _write_text_atomic(cache, json.dumps(scores))
        return scores

    def choose_combine(self) -> str:
        from .sdm import average_precision

        if self.cfg.query_combine != "auto":
            return self.cfg.query_combine
        best, best_value, values = None, -1.0, {}
        for combine in QUERY_COMBINE:
            scores = self.segment_scores(combine)
            value = sum(average_precision(_ranked(collapse(scores.get(q, {}), 1)), self.coll.qrels[q])
                        for q in self.train) / len(self.train)
            values[combine] = round(value, 4)
            if value > best_value:
                best, best_value = combine, value
        self.notes.append(f"query passages combined by {best} (training MAP of score-max@1: {values})")
        return best

    # ---- methods ---------------------------------------------------------------------------------------
    def score_max(self, seg_scores, k) -> dict[str, dict[str, float]]:
        return {q: collapse(seg_scores.get(q, {}), k) for q in self.qids}

    def aggregation_runs(self, combine: str) -> None:
        from .search import plain_specs, run_specs

        q_int = {q: quantised_query(v, self.cfg.scale, combine) for q, v in self.queries().items()}
        first_run = self.run_path("first", None)
        for method in AGGREGATIONS:
            for k in ([None] if method == "first" else self.ks):
                if method != "first" and k == 1:
                    continue  # rep-*@1 is the first segment
                run = first_run if method == "first" else self.run_path(method, k)
                if run.exists():
                    continue
                index = self.work / ("index-first" if method == "first" else
                                     f"index-{method}-k{segment_label(k, self.cap).replace('(', '').replace(')', '')}")
                if not index.exists():
                    _log(f"indexing {method} of the first {segment_label(k, self.cap)} segments")
                    build_aggregate_index(self.encoded(), method, k, index, threads=self.cfg.threads)
                run_specs(index, plain_specs(q_int), run, hits=1000, threads=self.cfg.threads, tag=method)

    def candidates(self, seg_scores, depth: int) -> dict[str, set[str]]:
        """Union over the segment counts of each query's top-``depth`` score-max documents."""
        from .sdm import rank

        out: dict[str, set[str]] = {q: set() for q in self.qids}
        for k in self.ks:
            for q, docs in self.score_max(seg_scores, k).items():
                out[q].update(rank(docs)[:depth])
        return out

    def sdm_features(self, kind: str, seg_scores, combine: str) -> dict[str, dict]:
        """qid -> docid -> segment number -> (T, O, U) for the candidates (cached)."""
        from .queries import SpecSearcher

        settings = SdmSettings(self.cfg.ngram, self.cfg.width, self.cfg.max_clauses)
        name = (f"features-{kind}-{self.tag}-{self.cfg.query_mode}-{combine}-n{settings.ngram}-w{settings.width}"
                f"-c{settings.max_clauses or 'all'}-d{self.cfg.depth if kind == 'exact' else self.cfg.soft_depth}.json")
        cache = self.work / name
        meta = cache.with_suffix(".meta.json")
        if cache.exists():
            if meta.exists():
                self.notes.append(json.loads(meta.read_text())["note"])
            data = json.loads(cache.read_text())
            return {q: {d: {int(n): tuple(v) for n, v in segs.items()} for d, segs in docs.items()}
                    for q, docs in data.items()}
        by_doc = _segment_ids_by_doc(self.encoded())
        depth = self.cfg.depth if kind == "exact" else self.cfg.soft_depth
        cands = self.candidates(seg_scores, depth)
        norm = self.cfg.scale * self.cfg.scale
        out = {}
        started = time.perf_counter()
        if kind == "exact":
            searcher = SpecSearcher(self.segment_index())
        else:
            from .softsdm import TopKStore

            store = TopKStore(self.encoded() / "soft")
            wanted = {s for q in self.qids for d in cands[q] for s in by_doc.get(d, [])}
            vocab = self.get_encoder().tokenizer.get_vocab()
            tokens = read_own_arrays(self.encoded(), wanted, vocab)
        try:
            from tqdm import tqdm

            for q in tqdm(self.qids, desc=f"{kind} SDM features", file=sys.stderr):
                seg_ids = [s for d in sorted(cands[q]) for s in by_doc.get(d, [])]
                if kind == "exact":
                    extra = exact_features(searcher, self.queries()[q], seg_ids, settings)
                else:
                    extra = soft_features_for(store, tokens, self.queries()[q], seg_ids, settings, vocab)
                t_scores = {s: seg_scores.get(q, {}).get(s, 0.0) for s in seg_ids}
                out[q] = feature_table(t_scores, extra, norm)
        finally:
            if kind == "exact":
                searcher.close()
        note = (f"{kind} SDM features of {sum(len(v) for v in cands.values())} query-document candidates "
                f"({sum(len(by_doc.get(d, [])) for q in self.qids for d in cands[q])} query-segment pairs) "
                f"in {time.perf_counter() - started:.0f}s")
        self.notes.append(note)
        _write_text_atomic(meta, json.dumps({"note": note}))
        _write_text_atomic(cache, json.dumps({q: {d: {str(n): list(v) for n, v in segs.items()}
                                                  for d, segs in docs.items()} for q, docs in out.items()}))
        return out

    def sdm_runs(self, kind: str, seg_scores, combine: str) -> list[dict]:
        """Fit λ per segment count on the training half, write runs; returns the fitted λ rows."""
        from .sdm import drop_lambdas, fit_lambdas, rank, save_lambdas, score_documents

        features = self.sdm_features(kind, seg_scores, combine)
        drop_lambdas(self.segment_index(), f"{kind}-sdm/")
        depth = self.cfg.depth if kind == "exact" else self.cfg.soft_depth
        fitted_rows = []
        for k in self.ks:
            top = {q: set(rank(docs)[:depth]) for q, docs in self.score_max(seg_scores, k).items()}
            feats_k = {q: {d: features[q][d] for d in top[q] if d in features.get(q, {})} for q in self.qids}
            for pooling in (("feature", "segment") if kind == "exact" else ("feature",)):
                name = f"{kind}-sdm" + ("" if pooling == "feature" else "-segpool")
                fitted = fit_lambdas({q: feats_k[q] for q in self.train}, self.coll.qrels, k=k, pooling=pooling,
                                     metric=self.cfg.fit_metric)
                fitted.update({"ngram": self.cfg.ngram, "width": self.cfg.width, "query_combine": combine,
                               "train_queries": "sorted judged ids, even positions", "segments_cap": self.cap})
                for label in {"all" if k is None or k == self.cap else str(k), str(k) if k else "all"}:
                    save_lambdas(self.segment_index(), f"{kind}-sdm/{pooling}/k={label}", fitted)
                fitted_rows.append({"method": name, "k": segment_label(k, self.cap), **{
                    x: fitted[x] for x in ("lambda_T", "lambda_O", "lambda_U")},
                    f"train {self.cfg.fit_metric}": fitted[f"train_{self.cfg.fit_metric}"],
                    f"train {self.cfg.fit_metric} (T only)": fitted[f"train_{self.cfg.fit_metric}_unigram_only"]})
                lam = (fitted["lambda_T"], fitted["lambda_O"], fitted["lambda_U"])
                first = self.score_max(seg_scores, k)
                scores = {q: with_tail(score_documents(feats_k[q], lam, k, pooling), first[q]) for q in self.qids}
                write_run(scores, self.run_path(name, k), name)
        return fitted_rows

    def ablation(self, seg_scores, combine: str, grid=((2, 4), (2, 8), (2, 16), (3, 8), (3, 16))) -> None:
        """ExactSDM with other n-gram sizes and window widths at the largest segment count: fitted on the
        training half, nDCG@10 and MAP on the test half (fast metrics, same definitions as trec_eval)."""
        import pandas as pd

        from .eval import to_markdown
        from .queries import SpecSearcher
        from .sdm import evaluate_lambdas, fit_lambdas, rank

        k = self.ks[-1]
        by_doc = _segment_ids_by_doc(self.encoded())
        rows = []
        with SpecSearcher(self.segment_index()) as searcher:
            for ngram, width in grid:
                settings = SdmSettings(ngram, width, self.cfg.max_clauses)
                features = {}
                for q in self.qids:
                    top = rank(collapse(seg_scores.get(q, {}), k))[:self.cfg.depth]
                    seg_ids = [s for d in top for s in by_doc.get(d, []) if k is None or parse_segment_id(s)[1] < k]
                    extra = exact_features(searcher, self.queries()[q], seg_ids, settings)
                    features[q] = feature_table({s: seg_scores.get(q, {}).get(s, 0.0) for s in seg_ids}, extra,
                                                self.cfg.scale * self.cfg.scale)
                fitted = fit_lambdas({q: features[q] for q in self.train}, self.coll.qrels, k=k,
                                     metric=self.cfg.fit_metric)
                lam = (fitted["lambda_T"], fitted["lambda_O"], fitted["lambda_U"])
                test = {q: features[q] for q in self.test}
                rows.append({"n-gram": ngram, "width": width, "lambda_O": lam[1], "lambda_U": lam[2],
                             "nDCG@10": evaluate_lambdas(test, self.coll.qrels, lam, k, metric="ndcg@10"),
                             "MAP": evaluate_lambdas(test, self.coll.qrels, lam, k, metric="map")})
        table = pd.DataFrame(rows).set_index(["n-gram", "width"])
        text = (f"# ExactSDM n-gram size and window width on {self.coll.name} ({segment_label(k, self.cap)} segments)\n\n"
                f"λ fitted on the training half ({self.cfg.fit_metric}); nDCG@10 and MAP on the test half.\n\n"
                + to_markdown(table, ".4g"))
        (self.out / f"{self.coll.name}-ablation.md").write_text(text)

    def bm25_runs(self) -> None:
        from . import bm25

        topics = {q: t for q, t in self.coll.bm25_topics().items() if q in set(self.test)}  # nothing to fit
        for k in self.ks + ["full"]:
            label = "full" if k == "full" else segment_label(k, self.cap).replace("(", "").replace(")", "")
            runs = {name: self.runs / f"{name}-k{label}.run" for name in ("bm25", "bm25-rm3", "bm25-sdm")}
            if all(p.exists() for p in runs.values()):
                continue
            if k == "full":
                corpus = self.coll.corpus
            else:
                corpus = str(_truncated_corpus(self.segments(), k, self.work / "bm25" / f"corpus-k{label}.jsonl"))
            index = self.work / "bm25" / f"index-k{label}"
            bm25.ensure_bm25_index(corpus, index, threads=self.cfg.threads)
            for name, path in runs.items():
                if not path.exists():
                    _log(f"{name} on documents cut to {label} segments")
                    bm25.bm25_run(index, topics, path, threads=self.cfg.threads, rm3=name == "bm25-rm3",
                                  sdm=name == "bm25-sdm", tag=name)
                    answered = set(read_run_lines(path))
                    if len(answered) < len(topics):
                        self.notes.append(f"{name} at {label} segments answered {len(answered)} of {len(topics)} "
                                          "queries")

    # ---- evaluation and outputs --------------------------------------------------------------------
    def evaluate(self) -> "object":
        import pandas as pd

        from .eval import evaluate

        rows = []
        for path in sorted(self.runs.glob("*.run")):
            method, _, label = path.stem.rpartition("-k")
            rows.append((method, label, path))
        table = evaluate(self.qrels_test, {f"{m}|{k}": p for m, k, p in rows}, measures=MEASURES)
        records = []
        for name, values in table.iterrows():
            method, label = name.split("|")
            records.append({"method": method, "segments": label, **values.to_dict()})
        return pd.DataFrame(records)

    def run(self) -> dict:
        seg_scores_combine = self.choose_combine()
        seg_scores = self.segment_scores(seg_scores_combine)
        self.runs.mkdir(parents=True, exist_ok=True)
        for k in self.ks:
            write_run(self.score_max(seg_scores, k), self.run_path("score-max", k), "score-max")
        methods = set(self.cfg.methods) or {"aggregations", "exact", "soft", "baselines", "ablation"}
        if "aggregations" in methods:
            self.aggregation_runs(seg_scores_combine)
        lambdas = []
        if "exact" in methods:
            lambdas += self.sdm_runs("exact", seg_scores, seg_scores_combine)
        if "soft" in methods and self.cfg.soft and self.cfg.top_k > 0:
            lambdas += self.sdm_runs("soft", seg_scores, seg_scores_combine)
        if "baselines" in methods and self.cfg.baselines:
            self.bm25_runs()
        if "ablation" in methods:
            self.ablation(seg_scores, seg_scores_combine)
        results = self.evaluate()
        return self.write_outputs(results, lambdas)

    def write_outputs(self, results, lambdas: list[dict]) -> dict:
        import pandas as pd

        from .eval import column_name, to_markdown

        name = self.coll.name
        results = results.copy()
        order = ["first", "rep-max", "rep-sum", "rep-mean", "score-max", "exact-sdm", "exact-sdm-segpool",
                 "soft-sdm", "soft-sdm-segpool", "bm25", "bm25-rm3", "bm25-sdm"]
        labels = [segment_label(k, self.cap).replace("(", "").replace(")", "") for k in self.ks]
        pretty = {l: segment_label(k, self.cap) for l, k in zip(labels, self.ks)}
        # first and rep-*@1 are the same run: spread them over the columns they stand for
        extra = []
        first = results[results["method"] == "first"]
        if not first.empty:
            base = first.iloc[0].to_dict()
            results = results[results["method"] != "first"]
            for l in labels:
                extra.append({**base, "segments": l})
            for method in ("rep-max", "rep-sum", "rep-mean"):
                if not results[(results["method"] == method)].empty:
                    extra.append({**base, "method": method, "segments": labels[0]})
        results = pd.concat([results, pd.DataFrame(extra)], ignore_index=True)
        results.to_csv(self.out / f"{name}-results.csv", index=False, float_format="%.4f")
        lines = [f"# Long documents on {name}: every method × number of segments", ""]
        lines += [f"- {n}" for n in self.notes]
        lines.append(f"- segments of at most {self.cfg.max_tokens} WordPiece tokens; 'all' is capped at the first "
                     f"{self.cap} segments" if self.cap else "- all segments")
        lines.append(f"- ExactSDM/SoftSDM: n-gram {self.cfg.ngram}, unordered width {self.cfg.width}; rerank the top "
                     f"{self.cfg.depth} (SoftSDM {self.cfg.soft_depth}) score-max documents; '-segpool' rows pool the "
                     "combined score over segments instead of each feature")
        lines.append("- BM25 rows: Anserini on the same documents cut to the first k segments ('full': uncut)")
        lines.append("")
        for measure in MEASURES:
            col = column_name(measure)
            pivot = results.pivot_table(index="method", columns="segments", values=col, aggfunc="first")
            cols = [c for c in labels + ["full"] if c in pivot.columns]
            pivot = pivot.reindex([m for m in order if m in pivot.index] +
                                  [m for m in pivot.index if m not in order])[cols]
            pivot.columns = [pretty.get(c, c) for c in cols]
            lines += [f"## {col}", "", to_markdown(pivot, ".4f"), ""]
        if lambdas:
            lam = pd.DataFrame(lambdas).set_index(["method", "k"])
            lam.to_csv(self.out / f"{name}-lambdas.csv", float_format="%.6g")
            lines += ["## fitted λ (training half; λ_T fixed to 1, T in float dot-product units)", "",
                      to_markdown(lam, ".4g"), ""]
        (self.out / f"{name}-results.md").write_text("\n".join(lines) + "\n")
        self.plot(results, labels, pretty)
        return {"results": str(self.out / f"{name}-results.md")}

    def plot(self, results, labels, pretty) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from .eval import column_name

        col = column_name(MEASURES[0])
        fig, ax = plt.subplots(figsize=(7, 4.5))
        x = list(range(len(labels)))
        for method in ["first", "rep-max", "rep-sum", "rep-mean", "score-max", "exact-sdm", "soft-sdm",
                       "bm25", "bm25-rm3", "bm25-sdm"]:
            sub = results[results["method"] == method].set_index("segments")
            if sub.empty:
                continue
            ys = [sub[col].get(l, float("nan")) for l in labels]
            style = "--" if method.startswith("bm25") else ("-" if "sdm" in method else "-")
            marker = "s" if "sdm" in method else "o"
            ax.plot(x, ys, style, marker=marker, label=method)
        ax.set_xticks(x, [pretty[l] for l in labels])
        ax.set_xlabel("number of segments (of at most %d tokens)" % self.cfg.max_tokens)
        ax.set_ylabel(f"{col} (test half)")
        ax.set_title(f"{self.coll.name}: aggregation methods vs ExactSDM/SoftSDM")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, ncol=2)
        fig.tight_layout()
        fig.savefig(self.out / f"{self.coll.name}-{MEASURES[0]}.png", dpi=120)
        plt.close(fig)


def _ranked(scores: Mapping[str, float]) -> list[str]:
    from .sdm import rank

    return rank(scores)


# =========================================================================================================
# command line
# =========================================================================================================
def _cmd_segment(argv: list[str]) -> int:
    from .segment import main as segment_main

    return segment_main(argv)


def _cmd_encode(argv: list[str]) -> int:
    from .encode import SparseEncoder

    parser = argparse.ArgumentParser(prog="lsr-lucene longdocs encode",
                                     description="encode segments: vectors and per-position weights "
                                                 "(resumable); --top-k adds the SoftSDM store")
    parser.add_argument("--segments", required=True, help="segments JSONL from `longdocs segment`")
    parser.add_argument("--output", required=True, help="directory for vectors/, tokens/, soft/ (resumable)")
    parser.add_argument("--model", default="splade-tiny")
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--scale", type=float, default=100)
    parser.add_argument("--top-k", type=int, default=0,
                        help="SoftSDM: also store each position's top-k MLM terms (0: none; rerun with --top-k on an "
                             "encoded directory to add them afterwards)")
    parser.add_argument("--limit", type=int, default=None, help="encode only the first N segments of each document")
    parser.add_argument("--shard-size", type=int, default=DEFAULT_SHARD)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    if args.top_k < 0:
        raise InputError(f"--top-k must be >= 0, got {args.top_k}")
    encoder = SparseEncoder(model=args.model, max_length=args.max_length, threads=args.threads)
    state = Path(args.output) / STATE
    if args.top_k and state.exists() and json.loads(state.read_text()).get("complete"):
        info = encode_topk(args.segments, args.output, encoder, top_k=args.top_k, shard_size=args.shard_size,
                           batch_size=args.batch_size)
        print(f"added top-{args.top_k} entries of {info['segments']} segments to {args.output}/soft")
        return 0
    info = encode_segments_dir(args.segments, args.output, encoder, scale=args.scale, top_k=args.top_k,
                               shard_size=args.shard_size, batch_size=args.batch_size, limit=args.limit)
    print(f"encoded {info['segments']} segments into {args.output} ({info['encoded_now']} now, {info['seconds']}s)")
    return 0


def _index_encoder_settings(index: str | Path) -> dict:
    from .index import read_index_metadata

    return read_index_metadata(index).get("encoder", {})


def _add_query_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--topics", help="topics (TSV/JSONL/TREC/irds:...): one query text each")
    source.add_argument("--collection", help="fire2017, msmarco-document, robust04 or a FIRE-style folder: "
                                             "multi-passage queries (e.g. FIRE citation contexts)")
    parser.add_argument("--data", default=None, help="data root holding fire2017/ (default ../shared/data)")
    parser.add_argument("--query-mode", choices=QUERY_MODES, default="citations",
                        help="FIRE 2017 queries: citation windows, the first 512 tokens, or both")
    parser.add_argument("--query-combine", choices=QUERY_COMBINE, default="sum",
                        help="combine the passage vectors of a multi-passage query by sum or max")
    parser.add_argument("--encoder", default=None, help="query encoder (default: the model recorded in the index)")


def _add_sdm_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--segments", default="all", help="use the first K segments of each document (default all)")
    parser.add_argument("--ngram", type=int, default=2, help="query n-gram size for the SDM clauses (default 2)")
    parser.add_argument("--width", type=int, default=8, help="unordered window width (default 8)")
    parser.add_argument("--max-clauses", type=int, default=None, help="keep the n-grams of largest weight only")
    parser.add_argument("--pooling", choices=("feature", "segment"), default="feature",
                        help="max-pool each potential over segments (paper's code) or the combined score")
    parser.add_argument("--rerank", type=int, default=1000, help="rerank this many score-max documents")
    parser.add_argument("--encoded", default=None, help="encoded segments directory (SoftSDM: top-k store, tokens)")
    parser.add_argument("--threads", type=int, default=2)


def _parse_k(value: str) -> int | None:
    if value in ("all", "", None):
        return None
    try:
        k = int(value)
    except ValueError:
        raise InputError(f"--segments must be a positive integer or 'all', got {value!r}") from None
    if k < 1:
        raise InputError(f"--segments must be a positive integer or 'all', got {value!r}")
    return k


def _load_queries(args) -> tuple[dict[str, Query], Collection | None]:
    from .encode import SparseEncoder
    from .topics import read_topics

    settings = _index_encoder_settings(args.index)
    encoder = SparseEncoder(model=args.encoder or settings.get("model") or "splade-tiny", threads=args.threads)
    if args.collection:
        coll = load_collection(args.collection, args.query_mode, args.data)
        texts = coll.queries
    else:
        coll = None
        texts = {q: [t] for q, t in read_topics(args.topics).items()}
    return encode_queries(texts, encoder), coll


class SegmentSearch:
    """Score-max, ExactSDM and SoftSDM over a segment index for one set of queries."""

    def __init__(self, index: str | Path, queries: Mapping[str, Query], combine: str, k: int | None,
                 settings: SdmSettings, threads: int = 2):
        from .index import read_index_metadata

        self.index = Path(index)
        meta = read_index_metadata(index)
        if not meta.get("positions"):
            raise InputError(f"{index}: not a segment index with the positional field (build it with longdocs index)")
        self.scale = float(meta.get("encoder", {}).get("scale") or 100)
        self.queries, self.combine, self.k, self.settings, self.threads = queries, combine, k, settings, threads
        q_int = {q: quantised_query(v, self.scale, combine) for q, v in queries.items()}
        self.t_scores = segment_hits(index, q_int, hits=int(meta.get("indexed", 100000)), threads=threads)

    def score_max(self) -> dict[str, dict[str, float]]:
        return {q: collapse(self.t_scores.get(q, {}), self.k) for q in self.queries}

    def candidates(self, depth: int) -> dict[str, list[str]]:
        """Segment ids (numbers < k) of each query's top-``depth`` score-max documents."""
        from .sdm import rank

        out = {}
        for q, docs in self.score_max().items():
            top = set(rank(docs)[:depth])
            out[q] = [s for s in self.t_scores.get(q, {}) if parse_segment_id(s)[0] in top
                      and (self.k is None or parse_segment_id(s)[1] < self.k)]
        return out

    def features(self, kind: str, depth: int, encoded: str | Path | None = None) -> dict[str, dict]:
        """qid -> docid -> segment number -> (T, O, U)."""
        from .queries import SpecSearcher

        cands = self.candidates(depth)
        norm = self.scale * self.scale
        out = {}
        if kind == "exact":
            with SpecSearcher(self.index) as searcher:
                for q, seg_ids in cands.items():
                    extra = exact_features(searcher, self.queries[q], seg_ids, self.settings)
                    out[q] = feature_table({s: self.t_scores[q][s] for s in seg_ids}, extra, norm)
            return out
        from transformers import AutoTokenizer

        from .models import resolve
        from .softsdm import TopKStore

        if encoded is None:
            raise InputError("soft-sdm needs --encoded (the directory with the SoftSDM top-k store)")
        store = TopKStore(Path(encoded) / "soft")
        model = _index_encoder_settings(self.index).get("model") or "splade-tiny"
        vocab = AutoTokenizer.from_pretrained(resolve(model)).get_vocab()
        tokens = read_own_arrays(encoded, {s for ids in cands.values() for s in ids}, vocab)
        for q, seg_ids in cands.items():
            extra = soft_features_for(store, tokens, self.queries[q], seg_ids, self.settings, vocab)
            out[q] = feature_table({s: self.t_scores[q][s] for s in seg_ids}, extra, norm)
        return out

    def full_exact_sdm(self, lambdas: Sequence[float], output: str | Path, hits: int = 1000,
                       java_rerank: int = 0) -> None:
        """ExactSDM as one Lucene query per query over segments (segment pooling): λ_T·terms + windows, then
        collapsed to documents; ``java_rerank`` N applies the windows to the top-N segments only (BatchSearcher)."""
        from .sdm import query_clauses, window_dicts

        lt, lo, lu = lambdas
        specs = []
        for q, query in self.queries.items():
            vec = quantised_query(query, self.scale, self.combine)
            clauses = query_clauses(query.sequences, self.settings.ngram, self.settings.min_weight,
                                    self.settings.max_clauses)
            windows = (window_dicts(clauses, True, weight=lo) if lo > 0 else []) + \
                (window_dicts(clauses, False, self.settings.width, weight=lu) if lu > 0 else [])
            spec = {"qid": q, "terms": {t: w * lt / (self.scale * self.scale) for t, w in vec.items()}}
            if windows:
                spec["windows"] = windows
            if java_rerank:
                spec["rerank"] = java_rerank
            if spec["terms"] or (windows and not java_rerank):
                specs.append(spec)
        import tempfile

        from .queries import SpecSearcher

        with tempfile.TemporaryDirectory() as tmp, SpecSearcher(self.index) as searcher:
            run = Path(tmp) / "segments.run"
            depth = max(hits * (self.k or 8), java_rerank)
            searcher.search_to_run(specs, run, k=depth, threads=self.threads, tag="exact-sdm")
            segs = read_run_lines(run)
        write_run({q: collapse(dict(segs.get(q, [])), self.k) for q in self.queries}, output, "exact-sdm-full", hits)


def _cmd_index(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="lsr-lucene longdocs index",
                                     description="index encoded segments (docid@@k) with the positional weight field")
    parser.add_argument("--encoded", required=True, help="directory from `longdocs encode`")
    parser.add_argument("--index", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    meta = build_segment_index(args.encoded, args.index, threads=args.threads, overwrite=args.overwrite)
    print(f"indexed {meta['indexed']} segments into {args.index} ({meta['size_bytes'] / 1e6:.1f} MB)")
    return 0


def _cmd_aggregate(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="lsr-lucene longdocs aggregate",
                                     description="one vector per document from its first K segment vectors, indexed")
    parser.add_argument("--encoded", required=True, help="directory from `longdocs encode`")
    parser.add_argument("--method", required=True, choices=AGGREGATIONS)
    parser.add_argument("--segments", default="all", help="first K segments (default all)")
    parser.add_argument("--index", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    meta = build_aggregate_index(args.encoded, args.method, _parse_k(args.segments), args.index,
                                 threads=args.threads, overwrite=args.overwrite)
    print(f"indexed {meta['indexed']} {args.method} document vectors into {args.index}; "
          "search it with `lsr-lucene search`")
    return 0


def _cmd_search(argv: list[str]) -> int:
    from .io_utils import refuse_existing
    from .sdm import load_lambdas, score_documents

    parser = argparse.ArgumentParser(prog="lsr-lucene longdocs search",
                                     description="score-max, ExactSDM or SoftSDM over a segment index; one hit "
                                                 "per document in the run")
    parser.add_argument("--index", required=True, help="segment index from `longdocs index`")
    parser.add_argument("--method", required=True, choices=("score-max", "exact-sdm", "soft-sdm"))
    parser.add_argument("--output", required=True)
    parser.add_argument("--hits", type=int, default=1000)
    parser.add_argument("--lambdas", default=None, help="λ_T,λ_O,λ_U (default: the fitted ones saved in the index)")
    parser.add_argument("--full", action="store_true", help="ExactSDM as one Lucene query over all segments "
                                                            "(segment pooling) instead of reranking")
    parser.add_argument("--overwrite", action="store_true")
    _add_query_arguments(parser)
    _add_sdm_arguments(parser)
    args = parser.parse_args(argv)
    refuse_existing(args.output, args.overwrite)
    k = _parse_k(args.segments)
    queries, _ = _load_queries(args)
    settings = SdmSettings(args.ngram, args.width, args.max_clauses)
    search = SegmentSearch(args.index, queries, args.query_combine, k, settings, args.threads)
    if args.method == "score-max":
        write_run(search.score_max(), args.output, "score-max", args.hits)
    else:
        kind = args.method.split("-")[0]
        if args.lambdas:
            try:
                lambdas = tuple(float(x) for x in args.lambdas.split(","))
            except ValueError:
                raise InputError(f"--lambdas must be three numbers λ_T,λ_O,λ_U, got {args.lambdas!r}") from None
            if len(lambdas) != 3:
                raise InputError(f"--lambdas must be three numbers λ_T,λ_O,λ_U, got {args.lambdas!r}")
        else:
            lambdas = load_lambdas(args.index, f"{args.method}/{args.pooling}/k={args.segments}")
        if args.full:
            if kind != "exact":
                raise InputError("--full is for exact-sdm (SoftSDM needs the top-k store: it only reranks)")
            search.full_exact_sdm(lambdas, args.output, args.hits)
        else:
            feats = search.features(kind, args.rerank, args.encoded)
            first = search.score_max()
            scores = {q: with_tail(score_documents(f, lambdas, k, args.pooling), first[q], args.hits)
                      for q, f in feats.items()}
            write_run(scores, args.output, args.method, args.hits)
    print(f"wrote {args.output}")
    return 0


def _cmd_fit(argv: list[str]) -> int:
    from .eval import read_qrels
    from .sdm import fit_lambdas, save_lambdas

    parser = argparse.ArgumentParser(prog="lsr-lucene longdocs fit",
                                     description="fit ExactSDM/SoftSDM λ on training queries; saved in the index")
    parser.add_argument("--index", required=True, help="segment index from `longdocs index`")
    parser.add_argument("--method", required=True, choices=("exact-sdm", "soft-sdm"))
    parser.add_argument("--qrels", default=None, help="qrels of the training queries (default: the collection's)")
    parser.add_argument("--train", choices=("half", "all"), default="half",
                        help="fit on the fixed half (sorted ids, even positions) or on every judged query")
    parser.add_argument("--metric", choices=("map", "ndcg@10"), default="map")
    _add_query_arguments(parser)
    _add_sdm_arguments(parser)
    args = parser.parse_args(argv)
    k = _parse_k(args.segments)
    queries, coll = _load_queries(args)
    qrels = read_qrels(args.qrels) if args.qrels else (coll.qrels if coll else None)
    if qrels is None:
        raise InputError("--qrels is required with --topics")
    judged = [q for q in queries if q in qrels]
    train = split_queries(judged)[0] if args.train == "half" else sorted(judged)
    search = SegmentSearch(args.index, {q: queries[q] for q in train}, args.query_combine, k,
                           SdmSettings(args.ngram, args.width, args.max_clauses), args.threads)
    feats = search.features(args.method.split("-")[0], args.rerank, args.encoded)
    fitted = fit_lambdas(feats, qrels, k=k, pooling=args.pooling, metric=args.metric)
    fitted.update({"ngram": args.ngram, "width": args.width, "query_combine": args.query_combine})
    path = save_lambdas(args.index, f"{args.method}/{args.pooling}/k={args.segments}", fitted)
    print(f"λ_T={fitted['lambda_T']:.4g} λ_O={fitted['lambda_O']:.4g} λ_U={fitted['lambda_U']:.4g} "
          f"(training {args.metric} {fitted['train_' + args.metric]:.4f}, unigram only "
          f"{fitted['train_' + args.metric + '_unigram_only']:.4f}) saved in {path}")
    return 0


def _cmd_experiment(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="lsr-lucene longdocs experiment",
                                     description="sweep the number of segments for every method; table and plot")
    parser.add_argument("--collection", default="fire2017")
    parser.add_argument("--data", default=None, help="data root holding fire2017/ (default ../shared/data)")
    parser.add_argument("--topics", default=None, help="with a corpus JSONL as --collection")
    parser.add_argument("--qrels", default=None, help="with a corpus JSONL as --collection")
    parser.add_argument("--work", default=None, help="cache directory (default work/<collection>)")
    parser.add_argument("--output", default="runs/longdocs", help="where the table and plot go")
    parser.add_argument("--query-mode", choices=QUERY_MODES, default="citations")
    parser.add_argument("--query-combine", choices=QUERY_COMBINE + ("auto",), default="auto")
    parser.add_argument("--model", default="splade-tiny")
    parser.add_argument("--max-tokens", type=int, default=400)
    parser.add_argument("--max-segments", default="16", help="cap for 'all' (default 16; 'none' for no cap)")
    parser.add_argument("--top-k", type=int, default=8, help="SoftSDM top-k terms per position (0: no SoftSDM)")
    parser.add_argument("--ngram", type=int, default=2)
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--max-clauses", type=int, default=None)
    parser.add_argument("--depth", type=int, default=1000, help="ExactSDM reranks this many score-max documents")
    parser.add_argument("--soft-depth", type=int, default=1000,
                        help="SoftSDM reranks this many (the rest keep their score-max order below)")
    parser.add_argument("--fit-metric", choices=("map", "ndcg@10"), default="map")
    parser.add_argument("--methods", default="aggregations,exact,soft,baselines,ablation",
                        help="comma list of aggregations, exact, soft, baselines, ablation (n-gram/width grid)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    cap = None if args.max_segments.lower() in ("none", "all") else int(args.max_segments)
    methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    unknown = set(methods) - {"aggregations", "exact", "soft", "baselines", "ablation"}
    if unknown:
        raise InputError(f"--methods: unknown {sorted(unknown)} (known: aggregations, exact, soft, baselines, "
                         "ablation)")
    name = Path(args.collection).name if Path(args.collection).exists() else args.collection
    cfg = ExperimentConfig(collection=args.collection, work=args.work or f"work/{name}", output=args.output,
                           data=args.data, topics=args.topics, qrels=args.qrels, query_mode=args.query_mode,
                           query_combine=args.query_combine, model=args.model, max_tokens=args.max_tokens,
                           max_segments=cap, top_k=args.top_k, ngram=args.ngram, width=args.width,
                           max_clauses=args.max_clauses, depth=args.depth, soft_depth=args.soft_depth,
                           fit_metric=args.fit_metric, threads=args.threads, soft=args.top_k > 0,
                           baselines="baselines" in methods, methods=methods)
    out = Experiment(cfg).run()
    print(f"wrote {out['results']}")
    return 0


COMMANDS = {"segment": _cmd_segment, "encode": _cmd_encode, "index": _cmd_index, "aggregate": _cmd_aggregate,
            "search": _cmd_search, "fit": _cmd_fit, "experiment": _cmd_experiment}


def main(argv: list[str] | None = None) -> int:
    """``lsr-lucene longdocs <command> ...``: dispatch to the subcommands."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        print("commands: " + ", ".join(COMMANDS))
        return 0 if argv else 2
    if argv[0] not in COMMANDS:
        raise InputError(f"unknown longdocs command {argv[0]!r} (known: {', '.join(COMMANDS)})")
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    from .cli import run_main

    sys.exit(run_main(main))
