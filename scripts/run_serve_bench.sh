#!/usr/bin/env bash
# Server benchmark (issue 39): queries per second and p50/p99 latency of `lsr-lucene serve` for 1, 4, 16 and 64
# concurrent clients, beside the same queries searched in process (ImpactSearcher.search, and the server's own search
# path on the same worker threads without HTTP), k=10, on the demo collection and, when its index is there, SciFact
# (splade-tiny, encoded once and cached under WORK/scifact), and wiki2015 at 100k passages (the first 100,000 of the
# seeded random order that scripts/run_real.sh uses, splade-tiny fp32, max length 256, cached under WORK/wiki2015;
# encoding takes about 10 minutes on 2 idle cores) with NQ test questions.
# Usage: scripts/run_serve_bench.sh
# Environment: WORK (default work), THREADS (server search threads, default 2), ROUNDS (interleaved, default 10),
#   REQUESTS (per client count and mode, default
#   1000), SCIFACT=0 (skip SciFact), WIKI=0 (skip wiki2015 100k), NICE (default 0)
# Writes: runs/serve/results.csv, runs/serve/results.md
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
work=${WORK:-work}
threads=${THREADS:-2}
requests=${REQUESTS:-1000}
rounds=${ROUNDS:-10}
nice=(nice -n "${NICE:-0}")
data=${DATA:-../shared/data}
demo=lsr_lucene/data/demo
bench=("${nice[@]}" python -m scripts.bench.serve --threads "$threads" --requests "$requests" --rounds "$rounds")

# demo collection: `lsr-lucene demo` builds work/demo/index-splade-tiny
if [ ! -d "$work/demo/index-splade-tiny" ]; then
  "${nice[@]}" python -m lsr_lucene.demo --output "$work/demo"
fi
"${bench[@]}" --index "$work/demo/index-splade-tiny" --topics "$demo/topics.tsv" --collection demo

# SciFact (5,183 abstracts, 809 train queries), splade-tiny, max length 256
if [ "${SCIFACT:-1}" != 0 ] && [ -f "$data/scifact/corpus.jsonl" ]; then
  if [ ! -d "$work/scifact/index-splade-tiny" ]; then
    "${nice[@]}" python -m lsr_lucene.encode --corpus "$data/scifact/corpus.jsonl" \
      --output "$work/scifact/vectors-splade-tiny" --max-length 256
    "${nice[@]}" python -m lsr_lucene.index --input "$work/scifact/vectors-splade-tiny" \
      --index "$work/scifact/index-splade-tiny"
  fi
  "${bench[@]}" --index "$work/scifact/index-splade-tiny" --topics "$data/scifact/topics.train.tsv" \
    --collection scifact
fi

# wiki2015, the first 100,000 passages of the seeded random order (as scripts/run_real.sh), NQ test questions
corpus=$data/wiki2015/passages.jsonl.xz
if [ "${WIKI:-1}" != 0 ] && [ -f "$corpus" ]; then
  wiki=$work/wiki2015
  mkdir -p "$wiki"
  if [ ! -d "$wiki/index-100k" ]; then
    [ -f "$wiki/passages.seed0.jsonl" ] || "${nice[@]}" python -m scripts.bench.real_corpus "$corpus" \
      "$wiki/passages.seed0.jsonl" --seed 0
    [ -f "$wiki/passages.100k.jsonl" ] || head -n 100000 "$wiki/passages.seed0.jsonl" > "$wiki/passages.100k.jsonl"
    [ -f "$wiki/vectors-100k.metadata.json" ] || "${nice[@]}" python -m lsr_lucene.encode \
      --corpus "$wiki/passages.100k.jsonl" --output "$wiki/vectors-100k" --encoder splade-tiny --max-length 256 \
      --batch-size 16 --dtype fp32 --shard-size 10000
    "${nice[@]}" python -m lsr_lucene.index --input "$wiki/vectors-100k" --index "$wiki/index-100k"
  fi
  "${bench[@]}" --index "$wiki/index-100k" --topics "$data/wiki2015/topics.nq-test.tsv" --collection wiki2015-100k
fi
