"""The thread-defaults table of runs/threads/results.md (issue 38): per verb and machine, the fastest round of each
``--threads`` setting, and the default's ratio to the fastest setting measured there.

Input: CSVs of ``verb,threads,resolved_threads,round,seconds,load_avg_1min,cpus,cpu_capability`` (threads is 1, a
middle value or ``default``), as scripts/run_thread_defaults.sh and scripts/device_thread_defaults.sh write them;
one block of rows per CSV, so the 2-core and the 16-core measurements stand side by side.
Usage: ``python -m scripts.bench.thread_table OUTPUT.md TIMES.csv[=LABEL] ...``
"""
from __future__ import annotations

import sys

import pandas as pd

VERBS = ["encode", "search", "dense-search", "bm25", "longdocs-search"]
HEADER = ["| verb | machine | CPUs | --threads 1 (s) | middle setting | middle (s) | default setting | default (s) | "
          "default / fastest | load (1-min avg) |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]


def rows(times: pd.DataFrame, label: str) -> list[str]:
    """Table rows of one measurement (one CSV): fastest round per cell."""
    times = times.astype({"threads": str})
    best = times.groupby(["verb", "threads"])["seconds"].min()
    load = times.groupby("verb")["load_avg_1min"].agg(["min", "max"])
    resolved = times[times.threads == "default"].groupby("verb")["resolved_threads"].first()
    out = []
    for verb in [v for v in VERBS if v in best.index.get_level_values(0)]:
        cells = best.loc[verb]
        middle = sorted((s for s in cells.index if s not in ("1", "default")), key=int)
        mid = middle[0] if middle else None
        cpus = int(times.loc[times.verb == verb, "cpus"].iloc[0])
        mid_cells = f"{mid} | {cells[mid]:.2f}" if mid else "- | -"
        out.append(f"| {verb} | {label} | {cpus} | {cells['1']:.2f} | {mid_cells} | {int(resolved[verb])} | "
                   f"{cells['default']:.2f} | {cells['default'] / cells.min():.2f} | "
                   f"{load.loc[verb, 'min']:.1f}-{load.loc[verb, 'max']:.1f} |")
    return out


def table(sources: list[tuple[str, str]]) -> str:
    """Markdown: one paragraph per measurement, then one table with all their rows."""
    notes, body = [], []
    for path, label in sources:
        times = pd.read_csv(path, dtype={"threads": str})
        meta = times.iloc[0]
        notes.append(f"- {label} (`{path.rsplit('/', 1)[-1]}`): fastest of {times['round'].max()} interleaved rounds "
                     f"per cell; {int(meta['cpus'])} CPUs, torch CPU capability {meta['cpu_capability']}.")
        body.extend(rows(times, label))
    head = ("Seconds of the whole command (fresh process, model load and JVM start included). Written by "
            "`python -m scripts.bench.thread_table` (scripts/run_thread_defaults.sh, "
            "scripts/merge_device_threads.sh).\n\n")
    return head + "\n".join(notes) + "\n\n" + "\n".join(HEADER + body) + "\n"


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    sources = [(a.split("=", 1)[0], a.split("=", 1)[1] if "=" in a else a.rsplit("/", 1)[-1]) for a in args[1:]]
    text = table(sources)
    with open(args[0], "w", encoding="utf-8") as out:
        out.write(text)
    print(text)


if __name__ == "__main__":
    main()
