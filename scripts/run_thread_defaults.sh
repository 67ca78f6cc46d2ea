#!/usr/bin/env bash
# Thread defaults (issue 38): each verb timed as a user runs it (a fresh process: model load and JVM start
# included) at --threads 1, 2 and its default (no --threads), on one machine in one run; rounds interleave the
# settings so that load from other processes falls on all of them alike, and the fastest round counts.
# Usage: scripts/run_thread_defaults.sh
#   Writes runs/threads/times.csv (every round) and runs/threads/results.md (fastest round per cell, ratios to the
#   best setting); inputs are built once under work/threads.
# Environment: DATA (default ../shared/data), DOCS (SciFact documents, default 1000), QUERIES (SciFact train
#   topics, default 300), ENCODE_DOCS (documents encode is timed on, default 64), ROUNDS (default 2),
#   INPUTS_ONLY=1 (build work/threads and stop: scripts/prepare_device_threads.sh carries them to a 16-core machine).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
data=${DATA:-$here/../shared/data}/scifact
docs=${DOCS:-1000}; queries=${QUERIES:-300}; rounds=${ROUNDS:-2}; encode_docs=${ENCODE_DOCS:-64}
work=$here/work/threads; out=$here/runs/threads
lsr() { python -m lsr_lucene.cli "$@"; }
mkdir -p "$work" "$out"
cd "$here"

# ---- inputs (untimed, once)
[ -f "$work/corpus.jsonl" ] || head -n "$docs" "$data/corpus.jsonl" > "$work/corpus.jsonl"
[ -f "$work/topics.tsv" ] || head -n "$queries" "$data/topics.train.tsv" > "$work/topics.tsv"
[ -d "$work/vectors" ] || lsr encode --corpus "$work/corpus.jsonl" --output "$work/vectors" --encoder splade-tiny
[ -d "$work/index" ] || lsr index --input "$work/vectors" --index "$work/index"
[ -d "$work/bm25" ] || lsr bm25 --corpus "$work/corpus.jsonl" --index "$work/bm25"
[ -d "$work/dense" ] || lsr dense encode --corpus "$work/corpus.jsonl" --output "$work/dense"
[ -f "$work/segments.jsonl" ] || lsr longdocs segment --corpus "$work/corpus.jsonl" --output "$work/segments.jsonl" \
  --max-tokens 128
[ -d "$work/encoded" ] || lsr longdocs encode --segments "$work/segments.jsonl" --output "$work/encoded"
[ -d "$work/segindex" ] || lsr longdocs index --encoded "$work/encoded" --index "$work/segindex"
head -n "$encode_docs" "$work/corpus.jsonl" > "$work/encode-corpus.jsonl"  # encode is timed on fewer documents
[ "${INPUTS_ONLY:-0}" = 1 ] && exit 0

# ---- one verb at one setting: the seconds it takes, appended to times.csv
. "$here/scripts/thread_verbs.sh"  # verb_cmd VERB OUTPUT
csv=$out/times.csv
echo "verb,threads,resolved_threads,round,seconds,load_avg_1min,cpus,cpu_capability" > "$csv"
capability=$(python -c "import torch; print(torch.backends.cpu.get_cpu_capability())")
default_threads=$(python -c "from lsr_lucene.cli_options import DEFAULT_THREADS; print(DEFAULT_THREADS)")
for round in $(seq 1 "$rounds"); do
  for verb in encode search dense-search bm25 longdocs-search; do
    for setting in 1 2 default; do
      target=$work/out-$verb-$setting
      rm -rf "$target"
      row=$(time_verb python "$verb" "$setting" "$round" "$target" "$work/stderr.log")
      echo "$row" | tee -a "$csv"
    done
  done
done

# ---- the table: fastest round per cell, each setting / the verb's fastest setting; the 16-core rows
# (scripts/merge_device_threads.sh) stay beside these when their CSV is there
device=(); [ -f "$out/times-16cores.csv" ] && device=("$out/times-16cores.csv=16-core device host")
python -m scripts.bench.thread_table "$out/results.md" "$csv=2-core VM" "${device[@]}"
[ "${#device[@]}" -eq 0 ] || echo "16-core dense-search: queries encoded by all-MiniLM-L6-v2's shapes with random weights (the weights do not fit \
a device call): a speed figure only (runs/threads/README.md)." >> "$out/results.md"
