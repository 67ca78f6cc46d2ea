#!/usr/bin/env bash
# Peak memory against collection size (issue 30): index validation + build, positional indexing, fuse --fit and
# dense search, each in a fresh process (JVM included), on synthetic collections of SIZES documents.
# Usage: scripts/run_memory.sh [SIZE ...]   (default: 20000 100000)
# Writes: work/memory/docsSIZE/ (git-ignored, reused when present) and runs/memory/results.{md,csv}.
# A few minutes on 2 cores: run it with nice. The JVM gets a fixed heap (LSR_JVM_HEAP, default 1g here): a JVM
# grows its heap lazily up to -Xmx with garbage it has not needed to collect, so peak RSS under the default 4g
# says little about what a stage keeps; a stage that holds the collection fails with a fixed heap as it grows.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(20000 100000)
export LSR_JVM_HEAP=${LSR_JVM_HEAP:-1g}
python -m scripts.bench.memory --sizes "${sizes[@]}" --work work/memory --out runs/memory
