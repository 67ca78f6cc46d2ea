"""Runs the scale benchmark's builds and searches, each in a fresh child process (its own peak memory).

A child is started with ``spawn`` (no state inherited from the parent: no JVM, no loaded arrays), runs one
index build or one engine's searches, and reports its timings and its peak resident memory (VmHWM), which
includes the interpreter and the libraries the engine loads (and, for Lucene, the JVM's heap in use).
"""
from __future__ import annotations

import importlib.util
import multiprocessing
import os
import shutil
import statistics
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Callable

from scripts.bench import engine_lucene as lucene
from scripts.bench import engine_native as native

# engine -> (index family it searches, factory)
ENGINES: dict[str, tuple[str, Callable[[], Any]]] = {  # engines are duck-typed (open, search, ...)
    "ours": ("ours", lucene.OursEngine),
    "ours-postings": ("ours", lucene.OursPostingsEngine),
    "pyserini": ("ours", lucene.PyseriniEngine),
    "anserini": ("ours", lucene.AnseriniEngine),
    "pisa-maxscore": ("pisa", lambda: native.PisaEngine("pisa-maxscore")),
    "pisa-bmw": ("pisa", lambda: native.PisaEngine("pisa-bmw")),
    "bmp": ("bmp", native.BmpEngine),
    "seismic": ("seismic", native.SeismicEngine),
    "scipy": ("scipy", native.ScipyEngine),
}
DEFAULT_ENGINES = [e for e in ENGINES if e != "ours-postings"]  # ours-postings: a baseline, asked for by name
ORDERS = ("natural", "bp")  # docid orders: as generated, or recursive graph bisection (BP)
# engines (family) run with BP
REORDERED = {"ours": "ours", "ours-postings": "ours", "pisa-maxscore": "pisa", "pisa-bmw": "pisa", "bmp": "bmp"}
BUILDERS: dict[str, Callable[[dict, Path, int], dict]] = {
    "ours": lucene.build_ours, "anserini": lucene.build_anserini, "pisa": native.build_pisa,
    "bmp": native.build_bmp, "seismic": native.build_seismic, "scipy": native.build_scipy,
}
# the module each family needs, and how to get it
REQUIRES = {"ours": ("jnius", "pip install pyjnius"), "anserini": ("pyserini", "pip install pyserini==1.6.0"),
            "pisa": ("pyterrier_pisa", "pip install pyterrier-pisa"), "bmp": ("bmp", "pip install bmp"),
            "seismic": ("seismic", "pip install pyseismic-lsr"), "scipy": ("scipy", "pip install scipy")}
EXTRA_REQUIRES = {"pyserini": ("pyserini", "pip install pyserini==1.6.0")}  # engines beyond their family's


def missing(name: str) -> str | None:
    """Why an engine or build family cannot run here (its module is not installed), or None."""
    family = ENGINES[name][0] if name in ENGINES else name
    for module, hint in (REQUIRES.get(family, ("", "")), EXTRA_REQUIRES.get(name, ("", ""))):
        if module and importlib.util.find_spec(module) is None:
            return f"{module} is not installed ({hint})"
    return None


def in_child(func: Callable, *args, threads: int = 1) -> dict:
    """``func(*args)`` in a fresh spawned process; {"error": ...} when it raises or the process dies."""
    saved = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "RAYON_NUM_THREADS", "MKL_NUM_THREADS")}
    os.environ.update({k: str(threads) for k in saved})
    try:
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            return pool.submit(_guarded, func, args).result()
    except BrokenProcessPool as exc:
        return {"error": f"the child process died ({exc})"}
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _guarded(func: Callable, args: tuple) -> dict:
    try:
        return func(*args)
    except Exception as exc:  # reported by the parent as a skipped engine, with the child's traceback
        return {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}


def build_task(family: str, paths: dict, index_dir: Path, threads: int) -> dict:
    """One index build from scratch (an old index there is removed first), timed; its peak memory unless the
    builder measured a phase itself."""
    if index_dir.exists():
        shutil.rmtree(index_dir)
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    out = BUILDERS[family](paths, index_dir, threads)
    out.setdefault("build_s", time.perf_counter() - started)
    out.setdefault("peak_rss_bytes", native.vm_peak())
    return out


def latency_row(seconds: list[float]) -> dict[str, float]:
    """Mean, p50, p99 (ms) and queries per second of per-query latencies."""
    ms = sorted(s * 1000 for s in seconds)
    pick = lambda q: ms[min(len(ms) - 1, int(round(q * (len(ms) - 1))))]  # noqa: E731
    return {"mean_ms": statistics.fmean(ms), "p50_ms": pick(0.5), "p99_ms": pick(0.99),
            "qps": len(ms) / (sum(ms) / 1000) if sum(ms) else float("nan")}


