#!/usr/bin/env bash
# A blind, doubly annotated label audit of the dev sets (issue 49): how many rows contradict their own query, and
# the default's R@1 / RR per consensus label (scripts/negation/negation_label_audit.py).
#   1. prepare: every dev row as {id, query, X, Y}, the wanted and the excluded passage in an order set by a hash of
#      the id, in chunks, with the rubric -> $AUDIT/*.jsonl, RUBRIC.md (run with PREPARE=1);
#   2. two annotators judge every chunk blind -> $AUDIT/<excluir|boolq>-<i>-<a|b>.csv (by hand; the committed audit
#      was made by two independent model sessions per chunk, see runs/negation/README.md);
#   3. merge -> runs/negation/label_audit.csv (when $AUDIT holds the judgements);
#   4. report against the per-row outcomes of run_negation_estimate.sh (runs/negation/nested.csv)
#      -> runs/negation/label_audit_figures.{md,csv}.
# Usage: scripts/run_negation_label_audit.sh   (seconds: steps 3-4 from the committed audit)
# Environment: DATA (default ../shared/data), AUDIT (a folder for steps 1-3; unset: step 4 only), PREPARE.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
sets=(--excluir "$data/excluir" --boolq "$data/boolquestions_not")
audit=python\ -m\ scripts.negation.negation_label_audit
if [ -n "${AUDIT:-}" ] && [ -n "${PREPARE:-}" ]; then
  $audit prepare "${sets[@]}" --output "$AUDIT"
  echo "annotate $AUDIT/*.jsonl (RUBRIC.md) into $AUDIT/<chunk>-a.csv and -b.csv, then rerun without PREPARE" >&2
  exit 0
fi
if [ -n "${AUDIT:-}" ]; then
  $audit merge "${sets[@]}" --annotations "$AUDIT" --output runs/negation/label_audit.csv --overwrite
fi
$audit report --audit runs/negation/label_audit.csv --outcomes runs/negation/nested.csv \
  --output runs/negation/label_audit_figures --overwrite
echo "done: runs/negation/label_audit_figures.md" >&2
