#!/usr/bin/env bash
# Default `lsr-lucene index` + `search` on a wiki2015 sample (issue 51): the first N passages of run_real.sh's seeded
# order (its resumable encoding, complete shards only, also while it still runs), then
#  1. `lsr-lucene index` with its defaults (the dense-impacts sidecar, share auto) and `lsr-lucene search` of the
#     sampled NQ questions, as a user runs them (the index line says what the sidecar cost);
#  2. the real-text benchmark on the same passages, engines `ours` (the index as `index` builds it by default) and
#     `ours-postings` (the same index, sidecar unused: exact search on postings alone) timed query by query in turn in
#     one process (--interleave): the ratio holds on a loaded machine; every checked top k equals brute force.
# Usage: scripts/run_wiki_default.sh N        (e.g. 40000; N at most the passages encoded so far)
# Environment: DATA (default ../shared/data), WORK (default work/wiki2015, as run_real.sh), OUTPUT (default
#   runs/real/default-N), QUERIES (default 500), THREADS (default 1), NICE (default 0)
# Writes: OUTPUT/{results,index,collection,skipped}.csv, results.md, ratio.md, cli.txt (the two commands' output and times)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
n=${1:?usage: scripts/run_wiki_default.sh N}
data=${DATA:-../shared/data}
work=${WORK:-work/wiki2015}
out=${OUTPUT:-runs/real/default-$((n / 1000))k}
nice=(nice -n "${NICE:-0}")
topics=$data/wiki2015/topics.nq-test.tsv
[ -f "$topics" ] || { echo "error: $topics not found" >&2; exit 2; }
mkdir -p "$out"
# the first N passages as a vectors folder of links to the encoded shards (the benchmark reads the same ones)
sample=$work/sample-$n
"${nice[@]}" python - "$work/vectors" "$sample" "$n" <<'EOF'
import sys
from pathlib import Path
from scripts.bench.parts import first_parts, link_parts
from lsr_lucene.cli import run_main


def main(_) -> int:
    link_parts(first_parts(sys.argv[1], int(sys.argv[3])), Path(sys.argv[2]))
    return 0


sys.exit(run_main(main))
EOF
# 1. as a user runs it: default index, then search (the benchmark's encoded topics: the first QUERIES of a seeded
#    sample are written as a query vectors file)
queries=$work/queries.topics.nq-test.splade-tiny.jsonl
[ -f "$queries" ] || "${nice[@]}" python -m lsr_lucene.encode --topics "$topics" --output "$queries" --encoder splade-tiny
sampled=$work/queries.sample-${QUERIES:-500}.jsonl
python - "$queries" "$sampled" "${QUERIES:-500}" <<'EOF'
import random, sys
lines = open(sys.argv[1]).read().splitlines()
random.Random(0).shuffle(lines)
open(sys.argv[2], "w").write("\n".join(lines[:int(sys.argv[3])]) + "\n")
EOF
index=$work/default-$n/index
{
  capability=$(python -c 'from scripts.bench.scale_report import cpu_capability; print(cpu_capability())')
  echo "# $(date -u +%FT%TZ) CPU capability $capability, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "\$ lsr-lucene index --input $sample --index $index --threads ${THREADS:-1} --overwrite"
  /usr/bin/time -f "(%e s wall, %M KB peak)" "${nice[@]}" lsr-lucene index --input "$sample" --index "$index" \
    --threads "${THREADS:-1}" --overwrite 2>&1
  echo "\$ lsr-lucene search --index $index --query-vectors $sampled --output $work/default-$n/run.txt --threads ${THREADS:-1} --overwrite"
  /usr/bin/time -f "(%e s wall, %M KB peak)" "${nice[@]}" lsr-lucene search --index "$index" \
    --query-vectors "$sampled" --output "$work/default-$n/run.txt" --threads "${THREADS:-1}" --overwrite 2>&1
} | tee "$out/cli.txt"
# 2. per-query latency with and without the sidecar, interleaved, on the same passages
"${nice[@]}" python -m scripts.bench.real --vectors "$work/vectors" --docs "$n" --output "$out" \
  --work "$work/default-$n/bench" --seed 0 --threads "${THREADS:-1}" --queries "${QUERIES:-500}" --orders natural \
  --engines ours,ours-postings --interleave --no-approx-curve --query-vectors "$queries" 2>&1 | tee "$work/default-$n/bench.log"
# 3. the ratios of that one run (wall and the calling thread's CPU time), and the sidecar's share of build and size
python - "$out" <<'EOF2'
import sys
from pathlib import Path
import pandas as pd
out = Path(sys.argv[1])
res, idx = pd.read_csv(out / "results.csv"), pd.read_csv(out / "index.csv")
rows = ["| k | ours (sidecar) mean / p50 ms | ours-postings mean / p50 ms | wall ratio (mean) | thread CPU ratio (mean; median) |",
        "|---:|:---|:---|---:|---:|"]
for k in sorted(res.k.unique()):
    a = res[(res.engine == "ours") & (res.k == k)].iloc[0]
    b = res[(res.engine == "ours-postings") & (res.k == k)].iloc[0]
    rows.append(f"| {k} | {a.mean_ms:.2f} / {a.p50_ms:.2f} | {b.mean_ms:.2f} / {b.p50_ms:.2f} | "
                f"**{a.mean_ms / b.mean_ms:.2f}** | {a.cpu_mean_ms / b.cpu_mean_ms:.2f}; {a.cpu_p50_ms / b.cpu_p50_ms:.2f} |")
ours, dense = idx[idx.engine == "ours"].iloc[0], idx[idx.engine == "ours-dense"].iloc[0]
rows += ["", f"Sidecar (auto): {dense.note.split(': ', 1)[1]}; built in {dense.build_s:.1f} s after the index's "
         f"{ours.build_s:.1f} s ({dense.build_s / ours.build_s:.1%} of the build), {dense.size_bytes / 2**20:.1f} MiB = "
         f"{dense.size_bytes / ours.size_bytes:.2f}x the index's {ours.size_bytes / 2**20:.1f} MiB. "
         f"CPU capability {a.cpu_capability}; load {a.load:.1f}."]
(out / "ratio.md").write_text("\n".join(rows) + "\n")
print("\n".join(rows))
EOF2
