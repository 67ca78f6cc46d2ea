#!/usr/bin/env bash
# Long documents with learned sparse retrieval (issue 5; Nguyen et al., SIGIR'23): sweep the number of segments
# (1..5, 8 and "all") for first, rep-max, rep-sum, rep-mean, score-max, ExactSDM and SoftSDM, with Anserini BM25,
# BM25+RM3 and BM25+SDM on the same documents, then benchmark ExactSDM latency and the positional field's size.
#
# Usage: scripts/run_longdocs.sh [COLLECTION] [extra `python -m scripts.longdocs.experiment` options]
#   COLLECTION: fire2017 (default; ../shared/data/fire2017), a FIRE-style folder, or robust04 / msmarco-document
#               through ir_datasets where their data is available locally.
# Writes runs/longdocs/<name>-results.{md,csv}, <name>-lambdas.csv, <name>-ndcg_cut_10.png, <name>-ablation.md and
# <name>-bench.json, where <name> is the collection, or e.g. fire2017-first16 with MAX_SEGMENTS=16.
# Everything heavy (segments, encoded segments, indexes, features, 1000-hit runs) is cached under work/<name>
# and reused; an interrupted encoding resumes where it stopped, and raising the cap reuses a smaller cap's encoding.
# On 2 CPU cores the whole FIRE 2017 run takes about 1.5 hours, half of it encoding its 51,755 segments.
# Environment: MAX_SEGMENTS (cap "all" at the first N segments; default none: every segment), THREADS (default 2),
#              DATA (default ../shared/data), BENCH_QUERIES (default 20).
set -euo pipefail
collection=${1:-fire2017}
shift || true
here=$(cd "$(dirname "$0")/.." && pwd)
data=${DATA:-$here/../shared/data}
threads=${THREADS:-2}
cap=${MAX_SEGMENTS:-none}
name=$(basename "$collection")
work=$here/work/$name
out=$here/runs/longdocs
mkdir -p "$work" "$out"
cd "$here"

python -m scripts.longdocs.experiment --collection "$collection" --data "$data" --work "$work" \
  --output "$out" --max-segments "$cap" --threads "$threads" "$@"

suffix=$([ "$cap" = none ] && echo all || echo "first$cap")
prefix=$([ "$cap" = none ] && echo "$name" || echo "$name-first$cap")
python -m scripts.bench.longdocs --index "$work/index-segments-$suffix" --collection "$collection" \
  --data "$data" --queries "${BENCH_QUERIES:-20}" --output "$out/$prefix-bench.json"
