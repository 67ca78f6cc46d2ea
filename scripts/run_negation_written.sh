#!/usr/bin/env bash
# Written exclusion requests (issue 49): the default on freshly written questions over the benchmarks' unused passage
# pairs (runs/negation/written_pairs.jsonl, how they were written: runs/negation/written_pairs.md), for this code and
# for earlier commits (CODES: the code issue 49 measured on the held-out test queries, the code before the written
# sets, the parser after the first set), each scored by this checkout's scripts/negation/negation_written.py
# -> runs/negation/written.{md,csv} (R@1 and RR with 95% bootstrap intervals per code, set and benchmark).
# Usage: nice scripts/run_negation_written.sh   (about 1 minute per code once the two corpora are encoded)
# Environment: DATA (default ../shared/data), CODES (default "240ec7a 5c0bd99 d517a4e").
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
out=runs/negation
mkdir -p work/negation_written
args=(--pairs "$here/$out/written_pairs.jsonl" --excluir "$data/excluir" --boolq "$data/boolquestions_not"
      --work "$here/work")
python -m scripts.negation.negation_written score "${args[@]}" --output work/negation_written/HEAD.csv --overwrite
scored=()
for code in ${CODES:-240ec7a 5c0bd99 d517a4e}; do
  tree=work/negation_written/$code
  rm -rf "$tree" && mkdir -p "$tree"
  if git cat-file -e "$code:scripts/negation" 2>/dev/null; then  # the studies beside the package (issue 66 on)
    git archive "$code" lsr_lucene scripts | tar -x -C "$tree"
    cp scripts/negation/negation_written.py "$tree/scripts/negation/"
    module=scripts.negation.negation_written
  else  # before issue 66 the studies were lsr_lucene.experiments: this checkout's scorer joins them there
    git archive "$code" lsr_lucene | tar -x -C "$tree"
    sed 's/\bscripts\.negation\b/lsr_lucene.experiments/g' scripts/negation/negation_written.py \
      > "$tree/lsr_lucene/experiments/negation_written.py"
    module=lsr_lucene.experiments.negation_written
  fi
  (cd "$tree" && PYTHONPATH=. python -m "$module" score "${args[@]}" \
    --output "$here/work/negation_written/$code.csv" --overwrite)
  scored+=(--scored "$code=work/negation_written/$code.csv")
done
python -m scripts.negation.negation_written table "${scored[@]}" \
  --scored "$(git rev-parse --short HEAD)=work/negation_written/HEAD.csv" --output "$out/written" --overwrite
echo "done: $out/written.md" >&2
