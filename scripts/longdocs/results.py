"""The long-document sweep's results: segment-count labels, trec_eval of every run on the test half, and the
results table (markdown and CSV), the fitted λ and the plot."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

MEASURES = ("ndcg_cut_10", "map", "recall_100")


def segment_label(k: int | None, cap: int | None) -> str:
    """Column label of a segment count: "1".."5", or "all" (with the cap when segments were capped)."""
    if k is None or (cap is not None and k == cap):
        return f"all({cap})" if cap is not None else "all"
    return str(k)


def file_label(k: int | None, cap: int | None) -> str:
    """``segment_label`` as it appears in file names ("all(16)" -> "all16")."""
    return segment_label(k, cap).replace("(", "").replace(")", "")


def evaluate_runs(runs: Path, qrels: Path):
    """A data frame of every ``<method>-k<label>.run`` under ``runs`` evaluated on ``qrels``: method, segments,
    one column per measure."""
    import pandas as pd

    from lsr_lucene.eval.trec import evaluate

    rows = []
    for path in sorted(runs.glob("*.run")):
        method, _, label = path.stem.rpartition("-k")
        rows.append((method, label, path))
    table = evaluate(qrels, {f"{m}|{k}": p for m, k, p in rows}, measures=MEASURES)
    records = []
    for name, values in table.iterrows():
        method, label = name.split("|")
        records.append({"method": method, "segments": label, **values.to_dict()})
    return pd.DataFrame(records)


def write_results(results, lambdas: list[dict], notes: Sequence[str], out: Path, name: str, collection: str,
                  ks: Sequence[int | None], cap: int | None, max_tokens: int) -> dict:
    """``name``-results.{csv,md} (one table per measure, method × segment count), ``name``-lambdas.csv and the
    plot into ``out``; ``notes`` are the bullet lines above the tables."""
    import pandas as pd

    from lsr_lucene.eval.trec import column_name, to_markdown

    results = results.copy()
    order = ["first", "rep-max", "rep-sum", "rep-mean", "score-max", "exact-sdm", "exact-sdm-segpool",
             "soft-sdm", "soft-sdm-segpool", "bm25", "bm25-rm3", "bm25-sdm"]
    labels = [file_label(k, cap) for k in ks]
    pretty = {label: segment_label(k, cap) for label, k in zip(labels, ks)}
    # first and rep-*@1 are the same run: spread them over the columns they stand for
    extra = []
    first = results[results["method"] == "first"]
    if not first.empty:
        base = first.iloc[0].to_dict()
        results = results[results["method"] != "first"]
        for label in labels:
            extra.append({**base, "segments": label})
        for method in ("rep-max", "rep-sum", "rep-mean"):
            if not results[(results["method"] == method)].empty:
                extra.append({**base, "method": method, "segments": labels[0]})
    results = pd.concat([results, pd.DataFrame(extra)], ignore_index=True)
    results.to_csv(out / f"{name}-results.csv", index=False, float_format="%.4f")
    lines = [f"# Long documents on {name}: every method × number of segments", ""]
    lines += [f"- {n}" for n in notes]
    lines.append("")
    for measure in MEASURES:
        col = column_name(measure)
        pivot = results.pivot_table(index="method", columns="segments", values=col, aggfunc="first")
        cols = [c for c in labels + ["full"] if c in pivot.columns]
        pivot = pivot.reindex([m for m in order if m in pivot.index] +
                              [m for m in pivot.index if m not in order])[cols]
        pivot.columns = [pretty.get(c, c) for c in cols]
        lines += [f"## {col}", "", to_markdown(pivot, ".4f"), ""]
    if lambdas:
        lam = pd.DataFrame(lambdas).set_index(["method", "k"])
        lam.to_csv(out / f"{name}-lambdas.csv", float_format="%.6g")
        lines += ["## fitted λ (training half; λ_T fixed to 1, T in float dot-product units)", "",
                  to_markdown(lam, ".4g"), ""]
    (out / f"{name}-results.md").write_text("\n".join(lines) + "\n")
    plot_results(results, labels, pretty, out / f"{name}-{MEASURES[0]}.png", collection, max_tokens)
    return {"results": str(out / f"{name}-results.md")}


def plot_results(results, labels: Sequence[str], pretty: dict, path: Path, collection: str, max_tokens: int) -> None:
    """The first measure of every method against the number of segments, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lsr_lucene.eval.trec import column_name

    col = column_name(MEASURES[0])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    x = list(range(len(labels)))
    for method in ["first", "rep-max", "rep-sum", "rep-mean", "score-max", "exact-sdm", "soft-sdm",
                   "bm25", "bm25-rm3", "bm25-sdm"]:
        sub = results[results["method"] == method].set_index("segments")
        if sub.empty:
            continue
        ys = [sub[col].get(label, float("nan")) for label in labels]
        style = "--" if method.startswith("bm25") else "-"
        marker = "s" if "sdm" in method else "o"
        ax.plot(x, ys, style, marker=marker, label=method)
    ax.set_xticks(x, [pretty[label] for label in labels])
    ax.set_xlabel("number of segments (of at most %d tokens)" % max_tokens)
    ax.set_ylabel(f"{col} (test half)")
    ax.set_title(f"{collection}: aggregation methods vs ExactSDM/SoftSDM")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
