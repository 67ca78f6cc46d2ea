#!/usr/bin/env bash
# The set-difference exclusion benchmark (issue 65): build its rows (scripts/negation/setdiff_queries.py, a fixed
# rule, held-out topics by sha1), encode each judged collection with splade-tiny and its dense leg (the README path:
# encode, index --dense; the text field of the strict filter), run plain search and compose's default with this code
# and with the code before issue 65 (fe2cb36, unpacked into work/setdiff/old-code and run from there), the pair
# benchmarks the same way, and write runs/negation/setdiff.{md,csv} (scripts/negation/setdiff_score.py).
# Usage: nice scripts/run_negation_setdiff.sh   (2 shared cores: the dense leg of NPL alone takes 10-40 minutes)
# Environment: SETS (default "med cranfield cisi"; cacm and npl are built too when named), DATA (../shared/data).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
sets=${SETS:-med cranfield cisi}
export PYTHONPATH=$here${PYTHONPATH:+:$PYTHONPATH}
# A vectors or embeddings folder is built when its record is there: beside it (DIR.metadata.json, what encode writes
# since issue 67) or inside it (metadata.json: folders written before, and dense encode's embeddings folders).
built() { [ -f "$1.metadata.json" ] || [ -f "$1/metadata.json" ]; }
V=0.1l,0.25l,0.5l,0.75l,1l,1.5l,2l,0.25,0.5,1,none
python -m scripts.negation.setdiff_queries --data "$data" --output runs/negation/setdiff_queries.jsonl
for c in $sets; do
  w=work/$c
  built "$w/vectors-splade-tiny" || lsr-lucene encode --corpus "$data/$c/corpus.jsonl" \
    --output "$w/vectors-splade-tiny" --model splade-tiny --max-length 256
  [ -d "$w/index-splade-tiny" ] || lsr-lucene index --input "$w/vectors-splade-tiny" --index "$w/index-splade-tiny"
  [ -d "$w/index-splade-tiny/text" ] || lsr-lucene index --index "$w/index-splade-tiny" --text
  built "$w/dense" || built "$w/index-splade-tiny/dense" ||
    lsr-lucene dense encode --corpus "$data/$c/corpus.jsonl" --output "$w/dense"
done
for name in excluir boolquestions_not; do   # the pair benchmarks' exact vectors and dense legs (as exclusion.md)
  python -c "import sys; from pathlib import Path; from scripts.negation.negation_nested import open_corpus
open_corpus(sys.argv[1], Path(sys.argv[2]), Path('work'))" "$name" "$data/$name/corpus.jsonl"
done
collections=$(echo $sets | tr ' ' ,)
python -m scripts.negation.setdiff run --collections "$collections" --term-scales "$V" --data "$data" \
  --output work/setdiff/new
python -m scripts.negation.setdiff pairs --term-scales "$V" --data "$data" --output work/setdiff/new
old=work/setdiff/old-code
if [ ! -d "$old/lsr_lucene" ]; then
  mkdir -p "$old" && git archive fe2cb36 lsr_lucene java | tar -x -C "$old"
fi
if [ ! -f "$old/lsr_lucene/java_build/lsr-lucene.jar" ]; then   # the old code's own jar (its Java API differs)
  (cd "$old" && PYTHONPATH="$here/$old" python -c "from lsr_lucene.cli import main; main()" build-java)
fi
(cd "$old" && PYTHONPATH="$here/$old:$here" python -m scripts.negation.setdiff run --work "$here/work" \
  --data "$data" --queries "$here/runs/negation/setdiff_queries.jsonl" --collections "$collections" \
  --output "$here/work/setdiff/old" &&
 PYTHONPATH="$here/$old:$here" python -m scripts.negation.setdiff pairs --work "$here/work" --data "$data" \
  --output "$here/work/setdiff/old")
python -m scripts.negation.setdiff_score --data "$data" --new work/setdiff/new --old work/setdiff/old \
  --output runs/negation/setdiff
echo "done: runs/negation/setdiff.md" >&2
