"""Search an impact index with learned sparse queries and write a TREC run file.

Queries are encoded on the fly (any registry name, HF id or local model) or read
pre-encoded (JSONL vectors or Anserini's repeated-token TSV). Search runs as a batch
inside the JVM (``io.github.lsrlucene.BatchSearcher``), which writes the run file
itself: scores are the exact dot product of the quantised query and document vectors.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Mapping

from .errors import InputError
from .index import read_index_metadata
from .io_utils import refuse_existing

DEFAULT_HITS = 1000


def index_settings(index: str | Path) -> dict:
    """Encoder settings recorded when the index's vectors were made (model, scale, ...)."""
    return read_index_metadata(index).get("encoder", {})


def encode_topics(topics: Mapping[str, str], model: str, scale: float, query_max_length: int | None = None,
                  encoder=None, **encoder_options) -> dict[str, dict[str, int]]:
    """Encode query texts and quantise them (signs kept) with the index's scale."""
    from .encode import SparseEncoder
    from .vectors import quantise_query

    if encoder is None:
        if query_max_length:
            encoder_options["query_max_length"] = query_max_length
        encoder = SparseEncoder(model=model, **encoder_options)
    qids = list(topics)
    vectors = encoder.encode_queries([topics[q] for q in qids])
    return {qid: quantise_query(vec, scale) for qid, vec in zip(qids, vectors)}


def plain_specs(query_vectors: Mapping[str, Mapping[str, float]]) -> list[dict]:
    """One query spec per query: a (signed) weighted term query over the impact field."""
    return [{"qid": qid, "terms": dict(vector)} for qid, vector in query_vectors.items()]


def run_specs(index: str | Path, specs: list[dict], output: str | Path, hits: int = DEFAULT_HITS,
              threads: int = 2, tag: str = "lsr_lucene", overwrite: bool = False) -> list[str]:
    """Search query specs as one batch in the JVM and write the run; returns qids that got no hits."""
    from .queries import SpecSearcher

    refuse_existing(output, overwrite)
    searchable = [spec for spec in specs if spec.get("terms") or spec.get("pairs") or spec.get("windows")]
    with SpecSearcher(str(index)) as searcher:  # writes a temporary run and renames it when complete
        searcher.search_to_run(searchable, str(output), k=hits, threads=threads, tag=tag)
    with open(output) as run:
        answered = {line.split(" ", 1)[0] for line in run}
    return [spec["qid"] for spec in specs if spec["qid"] not in answered]


def report_unanswered(missing: list[str], total: int) -> None:
    """Tell the user which queries produced no hits (no known terms): a counted, documented skip."""
    if missing:
        shown = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
        print(f"warning: {len(missing)} of {total} queries have no term in the index and no hits: {shown}",
              file=sys.stderr)


def load_queries(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """Query vectors from --query-vectors, or --topics encoded with the index's (or the given) model."""
    settings = index_settings(args.index)
    if args.query_vectors:
        from .topics import read_query_vectors

        return read_query_vectors(args.query_vectors)
    from .topics import read_topics

    topics = read_topics(args.topics)
    if not topics:
        raise InputError(f"{args.topics}: no topics")
    model = args.encoder or settings.get("model") or "splade-tiny"
    scale = args.scale or settings.get("scale") or 100
    options = {k: settings[k] for k in ("activation", "pooling", "epsilon") if settings.get(k) is not None}
    return encode_topics(topics, model, scale, args.query_max_length, threads=args.threads, **options)


def add_search_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments shared by every searching command (plain, compositional, long documents)."""
    parser.add_argument("--index", required=True, help="impact index directory (lsr-lucene index)")
    parser.add_argument("--output", required=True, help="TREC run file to write")
    parser.add_argument("--hits", type=int, default=DEFAULT_HITS, help="results per query (default 1000)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--run-tag", default=None, help="run tag (last column of the run file)")
    parser.add_argument("--encoder", default=None, help="query encoder: registry name, HF id or local dir "
                                                        "(default: the model recorded in the index)")
    parser.add_argument("--query-max-length", type=int, default=None)
    parser.add_argument("--scale", type=float, default=None, help="query quantisation scale (default: the index's)")
    parser.add_argument("--overwrite", action="store_true")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lsr-lucene search", description=__doc__.splitlines()[0])
    add_search_arguments(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--topics", help="topics: TSV, TREC topic file, JSONL, or an ir_datasets id (irds:...)")
    source.add_argument("--query-vectors", help="pre-encoded queries: JSONL vectors or Anserini repeated-token TSV")
    args = parser.parse_args(argv)
    if not Path(args.index).is_dir():
        raise InputError(f"{args.index}: no such index directory")
    refuse_existing(args.output, args.overwrite)
    queries = load_queries(args)
    missing = run_specs(args.index, plain_specs(queries), args.output, hits=args.hits, threads=args.threads,
                        tag=args.run_tag or "lsr_lucene", overwrite=args.overwrite)
    report_unanswered(missing, len(queries))
    print(f"wrote {args.output} ({len(queries) - len(missing)} queries with hits)")
    return 0


if __name__ == "__main__":
    from .cli import run_main

    sys.exit(run_main(main))
