#!/usr/bin/env bash
# Capacity plan (issue 52, item 4): growth curves of index and sidecar size, build and BP time, exact and
# approximate latency at k=10 and 1000, heap and peak RSS over wiki2015 sizes, and a worked plan for 8.8M and
# 100M passages (shards per node, memory per shard, latency per query with S shards, build time on W workers):
# runs/distributed/capacity.md, capacity.png, capacity.csv (fits), capacity_points.csv, capacity_plan.csv
# (scripts/bench/capacity_report.py, scripts/bench/capacity.py). The points: the bench.real runs of
# runs/real/{100k,300k,666k} (scripts/run_real.sh; sizes, latency, their build table runs/real/index.csv), and,
# measured here on the given sizes (indexes under WORK reused, so a size can be added later): each sample indexed
# in natural and BP order as lsr-lucene index builds them (time, BP time, peak RSS, sizes;
# scripts/bench/capacity_builds.py), and scripts/run_dense_heap.sh on the natural-order ones (heap, process
# memory, mapped vs on-heap sidecar).
# Usage: scripts/run_capacity.sh [DOCS]   (default 100000,300000; with the whole collection: 100000,300000,666157)
# Environment: as scripts/run_dense_heap.sh (VECTORS, QUERIES, WORK, NICE, ...), and OUTPUT_PLAN (default
#   runs/distributed), ORDERS (default natural,bp: the orders built), PLAN_ARGS (more capacity_report options,
#   e.g. "--node-cores 32 --node-memory-gib 128")
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
docs=${1:-100000,300000}
work=${WORK:-work/capacity}
builds=${BUILDS:-runs/distributed/capacity_builds.csv}
nice=(nice -n "${NICE:-0}")
"${nice[@]}" python -m scripts.bench.capacity_builds --vectors "${VECTORS:-work/wiki2015/vectors}" \
  --docs "$docs" --orders "${ORDERS:-natural,bp}" --work "$work" --output "$builds"
WORK=$work BUILDS=$builds scripts/run_dense_heap.sh "$docs"
# shellcheck disable=SC2086
"${nice[@]}" python -m scripts.bench.capacity_report --real runs/real/100k,runs/real/300k,runs/real/666k \
  --real-builds runs/real/index.csv --builds "$builds" --dense-heap "${OUTPUT:-runs/memory/offheap}" \
  --output "${OUTPUT_PLAN:-runs/distributed}" ${PLAN_ARGS:-}
