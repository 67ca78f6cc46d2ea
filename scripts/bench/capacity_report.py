"""The capacity plan (issue 52, item 4) from measurements: growth curves fitted over collection sizes, and a worked
plan for larger collections cut into shards.

    python -m scripts.bench.capacity_report --real runs/real/100k,runs/real/300k,runs/real/666k \\
        --real-builds runs/real/index.csv --builds runs/distributed/capacity_builds.csv \\
        --dense-heap runs/memory/offheap --output runs/distributed [--collections 8800000,100000000]

Measured points come from ``bench.real`` runs (index and sidecar sizes, exact and approximate latency, the
benchmark's peak RSS), their build table (build and BP time, build peak RSS, 2 threads), and from the newer
``bench.capacity_builds`` and ``bench.dense_heap`` runs (builds with the sidecar, the heap and the process's own
memory under the mapped sidecar). Where both have a quantity, the ``bench.real`` runs are used and the other is
fitted beside it. Writes OUTPUT/capacity.md, capacity.csv (fits), capacity_points.csv, capacity_plan.csv and
capacity.png. Nothing is measured here except the driver's merge cost (on this machine, named in the report).
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

from scripts.bench import real_approx
from scripts.bench.capacity import Fit, Node, fit, fits_table, merge_overhead_ms, shard_plan
from scripts.bench.scale_report import machine
from lsr_lucene.errors import InputError
from lsr_lucene.io.output import atomic_output, save_png

LINEAR = {"heap_bytes", "rss_anon_bytes"}  # a fixed part plus a part per document
PLAN_QUANTITIES = ("index_bytes", "sidecar_bytes", "heap_bytes", "rss_anon_bytes", "build_bp_s",
                   "build_peak_rss_bytes", *(f"{kind}_k{k}_{stat}_ms" for kind in ("exact", "approx")
                                             for k in (10, 1000) for stat in ("mean", "p99")))
LABELS = {"index_bytes": "index on disk (BP order, without sidecar)", "sidecar_bytes": "dense-impacts sidecar on disk",
          "heap_bytes": "JVM heap kept, mapped sidecar", "rss_anon_bytes": "search process's own memory (RSS anon)",
          "search_peak_rss_bytes": "search process peak RSS", "build_bp_s": "index build with BP, 2 threads",
          "build_natural_s": "index build, natural order, 2 threads", "bp_s": "BP reordering alone",
          "build_peak_rss_bytes": "index build with BP, peak RSS",
          **{f"{kind}_k{k}_{stat}_ms": f"{name} k={k}, {stat} per query" for kind, name in (
              ("exact", "exact, BP order,"), ("exact_natural", "exact, natural order, mapped sidecar,"),
              ("approx", "approximate (ours-heap at the recall goal),")) for k in (10, 1000) for stat in ("mean", "p99")}}


def _machine_of(folder: Path) -> str:
    """The 'Machine:' line of a bench.real folder's results.md (with the load average of the run)."""
    path = folder / "results.md"
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.startswith("Machine:"):
                return line.split(":", 1)[1].strip()
    return ""


