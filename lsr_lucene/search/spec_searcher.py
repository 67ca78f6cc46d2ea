"""Python side of our Java batch searcher: ``SpecSearcher`` over an impact index.

``SpecSearcher`` wraps the Java ``BatchSearcher``: it searches query specs (lsr_lucene.search.specs) over an
impact index, with several threads, and writes the TREC run itself; it also scores given documents exactly.
"""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Iterable, Literal, Mapping, Sequence, overload

import numpy as np

from lsr_lucene.errors import InputError
from lsr_lucene.io.output import atomic_output
from lsr_lucene.io.runs import format_score
from lsr_lucene.jvm.classes import java_class, java_errors
from lsr_lucene.search.specs import validate_spec, write_query_specs

_TERMS_ONLY = {"qid", "terms", "text"}  # keys of a spec that crosses to Java as arrays
_DOCID_ARRAY_BYTES = 1 << 28  # largest numpy copy of the external ids kept for naming hits
JAVA_INT_MAX = 2**31 - 1


@overload
def check_heap_factor(value, name: str = ..., optional: Literal[False] = ...) -> float: ...
@overload
def check_heap_factor(value, name: str = ..., optional: bool = ...) -> float | None: ...
def check_heap_factor(value, name: str = "heap_factor", optional: bool = False) -> float | None:
    """``value`` as a heap factor (a number above 0 and at most 1), else InputError naming ``name``: the one check
    of every library, server and PyTerrier entry point (the CLI's is cli_options.HEAP_FACTOR, same wording).
    ``optional``: None passes as None (a call's or request's own heap factor, the searcher's when not given)."""
    if optional and value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if isinstance(value, bool) or not 0 < number <= 1:  # NaN fails too
        raise InputError(f"{name} must be a number above 0 and at most 1, got {value}")
    return number


def as_written(scores: Sequence[float]) -> list[float]:
    """Scores as a run file writes them (``io.runs.format_score``; integers as they are, which it keeps): hits and
    rescored documents then carry the same precision, so fusing the two cannot reorder near ties."""
    return [s if s.is_integer() else float(format_score(s)) for s in map(float, scores)]


def _count(n: int) -> int:
    """A hit, candidate or term count as a Java int: past 2^31 - 1 capped there, which is more than any Lucene
    index holds, so it still means all (k beyond the collection returns every match)."""
    return min(int(n), JAVA_INT_MAX)


def java_heap_factor(value: float) -> float:
    """A checked heap factor as the float the Java searcher takes: the float32 at or above it, never below (a float
    rounded down would prune against a larger threshold / H than asked, and miss documents the heap factor promises;
    one below the smallest float32 would become 0, which Java refuses)."""
    f = np.float32(value)
    if float(f) < value:
        f = np.nextafter(f, np.float32(np.inf))
    return float(f)


