#!/usr/bin/env bash
# Negation at scale (issue 49): the default over each benchmark corpus alone and with SIZE wiki2015 distractor
# passages added (ExcluIR 1,980 and BoolQuestions 646 passages; users search millions), on the dev rows and the
# written rows -> runs/negation/scale.{md,csv} (R@1 / RR with 95% bootstrap intervals, plain search beside, and on the
# rows where A alone prefers the excluded passage).
# Usage: nice scripts/run_negation_scale.sh   (encoding 20,000 distractors: ~15 minutes on 2 cores, once; scoring ~5)
# Environment: DATA (default ../shared/data), SIZE (default 20000).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
size=${SIZE:-20000}
mkdir -p work/negation_scale
extra=work/negation_scale/distractors-$size.jsonl
[ -f "$extra" ] || python -m scripts.negation.negation_scale distractors --wiki "$data/wiki2015/passages.jsonl.xz" \
  --data "$data" --size "$size" --output "$extra"
python -m scripts.negation.negation_scale score --data "$data" --written runs/negation/written_pairs.jsonl \
  --extra "$extra" --work work --output work/negation_scale/scored-$size.csv --overwrite
python -m scripts.negation.negation_scale table --scored work/negation_scale/scored-$size.csv \
  --output runs/negation/scale --overwrite
echo "done: runs/negation/scale.md" >&2
