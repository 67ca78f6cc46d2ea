#!/usr/bin/env bash
# Scale benchmark (issue 15): synthetic collections of 10k, 100k and 1M documents made from the splade-tiny vectors
# of the shared collections, indexed and searched by ours, Pyserini, Anserini, PISA, BMP, Seismic and scipy brute
# force in one run (scripts/bench/scale.py). On 2 cores (extrapolated from a 10k trial): about 5-10 minutes to
# encode the pool once (cached), about 5 minutes at 10k, 15-20 at 100k and 1.5-3 hours at 1M, mostly index builds
# (ours and Anserini's IndexCollection, Seismic). Needs about 30 GB of disk under WORK at 1M and about 10 GB of RAM.
# Usage: scripts/run_scale.sh [DOCS]        (DOCS: comma list, default 10000,100000,1000000)
# Environment: DATA (default ../shared/data), WORK (default work/scale), THREADS (default: all cores),
#   QUERIES (default 200), SEED (default 0)
# Writes: runs/scale/{results,index,collection,skipped}.csv, results.md, collection-N.png, latency_vs_docs.png
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-../shared/data}
work=${WORK:-work/scale}
for c in scifact npl cisi cacm med cranfield excluir; do
  [ -f "$data/$c/corpus.jsonl" ] || { echo "error: $data/$c/corpus.jsonl not found" >&2; exit 2; }
done
mkdir -p runs/scale "$work"
python -m scripts.bench.scale --docs "${1:-10000,100000,1000000}" --output runs/scale --work "$work" \
  --data "$data" --threads "${THREADS:-$(nproc)}" --queries "${QUERIES:-200}" --seed "${SEED:-0}" \
  2>&1 | tee "$work/run-$(date +%Y%m%d-%H%M%S).log"
