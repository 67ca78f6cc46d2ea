"""Benchmark: per-query latency of ExactSDM (top-1,000 rerank and full search) vs plain impact search over a
segment index, and the index size with and without the positional weight field — measured in one run.

    python -m scripts.bench.longdocs --index work/fire2017/index-segments-first8 --collection fire2017 \\
        [--queries 20] [--lambdas 1,0.05,0.05] [--output runs/longdocs/bench.json]

Timings are wall-clock milliseconds per query, one query at a time (single-threaded search), after one
warm-up pass over the same queries; ratios are to plain impact search in the same run. Ordered and unordered
window clauses are both always evaluated (even when a fitted λ is 0), so the figures are for the full
three-potential model. Variants:

- ``impact``: the query vector as a weighted term query over segments (what score-max searches);
- ``exact-rerank``: the same plus the SDM window clauses applied by BatchSearcher to the top 1,000 segments
  (``"rerank": 1000``; one Lucene call, segment pooling);
- ``exact-full``: window clauses inside the first-stage query over every segment (no rerank cut);
- ``exact-features``: the paper's feature pooling: impact search, then Lucene scores of the ordered and of the
  unordered clauses for the candidate segments of the top 1,000 documents, pooled in Python.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from lsr_lucene.errors import InputError
from lsr_lucene.index.impact import index_size


def index_sizes(index: str | Path) -> dict:
    """Bytes of the impact index without and with its positional sidecar (``<index>/positions``)."""
    index = Path(index)
    positions = index / "positions"
    total = index_size(index)
    side = index_size(positions) if positions.is_dir() else 0
    stored = sum(p.stat().st_size for p in index.iterdir() if p.is_file() and p.suffix in (".fdt", ".fdx", ".fdm"))
    return {"without_positions_bytes": total - side, "positions_bytes": side, "with_positions_bytes": total,
            "ratio_with_to_without": round(total / max(1, total - side), 3),
            "stored_fields_bytes": stored, "without_positions_or_stored_bytes": total - side - stored}


def _timed(fn, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def summarise(values: list[float]) -> dict:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"mean_ms": round(statistics.fmean(values), 2), "median_ms": round(statistics.median(values), 2),
            "p95_ms": round(p95, 2)}


def run_bench(index: str | Path, queries, combine: str, lambdas, settings, hits: int = 1000, rerank: int = 1000,
              k: int | None = None) -> dict:
    """Time every variant on every query (after a warm-up pass); returns per-variant summaries and ratios."""
    from lsr_lucene.index.impact import read_index_metadata
    from lsr_lucene.longdocs.queries import quantised_query
    from lsr_lucene.longdocs.runs import collapse
    from lsr_lucene.io.ranking import ranking as rank
    from lsr_lucene.longdocs.sdm import pool_features, query_clauses, window_dicts
    from lsr_lucene.longdocs.sdm_features import exact_features
    from lsr_lucene.longdocs.segment import parse_segment_id
    from lsr_lucene.search.spec_searcher import SpecSearcher

    meta = read_index_metadata(index)
    scale = float(meta.get("encoder", {}).get("scale") or 100)
    lt, lo, lu = lambdas
    norm = scale * scale
    specs: dict[str, dict[str, Any]] = {}
    for q, query in queries.items():
        terms = {t: w * lt / norm for t, w in quantised_query(query, scale, combine).items()}
        clauses = query_clauses(query.sequences, settings.ngram, settings.min_weight, settings.max_clauses)
        windows = window_dicts(clauses, True, weight=lo) + window_dicts(clauses, False, settings.width, weight=lu)
        specs[q] = {"terms": terms, "windows": windows, "clauses": len(clauses)}
    segment_hits = int(meta.get("indexed", 100000))
    timings: dict[str, list[float]] = {"impact": [], "exact-rerank": [], "exact-full": [], "exact-features": []}
    with SpecSearcher(index) as searcher:
        def impact(q):
            return searcher.search({"qid": q, "terms": specs[q]["terms"]}, k=hits)

        def exact_rerank(q):
            spec = {"qid": q, "terms": specs[q]["terms"], "rerank": rerank}
            if specs[q]["windows"]:
                spec["windows"] = specs[q]["windows"]
            return searcher.search(spec, k=hits)

        def exact_full(q):
            spec = {"qid": q, "terms": specs[q]["terms"]}
            if specs[q]["windows"]:
                spec["windows"] = specs[q]["windows"]
            return searcher.search(spec, k=hits)

        def exact_feature_pooling(q):
            seg_scores = dict(searcher.search({"qid": q, "terms": specs[q]["terms"]}, k=segment_hits))
            top = set(rank(collapse(seg_scores, k))[:rerank])
            seg_ids = [s for s in seg_scores if parse_segment_id(s)[0] in top]
            extra = exact_features(searcher, queries[q], seg_ids, settings)
            by_doc: dict[str, dict[int, tuple]] = {}
            for s in seg_ids:
                d, n = parse_segment_id(s)
                by_doc.setdefault(d, {})[n] = (seg_scores[s], *extra[s])
            return {d: float(pool_features(v, k) @ (lt / 1.0, lo, lu)) for d, v in by_doc.items()}

        variants = {"impact": impact, "exact-rerank": exact_rerank, "exact-full": exact_full,
                    "exact-features": exact_feature_pooling}
        for q in queries:  # warm-up: JIT, caches
            for fn in variants.values():
                fn(q)
        for q in queries:
            for name, fn in variants.items():
                timings[name].append(_timed(lambda: fn(q)))  # noqa: B023 (called at once)
    base = statistics.fmean(timings["impact"])
    out: dict[str, Any] = {name: {**summarise(v), "ratio_to_impact": round(statistics.fmean(v) / base, 2)}
           for name, v in timings.items()}
    out["clauses_per_query"] = round(statistics.fmean(s["clauses"] for s in specs.values()), 1)
    return out


def _saved_lambdas(index: str | Path) -> tuple[float, float, float] | None:
    """The segment-pooling ExactSDM λ fitted for all segments, when the experiment saved them in the index."""
    from lsr_lucene.longdocs.sdm import LAMBDAS_FILE

    path = Path(index) / LAMBDAS_FILE
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    entry = data.get("exact-sdm/segment/k=all")
    if entry is None:
        return None
    return entry["lambda_T"], entry["lambda_O"], entry["lambda_U"]


def main(argv: list[str] | None = None) -> int:
    from lsr_lucene.longdocs.collections import QUERY_MODES, load_collection
    from lsr_lucene.longdocs.queries import QUERY_COMBINE, encode_queries
    from lsr_lucene.longdocs.sdm_features import SdmSettings

    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m scripts.bench.longdocs", description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="segment index with the positional field (longdocs index)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--collection", help="fire2017 (citation-context queries) or another longdocs collection")
    source.add_argument("--topics", help="topics file: one query text each")
    parser.add_argument("--data", default=None)
    parser.add_argument("--query-mode", choices=QUERY_MODES, default="citations")
    parser.add_argument("--query-combine", choices=QUERY_COMBINE, default="sum")
    parser.add_argument("--queries", type=int, default=20, help="number of queries timed (first N by id)")
    parser.add_argument("--lambdas", default="auto",
                        help="λ_T,λ_O,λ_U of the ExactSDM variants (auto: the segment-pooling λ fitted for 'all' "
                             "segments saved in the index, else 1,0.05,0.05)")
    parser.add_argument("--ngram", type=int, default=2)
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--max-clauses", type=int, default=None)
    parser.add_argument("--segments", default="all", help="first K segments for the feature-pooling variant")
    parser.add_argument("--output", default=None, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.index.impact import read_index_metadata
    from lsr_lucene.io.topics import read_topics

    if not Path(args.index).is_dir():
        raise InputError(f"{args.index}: no such index directory")
    if args.lambdas == "auto":
        lambdas = _saved_lambdas(args.index) or (1.0, 0.05, 0.05)
    else:
        from lsr_lucene.longdocs.sdm import parse_lambdas

        lambdas = parse_lambdas(args.lambdas)
    model = read_index_metadata(args.index).get("encoder", {}).get("model") or "splade-tiny"
    encoder = SparseEncoder(model=model, threads=1)
    if args.collection:
        texts = load_collection(args.collection, args.query_mode, args.data).queries
    else:
        texts = {q: [t] for q, t in read_topics(args.topics).items()}
    chosen = {q: texts[q] for q in sorted(texts)[:args.queries]}
    queries = encode_queries(chosen, encoder)
    k = None if args.segments == "all" else int(args.segments)
    settings = SdmSettings(args.ngram, args.width, args.max_clauses)
    result: dict[str, Any] = {"index": str(args.index), "queries": len(queries), "lambdas": lambdas,
              "latency": run_bench(args.index, queries, args.query_combine, lambdas, settings, k=k),
              "size": index_sizes(args.index)}
    for name in ("impact", "exact-rerank", "exact-full", "exact-features"):
        r = result["latency"][name]
        print(f"{name:15s} mean {r['mean_ms']:9.1f} ms  median {r['median_ms']:9.1f} ms  p95 {r['p95_ms']:9.1f} ms  "
              f"x{r['ratio_to_impact']:.2f} of impact")
    size = result["size"]
    print(f"index without positions {size['without_positions_bytes'] / 1e6:.1f} MB, positional field "
          f"{size['positions_bytes'] / 1e6:.1f} MB, with positions {size['with_positions_bytes'] / 1e6:.1f} MB "
          f"(x{size['ratio_with_to_without']}); of the main index {size['stored_fields_bytes'] / 1e6:.1f} MB are "
          f"stored fields (Anserini -storeRaw), {size['without_positions_or_stored_bytes'] / 1e6:.1f} MB the rest")
    print(f"{result['latency']['clauses_per_query']} SDM n-grams per query on average")
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
