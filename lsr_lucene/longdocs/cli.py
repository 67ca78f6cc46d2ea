"""Long documents with learned sparse retrieval: segmenting, aggregations (first, rep-max/sum/mean, score-max),
ExactSDM (Lucene window clauses over a positional payload field) and SoftSDM (reranker), after Nguyen et al.
(SIGIR'23, paper 001).

Pipeline (each step cached and resumable under one work directory)::

    lsr-lucene longdocs segment   --corpus C --output W/segments.jsonl [--max-tokens 400] [--max-segments N]
    lsr-lucene longdocs encode    --segments W/segments.jsonl --output W/encoded [--limit N] [--top-k 8]
    lsr-lucene longdocs index     --encoded W/encoded --index W/index-segments        (segments + positional field)
    lsr-lucene longdocs aggregate --encoded W/encoded --method rep-max --segments 3 --index W/index-rep-max-3
                                  (then `lsr-lucene search --index W/index-rep-max-3 ...`)
    lsr-lucene longdocs fit       --index W/index-segments --method exact-sdm --collection fire2017 --segments 3
                                  (λ fitted on the training half, saved in W/index-segments/sdm_lambdas.json)
    lsr-lucene longdocs search    --index W/index-segments --method score-max|exact-sdm|soft-sdm --segments 3
                                  (--topics T | --collection C) --output run [--lambdas a,b,c] [--full]

Segment ids are ``docid@@k`` (k from 0). "First k segments" means segment numbers < k. This module holds the
command line; the library is in ``segment``, ``store`` (encoded segments on disk), ``queries``, ``indexes``,
``runs``, ``sdm``, ``softsdm``, ``sdm_features``, ``segment_search`` and ``collections`` (the collection loaders).
The sweep behind runs/longdocs is a study beside the package: ``python -m scripts.longdocs.experiment`` from a
checkout (scripts/run_longdocs.sh).
"""
from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from lsr_lucene import cli_options as opt
from lsr_lucene.encode.cli import add_dtype_arguments
from lsr_lucene.errors import InputError
from lsr_lucene.longdocs import segment
from lsr_lucene.longdocs.collections import QUERY_MODES, Collection, load_collection
from lsr_lucene.longdocs.indexes import AGGREGATIONS, build_aggregate_index, build_segment_index
from lsr_lucene.longdocs.queries import QUERY_COMBINE, Query, encode_queries, split_queries
from lsr_lucene.io.runs import write_run
from lsr_lucene.longdocs.runs import with_tail
from lsr_lucene.longdocs.sdm_features import SdmSettings
from lsr_lucene.longdocs.segment import (DEFAULT_MAX_TOKENS, LONG_SENTENCE_MODES, SEGMENT_MAX_LENGTH, Segmenter,
                                         write_segments)
from lsr_lucene.longdocs.segment_search import SegmentSearch, index_encoder_settings
from lsr_lucene.longdocs.store import DEFAULT_SHARD, STATE, encode_segments_dir, encode_topk


def _add_segment_arguments(parser: argparse.ArgumentParser) -> None:
    """Segmentation options of ``longdocs segment``."""
    opt.add_number(parser, "--max-tokens", kind=opt.POSITIVE_INT, default=DEFAULT_MAX_TOKENS,
                        help="segment size limit in model (WordPiece) tokens (default 400)")
    opt.add_number(parser, "--max-segments", kind=opt.POSITIVE_INT, default=None,
                        help="keep at most this many segments per document (default: all)")
    parser.add_argument("--long-sentences", choices=LONG_SENTENCE_MODES, default="own",
                        help="a sentence over --max-tokens: its own segment (paper; the encoder truncates it) "
                             "or split into --max-tokens pieces")
    opt.add_encoder(parser, "splade-tiny", "sparse encoder whose tokenizer counts tokens", dest="model")


def _segmenter_from_args(args: argparse.Namespace) -> Segmenter:
    """A Segmenter with the model's tokenizer and the command-line limits."""
    from transformers import AutoTokenizer

    from lsr_lucene.encode.models import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve(args.model))
    tokenizer.model_max_length = 1 << 30  # we count tokens of whole sentences; silence the length warning
    return Segmenter(tokenizer, max_tokens=args.max_tokens, max_segments=args.max_segments,
                     long_sentences=args.long_sentences)


