"""Approximate search against Seismic on the same passages and queries (issue 29): recall@k / latency curves.

Ours: ``SpecSearcher.search(spec, k, approximate=D, query_cut=C)`` on the index's top-postings sidecar (built here
when missing or kept with another N), for each candidate depth D and query cut C. Seismic: its index built by the benchmark, for each
(query_cut, heap_factor). Both timed per query from Python, one thread, after a warm-up pass; recall@k is measured
against our exact search's top k of the same queries (computed untimed). Writes ``approx.csv`` (merged across
sizes), ``approx.md`` and ``approx_curve.png``.
"""
from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from lsr_lucene.bench.scale_runner import in_child, latency_row
from lsr_lucene.io.output import atomic_output

DEPTHS = (10, 30, 100, 200, 300, 500, 1000, 2000)
QUERY_CUTS = (5, 10, 0)  # the query terms our first phase keeps (0: all)
SEISMIC_GRID = tuple((cut, heap) for cut in (5, 10, 20) for heap in (0.6, 0.7, 0.8, 0.9, 1.0))
RECALL_GOAL = 0.95


def ensure_top_postings(index: Path, postings: int) -> dict | None:
    """The index's top-postings sidecar with ``postings`` per term (built, and timed, unless already so)."""
    from lsr_lucene.index.impact import index_size
    from lsr_lucene.index.top_postings import TOP_POSTINGS_DIR, build_top_postings, top_postings_per_term

    if top_postings_per_term(index) == postings:
        return None
    started = time.perf_counter()
    info = build_top_postings(index, postings)
    return {**info, "build_s": time.perf_counter() - started, "size_bytes": index_size(index / TOP_POSTINGS_DIR)}


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


def _timed(search, queries: list[dict], warmup: int) -> tuple[list[float], list]:
    for query in queries[:warmup]:
        search(query)
    seconds, hits = [], []
    for query in queries:
        started = time.perf_counter()
        hits.append(search(query))
        seconds.append(time.perf_counter() - started)
    return seconds, hits


def curve_task(paths: dict, orders: dict[str, Path], queries: list[dict], ks: list[int], depths: list[int],
               cuts: list[int], grid: list[tuple[int, float]], postings: int, warmup: int) -> dict:
    """(In a child process.) Ours at every depth on each order's index, Seismic at every grid point; rows."""
    from lsr_lucene.bench.engine_native import SeismicEngine
    from lsr_lucene.search.spec_searcher import SpecSearcher

    rows, builds = [], []
    exact: dict[int, list] = {}
    scorer = SpecSearcher(next(iter(orders.values()))) if orders else None  # exact scores of the hits outside the truth
    for order, index in orders.items():
        built = ensure_top_postings(index, postings)
        if built:
            builds.append({"order": order, **built})
        with SpecSearcher(index) as searcher:
            for q in queries:  # one untimed pass over the sidecar first (JIT compilation, page cache)
                searcher.search(q["spec"], max(ks), approximate=max(depths), query_cut=0)
            for k in ks:
                truth = [searcher.search_exact(q["spec"], k) for q in queries]  # exact: the reference (untimed)
                exact.setdefault(k, truth)
                for cut in cuts:
                    for depth in [d for d in depths if d >= k]:
                        seconds, hits = _timed(lambda q: searcher.search(q["spec"], k, approximate=depth,
                                                                         query_cut=cut), queries, warmup)
                        rows.append({"engine": "ours-approx", "order": order, "k": k,
                                     "setting": f"depth {depth}, query_cut {cut or 'all'}", "depth": depth,
                                     "query_cut": cut, "recall": _recalls(hits, truth, searcher, queries),
                                     **latency_row(seconds)})
    if paths.get("seismic") is not None:
        engine = SeismicEngine()
        engine.open({**paths, "index": paths["seismic"]}, 1)
        for q in queries:  # the same untimed pass
            engine.search(q, max(ks))
        for k in ks:
            for cut, heap in grid:
                def search(q, cut=cut, heap=heap):
                    components, values = engine._query(q)
                    found = engine._index.search(q["qid"], components, values, k=k, query_cut=cut,
                                                 heap_factor=heap) if len(components) else []
                    return engine.hits(found)
                seconds, hits = _timed(search, queries, warmup)
                rows.append({"engine": "seismic", "order": "natural", "k": k,
                             "setting": f"query_cut {cut}, heap_factor {heap}", "query_cut": cut, "heap_factor": heap,
                             "recall": _recalls(hits, exact[k], scorer, queries), **latency_row(seconds)})
        engine.close()
    if scorer is not None:
        scorer.close()
    return {"rows": rows, "builds": builds}


