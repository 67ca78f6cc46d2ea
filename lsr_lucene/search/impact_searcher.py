"""Pyserini-style Python searcher over an lsr_lucene impact index: ``ImpactSearcher``.

``ImpactSearcher(index, encoder=...)`` follows Pyserini's ``LuceneImpactSearcher``: ``search(q, k=10)`` returns a
list of hits best first, ``batch_search(queries, qids, k=10, threads=1)`` a dict qid → hits, and every hit has
``.docid``, ``.score``, ``.lucene_docid``, ``.raw`` and ``.contents`` (the stored document, read when asked for);
``doc(docid)`` is Pyserini's ``searcher.doc``: a document with ``docid()``, ``raw()`` and ``contents()``. Queries are
encoded and quantised exactly as ``lsr-lucene search`` does (the index's model and scale unless given), and searched
by our Java ``BatchSearcher`` (``SpecSearcher``), so the hits equal the run that command writes: same documents,
order (ties by docid) and scores (six decimals, as in the run file). ``search_spec`` / ``batch_search_specs`` take
query specs (signed terms, CPT pairs, windows: ``lsr_lucene.search.specs``), e.g. composed queries written by
``lsr-lucene compose --write-specs``.

It does not rewrite negation: "tea without caffeine" is encoded as one text, as ``lsr-lucene search`` does. For
negated, exclusionary and set-compositional queries (the cue parser, NOT / AND / OR trees, the fused default) use
``lsr_lucene.compose.ComposeSearcher``, the Python API of ``lsr-lucene compose`` (same ``search`` /
``batch_search`` shape and hits).
"""
from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, cast

from lsr_lucene.errors import InputError, json_problem
from lsr_lucene.io.runs import read_hits
from lsr_lucene.io.topics import refuse_duplicate_qids
from lsr_lucene.search.spec_searcher import check_heap_factor
from lsr_lucene.search.specs import validate_spec


@dataclass(frozen=True)
class ImpactHit:
    """One search result, like Pyserini's hits: external ``docid``, ``score``, Lucene docid and raw document."""

    docid: str
    score: float
    lucene_docid: int
    _load_raw: Callable[[int], str | None] = field(repr=False, compare=False)

    @property
    def raw(self) -> str | None:
        """The stored raw document (Anserini's ``raw`` field: the vector JSON line), None when not stored."""
        return self._load_raw(self.lucene_docid)

    @property
    def contents(self) -> str | None:
        """The document's text as encoded (the ``contents`` of its raw vector line), None when not stored."""
        return contents_of(self.raw)


_CONTENTS = re.compile(r'"contents"\s*:\s*("(?:[^"\\]|\\.)*")')


def contents_of(raw: str | None) -> str | None:
    """The ``contents`` of a stored JsonVectorCollection line (the raw field), else the raw text itself. The
    ``contents`` string is read without parsing the line's (long) vector where it can be."""
    if raw is None:
        return None
    match = _CONTENTS.search(raw) if raw.lstrip().startswith("{") else None
    if match:
        return json.loads(match.group(1))
    try:
        obj = json.loads(raw)
    except ValueError:
        return raw
    return obj.get("contents") if isinstance(obj, dict) else raw


@dataclass(frozen=True)
class ImpactDocument:
    """A stored document, with Pyserini's ``Document`` methods: ``docid()``, ``id()``, ``raw()``, ``contents()``."""

    _docid: str
    lucene_docid: int
    _raw: str | None = field(repr=False)

    def docid(self) -> str:
        return self._docid

    def id(self) -> str:
        return self._docid

    def raw(self) -> str | None:
        """The stored raw field (the vector JSON line), None when the index stores none."""
        return self._raw

    def contents(self) -> str | None:
        """The document's text (``contents`` of the raw line)."""
        return contents_of(self._raw)


def _parse_spec(spec: Mapping | str) -> dict:
    """A spec dict from a dict or a JSON string (InputError on malformed JSON or spec)."""
    if isinstance(spec, str):
        try:
            spec = cast(Mapping, json.loads(spec))
        except json.JSONDecodeError as exc:
            raise InputError(f"query spec: malformed JSON ({json_problem(exc)})") from None
    validate_spec(spec)
    return dict(spec)


