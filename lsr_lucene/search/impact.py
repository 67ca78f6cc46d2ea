"""Impact search: encode or read the queries, search them as plain specs, write the TREC run.

Queries are encoded on the fly (any registry name, HF id or local model) or read
pre-encoded (JSONL vectors or Anserini's repeated-token TSV). Search runs as a batch
inside the JVM (``io.github.lsrlucene.search.BatchSearcher``), which writes the run file
itself: scores are the exact dot product of the quantised query and document vectors.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Mapping, Sequence

from lsr_lucene.errors import InputError
from lsr_lucene.index.impact import read_index_metadata
from lsr_lucene.io.output import refuse_existing

DEFAULT_HITS = 1000


def index_settings(index: str | Path) -> dict:
    """Encoder settings recorded when the index's vectors were made (model, scale, ...); InputError for an index of
    another kind (a BM25 or distributed index)."""
    from lsr_lucene.index.kind import IMPACT, require_index_kind

    require_index_kind(index, IMPACT, "impact search", must_exist=False)  # a missing one: {} (the searcher says so)
    return read_index_metadata(index).get("encoder", {})


def query_model_name(index: str | Path, settings: Mapping, given: object = None, how: str = "--encoder") -> str:
    """The model that encodes query texts for ``index``: ``given``, else the one the index records. An index that
    records none (built by Pyserini or Anserini, or from vectors moved without their record) is one InputError that
    asks for it: a guessed model would search with the wrong vocabulary and weights, silently."""
    model = given if given is not None else settings.get("model")
    if not model and not Path(index).is_dir():
        raise InputError(f"{index}: no such index directory")
    if not model:
        raise InputError(f"{index}: this index records no query encoder (built by Pyserini or Anserini, or from "
                         f"vectors without their record): name the model that encoded its documents with {how} "
                         f"NAME|DIR (a registry name such as splade-tiny, a Hugging Face id or a local folder; Pyserini's "
                         f"--encoder), or give pre-encoded queries (--encoder FILE, --query-vectors FILE)")
    return str(model)


ENCODER_SETTINGS = ("activation", "pooling", "epsilon")  # what an index records of its encoder, which queries follow


def query_encoder_for(index: str | Path, settings: Mapping, given: object = None, how: str = "--encoder",
                      query_max_length: int | None = None, threads: int | None = None):
    """The one factory of the ``SparseEncoder`` that encodes query texts for ``index`` (search, ImpactSearcher,
    ComposeSearcher, distributed search): the ``given`` model or the one the index records (``query_model_name``),
    with the activation, pooling and epsilon that ``settings`` (``index_settings``) record; queries always fp32."""
    from lsr_lucene.encode.encoder import SparseEncoder

    model = query_model_name(index, settings, given, how)
    options = {k: settings[k] for k in ENCODER_SETTINGS if settings.get(k) is not None}
    if query_max_length:
        options["query_max_length"] = int(query_max_length)
    return SparseEncoder(model=model, threads=threads, **options)


def encode_topics(topics: Mapping[str, str], encoder, scale: float) -> dict[str, dict[str, int]]:
    """Encode query texts with ``encoder`` (``query_encoder_for``; always in fp32: ``encode_queries``) and quantise
    them (signs kept) with the index's scale."""
    from lsr_lucene.io.vectors import quantise_query

    qids = list(topics)
    texts = [topics[q] for q in qids]
    warn_truncated(encoder, texts)
    vectors = encoder.encode_queries(texts)
    return {qid: quantise_query(vec, scale) for qid, vec in zip(qids, vectors)}


def warn_truncated(encoder, texts: list[str], option: str = "--query-max-length", noun: str = "queries") -> int:
    """One warning line when queries are longer than the encoder's query truncation (``query_max_length``
    tokens, special tokens included): how many, the longest, and the option that sets the limit."""
    limit = int(encoder.query_max_length)
    tokenizer = getattr(encoder, "tokenizer", None)
    if tokenizer is None or not texts:
        return 0
    import warnings

    with warnings.catch_warnings():  # transformers' "longer than the model maximum" note: we say it below
        warnings.simplefilter("ignore")
        lengths = [len(ids) for ids in tokenizer(list(texts), truncation=False, return_attention_mask=False,
                                                 return_token_type_ids=False, verbose=False)["input_ids"]]
    over = [n for n in lengths if n > limit]
    if over:
        print(f"warning: {len(over)} of {len(texts)} {noun} are longer than {limit} tokens (the longest: "
              f"{max(over)}) and were truncated; {option} sets the limit", file=sys.stderr)
    return len(over)


