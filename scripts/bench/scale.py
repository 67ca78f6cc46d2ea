"""Scale benchmark (issue 15): a synthetic N-document collection from real vectors, indexed and searched by our
Lucene path and by Pyserini, Anserini, PISA, BMP, Seismic and scipy brute force, measured in one run.

    python -m scripts.bench.scale --docs 10000,100000 --output runs/scale [--threads T] [--seed S]
        [--orders natural,bp]

With ``--orders natural,bp`` ours, PISA and BMP also run on docids reordered by recursive graph bisection: the
BP order is computed once by our implementation (lsr_lucene.index.bisection, timed) and PISA and BMP index the
documents in that order; ours is built with ``--reorder bp`` (its own BP over its index, inside the build).
Writes DIR/results.csv (one row per engine × query kind × k × docs × threads × mode × order; re-runs replace
their rows), DIR/index.csv, DIR/collection.csv, DIR/skipped.csv, DIR/results.md (README-ready tables and goal
ratios), DIR/collection-N.png (pool vs synthetic) and DIR/latency_vs_docs.png (when several --docs were run).
The encoded pool, the collections and the indexes go under --work (default work/scale, git-ignored).
Every build and every engine runs in a fresh child process; exact engines are checked against brute force.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scripts.bench import pool as pool_mod
from scripts.bench import scale_report as report
from scripts.bench import synthetic
from scripts.bench.brute_force import BruteForce, compare, references
from scripts.bench.engine_native import bmp_doc_weights, bmp_query
from scripts.bench.scale_queries import KINDS, build_query_sets, sample_queries
from scripts.bench.scale_runner import (DEFAULT_ENGINES, ENGINES, ORDERS, REORDERED, build_task, in_child,
                                           interleaved_task, missing, search_task)
from lsr_lucene.errors import InputError


def _int_list(text: str, what: str) -> list[int]:
    try:
        values = [int(v.replace("_", "")) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"{what} must be a comma list of integers, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise InputError(f"{what} must be positive integers, got {text!r}")
    return values


def _names(text: str, known: tuple | list, what: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise InputError(f"unknown {what} {unknown or text!r}; known: {', '.join(known)}")
    return names


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m scripts.bench.scale", description=__doc__.splitlines()[0])
    parser.add_argument("--docs", required=True, help="comma list of collection sizes, e.g. 10000,100000,1000000")
    parser.add_argument("--output", required=True, help="folder of the result tables and plots")
    parser.add_argument("--work", default="work/scale", help="folder of the encoded pool, collections and indexes")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="all-cores thread count")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engines", default=",".join(DEFAULT_ENGINES),
                        help=f"comma list of {', '.join(ENGINES)} (default: all but ours-postings)")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"query kinds for ours: {', '.join(KINDS)}")
    parser.add_argument("--orders", default="natural", help="comma list of docid orders: natural, bp (recursive "
                                                             f"graph bisection, for {', '.join(REORDERED)})")
    parser.add_argument("--pool", default=",".join(pool_mod.DEFAULT_POOL),
                        help="collections pooled (names under --data, folders, or demo)")
    parser.add_argument("--data", default="../shared/data", help="where pool collection names are looked up")
    parser.add_argument("--model", default="splade-tiny")
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--queries", type=int, default=200, help="queries timed per kind")
    parser.add_argument("--check", type=int, default=20, help="queries per kind and k checked against brute force")
    parser.add_argument("--ks", default="10,1000")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--df-ratio", type=float, default=1.1, help="largest/smallest df inside a remapping bucket")
    parser.add_argument("--reuse-indexes", action="store_true",
                        help="search the indexes an earlier run of the same collection built under --work instead of "
                             "building them again (their index rows come from that run)")
    return check_measure_args(parser.parse_args(argv), KINDS)


def check_measure_args(args: argparse.Namespace, kinds: tuple | list) -> argparse.Namespace:
    """The comma lists of a benchmark's command line parsed (``docs_list``, ``ks_list``, ``engine_list``,
    ``kind_list`` among ``kinds``, ``order_list``) and its counts checked; shared with ``bench.real``."""
    args.docs_list, args.ks_list = _int_list(args.docs, "--docs"), _int_list(args.ks, "--ks")
    args.engine_list = _names(args.engines, list(ENGINES), "engine(s)")
    args.kind_list = _names(args.kinds, kinds, "query kind(s)")
    args.order_list = _names(args.orders, ORDERS, "order(s)")
    if args.threads < 1 or args.queries < 2 or args.check < 0 or args.warmup < 0 or args.max_length < 2:
        raise InputError("--threads must be >= 1, --queries >= 2, --check and --warmup >= 0, --max-length >= 2")
    if "plain" not in args.kind_list:
        raise InputError("--kinds must include plain (every engine's query kind)")
    return args


def prepare_collection(args, pool, buckets, n: int, work: Path) -> tuple[synthetic.Collection, dict]:
    """Generate the N-document collection; write its shards, positions and arrays unless cached alike."""
    coll = synthetic.generate(pool, n, args.seed, buckets)
    positions = "window" in args.kind_list
    params = {"docs": n, "seed": args.seed, "pool": pool.collections, "model": args.model,
              "max_length": args.max_length, "df_ratio": args.df_ratio, "positions": positions}
    paths: dict[str, Any] = {"arrays": work / "collection.npz", "vectors": work / "vectors",
                             "vocab": work / "vocab.json", "positions": work / "positions.jsonl" if positions else None,
                             "work": work / "work"}
    stamp = work / "synthetic.json"
    cached = stamp.is_file() and json.loads(stamp.read_text()) == params and paths["vectors"].is_dir() \
        and paths["arrays"].is_file() and (not positions or paths["positions"].is_file())
    if not cached:
        stamp.unlink(missing_ok=True)
        synthetic.save_arrays(coll, paths["arrays"])
        paths["vocab"].write_text(json.dumps(coll.vocab))
        synthetic.write_shards(coll, paths["vectors"], scale=pool.scale, metadata=params)
        if positions:
            synthetic.write_positions(pool, coll, buckets, paths["positions"])
        stamp.write_text(json.dumps(params))
    paths["work"].mkdir(parents=True, exist_ok=True)
    return coll, paths


def exact_answers(args, coll, sets, rows=None) -> dict:
    """Exact answers of the checked queries: {(kind, k, qid): Reference}, and BMP's own on its quantisation;
    ``rows`` gives documents' positions (window queries only)."""
    brute = BruteForce(coll)
    refs: dict = {}
    for kind, queries in sets.items():
        for q in queries[:args.check]:
            for k, ref in references(brute, q["spec"], args.ks_list, rows if kind == "window" else None).items():
                refs[(kind, k, q["qid"])] = ref
    del brute
    if "bmp" in args.engine_list:
        bmp_brute = BruteForce(coll, bmp_doc_weights(coll.weights))
        for q in sets["plain"][:args.check]:
            for k, ref in references(bmp_brute, {"terms": bmp_query(q["terms"])}, args.ks_list).items():
                refs[("bmp", k, q["qid"])] = ref
    return refs


