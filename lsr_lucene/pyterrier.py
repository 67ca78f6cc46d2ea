"""PyTerrier transformers over an lsr_lucene impact index: ``ImpactIndex(path).retriever()`` and friends.

``ImpactIndex`` is a factory like ``pyterrier_pisa.PisaIndex``: ``.retriever(num_results=1000)`` (query frame →
result frame, the ``lsr-lucene search`` run's hits), ``.query_encoder()`` (adds ``query_toks``, as pyt_splade's),
``.composer()`` (negation / set compositions, the ``lsr-lucene compose`` run's hits) and ``.scorer()`` (exact impact
re-scoring of a result frame's documents). Each transformer searches a whole frame with one batch call, not one JVM
call per row. Importing this module starts no JVM; the first transform starts ours (lsr_lucene.jvm, one per
process), so lsr_lucene objects must be used before anything starts Terrier's JVM without our jar.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import pyterrier as pt
import pyterrier_alpha as pta

from lsr_lucene.errors import InputError, SetupError
from lsr_lucene.verbosity import redirected

DEFAULT_NUM_RESULTS = 1000


def _check_jvm() -> None:
    """An error naming the fix when another library (Terrier) started this process's JVM without our jar."""
    import jnius_config

    if jnius_config.vm_running and not any("lsr-lucene" in Path(p).name for p in jnius_config.get_classpath()):
        raise SetupError("a JVM without lsr_lucene's jar is already running in this process (PyTerrier's Terrier "
                         "started it?); one JVM per process: create and use lsr_lucene objects first, or use "
                         "pyterrier_pisa's BM25, which needs no Java")


class ImpactIndex:
    """An lsr_lucene impact index for PyTerrier; searchers (JVM, encoder) are opened on first use and shared."""

    def __init__(self, path: str | Path, threads: int = 2):
        self.path = str(path)
        self.threads = int(threads)
        if not Path(self.path).is_dir():
            raise InputError(f"{self.path}: no such index directory")
        self._searchers: dict[Any, Any] = {}
        self._composers: dict[Any, Any] = {}

    def searcher(self, encoder: Any = None):
        """The shared ``ImpactSearcher`` of this index and query encoder."""
        key = encoder if encoder is None or isinstance(encoder, (str, Path)) else id(encoder)
        if key not in self._searchers:
            _check_jvm()
            from lsr_lucene.search.impact_searcher import ImpactSearcher

            self._searchers[key] = ImpactSearcher(self.path, encoder=encoder)
        return self._searchers[key]

    def compose_searcher(self, **options: Any):
        """The shared ``ComposeSearcher`` of these options (its query encoder and index are the default searcher's:
        the index is opened once)."""
        key = tuple(sorted(options.items()))
        if key not in self._composers:
            from lsr_lucene.compose.searcher import ComposeSearcher

            default = self.searcher()
            self._composers[key] = ComposeSearcher(self.path, encoder=default.query_encoder,
                                                   searcher=default.spec_searcher, **options)
        return self._composers[key]

    def retriever(self, num_results: int = DEFAULT_NUM_RESULTS, encoder: Any = None, heap_factor: float = 1.0
                  ) -> "ImpactRetriever":
        """Query frame (``qid, query`` or ``qid, query_toks``) → result frame of the top ``num_results``."""
        return ImpactRetriever(self, num_results, encoder, heap_factor=heap_factor)

    def query_encoder(self, encoder: Any = None) -> "ImpactQueryEncoder":
        """Adds ``query_toks`` ({term: quantised weight}, as ``lsr-lucene encode --topics`` writes them)."""
        return ImpactQueryEncoder(self, encoder)

    def composer(self, num_results: int = DEFAULT_NUM_RESULTS, **options: Any) -> "ImpactComposer":
        """Negation / composition retriever; ``options``: ``ComposeSearcher``'s (operation, not_op, and_op, or_op,
        lam, gate, depth, ...: ``lsr-lucene compose``'s options)."""
        return ImpactComposer(self, num_results, options)

    def scorer(self, encoder: Any = None) -> "ImpactScorer":
        """Re-ranks the documents of a result frame by their exact impact score."""
        return ImpactScorer(self, encoder)

    def __repr__(self) -> str:
        return f"ImpactIndex({self.path!r})"


def _index(index: ImpactIndex | str | Path) -> ImpactIndex:
    return index if isinstance(index, ImpactIndex) else ImpactIndex(index)


