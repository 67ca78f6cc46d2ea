"""Approximate search against Seismic on the same passages and queries (issue 40): recall@k / latency curves.

Ours: exact search's block-max scorer with a heap factor H < 1 (``SpecSearcher.heap_factor``: windows and blocks
pruned against threshold / H; the one approximation knob since top postings were retired, issue 66). Seismic: its
index built here with ``n_postings`` per list (its build parameter), for each (query_cut, heap_factor). Every
setting of every engine is timed per query, one thread, interleaved: each query is searched by every setting in
turn (rotating which goes first), so that a loaded machine slows all alike; recall@k is against our exact top k of
the same queries (computed untimed). Writes ``approx.csv`` (merged across sizes), ``approx.md`` and
``approx_curve.png``.
"""
from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from typing import Callable

import pandas as pd

from scripts.bench.scale_runner import in_child, latency_row
from lsr_lucene.io.output import atomic_output, save_png

HEAP_FACTORS = (1.0, 0.95, 0.9, 0.88, 0.85, 0.8)
SEISMIC_GRID = tuple((cut, heap) for cut in (5, 10, 20) for heap in (0.6, 0.7, 0.75, 0.8, 0.9, 1.0))
SEISMIC_POSTINGS = 3500  # Seismic's default n_postings
RECALL_GOALS = {10: 0.97, 1000: 0.95}  # issue 40's goals; other k: 0.95


def recall_goal(k: int) -> float:
    """The recall@k an approximate setting must reach to count at k."""
    return RECALL_GOALS.get(int(k), 0.95)


def _recall(got: list, truth: list, exact_scores) -> float:
    """recall@k of returned hits against the exact top k ``truth`` ((docid, score as written, exact score) hits): a
    returned document counts when it is in the exact top k or ties its k-th document (its exact score, from
    ``exact_scores(docids)``, is at least the k-th exact score: which of the tied documents make the top k is
    only the docid tie-break)."""
    if not truth:
        return 1.0
    wanted = {d for d, *_ in truth}
    returned = list(dict.fromkeys(d for d, *_ in got))
    others = [d for d in returned if d not in wanted]
    tied = sum(1 for s in exact_scores(others) if s >= truth[-1][2]) if others else 0
    return min(len(truth), len(returned) - len(others) + tied) / len(truth)


def _recalls(hits: list, truth: list, searcher, queries: list[dict]) -> float:
    """Mean recall@k of each query's hits (ties at the cut-off counted as found, see ``_recall``)."""
    return sum(_recall(got, want, lambda ids, q=q: searcher.score(q["spec"], ids) if ids else [])
               for got, want, q in zip(hits, truth, queries)) / len(queries)


def curve_task(paths: dict, orders: dict[str, Path], queries: list[dict], ks: list[int], heaps: list[float],
               grid: list[tuple[int, float]], warmup: int) -> dict:
    """(In a child process.) Every setting of ours (heap factors) on each order's index and of
    Seismic, timed query by query in turn; rows with recall@k against our exact top k."""
    from scripts.bench.engine_native import SeismicEngine
    from lsr_lucene.search.spec_searcher import SpecSearcher

    settings: list[tuple[dict, Callable, Callable]] = []  # (row fields, untimed setup(), timed search(query, k) -> hits)
    searchers = {}
    for order, index in orders.items():
        searchers[order] = searcher = SpecSearcher(index)
        for h in heaps:
            settings.append(({"engine": "ours-heap", "order": order, "setting": f"heap_factor {h:g}",
                              "heap_factor": h}, _setter(searcher, h),
                             lambda q, k, s=searcher: s.search(q["spec"], k)))
    scorer = next(iter(searchers.values()), None)  # exact scores of hits outside the truth
    engines = []
    for n_postings, folder in paths.get("seismic", {}).items():
        engine = SeismicEngine()
        engine.open({**paths, "index": folder}, 1)
        engines.append(engine)
        for cut, heap in grid:
            settings.append(({"engine": "seismic", "order": "natural", "setting": f"n_postings {n_postings}, "
                              f"query_cut {cut}, heap_factor {heap:g}", "query_cut": cut, "heap_factor": heap,
                              "n_postings": n_postings}, lambda: None,
                             lambda q, k, e=engine, c=cut, h=heap: e.hits(e.search(q, k, query_cut=c,
                                                                                   heap_factor=h))))
    rows = []
    for k in ks:
        if scorer is None:
            break
        scorer.heap_factor = 1.0
        reference = [scorer.search(q["spec"], k) for q in queries]  # exact: the reference (untimed)
        truth = [[(d, s, s) for d, s in hits] for hits in reference]
        for _, setup, search in settings:  # untimed warm-up calls (JIT compilation, page cache)
            setup()
            for q in queries[:max(warmup, 20)]:
                search(q, k)
        seconds: list[list[float]] = [[] for _ in settings]
        hits: list[list] = [[] for _ in settings]
        for i, q in enumerate(queries):
            for j in range(len(settings)):
                j = (j + i) % len(settings)  # rotate which setting goes first
                settings[j][1]()
                started = time.perf_counter()
                got = settings[j][2](q, k)
                seconds[j].append(time.perf_counter() - started)
                hits[j].append(got)
        for (fields, *_), secs, got in zip(settings, seconds, hits):
            rows.append({**fields, "k": k, "recall": _recalls(got, truth, scorer, queries), **latency_row(secs)})
    for searcher in searchers.values():
        searcher.close()
    for engine in engines:
        engine.close()
    return {"rows": rows}