def plain_specs(query_vectors: Mapping[str, Mapping[str, float]]) -> list[dict]:
    """One query spec per query: a (signed) weighted term query over the impact field."""
    return [{"qid": qid, "terms": dict(vector)} for qid, vector in query_vectors.items()]


def run_specs(index: str | Path, specs: list[dict], output: str | Path, hits: int = DEFAULT_HITS,
              threads: int = 2, tag: str = "lsr_lucene", overwrite: bool = False, model: str | None = None,
              hand_written: bool = True, heap_factor: float = 1.0) -> list[str]:
    """Search query specs as one batch in the JVM and write the run; returns qids that got no hits
    (``heap_factor`` < 1: approximate block-max search, see ``SpecSearcher.heap_factor``).

    Query terms the index lacks are named (warning lines) unless they are terms of ``model``'s vocabulary (default:
    the index's model). Specs that a model made (``hand_written`` false) are checked only when that vocabulary is
    at hand: without it, every expansion term the collection lacks (normal) would be named."""
    from lsr_lucene.search.spec_searcher import SpecSearcher

    refuse_existing(output, overwrite)
    model = model or read_index_metadata(index).get("encoder", {}).get("model")
    with SpecSearcher(str(index), heap_factor=heap_factor) as searcher:  # a temporary run, renamed when complete
        return specs_to_run(searcher, specs, output, hits, threads, tag, model, hand_written)


def specs_to_run(searcher, specs: Sequence[Mapping], output: str | Path, hits: int = DEFAULT_HITS, threads: int = 2,
                 tag: str = "lsr_lucene", model: str | None = None, hand_written: bool = True) -> list[str]:
    """``run_specs`` on an open ``SpecSearcher`` (``ImpactSearcher.search_to_run``, the search command's way):
    unknown terms named, the run written, the qids that got no hits returned."""
    from lsr_lucene.search.unknown_terms import model_vocabulary, report_unknown_terms

    searchable = [spec for spec in specs if spec.get("terms") or spec.get("pairs") or spec.get("windows")]
    if hand_written or model_vocabulary(model) is not None:
        report_unknown_terms(searcher, searchable, model)
    searcher.search_to_run(searchable, str(output), k=hits, threads=threads, tag=tag)
    answered_qids = answered_in_order(output, [str(spec["qid"]) for spec in searchable])
    return [spec["qid"] for spec in specs if spec["qid"] not in answered_qids]


def answered_in_order(run: str | Path, qids: Sequence[str]) -> set[str]:
    """The ``qids`` that have lines in ``run``, a run our searcher wrote (each query's lines together, in the order
    of ``qids``): found in one forward scan of the bytes, not by parsing every line (3.45M at k=1000 on the 3,452 NQ
    questions took longer than their search)."""
    import mmap

    found: set[str] = set()
    with open(run, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return found
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            at = 0  # where the last query found starts: the next one's lines come after it
            for qid in qids:
                prefix = qid.encode("utf-8") + b" Q0 "
                where = 0 if at == 0 and data[:len(prefix)] == prefix else data.find(b"\n" + prefix, at)
                if where >= 0:
                    found.add(qid)
                    at = where + 1
    return found


def report_unanswered(missing: list[str], total: int) -> None:
    """Tell the user which queries produced no hits: a counted, documented skip. (Not "no term in the index": an
    empty query, or one whose only known terms weigh below zero, gets none either.)"""
    if missing:
        shown = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
        print(f"warning: {len(missing)} of {total} queries got no hits (empty, or no term of theirs gives a document "
              f"of this index a positive score): {shown}", file=sys.stderr)
