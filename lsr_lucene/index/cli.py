"""Build a Lucene impact index from JsonVectorCollection vectors (the index Anserini's IndexCollection builds).

``lsr-lucene index --input VECTORS --index DIR [--reorder bp] [--dense-impacts auto|S|0]``:
the command over :func:`lsr_lucene.index.impact.build_impact_index`, with the dense-impacts sidecar (faster exact
search) by default; ``--dense`` also writes the dense leg of negated queries (``<index>/dense``). ``lsr-lucene
index --index DIR`` with ``--dense-impacts auto|S`` or ``--dense`` (no ``--input``) adds the dense-impacts sidecar
or the dense leg to an existing index; with ``--text`` the analysed text field of explicit exclusions (``-word``,
``NOT word``), which indexing writes by default.
"""
from __future__ import annotations


from lsr_lucene import cli_options as opt
from lsr_lucene.index.dense_impacts import AUTO, DENSE_IMPACTS_DIR, build_dense_impacts, dense_impacts_summary
from lsr_lucene.index.impact import INDEXERS, build_impact_index
from lsr_lucene.index.reorder import reorder_summary
from lsr_lucene.index.text_field import TEXT_DIR, build_text_field, text_field_summary


def main(argv: list[str] | None = None) -> int:
    parser = opt.Parser(prog="lsr-lucene index", description=__doc__.splitlines()[0])
    opt.add_input(parser, "JsonVectorCollection JSONL file or directory (from lsr-lucene encode); without it, "
                          "--dense-impacts, --dense or --text is added to the existing index", required=False)
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
    opt.add_retired(parser, "--top-postings")
    opt.add_dense_impacts(parser, default=None, help=(
        "the dense-impacts sidecar for faster exact search (default: auto; 0: none): the terms in at least a share "
        "S of the documents as one byte per document; auto: those in 1/16 of the documents, as many of the most "
        "frequent as fit in a quarter of the index's size (554 terms, 0.24x the index at 666k wiki2015 passages)"))
    parser.add_argument("--dense", action="store_true",
                        help="also write the dense leg of negated queries (compose's default): all-MiniLM-L6-v2 "
                             "embeddings of the same documents in <index>/dense (int8, as lsr-lucene dense encode "
                             "writes them) and their approximate HNSW index (ann.faiss) for a negated query's dense "
                             "candidates; their text: --corpus, else the vectors' (encode keeps it), else the "
                             "corpus the vectors record. A second encoding of every document: measured in one "
                             "interleaved run on 2 shared cores (AVX512 with AMX), 2.3x the sparse encoding's time "
                             "on NPL abstracts (fp32 2.5x; bf16, not the default, 1.05x), 3.7x on Cranfield's "
                             "longer ones in an earlier run; without AMX (AVX512_BF16), in CPU time, 2.0x on NPL "
                             "(bf16 1.9x) and 3.6x on Cranfield (bf16 2.3x) (runs/dense/). On an index whose dense "
                             "leg predates the approximate index, adds only that")
    parser.add_argument("--corpus", help="with --dense: the documents' text (JSONL/TSV, BEIR folder or irds:<id>)")
    text = parser.add_mutually_exclusive_group()
    text.add_argument("--text", action="store_true",
                      help="without --input: add the analysed text field of explicit exclusions (<index>/text, "
                           "from the stored text) to an existing index, e.g. one Pyserini built with -storeRaw")
    text.add_argument("--no-text", action="store_true",
                      help="skip the text field that indexing writes by default (explicit exclusions such as -word "
                           "then cannot be searched; about 0.2x the impact index's size, docs/negation.md)")
    opt.add_overwrite(parser)
    args = parser.parse_args(argv)
    if args.corpus and not args.dense:
        parser.error("--corpus goes with --dense (the text of the dense leg)")
    if args.input is None:
        if not args.dense_impacts and not args.dense and not args.text:
            parser.error("give --input (vectors to index), or --dense-impacts auto|S / --dense / --text to add a "
                         "sidecar to --index")
        if args.text:
            add_text_field(args.index, args.overwrite)
        if args.dense_impacts:
            add_dense_impacts(args.index, args.dense_impacts, args.overwrite)
        if args.dense:
            add_dense_leg(args.index, args.corpus, None, args.threads, args.overwrite)
        return 0
    if args.text:
        parser.error("--text adds the text field to an existing --index (without --input); indexing writes it anyway")
    if args.seed is not None and not args.reorder:
        parser.error("--seed needs --reorder")
    meta = build_impact_index(args.input, args.index, threads=args.threads, overwrite=args.overwrite,
                              optimize=not args.no_optimize, positions=args.positions, indexer=args.indexer,
                              reorder=args.reorder, seed=args.seed,
                              dense_impacts=AUTO if args.dense_impacts is None else args.dense_impacts,
                              text=not args.no_text)
    skipped = f", {meta['empty']} empty skipped" if meta["empty"] else ""
    print(f"indexed {meta['indexed']} documents{skipped} into {args.index} ({meta['size_bytes'] / 1e6:.1f} MB)")
    if "reorder" in meta:
        print(reorder_summary(meta["reorder"], meta["size_bytes"]))
    if "dense_impacts" in meta:
        print(dense_impacts_summary(meta["dense_impacts"]))
    if "text" in meta:
        print(text_field_summary(meta["text"]))
    if args.dense:  # after the index is in place: an interrupted encoding keeps it (add the leg again with --dense)
        add_dense_leg(args.index, args.corpus, args.input, args.threads, args.overwrite)
    return 0


def add_dense_leg(index: str, corpus: str | None, vectors: str | None, threads: int, overwrite: bool) -> int:
    """Write the dense leg ``<index>/dense`` of an impact index (refused where it exists, unless ``overwrite``)."""
    from lsr_lucene.dense.leg import build_dense_leg, dense_leg_summary
    from lsr_lucene.index.kind import IMPACT, require_index_kind

    require_index_kind(index, IMPACT, "the dense leg")
    print(dense_leg_summary(build_dense_leg(index, corpus, vectors, threads, overwrite)))
    return 0


def add_text_field(index: str, overwrite: bool) -> int:
    """Add (or with ``overwrite`` replace) the text field of explicit exclusions to an existing impact index."""
    return _add_sidecar(index, TEXT_DIR, "the text field", overwrite,
                        lambda: text_field_summary(build_text_field(index)))


def add_dense_impacts(index: str, share: float, overwrite: bool) -> int:
    """Add (or with ``overwrite`` replace) the dense-impacts sidecar of an existing impact index."""
    return _add_sidecar(index, DENSE_IMPACTS_DIR, "the dense-impacts sidecar", overwrite,
                        lambda: dense_impacts_summary(build_dense_impacts(index, share)))


def _add_sidecar(index: str, folder: str, what: str, overwrite: bool, build) -> int:
    """Build a sidecar folder inside an existing impact index (refused where it exists, unless ``overwrite``)."""
    from pathlib import Path

    from lsr_lucene.errors import InputError
    from lsr_lucene.index.kind import IMPACT, require_index_kind

    require_index_kind(index, IMPACT, what)
    if Path(index, folder).exists() and not overwrite:
        raise InputError(f"{Path(index, folder)} already exists (use --overwrite to replace it)")
    print(build())
    return 0
