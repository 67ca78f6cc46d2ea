"""Encoder precision: `lsr-lucene encode` and `lsr-lucene longdocs encode --top-k K` under --dtype fp32, bf16 and
auto, timed in ONE run (a benchmark script, not a test).

``python -m scripts.bench.precision --corpus ../shared/data/cranfield/corpus.jsonl --long-corpus
../shared/data/fire2017/corpus.jsonl --output runs/bench/precision`` (scripts/bench_precision.sh)

Each command runs in this process through its own ``main`` (model loading, auto's start-up choice and
writing the output included; interpreter start-up and imports, alike for all three, are not), the three
settings back to back in a rotating order for ``--repeats`` rounds after a warm-up, into a fresh output each
time. The table gives best and median seconds and each setting's ratio to the faster of fp32 and bf16 (the
goal: auto ≤ 1.15×), with the CPU capability, and how far bf16/auto impacts are from fp32's.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from scripts.bench.cli import load_note
from lsr_lucene.encode import precision as prec
from lsr_lucene.errors import InputError
from lsr_lucene.io.vectors import read_metadata

SETTINGS = ("fp32", "bf16", "auto")
GOAL = 1.15  # auto may take at most this times the faster of fp32 and bf16


def write_subset(source: Path, count: int, dest: Path) -> int:
    """The first ``count`` documents of a JSONL corpus with some text, into ``dest``; returns how many."""
    kept = 0
    with source.open(encoding="utf-8") as inp, dest.open("w", encoding="utf-8") as out:
        for line in inp:
            if kept == count:
                break
            row = json.loads(line)
            if (row.get("text") or row.get("contents") or "").strip():
                out.write(line if line.endswith("\n") else line + "\n")
                kept += 1
    if kept == 0:
        raise InputError(f"{source}: no documents with text")
    return kept


def time_settings(run: Callable[[str, Path], object], work: Path, repeats: int) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) seconds of ``run(dtype, fresh output path)`` per setting and round: a warm-up, then ``repeats``
    rounds in rotating order (so drift in the machine's load hits every setting alike)."""
    seconds: dict[str, list[tuple[float, float]]] = {s: [] for s in SETTINGS}
    run("fp32", work / "warm-up")
    for round_no in range(repeats):
        for setting in SETTINGS[round_no % 3:] + SETTINGS[:round_no % 3]:
            out = work / setting
            shutil.rmtree(out, ignore_errors=True)
            prec.clear_calibration()  # every auto run pays for its own start-up choice
            wall, cpu = time.perf_counter(), time.process_time()
            run(setting, out)
            seconds[setting].append((time.perf_counter() - wall, time.process_time() - cpu))
            print(f"  round {round_no + 1} {setting:4s} {seconds[setting][-1][0]:7.2f}s wall "
                  f"{seconds[setting][-1][1]:7.2f}s CPU  ({load_note()})", file=sys.stderr, flush=True)
    return seconds


def impact_difference(reference: Path, other: Path) -> tuple[int, float]:
    """Largest |impact difference| over all terms, and the share of documents with identical vectors."""
    from lsr_lucene.io.vectors import read_vectors

    base = dict(read_vectors(reference))
    largest, same = 0, 0
    for doc_id, vector in read_vectors(other):
        ref = base[doc_id]
        same += vector == ref
        for term in ref.keys() | vector.keys():
            largest = max(largest, abs(ref.get(term, 0) - vector.get(term, 0)))
    return largest, same / max(1, len(base))


def rows_for(command: str, seconds: dict[str, list[tuple[float, float]]], units: int, unit: str, resolved: str,
             differences: dict[str, tuple[int, float]] | None = None) -> list[dict]:
    """Table rows of one command: seconds, throughput and ratios to the faster of fp32 and bf16 — per round (paired,
    the median of the rounds' ratios), of the best wall times, and of the median CPU times."""
    wall = {s: [w for w, _ in v] for s, v in seconds.items()}
    cpu = {s: statistics.median(c for _, c in v) for s, v in seconds.items()}
    best = {s: min(v) for s, v in wall.items()}
    rows = []
    for setting in SETTINGS:
        paired = statistics.median(w / min(f, b) for w, f, b in zip(wall[setting], wall["fp32"], wall["bf16"]))
        diff = (differences or {}).get(setting)
        rows.append({"command": command, "dtype": setting if setting != "auto" else f"auto ({resolved})",
                     "input": f"{units} {unit}", "best wall s": best[setting],
                     "median wall s": statistics.median(wall[setting]), "median CPU s": cpu[setting],
                     "input/s (best)": units / best[setting], "× faster, paired": paired,
                     "× faster, best wall": best[setting] / min(best["fp32"], best["bf16"]),
                     "× faster, CPU": cpu[setting] / min(cpu["fp32"], cpu["bf16"]),
                     "max Δimpact vs fp32": diff[0] if diff else float("nan"),
                     "identical vectors": diff[1] if diff else float("nan")})
    return rows


