"""Tables and plots of the scale benchmark: pool vs synthetic collection, results, goals, latency growth."""
from __future__ import annotations

import math
import os
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from scripts.bench.pool import Pool
from scripts.bench.synthetic import Collection
from lsr_lucene.io.output import atomic_output, save_png

DF_RANKS = (1, 10, 100, 1000, 10000)
RESULT_KEYS = ["docs", "engine", "kind", "k", "threads", "mode", "order"]
INDEX_KEYS = ["docs", "engine", "order"]
KEY_DEFAULTS = {"order": "natural"}  # rows written before a key column existed


def _csr_stats(label: str, indptr: np.ndarray, terms: np.ndarray, weights: np.ndarray, vocab: int) -> dict:
    lengths = np.diff(indptr)
    df = np.sort(np.bincount(terms, minlength=vocab))[::-1]
    n = len(lengths)
    row = {"collection": label, "docs": n, "postings": int(len(terms)), "distinct_terms": int((df > 0).sum()),
           "terms_per_doc_mean": float(lengths.mean()), "terms_per_doc_p50": float(np.median(lengths)),
           "terms_per_doc_p90": float(np.percentile(lengths, 90)), "weight_mean": float(weights.mean()),
           "weight_p50": float(np.median(weights)), "weight_p99": float(np.percentile(weights, 99))}
    row.update({f"df_share@{r}": float(df[r - 1] / n) if r <= len(df) else float("nan") for r in DF_RANKS})
    return row


def collection_stats(pool: Pool, collection: Collection) -> pd.DataFrame:
    """Terms per document, weights and df curve (df / documents at ranks 1..10^4) of pool and synthetic."""
    vocab = len(pool.vocab)
    return pd.DataFrame([_csr_stats("pool", pool.indptr, pool.terms, pool.weights, vocab),
                         _csr_stats("synthetic", collection.indptr, collection.terms, collection.weights, vocab)])


def plot_collection(pool: Pool, collection: Collection, path: Path) -> None:
    """PNG: terms-per-document and weight histograms and df curves, pool vs synthetic."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    vocab = len(pool.vocab)
    for label, c, style in (("pool", pool, "-"), (f"synthetic ({collection.num_docs:,} docs)", collection, "--")):
        lengths = np.diff(c.indptr)
        axes[0].hist(lengths, bins=60, density=True, histtype="step", linestyle=style, label=label)
        axes[1].hist(c.weights, bins=np.arange(0, max(int(c.weights.max()), 1) + 10, 10), density=True,
                     histtype="step", linestyle=style, label=label, log=True)
        df = np.sort(np.bincount(c.terms, minlength=vocab))[::-1]
        df = df[df > 0]
        axes[2].loglog(np.arange(1, len(df) + 1), df / (len(c.indptr) - 1), linestyle=style, label=label)
    axes[0].set(title="terms per document", xlabel="terms", ylabel="density")
    axes[1].set(title="impact weights", xlabel="weight (quantised)", ylabel="density (log)")
    axes[2].set(title="document frequency curve", xlabel="term rank", ylabel="df / documents")
    for ax in axes:
        ax.legend(fontsize=8)
    save_png(fig, path, 110)


def merge_rows(path: Path, new: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Rows of an existing CSV whose ``keys`` are not in ``new``, then ``new`` (a re-run replaces its rows; a run
    with no rows keeps the old ones)."""
    if not path.is_file():
        return new
    try:
        old = pd.read_csv(path)
    except pd.errors.EmptyDataError:  # a table written without columns
        return new
    if new.empty:
        return old
    for key, value in KEY_DEFAULTS.items():
        if key in keys and key not in old.columns:
            old[key] = value
    if not set(keys) <= set(old.columns):
        return new
    index = pd.MultiIndex.from_frame(new[keys].astype(str))
    keep = ~pd.MultiIndex.from_frame(old[keys].astype(str)).isin(index)
    return pd.concat([old[keep], new], ignore_index=True)


