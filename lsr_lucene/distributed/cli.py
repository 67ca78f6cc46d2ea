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
    p.add_argument("--dense", action="store_true",
                   help="also write each shard's dense leg (<shard>/dense: all-MiniLM-L6-v2 embeddings of its "
                        "documents' text and their HNSW graph, as lsr-lucene index --dense writes them), which "
                        "distributed search's negated queries read, as compose's default reads one index's")
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
    from lsr_lucene.compose.execute import DEFAULT_FUSION_DEPTH
    from lsr_lucene.compose.operations import DEFAULTS, valid_for

    p.add_argument("--not-op", default=None, choices=valid_for("not") + (SPEC,), metavar="NAME",
                   help="operation of the not nodes of --topics whose parse is a negation ('A but not B', 'A -B', "
                        f"'A NOT B'), as compose --not-op: default compose's {DEFAULTS['not']} default, ranked as "
                        "compose ranks it on one index of the same documents (A's and B's sparse searches fused, "
                        "the dense leg of the shards' <shard>/dense folders when every shard has one, stored texts "
                        "read; about 2-2.5x one index's compose time on NPL with 2 local shards, a few calls to "
                        "the shards per query: runs/distributed/negation-npl.md); spec: one query spec per topic "
                        "(the text as one query; explicit -B/NOT B: A alone, B's documents "
                        "removed)")
    opt.add_number(p, "--fusion-depth", default=DEFAULT_FUSION_DEPTH,
                   help="negated topics: hits per fused leg that form the candidates (compose --fusion-depth)")
    opt.add_number(p, "--dense-depth", kind=opt.NON_NEGATIVE_INT, default=None, metavar="N",
                   help="negated topics: the dense leg's own nearest documents to A's text that join the candidates "
                        "(compose --dense-depth; default: --fusion-depth; 0: none)")
    opt.add_overwrite(p)
    _add_cluster_arguments(p, "searcher actors per shard (replicas sharing the query batches), default 1")
    p.set_defaults(num_workers=1)


SPEC = "spec"  # --not-op spec: negated topics searched as one query spec each (the behaviour before compose's)


class Queries:
    """What a distributed search searches: query specs, and the negated topics (compositions) ranked as compose
    ranks them, with the sparse query encoder and scale they need."""

    def __init__(self, specs: list[dict], order: list[str] | None = None, negated: list | None = None,
                 encoder=None, scale: float = 100):
        self.specs, self.negated, self.encoder, self.scale = specs, negated or [], encoder, scale
        self.order = order if order is not None else [str(s["qid"]) for s in specs]


def _queries(args: argparse.Namespace, encoder_settings: dict) -> Queries:
    """Query specs from --specs, --query-vectors or --topics (encoded like lsr-lucene search does), and the topics
    whose parse is a negation (unless --not-op spec)."""
    from lsr_lucene.search.impact import plain_specs

    if args.specs:
        from lsr_lucene.search.specs import read_query_specs

        return Queries(read_query_specs(args.specs))
    if args.query_vectors:
        from lsr_lucene.io.topics import read_query_vectors

        return Queries(plain_specs(read_query_vectors(args.query_vectors)))
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
    negated: dict = {}
    if args.not_op != SPEC:  # ranked as compose ranks them (lsr_lucene.distributed.compose)
        from lsr_lucene.distributed.compose import negated as negated_topics

        negated = negated_topics(topics)
    topics_left = {q: t for q, t in topics.items() if q not in negated}
    plain = {q: t for q, t in topics_left.items() if not uses_syntax(t)}
    specs = {s["qid"]: s for s in plain_specs(encode_topics(plain, encoder, scale))}
    if len(plain) < len(topics_left):  # the explicit syntax without a not, or --not-op spec: strict
        from lsr_lucene.compose.strict import syntax_specs

        specs.update((s["qid"], s) for s in syntax_specs({q: t for q, t in topics_left.items() if q not in plain},
                                                          encoder, scale))
    return Queries([specs[q] for q in topics if q in specs], list(topics), list(negated.values()), encoder, scale)


