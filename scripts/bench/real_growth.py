"""Growth across sizes: the per-size folders of ``bench.real`` runs (one run per size) read together.

    python -m scripts.bench.real_growth runs/real/100k runs/real/300k runs/real/666k --output runs/real

Writes OUTPUT/growth.md (per size: exact ours / PISA MaxScore and approximate ours / Seismic at each k, each from
its own run), latency_vs_docs.png (exact engines' latency against passages) and approx_curve.png (every size's
recall / latency curves). Nothing is measured here: the figures are the runs' own.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from scripts.bench import real_approx, real_report
from scripts.bench import scale_report as report
from lsr_lucene.errors import InputError
from lsr_lucene.io.output import atomic_output


def read_runs(folders: list[Path]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(results, approximate curve rows) of every folder; a size in several folders is an error."""
    results, curves = [], []
    for folder in folders:
        path = folder / "results.csv"
        if not path.is_file():
            raise InputError(f"{path}: no such file (a bench.real output folder?)")
        results.append(pd.read_csv(path).assign(run=folder.name))
        if (folder / "approx.csv").is_file():
            curves.append(pd.read_csv(folder / "approx.csv").assign(run=folder.name))
    every = pd.concat(results, ignore_index=True)
    twice = every.groupby("docs").run.nunique()
    if (twice > 1).any():
        raise InputError(f"passages {list(twice[twice > 1].index)} measured in more than one folder")
    return every, pd.concat(curves, ignore_index=True) if curves else pd.DataFrame()


def growth_markdown(results: pd.DataFrame, curves: pd.DataFrame, command: str) -> str:
    """growth.md: the ratio tables of each size, largest first."""
    parts = [f"Command: `{command}`\n", "Each size is its own interleaved run (folder named per row); exact: ours "
             "/ PISA MaxScore, each in its faster docid order; approximate: ours' and Seismic's fastest setting at "
             "the recall goal, timed query by query in turn.\n"]
    for docs in sorted(results.docs.unique(), reverse=True):
        run = results[results.docs == docs].run.iloc[0]
        parts += [f"\n### {int(docs):,} passages ({run}/)\n", "Exact:\n", real_report.goal_ratios(results, docs)]
        if len(curves) and (curves.docs == docs).any():
            parts += ["\nApproximate:\n", real_approx.summary(curves[curves.docs == docs])]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m scripts.bench.real_growth", description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", help="bench.real output folders, one size each")
    parser.add_argument("--output", required=True, help="folder of growth.md and the plots")
    args = parser.parse_args(argv)
    results, curves = read_runs([Path(f) for f in args.folders])
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    command = "python -m scripts.bench.real_growth " + " ".join(argv if argv is not None else sys.argv[1:])
    with atomic_output(out / "growth.md", overwrite=True) as tmp:
        tmp.write_text(f"Machine: {report.machine()}  \n" + growth_markdown(results, curves, command), encoding="utf-8")
    report.plot_latency(results, out / "latency_vs_docs.png")
    if len(curves):
        real_approx.plot_curve(curves, out / "approx_curve.png")
    print(f"wrote {out}/growth.md, latency_vs_docs.png" + (", approx_curve.png" if len(curves) else ""))
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
