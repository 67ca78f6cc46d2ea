#!/usr/bin/env bash
# Issue 36, item 2: ways of fusing the negation default's legs (dense cosine of the query, z-score, RRF, a BM25 leg,
# cos B on the penalised side, a penalty only on documents about B), each family over its grid, judged by repeated
# 5-fold CV over ExcluIR dev + BoolQuestions dev, chosen on ExcluIR only (BoolQuestions never read), and the seeded
# tuning part -> held-out third; plus the ceiling of each A leg -> runs/negation/leg_fusion{,_ceiling}.{md,csv}.
# Reuses the splade-tiny corpus vectors and dense embeddings that scripts/run_negation_harm.sh caches in work/.
# Usage: nice scripts/run_leg_fusion.sh   (about 3 minutes on 2 busy cores once the vectors are cached)
# Environment: THREADS (default 2), DATA (default ../shared/data), REPEATS (default 10)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
. scripts/collection_inputs.sh
exclusion_inputs "$data"
mkdir -p work runs/negation
python -m scripts.negation.leg_fusion --data "$data/excluir" --data "$data/boolquestions_not" --work work \
  --output-dir runs/negation --threads "${THREADS:-2}" --repeats "${REPEATS:-10}" --overwrite
echo "done: runs/negation/leg_fusion.md, runs/negation/leg_fusion_ceiling.md" >&2