def _setter(searcher, heap_factor: float):
    """The untimed setup of a setting: the searcher's heap factor (a searcher-wide setting)."""
    def setup() -> None:
        searcher.heap_factor = heap_factor
    return setup


def measure_curve(args, paths: dict, work: Path, queries: list[dict], docs: int, capability: str) -> tuple[list, list]:
    """The curves at one size, in a fresh child process: (curve rows, index rows of the Seismic indexes built)."""
    orders = {order: work / "indexes" / ("ours" if order == "natural" else "ours-bp") for order in args.order_list}
    orders = {o: p for o, p in orders.items() if p.is_dir()}
    seismic, index_rows = {}, []
    for n_postings in args.seismic_postings:
        folder, rows = ensure_seismic(paths, work, n_postings, args.threads, docs, capability)
        index_rows += rows
        if folder is not None:
            seismic[n_postings] = folder
    got = in_child(curve_task, {**paths, "seismic": seismic}, orders,
                   queries, args.ks_list, list(args.heap_factors), list(args.seismic_grid), args.warmup)
    if "error" in got:
        print(got.get("traceback", ""), end="")
        print(f"  skipped the approximate curve: {got['error']}", flush=True)
        return [], index_rows
    for row in got["rows"]:
        row.update(docs=docs, cpu_capability=capability, queries=len(queries))
        print(f"  {row['engine']:12s} {row['order']:7s} k={row['k']:<5d} {row['setting']:45s} mean {row['mean_ms']:7.2f} ms "
              f"p50 {row['p50_ms']:7.2f}  recall@{row['k']} {row['recall']:.3f}  [CPU {capability}]", flush=True)
    return got["rows"], index_rows


def ensure_seismic(paths: dict, work: Path, n_postings: int, threads: int, docs: int,
                   capability: str) -> tuple[Path | None, list[dict]]:
    """Seismic's index with ``n_postings`` per list under ``work`` (built, and timed, unless already there); None
    when Seismic is not installed. Returns (its folder, index rows of a build)."""
    from scripts.bench.engine_native import build_seismic

    folder = work / "indexes" / ("seismic" if n_postings == SEISMIC_POSTINGS else f"seismic-{n_postings}")
    if next(folder.glob("index*.seismic"), None) is not None:
        return folder, []
    if importlib.util.find_spec("seismic") is None:
        print("  skipped Seismic on the approximate curve (pip install pyseismic-lsr)", flush=True)
        return None, []
    started = time.perf_counter()
    got = in_child(build_seismic, paths, folder, threads, n_postings)
    if "error" in got:
        print(f"  skipped Seismic on the approximate curve: {got['error']}", flush=True)
        return None, []
    build_s = time.perf_counter() - started
    print(f"  Seismic index (n_postings {n_postings}) built in {build_s:.0f} s", flush=True)
    return folder, [{"docs": docs, "engine": "seismic", "order": "natural", "threads": threads, "build_s": build_s,
                     "bp_s": float("nan"), "size_bytes": got.get("size_bytes", float("nan")),
                     "peak_rss_bytes": float("nan"), "cpu_capability": capability,
                     "note": f"Seismic, n_postings {n_postings} (the approximate curve's)"}]


def fastest_at_goal(rows: pd.DataFrame, engine: str, k: int) -> pd.Series | None:
    """The fastest point of an engine (any order) whose recall@k reaches the goal at k, or None."""
    ok = rows[(rows.engine == engine) & (rows.k == k) & (rows.recall >= recall_goal(k))]
    return ok.sort_values("mean_ms").iloc[0] if len(ok) else None