def merge_tables(out: Path, results: pd.DataFrame, index: pd.DataFrame, stats: pd.DataFrame,
                 skipped: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """This run's rows merged into the CSVs under ``out`` (results, index, collection, skipped), written back;
    returns the merged tables."""
    measured = pd.MultiIndex.from_frame(results[["docs", "engine"]].astype(str)) if len(results) else None
    results = merge_rows(out / "results.csv", results, RESULT_KEYS)
    index = merge_rows(out / "index.csv", index, INDEX_KEYS)
    stats = merge_rows(out / "collection.csv", stats, ["docs_run", "collection"])
    new_skips = pd.DataFrame(skipped, columns=["docs", "engine", "stage", "reason"])
    skips = merge_rows(out / "skipped.csv", new_skips, ["docs", "engine", "stage"])
    if measured is not None and len(skips):  # an earlier skip of an engine this run measured at that size is over
        pairs = pd.MultiIndex.from_frame(skips[["docs", "engine"]].astype(str))
        now = pairs.isin(pd.MultiIndex.from_frame(new_skips[["docs", "engine"]].astype(str)))
        skips = skips[now | ~pairs.isin(measured)]
    for df, name in ((results, "results.csv"), (index, "index.csv"), (stats, "collection.csv"), (skips, "skipped.csv")):
        write_csv(df, out / name)
    return results, index, stats, skips


def write_csv(df: pd.DataFrame, path: Path) -> None:
    with atomic_output(path, overwrite=True) as tmp:
        df.to_csv(tmp, index=False, float_format="%.6g")


def _order(df: pd.DataFrame) -> pd.Series:
    """Each row's docid order (``natural`` for rows written before the column existed)."""
    return df["order"].fillna("natural") if "order" in df.columns else pd.Series("natural", index=df.index)


def _pick(results: pd.DataFrame, docs: int, engine: str, kind: str = "plain", k: int = 10, threads: int = 1,
          mode: str = "query", order: str = "natural") -> pd.Series | None:
    rows = results[(results.docs == docs) & (results.engine == engine) & (results.kind == kind) & (results.k == k)
                   & (results.threads == threads) & (results["mode"] == mode) & (_order(results) == order)]
    return rows.iloc[0] if len(rows) else None


def goals(results: pd.DataFrame, index: pd.DataFrame, docs: int) -> pd.DataFrame:
    """Issue 15's goals as ratios measured in the same run at ``docs`` documents (NaN where a side is missing)."""
    out = []

    def ratio(goal: str, target: float, a, b, note: str = "") -> None:
        value = float(a["mean_ms"] / b["mean_ms"]) if a is not None and b is not None else float("nan")
        out.append({"docs": docs, "goal": goal, "ratio": value, "target": f"<= {target:g}",
                    "met": "" if math.isnan(value) else ("yes" if value <= target else "no"), "note": note})

    ours = lambda kind="plain", k=10, t=1, mode="query": _pick(results, docs, "ours", kind, k, t, mode)  # noqa: E731
    exact_peers = [r for r in (_pick(results, docs, e) for e in ("pisa-maxscore", "pisa-bmw", "bmp")) if r is not None]
    fastest = min(exact_peers, key=lambda r: r["mean_ms"]) if exact_peers else None
    ratio("ours / fastest exact engine, plain k=10, 1 thread", 1.5, ours(), fastest,
          f"fastest: {fastest['engine']}" if fastest is not None else "no PISA/BMP row")
    ratio("ours / Pyserini search, plain k=10, 1 thread", 1.0, ours(), _pick(results, docs, "pyserini"))
    ratio("ours / Anserini SearchCollection, plain k=10, batch 1 thread", 1.0, ours(t=1, mode="batch"),
          _pick(results, docs, "anserini", mode="batch"))
    seismic = _pick(results, docs, "seismic")
    ratio("ours / Seismic, plain k=10, 1 thread", 3.0, ours(), seismic,
          f"Seismic recall@10 {seismic['recall']:.3f}" if seismic is not None and "recall" in seismic else "")
    for k in (10, 1000):
        ratio(f"signed A−B* / plain A, k={k}", 1.2, ours("signed", k), ours("plain", k),
              "A−B* has A's terms and B's: more postings to read than A")
        ratio(f"signed A−B* / plain A+B (the same terms, all positive), k={k}", 1.2, ours("signed", k),
              ours("union", k), "the cost of signed scoring itself")
        ratio(f"CPT A∩B / plain A+B, k={k}", 1.5, ours("cpt", k), ours("union", k))
        ratio(f"window rerank / plain A, k={k}", 2.0, ours("window", k), ours("plain", k))
    at = index[index.docs == docs] if len(index) else index
    rows = {r.engine: r for r in at[_order(at) == "natural"].itertuples()} if len(at) else {}
    bp_rows = {r.engine: r for r in at[_order(at) == "bp"].itertuples()} if len(at) else {}

    def index_ratio(goal: str, target: float, a, b, note: str = "") -> None:
        value = float(a / b) if a is not None and b is not None else float("nan")
        out.append({"docs": docs, "goal": goal, "ratio": value, "target": f"<= {target:g}",
                    "met": "" if math.isnan(value) else ("yes" if value <= target else "no"), "note": note})

    get = lambda r, column: None if r is None else getattr(r, column)  # noqa: E731
    for what, column, target in (("index build time", "build_s", 1.0), ("index size", "size_bytes", 1.2)):
        index_ratio(f"{what}: ours / Anserini IndexCollection", target, get(rows.get("ours"), column),
                    get(rows.get("anserini"), column),
                    "ours: validation, then our ImpactIndexer; sidecar timed apart" if column == "build_s" else "")
    if bp_rows or (len(results) and (_order(results) == "bp").any()):
        peers = [r for r in (_pick(results, docs, e, order="bp") for e in ("pisa-maxscore", "pisa-bmw", "bmp"))
                 if r is not None]
        best = min(peers, key=lambda r: r["mean_ms"]) if peers else None
        ratio("with BP: ours / fastest exact engine with BP, plain k=10, 1 thread", 1.5,
              _pick(results, docs, "ours", order="bp"), best,
              f"fastest: {best['engine']}" if best is not None else "no PISA/BMP row with BP")
        index_ratio("BP time / our natural index build time", 0.5, get(bp_rows.get("ours"), "bp_s"),
                    get(rows.get("ours"), "build_s"), "our BP inside `index --reorder bp`")
        index_ratio("index size: ours with BP / ours natural", 1.0, get(bp_rows.get("ours"), "size_bytes"),
                    get(rows.get("ours"), "size_bytes"), "goal: below 1")
    return pd.DataFrame(out)


def plot_latency(results: pd.DataFrame, path: Path) -> bool:
    """Log-log latency vs documents (plain queries, 1 thread; k=10 and k=1000), one line per engine."""
    plain = results[(results.kind == "plain") & (results.threads == 1)]
    if plain.docs.nunique() < 2:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, k in zip(axes, (10, 1000)):
        at_k = plain[plain.k == k]
        for (engine, order), rows in at_k.groupby([at_k.engine, _order(at_k)]):
            mode = "query" if (rows["mode"] == "query").any() else "batch"
            rows = rows[rows["mode"] == mode].sort_values("docs")
            label = engine + (" BP" if order == "bp" else "") + (" (batch)" if mode == "batch" else "")
            ax.loglog(rows.docs, rows.mean_ms, marker="o", linestyle="--" if order == "bp" else "-", label=label)
        ax.set(title=f"plain queries, k={k}, 1 thread", xlabel="documents", ylabel="mean latency (ms)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    save_png(fig, path, 110)
    return True


def machine() -> str:
    """CPU model, cores, torch's CPU capability and the load average."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, CPU capability {cpu_capability()}, {load_note()}"


def cpu_capability() -> str:
    """torch's CPU capability with the native bf16 sets (``AVX512+AVX512_BF16``), as the encoder reports it."""
    try:
        from lsr_lucene.encode.precision import capability_string

        return capability_string()
    except Exception:  # torch missing or too old: say so rather than fail the benchmark
        return "unknown"


def load_note() -> str:
    try:
        return f"load {os.getloadavg()[0]:.1f}"
    except OSError:
        return "load unknown"


def markdown(results: pd.DataFrame, index: pd.DataFrame, stats: pd.DataFrame, goal_rows: pd.DataFrame,
             command: str) -> str:
    """README-ready Markdown: machine, command, collections, index builds, search latency, goals."""
    from lsr_lucene.eval.trec import to_markdown

    parts = [f"Machine: {machine()}  \nCommand: `{command}`\n",
             "Timed: the engine's own search call (per query: one call per query, 1 thread; batch: one call for all "
             "queries, mean = wall / queries). `exact`: top-k equals brute-force dot products on the sample checked "
             "(ties in any order; BMP on its own 8-bit quantisation); `recall`: recall@k against brute force.\n",
             "### Collection: pool vs synthetic\n", to_markdown(stats.set_index(["docs_run", "collection"]), ".3g"),
             "\n" + index_table(index), "\n" + search_table(results)]
    if len(goal_rows):
        parts += ["\n### Goals (ratios measured in the same run)\n", to_markdown(goal_rows.set_index("docs"), ".2f")]
    return "\n".join(parts)


def search_table(results: pd.DataFrame) -> str:
    """Markdown: every search row (latency, QPS, exactness, recall, peak memory, CPU capability)."""
    from lsr_lucene.eval.trec import to_markdown

    search = results.copy()
    verdict = search["exact"].map({True: "yes", False: "NO", "True": "yes", "False": "NO"}).fillna("")
    approx = search.get("approximate", pd.Series(False, index=search.index)).astype(str) == "True"
    search["exact"] = verdict.where(~approx, "approx.")
    search["order"] = _order(search)
    cols = ["docs", "engine", "order", "kind", "k", "threads", "mode", "mean_ms", "p50_ms", "p99_ms", "qps", "exact",
            "recall", "peak_rss_mb", "cpu_capability"]
    return "\n".join(["### Search\n", to_markdown(search[[c for c in cols if c in search.columns]].set_index("docs"),
                                                   ".3g")])


def index_table(index: pd.DataFrame) -> str:
    """Markdown: every index build (time, BP time, size, peak memory, note)."""
    from lsr_lucene.eval.trec import to_markdown

    idx = index.assign(size_mb=index.size_bytes / 2**20, peak_rss_mb=index.peak_rss_bytes / 2**20,
                       order=_order(index))
    if "bp_s" not in idx.columns:
        idx["bp_s"] = float("nan")
    return "\n".join(["### Index builds\n",
                      "BP (recursive graph bisection, our implementation): `bp_s` is its time, included in ours' build "
                      "(`index --reorder bp`) and computed once, apart, for the BP-ordered stream PISA and BMP index.\n",
                      to_markdown(idx[["docs", "engine", "order", "build_s", "bp_s", "size_mb", "peak_rss_mb", "note"]]
                                  .set_index("docs"), ".1f")])


def to_text(stats: pd.DataFrame) -> str:
    """The pool-vs-synthetic table as plain text for the console."""
    return stats.drop(columns=["docs_run"], errors="ignore").to_string(index=False, float_format=lambda v: f"{v:.3g}")


def row_line(row: dict) -> str:
    """One search result as a console line (latency, QPS, exactness)."""
    check = ""
    if "exact" in row:
        verdict = "approx." if row.get("approximate") else ("yes" if row["exact"] else "NO")
        check = f"  exact {verdict} recall {row['recall']:.3f} ({row['checked']} checked)"
    p = "" if math.isnan(row["p50_ms"]) else f" p50 {row['p50_ms']:8.2f} p99 {row['p99_ms']:8.2f}"
    engine = row["engine"] + (" BP" if row.get("order") == "bp" else "")
    return (f"  {engine:16s} {row['kind']:6s} k={row['k']:<5d} {row['mode']:5s} threads={row['threads']:<2d} "
            f"mean {row['mean_ms']:8.2f} ms{p or ' ' * 26}  {row['qps']:8.1f} q/s{check}")
