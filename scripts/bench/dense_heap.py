"""Dense-impacts sidecar off the heap (issue 52, item 3): exact search reading the sidecar's rows from the
memory-mapped files under a small heap against the former layout loading them onto a heap big enough, on one index.

    python -m scripts.bench.dense_heap --index INDEX[,INDEX...] --query-vectors Q.jsonl --output runs/memory \\
        [--queries 300] [--ks 10,1000] [--heap 1g] [--on-heap-heap 4g] [--rounds 6]

Per index (e.g. several sizes of one collection, to show what grows), one JVM per layout, each its own process
kept open for the whole run: ``mapped`` with ``-Xmx`` = ``--heap``, ``heap`` (system property
``lsr.denseImpacts.onHeap`` set while it opens) with ``-Xmx`` = ``--on-heap-heap``, and ``none`` (the sidecar
unused: the index's own heap) with ``--heap``. Latency: ``--rounds`` passes over the sampled queries per k, the two
timed layouts in alternating rounds (which goes first alternates too), every query's wall and thread CPU time; their
hits must be identical. The ratio mapped / heap of the mean time, with a 95 % bootstrap interval over the queries,
against the issue's 5 % bound. Memory, after every round: each JVM's heap in use after a full GC (what the searcher
keeps), the heap's peak, the process's peak RSS and its anonymous and file-backed resident memory. Writes
OUTPUT/dense_heap.csv (latency per size, k and layout), OUTPUT/dense_heap_memory.csv, OUTPUT/dense_heap_indexes.csv
and OUTPUT/dense_heap.md.
"""
from __future__ import annotations

import argparse
import hashlib
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

from scripts.bench.engine_native import vm_peak
from scripts.bench.real import load_queries
from scripts.bench.scale_queries import sample_queries
from scripts.bench.scale_report import machine
from lsr_lucene.errors import InputError
from lsr_lucene.index.impact import index_size, read_index_metadata
from lsr_lucene.io.output import atomic_output

if TYPE_CHECKING:
    from lsr_lucene.search.spec_searcher import SpecSearcher

ON_HEAP_PROPERTY = "lsr.denseImpacts.onHeap"  # DenseImpacts.ON_HEAP_PROPERTY
LAYOUTS = ("heap", "mapped")  # timed against each other
MEMORY_LAYOUTS = ("none", *LAYOUTS)  # none: the sidecar left unused (what the index itself keeps on the heap)
CONTROL = "control"  # a second JVM of the mapped layout: what two JVMs of one layout differ by (the noise floor)
BOUND = 1.05  # the bound on mapped / heap time
REPLY = "@@"  # prefix of a child's reply lines (anything else on its stdout is ignored)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench.dense_heap", description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="impact indexes with their dense-impacts sidecar "
                                                       "(comma list)")
    parser.add_argument("--query-vectors", required=True, help="encoded queries (JSONL {id, vector})")
    parser.add_argument("--output", default="runs/memory", help="folder of the result tables")
    parser.add_argument("--queries", type=int, default=300, help="queries timed (seeded sample)")
    parser.add_argument("--ks", default="10,1000")
    parser.add_argument("--heap", default="1g", help="-Xmx of the mapped layout's JVM (and of the none layout's)")
    parser.add_argument("--on-heap-heap", default="4g", help="-Xmx of the on-heap layout's JVM (big enough for "
                                                             "the rows)")
    parser.add_argument("--rounds", type=int, default=6, help="timed passes over the queries per layout and k")
    parser.add_argument("--warmup", type=int, default=1, help="untimed passes first, per layout and k")
    parser.add_argument("--bootstrap", type=int, default=2000, help="resamples of the ratio's interval")
    parser.add_argument("--no-control", dest="control", action="store_false",
                        help="leave out the control: a second mapped JVM timed in the same rounds, whose ratio to "
                             "the first says how far two JVMs of one layout differ")
    parser.add_argument("--seed", type=int, default=0)
    # one layout's JVM, serving the parent's commands
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
    got = searcher.dense_impacts_layout
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