def _refuse_results(inp: pd.DataFrame, name: str) -> None:
    if "docno" in inp.columns:
        raise InputError(f"{name} takes a query frame (qid, query or query_toks), not a result frame (it has "
                         "docno): re-rank a result frame with ImpactIndex(...).scorer()")


def _texts(inp: pd.DataFrame, column: str = "query") -> list[str]:
    """The query texts of a frame; a blank one is an InputError naming its qid (as ``search --topics`` refuses it;
    the encoder would otherwise search the expansion of the empty string)."""
    texts = [str(q) for q in inp[column]]
    for qid, text in zip(inp["qid"], texts):
        if not text.strip():
            raise InputError(f"query {qid} has no text")
    return texts


def _results(inp: pd.DataFrame, hits: Sequence[Sequence]) -> pd.DataFrame:
    """Input rows repeated once per hit, with ``docno``, ``score`` (as the run prints it) and 0-based ``rank``."""
    from lsr_lucene.search.spec_searcher import as_written

    counts = np.array([len(h) for h in hits], dtype=np.int64)
    out = inp.iloc[np.repeat(np.arange(len(inp)), counts)].reset_index(drop=True)
    out["docno"] = pd.Series([hit.docid for row in hits for hit in row], dtype=str)  # strings, also when empty
    out["score"] = np.array(as_written([hit.score for row in hits for hit in row]), dtype=np.float64)
    out["rank"] = np.concatenate([np.arange(n) for n in counts]).astype(np.int64) + pt.model.FIRST_RANK \
        if len(out) else np.array([], dtype=np.int64)
    return out


def _query_vectors(inp: pd.DataFrame) -> list[dict[str, float]]:
    from lsr_lucene.serve.engine import query_vector

    return [query_vector(toks, f"query {qid}: query_toks") for qid, toks in zip(inp["qid"], inp["query_toks"])]


class ImpactRetriever(pt.Transformer):
    """Learned sparse retrieval on an impact index: the hits of ``lsr-lucene search`` as a PyTerrier result frame.
    ``heap_factor`` H < 1: approximate block-max search (``lsr-lucene search --heap-factor H``), passed with each
    search, so retrievers of several heap factors share the index's searcher."""

    def __init__(self, index: ImpactIndex | str | Path, num_results: int = DEFAULT_NUM_RESULTS, encoder: Any = None,
                 threads: int | None = None, heap_factor: float = 1.0):
        from lsr_lucene.search.spec_searcher import check_heap_factor

        self.index = _index(index)
        self.num_results = int(num_results)
        if self.num_results <= 0:
            raise InputError(f"num_results must be positive, got {num_results}")
        self.encoder = encoder
        self.threads = int(threads or self.index.threads)
        self.heap_factor = check_heap_factor(heap_factor)

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        _refuse_results(inp, "ImpactRetriever")
        with pta.validate.any(inp) as v:
            v.query_frame(extra_columns=["query_toks"], mode="vectors")
            v.query_frame(extra_columns=["query"], mode="text")
        inp = inp.reset_index(drop=True)
        searcher = self.index.searcher(self.encoder)
        keys = [str(i) for i in range(len(inp))]  # row numbers: any qid, duplicates too
        options = dict(k=self.num_results, threads=self.threads, heap_factor=self.heap_factor)
        if v.mode == "vectors":
            specs = [{"qid": key, "terms": vec} for key, vec in zip(keys, _query_vectors(inp))]
            found = searcher.batch_search_specs(specs, **options)
        else:
            found = searcher.batch_search(_texts(inp), keys, **options)
        return _results(inp, [found.get(key, []) for key in keys])

    def fuse_rank_cutoff(self, k: int) -> "ImpactRetriever":
        """``retriever % k``: the same retriever with ``num_results=k`` (when smaller)."""
        if k >= self.num_results:
            return self
        return ImpactRetriever(self.index, k, self.encoder, self.threads, self.heap_factor)

    def __repr__(self) -> str:
        heap = f", heap_factor={self.heap_factor:g}" if self.heap_factor != 1 else ""
        return f"ImpactRetriever({self.index.path!r}, num_results={self.num_results}{heap})"


class ImpactQueryEncoder(pt.Transformer):
    """Adds ``query_toks``: the quantised query vector that ``lsr-lucene search`` searches for each ``query``."""

    def __init__(self, index: ImpactIndex | str | Path, encoder: Any = None):
        self.index = _index(index)
        self.encoder = encoder

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        pta.validate.columns(inp, includes=["qid", "query"])
        out = inp.copy()
        out["query_toks"] = self.index.searcher(self.encoder).encode(_texts(inp)) if len(inp) else []
        return out


