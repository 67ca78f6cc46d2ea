#!/usr/bin/env bash
# Distributed search on real text against one index (issue 52, item 2 at the size at hand): encoded wiki2015
# passages (VECTORS, part-*.jsonl shards in the seeded order of scripts/run_real.sh) regrouped into N shard files
# for each N of SHARDS, `lsr-lucene distributed index` (each shard with its dense-impacts sidecar, as one index has
# it), then `lsr-lucene distributed search` on a local Ray instance with the machine's cores against
# `lsr-lucene search` on one index of all the passages: wall times, the runs byte-identical, and where the
# distributed time goes (the "time:" line distributed search prints: per-batch round trips against the slowest
# shard's search, queueing/transfer/serialisation, per-shard busy time, driver prepare/fetch/merge).
# Usage: scripts/run_distributed_real.sh [SHARDS]   (comma list, default 2,4)
# Environment: VECTORS (default work/wiki2015/vectors), QUERIES (encoded queries, JSONL {id, vector}; default
#   work/wiki2015/queries.jsonl), NQ (first NQ queries, default all), HITS (default 1000), WORK (default
#   work/distributed/wiki2015), SHARE (dense-impacts share, default 0.0625), OUTPUT (default runs/distributed)
# Writes: OUTPUT/timings.csv (appends), OUTPUT/wiki2015-timing.md (the time lines of this run)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
VECTORS=${VECTORS:-work/wiki2015/vectors}
QUERY_FILE=${QUERIES:-work/wiki2015/queries.jsonl}
WORK=${WORK:-work/distributed/wiki2015}
OUT=${OUTPUT:-runs/distributed}
HITS=${HITS:-1000}
SHARE=${SHARE:-0.0625}
for f in "$VECTORS/metadata.json" "$QUERY_FILE"; do
  [ -f "$f" ] || { echo "error: $f not found (see the usage at the top of $0)" >&2; exit 2; }
done
mkdir -p "$WORK" "$OUT"
COLLECTION=wiki2015
NDOCS=$(cat "$VECTORS"/part-*.jsonl | wc -l)
CSV=$OUT/timings.csv
. "$(dirname "$0")/timed.sh"
[ -f "$CSV" ] || echo "$CSV_HEADER" > "$CSV"
if [ -n "${NQ:-}" ]; then head -n "$NQ" "$QUERY_FILE" > "$WORK/queries.jsonl"; else cp "$QUERY_FILE" "$WORK/queries.jsonl"; fi
nq=$(wc -l < "$WORK/queries.jsonl")
report=$OUT/wiki2015-timing.md
{
  echo "# Distributed search on wiki2015 ($NDOCS passages, $nq NQ test questions, k=$HITS)"
  echo
  echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg) at the start. Local Ray instance with the machine's cores; one index and every shard with the dense-impacts sidecar (share $SHARE). Wall times and identity in timings.csv; below, the breakdown distributed search prints."
  echo
} > "$report.tmp"

rm -rf "$WORK"/single-index "$WORK"/index-* "$WORK"/vectors-* "$WORK"/*.run
lsr-lucene index --input "$VECTORS" --index "$WORK/single-index" --dense-impacts "$SHARE"
timed search single "$nq" queries/s true -- lsr-lucene search --index "$WORK/single-index" \
  --query-vectors "$WORK/queries.jsonl" --output "$WORK/single.run" --hits "$HITS"
mapfile -t parts < <(ls "$VECTORS"/part-*.jsonl)
for n in $(echo "${1:-2,4}" | tr , ' '); do
  # n shard files of consecutive parts (passages in collection order), with the collection's metadata
  mkdir -p "$WORK/vectors-$n"
  per=$(( (${#parts[@]} + n - 1) / n ))
  for ((s = 0; s * per < ${#parts[@]}; s++)); do
    cat "${parts[@]:s*per:per}" > "$WORK/vectors-$n/part-$(printf %05d "$s").jsonl"
  done
  cp "$VECTORS/metadata.json" "$WORK/vectors-$n/"
  lsr-lucene distributed index --input "$WORK/vectors-$n" --index "$WORK/index-$n" --num-workers "$n"
  for shard in "$WORK/index-$n"/shard-*; do
    [ -d "$shard/dense-impacts" ] || lsr-lucene index --index "$shard" --dense-impacts "$SHARE" >/dev/null
  done
  timed search "$n-shards" "$nq" queries/s "cmp -s $WORK/single.run $WORK/dist-$n.run" -- \
    bash -c "lsr-lucene distributed search --index '$WORK/index-$n' --query-vectors '$WORK/queries.jsonl' \
      --output '$WORK/dist-$n.run' --hits '$HITS' | tee '$WORK/dist-$n.log'"
  echo "- $n shards: $(grep '^time: ' "$WORK/dist-$n.log")" >> "$report.tmp"
done
mv "$report.tmp" "$report"
cat "$report"
