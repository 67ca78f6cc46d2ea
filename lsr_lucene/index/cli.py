"""Build a Lucene impact index from JsonVectorCollection vectors (the index Anserini's IndexCollection builds).

``lsr-lucene index --input VECTORS --index DIR [--reorder bp] [--top-postings N]``: the command over
:func:`lsr_lucene.index.impact.build_impact_index`. ``lsr-lucene index --index DIR --top-postings N`` (no
``--input``) adds the top-postings sidecar for approximate search to an existing index.
"""
from __future__ import annotations


from lsr_lucene import cli_options as opt
from lsr_lucene.index.impact import INDEXERS, build_impact_index
from lsr_lucene.index.reorder import reorder_summary


def main(argv: list[str] | None = None) -> int:
    parser = opt.Parser(prog="lsr-lucene index", description=__doc__.splitlines()[0])
    opt.add_input(parser, "JsonVectorCollection JSONL file or directory (from lsr-lucene encode); without it, "
                          "--top-postings is added to the existing index", required=False)
    opt.add_index(parser, "index folder to create")
    opt.add_threads(parser, help="indexing threads")
    parser.add_argument("--positions", help="per-position token weights JSONL (encode --positions) to add the "
                                            "positional weight field used by WindowQuery/SDM")
    parser.add_argument("--no-optimize", action="store_true", help="skip merging the index into one segment")
    parser.add_argument("--indexer", choices=INDEXERS, default="lsr",
                        help="lsr: ours, each term once with its weight as term frequency (default, faster); "
                             "anserini: Anserini's IndexCollection, which repeats each term weight times")
    parser.add_argument("--reorder", choices=["bp"], help="reorder the docids after building: bp = recursive "
                                                          "graph bisection (smaller postings, faster block-max skipping)")
    opt.add_number(parser, "--seed", kind=opt.INTEGER, help="shuffle the input order with this seed before --reorder "
                                                 "(default: start from the input order)")
    opt.add_top_postings(parser)
    opt.add_overwrite(parser)
    args = parser.parse_args(argv)
    if args.input is None:
        if not args.top_postings:
            parser.error("give --input (vectors to index), or --top-postings N to add the sidecar to --index")
        return add_top_postings(args.index, args.top_postings, args.overwrite)
    if args.seed is not None and not args.reorder:
        parser.error("--seed needs --reorder")
    meta = build_impact_index(args.input, args.index, threads=args.threads, overwrite=args.overwrite,
                              optimize=not args.no_optimize, positions=args.positions, indexer=args.indexer,
                              reorder=args.reorder, seed=args.seed, top_postings=args.top_postings)
    skipped = f", {meta['empty']} empty skipped" if meta["empty"] else ""
    print(f"indexed {meta['indexed']} documents{skipped} into {args.index} ({meta['size_bytes'] / 1e6:.1f} MB)")
    if "reorder" in meta:
        print(reorder_summary(meta["reorder"], meta["size_bytes"]))
    if "top_postings" in meta:
        print(top_postings_summary(meta["top_postings"]))
    return 0


def add_top_postings(index: str, postings: int, overwrite: bool) -> int:
    """Add (or with ``overwrite`` replace) the top-postings sidecar of an existing impact index."""
    from pathlib import Path

    from lsr_lucene.errors import InputError
    from lsr_lucene.index.kind import IMPACT, require_index_kind
    from lsr_lucene.index.top_postings import TOP_POSTINGS_DIR, build_top_postings

    require_index_kind(index, IMPACT, "the top-postings sidecar")
    if Path(index, TOP_POSTINGS_DIR).exists() and not overwrite:
        raise InputError(f"{Path(index, TOP_POSTINGS_DIR)} already exists (use --overwrite to replace it)")
    print(top_postings_summary(build_top_postings(index, postings)))
    return 0


def top_postings_summary(info: dict) -> str:
    """One line on a top-postings sidecar: postings kept of all, per term."""
    return (f"top-postings sidecar: {info['kept_postings']:,} of {info['postings']:,} postings kept "
            f"({info['postings_per_term']} per term at most, {info['terms']:,} terms)")