class ImpactScorer(pt.Transformer):
    """Exact impact scores of a result frame's (query, document) pairs, re-ranked (ties by docno): one encoding
    batch for the frame and one JVM scoring call per query."""

    def __init__(self, index: ImpactIndex | str | Path, encoder: Any = None):
        self.index = _index(index)
        self.encoder = encoder

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        from lsr_lucene.search.spec_searcher import as_written

        with pta.validate.any(inp) as v:
            v.result_frame(extra_columns=["query_toks"], mode="vectors")
            v.result_frame(extra_columns=["query"], mode="text")
        out = inp.drop(columns=["score", "rank"], errors="ignore").reset_index(drop=True)
        if not len(out):
            return out.assign(score=pd.Series(dtype=np.float64), rank=pd.Series(dtype=np.int64))
        searcher = self.index.searcher(self.encoder)
        groups = out.groupby("qid", sort=False).indices
        first = [rows[0] for rows in groups.values()]
        if v.mode == "vectors":
            vectors = _query_vectors(out.iloc[first])
        else:
            vectors = searcher.encode(_texts(out.iloc[first]))
        scores = np.zeros(len(out), dtype=np.float64)
        for qid, rows, vector in zip(groups.keys(), groups.values(), vectors):
            if vector:
                docnos = [str(d) for d in out["docno"].iloc[rows]]
                exact = searcher.spec_searcher.score({"qid": str(qid), "terms": vector}, docnos)
                scores[rows] = as_written(exact)
        out["score"] = scores
        order = np.empty(len(out), dtype=np.int64)  # queries stay in input order
        for position, rows in enumerate(groups.values()):
            order[rows] = position
        out = out.assign(_query=order).sort_values(["_query", "score", "docno"], ascending=[True, False, True],
                                                   kind="stable").drop(columns="_query")
        out["rank"] = out.groupby("qid", sort=False).cumcount().astype(np.int64) + pt.model.FIRST_RANK
        return out.reset_index(drop=True)


class ImpactComposer(pt.Transformer):
    """Negated and composed queries (``tea without caffeine``, or the explicit syntax ``tea -caffeine -milk`` /
    ``tea NOT (caffeine OR milk)``; a ``composition`` column of JSON trees also works): the hits of
    ``lsr-lucene compose`` as a result frame."""

    def __init__(self, index: ImpactIndex | str | Path, num_results: int = DEFAULT_NUM_RESULTS,
                 options: Mapping[str, Any] | None = None):
        self.index = _index(index)
        self.num_results = int(num_results)
        self.options = dict(options or {})

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        _refuse_results(inp, "ImpactComposer")
        with pta.validate.any(inp) as v:
            v.query_frame(extra_columns=["composition"], mode="trees")
            v.query_frame(extra_columns=["query"], mode="text")
        inp = inp.reset_index(drop=True)
        composer = self.index.compose_searcher(**self.options)
        keys = [str(i) for i in range(len(inp))]
        column = "composition" if v.mode == "trees" else "query"
        found = composer.batch_search(list(inp[column]), keys, self.num_results, self.index.threads)
        return _results(inp, [found.get(key, []) for key in keys])

    def fuse_rank_cutoff(self, k: int) -> "ImpactComposer":
        if k >= self.num_results:
            return self
        return ImpactComposer(self.index, k, self.options)


def pisa_bm25(path: str | Path, corpus: str | Path, **bm25_options: Any):
    """``pyterrier_pisa``'s BM25 retriever over ``corpus`` (JSONL, TSV... as ``lsr-lucene encode`` reads it), its
    index at ``path`` built when missing, quietly: PISA's C++ writes progress to the process's own stdout and stderr
    (its ``log_level`` switch is missing from the wheel), so both are closed while it indexes and while a first
    query builds the scorer's block-max data."""

    import pyterrier_pisa

    from lsr_lucene.io.corpus import read_corpus

    pisa = pyterrier_pisa.PisaIndex(str(path), text_field="text", threads=1)
    docs = None if pisa.built() else [{"docno": d.id, "text": d.contents} for d in read_corpus(corpus)]  # errors show
    with redirected((1, 2)):  # PISA's C++ progress lines
        if docs is not None:
            pisa.index(iter(docs))
        retriever = pisa.bm25(**bm25_options)
        retriever.search("a")  # builds the scorer's data on the first query
    return retriever