class SpecSearcher:
    """Batch searcher over an Anserini impact index (plus positional sidecar when present), by query specs."""

    def __init__(self, index_dir: str | Path, dense_impacts: bool = True, heap_factor: float = 1.0):
        """``dense_impacts`` False leaves the index's dense-impacts sidecar unused (exact search on postings alone,
        as without the sidecar: a benchmark's baseline). ``heap_factor``: see the property."""
        from lsr_lucene.index.kind import IMPACT, note_legacy_sidecars, require_index_kind

        self.index_dir = str(index_dir)
        require_index_kind(self.index_dir, IMPACT, "impact search")  # a BM25 index would give a wrong run
        note_legacy_sidecars(self.index_dir)
        cls = java_class("search.BatchSearcher")
        with java_errors(self.index_dir):
            self._java = cls(self.index_dir, bool(dense_impacts))
        self._docids: list[str] | None = None
        self._docid_array: np.ndarray | bool | None = None  # numpy copy of the ids (False: too large to keep)
        self._ids_lock = threading.Lock()  # threads sharing a searcher read the ids once
        self.heap_factor = heap_factor

    @property
    def heap_factor(self) -> float:
        """1 (default): exact search. H in (0, 1): plain queries (positive integral weights; others stay exact) prune
        windows and blocks of documents against threshold / H, BMP's and Seismic's approximation: faster, and may
        miss documents that would only just enter the top k; hits keep their exact scores. The default of every
        search; each search method also takes ``heap_factor`` for itself (threads sharing a searcher: pass it)."""
        return self._heap_factor

    @heap_factor.setter
    def heap_factor(self, value: float) -> None:
        self._heap_factor = check_heap_factor(value)
        self._java.setHeapFactor(java_heap_factor(self._heap_factor))

    def _heap(self, heap_factor: float | None) -> float:
        """This search's heap factor as Java takes it (``java_heap_factor``): ``heap_factor`` checked, or the
        searcher's when None."""
        return java_heap_factor(self._heap_factor if heap_factor is None else check_heap_factor(heap_factor))

    @property
    def num_docs(self) -> int:
        return int(self._java.numDocs())

    @property
    def has_positions(self) -> bool:
        """Whether the positional field (window clauses) is available."""
        return bool(self._java.hasPositions())

    def search_to_run(self, specs: Iterable[Mapping], run_path: str | Path, k: int = 1000, threads: int = 2,
                      tag: str = "lsr_lucene", heap_factor: float | None = None) -> int:
        """Search all specs and write a TREC run at ``run_path`` (temp file + rename); returns the query count.
        ``heap_factor``: as in ``search_hits``."""
        heap = self._heap(heap_factor)
        tag = tag or "lsr_lucene"
        with atomic_output(run_path, overwrite=True) as run_tmp:  # callers refuse an existing run first
            spec_tmp = run_tmp.with_name(f"{run_tmp.name}.specs.jsonl")
            try:
                write_query_specs(specs, spec_tmp)
                return self.search_file(spec_tmp, run_tmp, k=k, threads=threads, tag=tag, heap_factor=heap)
            finally:
                spec_tmp.unlink(missing_ok=True)

    def search_file(self, specs_jsonl: str | Path, run_path: str | Path, k: int = 1000, threads: int = 2,
                    tag: str = "lsr_lucene", heap_factor: float | None = None) -> int:
        """Search a spec JSONL file, writing the run straight to ``run_path`` (no rename); returns the query count."""
        if k <= 0:
            raise InputError(f"k must be positive, got {k}")
        if threads <= 0:
            raise InputError(f"threads must be positive, got {threads}")
        heap = self._heap(heap_factor)
        with java_errors():
            return int(self._java.search(str(specs_jsonl), str(run_path), _count(k), int(threads), str(tag), heap))

    def search(self, spec: Mapping, k: int = 10, heap_factor: float | None = None) -> list[tuple[str, float]]:
        """Top-k (docid, score) of one spec, best first; scores as the run file writes them."""
        names, scores, _ = self._search_arrays(spec, k, heap_factor)
        return list(zip(names, scores))

    def search_hits(self, spec: Mapping, k: int = 10, heap_factor: float | None = None
                    ) -> list[tuple[str, float, int]]:
        """Top-k (docid, score as the run file writes it, Lucene docid) of one spec, best first. A spec of terms
        only crosses to Java as two arrays, other specs as JSON; hits come back as arrays, named here.
        ``heap_factor``: this search's (``heap_factor`` property; None: the searcher's)."""
        names, scores, docs = self._search_arrays(spec, k, heap_factor)
        return list(zip(names, scores, docs.tolist()))

    def _search_arrays(self, spec: Mapping, k: int, heap_factor: float | None = None
                       ) -> tuple[list[str], list[float], np.ndarray]:
        """(docids, scores as the run file writes them, Lucene docids) of the top k, best first."""
        validate_spec(spec)
        if k <= 0:
            raise InputError(f"k must be positive, got {k}")
        heap = self._heap(heap_factor)
        with java_errors(f"query {spec['qid']}"):
            if spec.keys() <= _TERMS_ONLY:
                terms = spec["terms"]
                packed = self._java.searchPacked(None, list(terms), [float(w) for w in terms.values()], _count(k),
                                                 heap)
            else:
                packed = self._java.searchPacked(json.dumps(spec, allow_nan=False), None, None, _count(k), heap)
        buf = packed.tostring()  # n int32 docids, then n float64 scores (BatchSearcher.searchPacked)
        n = len(buf) // 12
        docs = np.frombuffer(buf, dtype="<i4", count=n)
        exact = np.frombuffer(buf, dtype="<f8", count=n, offset=4 * n)
        scores = exact.tolist() if np.array_equal(exact, np.floor(exact)) else as_written(exact.tolist())
        return self._names(docs), scores, docs

    def _names(self, docs: np.ndarray) -> list[str]:
        """External ids of Lucene docids: gathered from a numpy copy of the ids (one compact array: at k = 1000 a
        list lookup's scattered string objects cost a quarter of a wiki2015 query), or from the list when the
        copy would be large."""
        if self._docid_array is None:
            ids = self.docids
            with self._ids_lock:
                if self._docid_array is None:
                    longest = max(map(len, ids), default=0)
                    fits = len(ids) * max(longest, 1) * 4 <= _DOCID_ARRAY_BYTES
                    # numpy drops trailing NULs of its strings: such ids are named from the list
                    self._docid_array = np.array(ids, dtype=f"<U{max(longest, 1)}") \
                        if fits and not any(i.endswith("\0") for i in ids) else False
        if not isinstance(self._docid_array, np.ndarray):  # False: too large to keep
            ids = self.docids
            return [ids[d] for d in docs.tolist()]
        return self._docid_array[docs].tolist()

    @property
    def docids(self) -> list[str]:
        """External ids by Lucene docid (read from the index once)."""
        if self._docids is None:
            with self._ids_lock, java_errors(self.index_dir):
                if self._docids is None:
                    text = str(self._java.docidsText())
                    self._docids = text.split("\n") if text else []  # an index of no documents has no ids
        return self._docids

    def search_exact(self, spec: Mapping, k: int = 10, collection_max_impacts: Mapping[str, int] | None = None,
                     heap_factor: float | None = None) -> list[tuple[str, str, float]]:
        """Top-k of one spec, best first, as (docid, score as the run file writes it, exact score): the exact
        scores order hits of several indexes as one index would (lsr_lucene.distributed.search). On one shard
        of a collection, ``collection_max_impacts`` (term -> max impact in the whole collection, for the terms
        the spec subtracts) makes signed scores the same bits as on one index of the collection."""
        return exact_hits(self.search_columns(spec, k, collection_max_impacts, heap_factor))

    def search_columns(self, spec: Mapping, k: int = 10, collection_max_impacts: Mapping[str, int] | None = None,
                       heap_factor: float | None = None) -> tuple[str, str, str]:
        """``search_exact``'s hits as three newline-separated columns (docids, scores as written, exact scores),
        which cost next to nothing to pass between processes (``exact_hits`` makes them hits)."""
        validate_spec(spec)
        if k <= 0:
            raise InputError(f"k must be positive, got {k}")
        heap = self._heap(heap_factor)
        bounds = dict(collection_max_impacts or {})
        with java_errors(f"query {spec['qid']}"):
            return tuple(self._java.searchColumns(json.dumps(spec, allow_nan=False), _count(k), list(bounds),
                                                  [int(v) for v in bounds.values()], heap))

    def rescore_columns(self, spec: Mapping, docids: Sequence[str], scores: Sequence[float]) -> tuple[str, str, str]:
        """The spec's window scores added to first-stage ``scores`` of ``docids`` (this index's share of a
        collection's first-stage top N), as ``search_columns``'s columns in input order."""
        validate_spec(spec)
        with java_errors(f"query {spec['qid']}"):
            return tuple(self._java.rescoreColumns(json.dumps(spec, allow_nan=False), [str(d) for d in docids],
                                                   [float(v) for v in scores]))

    def max_impacts(self, field: str = "contents", terms: Iterable[str] | None = None) -> dict[str, int]:
        """Max impact of every term of ``field`` in this index, or of ``terms`` only (those it holds): a shard's
        part of the collection's bounds."""
        with java_errors(self.index_dir):
            text = (self._java.maxImpacts(str(field)) if terms is None
                    else self._java.maxImpacts(str(field), [str(t) for t in terms]))
        return {term: int(value) for term, value in (line.rsplit("\t", 1) for line in text.splitlines())}

    def has_term_with_prefix(self, field: str, prefix: str) -> bool:
        """Whether ``field`` of this index holds a term starting with ``prefix``."""
        with java_errors(self.index_dir):
            return bool(self._java.hasTermWithPrefix(str(field), str(prefix)))

    def score(self, spec: Mapping, docids: Sequence[str]) -> list[float]:
        """Exact scores of ``spec`` for the given docids (matching or not): Σ w·(impact − neg impact) + pairs + windows."""
        validate_spec(spec)
        with java_errors(f"query {spec['qid']}"):
            return list(self._java.scoreDocs(json.dumps(spec, allow_nan=False), [str(d) for d in docids]))

    def excluded(self, expression: Mapping, docids: Sequence[str]) -> list[bool]:
        """Whether each docid is one a strict filter expression (``exclude``, lsr_lucene.search.text_filter) removes;
        InputError naming what to build where the index has no text field."""
        with java_errors("exclude"):
            return [bool(x) for x in self._java.excludedAmong(json.dumps(dict(expression)), [str(d) for d in docids])]

    def excluded_count(self, expression: Mapping) -> int:
        """How many documents of the index a strict filter expression removes."""
        with java_errors("exclude"):
            return int(self._java.excludedCount(json.dumps(dict(expression))))

    # ---------------------------------------------------------------------------------------------- documents

    def _open(self):
        """The Java searcher, or InputError once this searcher is closed."""
        java = getattr(self, "_java", None)
        if java is None:
            raise InputError(f"{self.index_dir}: the searcher is closed")
        return java

    def lucene_docids(self, docids: Sequence[str]) -> list[int]:
        """The Lucene docid of each external id, in the order given (-1 where the index has no such document)."""
        return list(self._open().luceneDocids([str(d) for d in docids])) if docids else []

    def docid(self, lucene_docid: int) -> str:
        """The external id of a Lucene docid."""
        return str(self._open().docid(int(lucene_docid)))

    def stored_field(self, lucene_docid: int, field: str = "raw") -> str | None:
        """A stored field of a document (``raw``: its vector JSON line), None when the index stores none."""
        return self._open().storedField(int(lucene_docid), str(field))

    @property
    def index_searcher(self):
        """The Lucene ``IndexSearcher`` (a Java object) over the index: its reader's term statistics
        (lsr_lucene.search.unknown_terms)."""
        return self._open().getSearcher()

    @property
    def dense_impacts_layout(self) -> str:
        """How the dense-impacts sidecar is held (``mapped`` or ``heap``); "" when it is not used."""
        return str(self._open().denseImpactsLayout())
    def contents(self, docids: Sequence[str], field: str = "raw") -> dict[str, str | None]:
        """The stored text of each docid the index holds (the ``contents`` of its stored JSON line in ``field``, else
        the stored text itself; None where none is stored), read in one JVM call (Java ``search.StoredTexts``)."""
        docids = list(docids)
        if not docids:
            return {}
        with java_errors(self.index_dir):
            lucene = list(self._java.luceneDocids(docids))
            texts = self._java.storedContents(lucene, str(field))  # an instance method: safe from many threads
        return {d: (None if t is None else str(t)) for d, n, t in zip(docids, lucene, texts) if n >= 0}

    def close(self) -> None:
        if getattr(self, "_java", None) is not None:
            self._java.close()
            self._java = None

    def __enter__(self) -> "SpecSearcher":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def exact_hits(columns: Sequence[str]) -> list[tuple[str, str, float]]:
    """(docid, score as written, exact score) hits of ``search_columns``'s three columns."""
    docids, shown, exact = columns
    if not docids:
        return []
    return list(zip(docids.split("\n"), shown.split("\n"), map(float, exact.split("\n"))))


