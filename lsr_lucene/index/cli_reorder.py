"""Reorder the docids of an existing impact index by recursive graph bisection (BP), into a new index.

``lsr-lucene reorder --input IN --index OUT`` (like ``lsr-lucene index``; the older ``--index IN --output OUT``
is still accepted; also ``python -m lsr_lucene.index.cli_reorder``): the same documents,
scores and runs, with docids clustered so that postings are smaller and block-max skipping faster; the
positional sidecar follows the same order, and the dense-impacts sidecar is rebuilt in it (by
default, as ``index`` builds it: the source's share, else ``auto``). The library is lsr_lucene.index.reorder.
"""
from __future__ import annotations

import sys

from lsr_lucene import cli_options as opt
from lsr_lucene.errors import InputError
from lsr_lucene.index.dense_impacts import dense_impacts_summary
from lsr_lucene.index.impact import reorder_impact_index
from lsr_lucene.index.reorder import METHODS, reorder_summary


def main(argv: list[str] | None = None) -> int:
    parser = opt.Parser(prog="lsr-lucene reorder", description=__doc__.splitlines()[0])
    opt.add_input(parser, "index folder to read (left unchanged)", required=False)
    opt.add_index(parser, "reordered index folder to create (with --output: the index to read, the older form)")
    opt.add_output(parser, "older form: the reordered index folder to create (with --index IN)", required=False)
    parser.add_argument("--method", choices=METHODS, default="bp", help="bp: recursive graph bisection")
    opt.add_number(parser, "--seed", kind=opt.INTEGER, help="shuffle the input order with this seed first "
                                                            "(default: start from the index's order)")
    opt.add_number(parser, "--depth", kind=opt.NON_NEGATIVE_INT,
                   help="bisection levels (default: log2(documents) - 5)")
    opt.add_threads(parser, None, "threads of the bisection (default: all cores)")
    opt.add_dense_impacts(parser, help="the dense-impacts sidecar of the reordered index, as index --dense-impacts "
                                       "(auto: the source's share, else chosen from the collection; 0: none)")
    opt.add_overwrite(parser)
    args = parser.parse_args(argv)
    source, target = (args.index, args.output) if args.output else (args.input, args.index)
    if args.output and args.input:
        raise InputError("give --input IN --index OUT (or the older --index IN --output OUT), not both forms")
    if source is None:
        raise InputError("give the index to read: --input IN --index OUT")
    meta = reorder_impact_index(source, target, args.method, args.seed, args.overwrite, args.depth, args.threads,
                                dense_impacts=args.dense_impacts)
    print(reorder_summary(meta["reorder"], meta["size_bytes"]))
    if "dense_impacts" in meta:
        print(dense_impacts_summary(meta["dense_impacts"]))
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
