#!/usr/bin/env bash
# Long profile of the exactness property test (issue 37, tests/test_exact_property.py): COLLECTIONS generated
# collections x QUERIES generated queries each (default 1,000 x 100 = 100,000 queries; Hypothesis's buffer holds
# about 150 queries an example), every query checked on every
# entry point against a double brute force. Progress lands in runs/property/progress.json as it goes (collections,
# queries, index checks, seconds); the outcome, with the command and seed, in runs/property/results.md.
#   COLLECTIONS=1000 QUERIES=100 SEED=0 scripts/run_property.sh
set -u
cd "$(dirname "$0")/.."
COLLECTIONS=${COLLECTIONS:-1000}
QUERIES=${QUERIES:-100}
SEED=${SEED:-0}
OUT=runs/property
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export LSR_PROPERTY_COLLECTIONS=$COLLECTIONS LSR_PROPERTY_QUERIES=$QUERIES LSR_PROPERTY_SEED=$SEED
export LSR_PROPERTY_REPORT=$OUT/progress.json
rm -f "$LSR_PROPERTY_REPORT"
started=$(date -u +%FT%TZ)
command="COLLECTIONS=$COLLECTIONS QUERIES=$QUERIES SEED=$SEED scripts/run_property.sh"
log=$(mktemp)
nice -n 10 python -m pytest -q -x -p no:cacheprovider tests/test_exact_property.py --hypothesis-seed="$SEED" >"$log" 2>&1
status=$?
python - "$OUT" "$status" "$started" "$command" "$log" <<'PY'
import json, sys, platform
from pathlib import Path

out, status, started, command, log = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
progress = json.loads((out / "progress.json").read_text()) if (out / "progress.json").exists() else {}
text = Path(log).read_text(errors="replace").splitlines()
summary = next((line for line in reversed(text) if " passed" in line or " failed" in line or " error" in line), "")
failure = [line for line in text if line.startswith("E ")][:40]
lines = [
    "# Exactness property test, long profile (issue 37)", "",
    f"Command: `{command}` (started {started}; `tests/test_exact_property.py`, Hypothesis seed {command.split('SEED=')[1].split()[0]})",
    f"Machine: {platform.processor() or platform.machine()}, shared with other jobs (run with nice)", "",
    "| collections (main + distributed) | generated queries (main test) | index checks (query x index variant, every entry point) | seconds | outcome |",
    "|---:|---:|---:|---:|:---|",
    f"| {progress.get('collections', 0)} | {progress.get('queries', 0)} | {progress.get('cases', 0)} | "
    f"{progress.get('seconds', 0)} | {'passed' if status == 0 else 'FAILED (exit %d)' % status}: {summary.strip('= ')} |",
    "",
    "Each generated query is checked against the double brute force on every entry point of its collection's indexes "
    "(natural and BP order with the positional sidecar, two segments without it): "
    "SpecSearcher.search_exact (bit for bit) and search, ImpactSearcher, "
    "compose LuceneBackend and ExactBackend, `lsr-lucene search --specs` with 1 and 2 threads; distributed search "
    "over two shards (exact) on a tenth as many further collections of as many "
    "queries each (counted as collections and index checks, not as generated queries).",
]
if failure:
    lines += ["", "First failure:", "", "```", *failure, "```"]
(out / "results.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
PY
rm -f "$log"
exit $status
