#!/usr/bin/env bash
# Encoder precision on this machine: `lsr-lucene encode` (200 Cranfield documents) and `lsr-lucene longdocs encode
# --top-k 32` (the first segments of a few FIRE 2017 documents) under --dtype fp32, bf16 and auto, timed in one run
# (scripts/bench/precision.py), with the CPU capability and the ratio of each setting to the faster of fp32 and
# bf16 (goal: auto <= 1.15x). About 4 minutes on 2 cores.
# Usage: scripts/bench_precision.sh        Environment: DATA (default ../shared/data), REPEATS (default 5),
#   THREADS (default: the commands' own)
# Writes: runs/bench/precision.{md,csv}
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-../shared/data}
for f in "$data/cranfield/corpus.jsonl" "$data/fire2017/corpus.jsonl"; do
  [ -f "$f" ] || { echo "error: $f not found" >&2; exit 2; }
done
mkdir -p runs/bench
python -m scripts.bench.precision --corpus "$data/cranfield/corpus.jsonl" --docs 200 --max-length 256 \
  --long-corpus "$data/fire2017/corpus.jsonl" --long-docs 8 --max-segments 6 --top-k 32 \
  --repeats "${REPEATS:-5}" ${THREADS:+--threads "$THREADS"} --output runs/bench/precision