class ImpactSearcher:
    """Search an lsr_lucene (Anserini impact) index with text queries or query specs, Pyserini style. Negation
    is not rewritten (a query is one text); ``lsr_lucene.compose.ComposeSearcher`` searches negated queries."""

    def __init__(self, index_dir: str | Path, encoder: Any = None, scale: float | None = None,
                 query_max_length: int | None = None, threads: int | None = None, heap_factor: float = 1.0):
        """``encoder``: None (the model recorded in the index, else splade-tiny), a model name / HF id / local
        directory, an object with ``encode_queries(texts)`` (``lsr_lucene.encode.encoder.SparseEncoder``), or a
        Pyserini-style query encoder with ``encode(text) -> {token: weight}``. ``scale`` quantises float weights
        (default: the index's); ``threads`` are the encoder's torch threads. Queries are encoded in fp32.
        ``heap_factor``: 1 (default)
        exact; H < 1 approximate block-max search of plain queries (``SpecSearcher.heap_factor``; settable later
        as ``searcher.heap_factor``; each search method also takes ``heap_factor`` for that search alone, which
        threads sharing a searcher must use rather than the property)."""
        from lsr_lucene.search.impact import index_settings
        from lsr_lucene.search.spec_searcher import SpecSearcher

        self.index_dir = str(index_dir)
        self._searcher = SpecSearcher(self.index_dir, heap_factor=heap_factor)  # InputError when the index is missing
        settings = index_settings(self.index_dir)
        self.scale = float(scale or settings.get("scale") or 100)
        self._encoder_spec = encoder
        self._settings = settings
        self._encoder_options = {"query_max_length": query_max_length, "threads": threads}
        self._documents_dtype = settings.get("dtype")
        self._model = settings.get("model")  # None: an index that records none (query_model_name asks for it)
        # {encoded?: search.unknown_terms.UnknownTerms or None}, made on first search
        self._unknown_terms: dict[bool, Any] | None = None
        self._encoder = None if encoder is None or isinstance(encoder, (str, Path)) else encoder

    @property
    def heap_factor(self) -> float:
        """1: exact search; H < 1: approximate block-max search of plain queries (``SpecSearcher.heap_factor``)."""
        return self._searcher.heap_factor

    @heap_factor.setter
    def heap_factor(self, value: float) -> None:
        self._searcher.heap_factor = value

    @property
    def num_docs(self) -> int:
        return self._searcher.num_docs

    @property
    def spec_searcher(self):
        """The ``SpecSearcher`` underneath (query specs, exact scoring of given docids), e.g. to share its index
        with a ``ComposeSearcher(searcher=...)``; closed with this searcher."""
        return self._searcher

    @property
    def query_encoder(self):
        """The query encoder (a ``SparseEncoder`` loaded on first use unless one was given)."""
        if self._encoder is None:
            from lsr_lucene.encode.precision import note_documents_precision
            from lsr_lucene.search.impact import query_encoder_for

            self._encoder = query_encoder_for(self.index_dir, self._settings, self._encoder_spec, "encoder=",
                                              **self._encoder_options)
            note_documents_precision(self._documents_dtype)
        return self._encoder

    def encode(self, queries: Sequence[str]) -> list[dict[str, int]]:
        """Quantised signed query vectors {term: int}, as ``lsr-lucene search`` makes them."""
        from lsr_lucene.io.vectors import quantise_query

        for q in queries:
            if not isinstance(q, str):
                raise InputError(f"queries must be strings, got {type(q).__name__}")
        encoder = self.query_encoder
        if hasattr(encoder, "encode_queries"):
            vectors = encoder.encode_queries(list(queries))
            return [quantise_query(v, self.scale) for v in vectors]
        if hasattr(encoder, "encode"):  # Pyserini query encoders return quantised {token: weight}
            return [quantise_query(encoder.encode(q), 1.0) for q in queries]
        raise InputError(f"encoder {type(encoder).__name__} has neither encode_queries(texts) nor encode(text)")

    # ---------------------------------------------------------------------------------------------- text queries

    def search(self, q: str, k: int = 10, heap_factor: float | None = None) -> list[ImpactHit]:
        """Top-k hits of one text query, best first (no hits when no query term is in the index)."""
        check_heap_factor(heap_factor, optional=True)  # a bad value fails before the query is encoded
        terms = self.encode([q])[0] if q.strip() else {}
        return self._search_spec({"qid": "q", "terms": terms}, k, heap_factor, encoded=True) if terms else []

    def batch_search(self, queries: Sequence[str], qids: Sequence[str], k: int = 10, threads: int = 1,
                     heap_factor: float | None = None) -> dict[str, list[ImpactHit]]:
        """Top-k hits of many text queries searched with ``threads`` threads: a dict qid → hits."""
        if len(queries) != len(qids):
            raise InputError(f"{len(queries)} queries but {len(qids)} qids")
        refuse_duplicate_qids([str(q) for q in qids], "qids")
        check_heap_factor(heap_factor, optional=True)  # a bad value fails before the queries are encoded
        vectors = self.encode(list(queries))
        results: dict[str, list[ImpactHit]] = {str(qid): [] for qid in qids}
        specs = [{"qid": str(qid), "terms": vec} for qid, vec in zip(qids, vectors) if vec]
        results.update(self._batch_search_specs(specs, k, threads, heap_factor, encoded=True))
        return results

    # ---------------------------------------------------------------------------------------------- query specs

    def search_spec(self, spec: Mapping | str, k: int = 10, heap_factor: float | None = None) -> list[ImpactHit]:
        """Top-k hits of one query spec (dict or JSON): signed terms, CPT pairs, windows, composed queries
        (``heap_factor``: this search's, default the searcher's)."""
        return self._search_spec(spec, k, heap_factor)

    def _search_spec(self, spec: Mapping | str, k: int, heap_factor: float | None = None,
                     encoded: bool = False) -> list[ImpactHit]:
        spec = _parse_spec(spec)
        if not _searchable(spec):
            return []
        self._warn_unknown_terms([spec], encoded)
        return [ImpactHit(d, s, n, self._raw) for d, s, n in self._searcher.search_hits(spec, k, heap_factor)]

    def batch_search_specs(self, specs: Sequence[Mapping | str], k: int = 10, threads: int = 1,
                           heap_factor: float | None = None) -> dict[str, list[ImpactHit]]:
        """Top-k hits of many query specs searched in the JVM with ``threads`` threads: a dict qid → hits."""
        return self._batch_search_specs(specs, k, threads, heap_factor)

    def _batch_search_specs(self, specs: Sequence[Mapping | str], k: int, threads: int,
                            heap_factor: float | None = None, encoded: bool = False) -> dict[str, list[ImpactHit]]:
        parsed = [_parse_spec(s) for s in specs]
        refuse_duplicate_qids([str(s["qid"]) for s in parsed], "query specs")
        results: dict[str, list[ImpactHit]] = {str(s["qid"]): [] for s in parsed}
        searchable = [s for s in parsed if _searchable(s)]
        if not searchable:
            return results
        self._warn_unknown_terms(searchable, encoded)
        with tempfile.TemporaryDirectory(prefix="lsr-impact-searcher-") as tmp:
            run = Path(tmp, "run")
            self._searcher.search_to_run(searchable, run, k=k, threads=threads, tag="x", heap_factor=heap_factor)
            rows = read_hits(run)
        for qid, hits in rows.items():
            results[qid] = self._hits(hits)
        return results

    def search_to_run(self, specs: Sequence[Mapping], output: str | Path, k: int = 1000, threads: int = 1,
                      tag: str = "lsr_lucene", overwrite: bool = False, model: str | None = None,
                      hand_written: bool = True) -> list[str]:
        """Search query specs as one JVM batch and write the TREC run at ``output`` (what ``lsr-lucene search``
        writes); returns the qids that got no hits. Terms the index lacks are named in warning lines unless they
        are terms of ``model``'s vocabulary (default: the index's); model-made specs (``hand_written`` false) are
        checked only when that vocabulary is at hand (``search.impact.run_specs``)."""
        from lsr_lucene.io.output import refuse_existing
        from lsr_lucene.search.impact import specs_to_run

        refuse_existing(output, overwrite)
        return specs_to_run(self._searcher, list(specs), output, k, threads, tag, model or self._model, hand_written)

    def _warn_unknown_terms(self, specs: Sequence[Mapping], encoded: bool = False) -> None:
        """A warning per query naming its terms that the index lacks (they would change nothing, silently).
        Specs of ``encoded`` text queries are checked against the query encoder's vocabulary, and not at all when
        it is not at hand (expansion terms that the collection lacks are normal)."""
        from lsr_lucene.search.impact import index_settings
        from lsr_lucene.search.unknown_terms import UnknownTerms, model_vocabulary, warn_unknown_terms

        if self._unknown_terms is None:
            self._unknown_terms = {}
        if encoded not in self._unknown_terms:
            model = index_settings(self.index_dir).get("model")
            if encoded:
                model = str(self._encoder_spec) if isinstance(self._encoder_spec, (str, Path)) else \
                    self._model if self._encoder_spec is None else None
            vocabulary = model_vocabulary(model)
            self._unknown_terms[encoded] = None if encoded and vocabulary is None else \
                UnknownTerms(self._searcher.index_searcher, vocabulary)
        if self._unknown_terms[encoded] is not None:
            warn_unknown_terms(self._unknown_terms[encoded], specs, stacklevel=5 if encoded else 4)

    # ---------------------------------------------------------------------------------------------- documents

    def raw(self, docid: str) -> str | None:
        """The stored raw document of an external docid (None when absent)."""
        lucene = self._lucene_docids([docid])[0]
        return None if lucene < 0 else self._raw(lucene)

    def doc(self, docid: str | int) -> ImpactDocument | None:
        """Pyserini's ``searcher.doc``: the document of an external docid (str) or Lucene docid (int), None when
        the index has no such document."""
        if isinstance(docid, int):
            if not 0 <= docid < self.num_docs:
                return None
            lucene, external = docid, self._searcher.docid(docid)
        else:
            lucene, external = self._lucene_docids([docid])[0], str(docid)
            if lucene < 0:
                return None
        return ImpactDocument(external, int(lucene), self._raw(lucene))

    def _raw(self, lucene_docid: int) -> str | None:
        return self._searcher.stored_field(lucene_docid)

    def _lucene_docids(self, docids: Sequence[str]) -> list[int]:
        return self._searcher.lucene_docids(docids)

    def _hits(self, rows: Sequence[tuple[str, float]]) -> list[ImpactHit]:
        lucene = self._lucene_docids([d for d, _ in rows])
        return [ImpactHit(d, s, int(n), self._raw) for (d, s), n in zip(rows, lucene)]

    def close(self) -> None:
        self._searcher.close()

    def __enter__(self) -> "ImpactSearcher":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _searchable(spec: Mapping) -> bool:
    """Whether a spec can match anything (like ``run_specs``: some term, pair or window)."""
    return bool(spec.get("terms") or spec.get("pairs") or spec.get("windows"))
