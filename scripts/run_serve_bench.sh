#!/usr/bin/env bash
# Server benchmark (issue 39): queries per second and p50/p99 latency of `lsr-lucene serve` for 1, 4, 16 and 64
# concurrent clients, beside the same queries searched in process (ImpactSearcher.search, and the server's own search
# path on the same worker threads without HTTP), k=10, on the demo collection and, when its index is there, SciFact
# (splade-tiny, encoded once and cached under WORK/scifact). wiki2015 100k is not measured here: see
# runs/serve/README.md.
# Usage: scripts/run_serve_bench.sh
# Environment: WORK (default work), THREADS (server search threads, default 2), ROUNDS (interleaved, default 10),
#   REQUESTS (per client count and mode, default
#   1000), SCIFACT=0 (skip SciFact), NICE (default 0)
# Writes: runs/serve/results.csv, runs/serve/results.md
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
work=${WORK:-work}
threads=${THREADS:-2}
requests=${REQUESTS:-1000}
rounds=${ROUNDS:-10}
nice=(nice -n "${NICE:-0}")
data=${DATA:-../shared/data}
demo=lsr_lucene/data/demo
bench=("${nice[@]}" python -m lsr_lucene.bench.serve --threads "$threads" --requests "$requests" --rounds "$rounds")

# demo collection: `lsr-lucene demo` builds work/demo/index-splade-tiny
if [ ! -d "$work/demo/index-splade-tiny" ]; then
  "${nice[@]}" python -m lsr_lucene.demo --output "$work/demo"
fi
"${bench[@]}" --index "$work/demo/index-splade-tiny" --topics "$demo/topics.tsv" --collection demo

# SciFact (5,183 abstracts, 809 train queries), splade-tiny, max length 256
if [ "${SCIFACT:-1}" != 0 ] && [ -f "$data/scifact/corpus.jsonl" ]; then
  if [ ! -d "$work/scifact/index-splade-tiny" ]; then
    "${nice[@]}" python -m lsr_lucene.encode --corpus "$data/scifact/corpus.jsonl" \
      --output "$work/scifact/vectors-splade-tiny" --max-length 256
    "${nice[@]}" python -m lsr_lucene.index --input "$work/scifact/vectors-splade-tiny" \
      --index "$work/scifact/index-splade-tiny"
  fi
  "${bench[@]}" --index "$work/scifact/index-splade-tiny" --topics "$data/scifact/topics.train.tsv" \
    --collection scifact
fi