def resident() -> dict[str, int]:
    """This process's resident memory now: anonymous (heap, native) and file-backed (mapped files, code) bytes."""
    fields = {"RssAnon:": "rss_anon", "RssFile:": "rss_file"}
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name = line.split(":", 1)[0] + ":"
        if name in fields:
            out[fields[name]] = int(line.split()[1]) * 1024
    return out


def _digest(hits: list) -> str:
    return hashlib.sha1(repr(hits).encode()).hexdigest()[:16]


def child(args: argparse.Namespace) -> int:
    """One layout in this (fresh) JVM, serving the parent one JSON command a line: ``{"k", "timed"}`` searches every
    query once (its times and hits' digests back), ``{"memory": true}`` reports memory, ``{"quit": true}`` ends."""
    specs = _specs(args)
    from lsr_lucene.jvm import runtime as jvm

    jvm.start()
    before, _ = heap_in_use()
    searcher = _open(args.index, args.child)
    opened, _ = heap_in_use()
    print(REPLY + json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        if command.get("quit"):
            break
        if command.get("memory"):
            searching, peak = heap_in_use()
            reply: dict = {"layout": args.child, "heap_before_open": before, "heap_open": opened,
                           "heap_after_search": searching, "heap_peak": peak, "peak_rss": vm_peak(), **resident()}
        else:
            wall_ms, cpu_ms, digests = [], [], []
            for spec in specs:
                wall, cpu = time.perf_counter(), time.thread_time()
                hits = searcher.search(spec, command["k"])
                wall_ms.append((time.perf_counter() - wall) * 1e3)
                cpu_ms.append((time.thread_time() - cpu) * 1e3)
                digests.append(_digest(hits))
            reply = {"wall_ms": wall_ms, "cpu_ms": cpu_ms, "digests": digests}
        print(REPLY + json.dumps(reply), flush=True)
    searcher.close()
    return 0


class Layout:
    """A child process holding one layout's JVM (``-Xmx`` given), answering one command at a time."""

    def __init__(self, args: argparse.Namespace, index: str, layout: str, heap: str):
        self.layout, self.heap = layout, heap
        command = [sys.executable, "-m", "scripts.bench.dense_heap", "--index", index, "--query-vectors",
                   args.query_vectors, "--queries", str(args.queries), "--seed", str(args.seed), "--child", layout]
        self.process = subprocess.Popen(command, env={**os.environ, "LSR_JVM_HEAP": heap}, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._reply()

    def _reply(self) -> dict:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith(REPLY):
                return json.loads(line[len(REPLY):])
        raise InputError(f"the {self.layout} layout's JVM (-Xmx{self.heap}) stopped (exit "
                         f"{self.process.wait()}); its error is above")

    def ask(self, command: dict) -> dict:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        return self._reply()

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.write(json.dumps({"quit": True}) + "\n")
            self.process.stdin.close()
            self.process.wait()


def measure(args: argparse.Namespace, index: str, specs: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(latency rows, memory rows) of one index: the layouts' JVMs side by side, the timed two in alternating
    rounds; their hits checked equal on every query and round."""
    heaps = {"none": args.heap, "mapped": args.heap, "heap": args.on_heap_heap, CONTROL: args.heap}
    timed = [*LAYOUTS, *([CONTROL] if args.control else [])]
    layouts: dict[str, Layout] = {}
    rows = []
    try:
        for name in [*MEMORY_LAYOUTS, *timed[len(LAYOUTS):]]:
            layouts[name] = Layout(args, index, "mapped" if name == CONTROL else name, heaps[name])
        for k in args.ks:
            layouts["none"].ask({"k": k})
            for layout in timed:
                for _ in range(args.warmup):
                    layouts[layout].ask({"k": k})
            for r in range(args.rounds):
                order = timed[r % len(timed):] + timed[:r % len(timed)]  # who goes first rotates
                order = order if r // len(timed) % 2 == 0 else order[::-1]
                got = {layout: layouts[layout].ask({"k": k}) for layout in order}
                if any(reply["digests"] != got["heap"]["digests"] for reply in got.values()):
                    raise AssertionError(f"{index} k={k} round {r}: the layouts' hits differ")
                for layout, reply in got.items():
                    rows += [{"k": k, "round": r, "qid": spec["qid"], "layout": layout, "wall_ms": wall,
                              "cpu_ms": cpu} for spec, wall, cpu in zip(specs, reply["wall_ms"], reply["cpu_ms"])]
        memory = [{**layouts[layout].ask({"memory": True}), "xmx": heaps[layout]} for layout in MEMORY_LAYOUTS]
    finally:
        for child_process in layouts.values():
            child_process.close()
    return pd.DataFrame(rows), pd.DataFrame(memory)


def ratio_interval(group: pd.DataFrame, column: str, resamples: int, seed: int, over: str = "mapped",
                   under: str = "heap") -> tuple[float, float, float]:
    """mean ``over`` / mean ``under`` layout of ``column`` over the queries (each query's mean over the rounds), with
    a 95 % bootstrap interval resampling the queries (paired: a query's two layouts stay together)."""
    per_query = group.pivot_table(index="qid", columns="layout", values=column, aggfunc="mean")
    mapped, heap = per_query[over].to_numpy(), per_query[under].to_numpy()
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(mapped), size=(resamples, len(mapped)))
    ratios = mapped[picks].mean(axis=1) / heap[picks].mean(axis=1)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(mapped.mean() / heap.mean()), float(low), float(high)


def verdict(low: float, high: float, bound: float = BOUND) -> str:
    """Whether the interval of mapped / heap lies within the bound: yes, no or undecided."""
    return "yes" if high <= bound else "no" if low > bound else "undecided"


def latency_table(latency: pd.DataFrame, resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per index size and k: each layout's mean, p50 and p99 wall ms and mean CPU ms; the mapped / heap ratios of
    the mean wall and CPU time with their 95 % intervals, and whether the interval is within the 5 % bound."""
    rows = []
    for (docs, k), group in latency.groupby(["docs", "k"]):
        row: dict = {"docs": docs, "k": k, "queries": group["qid"].nunique(), "rounds": group["round"].nunique()}
        for layout in LAYOUTS:
            g = group[group["layout"] == layout]
            row.update({f"{layout}_wall_ms_mean": g["wall_ms"].mean(),
                        f"{layout}_wall_ms_p50": np.percentile(g["wall_ms"], 50),
                        f"{layout}_wall_ms_p99": np.percentile(g["wall_ms"], 99),
                        f"{layout}_cpu_ms_mean": g["cpu_ms"].mean()})
        for kind in ("wall", "cpu"):
            ratio, low, high = ratio_interval(group, f"{kind}_ms", resamples, seed)
            row.update({f"{kind}_ratio": ratio, f"{kind}_ratio_low": low, f"{kind}_ratio_high": high,
                        f"{kind}_within_bound": verdict(low, high)})
            if CONTROL in set(group["layout"]):
                ratio, low, high = ratio_interval(group, f"{kind}_ms", resamples, seed, CONTROL, "mapped")
                row.update({f"control_{kind}_ratio": ratio, f"control_{kind}_ratio_low": low,
                            f"control_{kind}_ratio_high": high})
        rows.append(row)
    return pd.DataFrame(rows).round(4)


def per_document(indexes: pd.DataFrame, memory: pd.DataFrame) -> dict[str, float]:
    """Bytes per document of the largest index: index and sidecar on disk, and the heap the mapped layout keeps
    (growth between the two largest sizes when there are several, else heap kept / documents)."""
    largest = indexes.sort_values("docs").iloc[-1]
    mapped = memory[memory["layout"] == "mapped"].set_index("docs")["heap_after_search"].sort_index()
    if len(mapped) > 1:
        heap = (mapped.iloc[-1] - mapped.iloc[-2]) / (mapped.index[-1] - mapped.index[-2])
    else:
        base = memory[memory["layout"] == "mapped"].iloc[-1]
        heap = (base["heap_after_search"] - base["heap_before_open"]) / base["docs"]
    return {"docs": int(largest["docs"]), "index": largest["index_bytes"] / largest["docs"],
            "sidecar": largest["sidecar_bytes"] / largest["docs"], "heap": float(heap)}


def summary(table: pd.DataFrame, memory: pd.DataFrame, args: argparse.Namespace, indexes: pd.DataFrame) -> str:
    """The Markdown report: per index, latency per layout and k with the mapped/heap ratios and the 5 % bound, then
    sizes and memory per layout with the heap each keeps per document."""
    lines = ["# Dense-impacts rows off the heap: mapped files under a small heap vs on-heap arrays\n",
             (f"Machine: {machine()}. {args.queries} queries (seeded sample) x {args.rounds} rounds per k and "
              f"layout; one JVM per layout, each its own process: mapped with -Xmx{args.heap}, heap (the former "
              f"on-heap rows, -D{ON_HEAP_PROPERTY}=true) with -Xmx{args.on_heap_heap}"
              + (", and a control: a second mapped JVM (-Xmx" + args.heap + ")" if args.control else "")
              + f"; timed in alternating rounds (which goes first rotates), after {args.warmup} untimed round(s) "
              "each; hits identical on "
              "every query and round. Latency per query: wall and thread CPU time (CPU time holds better on a "
              "loaded machine). Ratio: mean mapped / mean heap, [95 % bootstrap interval over the queries]; within "
              f"5 %: the interval's upper end <= {BOUND} (yes), its lower end above (no), else undecided.\n"),
             ("| documents | k | heap: mean / p50 / p99 wall ms | mapped: mean / p50 / p99 wall ms | heap: mean CPU "
              "ms | mapped: mean CPU ms | wall ratio [95 %] | CPU ratio [95 %] | within 5 % (wall; CPU) |"),
             "|---:|---:|---:|---:|---:|---:|---:|---:|:---|"]
    for _, r in table.iterrows():
        lines.append(f"| {int(r['docs']):,} | {int(r['k'])} | {r['heap_wall_ms_mean']:.2f} / "
                     f"{r['heap_wall_ms_p50']:.2f} / {r['heap_wall_ms_p99']:.2f} | {r['mapped_wall_ms_mean']:.2f} / "
                     f"{r['mapped_wall_ms_p50']:.2f} / {r['mapped_wall_ms_p99']:.2f} | {r['heap_cpu_ms_mean']:.2f} | "
                     f"{r['mapped_cpu_ms_mean']:.2f} | {r['wall_ratio']:.3f} [{r['wall_ratio_low']:.3f}, "
                     f"{r['wall_ratio_high']:.3f}] | {r['cpu_ratio']:.3f} [{r['cpu_ratio_low']:.3f}, "
                     f"{r['cpu_ratio_high']:.3f}] | {r['wall_within_bound']}; {r['cpu_within_bound']} |")
    if "control_cpu_ratio" in table:
        lines += ["", ("Control: the second mapped JVM / the first, same rounds (how far two JVMs of one layout "
                       "differ; a mapped / heap ratio inside this spread is not a difference of the layouts):\n"),
                  "| documents | k | wall ratio [95 %] | CPU ratio [95 %] |", "|---:|---:|---:|---:|"]
        lines += [f"| {int(r['docs']):,} | {int(r['k'])} | {r['control_wall_ratio']:.3f} "
                  f"[{r['control_wall_ratio_low']:.3f}, {r['control_wall_ratio_high']:.3f}] | "
                  f"{r['control_cpu_ratio']:.3f} [{r['control_cpu_ratio_low']:.3f}, "
                  f"{r['control_cpu_ratio_high']:.3f}] |" for _, r in table.iterrows()]
    lines += ["", "Sizes on disk (index without the sidecar; the sidecar) per document:\n",
              "| documents | index MiB | index bytes/doc | sidecar MiB | sidecar bytes/doc | dense terms |",
              "|---:|---:|---:|---:|---:|---:|"]
    for _, row in indexes.iterrows():
        lines.append(f"| {row['docs']:,} | {row['index_bytes'] / 2**20:.1f} | {row['index_bytes'] / row['docs']:.0f} | "
                     f"{row['sidecar_bytes'] / 2**20:.1f} | {row['sidecar_bytes'] / row['docs']:.0f} | "
                     f"{row['dense_terms']} |")
    lines += ["", ("Memory of each layout's JVM after every round (none: the sidecar unused, -Xmx as mapped): heap "
                   "in use after a full GC before opening the index, with it open, after searching; the heap's peak; "
                   "the process's peak RSS (JVM, Python and the mapped pages touched) and its resident memory at the "
                   "end, anonymous (heap, native) and file-backed (mapped index files, code); heap kept per document: "
                   "(after search - before open) / documents.\n"),
              ("| documents | layout | -Xmx | heap before open MiB | heap open MiB | heap after search MiB | heap peak "
               "MiB | peak RSS MiB | RSS anon / file MiB | heap kept bytes/doc |"),
              "|---:|:---|:---|---:|---:|---:|---:|---:|---:|---:|"]
    for _, row in memory.iterrows():
        kept = (row["heap_after_search"] - row["heap_before_open"]) / max(row["docs"], 1)
        lines.append(f"| {row['docs']:,} | {row['layout']} | {row['xmx']} | {row['heap_before_open'] / 2**20:.1f} | "
                     f"{row['heap_open'] / 2**20:.1f} | {row['heap_after_search'] / 2**20:.1f} | "
                     f"{row['heap_peak'] / 2**20:.1f} | {row['peak_rss'] / 2**20:.1f} | "
                     f"{row['rss_anon'] / 2**20:.0f} / {row['rss_file'] / 2**20:.0f} | {kept:.0f} |")
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
    each = per_document(indexes, memory)
    lines += ["", (f"**Memory per document** (at {each['docs']:,}): index {each['index']:.0f} B on disk, sidecar "
                   f"{each['sidecar']:.0f} B on disk (page cache when hot), heap {each['heap']:.0f} B with the mapped "
                   "sidecar" + (" (growth between the two largest sizes)." if len(sizes) > 1 else " (kept / documents).")),
              "", f"Command: python -m scripts.bench.dense_heap {' '.join(sys.argv[1:])}", ""]
    return "\n".join(lines)


def _describe(index: Path) -> dict:
    """Documents, sizes on disk and dense terms of an index with its sidecar."""
    sidecar = index / "dense-impacts"
    if not sidecar.is_dir():
        raise InputError(f"{index}: no dense-impacts sidecar; build it with lsr-lucene index --index {index} "
                         "--dense-impacts 0.0625")
    metadata = read_index_metadata(index)
    return {"index": str(index), "docs": int(metadata["indexed"]), "index_bytes": index_size(index) - index_size(sidecar),
            "sidecar_bytes": index_size(sidecar), "dense_terms": metadata.get("dense_impacts", {}).get("terms", "")}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        os.environ.setdefault("LSR_JVM_HEAP", args.heap)
        return child(args)
    specs = _specs(args)
    indexes, latency, memory = [], [], []
    for index in args.index.split(","):
        described = _describe(Path(index))
        indexes.append(described)
        timed, kept = measure(args, index, specs)
        latency.append(timed.assign(docs=described["docs"]))
        memory.append(kept.assign(docs=described["docs"]))
    frames = {"dense_heap.csv": latency_table(pd.concat(latency), args.bootstrap, args.seed),
              "dense_heap_memory.csv": pd.concat(memory), "dense_heap_indexes.csv": pd.DataFrame(indexes)}
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
