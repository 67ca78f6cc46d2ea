#!/usr/bin/env bash
# Negation intent (issue 50): train the intent model on the development part of the labelled intent set
# (the written rows in lsr_lucene/data/negation_intent/ and, read from ../shared/data, benchmark/NQ/SciFact rows)
# -> lsr_lucene/compose/intent_model.json (words + all-MiniLM-L6-v2 embedding; a words-only model is trained too,
# into work/, for comparison), then report the held-out part, the paraphrase families and the ordinary topics
# that fire -> runs/negation/intent.md. Parser and the small dense model only (no index): a few minutes.
# Usage: nice scripts/run_negation_intent.sh     Environment: DATA (default ../shared/data)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
mkdir -p work
words=$(python -m scripts.negation.negation_intent train --data "$data" --words-only --output work/intent_words_only.json)
full=$(python -m scripts.negation.negation_intent train --data "$data")
printf '%s\n%s\n' "$words" "$full" >&2
python -m scripts.negation.negation_intent report --data "$data" --summary "$full;" \
  --summary "for comparison, $words." --words-only work/intent_words_only.json --output runs/negation/intent.md \
  --overwrite