def measure_curve(args, paths: dict, work: Path, queries: list[dict], docs: int, capability: str) -> tuple[list, list]:
    """The curves at one size, in a fresh child process: (curve rows, index rows of sidecars built)."""
    orders = {order: work / "indexes" / ("ours" if order == "natural" else "ours-bp") for order in args.order_list}
    orders = {o: p for o, p in orders.items() if p.is_dir()}
    seismic = work / "indexes" / "seismic"
    got = in_child(curve_task, {**paths, "seismic": seismic if seismic.is_dir() else None}, orders, queries,
                   args.ks_list, list(args.approx_depths), list(QUERY_CUTS), list(SEISMIC_GRID),
                   args.top_postings_at[docs], args.warmup)
    if "error" in got:
        print(got.get("traceback", ""), end="")
        print(f"  skipped the approximate curve: {got['error']}", flush=True)
        return [], []
    for row in got["rows"]:
        row.update(docs=docs, cpu_capability=capability, queries=len(queries))
        print(f"  {row['engine']:12s} {row['order']:7s} k={row['k']:<5d} {row['setting']:32s} mean {row['mean_ms']:7.2f} ms "
              f"p50 {row['p50_ms']:7.2f}  recall@{row['k']} {row['recall']:.3f}  [CPU {capability}]", flush=True)
    index_rows = [{"docs": docs, "engine": "ours-top-postings", "order": b["order"], "threads": 1,
                   "build_s": b["build_s"], "bp_s": float("nan"), "size_bytes": b["size_bytes"],
                   "peak_rss_bytes": float("nan"), "cpu_capability": capability,
                   "note": f"top-postings sidecar: {b['postings_per_term']} per term, {b['kept_postings']:,} of "
                           f"{b['postings']:,} postings, forward field"} for b in got["builds"]]
    return got["rows"], index_rows


def fastest_at_goal(rows: pd.DataFrame, engine: str, k: int) -> pd.Series | None:
    """The fastest point of an engine (any order) whose recall@k reaches the goal, or None."""
    ok = rows[(rows.engine == engine) & (rows.k == k) & (rows.recall >= RECALL_GOAL)]
    return ok.sort_values("mean_ms").iloc[0] if len(ok) else None


def summary(rows: pd.DataFrame) -> str:
    """Markdown: per size and k, each engine's fastest point at recall >= the goal, and ours / Seismic."""
    lines = [f"| passages | k | ours: fastest at recall@k ≥ {RECALL_GOAL} | Seismic: fastest at recall@k ≥ {RECALL_GOAL} "
             "| ours / Seismic (mean latency) |", "|---:|---:|:---|:---|---:|"]
    for (docs, k), at in rows.groupby(["docs", "k"]):
        ours, seismic = fastest_at_goal(at, "ours-approx", k), fastest_at_goal(at, "seismic", k)
        cell = lambda r: "—" if r is None else (f"{r.mean_ms:.2f} ms, recall {r.recall:.3f} ({r.order}, "  # noqa: E731
                                                f"{r.setting})")
        ratio = f"{ours.mean_ms / seismic.mean_ms:.2f}" if ours is not None and seismic is not None else "—"
        lines.append(f"| {int(docs):,} | {int(k)} | {cell(ours)} | {cell(seismic)} | {ratio} |")
    return "\n".join(lines) + "\n"


def write_curve(out: Path, rows: list[dict], command: str) -> None:
    """Merge this run's rows into approx.csv (a size measured again replaces its rows), then approx.md and the plot
    (``rows`` empty: both written again from approx.csv)."""
    from lsr_lucene.bench import scale_report as report
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
            f"calls from Python, one thread; recall@k against our exact top k of the same queries (a returned "
            f"document whose exact score ties the k-th counts as found).\n\n"
            + summary(new) + "\n## All points\n\n" + to_markdown(table.set_index("docs"), ".3f"))
    with atomic_output(out / "approx.md", overwrite=True) as tmp:
        tmp.write_text(text, encoding="utf-8")
    plot_curve(new, out / "approx_curve.png")


def plot_curve(rows: pd.DataFrame, path: Path) -> None:
    """Mean latency against recall@10, one line per engine and order, one panel per size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    at10 = rows[rows.k == 10]
    sizes = sorted(at10.docs.unique())
    if not sizes:
        return
    fig, axes = plt.subplots(1, len(sizes), figsize=(5.5 * len(sizes), 4.5), squeeze=False)
    for ax, docs in zip(axes[0], sizes):
        at = at10[at10.docs == docs]
        for (engine, order), line in at.groupby(["engine", "order"]):
            # each engine's best latency at each recall: the lower envelope of its settings
            line = line.sort_values(["recall", "mean_ms"])
            line = line[line.mean_ms[::-1].cummin()[::-1] == line.mean_ms]
            ax.plot(line.recall, line.mean_ms, marker="o", linestyle="--" if order == "bp" else "-",
                    label=engine + (" BP" if order == "bp" else "") + " (best setting at each recall)")
        ax.axvline(RECALL_GOAL, color="grey", linestyle=":", linewidth=1)
        ax.set(title=f"{int(docs):,} passages, k=10, 1 thread", xlabel="recall@10 vs exact", ylabel="mean latency (ms)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_output(path, overwrite=True) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)
