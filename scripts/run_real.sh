#!/usr/bin/env bash
# Real-text benchmark (issue 29): wiki2015 (666,157 Wikipedia passages) in a seeded random order, encoded once with
# splade-tiny (fp32, resumable shards under WORK/vectors; the first N encoded passages are the N-passage sample),
# then every engine (ours, Pyserini, Anserini, PISA MaxScore and BMW, BMP, Seismic, scipy brute force) in natural
# and BP orders at each size, 500 sampled NQ test questions, k=10 and k=1000 (scripts/bench/real.py); then our
# approximate search (block-max heap factors) beside Seismic's query settings, every setting timed query by query in
# turn, recall against our exact run (scripts/bench/real_approx.py).
# Encoding: about 100 passages/s in fp32 on 2 idle AVX512 cores (~110 minutes for all; `--dtype int8` about 170/s),
# minutes on a CUDA device (the encoder uses CUDA when present). Interrupt it at any time: the same command resumes after the last complete shard.
# Usage: scripts/run_real.sh [DOCS]        (DOCS: comma list, default 100000,300000,666157)
# Environment: DATA (default ../shared/data), WORK (default work/wiki2015), THREADS (default: all cores),
#   QUERIES (default 500), SEED (default 0), ENGINES, ORDERS (default natural,bp), NICE (default 0: e.g. 19 on a
#   shared machine, where timings are rough), ENCODE_ONLY=1 (only encode, e.g. on the device machine),
#   REUSE=1 (search the
#   indexes an earlier run built under WORK instead of building them again), INTERLEAVE=1 (the engines of an order
#   timed in one process, query by query in turn: per-query rows only, ratios that hold on a loaded machine),
#   OUTPUT (default runs/real), SEISMIC_POSTINGS (default 3500: comma list, one Seismic index on the approximate
#   curve per value)
# Writes: runs/real/{results,index,collection,skipped,approx}.csv, results.md, approx.md, latency_vs_docs.png,
#   approx_curve.png
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-../shared/data}
work=${WORK:-work/wiki2015}
corpus=$data/wiki2015/passages.jsonl.xz
topics=$data/wiki2015/topics.nq-test.tsv
for f in "$corpus" "$topics"; do
  [ -f "$f" ] || { echo "error: $f not found" >&2; exit 2; }
done
out=${OUTPUT:-runs/real}
mkdir -p "$out" "$work"
nice=(nice -n "${NICE:-0}")
seed=${SEED:-0}
# 1. the corpus in a seeded random order (once), then all of it encoded (resumable: re-run to continue)
[ -f "$work/passages.seed$seed.jsonl" ] || "${nice[@]}" python -m scripts.bench.real_corpus "$corpus" \
  "$work/passages.seed$seed.jsonl" --seed "$seed"
[ -f "$work/vectors.metadata.json" ] || "${nice[@]}" python -m lsr_lucene.encode \
  --corpus "$work/passages.seed$seed.jsonl" --output "$work/vectors" --encoder splade-tiny --max-length 256 \
  --batch-size 16 --dtype fp32 --shard-size 10000 2>&1 | tee -a "$work/encode.log"
[ "${ENCODE_ONLY:-0}" = 1 ] && exit 0
# 2. every engine at each size (the topics are encoded once under WORK)
"${nice[@]}" python -m scripts.bench.real --corpus "$corpus" --topics "$topics" --vectors "$work/vectors" \
  --docs "${1:-100000,300000,666157}" --output "$out" --work "$work" --seed "$seed" \
  --threads "${THREADS:-$(nproc)}" --queries "${QUERIES:-500}" --orders "${ORDERS:-natural,bp}" \
  --seismic-postings "${SEISMIC_POSTINGS:-3500}" ${ENGINES:+--engines "$ENGINES"} ${REUSE:+--reuse-indexes} ${INTERLEAVE:+--interleave} 2>&1 \
  | tee "$work/run-$(date +%Y%m%d-%H%M%S).log"
