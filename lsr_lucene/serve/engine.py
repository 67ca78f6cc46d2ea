"""What the server searches with: one ``ImpactSearcher`` and one ``ComposeSearcher`` over an index, loaded at startup.

Everything lazily made (the query encoder, the docid table, the unknown-term checker, the JIT's first paths) is made
in ``SearchEngine.__init__`` by a warm-up search, not raced on by the first requests. The query encoder (an HF fast
tokenizer: not thread-safe, huggingface/tokenizers #537) is shared by text and composed queries and called under one
lock; the Java searches run outside it, in parallel on the server's worker threads.
"""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Mapping, NamedTuple

from lsr_lucene.errors import InputError
from lsr_lucene.search.spec_searcher import check_heap_factor


class SearchEngine:
    """Text, vector and composed searches over one impact index; hits as Anserini v1 ``candidates``."""

    def __init__(self, index_dir: str | Path, name: str | None = None, encoder: str | None = None,
                 approximate: int = 0, query_cut: int | None = None, compose: bool = True,
                 heap_factor: float = 1.0):
        """``approximate``, ``query_cut``, ``heap_factor``: the server's defaults of every text and vector search
        (each request may give its own; the searcher is shared by the worker threads, so a request's heap factor
        is passed with its search, never set on the searcher). Composed searches stay exact."""
        from lsr_lucene.search.impact import index_settings, query_model_name
        from lsr_lucene.search.impact_searcher import ImpactSearcher

        path = Path(index_dir)
        if not path.is_dir():
            raise InputError(f"{index_dir}: no such index directory")
        self.index_dir = str(index_dir)
        self.name = name or path.resolve().name
        self.searcher = ImpactSearcher(self.index_dir, encoder=encoder, approximate=approximate, query_cut=query_cut,
                                       heap_factor=heap_factor)
        settings = index_settings(self.index_dir)
        self.model = query_model_name(self.index_dir, settings, encoder)  # recorded none: an error, not a guess
        self.lock = threading.Lock()  # the query encoder's
        _ = self.searcher.query_encoder  # loads the model now (unknown encoder: an error before listening)
        self.num_docs = self.searcher.num_docs
        _ = self.searcher.spec_searcher.docids  # the docid table, read once
        self.search_text("warm up", 1)  # makes the unknown-term checker and runs the Java paths once
        self.composer = None
        if compose:
            from lsr_lucene.compose.searcher import ComposeSearcher

            # the search's SpecSearcher, shared: the index, its docids and sidecars held once (compose is exact)
            self.composer = ComposeSearcher(self.index_dir, encoder=self.searcher.query_encoder,
                                            searcher=self.searcher.spec_searcher)
            _ = self.composer.query_encoder, self.composer.backend  # made now, not raced on by the first requests
            if self.composer.dense_leg is not None:  # the default's dense leg (<index>/dense), loaded now too
                _ = self.composer.dense_leg.encoder
            from lsr_lucene.compose.intent_model import load

            load()  # the cue parser's intent model and its embedding's encoder, loaded now

    # ----------------------------------------------------------------------------------------------- searches

    def _k(self, hits: int) -> int:
        """Hits asked, capped at the index size (more cannot come back; Java need not allocate them)."""
        return max(1, min(int(hits), self.num_docs or 1))

    def search_text(self, text: str, hits: int = 10, approximate: int | None = None,
                    query_cut: int | None = None, doc: bool = False, heap_factor: float | None = None) -> list[dict]:
        """Candidates of a text query, encoded as ``lsr-lucene search --topics`` encodes it."""
        check_heap_factor(heap_factor, optional=True)  # None: the server's
        with self.lock:
            terms = self.searcher.encode([text])[0] if text.strip() else {}
        if not terms:
            return []
        found = self.searcher.search_spec({"qid": "q", "terms": terms}, self._k(hits), approximate, query_cut,
                                          heap_factor)
        return candidates(found, doc)

    def search_vector(self, vector: Mapping[str, float], hits: int = 10, approximate: int | None = None,
                      query_cut: int | None = None, doc: bool = False, heap_factor: float | None = None) -> list[dict]:
        """Candidates of a {term: weight} query, searched as a ``search --query-vectors`` line is."""
        check_heap_factor(heap_factor, optional=True)  # None: the server's
        terms = query_vector(vector)
        found = self.searcher.search_spec({"qid": "q", "terms": terms}, self._k(hits), approximate, query_cut,
                                          heap_factor)
        return candidates(found, doc)

    def compose(self, query: str | Mapping, hits: int = 10, options: Mapping[str, Any] | None = None,
                doc: bool = False) -> tuple[Any, list[dict]]:
        """(the composition tree searched as JSON, candidates) of a natural-language negation or a JSON tree,
        as ``lsr-lucene compose --query`` / ``--composition`` searches it."""
        from lsr_lucene.compose.tree import tree_to_json

        from lsr_lucene.compose.execute import compose
        from lsr_lucene.compose.searcher import composition
        from lsr_lucene.io.ranking import ordered

        if self.composer is None:
            raise InputError("this server was started without composed search")
        try:
            comp = composition(query, "q")
        except InputError as exc:  # named by its request field ("query: empty query"), not "query query: ..."
            field, message = "query" if isinstance(query, str) else "composition", str(exc)
            raise InputError(f"{field}:{message[len('query q:'):]}" if message.startswith("query q:") else message) \
                from None
        options = {k: v for k, v in (options or {}).items() if v is not None}
        for key, value in options.items():  # a bad one named by its field
            try:
                self.composer.settings_with(**{key: value})
            except InputError as exc:
                raise InputError(f"{key}: {exc}") from None
        settings = self.composer.settings_with(**options) if options else self.composer.settings
        with self.lock:
            plans = compose([comp], settings, self.composer.query_encoder)
        ranked = ordered(self.composer.rank([comp], plans, self._k(hits))[comp.qid])
        found = candidates([ComposedHit(d, s) for d, s in ranked])
        if doc:
            for row in found:
                row["doc"] = self.searcher.raw(row["docid"])
        return tree_to_json(comp.tree), found

    def document(self, docid: str) -> Any:
        """The stored document of a docid as JSON (the stored vector line, an object; a stored text that is no JSON
        stays a string); KeyError when the index lacks it."""
        raw = self.searcher.raw(docid)
        if raw is None:
            raise KeyError(docid)
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw

    def close(self) -> None:
        if self.composer is not None:
            self.composer.close()
        self.searcher.close()


class ComposedHit(NamedTuple):
    docid: str
    score: float


def query_vector(vector: Any, where: str = "vector") -> dict[str, float]:
    """A {term: weight} query validated as a ``--query-vectors`` JSONL line is (zero weights dropped)."""
    from lsr_lucene.io.topics import query_weights

    if not isinstance(vector, Mapping):
        raise InputError(f"{where}: expected an object {{term: weight}}, got {type(vector).__name__}")
    weights = {t: w for t, w in query_weights(dict(vector), where).items() if w != 0}
    if not weights:
        raise InputError(f"{where}: no term with a non-zero weight")
    return weights


def candidates(hits, doc: bool = False) -> list[dict]:
    """Anserini v1 candidates: docid, score (as the run prints it), 1-based rank; the stored document if asked."""
    from lsr_lucene.io.runs import format_score

    out = []
    for rank, hit in enumerate(hits, 1):
        row = {"docid": hit.docid, "score": float(format_score(hit.score)), "rank": rank}
        if doc:
            row["doc"] = hit.raw
        out.append(row)
    return out
