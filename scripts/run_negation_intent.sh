#!/usr/bin/env bash
# Negation intent (issue 50): train the intent model on the development part of the labelled intent set
# (lsr_lucene/data/negation_intent/intent_set.tsv, made by python -m lsr_lucene.experiments.negation_intent_set)
# -> lsr_lucene/compose/intent_model.json, then report the held-out part, the paraphrase families and the
# ordinary topics that fire -> runs/negation/intent.md. Parser only (no index, no encoder): under a minute.
# Usage: nice scripts/run_negation_intent.sh     Environment: DATA (default ../shared/data)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
summary=$(python -m lsr_lucene.experiments.negation_intent train)
echo "$summary" >&2
python -m lsr_lucene.experiments.negation_intent report --data "$data" --summary "$summary" \
  --output runs/negation/intent.md --overwrite