def _search_with_negations(searcher, queries: Queries, args: argparse.Namespace) -> dict:
    """The run of plain specs (searched as without negations) and of negated topics (ranked as compose ranks them),
    in topic order; the plain search's counts, the negated topics added."""
    import sys
    import tempfile

    from lsr_lucene.distributed.compose import rank_compositions
    from lsr_lucene.io.output import atomic_output
    from lsr_lucene.io.runs import write_run

    def note(line: str) -> None:
        print(line, file=sys.stderr)

    def warn(qid: str, why: str) -> None:
        print(f"warning: query {qid}: {why}; no hits", file=sys.stderr)

    searcher.ready()  # (the searchers' start is not the negated topics' time)
    with tempfile.TemporaryDirectory(prefix="distributed-run-") as tmp:
        plain_run, negated_run = Path(tmp) / "plain.run", Path(tmp) / "negated.run"
        searchable = [s for s in queries.specs if s.get("terms") or s.get("pairs") or s.get("windows")]
        stats: dict = searcher.search_to_run(searchable, plain_run, hits=args.hits, tag=args.run_tag,
                                             batch_size=args.batch_size) if searchable else \
            {"queries": 0, "answered": 0, "unanswered": [], "shards": len(searcher.shards), "seconds": 0.0,
             "timing": None, "qps": None}
        started = time.perf_counter()
        ranked = rank_compositions(searcher, queries.negated, queries.encoder, queries.scale, args.hits,
                                   args.not_op, args.fusion_depth, args.dense_depth, warn, note)
        seconds = time.perf_counter() - started
        write_run(ranked, negated_run, args.run_tag)  # as compose writes its run
        lines: dict[str, list[str]] = {}
        for run in (plain_run, negated_run):
            if run.exists():
                for line in run.read_text(encoding="utf-8").splitlines(keepends=True):
                    lines.setdefault(line.split(" ", 1)[0], []).append(line)
        with atomic_output(args.output, overwrite=args.overwrite) as target:
            with open(target, "w", encoding="utf-8") as out:
                out.writelines(line for qid in queries.order for line in lines.get(qid, []))
    answered = [c.qid for c in queries.negated if ranked.get(c.qid)]
    plain_ids = {str(s["qid"]) for s in queries.specs}
    total = stats["seconds"] + seconds
    return {**stats, "queries": len(plain_ids) + len(queries.negated), "answered": stats["answered"] + len(answered),
            "unanswered": [q for q in queries.order if q not in lines], "negated": len(queries.negated),
            "negated_seconds": round(seconds, 3), "qps": round(len(queries.order) / total, 2) if total else None}


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
                                     shards=args.shards, dense=args.dense)
        return (f"wrote {len(manifest['shards'])} shard indexes ({manifest['documents']} documents) and "
                f"{Path(args.index) / 'shards.json'}")
    from lsr_lucene.distributed.index import read_manifest
    from lsr_lucene.distributed.search import DistributedSearcher, timing_line
    from lsr_lucene.io.output import refuse_existing
    from lsr_lucene.search.impact import report_unanswered

    refuse_existing(args.output, args.overwrite)
    manifest = read_manifest(args.index)
    # the searchers start (processes, JVMs, shards) while the queries are read or encoded here
    from lsr_lucene.distributed.compose import ComposeShardSearcher

    with DistributedSearcher(args.index, args.num_workers, args.heap_factor, args.threads,
                             wait=False, actor=ComposeShardSearcher) as searcher:
        queries = _queries(args, manifest.get("encoder", {}))
        if queries.negated:
            stats = _search_with_negations(searcher, queries, args)
        else:
            stats = searcher.search_to_run(queries.specs, args.output, hits=args.hits, tag=args.run_tag,
                                           overwrite=args.overwrite, batch_size=args.batch_size)
    report_unanswered(stats["unanswered"], stats["queries"])
    if stats.get("timing"):
        print(timing_line(stats["timing"]))
    if stats.get("negated"):
        print(f"negated topics: {stats['negated']} ranked as compose ranks them in {stats['negated_seconds']:.2f} s")
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