def _cmd_segment(argv: list[str]) -> int:
    """CLI: ``--corpus SPEC --output segments.jsonl`` (a corpus that ``lsr-lucene encode`` reads)."""
    from lsr_lucene.io.corpus import count_docs, read_corpus

    parser = opt.Parser(prog="lsr-lucene longdocs segment", description=segment.__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, help="documents: JSONL/TSV file, BEIR folder or irds:<id>")
    opt.add_output(parser, "segments JSONL to write")
    _add_segment_arguments(parser)
    opt.add_overwrite(parser)
    args = parser.parse_args(argv)
    segmenter = _segmenter_from_args(args)
    counts = write_segments(read_corpus(args.corpus), segmenter, args.output, overwrite=args.overwrite,
                            total=count_docs(args.corpus))
    print(f"wrote {counts['segments']} segments of {counts['documents']} documents to {args.output} "
          f"({counts['empty_documents']} empty documents, {counts['long_segments']} segments over "
          f"{args.max_tokens} tokens)")
    return 0


def _cmd_encode(argv: list[str]) -> int:
    from lsr_lucene.encode.encoder import SparseEncoder

    parser = opt.Parser(prog="lsr-lucene longdocs encode",
                        description="encode segments: vectors and per-position weights "
                                    "(resumable); --top-k adds the SoftSDM store")
    parser.add_argument("--segments", required=True, help="segments JSONL from `longdocs segment`")
    opt.add_output(parser, "folder for vectors/, tokens/, soft/ (resumable)")
    opt.add_encoder(parser, "splade-tiny", "sparse encoder: registry name, HF id or local model folder", dest="model")
    opt.add_max_length(parser, SEGMENT_MAX_LENGTH, "segment truncation in tokens: above `longdocs segment "
                                                   "--max-tokens` (400), so that no segment is cut (encode's 256 "
                                                   "would cut most)")
    opt.add_number(parser, "--scale", kind=opt.POSITIVE_NUMBER, default=100, help="weights become round(w × scale)")
    opt.add_number(parser, "--top-k", kind=opt.NON_NEGATIVE_INT, default=0,
                        help="SoftSDM: also store each position's top-k MLM terms (0: none; rerun with --top-k on an "
                             "encoded directory to add them afterwards)")
    opt.add_number(parser, "--limit", default=None, help="encode only the first N segments of each document")
    opt.add_number(parser, "--shard-size", default=DEFAULT_SHARD, help="segments per shard")
    opt.add_batch_size(parser, 16)
    opt.add_threads(parser, None)
    add_dtype_arguments(parser)
    opt.add_overwrite(parser, "start afresh: remove an existing (complete or partial) encoding of --output first "
                              "(without it, an existing encoding is resumed or extended)")
    args = parser.parse_args(argv)
    from lsr_lucene.io.output import make_parent

    state = Path(args.output) / STATE
    complete = state.is_file() and json.loads(state.read_text()).get("complete")
    if complete and not args.overwrite and not args.top_k:  # other verbs refuse an existing output too
        raise InputError(f"{args.output} holds a complete encoding; pass --overwrite to encode again (or --top-k K "
                         "to add the SoftSDM store)")
    if args.overwrite and Path(args.output).exists():
        import shutil

        shutil.rmtree(args.output)
    elif state.is_file() and not complete:
        print(f"resuming the partial encoding in {args.output}", file=sys.stderr)
    make_parent(args.output)  # a folder that cannot be made fails before the model loads
    encoder = SparseEncoder(model=args.model, max_length=args.max_length, threads=args.threads, dtype=args.dtype)
    if args.top_k and state.exists() and json.loads(state.read_text()).get("complete"):
        info = encode_topk(args.segments, args.output, encoder, top_k=args.top_k, shard_size=args.shard_size,
                           batch_size=args.batch_size)
        print(f"added top-{args.top_k} entries of {info['segments']} segments to {args.output}/soft")
        return 0
    info = encode_segments_dir(args.segments, args.output, encoder, scale=args.scale, top_k=args.top_k,
                               shard_size=args.shard_size, batch_size=args.batch_size, limit=args.limit)
    print(f"encoded {info['segments']} segments into {args.output} ({info['encoded_now']} now, {info['seconds']}s)")
    return 0


