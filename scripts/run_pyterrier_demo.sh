#!/usr/bin/env bash
# PyTerrier experiment on the demo collection (issue 39): BM25 (pyterrier_pisa, no Java), our retriever, BM25 % 100
# re-ranked by our exact scorer, and the negation composer in one pt.Experiment, beside trec_eval's nDCG@10 of the
# `lsr-lucene search` run (scripts/pyterrier/pyterrier_demo.py).
# Usage: scripts/run_pyterrier_demo.sh [--overwrite | OUTPUT.md]
#   prints the table; --overwrite replaces the tracked runs/serve/pyterrier.md with it, OUTPUT.md writes it there
#   (refused when OUTPUT.md exists). Environment: WORK (default work)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
work=${WORK:-work}
out=()
case "${1:-}" in
  "") ;;
  --overwrite) out=(--output runs/serve/pyterrier.md --overwrite) ;;
  *) out=(--output "$1") ;;
esac
[ -d "$work/demo/index-splade-tiny" ] || python -m lsr_lucene.demo --output "$work/demo"
python -m scripts.pyterrier.pyterrier_demo --index "$work/demo/index-splade-tiny" --pisa "$work/demo/pisa" \
  "${out[@]}"
