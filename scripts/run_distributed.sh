#!/usr/bin/env bash
# Distributed encode / index / search on a local Ray instance with 1 and 2 workers, against the one-machine
# commands on the same collection; checks the outputs are identical and writes runs/distributed/timings.csv.
#   scripts/run_distributed.sh [COLLECTION] [DOCS]   (default scifact, all documents; DOCS keeps the first N)
# ADDRESS=HOST:PORT runs on an existing cluster instead of a local instance started per command.
set -euo pipefail
COLLECTION=${1:-scifact}
DOCS=${2:-0}
DATA=../shared/data/$COLLECTION
WORK=work/distributed/$COLLECTION
OUT=runs/distributed
MAXLEN=${MAXLEN:-256}
SHARD=${SHARD:-1000}
mkdir -p "$WORK" "$OUT"
CORPUS=$WORK/corpus.jsonl
if [ "$DOCS" -gt 0 ]; then head -n "$DOCS" "$DATA/corpus.jsonl" > "$CORPUS"; else cp "$DATA/corpus.jsonl" "$CORPUS"; fi
TOPICS=$DATA/topics.tsv; [ -f "$TOPICS" ] || TOPICS=$DATA/topics.train.tsv
CLUSTER=(); [ -n "${ADDRESS:-}" ] && CLUSTER=(--address "$ADDRESS")
CSV=$OUT/timings.csv
. "$(dirname "$0")/timed.sh"
[ -f "$CSV" ] || echo "$CSV_HEADER" > "$CSV"
NDOCS=$(wc -l < "$CORPUS")
nq=$(wc -l < "$TOPICS")

rm -rf "$WORK"/single-* "$WORK"/dist-* "$WORK"/*.run
timed encode single "$NDOCS" docs/s true -- lsr-lucene encode --corpus "$CORPUS" --output "$WORK/single-vectors" \
  --max-length "$MAXLEN" --shard-size "$SHARD"
lsr-lucene encode --topics "$TOPICS" --output "$WORK/queries.jsonl"
timed index single "$NDOCS" docs/s true -- lsr-lucene index --input "$WORK/single-vectors" --index "$WORK/single-index"
timed search single "$nq" queries/s true -- lsr-lucene search --index "$WORK/single-index" \
  --query-vectors "$WORK/queries.jsonl" --output "$WORK/single.run"
for n in 1 2; do
  timed encode "$n" "$NDOCS" docs/s "diff -r -x metadata.json $WORK/single-vectors $WORK/dist-vectors-$n >/dev/null" -- \
    lsr-lucene distributed encode --corpus "$CORPUS" --output "$WORK/dist-vectors-$n" --max-length "$MAXLEN" \
    --shard-size "$SHARD" --num-workers "$n" "${CLUSTER[@]}"
  timed index "$n" "$NDOCS" docs/s true -- lsr-lucene distributed index --input "$WORK/dist-vectors-$n" \
    --index "$WORK/dist-index-$n" --num-workers "$n" "${CLUSTER[@]}"
  timed search "$n" "$nq" queries/s "cmp -s $WORK/single.run $WORK/dist-$n.run" -- lsr-lucene distributed search \
    --index "$WORK/dist-index-$n" --query-vectors "$WORK/queries.jsonl" --output "$WORK/dist-$n.run" \
    --num-workers "$n" "${CLUSTER[@]}"
done
