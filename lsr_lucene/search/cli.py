"""Search an impact index with learned sparse queries and write a TREC run file (or show the top hits).

``lsr-lucene search --index DIR --topics SPEC|--query TEXT|--query-vectors FILE|--specs FILE [--output RUN|-]``,
and the arguments every searching command shares (plain, compositional, long documents). Without ``--output``
the top hits of each query are printed with the start of their stored text (lsr_lucene.search.cli_output).
``--write-specs FILE`` also writes the query specs searched, for Anserini's SearchCollection (docs/queries.md: "Use from
Anserini").
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Mapping

from lsr_lucene import cli_options as opt
from lsr_lucene.errors import InputError
from lsr_lucene.io.output import refuse_existing
from lsr_lucene.search import cli_output
from lsr_lucene.search.impact import (encode_topics, index_settings, plain_specs, query_encoder_for,
                                      query_model_name, report_unanswered)


def query_model(args: argparse.Namespace, settings: dict) -> str | None:
    """The model that encodes --topics/--query (given, else the index's; an index recording none is an InputError
    asking for --encoder); None for pre-encoded queries whose model the index does not record."""
    if getattr(args, "query_vectors", None) or getattr(args, "specs", None) or (
            args.encoder and Path(args.encoder).is_file()):
        return settings.get("model")
    return query_model_name(args.index, settings, args.encoder)


def read_query_texts(args: argparse.Namespace) -> dict[str, str]:
    """Query texts of --topics, or of --query (repeatable; ids 1, 2, ... as in compose)."""
    if getattr(args, "query", None):
        topics = {str(i): text for i, text in enumerate(args.query, 1)}
        for qid, text in topics.items():
            if not text.strip():
                raise InputError(f"--query {qid}: empty query")
        return topics
    from lsr_lucene.io.topics import read_topics

    topics = read_topics(args.topics)
    if not topics:
        raise InputError(f"{args.topics}: no topics")
    return topics


def load_queries(args: argparse.Namespace,
                 topics: dict[str, str] | None = None) -> Mapping[str, Mapping[str, float]]:
    """Query vectors from --query-vectors, or --topics/--query (``topics``: their texts, when already read) encoded
    with the index's (or the given) model."""
    settings = index_settings(args.index)
    if args.query_vectors:
        from lsr_lucene.io.topics import read_query_vectors

        return read_query_vectors(args.query_vectors)
    from lsr_lucene.encode.precision import note_documents_precision

    topics = read_query_texts(args) if topics is None else topics
    if args.encoder and Path(args.encoder).is_file():
        return pre_encoded(topics, args.encoder)
    scale = args.scale or settings.get("scale") or 100
    encoder = query_encoder_for(args.index, settings, args.encoder, query_max_length=args.query_max_length,
                                threads=args.threads)
    note_documents_precision(settings.get("dtype"))  # queries are always encoded in fp32
    return encode_topics(topics, encoder, scale)


def pre_encoded(topics: dict[str, str], path: str) -> dict[str, dict[str, float]]:
    """Pyserini's ``--topics T --encoder FILE``: the topics' vectors from a query vectors JSONL (by id, else by
    the ``contents`` text as Pyserini's CachedDataQueryEncoder matches them)."""
    from lsr_lucene.io.topics import read_query_vectors, read_topics

    vectors = read_query_vectors(path)
    by_text: dict[str, str] = {}
    if any(q not in vectors for q in topics):
        by_text = {text.strip(): qid for qid, text in read_topics(path).items()} if vectors else {}
    missing = [q for q in topics if q not in vectors and topics[q].strip() not in by_text]
    if missing:
        raise InputError(f"{path}: no vector for {len(missing)} of {len(topics)} topics (first: query {missing[0]})")
    return {q: vectors[q] if q in vectors else vectors[by_text[topics[q].strip()]] for q in topics}


