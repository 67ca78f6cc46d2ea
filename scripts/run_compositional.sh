#!/usr/bin/env bash
# Compositional retrieval (issue 4): every operation on ExcluIR dev, NevIR dev and the demo compositions,
# the latency benchmark, and --explain examples. Tables go to runs/compositional/, vectors, indexes and
# full run files to work/ (ignored by git); existing vectors and indexes are reused.
# Usage: scripts/run_compositional.sh            (about 25 minutes on 2 busy CPU cores)
# Environment: MODEL (default splade-tiny), THREADS (default 2), DATA (default ../shared/data),
#              LATENCY_QUERIES (default 100).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
model=${MODEL:-splade-tiny}
threads=${THREADS:-2}
out=runs/compositional
mkdir -p "$out/excluir" "$out/nevir" "$out/demo" work
for f in "$data/excluir/corpus.jsonl" "$data/excluir/dev.jsonl" "$data/nevir/dev.jsonl"; do
  [ -f "$f" ] || { echo "error: $f not found" >&2; exit 2; }
done

echo "== ExcluIR dev (corpus: all $(wc -l < "$data/excluir/corpus.jsonl") documents)" >&2
python -m scripts.negation.contrastive excluir --corpus "$data/excluir/corpus.jsonl" --queries "$data/excluir/dev.jsonl" \
  --work work/excluir --output-dir "$out/excluir" --model "$model" --threads "$threads" --lucene --overwrite \
  > "$out/excluir/summary.md.tmp" && mv "$out/excluir/summary.md.tmp" "$out/excluir/summary.md"

echo "== NevIR dev" >&2
python -m scripts.negation.contrastive nevir --data "$data/nevir/dev.jsonl" --work work/nevir \
  --output-dir "$out/nevir" --model "$model" --threads "$threads" --lucene --overwrite \
  > "$out/nevir/summary.md.tmp" && mv "$out/nevir/summary.md.tmp" "$out/nevir/summary.md"

echo "== demo compositions (not / and / or through Lucene, nDCG@10)" >&2
demo=lsr_lucene/data/demo
[ -f work/demo/vectors.metadata.json ] ||
  python -m lsr_lucene.encode --corpus "$demo/corpus.jsonl" --output work/demo/vectors --model "$model" \
    --max-length 256 --threads "$threads"
[ -d work/demo/index ] || python -m lsr_lucene.index --input work/demo/vectors --index work/demo/index --threads "$threads"
mkdir -p "$out/demo"
python -m scripts.negation.contrastive collection --index work/demo/index --queries "$demo/compositions.jsonl" \
  --topics "$demo/topics.tsv" --qrels "$demo/qrels.txt" --work work/demo/runs --output-dir "$out/demo" \
  --ablations --threads "$threads" --overwrite > "$out/demo/summary.md.tmp" && mv "$out/demo/summary.md.tmp" "$out/demo/summary.md"

echo "== latency (composed vs vanilla, one run)" >&2
python -m scripts.bench.compose --index work/excluir/index --queries "$data/excluir/dev.jsonl" \
  --limit "${LATENCY_QUERIES:-100}" --threads 1 --output "$out/latency.md" --overwrite

echo "== --explain examples" >&2
python -m lsr_lucene.compose --index work/excluir/index --operation disentangled --lam 0.5 --explain --hits 10 \
  --query "Can you tell me about the 1953 Belgian Grand Prix without mentioning Alberto Ascari?" \
  --query "What other songs are on the album By the Way by Red Hot Chili Peppers besides Universally Speaking?" \
  --query "books about monarchs that are not European" \
  --output work/excluir/explain.run --overwrite > "$out/explain_examples.txt"
python -m lsr_lucene.compose --index work/demo/index --operation cpt --explain --hits 5 \
  --composition '{"op": "and", "a": "volcanoes", "b": "Iceland"}' \
  --output work/demo/explain.run --overwrite >> "$out/explain_examples.txt"
echo "done: tables in $out" >&2
