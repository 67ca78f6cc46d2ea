#!/usr/bin/env bash
# Dense-impacts sidecar off the heap (issue 52, item 3): exact search with the sidecar's rows read from the
# memory-mapped files under a small heap (-Xmx HEAP, default 1g) against the former on-heap rows under a heap big
# enough (-Xmx ON_HEAP_HEAP, default 4g), one JVM each, in alternating rounds of one run: the time ratio with its
# 95 % interval against the issue's 5 % bound, the heap and resident memory each keeps, and memory per document
# (index and sidecar on disk, heap) (scripts/bench/dense_heap.py). On wiki2015 samples of the given sizes (the
# first N passages of the seeded random order scripts/run_real.sh encodes), each indexed as lsr-lucene index does
# by default (natural order, the sidecar) by scripts/bench/capacity_builds.py (links to the part files, nothing
# copied; indexes already built under WORK are reused, so a size can be added later).
# Needs encoded passages (VECTORS: part-*.jsonl in the seeded order, e.g. scripts/run_real.sh with ENCODE_ONLY=1;
# an encoder's .vectors.partial folder works while it runs, for the parts it finished) and encoded queries
# (QUERIES: JSONL {id, vector}, e.g. lsr-lucene encode --topics ../shared/data/wiki2015/topics.nq-test.tsv
# --output Q.jsonl).
# Usage: scripts/run_dense_heap.sh [DOCS]   (DOCS: comma list of passage counts, whole part files; default
#   100000,300000; the whole collection: 666157)
# Environment: VECTORS (default work/wiki2015/vectors), QUERIES (default work/wiki2015/queries.jsonl), WORK
#   (default work/capacity), HEAP (default 1g), ON_HEAP_HEAP (default 4g), NQUERIES (default 300), ROUNDS
#   (default 6), NICE (default 0), OUTPUT (default runs/memory/offheap), BUILDS (default
#   runs/distributed/capacity_builds.csv: the builds' times and sizes)
# Writes: OUTPUT/dense_heap.md, dense_heap.csv (latency per size, k and layout), dense_heap_memory.csv,
#   dense_heap_indexes.csv; BUILDS
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
vectors=${VECTORS:-work/wiki2015/vectors}
queries=${QUERIES:-work/wiki2015/queries.jsonl}
work=${WORK:-work/capacity}
docs=${1:-100000,300000}
nice=(nice -n "${NICE:-0}")
for f in "$vectors" "$queries"; do
  [ -e "$f" ] || { echo "error: $f not found (see the usage at the top of $0)" >&2; exit 2; }
done
"${nice[@]}" python -m scripts.bench.capacity_builds --vectors "$vectors" --docs "$docs" --orders natural \
  --work "$work" --output "${BUILDS:-runs/distributed/capacity_builds.csv}"
indexes=$(echo "$docs" | tr , '\n' | sed "s|.*|$work/index-&-natural|" | paste -sd,)
"${nice[@]}" python -m scripts.bench.dense_heap --index "$indexes" --query-vectors "$queries" \
  --output "${OUTPUT:-runs/memory/offheap}" --heap "${HEAP:-1g}" --on-heap-heap "${ON_HEAP_HEAP:-4g}" \
  --queries "${NQUERIES:-300}" --rounds "${ROUNDS:-6}"
