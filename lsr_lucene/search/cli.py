"""Search an impact index with learned sparse queries and write a TREC run file.

``lsr-lucene search --index DIR --topics SPEC|--query-vectors FILE|--specs FILE --output RUN``, and the
arguments every searching command shares (plain, compositional, long documents). ``--write-specs FILE`` also
writes the query specs searched, for Anserini's SearchCollection (README: "Use from Anserini").
"""
from __future__ import annotations

import argparse
from pathlib import Path

from lsr_lucene.errors import InputError
from lsr_lucene.io.output import refuse_existing
from lsr_lucene.search.impact import (DEFAULT_HITS, encode_topics, index_settings, plain_specs, report_unanswered,
                                      run_specs)


def load_queries(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """Query vectors from --query-vectors, or --topics encoded with the index's (or the given) model."""
    settings = index_settings(args.index)
    if args.query_vectors:
        from lsr_lucene.io.topics import read_query_vectors

        return read_query_vectors(args.query_vectors)
    from lsr_lucene.io.topics import read_topics

    topics = read_topics(args.topics)
    if not topics:
        raise InputError(f"{args.topics}: no topics")
    model = args.encoder or settings.get("model") or "splade-tiny"
    scale = args.scale or settings.get("scale") or 100
    options = {k: settings[k] for k in ("activation", "pooling", "epsilon") if settings.get(k) is not None}
    return encode_topics(topics, model, scale, args.query_max_length, threads=args.threads, dtype=args.dtype,
                         **options)


def add_search_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments shared by every searching command (plain, compositional, long documents)."""
    from lsr_lucene.encode.cli import add_dtype_arguments

    parser.add_argument("--index", required=True, help="impact index directory (lsr-lucene index)")
    parser.add_argument("--output", required=True, help="TREC run file to write")
    parser.add_argument("--hits", type=int, default=DEFAULT_HITS, help="results per query (default 1000)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--run-tag", default=None, help="run tag (last column of the run file)")
    parser.add_argument("--encoder", default=None, help="query encoder: registry name, HF id or local dir "
                                                        "(default: the model recorded in the index)")
    parser.add_argument("--query-max-length", type=int, default=None)
    add_dtype_arguments(parser)  # precision of on-the-fly query encoding
    parser.add_argument("--scale", type=float, default=None, help="query quantisation scale (default: the index's)")
    parser.add_argument("--overwrite", action="store_true")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lsr-lucene search", description=__doc__.splitlines()[0])
    add_search_arguments(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--topics", help="topics: TSV, TREC topic file, JSONL, or an ir_datasets id (irds:...)")
    source.add_argument("--query-vectors", help="pre-encoded queries: JSONL vectors or Anserini repeated-token TSV")
    source.add_argument("--specs", help="query specs JSONL (signed terms, pairs, windows; lsr_lucene.search.specs)")
    parser.add_argument("--write-specs", default=None, metavar="FILE",
                        help="also write the query specs searched (JSONL), e.g. for Anserini's SearchCollection")
    args = parser.parse_args(argv)
    if not Path(args.index).is_dir():
        raise InputError(f"{args.index}: no such index directory")
    refuse_existing(args.output, args.overwrite)
    if args.write_specs:
        refuse_existing(args.write_specs, args.overwrite)
    if args.specs:
        from lsr_lucene.search.specs import read_query_specs

        specs = read_query_specs(args.specs)
        if not specs:
            raise InputError(f"{args.specs}: no query specs")
    else:
        specs = plain_specs(load_queries(args))
    if args.write_specs:
        from lsr_lucene.search.specs import save_query_specs

        n = save_query_specs(specs, args.write_specs, args.overwrite)
        print(f"wrote {args.write_specs} ({n} query specs)")
    missing = run_specs(args.index, specs, args.output, hits=args.hits, threads=args.threads,
                        tag=args.run_tag or "lsr_lucene", overwrite=args.overwrite)
    report_unanswered(missing, len(specs))
    print(f"wrote {args.output} ({len(specs) - len(missing)} queries with hits)")
    return 0