def _cmd_index(argv: list[str]) -> int:
    parser = opt.Parser(prog="lsr-lucene longdocs index",
                        description="index encoded segments (docid@@k) with the positional weight field")
    opt.add_input(parser, "folder from `longdocs encode`", "--encoded", dest="encoded")
    opt.add_index(parser, "segment index folder to create")
    opt.add_threads(parser, help="indexing threads")
    opt.add_overwrite(parser)
    args = parser.parse_args(argv)
    meta = build_segment_index(args.encoded, args.index, threads=args.threads, overwrite=args.overwrite)
    print(f"indexed {meta['indexed']} segments into {args.index} ({meta['size_bytes'] / 1e6:.1f} MB)")
    return 0


def _cmd_aggregate(argv: list[str]) -> int:
    parser = opt.Parser(prog="lsr-lucene longdocs aggregate",
                        description="one vector per document from its first K segment vectors, indexed")
    opt.add_input(parser, "folder from `longdocs encode`", "--encoded", dest="encoded")
    parser.add_argument("--method", required=True, choices=AGGREGATIONS, help="how segment vectors combine")
    parser.add_argument("--segments", default="all", help="first K segments (default: all)")
    opt.add_index(parser, "index folder to create")
    opt.add_threads(parser, help="indexing threads")
    opt.add_overwrite(parser)
    args = parser.parse_args(argv)
    meta = build_aggregate_index(args.encoded, args.method, _parse_k(args.segments), args.index,
                                 threads=args.threads, overwrite=args.overwrite)
    print(f"indexed {meta['indexed']} {args.method} document vectors into {args.index}; "
          "search it with `lsr-lucene search`")
    return 0


def _add_query_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    opt.add_topics(source, help="topics (TSV/JSONL/TREC/irds:...): one query text each")
    source.add_argument("--collection", help="fire2017, msmarco-document, robust04 or a FIRE-style folder: "
                                             "multi-passage queries (e.g. FIRE citation contexts)")
    parser.add_argument("--data", default=None, help="data root holding fire2017/ (default ../shared/data)")
    parser.add_argument("--query-mode", choices=QUERY_MODES, default="citations",
                        help="FIRE 2017 queries: citation windows, the first 512 tokens, or both")
    parser.add_argument("--query-combine", choices=QUERY_COMBINE, default="sum",
                        help="combine the passage vectors of a multi-passage query by sum or max")
    opt.add_encoder(parser, None, "query encoder (default: the model recorded in the index)")


def _add_sdm_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--segments", default="all", help="use the first K segments of each document (default all)")
    opt.add_number(parser, "--ngram", default=2, help="query n-gram size for the SDM clauses")
    opt.add_number(parser, "--width", default=8, help="unordered window width")
    opt.add_number(parser, "--max-clauses", default=None, help="keep the n-grams of largest weight only")
    parser.add_argument("--pooling", choices=("feature", "segment"), default="feature",
                        help="max-pool each potential over segments (paper's code) or the combined score")
    opt.add_number(parser, "--rerank", default=1000, help="rerank this many score-max documents")
    opt.add_input(parser, "encoded segments folder from `longdocs encode` (SoftSDM: top-k store, tokens)", "--encoded",
                  dest="encoded", required=False, default=None)
    opt.add_threads(parser, help="search threads")


def fit_metric(name: str) -> str:
    """``--metric``/``--fit-metric``: eval's measure names (``map``, ``ndcg_cut_10``, ``ndcg_cut.10``,
    ``nDCG@10``) -> the fitting code's key ("map", "ndcg@10"); InputError for other measures."""
    from lsr_lucene.eval.trec import canonical_measure

    try:
        measure = canonical_measure(name)
    except InputError:
        measure = None
    found = {("map", None): "map", ("ndcg_cut", "10"): "ndcg@10"}.get(measure) if measure is not None else None
    if found is None:
        raise InputError(f"--metric must be map or ndcg_cut_10 (eval's names; nDCG@10 too), got {name!r}")
    return found


