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

Segment ids are ``docid@@k`` (k from 0). "First k segments" means segment numbers < k. This module holds the
queries, indexes, runs and command line; encoded segments on disk live in ``segment_store``, the collection
loaders in ``longdoc_collections`` and the sweep in ``longdocs_experiment``.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from .errors import InputError
from .io_utils import write_text_atomic
from .longdoc_collections import QUERY_MODES, Collection, load_collection
from .segment import parse_segment_id, within_first
from .segment_store import (DEFAULT_SHARD, STATE, check_encoded, encode_segments_dir, encode_topk,
                            read_segment_vectors, read_tokens, write_positions_file)

AGGREGATIONS = ("first", "rep-max", "rep-sum", "rep-mean")
METHODS = AGGREGATIONS + ("score-max", "exact-sdm", "soft-sdm")


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
        write_text_atomic(Path(cache), json.dumps({q: {"vectors": v.vectors, "sequences": v.sequences}
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
    from .io_utils import write_run as write_trec_run
    from .sdm import rank

    top = {}
    for qid in (qids if qids is not None else scores):
        docs = scores.get(qid, {})
        top[qid] = [(d, docs[d]) for d in rank(docs)[:hits]]
    write_trec_run(top, output, tag, overwrite=True)


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


def split_queries(qids: Iterable[str]) -> tuple[list[str], list[str]]:
    """Fixed split of the judged queries: sorted ids, even positions train, odd positions test."""
    ordered = sorted(qids)
    return ordered[0::2], ordered[1::2]



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
                      and within_first(s, self.k)]
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
    parser.add_argument("--max-segments", default="none",
                        help="cap 'all' at the first N segments ('none', the default: every segment)")
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
    from .longdocs_experiment import Experiment, ExperimentConfig

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
