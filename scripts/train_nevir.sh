#!/usr/bin/env bash
# Fine-tune splade-tiny on NevIR train: positive-only SPLADE, and signed SNReLU with absmax and sum pooling
# (with a fixed wide dead zone, with an annealed one, and with a negative head),
# then evaluate every model and the vanilla one through Lucene impact indexes:
#   - NevIR dev pairwise accuracy: each row's two documents indexed, both queries scored with SignedImpactQuery;
#   - share of negative weights and non-zero terms per document / query (NevIR dev vectors);
#   - Cranfield nDCG@10 (ad hoc side effect of the fine-tuning; documents max length 256).
# Early stopping uses 50 rows held out from NevIR train (rows sharing a document stay together), so NevIR dev
# is only used for the reported figures.
# Usage: scripts/train_nevir.sh
# Environment: THREADS (default 2), DATA (default ../shared/data), MODEL (default splade-tiny),
#   FORCE=1 retrains models and re-evaluates results that already exist, SEED (default 13).
# Writes: runs/nevir/results.{md,csv}, runs/nevir/train-<model>.jsonl (per-epoch training logs),
#   runs/nevir/settings.json; models, vectors and indexes under work/nevir/signed/ (git-ignored).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
data=${DATA:-$here/../shared/data}
base=${MODEL:-splade-tiny}
threads=${THREADS:-2}
seed=${SEED:-13}
work=$here/work/nevir/signed
out=$here/runs/nevir
mkdir -p "$work/models" "$work/results" "$out"
cd "$here"
for f in "$data/nevir/train.jsonl" "$data/nevir/dev.jsonl" "$data/cranfield/corpus.jsonl"; do
  [ -f "$f" ] || { echo "error: $f not found" >&2; exit 2; }
done

# ---- training (settings chosen on the held-out train rows; see runs/nevir/README.md) -------------------------------
common=(--model "$base" --train "$data/nevir/train.jsonl" --holdout 50 --seed "$seed" --threads "$threads"
        --epochs 6 --patience 3 --batch-size 8 --lr 5e-4 --lambda-q 1e-2 --lambda-d 1e-3
        --max-length 256 --query-max-length 64 --quiet)
positive=(--activation splade --pooling max)
# SNReLU with a wide dead zone (eps 12): adding eps to the vocabulary biases makes the positive part equal to
# SPLADE's at the start, and only logits below -24 (SPLADE units) are negative; the surrogate gradient (0.3)
# inside the dead zone lets training move terms across it.
signed=(--activation snrelu --epsilon 12 --dead-zone-grad 0.3)
# With eps 12 a term is hardly ever both strongly positive and strongly negative in one text, so absmax and sum
# give the same vectors. The annealed variant starts with that wide dead zone and narrows it to eps 4 over the
# first half of training (negatives below -8 in SPLADE units at the end): the FLOPS term pushes the newly
# exposed junk negatives back into the dead zone, and epochs are only model candidates once annealing is over.
annealed=(--activation snrelu --epsilon 4 --epsilon-start 12 --anneal 0.5 --epochs 8)
# SNReLU with a negative head (lsr_lucene/encode/negative_head.py): the MLM logits only make positive weights, negative
# ones come from a text-level head that starts at zero (eps 1). It fits the training pairs only after ~10 epochs,
# so it runs 25 epochs and keeps the best held-out one.
headed=(--activation snrelu --epsilon 1 --negative-head mean --dead-zone-grad 0.3 --epochs 25 --patience 0)

train() {
  local name=$1; shift
  if [ -f "$work/models/$name/config.json" ] && [ -z "${FORCE:-}" ]; then
    echo "== $name: reusing $work/models/$name (FORCE=1 retrains)"
  else
    echo "== training $name"
    local started=$SECONDS
    python -m lsr_lucene.train "${common[@]}" --output "$work/models/$name" --overwrite "$@"
    echo "   trained in $((SECONDS - started))s"
  fi
  cp "$work/models/$name/train_log.jsonl" "$out/train-$name.jsonl"
}
train positive "${positive[@]}"
train snrelu-absmax "${signed[@]}" --pooling absmax
train snrelu-sum "${signed[@]}" --pooling sum
train snrelu-absmax-anneal "${annealed[@]}" --pooling absmax
train snrelu-sum-anneal "${annealed[@]}" --pooling sum
train snrelu-absmax-head "${headed[@]}" --pooling absmax
train snrelu-sum-head "${headed[@]}" --pooling sum
train snrelu-sum-head-seed14 "${headed[@]}" --pooling sum --seed 14  # a second seed: how much it moves

# ---- evaluation through Lucene ---------------------------------------------------------------------------------
python -m scripts.studies.signed_stats nevir-corpus --nevir "$data/nevir/dev.jsonl" \
  --corpus "$work/dev-docs.jsonl" --topics "$work/dev-queries.tsv" --overwrite
cran=$data/cranfield

