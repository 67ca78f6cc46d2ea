#!/usr/bin/env bash
# Encode, index, search and evaluate one shared collection with SPLADE-tiny and BM25 (+RM3).
# Usage: scripts/run_collection.sh COLLECTION [MAX_LENGTH]
#   COLLECTION: a folder name under ../shared/data (cranfield, cisi, cacm, med, npl, scifact)
#   Writes OUTPUT/{splade-tiny,bm25,bm25-rm3}.run and OUTPUT/results.{md,csv}; OUTPUT is work/COLLECTION/runs
#   (ignored by git, replaced on every run) unless given: OUTPUT=runs/COLLECTION writes the tracked results, and
#   replaces existing ones only with OVERWRITE=1 (else the first existing file is refused, one error line).
#   Vectors and indexes go to work/COLLECTION (ignored by git); existing ones are reused.
# Environment: MODEL (default splade-tiny), THREADS (default 2), DATA (default ../shared/data), EXTRA_ENCODE_ARGS,
#   OUTPUT, OVERWRITE.
set -euo pipefail
collection=${1:?usage: scripts/run_collection.sh COLLECTION [MAX_LENGTH]}
max_length=${2:-256}
here=$(cd "$(dirname "$0")/.." && pwd)
data=${DATA:-$here/../shared/data}/$collection
model=${MODEL:-splade-tiny}
threads=${THREADS:-2}
work=$here/work/$collection
out=${OUTPUT:-$work/runs}
overwrite=()  # the scratch folder is the script's own; a given OUTPUT is replaced only when asked
[ -z "${OUTPUT:-}" ] || [ "${OVERWRITE:-0}" = 1 ] && overwrite=(--overwrite)
mkdir -p "$work" "$out"

. "$here/scripts/collection_inputs.sh"
collection_inputs "$data"   # sets $topics and $qrels
name=${model##*/}

[ -d "$work/vectors-$name" ] && [ -f "$work/vectors-$name.metadata.json" ] ||
  lsr-lucene encode --corpus "$data/corpus.jsonl" --output "$work/vectors-$name" --model "$model" \
    --max-length "$max_length" --threads "$threads" ${EXTRA_ENCODE_ARGS:-}
[ -d "$work/index-$name" ] ||
  lsr-lucene index --input "$work/vectors-$name" --index "$work/index-$name" --threads "$threads"
lsr-lucene search --index "$work/index-$name" --topics "$topics" --output "$out/$name.run" \
  --hits 1000 --threads "$threads" --run-tag "$name" "${overwrite[@]}"
lsr-lucene bm25 --corpus "$data/corpus.jsonl" --index "$work/index-bm25" --topics "$topics" \
  --output "$out/bm25.run" --threads "$threads" "${overwrite[@]}"
lsr-lucene bm25 --index "$work/index-bm25" --topics "$topics" --output "$out/bm25-rm3.run" --rm3 \
  --threads "$threads" "${overwrite[@]}"
lsr-lucene eval --qrels "$qrels" --run "$name=$out/$name.run" --run "bm25=$out/bm25.run" \
  --run "bm25+rm3=$out/bm25-rm3.run" --output "$out/results" "${overwrite[@]}"