def real_points(folders: list[Path], builds: Path | None) -> pd.DataFrame:
    """Points of bench.real runs: sizes, exact (ours, BP order, one query at a time) and approximate (ours-heap,
    fastest at the recall goal) latency, peak RSS; build and BP time from their build table."""
    rows = []

    def add(quantity: str, docs: int, value: float, source: str, where: str) -> None:
        if value == value:  # not NaN
            rows.append({"quantity": quantity, "docs": int(docs), "value": float(value), "source": source,
                         "from": where, "machine": _machine_of(folder), "encoding": "fp32 (earlier encoding)"})

    for folder in folders:
        for name in ("index.csv", "results.csv"):
            if not (folder / name).is_file():
                raise InputError(f"{folder / name}: no such file (a bench.real output folder?)")
        index = pd.read_csv(folder / "index.csv")
        for _, r in index[(index.engine == "ours") & (index.order == "bp")].iterrows():
            add("index_bytes", r.docs, r.size_bytes, "real", f"{folder}/index.csv (ours, bp)")
        for _, r in index[(index.engine == "ours-dense") & (index.order == "natural")].iterrows():
            add("sidecar_bytes", r.docs, r.size_bytes, "real", f"{folder}/index.csv (ours-dense)")
        results = pd.read_csv(folder / "results.csv")
        exact = results[(results.engine == "ours") & (~results.approximate.astype(bool)) & (results.kind == "plain")
                        & (results.threads == 1) & (results["mode"] == "query") & (results.order == "bp")]
        for _, r in exact.iterrows():
            for stat in ("mean", "p99"):
                add(f"exact_k{r.k}_{stat}_ms", r.docs, r[f"{stat}_ms"], "real", f"{folder}/results.csv (ours, bp)")
        if len(exact):
            add("search_peak_rss_bytes", exact.docs.iloc[0], exact.peak_rss_mb.max() * 2**20, "real",
                f"{folder}/results.csv (the benchmark process, every engine of the run)")
        if (folder / "approx.csv").is_file():
            curve = pd.read_csv(folder / "approx.csv")
            for k in (10, 1000):
                best = real_approx.fastest_at_goal(curve, "ours-heap", k)
                if best is not None:
                    for stat in ("mean", "p99"):
                        add(f"approx_k{k}_{stat}_ms", best.docs, best[f"{stat}_ms"], "real",
                            f"{folder}/approx.csv (ours-heap {best.order}, {best.setting}, recall {best.recall:.3f})")
    if builds is not None:
        table = pd.read_csv(builds)
        folder = folders[0]
        table = table[(table.engine == "ours") & (table.threads == 2)]
        for _, r in table.iterrows():
            add(f"build_{r.order}_s", r.docs, r.build_s, "real", f"{builds} (ours, {r.order}, 2 threads)")
            if r.order == "bp":
                add("bp_s", r.docs, r.bp_s, "real", f"{builds} (ours, bp)")
                add("build_peak_rss_bytes", r.docs, r.peak_rss_bytes, "real", f"{builds} (ours, bp)")
    return pd.DataFrame(rows)


def new_points(builds: Path | None, dense_heap: Path | None) -> pd.DataFrame:
    """Points of bench.capacity_builds (builds with the sidecar) and bench.dense_heap (memory of the search process
    with the mapped sidecar, exact latency in the natural order)."""
    rows = []
    if builds is not None and builds.is_file():
        for _, r in pd.read_csv(builds).iterrows():
            where = f"{builds} ({r.order}, {r.threads} threads, sidecar included)"
            base = {"source": "new", "from": where, "machine": r.machine,
                    "encoding": r.get("dtype", "") or ""}
            rows.append({**base, "quantity": f"build_{r.order}_s", "docs": r.docs, "value": r.build_s})
            if r.order == "bp":
                rows += [{**base, "quantity": "bp_s", "docs": r.docs, "value": r.bp_s},
                         {**base, "quantity": "build_peak_rss_bytes", "docs": r.docs, "value": r.build_peak_rss_bytes},
                         {**base, "quantity": "index_bytes", "docs": r.docs, "value": r.index_bytes}]
            else:
                rows.append({**base, "quantity": "sidecar_bytes", "docs": r.docs, "value": r.sidecar_bytes})
    if dense_heap is not None and (dense_heap / "dense_heap_memory.csv").is_file():
        report = (dense_heap / "dense_heap.md").read_text() if (dense_heap / "dense_heap.md").is_file() else ""
        where_machine = next((line.split(":", 1)[1].split(". ")[0].strip() for line in report.splitlines()
                              if line.startswith("Machine:")), "")
        base = {"source": "new", "machine": where_machine, "encoding": "int8"}
        memory = pd.read_csv(dense_heap / "dense_heap_memory.csv")
        for _, r in memory[memory.layout == "mapped"].iterrows():
            where = f"{dense_heap}/dense_heap_memory.csv (mapped, -Xmx{r.xmx})"
            rows += [{**base, "from": where, "quantity": "heap_bytes", "docs": r.docs, "value": r.heap_after_search},
                     {**base, "from": where, "quantity": "rss_anon_bytes", "docs": r.docs, "value": r.rss_anon},
                     {**base, "from": where, "quantity": "search_peak_rss_bytes", "docs": r.docs,
                      "value": r.peak_rss}]
        latency = pd.read_csv(dense_heap / "dense_heap.csv")
        for _, r in latency.iterrows():
            for stat, column in (("mean", "mapped_wall_ms_mean"), ("p99", "mapped_wall_ms_p99")):
                rows.append({**base, "from": f"{dense_heap}/dense_heap.csv (mapped, natural order)",
                             "quantity": f"exact_natural_k{r.k}_{stat}_ms", "docs": r.docs, "value": r[column]})
    return pd.DataFrame(rows)


