"""Pyserini-style Python searcher for negated and set-compositional queries: ``ComposeSearcher``.

``ComposeSearcher(index_dir).search("films about dogs but not cartoons", k=10)`` parses the text with the cue parser
(:mod:`lsr_lucene.compose.negation_parser`; a text in the explicit syntax, ``films -cartoons``, by that syntax, whose
exclusions remove every document whose text contains them: :mod:`lsr_lucene.compose.exclusion`), encodes the atomic
texts, combines them with the selected operations (default: ``fusion-gated`` on not nodes, ``cpt`` on and,
``maxpool`` on or) and searches the impact index; a dict is a composition tree ``{"op": "not"|"and"|"or", "a": ...,
"b": ...}`` as ``compose --queries`` lines carry it (or such a line itself: ``{"query": tree, "text"?}``). It is the
code path of ``lsr-lucene compose`` (the command builds one of these), so the hits equal that command's run for the
same query and options: same documents, order (ties by docid) and scores as the run writes them (six decimals).
``parse`` shows the cue decisions, ``explain`` why each top document scored what it did (both legs, gate, penalty,
fused score). When the index holds dense embeddings (``<index>/dense``, :mod:`lsr_lucene.compose.dense_leg`), the
default blends their cosine with A's text into A's scores (``dense``: ``auto``, ``none`` or a folder; ``dense_leg``
says which).

Importing this module starts neither the JVM nor torch: the index is opened and the encoder loaded on first use.
One searcher can be shared by threads: it is loaded once under a lock, the encoder (an HF fast tokenizer, not
thread-safe) runs under another, and nothing else changes per call (each call passes its thread count on).
"""
from __future__ import annotations

import threading
import warnings
from pathlib import Path
from typing import Any, Mapping, Sequence

from lsr_lucene.compose.compositions import Composition, parse_topics
from lsr_lucene.compose.execute import DEFAULT_FUSION_DEPTH, compose, execute
from lsr_lucene.compose.operations import (DEFAULT_DENSE_WEIGHT, DEFAULT_GATE, DEFAULT_NEIGHBOUR_WEIGHT, Plan, Settings,
                                           plan_inputs)
from lsr_lucene.compose.tree import tree_from_json
from lsr_lucene.io.topics import refuse_duplicate_qids
from lsr_lucene.errors import InputError