def summary(rows: pd.DataFrame) -> str:
    """Markdown: per size and k, ours' and Seismic's fastest point at recall@k >= the goal at k, and their ratio."""
    lines = ["| passages | k | recall goal | ours: fastest at the goal | Seismic: fastest at the goal "
             "| ours / Seismic (mean latency) |", "|---:|---:|---:|:---|:---|---:|"]
    for (docs, k), at in rows.groupby(["docs", "k"]):
        fastest = [r for r in (fastest_at_goal(at, e, k) for e in sorted(set(at.engine)) if e.startswith("ours"))
                   if r is not None]
        ours = min(fastest, key=lambda r: r.mean_ms) if fastest else None
        seismic = fastest_at_goal(at, "seismic", k)
        cell = lambda r: "—" if r is None else (f"{r.mean_ms:.2f} ms, recall {r.recall:.3f} ({r.engine}, "  # noqa: E731
                                                f"{r.order}, {r.setting})")
        ratio = f"**{ours.mean_ms / seismic.mean_ms:.2f}**" if ours is not None and seismic is not None else "—"
        lines.append(f"| {int(docs):,} | {int(k)} | {recall_goal(k)} | {cell(ours)} | {cell(seismic)} | {ratio} |")
    return "\n".join(lines) + "\n"


def write_curve(out: Path, rows: list[dict], command: str) -> None:
    """Merge this run's rows into approx.csv (a size measured again replaces its rows), then approx.md and the plot
    (``rows`` empty: both written again from approx.csv)."""
    from scripts.bench import scale_report as report
    from lsr_lucene.eval.trec import to_markdown

    new = pd.DataFrame(rows)
    path = out / "approx.csv"
    if path.is_file():  # no rows: the report is only written again
        old = pd.read_csv(path)
        new = pd.concat([old[~old.docs.isin(new.docs.unique())], new], ignore_index=True) if len(new) else old
    if not len(new):
        return
    with atomic_output(path, overwrite=True) as tmp:
        new.to_csv(tmp, index=False)
    table = new[["docs", "engine", "order", "k", "setting", "mean_ms", "p50_ms", "p99_ms", "recall", "cpu_capability"]]
    text = (f"Machine: {report.machine()}  \nCommand: `{command}`\n\nApproximate search against Seismic: per-query "
            f"calls from Python, one thread, every setting of every engine searching each query in turn; recall@k "
            f"against our exact top k of the same queries (a returned document whose exact score ties the k-th counts "
            f"as found). Ours: `heap_factor` H (block-max pruning against threshold / H; 1 is exact search). "
            f"Seismic: its index with `n_postings` per list.\n\n"
            + summary(new) + "\n## All points\n\n" + to_markdown(table.set_index("docs"), ".3f"))
    with atomic_output(out / "approx.md", overwrite=True) as tmp:
        tmp.write_text(text, encoding="utf-8")
    plot_curve(new, out / "approx_curve.png")


def plot_curve(rows: pd.DataFrame, path: Path) -> None:
    """Mean latency against recall@k, one line per engine and order, one panel per size (rows) and k (columns)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes, ks = sorted(rows.docs.unique()), sorted(rows.k.unique())
    if not sizes:
        return
    fig, axes = plt.subplots(len(sizes), len(ks), figsize=(5.5 * len(ks), 4.5 * len(sizes)), squeeze=False)
    for row_axes, docs in zip(axes, sizes):
        for ax, k in zip(row_axes, ks):
            at = rows[(rows.docs == docs) & (rows.k == k)]
            for (engine, order), line in at.groupby(["engine", "order"]):
                # each engine's best latency at each recall: the lower envelope of its settings
                line = line.sort_values(["recall", "mean_ms"])
                line = line[line.mean_ms[::-1].cummin()[::-1] == line.mean_ms]
                ax.plot(line.recall, line.mean_ms, marker="o", linestyle="--" if order == "bp" else "-",
                        label=engine + (" BP" if order == "bp" else "") + " (best setting at each recall)")
            ax.axvline(recall_goal(k), color="grey", linestyle=":", linewidth=1)
            ax.set(title=f"{int(docs):,} passages, k={int(k)}, 1 thread", xlabel=f"recall@{int(k)} vs exact",
                   ylabel="mean latency (ms)")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
    save_png(fig, path, 110)
