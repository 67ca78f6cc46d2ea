#!/usr/bin/env bash
# The nested-fold estimate of the negation default (issue 49; scripts/negation/negation_nested.py): hard generated
# pairs (sibling passages of one topic, several excluded items; two harder sources whose excluded items overlap the
# wanted passage or name the excluded passage by its category; scripts/negation/negation_hard_pairs.py) beside the
# dev sets, a few candidate settings chosen inside inner group folds, the procedure scored on outer folds, the
# held-out third scored once -> runs/negation/nested.{md,csv}, hard_pairs.jsonl. Vectors are cached in
# work/<benchmark>/ (as run_negation_harm.sh makes them).
# (The generated-pairs estimate it also ran, runs/negation/estimate{,-before}.md, is frozen: issue 66 retired its
# module; `git checkout fe2cb36 && scripts/run_negation_estimate.sh` reruns it.)
# Usage: nice scripts/run_negation_estimate.sh   (about 30 minutes on 2 busy cores once the corpora and the
#        distractors are encoded)
# Environment: DATA (default ../shared/data), MODEL (default splade-tiny), SIZE (distractors, default 20000).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
model=${MODEL:-splade-tiny}
out=runs/negation
mkdir -p "$out" work
args=(--excluir "$data/excluir" --boolq "$data/boolquestions_not" --work "$here/work" --model "$model" --overwrite)
# the nested selection scores every ExcluIR / BoolQuestions row also with SIZE wiki2015 distractors added to its corpus
# (the draw of scripts/run_negation_scale.sh, made here when missing)
pad=work/negation_scale/distractors-${SIZE:-20000}.jsonl
mkdir -p work/negation_scale
[ -f "$pad" ] || python -m scripts.negation.negation_scale distractors --wiki "$data/wiki2015/passages.jsonl.xz" \
  --data "$data" --size "${SIZE:-20000}" --output "$pad"
python -m scripts.negation.negation_nested "${args[@]}" --wiki "$data/wiki2015/passages.jsonl.xz" \
  --pairs "$out/hard_pairs.jsonl" --pad "$pad" --output "$out/nested"
echo "done: $out/nested.md" >&2