class ComposeSearcher:
    """Search an lsr_lucene impact index with negated / composed queries, Pyserini style (``search``,
    ``batch_search``, hits with ``.docid`` and ``.score``)."""

    def __init__(self, index_dir: str | Path, encoder: Any = None, operation: str | None = None,
                 not_op: str | None = None, and_op: str | None = None, or_op: str | None = None,
                 depth: int = DEFAULT_FUSION_DEPTH, lam: float | None = None, gate: float = DEFAULT_GATE,
                 top_pairs: int = 5, pair_weight: float = 1.0, no_expansion: bool = False,
                 no_term_weights: bool = False, scale: float | None = None, query_max_length: int | None = None,
                 threads: int | None = None, vectors: str | Path | None = None, dense: str | Path | None = "auto",
                 dense_weight: float = DEFAULT_DENSE_WEIGHT, neighbour_weight: float = DEFAULT_NEIGHBOUR_WEIGHT,
                 searcher: Any = None, absence: bool = True, dense_depth: int | None = None):
        """Options as ``lsr-lucene compose`` has them, with its defaults: ``operation`` for every node type it
        applies to, ``not_op`` / ``and_op`` / ``or_op`` per node type; ``depth`` (``--fusion-depth``): hits per
        fused leaf that form the candidates; ``lam`` (λ), ``gate`` (fusion-gated), ``top_pairs`` / ``pair_weight``
        (cpt); encoder ablations ``no_expansion`` / ``no_term_weights``. ``encoder``: None (the index's model,
        else splade-tiny), a model name / HF id / local folder, or an object with ``encode_queries(texts)``
        (a ``SparseEncoder``) or a ``QueryEncoder``; ``scale`` quantises (default: the index's); ``threads``:
        the encoder's torch threads. ``vectors``: score by exact in-memory dot products over these document
        vectors instead of Lucene (``--vectors``). ``dense`` (``--dense``): ``auto`` uses ``<index>/dense`` when it
        exists, ``none`` no dense leg, else an embeddings folder of ``lsr-lucene dense encode``; ``dense_weight``
        (``--dense-weight``): w of the blend (0: off); ``neighbour_weight`` (``--neighbour-weight``): v of the
        cosine with the best A match (0: off). ``absence``: the default's fused not nodes waive the penalty of
        candidates whose stored text states B absent (:mod:`lsr_lucene.compose.absence`) and penalise those whose text
        contains a short-term B (:mod:`lsr_lucene.compose.penalty`); False: no stored text is read (neither rule).
        ``dense_depth`` (``--dense-depth``): how many of the dense leg's own nearest documents to A's text join a
        negated query's candidates (None: ``depth``; 0: none; from the leg's approximate HNSW index, else an exact
        scan of the embeddings).
        ``searcher``: an open ``SpecSearcher`` over ``index_dir`` to share (e.g. an ``ImpactSearcher``'s, as the
        server does) instead of opening the index again; searched exactly and left open by :meth:`close`."""
        from lsr_lucene.compose.dense_leg import dense_location
        from lsr_lucene.search.impact import index_settings

        if not Path(index_dir).is_dir():
            raise InputError(f"{index_dir}: no such index directory")
        if no_expansion and no_term_weights:
            raise InputError("no_expansion and no_term_weights are two different ablations; choose one")
        if int(depth) < 1:
            raise InputError(f"depth (--fusion-depth) must be >= 1, got {depth}")
        if dense_depth is not None and int(dense_depth) < 0:
            raise InputError(f"dense_depth (--dense-depth) must be >= 0, got {dense_depth}")
        self.dense_depth = None if dense_depth is None else int(dense_depth)
        self.index_dir = str(index_dir)
        self.dense_path = dense_location(index_dir, dense)
        self.settings = Settings.of(operation, not_op, and_op, or_op, lam=lam, top_pairs=int(top_pairs),
                                    pair_weight=float(pair_weight), gate=float(gate), dense_weight=float(dense_weight),
                                    dense=self.dense_path is not None, neighbour_weight=float(neighbour_weight),
                                    absence=bool(absence))
        if self.dense_path is None and (dense is None or str(dense) == "auto") and self.settings.not_is_default():
            import warnings

            from lsr_lucene.compose.dense_leg import MissingDenseLegWarning, missing_note

            # never a silently weaker default (issue 51): the Python API, PyTerrier's composer and the server say it
            warnings.warn(missing_note(self.index_dir).removeprefix("note: "), MissingDenseLegWarning, stacklevel=2)
        self.depth = int(depth)
        self._info = index_settings(self.index_dir)
        self.scale = scale or self._info.get("scale") or 100
        self.mode = "no-expansion" if no_expansion else "no-term-weights" if no_term_weights else "full"
        self._encoder_spec = encoder
        self._query_max_length = query_max_length
        self._threads = threads
        self._vectors = vectors
        self._shared_searcher = searcher
        self._encoder = None
        self._backend = None
        self._dense = None
        self._load_lock = threading.RLock()  # the lazily made encoder, backend and dense leg: made once
        self._encode_lock = threading.Lock()  # the query encoder's tokenizer is not thread-safe

    # ---------------------------------------------------------------------------------------------- resources

    @property
    def query_encoder(self):
        """The :class:`~lsr_lucene.compose.query_encoder.QueryEncoder` (loaded on first use)."""
        with self._load_lock:
            if self._encoder is None:
                self._encoder = self._make_encoder()
            return self._encoder

    def _make_encoder(self):
        from lsr_lucene.compose.query_encoder import QueryEncoder
        from lsr_lucene.encode.precision import note_documents_precision

        spec = self._encoder_spec
        if isinstance(spec, QueryEncoder):
            encoder = spec
        elif spec is None or isinstance(spec, (str, Path)):
            from lsr_lucene.search.impact import query_encoder_for

            encoder = QueryEncoder(mode=self.mode, encoder=query_encoder_for(
                self.index_dir, self._info, spec, "encoder=", self._query_max_length, self._threads))
        elif hasattr(spec, "encode_queries"):
            encoder = QueryEncoder(mode=self.mode, encoder=spec)
        else:
            raise InputError(f"encoder {type(spec).__name__} has no encode_queries(texts)")
        note_documents_precision(self._info.get("dtype"))  # queries are always encoded in fp32
        return encoder

    @property
    def backend(self):
        """Where plans are searched and scored: the Lucene index, or exact dot products over ``vectors``."""
        with self._load_lock:
            if self._backend is None:
                from lsr_lucene.compose.backends import ExactBackend, LuceneBackend

                self._backend = (ExactBackend(self._vectors) if self._vectors
                                 else LuceneBackend(self.index_dir, 1, searcher=self._shared_searcher))
            return self._backend

    @property
    def dense_leg(self):
        """The :class:`~lsr_lucene.compose.dense_leg.DenseLeg` of the default (None without dense embeddings)."""
        with self._load_lock:
            if self._dense is None and self.dense_path is not None:
                from lsr_lucene.compose.dense_leg import DenseLeg
                from lsr_lucene.index.impact import read_index_metadata

                # one torch thread: small query batches (lsr_lucene.dense.cli.QUERY_THREADS)
                self._dense = DenseLeg(self.dense_path, read_index_metadata(self.index_dir).get("documents"), 1)
            return self._dense

    def settings_with(self, **options) -> Settings:
        """Settings from compose's option names (:meth:`Settings.of`), with this searcher's dense leg."""
        return Settings.of(**options, dense=self.dense_path is not None)

    def close(self) -> None:
        """Release the index (the JVM searcher)."""
        with self._load_lock:
            if self._backend is not None:
                self._backend.close()
                self._backend = None

    def __enter__(self) -> "ComposeSearcher":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---------------------------------------------------------------------------------------------- the code path

    def plans(self, compositions: Sequence[Composition]) -> list[Plan]:
        """The plan (one vector, or fused children) of every composition (texts encoded once, in one batch)."""
        encoder = self.query_encoder
        with self._encode_lock:
            return compose(compositions, self.settings, encoder)

    def rank(self, compositions: Sequence[Composition], plans: Sequence[Plan], k: int = 1000, threads: int = 1,
             warn=None, traces: dict | None = None) -> dict[str, list[tuple[str, float]]]:
        """Ranked (docid, unrounded score) lists of the plans, what ``lsr-lucene compose`` writes; ``warn(qid, why)``
        hears of queries that match nothing; ``traces`` receives fused queries' leaf scores (for explanations).
        ``threads`` 1 searches in memory on the calling thread; more search one JVM batch (a temporary run file)."""
        if int(k) < 1:
            raise InputError(f"k must be >= 1, got {k}")
        if int(threads) < 1:
            raise InputError(f"threads must be >= 1, got {threads}")
        qids = [c.qid for c in compositions]
        needs_dense = any(kind == "dense" for plan in plans for kind, _ in plan_inputs(plan))
        return execute(qids, plans, self.backend, self.scale, int(k), self.depth, warn, traces,
                       self.dense_leg if needs_dense else None, threads=int(threads), dense_depth=self.dense_depth,
                       exclude={c.qid: c.exclude for c in compositions if c.exclude})

    # ---------------------------------------------------------------------------------------------- Pyserini API

    def search(self, query: str | Mapping, k: int = 10) -> list:
        """Top-k hits of one query (text through the cue parser, or a composition tree), best first."""
        return self.batch_search([query], ["q"], k)["q"]

    def batch_search(self, queries: Sequence[str | Mapping], qids: Sequence[str], k: int = 10,
                     threads: int = 1) -> dict[str, list]:
        """Top-k hits of many queries searched with ``threads`` threads: a dict qid → hits."""
        if len(queries) != len(qids):
            raise InputError(f"{len(queries)} queries but {len(qids)} qids")
        qids = [str(q) for q in qids]
        refuse_duplicate_qids(qids, "qids")
        comps = [composition(q, qid) for q, qid in zip(queries, qids)]
        results = self.rank(comps, self.plans(comps), k, threads, warn=_warn)
        return {qid: self._hits(results[qid]) for qid in qids}

    def parse(self, query: str):
        """How a text query is read (the explicit query syntax where it opts in, else the cue parser):
        ``ParseReport`` (tree, fired and rejected cues, ``lines()``)."""
        from lsr_lucene.compose.query_syntax import read_query

        if not isinstance(query, str):
            raise InputError(f"parse takes a text query, got {type(query).__name__}")
        return read_query(query)

    def explain(self, query: str | Mapping, k: int = 10) -> list:
        """Why the top-k documents of one query scored what they did: per document both legs' scores (raw and
        scaled), the gate, the penalty and the fused score (``DocExplanation``; unrounded scores); a query searched
        as one vector gives each term's contribution instead."""
        from lsr_lucene.compose.explain import explain_docs

        comp = composition(query, "q")
        plan = self.plans([comp])[0]
        traces: dict = {}
        ranked = self.rank([comp], [plan], k, warn=_warn, traces=traces)["q"]
        return explain_docs(plan, ranked, self.backend, self.scale, k, traces.get("q"))

    def _hits(self, ranked: Sequence[tuple[str, float]]) -> list:
        """Hits in run order with the scores the run file writes (six decimals)."""
        from lsr_lucene.io.ranking import ordered
        from lsr_lucene.io.runs import format_score
        from lsr_lucene.search.impact_searcher import ImpactHit

        rows = ordered(ranked)
        index = getattr(self.backend, "searcher", None)  # the Lucene backend's SpecSearcher (none: exact vectors)
        lucene = index.lucene_docids([d for d, _ in rows]) if index is not None else [-1] * len(rows)
        raw = index.stored_field if index is not None else _no_raw
        return [ImpactHit(d, float(format_score(s)), int(n), raw) for (d, s), n in zip(rows, lucene)]


