"""Hybrid results table: each leg and each fused run on the evaluation topics, beside the setting each fusion
fitted on the training topics: ``python -m scripts.fusion.report`` (used by scripts/run_hybrid.sh).

The best fused run is the one whose fit scored highest on the training topics (evaluation topics never choose
anything); its path is printed on the last line.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lsr_lucene.errors import InputError


def main(argv: list[str] | None = None) -> int:
    from lsr_lucene.eval.trec import column_name, evaluate, write_table
    from lsr_lucene.fuse.pools import parse_named
    from lsr_lucene.fuse.setting import read_setting

    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m scripts.fusion.report", description=__doc__.splitlines()[0])
    parser.add_argument("--qrels", required=True, help="qrels of the evaluation topics")
    parser.add_argument("--leg", action="append", default=[], metavar="NAME=RUN", help="a single-signal run")
    parser.add_argument("--fused", action="append", default=[], metavar="NAME=RUN", help="a fused run")
    parser.add_argument("--setting", action="append", default=[], metavar="NAME=FILE",
                        help="the fitted setting of the fused run NAME (omit for untuned fusions)")
    parser.add_argument("--title", default="Hybrid runs")
    parser.add_argument("--note", action="append", default=[], help="a line of text above the table")
    parser.add_argument("--output", required=True, help="table path stem (writes .md and .csv)")
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    legs, fused = parse_named(args.leg, "--leg"), parse_named(args.fused, "--fused")
    settings = parse_named(args.setting, "--setting")
    unknown = sorted(set(settings) - set(fused))
    if unknown:
        raise InputError(f"--setting {unknown[0]}: no --fused run of that name")
    if not fused:
        raise InputError("no --fused run to report")
    table = evaluate(args.qrels, {**legs, **fused})
    described, fit_scores, metrics = [], [], set()
    for name in table.index:
        if name in settings:
            setting = read_setting(settings[name], setting_names(settings[name]))
            described.append(setting.describe().replace(f" depth={setting.depth}", ""))
            fit_scores.append(float(setting.fitted.get("score", float("nan"))))
            metrics.add(str(setting.fitted.get("metric", "")))
        else:
            described.append("single leg" if name in legs else "untuned")
            fit_scores.append(float("nan"))
    table.insert(0, "setting", described)
    metric = column_name(metrics.pop()) if len(metrics) == 1 and "" not in metrics else "score"
    table.insert(1, f"fit {metric}", fit_scores)
    notes = "".join(f"{line}\n" for line in args.note)
    write_table(table, args.output, overwrite=args.overwrite,
                preamble=f"# {args.title}\n\n{notes}\n" if notes else f"# {args.title}\n\n")
    fitted = {n: s for n, s in zip(table.index, fit_scores) if n in settings}
    best = max(fitted, key=lambda n: fitted[n]) if fitted else max(fused, key=lambda n: table.loc[n, "nDCG@10"])
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    print(f"best fused run (by its fit on the training topics): {best}")
    print(Path(fused[best]))
    return 0


def setting_names(path: str) -> list[str]:
    """Run names a saved setting is for (its weights' keys)."""
    import json

    try:
        return list(json.loads(Path(path).read_text(encoding="utf-8")).get("weights", {}))
    except (OSError, json.JSONDecodeError, AttributeError):
        return []


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
