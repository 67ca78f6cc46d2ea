#!/usr/bin/env bash
# fp32 against bf16 document encoding (issue 28): each collection encoded both ways with `lsr-lucene encode
# --dtype fp32|bf16` (splade-tiny, 256 tokens), indexed, searched (queries are fp32 either way) and evaluated;
# the table gives the share of documents whose quantised vectors are identical, the share of quantised term
# weights that differ (over the postings either encoding has), nDCG@10 both ways, and the encoding seconds (one
# run each, timed by `encode` itself: indicative only on a shared machine), with the CPU capability.
# Usage: scripts/run_precision.sh [COLLECTION ...]   (default: cranfield npl scifact, folders of ../shared/data)
# Environment: MODEL (default splade-tiny), THREADS (default 2), DATA (default ../shared/data).
# Writes: work/precision/COLLECTION/ (vectors, indexes, runs; git-ignored, reused when present) and
#   runs/precision/results.{md,csv}. CPU heavy (about 15 minutes on 2 cores): run it with nice.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
model=${MODEL:-splade-tiny}
threads=${THREADS:-2}
collections=("$@")
[ ${#collections[@]} -gt 0 ] || collections=(cranfield npl scifact)
mkdir -p runs/precision

. "$here/scripts/collection_inputs.sh"
for c in "${collections[@]}"; do
  collection_inputs "$data/$c"   # sets $topics and $qrels
  work=work/precision/$c
  mkdir -p "$work"
  for dtype in fp32 bf16; do
    [ -f "$work/vectors-$dtype.metadata.json" ] ||
      lsr-lucene encode --corpus "$data/$c/corpus.jsonl" --output "$work/vectors-$dtype" --model "$model" \
        --max-length 256 --threads "$threads" --dtype "$dtype"
    [ -d "$work/index-$dtype" ] ||
      lsr-lucene index --input "$work/vectors-$dtype" --index "$work/index-$dtype" --threads "$threads"
    lsr-lucene search --index "$work/index-$dtype" --topics "$topics" --output "$work/$dtype.run" --hits 1000 \
      --threads "$threads" --run-tag "$dtype" --overwrite
  done
  lsr-lucene eval --qrels "$qrels" --run "fp32=$work/fp32.run" --run "bf16=$work/bf16.run" \
    --measures ndcg_cut_10 --output "$work/eval" --overwrite
done

python - "${collections[@]}" <<'EOF'
"""Compare each collection's fp32 and bf16 vectors and write runs/precision/results.{md,csv}."""
import sys
from pathlib import Path

import pandas as pd

from lsr_lucene.eval.trec import write_table
from lsr_lucene.io.vectors import read_metadata, read_vectors

rows = []
for c in sys.argv[1:]:
    work = Path("work/precision") / c
    fp32 = dict(read_vectors(work / "vectors-fp32"))
    bf16 = dict(read_vectors(work / "vectors-bf16"))
    assert fp32.keys() == bf16.keys(), c
    same = sum(fp32[d] == bf16[d] for d in fp32)
    postings = differ = 0
    for d, a in fp32.items():
        b = bf16[d]
        for term in a.keys() | b.keys():
            postings += 1
            differ += a.get(term) != b.get(term)
    meta = {k: read_metadata(work / f"vectors-{k}") for k in ("fp32", "bf16")}
    caps = {m["cpu_capability"] for m in meta.values()}
    ndcg = pd.read_csv(work / "eval.csv").set_index("run").iloc[:, 0]
    rows.append({"collection": c, "documents": len(fp32), "CPU": "/".join(sorted(caps)),
                 "identical vectors": f"{same / len(fp32):.1%}",
                 "weights that differ": f"{differ / max(postings, 1):.1%} of {postings:,}",
                 "nDCG@10 fp32": round(float(ndcg["fp32"]), 4), "nDCG@10 bf16": round(float(ndcg["bf16"]), 4),
                 "encoding s fp32 / bf16": " / ".join(f"{meta[k].get('seconds_this_run', float('nan')):.1f}"
                                                      for k in ("fp32", "bf16"))})
table = pd.DataFrame(rows).set_index("collection")
_, md = write_table(table, "runs/precision/results", overwrite=True,
                    preamble="fp32 vs bf16 document encoding (scripts/run_precision.sh; splade-tiny, 256 tokens, "
                             "queries fp32 both ways)\n\n")
print(md.read_text())
EOF
