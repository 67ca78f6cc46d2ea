#!/usr/bin/env bash
# Distributed search on real text against one index (issue 52, items 1-2): the first N encoded wiki2015 passages
# (whole part-*.jsonl files of VECTORS, in the seeded order of scripts/run_real.sh; linked, not copied) indexed as
# one index and as 2 and 4 shards of consecutive parts (each with the dense-impacts sidecar `auto`, as `lsr-lucene
# index` builds it), then all NQ test questions at k=1000 and k=10: `lsr-lucene search` on the one index against
# `lsr-lucene distributed search` on a local Ray instance with the same cores (started by the command itself, and
# joined already running), whole-command and search-alone wall times, every run checked byte-identical, the
# distributed breakdown, the machine named (scripts.bench.distributed_real).
# Usage: scripts/run_distributed_real.sh [N]   (N: passages, a multiple of the part size; default all)
# Environment: VECTORS (default work/wiki2015/vectors), QUERIES (encoded NQ test questions, JSONL {id, vector};
#   default work/wiki2015/queries.nq-test.jsonl), SHARDS (default 2,4), HITS (default 1000,10), ROUNDS (default 1),
#   WORK (default work/distributed/wiki2015; indexes and runs in WORK/N), OUTPUT (default runs/distributed),
#   REUSE (1: keep the indexes already built under WORK/N, for a rerun; default 1), REORDER (bp: BP order
#   everywhere), THREADS (cores given to each command; default all), SETUPS (running, own or running,own: the
#   distributed commands join a running Ray, start their own, or both; default running,own), TOPICS (the
#   questions' texts, e.g. ../shared/data/wiki2015/topics.nq-test.tsv: every command encodes them, a user's path)
# Writes: OUTPUT/wiki2015-N.md and OUTPUT/wiki2015-N.csv (wiki2015-N-bp.* with REORDER=bp, -topics with TOPICS)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
VECTORS=${VECTORS:-work/wiki2015/vectors}
QUERIES=${QUERIES:-work/wiki2015/queries.nq-test.jsonl}
for f in "$VECTORS" "$QUERIES"; do
  [ -e "$f" ] || { echo "error: $f not found (see the usage at the top of $0)" >&2; exit 2; }
done
args=(--vectors "$VECTORS" --queries "$QUERIES" --docs "${1:-0}" --shards "${SHARDS:-2,4}" --hits "${HITS:-1000,10}"
      --rounds "${ROUNDS:-1}" --work "${WORK:-work/distributed/wiki2015}" --output "${OUTPUT:-runs/distributed}"
      --threads "${THREADS:-$(nproc)}" --setups "${SETUPS:-running,own}")
[ "${REUSE:-1}" = 1 ] && args+=(--reuse)
[ -n "${REORDER:-}" ] && args+=(--reorder "$REORDER")
[ -n "${TOPICS:-}" ] && args+=(--topics "$TOPICS")
python -m scripts.bench.distributed_real "${args[@]}"
