#!/usr/bin/env bash
# Issue 41: the host's share of GPU encoding (tokenising, padding, JSON lines, shards; the device's results replayed,
# scripts/bench/encode_host.py), this checkout against BASE, interleaved round by round on this machine. BASE is
# checked out under work/ with this checkout's three bench files copied in (the same measurement for both).
# Writes runs/encode/host_only.{csv,md}. Environment: BASE (default 3e7be07, before this work's host changes),
# PASSAGES (10000, the first of the seeded wiki2015 order, scripts/prepare_device_encode.sh), WORKERS (2), ROUNDS (3),
# REPEATS (3 replayed runs per round, best kept).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
base=${BASE:-3e7be07}
corpus=work/device-gpu/work/device/wiki20k.jsonl
[ -f "$corpus" ] || scripts/prepare_device_encode.sh work/device-gpu
checkout=work/encode-host-base
if [ ! -d "$checkout" ] || [ "$(git -C "$checkout" rev-parse HEAD)" != "$(git rev-parse "$base")" ]; then
  rm -rf "$checkout"; git worktree prune
  git worktree add --detach "$checkout" "$base" >/dev/null
fi
# the measurement: this checkout's benchmark modules, as scripts.bench in both trees (a BASE from before
# issue 66 has them in lsr_lucene/bench: the copies sit beside it in scripts/bench, importing its package)
mkdir -p "$checkout/scripts/bench" && touch "$checkout/scripts/__init__.py" "$checkout/scripts/bench/__init__.py"
cp scripts/bench/encode_host.py scripts/bench/encode_host_cli.py scripts/bench/encode_speed.py "$checkout/scripts/bench/"
out=runs/encode/host_only.csv
rm -f "$out"
for round in $(seq "${ROUNDS:-3}"); do
  for tree in "$checkout" "$here"; do
    label=$(git -C "$tree" rev-parse --short HEAD)$([ "$tree" = "$here" ] && [ -n "$(git status --porcelain lsr_lucene)" ] && echo "+changes" || true)
    # from the tree's own folder: `python -m` puts the current folder first on the path
    (cd "$tree" && PYTHONPATH=$tree python -m scripts.bench.encode_host_cli --corpus "$here/$corpus" \
      --passages "${PASSAGES:-10000}" --workers "${WORKERS:-2}" --repeats "${REPEATS:-3}" --label "$label" \
      --csv "$here/$out" --work "$here/work/encode-host") 2> >(grep -v "docs/s" >&2)
  done
done
python - "$out" <<'PY'
import csv, sys
from collections import defaultdict
from pathlib import Path
rows = list(csv.DictReader(open(sys.argv[1])))
rates = defaultdict(list)
for r in rows:
    rates[r["label"]].append(float(r["passages_per_s"]))
first = rows[0]
lines = [f"Host share of GPU encoding, device results replayed (bench.encode_host): {first['passages']} wiki2015 "
         f"passages, splade-tiny, batch {first['batch_size']}, {first['workers']} worker processes, CPU "
         f"{first['cpu_capability']} ({first['cores']} cores); rounds interleaved, best of the replayed runs per round.",
         "", "| code | package | passages/s per round | best | files identical to the recording |", "|---|---|---|---:|---|"]
for label, values in rates.items():
    same = all(r["identical_files"] == "True" for r in rows if r["label"] == label)
    package = {r["package"] for r in rows if r["label"] == label}
    lines.append(f"| {label} | {', '.join(sorted(package))} | {', '.join(f'{v:,.0f}' for v in values)} | "
                 f"{max(values):,.0f} | {same} |")
labels = list(rates)
if len(labels) == 2:
    lines += ["", f"best {labels[1]} / best {labels[0]}: {max(rates[labels[1]]) / max(rates[labels[0]]):.2f}"]
Path(sys.argv[1]).with_suffix(".md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
PY
