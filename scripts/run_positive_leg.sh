#!/usr/bin/env bash
# Issue 36, item 2: a second scorer (dense all-MiniLM-L6-v2 or BM25, on A's text or the whole query) fused into the
# positive leg A of fired exclusion queries before the fusion-gated penalty, on ExcluIR dev and BoolQuestions dev,
# with the worst-case 5-fold CV selection of the transfer experiment -> runs/negation/positive_leg{,_selection}.md.
# Reuses the splade-tiny corpus vectors and query cache of scripts/run_transfer.sh in work/; the dense corpus
# vectors are cached there too (encoding them takes about 8 minutes on 2 busy cores the first time).
# Usage: nice scripts/run_positive_leg.sh     Environment: THREADS (default 2), DATA (default ../shared/data)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
. scripts/collection_inputs.sh
exclusion_inputs "$data"
mkdir -p work runs/negation
python -m scripts.negation.positive_leg --data "$data/excluir" --data "$data/boolquestions_not" --work work \
  --output-dir runs/negation --threads "${THREADS:-2}" --overwrite
echo "done: runs/negation/positive_leg.md, runs/negation/positive_leg_selection.md" >&2
