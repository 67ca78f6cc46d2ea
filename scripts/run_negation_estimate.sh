#!/usr/bin/env bash
# What the negation default will score on queries it never saw (issue 49): R@1 and RR with 95% bootstrap intervals
# on the dev sets' seeded held-out thirds and on generated ExcluIR-style pairs (a passage that names another passage's
# title, asked for while that one is excluded; scripts/negation/negation_estimate.py), for this code and for
# the code before issue 49 (BEFORE, the commit whose default issue 49 measured on the held-out test queries), both
# scored by the same module -> runs/negation/estimate.{md,csv}, estimate-before.{md,csv}, generated_pairs.jsonl.
# Then the nested-fold estimate (scripts/negation/negation_nested.py): hard generated pairs (sibling passages
# of one topic, several excluded items; two harder sources whose excluded items overlap the wanted passage or name
# the excluded passage by its category; scripts/negation/negation_hard_pairs.py) beside the dev sets, a few
# candidate settings chosen inside inner group folds, the procedure scored on outer folds, the held-out third scored
# once -> runs/negation/nested.{md,csv}, hard_pairs.jsonl. Set NESTED_ONLY=1 to run this step alone. Vectors are cached in work/<benchmark>/ (as run_negation_harm.sh
# makes them).
# Usage: nice scripts/run_negation_estimate.sh   (about 40 minutes on 2 busy cores once the corpora and the
#        distractors are encoded)
# Environment: DATA (default ../shared/data), MODEL (default splade-tiny), BEFORE (default 240ec7a),
#              SIZE (distractors, default 20000).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
model=${MODEL:-splade-tiny}
before=${BEFORE:-240ec7a}
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
[ -n "${NESTED_ONLY:-}" ] && exit 0
python -m scripts.negation.negation_estimate "${args[@]}" --label "$(git rev-parse --short HEAD)" \
  --pairs "$out/generated_pairs.jsonl" --output "$out/estimate"
old=work/estimate-before
rm -rf "$old" && mkdir -p "$old"
git archive "$before" lsr_lucene | tar -x -C "$old"
cp scripts/negation/negation_estimate.py "$old/scripts/negation/"
# run from inside the old tree: `python -m` puts the working folder first on the import path
(cd "$old" && PYTHONPATH=. python -m scripts.negation.negation_estimate "${args[@]}" --label "$before" \
  --output "$here/$out/estimate-before")
echo "done: $out/nested.md, $out/estimate.md, $out/estimate-before.md" >&2