def add_search_arguments(parser: argparse.ArgumentParser, tag: str = "lsr_lucene") -> None:
    """Arguments shared by every searching command (plain, compositional, long documents); ``tag``: the run tag
    the command writes by default, as its help shows it."""
    opt.add_index(parser, "impact index folder (lsr-lucene index)")
    cli_output.add_output_and_hits(parser)
    opt.add_threads(parser, help="search threads")
    opt.add_run_tag(parser, help=f"run tag, the last column of the run file (default: {tag})")
    opt.add_encoder(parser, None, "query encoder: registry name, HF id or local folder (default: the model "
                                  "recorded in the index); a query vectors JSONL file, as in Pyserini, gives the "
                                  "topics' pre-encoded vectors")
    opt.add_number(parser, "--query-max-length", default=None, metavar="N",
                   help="query truncation in tokens (default: the encoder's, 64)")
    opt.add_number(parser, "--scale", kind=opt.POSITIVE_NUMBER, default=None,
                   help="query quantisation scale (default: the index's)")
    opt.add_overwrite(parser)


def note_syntax(texts: dict[str, str]) -> None:
    """One note line when queries are written in compose's explicit syntax (-word, NOT word): plain search encodes
    them as text, with no strict exclusion."""
    import sys

    from lsr_lucene.compose.query_syntax import uses_syntax

    written = [q for q, t in texts.items() if uses_syntax(t)]
    if written:
        n = len(written)
        shown = ", ".join(written[:3]) + (", ..." if n > 3 else "")
        print(f"note: {n} quer{'y' if n == 1 else 'ies'} ({shown}) {'uses' if n == 1 else 'use'} the explicit syntax "
              "(-word, NOT word), which search encodes as plain text; lsr-lucene compose removes the excluded "
              "documents", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = opt.Parser(prog="lsr-lucene search", description=__doc__.splitlines()[0])
    add_search_arguments(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    opt.add_topics(source)
    source.add_argument("--query", action="append", metavar="TEXT",
                        help="a query text (repeatable; ids 1, 2, ...), instead of a topics file")
    source.add_argument("--query-vectors", help="pre-encoded queries: JSONL vectors or Anserini repeated-token TSV")
    source.add_argument("--specs", help="query specs JSONL (signed terms, pairs, windows; lsr_lucene.search.specs)")
    opt.add_retired(parser, "--approximate", "--query-cut")
    opt.add_heap_factor(parser)
    parser.add_argument("--write-specs", default=None, metavar="FILE",
                        help="also write the query specs searched (JSONL), e.g. for Anserini's SearchCollection")
    args = parser.parse_args(argv)
    if not Path(args.index).is_dir():
        raise InputError(f"{args.index}: no such index directory")
    cli_output.resolve(args)
    if args.write_specs:
        refuse_existing(args.write_specs, args.overwrite, directory=False)
    texts = read_query_texts(args) if args.topics or args.query else None  # read once: --topics may be a pipe
    if texts:
        note_syntax(texts)
    if args.specs:
        from lsr_lucene.search.specs import read_query_specs

        specs = read_query_specs(args.specs)
        if not specs:
            raise InputError(f"{args.specs}: no query specs")
    else:
        specs = plain_specs(load_queries(args, texts))
    model = query_model(args, index_settings(args.index))
    if args.write_specs:
        from lsr_lucene.search.specs import save_query_specs

        n = save_query_specs(specs, args.write_specs, args.overwrite)
        print(f"wrote {args.write_specs} ({n} query specs)", file=cli_output.messages(args.output))
    from lsr_lucene.search.impact_searcher import ImpactSearcher

    with cli_output.run_target(args.output) as target:
        with ImpactSearcher(args.index, heap_factor=args.heap_factor) as searcher:  # the Python API's code path
            missing = searcher.search_to_run(specs, target, k=args.hits, threads=args.threads,
                                             tag=args.run_tag or "lsr_lucene", overwrite=args.overwrite, model=model,
                                             hand_written=bool(args.specs))
        report_unanswered(missing, len(specs))
        cli_output.show(target, args.output, args.index, args.hits, texts)
    if cli_output.to_file(args.output):
        print(f"wrote {args.output} ({len(specs) - len(missing)} queries with hits)")
    return 0