def check(row: dict, hits: dict, refs: dict) -> None:
    """Add exactness (all checked queries), same_order and mean recall@k to a result row."""
    verdicts, own = [], []
    for qid, got in hits.items():
        verdicts.append(compare(got, refs[(row["kind"], row["k"], qid)]))
        if row["engine"] == "bmp":
            own.append(compare(got, refs[("bmp", row["k"], qid)]))
    if not verdicts:
        return
    exact_on = own or verdicts
    row.update(checked=len(verdicts), exact=all(v["exact"] for v in exact_on),
               same_order=all(v["same_order"] for v in exact_on), recall=float(np.mean([v["recall"] for v in verdicts])))


def bp_order(coll, work: Path) -> tuple[Path, float]:
    """The BP order of the collection (our implementation), saved for the builds given a document stream; seconds."""
    from lsr_lucene.index.bisection import DocTermGraph, bisect

    started = time.perf_counter()
    order = bisect(DocTermGraph.from_csr(coll.indptr, coll.terms, len(coll.vocab)))
    seconds = time.perf_counter() - started
    path = work / "bp-order.npy"
    np.save(path, order)
    return path, seconds


def _current_dense_impacts(index_dir: Path, rows: list[dict], record: Path) -> list[dict]:
    """A reused index of ours with the dense-impacts sidecar of today's default (``auto``, as ``lsr-lucene index``):
    built again, and its row replaced in the build record, when it was built with another share or not at all."""
    from scripts.bench.engine_lucene import build_dense_row
    from lsr_lucene.index.dense_impacts import AUTO, auto_share, dense_impacts_share

    if dense_impacts_share(index_dir) == auto_share(index_dir):
        return rows
    row = build_dense_row(index_dir, AUTO)
    print(f"  index {index_dir.name}: dense-impacts sidecar built again ({row['note']}, {row['build_s']:.1f} s)",
          flush=True)
    template = next((r for r in rows if r["engine"] == "ours"), rows[0])
    rows = [r for r in rows if r["engine"] != "ours-dense"] + [{**template, **row, "bp_s": float("nan")}]
    record.write_text(json.dumps(rows, allow_nan=True))
    return rows


