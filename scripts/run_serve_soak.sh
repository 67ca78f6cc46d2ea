#!/usr/bin/env bash
# Soak benchmark of `lsr-lucene serve` (issue 52): the wiki2015 100k index with its dense-impacts sidecar (the
# default `lsr-lucene index` of the first 100,000 passages of the seeded random order that scripts/run_real.sh
# encodes into WORK/wiki2015/vectors, finished or still being written), 64 concurrent keep-alive clients on loopback
# for 10 minutes, text, vector and compose requests (the first 300 NQ test questions; their negations) plus 1 %
# malformed ones; every answer checked against the CLI's run of the same query, the server's RSS sampled.
# Exits 1 when a condition fails (a wrong answer, a 5xx, a malformed request not refused 4xx, RSS growth >= 5 %).
# Usage: scripts/run_serve_soak.sh
# Environment: WORK (default work), VECTORS (default WORK/wiki2015/vectors), DOCS (default 100000), INDEX (default
#   WORK/wiki2015/index-100k-soak, built when missing), CLIENTS (64), DURATION (seconds, 600), QUERIES (300),
#   THREADS (server search threads, default the cores), NICE (default 0), OUT (default runs/serve)
# Writes: OUT/soak.md, soak.csv (per 10 s window), soak_rss.csv (RSS samples), soak.png
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
work=${WORK:-work}
data=${DATA:-../shared/data}
docs=${DOCS:-100000}
vectors=${VECTORS:-$work/wiki2015/vectors}
index=${INDEX:-$work/wiki2015/index-$((docs / 1000))k-soak}
threads=()
[ -n "${THREADS:-}" ] && threads=(--threads "$THREADS")
exec nice -n "${NICE:-0}" python -m scripts.bench.soak --index "$index" --vectors "$vectors" --docs "$docs" \
  --topics "$data/wiki2015/topics.nq-test.tsv" --queries "${QUERIES:-300}" --clients "${CLIENTS:-64}" \
  --duration "${DURATION:-600}" --collection "wiki2015, first $docs passages" --work "$work/soak" \
  --output-dir "${OUT:-runs/serve}" "${threads[@]}"