evaluate() {
  local name=$1 model=$2
  local v=$work/vectors-$name i=$work/index-$name cv=$work/cranfield-vectors-$name ci=$work/cranfield-index-$name
  if [ -f "$work/results/$name.json" ] && [ "$work/results/$name.json" -nt "$model/config.json" ] \
     && [ -z "${FORCE:-}" ]; then
    echo "== $name: reusing $work/results/$name.json (FORCE=1 re-evaluates)"
    return
  fi
  echo "== evaluating $name ($model)"
  rm -rf "$v" "$i" "$cv" "$ci"
  python -m lsr_lucene.encode --corpus "$work/dev-docs.jsonl" --output "$v" --model "$model" --max-length 256 \
    --threads "$threads"
  python -m lsr_lucene.index --input "$v" --index "$i" --threads "$threads"
  python -m lsr_lucene.encode --topics "$work/dev-queries.tsv" --output "$work/queries-$name.jsonl" \
    --model "$model" --query-max-length 64 --threads "$threads" --overwrite
  python -m lsr_lucene.encode --corpus "$cran/corpus.jsonl" --output "$cv" --model "$model" --max-length 256 \
    --threads "$threads"
  python -m lsr_lucene.index --input "$cv" --index "$ci" --threads "$threads"
  python -m lsr_lucene.search --index "$ci" --topics "$cran/topics.tsv" --output "$out/cranfield-$name.run" \
    --hits 1000 --threads "$threads" --run-tag "$name" --overwrite
  local ndcg cran_terms cran_neg
  ndcg=$(python -c "import sys; from lsr_lucene.eval.trec import evaluate; \
print(f\"{evaluate(sys.argv[1], {'r': sys.argv[2]}, ['ndcg_cut_10']).iloc[0, 0]:.4f}\")" \
    "$cran/qrels.txt" "$out/cranfield-$name.run")
  read -r cran_terms cran_neg < <(python -c "import sys; from scripts.studies.signed_stats import file_stats; \
s = file_stats(sys.argv[1]); print(f\"{s['avg_nonzero']:.1f} {s['negative_share']:.4f}\")" "$cv")
  local train_info=()
  if [ -f "$model/train_summary.json" ]; then
    read -r best secs < <(python -c "import json,sys; s=json.load(open(sys.argv[1])); \
print(s['best_epoch'], s['elapsed_s'])" "$model/train_summary.json")
    train_info=(--extra "best epoch=$best" --extra "training time (s)=$secs")
  fi
  python -m scripts.studies.signed_stats nevir-eval --nevir "$data/nevir/dev.jsonl" --index "$i" \
    --query-vectors "$work/queries-$name.jsonl" --vectors "$v" --name "$name" \
    --extra "Cranfield nDCG@10=$ndcg" --extra "Cranfield terms/doc=$cran_terms" \
    --extra "Cranfield neg. share=$cran_neg" ${train_info[@]+"${train_info[@]}"} \
    --output "$work/results/$name.json" --overwrite > /dev/null
  echo "   NevIR dev: $(python -c "import json,sys; r=json.load(open(sys.argv[1])); \
print(f\"pairwise accuracy {r['pairwise_accuracy']:.3f}\")" "$work/results/$name.json"), Cranfield nDCG@10 $ndcg"
}
evaluate vanilla "$base"
evaluate positive "$work/models/positive"
evaluate snrelu-absmax "$work/models/snrelu-absmax"
evaluate snrelu-sum "$work/models/snrelu-sum"
evaluate snrelu-absmax-anneal "$work/models/snrelu-absmax-anneal"
evaluate snrelu-sum-anneal "$work/models/snrelu-sum-anneal"
evaluate snrelu-absmax-head "$work/models/snrelu-absmax-head"
evaluate snrelu-sum-head "$work/models/snrelu-sum-head"
evaluate snrelu-sum-head-seed14 "$work/models/snrelu-sum-head-seed14"

python -m scripts.studies.signed_stats table --output "$out/results" --overwrite \
  --result "$work/results/vanilla.json" --result "$work/results/positive.json" \
  --result "$work/results/snrelu-absmax.json" --result "$work/results/snrelu-sum.json" \
  --result "$work/results/snrelu-absmax-anneal.json" --result "$work/results/snrelu-sum-anneal.json" \
  --result "$work/results/snrelu-absmax-head.json" --result "$work/results/snrelu-sum-head.json" \
  --result "$work/results/snrelu-sum-head-seed14.json"
python - "$work" "$out/settings.json" <<'PY'
import json, sys
from pathlib import Path
work, target = Path(sys.argv[1]), Path(sys.argv[2])
settings = {}
for name in ("positive", "snrelu-absmax", "snrelu-sum", "snrelu-absmax-anneal", "snrelu-sum-anneal",
             "snrelu-absmax-head", "snrelu-sum-head", "snrelu-sum-head-seed14"):
    model = work / "models" / name
    settings[name] = {"train_args": json.loads((model / "train_args.json").read_text()),
                      "summary": json.loads((model / "train_summary.json").read_text())}
target.write_text(json.dumps(settings, indent=2) + "\n")
PY
echo "wrote $out/results.md, $out/results.csv and $out/settings.json"