def fit_all(points: pd.DataFrame) -> tuple[dict[str, Fit], dict[str, Fit]]:
    """(the fit the plan uses per quantity: bench.real's where it has two sizes or more, else the newer runs'; every
    other fit, keyed quantity/source)."""
    chosen: dict[str, Fit] = {}
    others: dict[str, Fit] = {}
    for (quantity, source), group in points.groupby(["quantity", "source"]):
        if group.docs.nunique() < 2:
            continue
        where = "; ".join(sorted(set(group["from"])))
        f = fit(quantity, group.docs, group.value, "linear" if quantity in LINEAR else "power", f"{source}: {where}")
        if quantity not in chosen or (source == "real" and not chosen[quantity].source.startswith("real")):
            if quantity in chosen:
                others[f"{quantity}/new"] = chosen[quantity]
            chosen[quantity] = f
        else:
            others[f"{quantity}/{source}"] = f
    return chosen, others


def _human(quantity: str, value: float) -> str:
    if quantity.endswith("_bytes"):
        return f"{value / 2**30:.2f} GiB" if value >= 2**30 else f"{value / 2**20:.1f} MiB"
    if quantity.endswith("_s"):
        return f"{value / 3600:.1f} h" if value >= 3600 else f"{value / 60:.1f} min" if value >= 120 else f"{value:.1f} s"
    return f"{value:.2f} ms"


def _duration(seconds: float) -> str:
    return _human("x_s", seconds)


