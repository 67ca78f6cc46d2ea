"""What the servers search with: one ``ImpactSearcher`` and one ``ComposeSearcher`` over an index.

What the user can get wrong is checked at once (the index, opened in the JVM; the encoder's name, located without
loading it), so a server fails before it listens. The rest (torch and the query encoder, the docid table, the
unknown-term checker and the JIT's first paths by a warm-up search, the composer, the dense leg's and the intent
model's encoders) is loaded by :meth:`SearchEngine.load` after the server listens (``loading="later"``): every
search waits until it is done, so no request races on a lazily made part and the first
answer equals a warm one. The query encoder (an HF fast tokenizer: not thread-safe, huggingface/tokenizers #537) is
shared by text and composed queries and called under one lock; the Java searches run outside it, in parallel on the
server's worker threads.
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Mapping, NamedTuple

from lsr_lucene.errors import InputError, SetupError
from lsr_lucene.search.spec_searcher import check_heap_factor


class SearchEngine:
    """Text, vector and composed searches over one impact index; hits as Anserini v1 ``candidates``."""

    def __init__(self, index_dir: str | Path, name: str | None = None, encoder: str | None = None,
                 compose: bool = True, heap_factor: float = 1.0, loading: str = "now"):
        """``heap_factor``: the server's default of every text and vector search
        (each request may give its own; the searcher is shared by the worker threads, so a request's heap factor
        is passed with its search, never set on the searcher). Composed searches stay exact. ``loading``: "now"
        (:meth:`load` before this returns) or "later" (the caller calls :meth:`load` or :meth:`load_in_thread`
        once its server listens); searches wait for it."""
        from lsr_lucene.encode.models import REGISTRY, locate
        from lsr_lucene.search.impact import index_settings, query_model_name
        from lsr_lucene.search.impact_searcher import ImpactSearcher

        path = Path(index_dir)
        if not path.is_dir():
            raise InputError(f"{index_dir}: no such index directory")
        self.index_dir = str(index_dir)
        self.name = name or path.resolve().name
        started = time.perf_counter()
        # the JVM and the index: a bad index fails here
        self.searcher = ImpactSearcher(self.index_dir, encoder=encoder, heap_factor=heap_factor)
        settings = index_settings(self.index_dir)
        self.model = query_model_name(self.index_dir, settings, encoder)  # recorded none: an error, not a guess
        locate(REGISTRY, self.model)  # an unknown encoder fails now, in a second, not after the server listens
        self.num_docs = self.searcher.num_docs
        self.seconds: dict[str, float] = {"jvm and index": time.perf_counter() - started}  # load time per part
        self.lock = threading.Lock()  # the query encoder's
        self.composer = None
        self._compose = compose
        self._searchable = threading.Event()  # text, vector searches and documents: the encoder and the warm-up
        self._loaded = threading.Event()  # everything, composed searches too
        self._failure: BaseException | None = None
        self._started = False  # load() has begun
        self._closing = False  # close() was called: load() stops before its next part
        if loading not in ("now", "later"):
            raise ValueError(f"loading must be 'now' or 'later', got {loading!r}")
        if loading == "now":
            self.load()
            self.wait()

    def load(self) -> None:
        """Load every part the searches use lazily, timing each (``seconds``); a failure is kept for :meth:`wait`."""
        def timed(part: str, make) -> Any:
            if self._closing:
                raise SetupError(f"{self.name}: closed while loading")  # a server stopping: no more to load
            started = time.perf_counter()
            made = make()
            self.seconds[part] = time.perf_counter() - started
            return made

        self._started = True
        try:
            timed("query encoder", lambda: self.searcher.query_encoder)  # torch and the model
            timed("docids", lambda: self.searcher.spec_searcher.docids)  # the docid table, read once
            timed("warm-up search", lambda: self._search_text("warm up", 1))  # unknown-term checker, JIT paths
            self._searchable.set()
            if self._compose:
                composer = self.composer = timed("composer", self._make_composer)
                if composer.dense_leg is not None:  # the default's dense leg (<index>/dense), loaded now too
                    timed("dense leg encoder", lambda: composer.dense_leg.encoder)
                from lsr_lucene.compose.intent_model import load

                timed("intent model", load)  # the cue parser's intent model and its embedding's encoder
        except BaseException as exc:  # noqa: BLE001  (re-raised by wait, in the thread that searches)
            self._failure = exc
        finally:
            self._searchable.set()
            self._loaded.set()

    def load_in_thread(self) -> None:
        """:meth:`load` on a thread of its own, which leaves the JVM when done (a thread that ends attached leaks
        its Java thread: :mod:`lsr_lucene.serve.pool`)."""
        import contextlib

        def detached() -> None:
            import jnius

            try:
                self.load()
            finally:
                with contextlib.suppress(Exception):
                    jnius.detach()

        threading.Thread(target=detached, name=f"load {self.name}", daemon=True).start()

    def _make_composer(self):
        from lsr_lucene.compose.searcher import ComposeSearcher

        # the search's SpecSearcher, shared: the index, its docids and sidecars held once (compose is exact)
        composer = ComposeSearcher(self.index_dir, encoder=self.searcher.query_encoder,
                                   searcher=self.searcher.spec_searcher)
        _ = composer.query_encoder, composer.backend  # made now, not raced on by the first requests
        return composer

    @property
    def ready(self) -> bool:
        """Whether everything is loaded (a failed load is not ready)."""
        return self._loaded.is_set() and self._failure is None

    def wait(self, timeout: float | None = None, compose: bool = True) -> None:
        """Block until :meth:`load` is done (``compose`` False: until text and vector searches can run); its
        failure is raised here (an ``LsrError`` as it was; anything else as a SetupError naming the index).
        ``timeout`` (seconds): TimeoutError if still loading then."""
        if not (self._loaded if compose else self._searchable).wait(timeout):
            raise TimeoutError(f"{self.name} is still loading after {timeout:g} s")
        failure = self._failure
        if failure is None:
            return
        if isinstance(failure, SetupError | InputError):
            raise type(failure)(*failure.args)  # a fresh one: each waiting request gets a clean traceback
        first = (str(failure).strip().splitlines() or [type(failure).__name__])[0]
        raise SetupError(f"{self.name}: loading failed: {first}") from failure

    # ----------------------------------------------------------------------------------------------- searches

    def _k(self, hits: int) -> int:
        """Hits asked, capped at the index size (more cannot come back; Java need not allocate them)."""
        return max(1, min(int(hits), self.num_docs or 1))

    def search_text(self, text: str, hits: int = 10, doc: bool = False, heap_factor: float | None = None
                    ) -> list[dict]:
        """Candidates of a text query, encoded as ``lsr-lucene search --topics`` encodes it."""
        self.wait(compose=False)
        return self._search_text(text, hits, doc, heap_factor)

    def _search_text(self, text: str, hits: int = 10, doc: bool = False, heap_factor: float | None = None
                     ) -> list[dict]:
        check_heap_factor(heap_factor, optional=True)  # None: the server's
        with self.lock:
            terms = self.searcher.encode([text])[0] if text.strip() else {}
        if not terms:
            return []
        found = self.searcher.search_spec({"qid": "q", "terms": terms}, self._k(hits), heap_factor)
        return candidates(found, doc)

    def search_vector(self, vector: Mapping[str, float], hits: int = 10, doc: bool = False,
                      heap_factor: float | None = None) -> list[dict]:
        """Candidates of a {term: weight} query, searched as a ``search --query-vectors`` line is."""
        self.wait(compose=False)
        check_heap_factor(heap_factor, optional=True)  # None: the server's
        terms = query_vector(vector)
        found = self.searcher.search_spec({"qid": "q", "terms": terms}, self._k(hits), heap_factor)
        return candidates(found, doc)

    def compose(self, query: str | Mapping, hits: int = 10, options: Mapping[str, Any] | None = None,
                doc: bool = False, explain: bool = False) -> tuple[Any, list[dict]]:
        """(the composition tree searched as JSON, candidates) of a natural-language negation or a JSON tree,
        as ``lsr-lucene compose --query`` / ``--composition`` searches it; ``explain``: each candidate's
        ``"explanation"`` (``DocExplanation``: the legs, gate and penalty, as ``compose --explain`` prints them)."""
        from lsr_lucene.compose.tree import tree_to_json

        from lsr_lucene.compose.execute import compose
        from lsr_lucene.compose.searcher import composition
        from lsr_lucene.io.ranking import ordered

        self.wait()
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
        traces: dict | None = {} if explain else None
        ranked = ordered(self.composer.rank([comp], plans, self._k(hits), traces=traces)[comp.qid])
        found = candidates([ComposedHit(d, s) for d, s in ranked])
        if traces is not None:
            from lsr_lucene.compose.explain import explain_docs

            accounts = explain_docs(plans[0], ranked, self.composer.backend, self.composer.scale, len(ranked),
                                    traces.get(comp.qid))
            for row, account in zip(found, accounts):
                row["explanation"] = account
        if doc:
            for row in found:
                row["doc"] = self.searcher.raw(row["docid"])
        return tree_to_json(comp.tree), found

    def document(self, docid: str) -> Any:
        """The stored document of a docid as JSON (the stored vector line, an object; a stored text that is no JSON
        stays a string); KeyError when the index lacks it."""
        self.wait(compose=False)
        raw = self.searcher.raw(docid)
        if raw is None:
            raise KeyError(docid)
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw

    def close(self) -> None:
        self._closing = True
        if self._started:
            self._loaded.wait()  # not while the loader still uses the searcher (it stops after its current part)
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
