"""Encode documents or queries into sparse SPLADE term-weight vectors (JsonVectorCollection JSONL).

``lsr-lucene encode --corpus SPEC --output DIR`` (document shards, see lsr_lucene.io.vectors) or
``--topics SPEC --output FILE.jsonl`` (query vectors with signed integer weights).
"""
from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

from lsr_lucene import cli_options as opt
from lsr_lucene.encode.choices import ACTIVATIONS, DEFAULT, DEFAULT_BATCH_SIZE, POOLINGS, PRECISIONS
from lsr_lucene.errors import InputError

if TYPE_CHECKING:
    from lsr_lucene.encode.encoder import SparseEncoder


def add_dtype_arguments(parser: argparse.ArgumentParser, bf16_alias: bool = False, int8: bool = False) -> None:
    """``--dtype {fp32,bf16,auto}`` (default fp32) of every command that encodes documents, with ``int8`` where the
    command's encoder has it (``int8``: sparse documents on CPU); ``--bf16`` as its alias when asked. Queries are always
    encoded in fp32."""
    group = parser.add_mutually_exclusive_group()
    int8_help = ("int8 (CPU: the vocabulary projection in int8, the transformer in bf16 where native; weights differ "
                 "by about 1/scale; over 2x fp32 with AVX512_VNNI, but no faster on an AMX Xeon with many threads: see "
                 "runs/encode); ") if int8 else ""  # the help names exactly the choices offered
    group.add_argument("--dtype", choices=[p for p in PRECISIONS if int8 or p != "int8"], default=DEFAULT,
                       help="precision of document encoding: fp32 (default); bf16 (10-20%% faster on CPUs with AMX or "
                            f"AVX512_BF16; weights differ slightly from fp32's); {int8_help}auto (bf16 only where "
                            "this CPU runs it faster). Queries are always encoded in fp32")
    if bf16_alias:
        group.add_argument("--bf16", dest="dtype", action="store_const", const="bf16", help="alias of --dtype bf16")


def add_vector_arguments(parser: argparse.ArgumentParser, device_help: str, check_device: bool = True) -> None:
    """The options that shape document vectors (scale, shard size, activation, pooling, epsilon, device), shared by
    ``encode`` and ``distributed encode`` (whose workers' devices this machine cannot check: ``check_device``)."""
    from lsr_lucene.io.vectors import DEFAULT_SCALE, DEFAULT_SHARD_SIZE

    opt.add_number(parser, "--scale", kind=opt.POSITIVE_NUMBER, default=DEFAULT_SCALE,
                   help="weights become round(w × scale)")
    opt.add_number(parser, "--shard-size", default=DEFAULT_SHARD_SIZE, help="documents per part-*.jsonl")
    parser.add_argument("--activation", choices=ACTIVATIONS, default=None,
                        help="default: the model's lsr_lucene.json, else splade")
    parser.add_argument("--pooling", choices=POOLINGS, default=None,
                        help="default: the model's lsr_lucene.json, else max")
    opt.add_number(parser, "--epsilon", kind=opt.NON_NEGATIVE_NUMBER, default=None,
                   help="SNReLU dead-zone half width (default: the model's)")
    if check_device:
        opt.add_device(parser, help=device_help)
    else:
        parser.add_argument("--device", default=None, help=device_help)


def _encoder_from_args(args: argparse.Namespace) -> SparseEncoder:
    from lsr_lucene.encode.encoder import SparseEncoder

    return SparseEncoder(model=args.model, max_length=args.max_length, query_max_length=args.query_max_length,
                         threads=args.threads, dtype=args.dtype, activation=args.activation,
                         pooling=args.pooling, epsilon=args.epsilon, device=args.device)


def main(argv: list[str] | None = None) -> int:
    """CLI: ``--corpus SPEC --output DIR`` (documents) or ``--topics SPEC --output FILE.jsonl`` (queries)."""
    from lsr_lucene.io.vectors import encode_topics_file, write_vectors

    parser = opt.Parser(prog="lsr-lucene encode", description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", help="documents: JSONL/TSV file, BEIR folder, JSONL directory or irds:<id>")
    opt.add_topics(source, help="queries: TSV, TREC topics, JSONL or irds:<id>")
    opt.add_output(parser, "documents: vectors directory (part-*.jsonl; its record beside it: DIR.metadata.json); "
                           "queries: a JSONL file")
    opt.add_encoder(parser, "splade-tiny", "sparse encoder: registry name, HF id or local model folder", dest="model")
    opt.add_max_length(parser)
    opt.add_number(parser, "--query-max-length", default=64, metavar="N", help="query truncation in tokens")
    opt.add_batch_size(parser, DEFAULT_BATCH_SIZE)
    opt.add_threads(parser, None, "CPU threads: batches encoded in parallel (default: torch's thread count)")
    add_dtype_arguments(parser, bf16_alias=True, int8=True)
    add_vector_arguments(parser, "cpu, cuda, cuda:1 ... (default: cuda when present)")
    parser.add_argument("--positions", default=None,
                        help="also write per-position token weights JSONL {id, tokens: [[tok, w], ...]} (documents)")
    opt.add_overwrite(parser)
    args = parser.parse_args(argv)
    from lsr_lucene.io.output import refuse_existing

    started = time.perf_counter()
    if args.topics:
        if args.positions:
            raise InputError("--positions applies to documents (--corpus), not --topics")
        from lsr_lucene.io.topics import read_topics

        refuse_existing(args.output, args.overwrite, directory=False)
        topics = read_topics(args.topics)
        encoder = _encoder_from_args(args)
        count = encode_topics_file(topics, encoder, args.output, args.scale, overwrite=args.overwrite,
                                   batch_size=max(args.batch_size, 64))
        print(f"wrote {count} query vectors to {args.output} ({time.perf_counter() - started:.1f}s)")
        return 0
    from lsr_lucene.io.corpus import check_corpus, count_docs, read_corpus

    refuse_existing(args.output, args.overwrite, directory=True)
    if args.positions:
        refuse_existing(args.positions, args.overwrite)
    total = check_corpus(args.corpus)  # bad lines and repeated ids fail now, before the model is loaded
    if total is None:  # an ir_datasets id: checked while it streams
        total = count_docs(args.corpus)
    encoder = _encoder_from_args(args)
    meta = write_vectors(read_corpus(args.corpus), encoder, args.output, scale=args.scale,
                         shard_size=args.shard_size, overwrite=args.overwrite, batch_size=args.batch_size,
                         positions=args.positions, total=total, source=str(args.corpus))
    elapsed = time.perf_counter() - started
    skipped = f", skipped {meta['skipped_empty']} empty" if meta["skipped_empty"] else ""
    print(f"wrote {meta['documents']} document vectors in {meta['shards']} shard(s) to {args.output}{skipped} "
          f"({elapsed:.1f}s)")
    return 0
