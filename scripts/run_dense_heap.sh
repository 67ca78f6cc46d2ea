#!/usr/bin/env bash
# Dense-impacts sidecar off the heap (issue 52, item 3): the sidecar's rows read from the memory-mapped files
# against the former on-heap arrays, on wiki2015 samples of several sizes (the first N passages of the seeded
# random order scripts/run_real.sh encodes), each index built with its sidecar (share 1/16), searched with sampled
# NQ test questions: latency at k=10 and k=1000 (both layouts in one JVM, query by query in turn) and the JVM heap
# each keeps (a fresh JVM per layout, -Xmx HEAP) (lsr_lucene/bench/dense_heap.py).
# Needs encoded passages (VECTORS: part-*.jsonl shards in the seeded order, e.g. scripts/run_real.sh with
# ENCODE_ONLY=1) and encoded queries (QUERIES: JSONL {id, vector}, e.g. lsr-lucene encode --topics
# ../shared/data/wiki2015/topics.nq-test.tsv --output Q.jsonl).
# Usage: scripts/run_dense_heap.sh [DOCS]   (DOCS: comma list of passage counts, multiples of the shard size;
#   default 10000,25000)
# Environment: VECTORS (default work/wiki2015/vectors), QUERIES (default work/wiki2015/queries.jsonl), WORK
#   (default work/dense_heap), HEAP (default 1g), NQUERIES (default 300), ROUNDS (default 3), NICE (default 0),
#   OUTPUT (default runs/memory)
# Writes: OUTPUT/dense_heap.md, dense_heap.csv (latency per size, k and layout), dense_heap_memory.csv, dense_heap_indexes.csv
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
vectors=${VECTORS:-work/wiki2015/vectors}
queries=${QUERIES:-work/wiki2015/queries.jsonl}
work=${WORK:-work/dense_heap}
nice=(nice -n "${NICE:-0}")
for f in "$vectors/metadata.json" "$queries"; do
  [ -f "$f" ] || { echo "error: $f not found (see the usage at the top of $0)" >&2; exit 2; }
done
indexes=()
for n in $(echo "${1:-10000,25000}" | tr , ' '); do
  sample=$work/vectors-$n
  if [ ! -d "$work/index-$n" ]; then
    # the first n passages: whole shards, with the collection's metadata (its document count set to n)
    rm -rf "$sample" && mkdir -p "$sample"
    have=0
    for part in "$vectors"/part-*.jsonl; do
      [ "$have" -ge "$n" ] && break
      cp "$part" "$sample/"
      have=$((have + $(wc -l < "$part")))
    done
    [ "$have" -eq "$n" ] || { echo "error: $vectors: the first shards hold $have passages, not $n" >&2; exit 2; }
    python -c "import json, sys; m = json.load(open(sys.argv[1])); m['documents'] = int(sys.argv[3]); \
json.dump(m, open(sys.argv[2], 'w'), indent=2)" "$vectors/metadata.json" "$sample/metadata.json" "$n"
    "${nice[@]}" lsr-lucene index --input "$sample" --index "$work/index-$n" --dense-impacts 0.0625
  fi
  indexes+=("$work/index-$n")
done
"${nice[@]}" python -m lsr_lucene.bench.dense_heap --index "$(IFS=,; echo "${indexes[*]}")" --query-vectors "$queries" \
  --output "${OUTPUT:-runs/memory}" --heap "${HEAP:-1g}" --queries "${NQUERIES:-300}" --rounds "${ROUNDS:-3}"
