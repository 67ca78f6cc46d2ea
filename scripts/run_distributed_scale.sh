#!/usr/bin/env bash
# Distributed index and search of the scale benchmark's synthetic collection (issue 16): its vector parts regrouped
# into SHARDS shard files, then `lsr-lucene distributed index` and `distributed search` with 1 and 2 workers (builders;
# replicas per shard), the runs against `lsr-lucene search` on the one-machine index the scale benchmark built
# (ours, natural order); checks the runs are identical and appends to runs/distributed/timings.csv.
# Needs `scripts/run_scale.sh DOCS` first (its vectors, index and encoded pool queries under WORK).
#   scripts/run_distributed_scale.sh [DOCS]   (default 1000000)
# Environment: WORK (default work/scale), SHARDS (default 4), QUERIES (SciFact's first N encoded queries, default
#   300), HITS (default 1000), ADDRESS=HOST:PORT (an existing cluster instead of a local instance per command)
set -euo pipefail
DOCS=${1:-1000000}
SCALE=${WORK:-work/scale}
SHARDS=${SHARDS:-4}
HITS=${HITS:-1000}
SOURCE=$SCALE/docs-$DOCS
QUERY_POOL=$(ls -d "$SCALE"/pool/*/scifact.queries.jsonl 2>/dev/null | head -n 1)
for need in "$SOURCE/vectors.metadata.json" "$SOURCE/indexes/ours/lsr_lucene.json" "$QUERY_POOL"; do
  [ -f "$need" ] || { echo "error: ${need:-$SCALE/pool/*/scifact.queries.jsonl} not found (run scripts/run_scale.sh $DOCS first)" >&2; exit 2; }
done
COLLECTION=synthetic
NDOCS=$DOCS
OUT=runs/distributed
DIST=work/distributed/synthetic-$DOCS
CSV=$OUT/timings.csv
. "$(dirname "$0")/timed.sh"
mkdir -p "$OUT" "$DIST"
[ -f "$CSV" ] || echo "$CSV_HEADER" > "$CSV"
CLUSTER=(); [ -n "${ADDRESS:-}" ] && CLUSTER=(--address "$ADDRESS")
rm -rf "$DIST"/vectors "$DIST"/index-* "$DIST"/*.run
head -n "${QUERIES:-300}" "$QUERY_POOL" > "$DIST/queries.jsonl"
nq=$(wc -l < "$DIST/queries.jsonl")

# SHARDS shard files of consecutive parts (documents in collection order), with the collection's metadata
mkdir -p "$DIST/vectors"
mapfile -t parts < <(ls "$SOURCE"/vectors/part-*.jsonl)
per=$(( (${#parts[@]} + SHARDS - 1) / SHARDS ))
for ((s = 0; s * per < ${#parts[@]}; s++)); do
  cat "${parts[@]:s*per:per}" > "$DIST/vectors/part-$(printf %05d "$s").jsonl"
done
cp "$SOURCE/vectors.metadata.json" "$DIST/"

timed search single "$nq" queries/s true -- lsr-lucene search --index "$SOURCE/indexes/ours" \
  --query-vectors "$DIST/queries.jsonl" --output "$DIST/single.run" --hits "$HITS"
for n in 1 2; do
  timed index "$n" "$NDOCS" docs/s true -- lsr-lucene distributed index --input "$DIST/vectors" \
    --index "$DIST/index-$n" --num-workers "$n" "${CLUSTER[@]}"
  timed search "$n" "$nq" queries/s "cmp -s $DIST/single.run $DIST/dist-$n.run" -- lsr-lucene distributed search \
    --index "$DIST/index-$n" --query-vectors "$DIST/queries.jsonl" --output "$DIST/dist-$n.run" --hits "$HITS" \
    --num-workers "$n" "${CLUSTER[@]}"
done
