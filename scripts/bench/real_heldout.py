"""Split encoded queries into a held-out part and a tuning part by a rule fixed before any result is seen:
a query is held out when int(sha1(qid), 16) % 3 == 0 (issue 68: report on the held-out part, tune on the other).

    python -m scripts.bench.real_heldout QUERIES.jsonl --heldout HELD.jsonl --tuning TUNE.jsonl
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from lsr_lucene.errors import InputError
from lsr_lucene.io.output import atomic_output


def held_out(qid: str, folds: int = 3) -> bool:
    """Whether the query ``qid`` is kept aside (sha1 of its id, mod ``folds``, is 0)."""
    return int(hashlib.sha1(qid.encode()).hexdigest(), 16) % folds == 0


def split(lines: list[str], source: str) -> tuple[list[str], list[str]]:
    """(held-out lines, tuning lines) of a JSONL file of {"id", ...} rows, in file order."""
    held: list[str] = []
    tuning: list[str] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            qid = str(json.loads(line)["id"])
        except (ValueError, KeyError, TypeError):
            raise InputError(f"{source}:{number}: expected a JSON object with an id") from None
        (held if held_out(qid) else tuning).append(line.rstrip("\n") + "\n")
    return held, tuning


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench.real_heldout", description=__doc__.splitlines()[0])
    parser.add_argument("queries", help="encoded queries, JSONL {id, vector}")
    parser.add_argument("--heldout", required=True, help="output: the held-out queries")
    parser.add_argument("--tuning", required=True, help="output: the other queries")
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    source = Path(args.queries)
    if not source.is_file():
        raise InputError(f"{source}: not found")
    held, tuning = split(source.read_text(encoding="utf-8").splitlines(), str(source))
    for path, rows in ((args.heldout, held), (args.tuning, tuning)):
        with atomic_output(Path(path), overwrite=args.overwrite) as tmp:
            tmp.write_text("".join(rows), encoding="utf-8")
    print(f"{len(held)} held out, {len(tuning)} for tuning (sha1(qid) % 3 == 0 held out)")
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