def search_shards(searchers: Sequence[SpecSearcher], specs_jsonl: str, k: int, bounds: Sequence[Mapping[str, int]],
                  heap_factor: float | None = None, threads: int = 1) -> tuple[list[bytes], list[float]]:
    """Top k of every spec of ``specs_jsonl`` (JSON lines, checked by the caller) on several indexes open in this
    process (the shards one searcher of a distributed index holds), on ``threads`` threads in one JVM call: each
    index's hits packed into one bytes object (Java's ShardHits layout; ``unpack_hits`` reads it), and the seconds
    each took. Exact search carries each spec's queue from index to index, largest first (BatchSearcher.searchShards):
    a later index returns only its hits of at least the k-th best score of those before it, fewer than k, and the
    merged top k is exact; a batch of fewer specs than threads, and a heap factor below 1, search the indexes side
    by side. ``bounds[i]``: the collection's max impacts of the terms spec i subtracts (``search_exact``'s
    ``collection_max_impacts``); the rest as in ``SpecSearcher.search_hits``."""
    if k <= 0:
        raise InputError(f"k must be positive, got {k}")
    heap = searchers[0]._heap(heap_factor)
    terms = [term for table in bounds for term in table]
    values = [int(value) for table in bounds for value in table.values()]
    with java_errors():
        batch = java_class("search.BatchSearcher").searchShards(
            [searcher._java for searcher in searchers], specs_jsonl, _count(k), [len(table) for table in bounds],
            terms, values, heap, int(threads))
        return [bytes(batch.pack(i).tostring()) for i in range(len(searchers))], list(batch.seconds)


def unpack_hits(pack: bytes) -> list[list[tuple[str, str, float]]]:
    """Every query's (docid, score as written, exact score) hits of one index's packed bytes (``search_shards``),
    best first."""
    queries = int.from_bytes(pack[:4], "little")
    counts = np.frombuffer(pack, dtype="<i4", count=queries, offset=4).tolist()
    n = sum(counts)
    at = 4 + 4 * queries
    scores = np.frombuffer(pack, dtype="<f8", count=n, offset=at).tolist()
    ends = np.cumsum(np.frombuffer(pack, dtype="<i4", count=n, offset=at + 8 * n)).tolist()
    base = at + 12 * n
    ids = [pack[base + a:base + b].decode("utf-8") for a, b in zip([0, *ends[:-1]], ends)]
    hits = list(zip(ids, [format_score(s) for s in scores], scores))
    starts = np.cumsum([0, *counts]).tolist()
    return [hits[a:b] for a, b in zip(starts, starts[1:])]
