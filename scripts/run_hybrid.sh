#!/usr/bin/env bash
# Hybrid runs: SPLADE-tiny + BM25 + dense (all-MiniLM-L6-v2) fused by RRF, min-max linear and z-score linear,
# each fusion fitted on training topics and reported on evaluation topics the fit never saw.
# Usage: scripts/run_hybrid.sh COLLECTION [EVAL_TOPICS EVAL_QRELS]
#   COLLECTION: a folder under ../shared/data (cranfield, npl, scifact, ...).
#   Without EVAL_*: the collection's judged topics are split in half by a fixed seed (SEED, default 17): fit on
#   one half, report on the other. With EVAL_TOPICS EVAL_QRELS: fit on all the collection's topics, report on
#   the given ones.
#   Writes runs/hybrid/COLLECTION/results.{md,csv}; run files, settings and splits go to work/COLLECTION/hybrid,
#   encodings and indexes to work/COLLECTION (shared with scripts/run_collection.sh and reused when present).
#   The last line printed is the path of the best fused run (best by its fit on the training topics).
# Environment: THREADS (default 2), DATA (default ../shared/data), MAX_LENGTH (sparse documents, default 256),
#   DENSE_MAX_LENGTH (dense documents, default 256, the model's own limit; 128 is what it was trained with and
#   halves encoding time on long documents), SEED (default 17), GRID_STEP (fusion weight grid, default 0.1).
set -euo pipefail
collection=${1:?usage: scripts/run_hybrid.sh COLLECTION [EVAL_TOPICS EVAL_QRELS]}
eval_topics=${2:-}
eval_qrels=${3:-}
here=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"  # python -m scripts.fusion.* from any directory
data=${DATA:-$here/../shared/data}/$collection
threads=${THREADS:-2}
max_length=${MAX_LENGTH:-256}
dense_max_length=${DENSE_MAX_LENGTH:-256}
seed=${SEED:-17}
grid_step=${GRID_STEP:-0.1}
work=$here/work/$collection
hybrid=$work/hybrid
out=$here/runs/hybrid/$collection
sparse=splade-tiny
dense=all-minilm-l6-v2
dense_dir=$work/dense-$dense-$dense_max_length
mkdir -p "$hybrid/fit" "$hybrid/eval" "$out"

. "$here/scripts/collection_inputs.sh"
collection_inputs "$data"   # sets $topics and $qrels

if [ -n "$eval_topics" ]; then
  [ -n "$eval_qrels" ] || { echo "error: EVAL_TOPICS needs EVAL_QRELS" >&2; exit 2; }
  for f in "$eval_topics" "$eval_qrels"; do [ -f "$f" ] || { echo "error: $f not found" >&2; exit 2; }; done
  fit_topics=$topics; fit_qrels=$qrels
  how="fitted on all topics of $(basename "$topics"), reported on $(basename "$eval_topics")"
else
  python -m scripts.fusion.split_topics --topics "$topics" --qrels "$qrels" --output-dir "$hybrid/split" \
    --seed "$seed" --overwrite
  fit_topics=$hybrid/split/topics.fit.tsv; fit_qrels=$hybrid/split/qrels.fit.txt
  eval_topics=$hybrid/split/topics.eval.tsv; eval_qrels=$hybrid/split/qrels.eval.txt
  how="judged topics of $(basename "$topics") split in half by seed $seed: fitted on $(wc -l < "$fit_topics"), reported on the other $(wc -l < "$eval_topics")"
fi

# corpus side, once per collection (reused when present)
[ -f "$work/vectors-$sparse.metadata.json" ] ||
  lsr-lucene encode --corpus "$data/corpus.jsonl" --output "$work/vectors-$sparse" --model "$sparse" \
    --max-length "$max_length" --threads "$threads"
[ -d "$work/index-$sparse" ] ||
  lsr-lucene index --input "$work/vectors-$sparse" --index "$work/index-$sparse" --threads "$threads"
[ -d "$work/index-bm25" ] ||
  lsr-lucene bm25 --corpus "$data/corpus.jsonl" --index "$work/index-bm25" --threads "$threads"
[ -f "$dense_dir/metadata.json" ] ||
  lsr-lucene dense encode --corpus "$data/corpus.jsonl" --output "$dense_dir" --model "$dense" \
    --max-length "$dense_max_length" --threads "$threads"

# the three legs, on the fit topics and on the evaluation topics separately
for part in fit eval; do
  part_topics=$fit_topics; [ "$part" = eval ] && part_topics=$eval_topics
  lsr-lucene search --index "$work/index-$sparse" --topics "$part_topics" --output "$hybrid/$part/$sparse.run" \
    --hits 1000 --threads "$threads" --run-tag "$sparse" --overwrite
  lsr-lucene bm25 --index "$work/index-bm25" --topics "$part_topics" --output "$hybrid/$part/bm25.run" \
    --threads "$threads" --overwrite
  lsr-lucene dense search --index "$dense_dir" --topics "$part_topics" --output "$hybrid/$part/dense.run" \
    --hits 1000 --threads "$threads" --overwrite
done
fit_legs=(--run "$sparse=$hybrid/fit/$sparse.run" --run "bm25=$hybrid/fit/bm25.run" --run "dense=$hybrid/fit/dense.run")
eval_legs=(--run "$sparse=$hybrid/eval/$sparse.run" --run "bm25=$hybrid/eval/bm25.run" --run "dense=$hybrid/eval/dense.run")

# fit each method on the fit topics only, then apply the saved setting to the evaluation topics
report_args=()
for method in rrf linear zscore; do
  lsr-lucene fuse "${fit_legs[@]}" --method "$method" --fit "$fit_qrels" --topics-subset "$fit_topics" \
    --grid-step "$grid_step" --save-setting "$hybrid/setting-$method.json" --overwrite
  lsr-lucene fuse "${eval_legs[@]}" --setting "$hybrid/setting-$method.json" --output "$hybrid/eval/fused-$method.run" \
    --run-tag "hybrid-$method" --overwrite
  report_args+=(--fused "$method=$hybrid/eval/fused-$method.run" --setting "$method=$hybrid/setting-$method.json")
done
# untuned reference: RRF with k=60 and equal weights (Pyserini's default fusion)
lsr-lucene fuse "${eval_legs[@]}" --method rrf --rrf-k 60 --output "$hybrid/eval/fused-rrf-k60.run" \
  --run-tag hybrid-rrf-k60 --overwrite
report_args+=(--fused "rrf-k60 (untuned)=$hybrid/eval/fused-rrf-k60.run")

python -m scripts.fusion.report --qrels "$eval_qrels" --leg "$sparse=$hybrid/eval/$sparse.run" \
  --leg "bm25=$hybrid/eval/bm25.run" --leg "dense ($dense)=$hybrid/eval/dense.run" "${report_args[@]}" \
  --title "Hybrid runs: $collection" \
  --note "Evaluation topics only ($how); trec_eval -c. Legs: $sparse (max length $max_length, exact dot product through Lucene), BM25 (Anserini defaults k1=0.9, b=0.4), dense $dense (max length $dense_max_length, mean pooling, L2-normalised, Faiss flat inner product). Fusions fitted by \`lsr-lucene fuse --fit\` (grid step $grid_step over the weight simplex; RRF also k in 5..100) on nDCG@10 of the fit topics; \"fit nDCG@10\" is that score on the fit topics. Produced by \`${DENSE_MAX_LENGTH:+DENSE_MAX_LENGTH=$DENSE_MAX_LENGTH }scripts/run_hybrid.sh $collection${2:+ $2 $3}\`." \
  --output "$out/results" --overwrite