def report(points: pd.DataFrame, chosen: dict[str, Fit], others: dict[str, Fit], plans: pd.DataFrame,
           node: Node, collections: list[int], args: argparse.Namespace, here: str) -> str:
    """capacity.md: the points, the fits (with what extrapolates), and the worked plan per collection."""
    measured_max = int(points.docs.max())
    lines = ["# Capacity plan: growth curves from measurements, worked plans for larger collections\n",
             (f"Points: {', '.join(f'{d:,}' for d in sorted(points.docs.unique()))} wiki2015 passages "
              "(splade-tiny, the seeded random order of `scripts/run_real.sh`). Every number below names the run it "
              "comes from (`capacity_points.csv`: one row per point, its file and machine). The driver's merge cost "
              f"was measured by this report on: {here}.\n"),
             "Machines of the points, with the load average when each run began: " + "; ".join(
                 f"{source}: " + " | ".join(sorted(set(group.machine.dropna()) - {""}))
                 for source, group in points.groupby("source")) + ".\n",
             ("The machine is shared (2 cores, other jobs and an encoder running): times taken at a load well above "
              "the cores (the new runs) are several times the idle runs' and serve no fit the plan uses; their "
              "sizes and memory do not depend on the load.\n"),
             "## Measured points\n", "| quantity | source | " + " | ".join(
                 f"{d:,}" for d in sorted(points.docs.unique())) + " |",
             "|:---|:---|" + "---:|" * points.docs.nunique()]
    for (quantity, source), group in points.groupby(["quantity", "source"]):
        values = group.groupby("docs").value.mean()
        lines.append(f"| {LABELS.get(quantity, quantity)} | {source} | " + " | ".join(
            _human(quantity, values[d]) if d in values else "" for d in sorted(points.docs.unique())) + " |")
    lines += ["", ("Sources: real = `bench.real` runs (`runs/real/<size>/`; their builds: `runs/real/index.csv`, the "
                   "2-thread rows), on an earlier fp32 encoding of the same passages; new = this plan's runs on the "
                   "int8 encoding (`scripts/run_capacity.sh`: builds with the sidecar, `bench.dense_heap` memory and "
                   "natural-order latency with the mapped sidecar)."), ""]
    lines += ["## Growth curves\n",
              ("power: a·N^b, least squares on log value against log N; linear: a + b·N (heap and process memory: a "
               "fixed part plus bytes per passage). R² on the fitted scale; with two sizes a curve passes through "
               f"both points (R² = 1 says nothing). Beyond {measured_max:,} passages every value is an "
               "**extrapolation** (marked *).\n"),
              ("| quantity | source | used by the plan | model | b (exponent or per passage) | R² | sizes | at 1M | "
               + " | ".join(f"at {n:,}" for n in collections) + " |"),
              "|:---|:---|:---|:---|---:|---:|:---|---:|" + "---:|" * len(collections)]
    for f in [*chosen.values(), *others.values()]:
        used = "yes" if f.quantity in PLAN_QUANTITIES and chosen.get(f.quantity) is f else "no"
        at = " | ".join(_human(f.quantity, f(n)) + ("*" if f.extrapolates(n) else "") for n in (10**6, *collections))
        slope = f"{f.b:.3f}" if f.model == "power" else f"{f.b:.1f}/passage"
        lines.append(f"| {LABELS.get(f.quantity, f.quantity)} | {f.source.split(':')[0]} | {used} | {f.model} | "
                     f"{slope} | {f.r2:.3f} | {', '.join(f'{s:,}' for s in f.sizes)} | {at} |")
    lines += ["", "## Worked plans\n",
              (f"Model. Node (an assumption, not a measurement): {node.cores} cores, {node.memory_gib:g} GiB, "
               f"{node.usable:.0%} of it for shards. A shard of s passages needs its index and sidecar on disk and, "
               "for the measured latencies, in the page cache (the latencies were taken hot); its JVM keeps the "
               "heap fit at s (`-Xmx`: twice that, at least 1g) and its process's own memory (RSS anon, which "
               "holds the heap). Shards per node = min(cores, usable memory / (page cache + own memory)): one core "
               "per shard, so that a query searches all shards side by side. Latency per query with S shards = "
               "the per-shard latency at s (mean; p99 of a shard as the slow end: with many shards the slowest one "
               "sets the time) + the driver's overhead at S and k: merging S lists of k hits "
               f"(distributed search's own code, measured here) + round trip {args.round_trip_ms:g} ms "
               "(" + ("given" if args.round_trip_ms else "not included: measure it with distributed search on the "
                      "cluster") + "). Exact: BP order; approximate: ours-heap at the recall goal (0.97 at k=10, "
               "0.95 at k=1000). Build: each worker builds one shard at a time (2 threads, BP), so S shards on W "
               "workers take ceil(S / W) shard builds; encoding not included. Fits marked * in "
               "the last column are extrapolated at the shard's size.\n")]
    for _, p in plans.iterrows():
        lines += [f"### {int(p.collection):,} passages: {int(p.shards)} shards of {int(p.shard_docs):,}\n",
                  "| | per shard | whole collection |", "|:---|---:|---:|",
                  f"| disk (index + sidecar) = page cache to keep it hot | {p.disk_gib:.2f} GiB | "
                  f"{p.collection_disk_gib:.1f} GiB |",
                  f"| JVM heap kept (mapped sidecar); -Xmx | {p.heap_mib:.0f} MiB; {p.xmx} | "
                  f"{p.shards * p.heap_mib / 1024:.1f} GiB |",
                  f"| search process's own memory (RSS anon) | {p.process_mib:.0f} MiB | |",
                  f"| memory per shard (page cache + own) | {p.memory_per_shard_gib:.2f} GiB | |",
                  f"| shards per node; nodes | {int(p.shards_per_node)} | {int(p.nodes)} |",
                  f"| exact k=10: mean / p99 of a shard, + overhead | {p.exact_k10_mean_ms:.1f} / "
                  f"{p.exact_k10_p99_ms:.1f} ms (overhead {p.overhead_k10_ms:.2f}) | |",
                  f"| exact k=1000: mean / p99 + overhead | {p.exact_k1000_mean_ms:.1f} / {p.exact_k1000_p99_ms:.1f} ms "
                  f"(overhead {p.overhead_k1000_ms:.1f}) | |",
                  f"| driver merge at k=10 / 1000: one level (as built) vs per node first (not built) | "
                  f"{p.overhead_k10_ms - args.round_trip_ms:.2f} / {p.overhead_k1000_ms - args.round_trip_ms:.1f} ms"
                  f" vs {p.two_level_merge_k10_ms:.2f} / {p.two_level_merge_k1000_ms:.1f} ms | |",
                  f"| approximate k=10 / k=1000, mean | {p.approx_k10_mean_ms:.1f} / {p.approx_k1000_mean_ms:.1f} ms | |",
                  f"| build with BP (one shard; its peak RSS) | {_duration(p.shard_build_s)}; "
                  f"{p.shard_build_peak_rss_gib:.1f} GiB | one index of all: {_duration(p.one_index_build_s)}"
                  f"{'*' if p.one_index_extrapolated else ''} |"]
        lines += [f"| build on {w} worker{'s' if w > 1 else ''} | | {_duration(p[f'build_{w}_workers_s'])} |"
                  for w in args.workers]
        named = [LABELS.get(q, q) for q in p.extrapolated.split(",") if q]
        lines += ["", f"Extrapolated at the shard's size: {'; '.join(named) or 'nothing'}.\n"]
    lines += ["## What the plan leans on\n",
              (f"- Shards of at most {args.shard_docs:,} passages (by default the largest size the latency and "
               "size curves were measured at) keep each shard's figures inside the measured range; the collection's "
               "totals are then counts and sums. The heap and process-memory lines are fitted on the newer runs' "
               "sizes and extended linearly; the one-index build time is extrapolated far, only to compare."),
              "- Per-passage postings set everything: splade-tiny gives ~211 terms per passage here; a model with "
              "more postings per passage (SPLADE++ with BERT-base: 2-3x) scales sizes, build and latency up.",
              "- Overheads not in the model: network round trips and queueing of a real cluster, the encoder.",
              "", f"Command: `python -m scripts.bench.capacity_report {' '.join(sys.argv[1:])}`", ""]
    return "\n".join(lines)


