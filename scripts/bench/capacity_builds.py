"""Index builds of the capacity plan (issue 52, item 4): the first N passages of an encoded collection indexed as
``lsr-lucene index`` builds them (natural order, or ``--reorder bp``; the dense-impacts sidecar by default), timed.

    python -m scripts.bench.capacity_builds --vectors VECTORS --docs 100000,300000 --orders natural,bp \\
        --work WORK --output runs/distributed/capacity_builds.csv

Per size and order: WORK/index-N-ORDER, built from WORK/vectors-N (links to the collection's first part files, so
nothing is copied; the parts may still be in an encoder's ``.vectors.partial`` folder) by one ``lsr-lucene index``
process under ``/usr/bin/time``: wall seconds, peak RSS, BP seconds (the index's metadata), sizes on disk of the
index and of its sidecar. An index already built is reused with the row recorded beside it (WORK/index-N-ORDER.json),
so sizes can be added later; the CSV keeps the rows of sizes not asked for this time.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from scripts.bench.parts import first_parts, link_parts
from scripts.bench.scale_report import machine
from lsr_lucene.errors import InputError
from lsr_lucene.index.impact import index_size, read_index_metadata
from lsr_lucene.io.output import atomic_output, write_text_atomic

ORDERS = ("natural", "bp")


def build(vectors: Path, docs: int, order: str, work: Path, threads: int) -> dict:
    """One timed build (or the recorded row of one done before): its CSV row."""
    index = work / f"index-{docs}-{order}"
    record = work / f"index-{docs}-{order}.json"
    if index.is_dir() and record.is_file():
        return json.loads(record.read_text())
    source = link_parts(first_parts(vectors, docs), work / f"vectors-{docs}")
    command = ["lsr-lucene", "index", "--input", str(source), "--index", str(index), "--threads", str(threads),
               *(["--reorder", "bp"] if order == "bp" else []), *(["--overwrite"] if index.exists() else [])]
    with tempfile.NamedTemporaryFile("r", suffix=".time") as timing:
        print(f"building {index} ({docs} passages, {order} order)", file=sys.stderr, flush=True)
        done = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", timing.name, *command], check=False)
        if done.returncode != 0:
            raise InputError(f"{' '.join(command)} failed (exit {done.returncode})")
        seconds, peak_kib = timing.read().split()[-2:]
    metadata = read_index_metadata(index)
    sidecar = index / "dense-impacts"
    row = {"docs": docs, "order": order, "threads": threads, "build_s": float(seconds),
           "bp_s": metadata.get("reorder", {}).get("bp_seconds"), "index_bytes": index_size(index) - index_size(sidecar),
           "sidecar_bytes": index_size(sidecar) if sidecar.is_dir() else 0,
           "dense_terms": metadata.get("dense_impacts", {}).get("terms", 0), "build_peak_rss_bytes": int(peak_kib) * 1024,
           "dtype": metadata.get("encoder", {}).get("dtype", ""), "machine": machine(), "index": str(index)}
    write_text_atomic(record, json.dumps(row, indent=2) + "\n")
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, prog="python -m scripts.bench.capacity_builds",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", required=True, help="lsr-lucene encode output folder (or its .vectors.partial)")
    parser.add_argument("--docs", required=True, help="passage counts, comma list (whole part files)")
    parser.add_argument("--orders", default=",".join(ORDERS), help="natural and/or bp")
    parser.add_argument("--work", required=True, help="folder of the samples and indexes")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output", required=True, help="CSV of the builds (rows of other sizes kept)")
    args = parser.parse_args(argv)
    orders = args.orders.split(",")
    if set(orders) - set(ORDERS):
        parser.error(f"--orders: natural and/or bp, not {args.orders}")
    rows = [build(Path(args.vectors), int(docs), order, Path(args.work), args.threads)
            for docs in args.docs.split(",") for order in orders]
    out = Path(args.output)
    frame = pd.DataFrame(rows)
    if out.is_file():
        kept = pd.read_csv(out)
        kept = kept[~kept.set_index(["docs", "order"]).index.isin(frame.set_index(["docs", "order"]).index)]
        frame = pd.concat([kept, frame], ignore_index=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(out, overwrite=True) as tmp:
        frame.sort_values(["docs", "order"]).to_csv(tmp, index=False)
    print(frame.drop(columns=["machine", "index"]).to_string(index=False))
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
