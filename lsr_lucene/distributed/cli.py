"""Encode, index and search on a Ray cluster, with outputs identical to the one-machine commands.

``lsr-lucene distributed encode|index|search ... [--address HOST:PORT|auto] [--num-workers N]``: without
``--address`` a local Ray instance is started for the command and stopped at its end.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from lsr_lucene import cli_options as opt
from lsr_lucene.errors import InputError


def _add_cluster_arguments(parser: argparse.ArgumentParser, workers_help: str) -> None:
    parser.add_argument("--address", default=None,
                        help="Ray cluster to use: HOST:PORT of `ray start --head`, or auto (default: start a local "
                             "Ray instance for this command)")
    opt.add_number(parser, "--num-workers", default=2, help=workers_help)
    opt.add_number(parser, "--num-cpus", default=None,
                        help="CPUs of the local Ray instance (default: all; ignored with --address)")


def _encode_parser(sub) -> None:
    from lsr_lucene.encode.cli import add_dtype_arguments, add_vector_arguments
    from lsr_lucene.encode.choices import DEFAULT_BATCH_SIZE

    p = sub.add_parser("encode", help="encode a corpus into JsonVectorCollection shards with a pool of encoder actors")
    p.add_argument("--corpus", required=True,
                   help="documents: JSONL/TSV file, BEIR folder, JSONL directory or irds:<id>")
    opt.add_output(p, "vectors directory (part-*.jsonl; its record beside it: DIR.metadata.json)")
    opt.add_encoder(p, "splade-tiny", "sparse encoder: registry name, HF id or local model folder", dest="model")
    opt.add_max_length(p)
    opt.add_batch_size(p, DEFAULT_BATCH_SIZE)
    add_dtype_arguments(p)
    add_vector_arguments(p, "cpu or cuda (default: cuda on workers that have a GPU)", check_device=False)
    opt.add_number(p, "--cpus-per-worker", default=1, help="CPUs (torch threads) of each encoder actor")
    opt.add_number(p, "--gpus-per-worker", kind=opt.NON_NEGATIVE_NUMBER, default=None,
                   help="GPUs of each encoder actor (default: 1 when the cluster has GPUs, else 0)")
    opt.add_overwrite(p)
    _add_cluster_arguments(p, "encoder actors (default 2)")


def _index_parser(sub) -> None:
    p = sub.add_parser("index", help="one impact index per vector shard, built by actors each in its own JVM")
    opt.add_input(p, "vectors directory (lsr-lucene [distributed] encode)")
    opt.add_index(p, "folder of shard indexes and shards.json to create")
    opt.add_threads(p, 1, "indexing threads (and CPUs) per builder actor")
    p.add_argument("--positions", help="per-position token weights JSONL of the whole collection (encode "
                   "--positions): each shard gets the positional field that window clauses read")
    p.add_argument("--reorder", choices=["bp"], help="reorder each shard's docids after building it, as "
                   "`lsr-lucene index --reorder bp` does: bp = recursive graph bisection")
    opt.add_number(p, "--seed", kind=opt.INTEGER, help="with --reorder: shuffle each shard's input order with this "
                   "seed first (default: start from the input order)")
    opt.add_number(p, "--shards", kind=opt.NON_NEGATIVE_INT, default=0,
                   help="shards to build, each of consecutive vector files (default 0: one per file)")
    opt.add_retired(p, "--top-postings")
    opt.add_dense_impacts(p)
    _add_cluster_arguments(p, "index builder actors (JVMs), default 2")


def _search_parser(sub) -> None:
    from lsr_lucene.distributed.search import QUERY_BATCH
    from lsr_lucene.search.impact import DEFAULT_HITS

    p = sub.add_parser("search", help="scatter-gather search over the shard indexes; one merged TREC run")
    opt.add_index(p, "distributed index folder (with shards.json)")
    opt.add_output(p, "TREC run file to write")
    source = p.add_mutually_exclusive_group(required=True)
    opt.add_topics(source, help="topics (TSV, TREC, JSONL, irds:...), encoded with the index's model")
    source.add_argument("--query-vectors", help="pre-encoded queries (JSONL vectors or repeated-token TSV)")
    source.add_argument("--specs", help="query specs JSONL (signed terms, CPT pairs, windows; lsr_lucene.search.specs)")
    opt.add_hits(p, default=DEFAULT_HITS)
    opt.add_run_tag(p, "lsr_lucene")
    opt.add_encoder(p, None, "query encoder (default: the model recorded with the vectors)")
    opt.add_number(p, "--query-max-length", default=None, metavar="N",
                   help="query truncation in tokens (default: the encoder's, 64)")
    opt.add_number(p, "--scale", kind=opt.POSITIVE_NUMBER, default=None,
                   help="query quantisation scale (default: the index's)")
    opt.add_batch_size(p, QUERY_BATCH, "queries per call to a searcher actor")
    opt.add_number(p, "--threads", default=None, metavar="N",
                   help="search threads of each searcher actor (one per node, holding the shards built there; "
                        "default: the cores of its machine)")
    opt.add_retired(p, "--approximate", "--query-cut")
    opt.add_heap_factor(p)
    opt.add_overwrite(p)
    _add_cluster_arguments(p, "searcher actors per shard (replicas sharing the query batches), default 1")
    p.set_defaults(num_workers=1)


def _specs(args: argparse.Namespace, encoder_settings: dict) -> list[dict]:
    """Query specs from --specs, --query-vectors or --topics (encoded like lsr-lucene search does)."""
    from lsr_lucene.search.impact import plain_specs

    if args.specs:
        from lsr_lucene.search.specs import read_query_specs

        return read_query_specs(args.specs)
    if args.query_vectors:
        from lsr_lucene.io.topics import read_query_vectors

        return plain_specs(read_query_vectors(args.query_vectors))
    from lsr_lucene.encode.precision import note_documents_precision
    from lsr_lucene.io.topics import read_topics
    from lsr_lucene.search.impact import encode_topics

    topics = read_topics(args.topics)
    if not topics:
        raise InputError(f"{args.topics}: no topics")
    from lsr_lucene.compose.query_syntax import uses_syntax
    from lsr_lucene.search.impact import query_encoder_for

    scale = args.scale or encoder_settings.get("scale") or 100
    encoder = query_encoder_for(args.index, encoder_settings, args.encoder, query_max_length=args.query_max_length)
    note_documents_precision(encoder_settings.get("dtype"))  # queries are always encoded in fp32
    plain = {q: t for q, t in topics.items() if not uses_syntax(t)}
    specs = {s["qid"]: s for s in plain_specs(encode_topics(plain, encoder, scale))}
    if len(plain) < len(topics):  # the explicit syntax (-word, NOT word) searched as compose searches it: strict
        from lsr_lucene.compose.strict import syntax_specs

        specs.update((s["qid"], s) for s in syntax_specs({q: t for q, t in topics.items() if q not in plain},
                                                          encoder, scale))
    return [specs[q] for q in topics if q in specs]


def _check_before_starting(args: argparse.Namespace) -> None:
    """Input errors that need no cluster (an index of the wrong kind, a repeated document id) fail before one starts."""
    if args.command == "index" and args.seed is not None and not args.reorder:
        raise InputError("--seed needs --reorder")
    if args.command == "search":
        from lsr_lucene.distributed.index import read_manifest

        read_manifest(args.index)
    elif args.command == "encode":
        from lsr_lucene.io.corpus import check_corpus
        from lsr_lucene.io.output import refuse_existing

        refuse_existing(args.output, args.overwrite)
        check_corpus(args.corpus)


def _run(args: argparse.Namespace, resources: dict) -> str:
    if args.command == "encode":
        from lsr_lucene.distributed.encode import distributed_encode

        gpus = args.gpus_per_worker
        if gpus is None:
            gpus = 1 if resources.get("GPU", 0) >= 1 and args.device != "cpu" else 0
        options = {"model": args.model, "max_length": args.max_length, "dtype": args.dtype,
                   "activation": args.activation, "pooling": args.pooling, "epsilon": args.epsilon,
                   "device": args.device}
        meta = distributed_encode(args.corpus, args.output, {"workers": args.num_workers, "cpus": args.cpus_per_worker,
                                                             "gpus": gpus},
                                  options, scale=args.scale, shard_size=args.shard_size, batch_size=args.batch_size,
                                  overwrite=args.overwrite)
        return f"wrote {meta['documents']} document vectors in {meta['shards']} shard(s) to {args.output}"
    if args.command == "index":
        from lsr_lucene.distributed.index import distributed_index

        manifest = distributed_index(args.input, args.index, args.num_workers, threads=args.threads,
                                     positions=args.positions,
                                     dense_impacts=args.dense_impacts, reorder=args.reorder, seed=args.seed,
                                     shards=args.shards)
        return (f"wrote {len(manifest['shards'])} shard indexes ({manifest['documents']} documents) and "
                f"{Path(args.index) / 'shards.json'}")
    from lsr_lucene.distributed.index import read_manifest
    from lsr_lucene.distributed.search import DistributedSearcher, timing_line
    from lsr_lucene.io.output import refuse_existing
    from lsr_lucene.search.impact import report_unanswered

    refuse_existing(args.output, args.overwrite)
    manifest = read_manifest(args.index)
    # the searchers start (processes, JVMs, shards) while the queries are read or encoded here
    with DistributedSearcher(args.index, args.num_workers, args.heap_factor, args.threads,
                             wait=False) as searcher:
        specs = _specs(args, manifest.get("encoder", {}))
        stats = searcher.search_to_run(specs, args.output, hits=args.hits, tag=args.run_tag,
                                       overwrite=args.overwrite, batch_size=args.batch_size)
    report_unanswered(stats["unanswered"], stats["queries"])
    print(timing_line(stats["timing"]))
    return (f"wrote {args.output} ({stats['answered']} queries with hits; {stats['shards']} shards, "
            f"{stats['qps']} queries/s)")


def main(argv: list[str] | None = None) -> int:
    from lsr_lucene.distributed.cluster import ray_cluster

    parser = opt.Parser(prog="lsr-lucene distributed", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    _encode_parser(sub)
    _index_parser(sub)
    _search_parser(sub)
    args = parser.parse_args(argv)
    _check_before_starting(args)
    started = time.perf_counter()
    with ray_cluster(args.address, num_cpus=args.num_cpus) as resources:
        message = _run(args, resources)
    print(f"{message} ({time.perf_counter() - started:.1f}s)")
    return 0