def plot(points: pd.DataFrame, chosen: dict[str, Fit], collections: list[int], path: Path) -> None:
    """Log-log panels: sizes, times, latencies and memory against passages, measured points and their fitted curves
    (dashed where they extrapolate), the planned collections marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    panels = [("on disk (bytes)", ["index_bytes", "sidecar_bytes"]),
              ("build (s)", ["build_bp_s", "build_natural_s", "bp_s"]),
              ("latency per query, one shard (ms)", ["exact_k10_mean_ms", "exact_k1000_mean_ms",
                                                      "approx_k10_mean_ms", "approx_k1000_mean_ms"]),
              ("memory of search (bytes)", ["heap_bytes", "rss_anon_bytes", "search_peak_rss_bytes"])]
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    top = max(collections)
    for ax, (title, quantities) in zip(axes.flat, panels):
        for quantity in quantities:
            mine = points[points.quantity == quantity]
            if mine.empty:
                continue
            line = None
            for source, group in mine.groupby("source"):
                line = ax.loglog(group.docs, group.value, "o" if source == "real" else "s",
                                 color=line[0].get_color() if line else None, alpha=0.8,
                                 label=f"{LABELS.get(quantity, quantity)} ({source})")
            f = chosen.get(quantity)
            if f is not None:
                inside = np.geomspace(min(f.sizes), max(f.sizes), 20)
                beyond = np.geomspace(max(f.sizes), top, 40)
                color = line[0].get_color() if line else None
                ax.loglog(inside, [f(x) for x in inside], "-", color=color)
                ax.loglog(beyond, [f(x) for x in beyond], "--", color=color)
        for n in collections:
            ax.axvline(n, color="grey", linestyle=":", linewidth=1)
        ax.set(title=title, xlabel="passages (dashed: extrapolation; dotted: planned collections)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    save_png(fig, path, 100)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, prog="python -m scripts.bench.capacity_report",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--real", required=True, help="bench.real output folders, one size each (comma list)")
    parser.add_argument("--real-builds", help="their build table (runs/real/index.csv: 2-thread rows)")
    parser.add_argument("--builds", help="bench.capacity_builds CSV")
    parser.add_argument("--dense-heap", help="bench.dense_heap output folder")
    parser.add_argument("--output", required=True)
    parser.add_argument("--collections", default="8800000,100000000", help="passages to plan for (comma list)")
    parser.add_argument("--shard-docs", type=int, help="largest shard (default: the largest size the latency and "
                                                       "size curves were measured at, so that a shard's figures "
                                                       "are not extrapolated)")
    parser.add_argument("--node-cores", type=int, default=16)
    parser.add_argument("--node-memory-gib", type=float, default=64.0)
    parser.add_argument("--round-trip-ms", type=float, default=0.0, help="network round trip per query to add")
    parser.add_argument("--workers", default="1,8,32", help="build workers to plan for (comma list)")
    args = parser.parse_args(argv)
    args.workers = [int(w) for w in args.workers.split(",")]
    collections = [int(c) for c in args.collections.split(",")]
    points = pd.concat([real_points([Path(f) for f in args.real.split(",")],
                                    Path(args.real_builds) if args.real_builds else None),
                        new_points(Path(args.builds) if args.builds else None,
                                   Path(args.dense_heap) if args.dense_heap else None)], ignore_index=True)
    chosen, others = fit_all(points)
    missing = [q for q in PLAN_QUANTITIES if q not in chosen]
    if missing:
        raise InputError(f"no fit for {', '.join(missing)}: the plan needs them at two sizes or more (see --help)")
    if args.shard_docs is None:
        args.shard_docs = min(max(chosen[q].sizes) for q in PLAN_QUANTITIES if q not in LINEAR)
    node = Node(args.node_cores, args.node_memory_gib)
    plans = []
    for collection in collections:
        shards = math.ceil(collection / args.shard_docs)
        overhead = {k: merge_overhead_ms(shards, k) + args.round_trip_ms for k in (10, 1000)}
        plan = shard_plan(chosen, collection, args.shard_docs, node, overhead, args.workers)
        for k in (10, 1000):  # the alternative: each node merges its shards first, the driver merges the nodes
            plan[f"two_level_merge_k{k}_ms"] = (merge_overhead_ms(plan["shards_per_node"], k)
                                                + merge_overhead_ms(plan["nodes"], k))
        plans.append(plan)
    plans_frame = pd.DataFrame(plans)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    frames = {"capacity.csv": fits_table({**chosen, **others}, [10**6, *collections]),
              "capacity_points.csv": points, "capacity_plan.csv": plans_frame}
    for name, frame in frames.items():
        with atomic_output(out / name, overwrite=True) as tmp:
            frame.to_csv(tmp, index=False)
    text = report(points, chosen, others, plans_frame, node, collections, args, machine())
    with atomic_output(out / "capacity.md", overwrite=True) as tmp:
        tmp.write_text(text, encoding="utf-8")
    plot(points, chosen, collections, out / "capacity.png")
    print(text)
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