def main(argv: list[str] | None = None) -> int:
    """CLI: time both commands under the three settings and write the table."""
    import pandas as pd

    from lsr_lucene.encode.cli import main as encode_main
    from lsr_lucene.eval.trec import write_table
    from lsr_lucene.longdocs.cli import main as longdocs_main

    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m scripts.bench.precision", description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, help="JSONL corpus for `lsr-lucene encode` (e.g. Cranfield)")
    parser.add_argument("--docs", type=int, default=200, help="documents encoded (default 200)")
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--long-corpus", default=None, help="JSONL corpus of long documents (e.g. FIRE 2017)")
    parser.add_argument("--long-docs", type=int, default=6, help="long documents segmented (default 6)")
    parser.add_argument("--max-segments", type=int, default=4, help="segments kept per long document (default 4)")
    parser.add_argument("--top-k", type=int, default=32, help="SoftSDM top-k of `longdocs encode` (default 32)")
    parser.add_argument("--model", default="splade-tiny")
    parser.add_argument("--threads", type=int, default=None, help="encoder threads (default: the commands' own)")
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds per setting (default 3)")
    parser.add_argument("--output", default="runs/bench/precision", help="table stem: <stem>.md and <stem>.csv")
    parser.add_argument("--work", default=None, help="scratch folder (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.docs < 1:
        raise InputError("--repeats and --docs must be at least 1")
    threads = ["--threads", str(args.threads)] if args.threads else []
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="lsr-precision-"))
    work.mkdir(parents=True, exist_ok=True)
    capability = prec.capability_string()
    print(f"CPU capability {capability}; {load_note()}", flush=True)
    rows: list[dict] = []
    try:
        corpus = work / "corpus.jsonl"
        docs = write_subset(Path(args.corpus), args.docs, corpus)
        print(f"== lsr-lucene encode: {docs} documents of {args.corpus}, max length {args.max_length}", flush=True)
        (work / "encode").mkdir(exist_ok=True)
        seconds = time_settings(lambda dtype, out: encode_main(
            ["--corpus", str(corpus), "--output", str(out), "--model", args.model, "--max-length",
             str(args.max_length), "--dtype", dtype, "--overwrite", *threads]), work / "encode", args.repeats)
        auto_meta = read_metadata(work / "encode" / "auto")
        resolved = auto_meta["dtype"]
        differences = {s: impact_difference(work / "encode" / "fp32", work / "encode" / s) for s in ("bf16", "auto")}
        rows += rows_for("encode", seconds, docs, "docs", resolved, differences)
        if args.long_corpus:
            long_corpus, segments = work / "long.jsonl", work / "segments.jsonl"
            long_docs = write_subset(Path(args.long_corpus), args.long_docs, long_corpus)
            longdocs_main(["segment", "--corpus", str(long_corpus), "--output", str(segments), "--model", args.model,
                           "--max-segments", str(args.max_segments), "--overwrite"])
            count = sum(1 for _ in segments.open())
            print(f"== lsr-lucene longdocs encode --top-k {args.top_k}: {count} segments of {long_docs} documents "
                  f"of {args.long_corpus}", flush=True)
            (work / "longdocs").mkdir(exist_ok=True)
            seconds = time_settings(lambda dtype, out: longdocs_main(
                ["encode", "--segments", str(segments), "--output", str(out), "--model", args.model,
                 "--top-k", str(args.top_k), "--dtype", dtype, *threads]), work / "longdocs", args.repeats)
            resolved = read_metadata(work / "longdocs" / "auto" / "vectors")["dtype"]
            differences = {s: impact_difference(work / "longdocs" / "fp32" / "vectors",
                                                work / "longdocs" / s / "vectors") for s in ("bf16", "auto")}
            rows += rows_for(f"longdocs encode --top-k {args.top_k}", seconds, count, "segments", resolved,
                             differences)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    table = pd.DataFrame(rows).set_index(["command", "dtype"])
    verdicts = []
    for command in dict.fromkeys(table.index.get_level_values(0)):
        row = table.loc[command].iloc[2]
        verdicts.append(f"- {command}: auto takes {row['× faster, paired']:.2f}× the faster of fp32 and bf16 (median "
                        f"of {args.repeats} rounds' ratios; best wall {row['× faster, best wall']:.2f}×, CPU "
                        f"{row['× faster, CPU']:.2f}×): "
                        f"{'within' if row['× faster, paired'] <= GOAL else 'OVER'} the {GOAL}× goal")
    import torch

    preamble = (f"# Encoder precision: fp32, bf16 and auto\n\nCPU capability **{capability}** "
                f"(torch {torch.__version__}); auto resolved to {auto_meta['dtype']} "
                f"({auto_meta['precision_reason']}). "
                f"Model {args.model}, "
                f"threads {args.threads or 'default (' + str(torch.get_num_threads()) + ')'}, {load_note()} at the "
                f"end. Written by `python -m scripts.bench.precision` ({time.strftime('%Y-%m-%d')}).\n\n"
                + "\n".join(verdicts) + "\n\n")
    csv_path, md_path = write_table(table, args.output, overwrite=True, floatfmt=".3f", preamble=preamble)
    print(preamble + table.to_string(float_format=lambda x: f"{x:.3f}"))
    print(f"wrote {md_path} and {csv_path}")
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
