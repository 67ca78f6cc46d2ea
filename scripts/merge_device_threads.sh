#!/usr/bin/env bash
# Merge the 16-core measurement (scripts/device_thread_defaults.sh java and dense, run on a lent machine) into
# runs/threads/: times-16cores.csv (both parts' rounds) and results.md (the 2-core rows and the 16-core rows in one
# table, written by scripts.bench.thread_table as scripts/run_thread_defaults.sh does).
# Usage: [LABEL=...] scripts/merge_device_threads.sh DIR...   (folders holding times-16cores-java.csv / times-16cores-dense.csv,
#   e.g. the files_at folders of the two device calls)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/runs/threads
csvs=()
for dir in "$@"; do
  for f in "$dir"/times-16cores-*.csv; do [ -f "$f" ] && csvs+=("$f"); done
done
[ "${#csvs[@]}" -gt 0 ] || { echo "error: no times-16cores-*.csv in $*" >&2; exit 2; }
{ head -n 1 "${csvs[0]}"; for f in "${csvs[@]}"; do tail -n +2 "$f"; done; } > "$out/times-16cores.csv.tmp"
mv "$out/times-16cores.csv.tmp" "$out/times-16cores.csv"
cd "$here"
python -m scripts.bench.thread_table "$out/results.md" "$out/times.csv=2-core VM" \
  "$out/times-16cores.csv=${LABEL:-16-core device host}"
echo "16-core dense-search: queries encoded by all-MiniLM-L6-v2's shapes with random weights (the weights do not fit \
a device call): a speed figure only (runs/threads/README.md)." >> "$out/results.md"
