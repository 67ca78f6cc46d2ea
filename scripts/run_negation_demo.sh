#!/usr/bin/env bash
# The demo's exclusion queries (topics 1-16 of lsr_lucene/data/demo, issue 49's "tea without caffeine"): plain search
# vs `compose --topics` with its default, without a dense leg and with one (<index>/dense), nDCG@10 over the 16
# queries -> runs/negation/demo_exclusion.{md,csv}, and the top 3 of "tea without caffeine" with their qrels grade
# -> runs/negation/demo_tea.txt. splade-tiny, max length 256, the demo data unchanged. Scratch files: work/demo-negation/.
# Usage: nice scripts/run_negation_demo.sh   (about 2 minutes on 2 busy cores)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
demo=lsr_lucene/data/demo
w=work/demo-negation
out=runs/negation
mkdir -p "$w" "$out"
head -16 "$demo/topics.tsv" > "$w/exclusion.tsv"
[ -f "$w/vectors.metadata.json" ] || python -m lsr_lucene.encode --corpus "$demo/corpus.jsonl" --output "$w/vectors" \
  --max-length 256 --threads 1
[ -d "$w/index" ] || python -m lsr_lucene.index --input "$w/vectors" --index "$w/index" --threads 1
[ -f "$w/dense/metadata.json" ] || python -m lsr_lucene.dense encode --corpus "$demo/corpus.jsonl" --output "$w/dense" \
  --threads 1
python -m lsr_lucene.search --index "$w/index" --topics "$w/exclusion.tsv" --output "$w/plain.run" --threads 1 --overwrite
python -m lsr_lucene.compose --index "$w/index" --topics "$w/exclusion.tsv" --output "$w/sparse.run" --dense none \
  --threads 1 --overwrite
python -m lsr_lucene.compose --index "$w/index" --topics "$w/exclusion.tsv" --output "$w/dense.run" --dense "$w/dense" \
  --threads 1 --overwrite
python -m lsr_lucene.eval --qrels "$demo/qrels.txt" --measures ndcg_cut_10 --qids "$w/exclusion.tsv" \
  --run "plain search=$w/plain.run" --run "compose default, no dense leg=$w/sparse.run" \
  --run "compose default, dense leg=$w/dense.run" --output "$out/demo_exclusion" --overwrite
for r in sparse dense; do
  echo "compose default ($r): tea without caffeine"
  awk '$1 == 1 && $4 <= 3 {print $4, $3}' "$w/$r.run" | while read -r rank doc; do
    echo "  $rank $doc grade $(awk -v d="$doc" '$1 == 1 && $3 == d {print $4}' "$demo/qrels.txt")"
  done
done > "$out/demo_tea.txt"
cat "$out/demo_tea.txt"