def composition(query: str | Mapping, qid: str) -> Composition:
    """A composition from a text (parsed with the cue parser, as ``compose --topics`` does) or a JSON tree
    ``{"op", "a", "b"}`` (or a compositions line ``{"query": tree, "text"?, "exclude"?}``), as ``compose --queries``
    reads it."""
    if isinstance(query, str):
        if not query.strip():
            raise InputError(f"query {qid}: empty query")
        return parse_topics({qid: query})[0]
    if isinstance(query, Mapping):
        from lsr_lucene.compose.exclusion import read_exclusion

        if "query" in query:
            text = query.get("text")
            if text is not None and (not isinstance(text, str) or not text.strip()):
                raise InputError(f"query {qid}: \"text\" must be a non-empty string")
            exclude = None if query.get("exclude") is None else read_exclusion(query["exclude"], f"query {qid}")
            return Composition(qid, tree_from_json(query["query"], f"query {qid}"), text, exclude)
        return Composition(qid, tree_from_json(dict(query), f"query {qid}"))
    raise InputError(f"query {qid}: expected a text or a composition tree (dict), got {type(query).__name__}")


def _warn(qid: str, why: str) -> None:
    warnings.warn(f"query {qid}: {why}; no hits", stacklevel=4)


def _no_raw(_lucene_docid: int) -> None:
    return None
