"""Reorder the docids of an existing impact index by recursive graph bisection (BP), into a new index.

``lsr-lucene reorder --index IN --output OUT`` (also ``python -m lsr_lucene.reorder``): the same documents,
scores and runs, with docids clustered so that postings are smaller and block-max skipping faster; the
positional sidecar follows the same order. The library is lsr_lucene.index.reorder.
"""
from __future__ import annotations

import argparse
import sys

from lsr_lucene.index.impact import reorder_impact_index
from lsr_lucene.index.reorder import METHODS, reorder_summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lsr-lucene reorder", description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="index folder to read (left unchanged)")
    parser.add_argument("--output", required=True, help="reordered index folder to create")
    parser.add_argument("--method", choices=METHODS, default="bp", help="bp: recursive graph bisection")
    parser.add_argument("--seed", type=int, help="shuffle the input order with this seed first "
                                                 "(default: start from the index's order)")
    parser.add_argument("--depth", type=int, help="bisection levels (default log2(documents) - 5)")
    parser.add_argument("--threads", type=int, help="threads of the bisection (default: all cores)")
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    if args.depth is not None and args.depth < 0:
        parser.error("--depth must be >= 0")
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be >= 1")
    meta = reorder_impact_index(args.index, args.output, args.method, args.seed, args.overwrite, args.depth,
                                args.threads)
    print(reorder_summary(meta["reorder"], meta["size_bytes"]))
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