def _parse_k(value: str) -> int | None:
    if value in ("all", "", None):
        return None
    try:
        k = int(value)
    except ValueError:
        raise InputError(f"--segments must be a positive integer or 'all', got {value!r}") from None
    if k < 1:
        raise InputError(f"--segments must be a positive integer or 'all', got {value!r}")
    return k


def _load_queries(args) -> tuple[dict[str, Query], Collection | None]:
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.encode.precision import note_documents_precision
    from lsr_lucene.io.topics import read_topics

    settings = index_encoder_settings(args.index)
    if args.collection:  # the queries are read (and checked) before the model loads
        coll = load_collection(args.collection, args.query_mode, args.data)
        texts = coll.queries
    else:
        coll = None
        texts = {q: [t] for q, t in read_topics(args.topics).items()}
    from lsr_lucene.search.impact import query_model_name

    encoder = SparseEncoder(model=query_model_name(args.index, settings, args.encoder), threads=args.threads)
    note_documents_precision(settings.get("dtype"))  # queries are always encoded in fp32
    return encode_queries(texts, encoder), coll


def _cmd_search(argv: list[str]) -> int:
    from lsr_lucene.io.output import refuse_existing
    from lsr_lucene.longdocs.sdm import load_lambdas, parse_lambdas, score_documents

    parser = opt.Parser(prog="lsr-lucene longdocs search",
                        description="score-max, ExactSDM or SoftSDM over a segment index; one hit "
                                    "per document in the run")
    opt.add_index(parser, "segment index from `longdocs index`")
    parser.add_argument("--method", required=True, choices=("score-max", "exact-sdm", "soft-sdm"),
                        help="how segments' scores make a document's")
    opt.add_output(parser, "TREC run file to write")
    opt.add_hits(parser)
    parser.add_argument("--lambdas", default=None, help="λ_T,λ_O,λ_U (default: the fitted ones saved in the index)")
    parser.add_argument("--full", action="store_true", help="ExactSDM as one Lucene query over all segments "
                                                            "(segment pooling) instead of reranking")
    opt.add_overwrite(parser)
    _add_query_arguments(parser)
    _add_sdm_arguments(parser)
    args = parser.parse_args(argv)
    refuse_existing(args.output, args.overwrite)
    k = _parse_k(args.segments)
    queries, _ = _load_queries(args)
    settings = SdmSettings(args.ngram, args.width, args.max_clauses)
    search = SegmentSearch(args.index, queries, args.query_combine, k, settings, args.threads)
    if args.method == "score-max":
        write_run(search.score_max(), args.output, "score-max", overwrite=args.overwrite, hits=args.hits)
    else:
        kind = args.method.split("-")[0]
        if args.lambdas:
            lambdas = parse_lambdas(args.lambdas)
        else:
            lambdas = load_lambdas(args.index, f"{args.method}/{args.pooling}/k={args.segments}")
        if args.full:
            if kind != "exact":
                raise InputError("--full is for exact-sdm (SoftSDM needs the top-k store: it only reranks)")
            search.full_exact_sdm(lambdas, args.output, args.hits, overwrite=args.overwrite)
        else:
            feats = search.features(kind, args.rerank, args.encoded)
            first = search.score_max()
            scores = {q: with_tail(score_documents(f, lambdas, k, args.pooling), first[q], args.hits)
                      for q, f in feats.items()}
            write_run(scores, args.output, args.method, overwrite=args.overwrite, hits=args.hits)
    print(f"wrote {args.output}")
    return 0


