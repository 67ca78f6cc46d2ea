#!/usr/bin/env bash
# Why signed splade-tiny stays at random level on NevIR: how well a query's own features (splade-tiny's mean
# hidden state, its sparse vector, its words) tell whether it wants its row's negated document, by a
# cross-validated linear probe on NevIR train (scripts/studies/nevir_probe.py). About a minute on 2 cores.
# Usage: scripts/nevir_probe.sh        Environment: DATA (default ../shared/data), MODEL (default splade-tiny)
# Writes: runs/nevir/polarity.{md,csv}
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-../shared/data}
[ -f "$data/nevir/train.jsonl" ] || { echo "error: $data/nevir/train.jsonl not found" >&2; exit 2; }
python -m scripts.studies.nevir_probe --nevir "$data/nevir/train.jsonl" --model "${MODEL:-splade-tiny}" \
  --output runs/nevir/polarity --overwrite
