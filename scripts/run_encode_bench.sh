#!/usr/bin/env bash
# Encoding speed per device, dtype, batch size and thread count, and int8 quality (issue 41).
#   1. SciFact encoded with `encode --dtype fp32` and `--dtype int8` (splade-tiny, 256 tokens), indexed, searched
#      (queries are fp32 both ways) and evaluated: nDCG@10 both ways and how many weights int8 moves.
#   2. Speed on this CPU: `write_vectors` (the encode verb's path) on SciFact passages, fp32 and int8 interleaved in
#      each of REPEATS rounds (best round kept), for each thread count of THREADS_LIST, beside the CPU capability;
#      then where one thread's time goes (tokenising, transformer, projection, dicts, JSON) on STAGES passages.
#   3. runs/encode/results.{csv,md} and passages_per_s.png: these rows merged with the device runs'
#      (runs/encode/device-*.csv, written by scripts/device_encode_check.sh on a GPU machine).
# Usage: scripts/run_encode_bench.sh   (no nice: the fp32/int8 ratio is measured in one run, interleaved)
# Environment: MODEL (splade-tiny), THREADS (2, for SciFact), THREADS_LIST (1,2), PASSAGES (400), REPEATS (3),
#   STAGES (160),
#   DATA (../shared/data), DEVICE_CSVS (device result CSVs to merge). Writes work/encode-bench/ (git-ignored,
#   vectors and indexes reused when present).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
data=${DATA:-$here/../shared/data}
model=${MODEL:-splade-tiny}
threads=${THREADS:-2}
work=work/encode-bench
mkdir -p "$work" runs/encode
corpus=$data/scifact/corpus.jsonl topics=$data/scifact/topics.train.tsv qrels=$data/scifact/qrels.train.txt
for f in "$corpus" "$topics" "$qrels"; do [ -f "$f" ] || { echo "error: $f not found" >&2; exit 2; }; done
lsr() { python -m lsr_lucene.cli "$@"; }

for dtype in fp32 int8; do
  [ -f "$work/vectors-$dtype.metadata.json" ] ||
    lsr encode --corpus "$corpus" --output "$work/vectors-$dtype" --model "$model" --max-length 256 \
      --threads "$threads" --dtype "$dtype"
  [ -d "$work/index-$dtype" ] || lsr index --input "$work/vectors-$dtype" --index "$work/index-$dtype" --threads "$threads"
  lsr search --index "$work/index-$dtype" --topics "$topics" --output "$work/$dtype.run" --hits 1000 \
    --threads "$threads" --run-tag "$dtype" --overwrite
done
lsr eval --qrels "$qrels" --run "fp32=$work/fp32.run" --run "int8=$work/int8.run" --measures ndcg_cut_10 \
  --output "$work/eval" --overwrite

rm -f "$work/cpu.csv"
export LOAD_BEFORE LOAD_AFTER
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)  # the machine is shared: its load beside the figures
python -m scripts.bench.encode_cli cpu --corpus "$corpus" --passages "${PASSAGES:-400}" \
  --threads "${THREADS_LIST:-1,2}" --dtypes fp32,int8 --model "$model" --repeats "${REPEATS:-3}" --csv "$work/cpu.csv" \
  --stages "${STAGES:-160}" --stages-json "$work/stages.json"
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
# device runs merged: run 1 is kept raw only (its BERT-base-size model had dense outputs, its int8 an earlier kernel),
# run 7's GPU part (the pinned copies that run 9 replaced) and run 12 (a reverted int8 layout); runs 8, 10 and 11 are
# experiments (script and output beside them)
device_csvs=$(printf "runs/encode/device-h100-run%s.csv " 2 3 4 5 6 7-cpu 9)
python -m scripts.bench.encode_cli report ${DEVICE_CSVS:-$device_csvs} \
  "$work/cpu.csv" --out runs/encode

python - "$work" <<'PY'
"""runs/encode/int8_scifact.md: nDCG@10 fp32 vs int8, the weights int8 moves, and the speed ratio of this run."""
import csv
import json
import os
import sys
from pathlib import Path

import pandas as pd

from scripts.bench.encode_speed import vector_differences
from lsr_lucene.io.vectors import read_metadata

work = Path(sys.argv[1])
ndcg = pd.read_csv(work / "eval.csv").set_index("run").iloc[:, 0]
diff = vector_differences(work / "vectors-fp32", work / "vectors-int8")
meta = {d: read_metadata(work / f"vectors-{d}") for d in ("fp32", "int8")}
stages = json.loads((work / "stages.json").read_text()) if (work / "stages.json").is_file() else None
speed = {}
with (work / "cpu.csv").open() as handle:
    for row in csv.DictReader(handle):
        speed.setdefault(row["threads"], {})[row["dtype"]] = float(row["passages_per_s"])
lines = ["# int8 document encoding on CPU (scripts/run_encode_bench.sh)", "",
         f"splade-tiny, max length 256, CPU {meta['int8'].get('cpu_capability')}; queries fp32 both ways.", "",
         "| | fp32 | int8 |", "|---|---|---|",
         f"| SciFact nDCG@10 (809 train topics) | {ndcg['fp32']:.4f} | {ndcg['int8']:.4f} |",
         f"| SciFact encoding seconds (`encode`, one run each) | {meta['fp32']['seconds_this_run']} | "
         f"{meta['int8']['seconds_this_run']} |", "",
         f"nDCG@10 difference int8 − fp32: {ndcg['int8'] - ndcg['fp32']:+.4f}. Quantised weights compared over the "
         f"terms either vector has: {diff['weights_differing']:,} of {diff['weights']:,} differ, by at most "
         f"{diff['max_difference']}; {diff['identical_documents']:,} of {diff['documents']:,} documents identical.", "",
         "Speed (`write_vectors` on SciFact passages, fp32 and int8 interleaved, best of the rounds; load average "
         f"{os.environ.get('LOAD_BEFORE')} before, {os.environ.get('LOAD_AFTER')} after, on {os.cpu_count()} "
         "cores shared with other jobs):", "",
         "| threads | fp32 passages/s | int8 passages/s | int8 / fp32 |", "|---|---|---|---|"]
for threads, by in sorted(speed.items(), key=lambda kv: int(kv[0])):
    lines.append(f"| {threads} | {by['fp32']:.1f} | {by['int8']:.1f} | {by['int8'] / by['fp32']:.2f} |")
if stages:
    seconds = stages["seconds"]
    lines += ["", f"Where one thread's time goes ({stages['passages']} SciFact passages, seconds, best of the rounds, "
              f"{stages['hardware']}):", "", "| stage | fp32 | int8 | fp32 / int8 |", "|---|---|---|---|"]
    for stage in [*seconds["fp32"], "total"]:
        a, b = (sum(seconds[d].values()) if stage == "total" else seconds[d][stage] for d in ("fp32", "int8"))
        lines.append(f"| {stage} | {a:.3f} | {b:.3f} | {a / b:.2f} |")
    lines += ["", "int8: " + stages["precision"]["int8"] + "."]
    split = stages.get("projection_ms_per_240_tokens")
    if split:
        lines += ["", "Projection of one 240-token text, ms (one thread, best of 5): " + ", ".join(
            f"{name.replace('_', ' ')} {ms}" for name, ms in split.items()) + "."]
Path("runs/encode/int8_scifact.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
PY