def build_indexes(args, coll, paths: dict, work: Path, families: set, capability: str,
                  skipped: list) -> tuple[list, dict]:
    """Every index family in every order (BP only for the families in REORDERED): index rows, failures."""
    n = coll.num_docs
    index_rows, failed = [], {}
    bp: tuple[Path, float] | None = None
    if "bp" in args.order_list and families & (set(REORDERED.values()) - {"ours"}):
        bp = bp_order(coll, work)
        print(f"  BP order of {n:,} documents: {bp[1]:.1f} s (our implementation)", flush=True)
    for order in args.order_list:
        for family in [f for f in ("ours", "anserini", "pisa", "bmp", "seismic", "scipy") if f in families]:
            if order == "bp" and family not in REORDERED.values():
                continue
            reason = missing(family)
            label = family if order == "natural" else f"{family}-bp"
            index_dir = work / "indexes" / label
            record = index_dir.with_name(f"{label}.build.json")  # written when the build completed
            if reason is None and args.reuse_indexes and index_dir.is_dir() and record.is_file():
                rows = json.loads(record.read_text())
                if family == "ours":
                    rows = _current_dense_impacts(index_dir, rows, record)
                index_rows += rows
                print(f"  index {label}: reusing the build of {rows[0]['build_s']:.1f} s (an earlier run)", flush=True)
                continue
            if reason is None:
                extra = {} if order == "natural" else {"reorder": "bp"} if family == "ours" else \
                    {"order": bp[0]}  # type: ignore[index]  # made above for the BP families
                got = in_child(build_task, family, {**paths, **extra, "index": index_dir}, index_dir, args.threads,
                               threads=args.threads)
                reason = got.get("error")
                print(got.get("traceback", ""), end="", file=sys.stderr)
            if reason:
                failed[(family, order)] = reason
                skipped.append({"docs": n, "engine": label, "stage": "index", "reason": reason})
                print(f"  skipped {label} index: {reason}", flush=True)
                continue
            bp_s = float("nan") if order == "natural" else got.get("bp_s", bp[1] if bp else float("nan"))
            built = []
            for item in [{"engine": family, **got}] + got.get("extra", []):
                built.append({"docs": n, "engine": item["engine"], "order": order, "threads": args.threads,
                                   "build_s": item["build_s"], "bp_s": bp_s if item["engine"] == family else float("nan"),
                                   "size_bytes": item["size_bytes"], "peak_rss_bytes": item["peak_rss_bytes"],
                                   "note": item.get("note", ""), "cpu_capability": capability})
                print(f"  index {item['engine']:15s} {order:7s} {item['build_s']:8.1f} s  "
                      f"{item['size_bytes'] / 2**20:9.1f} MiB  peak RSS {item['peak_rss_bytes'] / 2**20:8.0f} MiB  "
                      f"[CPU {capability}; {report.load_note()}]", flush=True)
            index_rows += built
            record.write_text(json.dumps(built, allow_nan=True))
    return index_rows, failed


def run_docs(args, pool, buckets, sample, n: int, out: Path, capability: str, skipped: list) -> tuple:
    """Everything at one collection size: (result rows, index rows, collection stats)."""
    work = Path(args.work) / f"docs-{n}"
    coll, paths = prepare_collection(args, pool, buckets, n, work)
    stats = report.collection_stats(pool, coll).assign(docs_run=n)
    report.plot_collection(pool, coll, out / f"collection-{n}.png")
    print(report.to_text(stats), flush=True)
    sets = build_query_sets(sample, tuple(args.kind_list))
    positions = lambda r: synthetic.positions_of(pool, coll, buckets, r)  # noqa: E731
    rows, index_rows = measure(args, coll, paths, work, sets, capability, skipped, positions)
    return rows, index_rows, stats


