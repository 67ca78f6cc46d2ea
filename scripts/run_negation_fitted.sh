#!/usr/bin/env bash
# A fitted negation penalty, evaluated in nested folds (issue 49): the default's per-candidate signals on every row
# of the nested experiment (the dev sets and the hard generated pairs of run_negation_estimate.sh), cached once in
# work/negation_fitted/features.jsonl (scripts/negation/negation_features.py); then a pairwise logistic model
# over them fitted inside the outer and inner group folds and chosen against the default by the nested rule, the
# held-out third scored once (scripts/negation/negation_fitted.py) -> runs/negation/fitted.{md,csv}.
# Usage: nice scripts/run_negation_fitted.sh   (about 5 minutes on 2 busy cores once the corpora are encoded; the
# fitting alone takes seconds)
# Environment: DATA (default ../shared/data), MODEL (default splade-tiny).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
features=work/negation_fitted/features.jsonl
mkdir -p runs/negation work
python -m scripts.negation.negation_features --excluir "$data/excluir" --boolq "$data/boolquestions_not" \
  --wiki "$data/wiki2015/passages.jsonl.xz" --work "$here/work" --model "${MODEL:-splade-tiny}" \
  --output "$features" --overwrite
python -m scripts.negation.negation_fitted --features "$features" --output runs/negation/fitted --overwrite
