"""Dense-impacts sidecar off the heap (issue 52, item 3): exact search reading the sidecar's rows from the
memory-mapped files against the former layout loading them onto the JVM heap, on one index, in one run.

    python -m lsr_lucene.bench.dense_heap --index INDEX[,INDEX...] --query-vectors Q.jsonl --output runs/memory \\
        [--queries 300] [--ks 10,1000] [--heap 1g] [--rounds 3]

Per index (e.g. two sizes of one collection, to show what grows): latency: both layouts open in one JVM (system
property ``lsr.denseImpacts.onHeap`` set while the on-heap one opens), every query timed on each in turn (wall and
thread CPU time, alternating which goes first), ``--rounds`` passes; their hits must be identical. Memory: one fresh
JVM per layout (``-Xmx`` = ``--heap``; and one with the sidecar unused, ``none``, the index's own heap) opens the
index, searches every query at every k, then reports the heap in use after a full GC (what the searcher keeps), the
heap's peak, and the process's peak RSS (mapped pages touched included). Writes OUTPUT/dense_heap.csv (latency per
size, k and layout), OUTPUT/dense_heap_memory.csv, OUTPUT/dense_heap_indexes.csv and OUTPUT/dense_heap.md.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lsr_lucene.bench.engine_native import vm_peak
from lsr_lucene.bench.real import load_queries
from lsr_lucene.bench.scale_queries import sample_queries
from lsr_lucene.bench.scale_report import machine
from lsr_lucene.errors import InputError
from lsr_lucene.index.impact import index_size, read_index_metadata
from lsr_lucene.io.output import atomic_output

if TYPE_CHECKING:
    from lsr_lucene.search.spec_searcher import SpecSearcher

ON_HEAP_PROPERTY = "lsr.denseImpacts.onHeap"  # DenseImpacts.ON_HEAP_PROPERTY
LAYOUTS = ("heap", "mapped")  # timed against each other
MEMORY_LAYOUTS = ("none", *LAYOUTS)  # none: the sidecar left unused (what the index itself keeps on the heap)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m lsr_lucene.bench.dense_heap", description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="impact indexes with their dense-impacts sidecar "
                                                       "(comma list)")
    parser.add_argument("--query-vectors", required=True, help="encoded queries (JSONL {id, vector})")
    parser.add_argument("--output", default="runs/memory", help="folder of the result tables")
    parser.add_argument("--queries", type=int, default=300, help="queries timed (seeded sample)")
    parser.add_argument("--ks", default="10,1000")
    parser.add_argument("--heap", default="1g", help="-Xmx of every JVM of the benchmark")
    parser.add_argument("--rounds", type=int, default=3, help="timed passes over the queries")
    parser.add_argument("--warmup", type=int, default=20, help="queries searched untimed first, per layout and k")
    parser.add_argument("--seed", type=int, default=0)
    # one layout's memory, in a fresh JVM
    parser.add_argument("--child", choices=MEMORY_LAYOUTS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.ks = [int(k) for k in args.ks.split(",")]
    return args


def _specs(args: argparse.Namespace) -> list[dict]:
    queries = sample_queries(load_queries(Path(args.query_vectors)), args.queries, args.seed)
    return [{"qid": q["qid"], "terms": {t: w for t, w in q["vector"].items() if w > 0}} for q in queries]


def _open(index: str, layout: str) -> SpecSearcher:
    """A SpecSearcher whose dense-impacts rows are read from the mapped files or loaded onto the heap (none: the
    sidecar unused)."""
    from lsr_lucene.jvm.runtime import autoclass
    from lsr_lucene.search.spec_searcher import SpecSearcher

    system = autoclass("java.lang.System")
    if layout == "heap":
        system.setProperty(ON_HEAP_PROPERTY, "true")
    try:
        searcher = SpecSearcher(index, dense_impacts=layout != "none")
    finally:
        system.clearProperty(ON_HEAP_PROPERTY)
    got = searcher._java.denseImpactsLayout()
    if got != ("" if layout == "none" else layout):
        searcher.close()
        raise InputError(f"{index}: the dense-impacts sidecar is not usable here ({got or 'absent or stale'}); "
                         f"build it with lsr-lucene index --index {index} --dense-impacts 0.0625")
    return searcher


def heap_in_use() -> tuple[int, int]:
    """(heap bytes in use after a full GC, the heap's peak use so far) of this process's JVM."""
    from lsr_lucene.jvm.runtime import autoclass

    factory = autoclass("java.lang.management.ManagementFactory")
    peak = sum(pool.getPeakUsage().getUsed() for pool in factory.getMemoryPoolMXBeans()
               if pool.getType().toString() == "Heap memory")
    for _ in range(3):
        autoclass("java.lang.System").gc()
    return int(factory.getMemoryMXBean().getHeapMemoryUsage().getUsed()), int(peak)


def child(args: argparse.Namespace) -> int:
    """One layout in this (fresh) JVM: open, search everything once, report memory as one JSON line."""
    specs = _specs(args)
    from lsr_lucene.jvm import runtime as jvm

    jvm.start()
    before, _ = heap_in_use()
    searcher = _open(args.index, args.child)
    opened, _ = heap_in_use()
    for k in args.ks:
        for spec in specs:
            searcher.search(spec, k)
    searching, peak = heap_in_use()
    searcher.close()
    print(json.dumps({"layout": args.child, "heap_before_open": before, "heap_open": opened,
                      "heap_after_search": searching, "heap_peak": peak, "peak_rss": vm_peak()}))
    return 0


def measure_memory(args: argparse.Namespace, index: str) -> pd.DataFrame:
    """Each layout's memory, each in a fresh JVM with -Xmx = --heap."""
    rows = []
    env = {**os.environ, "LSR_JVM_HEAP": args.heap}
    for layout in MEMORY_LAYOUTS:
        command = [sys.executable, "-m", "lsr_lucene.bench.dense_heap", "--index", index, "--query-vectors",
                   args.query_vectors, "--queries", str(args.queries), "--ks", ",".join(map(str, args.ks)),
                   "--seed", str(args.seed), "--child", layout]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise InputError(f"the {layout} layout failed with -Xmx{args.heap}: {done.stderr.strip()[-2000:]}")
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return pd.DataFrame(rows)


def measure_latency(args: argparse.Namespace, index: str, specs: list[dict]) -> pd.DataFrame:
    """Both layouts in this JVM, each query on each in turn (which goes first alternates); hits checked equal."""
    searchers = {layout: _open(index, layout) for layout in LAYOUTS}
    rows = []
    try:
        for k in args.ks:
            for spec in specs[:args.warmup]:
                for searcher in searchers.values():
                    searcher.search(spec, k)
            for r in range(args.rounds):
                for i, spec in enumerate(specs):
                    order = LAYOUTS if (i + r) % 2 == 0 else LAYOUTS[::-1]
                    hits = {}
                    for layout in order:
                        wall, cpu = time.perf_counter(), time.thread_time()
                        hits[layout] = searchers[layout].search(spec, k)
                        rows.append({"k": k, "round": r, "qid": spec["qid"], "layout": layout,
                                     "wall_ms": (time.perf_counter() - wall) * 1e3,
                                     "cpu_ms": (time.thread_time() - cpu) * 1e3})
                    if hits["heap"] != hits["mapped"]:
                        raise AssertionError(f"query {spec['qid']} k={k}: the layouts' hits differ")
    finally:
        for searcher in searchers.values():
            searcher.close()
    return pd.DataFrame(rows)


def latency_table(latency: pd.DataFrame) -> pd.DataFrame:
    """Per index size, k and layout: mean, p50 and p99 wall ms, mean CPU ms, and the mapped/heap ratios."""
    rows = []
    for (docs, k), group in latency.groupby(["docs", "k"]):
        row: dict = {"docs": docs, "k": k, "queries": group["qid"].nunique(), "rounds": group["round"].nunique()}
        for layout in LAYOUTS:
            g = group[group["layout"] == layout]
            row.update({f"{layout}_wall_ms_mean": g["wall_ms"].mean(),
                        f"{layout}_wall_ms_p50": np.percentile(g["wall_ms"], 50),
                        f"{layout}_wall_ms_p99": np.percentile(g["wall_ms"], 99),
                        f"{layout}_cpu_ms_mean": g["cpu_ms"].mean()})
        row["wall_ratio"] = row["mapped_wall_ms_mean"] / row["heap_wall_ms_mean"]
        row["cpu_ratio"] = row["mapped_cpu_ms_mean"] / row["heap_cpu_ms_mean"]
        rows.append(row)
    return pd.DataFrame(rows).round(4)


def summary(table: pd.DataFrame, memory: pd.DataFrame, args: argparse.Namespace, indexes: pd.DataFrame) -> str:
    """The Markdown report: per index, latency per layout and k with the mapped/heap ratios, then memory per layout
    with the heap each keeps per document."""
    lines = ["# Dense-impacts rows off the heap: mapped files vs on-heap arrays\n",
             (f"Machine: {machine()}. {args.queries} queries (seeded sample) x {args.rounds} rounds per k, both "
              f"layouts in one JVM (-Xmx{args.heap}), query by query in turn (which goes first alternates); hits "
              "identical on every query. Latency per query: wall and thread CPU time (CPU time holds on a loaded "
              "machine); ratio: mean mapped / mean heap.\n"),
             ("| documents | k | heap: mean wall ms | mapped: mean wall ms | heap: p50 / p99 wall ms | "
              "mapped: p50 / p99 wall ms | heap: mean CPU ms | mapped: mean CPU ms | wall ratio | CPU ratio |"),
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for _, r in table.iterrows():
        lines.append(f"| {int(r['docs']):,} | {int(r['k'])} | {r['heap_wall_ms_mean']:.2f} | "
                     f"{r['mapped_wall_ms_mean']:.2f} | "
                     f"{r['heap_wall_ms_p50']:.2f} / {r['heap_wall_ms_p99']:.2f} | "
                     f"{r['mapped_wall_ms_p50']:.2f} / {r['mapped_wall_ms_p99']:.2f} | {r['heap_cpu_ms_mean']:.2f} | "
                     f"{r['mapped_cpu_ms_mean']:.2f} | {r['wall_ratio']:.3f} | {r['cpu_ratio']:.3f} |")
    lines += ["", "Sizes on disk (index without the sidecar; the sidecar) per document:\n",
              "| documents | index MiB | index bytes/doc | sidecar MiB | sidecar bytes/doc | dense terms |",
              "|---:|---:|---:|---:|---:|---:|"]
    for _, row in indexes.iterrows():
        lines.append(f"| {row['docs']:,} | {row['index_bytes'] / 2**20:.1f} | {row['index_bytes'] / row['docs']:.0f} | "
                     f"{row['sidecar_bytes'] / 2**20:.1f} | {row['sidecar_bytes'] / row['docs']:.0f} | "
                     f"{row['dense_terms']} |")
    lines += ["", (f"Memory, one fresh JVM per layout and index (-Xmx{args.heap}; none: the sidecar unused): heap "
                   "in use after a full GC before opening the index, with it open, after searching every query at "
                   "every k; the heap's peak; the process's peak RSS (JVM, Python and the mapped pages touched); heap "
                   "kept per document: (after search - before open) / documents.\n"),
              ("| documents | layout | heap before open MiB | heap open MiB | heap after search MiB | heap peak MiB | "
               "peak RSS MiB | heap kept bytes/doc |"), "|---:|:---|---:|---:|---:|---:|---:|---:|"]
    for _, row in memory.iterrows():
        kept = (row["heap_after_search"] - row["heap_before_open"]) / max(row["docs"], 1)
        lines.append(f"| {row['docs']:,} | {row['layout']} | {row['heap_before_open'] / 2**20:.1f} | "
                     f"{row['heap_open'] / 2**20:.1f} | {row['heap_after_search'] / 2**20:.1f} | "
                     f"{row['heap_peak'] / 2**20:.1f} | {row['peak_rss'] / 2**20:.1f} | {kept:.0f} |")
    sizes = sorted(memory["docs"].unique())
    if len(sizes) > 1:
        lines += ["", ("Heap growth per added document between the sizes ((heap after search at the larger - at the "
                       "smaller) / added documents): what the heap needs per document as the collection grows, the "
                       "fixed part (dictionaries, buffers) left out.\n"),
                  "| from | to | " + " | ".join(f"{layout} bytes/doc" for layout in MEMORY_LAYOUTS) + " |",
                  "|---:|---:|" + "---:|" * len(MEMORY_LAYOUTS)]
        kept = memory.set_index(["docs", "layout"])["heap_after_search"]
        for small, large in itertools.pairwise(sizes):
            growth = [(kept[(large, layout)] - kept[(small, layout)]) / (large - small) for layout in MEMORY_LAYOUTS]
            lines.append(f"| {small:,} | {large:,} | " + " | ".join(f"{g:.0f}" for g in growth) + " |")
    lines += ["", f"Command: python -m lsr_lucene.bench.dense_heap {' '.join(sys.argv[1:])}", ""]
    return "\n".join(lines)


def _describe(index: Path) -> dict:
    """Documents, sizes on disk and dense terms of an index with its sidecar."""
    from lsr_lucene.search.spec_searcher import SpecSearcher

    sidecar = index / "dense-impacts"
    if not sidecar.is_dir():
        raise InputError(f"{index}: no dense-impacts sidecar; build it with lsr-lucene index --index {index} "
                         "--dense-impacts 0.0625")
    with SpecSearcher(index) as searcher:
        docs = searcher.num_docs
    metadata = read_index_metadata(index)
    return {"index": str(index), "docs": docs, "index_bytes": index_size(index) - index_size(sidecar),
            "sidecar_bytes": index_size(sidecar), "dense_terms": metadata.get("dense_impacts", {}).get("terms", "")}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("LSR_JVM_HEAP", args.heap)
    if args.child:
        return child(args)
    specs = _specs(args)
    indexes, latency, memory = [], [], []
    for index in args.index.split(","):
        described = _describe(Path(index))
        indexes.append(described)
        memory.append(measure_memory(args, index).assign(docs=described["docs"]))
        latency.append(measure_latency(args, index, specs).assign(docs=described["docs"]))
    frames = {"dense_heap.csv": latency_table(pd.concat(latency)), "dense_heap_memory.csv": pd.concat(memory),
              "dense_heap_indexes.csv": pd.DataFrame(indexes)}
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in frames.items():
        with atomic_output(out / name, overwrite=True) as tmp:
            frame.to_csv(tmp, index=False)
    report = summary(frames["dense_heap.csv"], frames["dense_heap_memory.csv"], args, frames["dense_heap_indexes.csv"])
    with atomic_output(out / "dense_heap.md", overwrite=True) as tmp:
        Path(tmp).write_text(report, encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