def measure(args, coll, paths: dict, work: Path, sets: dict, capability: str, skipped: list,
            positions=None) -> tuple[list, list]:
    """Build every index of one collection, then time every engine on ``sets`` and check it against brute force:
    (result rows, index rows). Shared by the synthetic (this module) and the real-text benchmark (bench.real)."""
    n = coll.num_docs
    families = {ENGINES[e][0] for e in args.engine_list} | ({"anserini"} if "anserini" in args.engine_list else set())
    index_rows, failed = build_indexes(args, coll, paths, work, families, capability, skipped)
    refs = exact_answers(args, coll, sets, positions)
    threads = sorted({1, args.threads})
    sample_ids = sorted({q["qid"] for queries in sets.values() for q in queries[:args.check]})
    rows = []
    for order in args.order_list:
        names = [e for e in args.engine_list if order == "natural" or e in REORDERED]
        index_of = lambda name: work / "indexes" / (ENGINES[name][0] if order == "natural"  # noqa: E731, B023
                                                     else f"{ENGINES[name][0]}-bp")
        together = {}
        if getattr(args, "interleave", False):  # every engine of this order in one child, per-query calls interleaved
            ready = [n for n in names if not (failed.get((ENGINES[n][0], order)) or missing(n))]
            got = in_child(interleaved_task, ready, {n: {**paths, "index": index_of(n)} for n in ready}, sets,
                           args.ks_list, sample_ids, args.warmup, threads=args.threads)
            print(got.get("traceback", ""), end="", file=sys.stderr)
            together = {n: ({"error": got["error"]} if "error" in got else got[n]) for n in ready}
        for name in names:
            family = ENGINES[name][0]
            label = name if order == "natural" else f"{name} (bp)"
            reason = failed.get((family, order)) or missing(name)
            if reason is None:
                got = together.get(name) or in_child(search_task, name, {**paths, "index": index_of(name)}, sets,
                                                     args.ks_list, threads, sample_ids, args.warmup,
                                                     threads=args.threads)
                reason = got.get("error")
                print(got.get("traceback", ""), end="", file=sys.stderr)
            if reason:
                skipped.append({"docs": n, "engine": label, "stage": "search", "reason": reason})
                print(f"  skipped {label}: {reason}", flush=True)
                continue
            for row in got["rows"]:
                row.update(docs=n, order=order, peak_rss_mb=got["peak_rss_bytes"] / 2**20, cpu_capability=capability)
                check(row, got["hits"].get((row["kind"], row["k"], row["mode"], row["threads"]), {}), refs)
                rows.append(row)
                print(report.row_line(row) + f"  [CPU {capability}; {report.load_note()}]", flush=True)
    return rows, index_rows


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    capability = report.cpu_capability()
    print(f"scale benchmark: docs {args.docs_list}, engines {', '.join(args.engine_list)}; {report.machine()}",
          flush=True)
    sources = pool_mod.resolve_sources(args.pool, args.data)
    cache = Path(args.work) / "pool" / f"{Path(args.model).name}-{args.max_length}"
    pool_mod.encode_pool(sources, cache, args.model, args.max_length, args.threads, args.batch_size)
    pool = pool_mod.load_pool(sources, cache, positions="window" in args.kind_list)
    buckets = synthetic.df_buckets(synthetic.pool_df(pool), args.df_ratio)
    known = {pool.vocab[t] for t in np.flatnonzero(synthetic.pool_df(pool))}
    sample = sample_queries(pool.queries, args.queries, args.seed, known)
    print(f"pool: {pool.num_docs} documents from {', '.join(pool.collections)}, {len(pool.queries)} queries "
          f"({len(sample)} sampled)", flush=True)
    command = "python -m scripts.bench.scale " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    for n in args.docs_list:  # tables are updated after each size: a later failure keeps the earlier sizes
        print(f"== {n:,} documents", flush=True)
        skipped: list[dict] = []
        r, i, s = run_docs(args, pool, buckets, sample, n, out, capability, skipped)
        write_outputs(out, pd.DataFrame(r), pd.DataFrame(i), s, skipped, command)
    return 0


def write_outputs(out: Path, results: pd.DataFrame, index: pd.DataFrame, stats: pd.DataFrame, skipped: list[dict],
                  command: str) -> None:
    """Merge this run's rows into the CSVs, then write results.md, skipped.csv and the growth plot."""
    results, index, stats, skips = report.merge_tables(out, results, index, stats, skipped)
    goal_rows = pd.concat([report.goals(results, index, int(n)) for n in sorted(results.docs.unique())]) \
        if len(results) else pd.DataFrame()
    text = report.markdown(results, index, stats, goal_rows, command)
    if len(skips):
        text += "\n### Skipped\n\n" + "\n".join(f"- {r.engine} ({r.stage}, {r.docs} docs): {r.reason}"
                                               for r in skips.itertuples()) + "\n"
    from lsr_lucene.io.output import atomic_output

    with atomic_output(out / "results.md", overwrite=True) as tmp:
        tmp.write_text(text, encoding="utf-8")
    plotted = report.plot_latency(results, out / "latency_vs_docs.png") if len(results) else False
    print(f"wrote {out}/results.csv, results.md" + (", latency_vs_docs.png" if plotted else ""), flush=True)


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