def search_task(name: str, paths: dict, query_sets: dict[str, list[dict]], ks: list[int], threads: list[int],
                sample: list[str], warmup: int) -> dict:
    """Open one engine and time every query kind it takes, at each k, per query and in batches.

    After one untimed pass over the plain queries: per query, one call per query on one thread, after
    ``warmup`` calls; batch, one call for all queries with each thread count (after one on ``warmup`` queries)
    (mean = wall time / queries; no per-query percentiles). Returns the rows and the hits of the ``sample`` queries
    of each row (for the exactness check), plus peak memory.
    """
    engine = ENGINES[name][1]()
    started = time.perf_counter()
    engine.open(paths, max(threads))
    open_s = time.perf_counter() - started
    warm_set = query_sets["plain"]  # one untimed pass first (JIT compilation, page cache), as every engine gets
    if getattr(engine, "per_query", True):
        for query in warm_set:
            engine.search(query, max(ks))
    else:
        engine.batch(engine.prepare(warm_set), max(ks), 1)
    rows, hits = [], {}
    wanted = set(sample)
    for kind in [k for k in engine.kinds if k in query_sets]:
        queries = query_sets[kind]
        prepared = engine.prepare(queries) if hasattr(engine, "batch") else None
        warm = engine.prepare(queries[:warmup]) if prepared is not None else None
        for k in ks:
            if getattr(engine, "per_query", True):
                for query in queries[:warmup]:
                    engine.search(query, k)
                seconds, raws = [], {}
                for query in queries:
                    t0 = time.perf_counter()
                    raw = engine.search(query, k)
                    seconds.append(time.perf_counter() - t0)
                    if query["qid"] in wanted:
                        raws[query["qid"]] = raw
                rows.append({"engine": name, "approximate": not engine.exact, "kind": kind, "k": k, "threads": 1,
                             "mode": "query", "queries": len(queries), **latency_row(seconds)})
                hits[(kind, k, "query", 1)] = {q: engine.hits(r) for q, r in raws.items()}
            if prepared is None:
                continue
            for t in (threads if engine.batch_threads else [1]):
                engine.batch(warm, k, t)
                t0 = time.perf_counter()
                raw = engine.batch(prepared, k, t)
                wall = time.perf_counter() - t0
                rows.append({"engine": name, "approximate": not engine.exact, "kind": kind, "k": k, "threads": t,
                             "mode": "batch", "queries": len(queries), "mean_ms": 1000 * wall / len(queries),
                             "p50_ms": float("nan"), "p99_ms": float("nan"), "qps": len(queries) / wall})
                got = engine.batch_hits(raw)
                hits[(kind, k, "batch", t)] = {x["qid"]: got.get(x["qid"], []) for x in queries if x["qid"] in wanted}
    engine.close()
    return {"rows": rows, "hits": hits, "open_s": open_s, "peak_rss_bytes": native.vm_peak()}


def interleaved_task(names: list[str], paths: dict[str, dict], query_sets: dict[str, list[dict]], ks: list[int],
                     sample: list[str], warmup: int) -> dict:
    """Open several engines in one process and time their per-query searches interleaved (each query searched by
    every engine in turn, the first engine rotating), so that a machine's changing load weighs on all of them alike;
    no batch rows. Returns, per engine, what ``search_task`` returns (peak memory: the whole process's)."""
    engines = {name: ENGINES[name][1]() for name in names}
    out: dict[str, dict[str, Any]] = {}
    for name, engine in engines.items():
        started = time.perf_counter()
        engine.open(paths[name], 1)
        out[name] = {"rows": [], "hits": {}, "open_s": time.perf_counter() - started}
    for query in query_sets["plain"]:  # one untimed pass first (JIT compilation, page cache), as in search_task
        for engine in engines.values():
            engine.search(query, max(ks))
    wanted = set(sample)
    for kind, queries in query_sets.items():
        taking = [n for n, e in engines.items() if kind in e.kinds and getattr(e, "per_query", True)]
        for k in ks:
            for query in queries[:warmup]:
                for name in taking:
                    engines[name].search(query, k)
            seconds: dict[str, list[float]] = {name: [] for name in taking}
            # the calling thread's CPU time: what load from others barely moves
            cpu: dict[str, list[float]] = {name: [] for name in taking}
            raws: dict[str, dict] = {name: {} for name in taking}
            for i, query in enumerate(queries):
                for name in taking[i % len(taking):] + taking[:i % len(taking)]:
                    c0, t0 = time.thread_time(), time.perf_counter()
                    raw = engines[name].search(query, k)
                    seconds[name].append(time.perf_counter() - t0)
                    cpu[name].append(time.thread_time() - c0)
                    if query["qid"] in wanted:
                        raws[name][query["qid"]] = raw
            for name in taking:
                engine = engines[name]
                out[name]["rows"].append({"engine": name, "approximate": not engine.exact, "kind": kind, "k": k,
                                          "threads": 1, "mode": "query", "queries": len(queries),
                                          "load": os.getloadavg()[0], **latency_row(seconds[name]),
                                          "cpu_mean_ms": 1000 * statistics.fmean(cpu[name]),
                                          "cpu_p50_ms": 1000 * statistics.median(cpu[name])})
                out[name]["hits"][(kind, k, "query", 1)] = {q: engine.hits(r) for q, r in raws[name].items()}
    for engine in engines.values():
        engine.close()
    peak = native.vm_peak()
    for name in out:
        out[name]["peak_rss_bytes"] = peak
    return out


def expected_rows(name: str, kinds: list[str], ks: list[int], threads: list[int], positions: bool) -> list[tuple]:
    """(engine, kind, k, threads, mode) of every row an engine that runs should produce."""
    engine = ENGINES[name][1]()
    rows = []
    for kind in [k for k in engine.kinds if k in kinds and (positions or k != "window")]:
        for k in ks:
            if getattr(engine, "per_query", True):
                rows.append((name, kind, k, 1, "query"))
            if hasattr(engine, "batch"):
                rows += [(name, kind, k, t, "batch") for t in (threads if engine.batch_threads else [1])]
    return rows