def _cmd_fit(argv: list[str]) -> int:
    from lsr_lucene.eval.trec import read_qrels
    from lsr_lucene.longdocs.sdm import LAMBDAS_FILE, fit_lambdas, save_lambdas

    parser = opt.Parser(prog="lsr-lucene longdocs fit",
                        description="fit ExactSDM/SoftSDM λ on training queries; saved in the index")
    opt.add_index(parser, "segment index from `longdocs index`")
    parser.add_argument("--method", required=True, choices=("exact-sdm", "soft-sdm"), help="the model fitted")
    parser.add_argument("--qrels", default=None, help="qrels of the training queries (default: the collection's)")
    parser.add_argument("--train", choices=("half", "all"), default="half",
                        help="fit on the fixed half (sorted ids, even positions) or on every judged query")
    parser.add_argument("--metric", type=fit_metric, default="map", metavar="MEASURE",
                        help="measure the fit maximises: map or ndcg_cut_10, in eval's names (nDCG@10 too)")
    opt.add_overwrite(parser, "replace λ already fitted with the same method, pooling and segments "
                              "(without it, they are refused)")
    _add_query_arguments(parser)
    _add_sdm_arguments(parser)
    args = parser.parse_args(argv)
    key = f"{args.method}/{args.pooling}/k={args.segments}"
    lambdas_file = Path(args.index) / LAMBDAS_FILE
    if not args.overwrite and lambdas_file.is_file() and key in json.loads(lambdas_file.read_text()):
        raise InputError(f"{lambdas_file}: λ for {key} already fitted; pass --overwrite to refit them")
    k = _parse_k(args.segments)
    if args.topics and not args.qrels:
        raise InputError("--qrels is required with --topics")
    qrels = read_qrels(args.qrels) if args.qrels else None  # read before the queries are encoded
    queries, coll = _load_queries(args)
    qrels = qrels if qrels is not None else (coll.qrels if coll else None)
    if not qrels:
        raise InputError(f"{args.collection}: no qrels; pass --qrels")
    judged = [q for q in queries if q in qrels]
    train = split_queries(judged)[0] if args.train == "half" else sorted(judged)
    search = SegmentSearch(args.index, {q: queries[q] for q in train}, args.query_combine, k,
                           SdmSettings(args.ngram, args.width, args.max_clauses), args.threads)
    feats = search.features(args.method.split("-")[0], args.rerank, args.encoded)
    fitted = fit_lambdas(feats, qrels, k=k, pooling=args.pooling, metric=args.metric)
    fitted.update({"ngram": args.ngram, "width": args.width, "query_combine": args.query_combine})
    path = save_lambdas(args.index, key, fitted)
    print(f"λ_T={fitted['lambda_T']:.4g} λ_O={fitted['lambda_O']:.4g} λ_U={fitted['lambda_U']:.4g} "
          f"(training {args.metric} {fitted['train_' + args.metric]:.4f}, unigram only "
          f"{fitted['train_' + args.metric + '_unigram_only']:.4f}) saved in {path}")
    return 0


MOVED_EXPERIMENT = ("the long-document sweep left the package: run it from a checkout, "
                    "python -m scripts.longdocs.experiment --collection fire2017 ... (scripts/run_longdocs.sh)")
COMMANDS = {"segment": _cmd_segment, "encode": _cmd_encode, "index": _cmd_index, "aggregate": _cmd_aggregate,
            "search": _cmd_search, "fit": _cmd_fit}


def usage() -> str:
    """``lsr-lucene longdocs --help``: what it does and its commands, each with its one-line purpose."""
    purposes = {"segment": "split long documents into segments (docid@@k)",
                "encode": "encode segments: vectors and per-position weights",
                "index": "index encoded segments with the positional weight field",
                "aggregate": "one vector per document from its first K segments, indexed",
                "search": "score-max, ExactSDM or SoftSDM over a segment index",
                "fit": "fit ExactSDM/SoftSDM weights on training queries"}
    lines = ["usage: lsr-lucene longdocs <command> [options]   (lsr-lucene longdocs <command> --help for its options)",
             "", textwrap.fill(opt.summary(__doc__), 100), "", "commands:"]
    return "\n".join(lines + [f"  {name:<11} {purposes[name]}" for name in COMMANDS]
                     + ["", "the segment-count sweep: python -m scripts.longdocs.experiment (from a checkout)"])


def main(argv: list[str] | None = None) -> int:
    """``lsr-lucene longdocs <command> ...``: dispatch to the subcommands."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-v", "--verbose"):  # longdocs -v <command>: the same as <command> -v
        argv = [*argv[1:2], argv[0], *argv[2:]]
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] == "experiment":  # issue 66: the sweep left the package
        raise InputError(MOVED_EXPERIMENT)
    if argv[0] not in COMMANDS:
        raise InputError(f"unknown longdocs command {argv[0]!r} (known: {', '.join(COMMANDS)})")
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
