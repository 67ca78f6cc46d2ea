#!/usr/bin/env bash
# The scope head (--negative-head scope, lsr_lucene/encode/negative_head.py) on NevIR: does training keep its
# negation-cue prior? Fine-tunes splade-tiny with it (absmax and sum pooling) under two objectives and
# tabulates the held-out pairwise accuracy and sign statistics per epoch (epoch 0: the untrained prior):
#   inbatch: the standard loss (in-batch negatives + the row's other document), lr 1e-4, 5 epochs;
#   pair:    --no-in-batch-negatives (the pairwise objective itself), FLOPS 1e-4/1e-5, lr 5e-4, 3 epochs.
# Held-out: 50 rows of NevIR train (as in train_nevir.sh); NevIR dev is not used.
# Usage: scripts/nevir_scope.sh        Environment: DATA (default ../shared/data), SEED (default 13)
# Writes: runs/nevir/scope-epochs.{md,csv}, runs/nevir/train-scope-<variant>.jsonl; models under
#   work/nevir/scope/ (git-ignored). Two trainings run at a time, one thread each.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
data=${DATA:-$here/../shared/data}
seed=${SEED:-13}
work=$here/work/nevir/scope
out=$here/runs/nevir
[ -f "$data/nevir/train.jsonl" ] || { echo "error: $data/nevir/train.jsonl not found" >&2; exit 2; }
mkdir -p "$work" "$out"
cd "$here"
common=(--model splade-tiny --train "$data/nevir/train.jsonl" --holdout 50 --seed "$seed" --threads 1
        --patience 0 --batch-size 8 --max-length 256 --query-max-length 64 --quiet
        --activation snrelu --epsilon 1 --negative-head scope --dead-zone-grad 0.3 --overwrite)
inbatch=(--lr 1e-4 --lambda-q 1e-2 --lambda-d 1e-3 --epochs 5)
pair=(--no-in-batch-negatives --lr 5e-4 --lambda-q 1e-4 --lambda-d 1e-5 --epochs 3)

train() {
  local name=$1; shift
  python -m lsr_lucene.train "${common[@]}" --output "$work/$name" "$@" > "$work/$name.log" 2>&1 \
    || { echo "error: training $name failed; see $work/$name.log" >&2; return 1; }
  cp "$work/$name/train_log.jsonl" "$out/train-scope-$name.jsonl"
}
for objective in inbatch pair; do
  declare -n settings=$objective
  echo "== training scope-$objective (absmax and sum)"
  train "$objective-absmax" "${settings[@]}" --pooling absmax &
  train "$objective-sum" "${settings[@]}" --pooling sum &
  wait -n && wait -n  # both must succeed
done
logs=()
for name in inbatch-absmax inbatch-sum pair-absmax pair-sum; do
  logs+=(--log "scope-$name=$out/train-scope-$name.jsonl")
done
python -m scripts.studies.signed_stats epochs "${logs[@]}" --output "$out/scope-epochs" --overwrite
echo "wrote $out/scope-epochs.md and $out/scope-epochs.csv"
