#!/usr/bin/env bash
# Exclusion across benchmarks (issue 19): every set-difference setting on ExcluIR dev and BoolQuestions NOT dev,
# the worst case of both, and the selection table (chosen on one benchmark, on the worst case, and each
# cross-validated), into runs/compositional/transfer/. Corpus vectors and the encoded query texts are cached in
# work/ (ignored by git) and reused: encode once, evaluate every setting on the cached vectors.
# Usage: scripts/run_transfer.sh   (about 5 minutes on 2 busy cores once the corpora are encoded; encoding
#        the 1,980 + 646 documents takes a few minutes more the first time)
# Environment: MODEL (default splade-tiny), THREADS (default 2), DATA (default ../shared/data), FOLDS (default 5).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
out=runs/compositional/transfer
mkdir -p "$out" work
. scripts/collection_inputs.sh
exclusion_inputs "$data"
python -m scripts.negation.contrastive transfer --data "$data/excluir" --data "$data/boolquestions_not" \
  --work work --output-dir "$out" --model "${MODEL:-splade-tiny}" --threads "${THREADS:-2}" \
  --folds "${FOLDS:-5}" --overwrite > "$out/summary.md.tmp" && mv "$out/summary.md.tmp" "$out/summary.md"
echo "done: tables in $out" >&2
