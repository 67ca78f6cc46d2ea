"""The FastAPI application of ``lsr-lucene serve``: Anserini's REST v1 routes over a ``SearchEngine``.

Routes: ``GET /``, ``GET /health``, ``GET|POST /v1/{index}/search``, ``POST /v1/{index}/compose``,
``POST /v1/{index}/batch``, ``GET /v1/{index}/doc/{docid}``. Responses have Anserini's v1 shape
(``{"api", "index", "query": {"qid", "text"}, "candidates": [{"docid", "score", "rank"}]}``, ranks 1-based); every
error is JSON ``{"error": "..."}`` naming the field (400 bad input, 404 unknown index / route / docid, 405
wrong method, 413 a body over the server's limit, 500 anything else), never FastAPI's 422 ``{"detail"}``.
Searches run on a ``JvmWorkerPool`` so the event loop keeps serving while the JVM works.
"""
from __future__ import annotations

import asyncio
import logging
import re
from contextlib import asynccontextmanager
from typing import Annotated, Any, Callable, Optional, Union

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import (AliasChoices, BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr,
                      WithJsonSchema)
from starlette.exceptions import HTTPException

from lsr_lucene import __version__
from lsr_lucene.errors import retired
from lsr_lucene.errors import InputError
from lsr_lucene.search.spec_searcher import check_heap_factor
from lsr_lucene.serve import MAX_BODY_MB
from lsr_lucene.serve.engine import SearchEngine
from lsr_lucene.serve.pool import JvmWorkerPool

log = logging.getLogger("lsr_lucene.serve")

Hits = Annotated[StrictInt, Field(gt=0, description="number of hits (default 10)")]
HEAP_FACTOR_HELP = ("1 exact; H in (0, 1) approximate block-max search of plain queries, pruning against threshold / H "
                    "(default: the server's --heap-factor)")
HeapFactor = Annotated[StrictFloat, Field(description=HEAP_FACTOR_HELP)]  # its range: the searcher's one check
Qid = Union[StrictStr, StrictInt]
Vector = Annotated[dict[str, Any], WithJsonSchema({"type": "object", "additionalProperties": {"type": "number"}}),
                   Field(description="{term: weight}, read as a `search --query-vectors` JSONL line")]


class SearchBody(BaseModel):
    """A text query (``query`` / ``query_text``) or a term-weight query (``vector`` / ``query_tokens``)."""

    model_config = ConfigDict(extra="forbid")
    query: Optional[StrictStr] = Field(None, validation_alias=AliasChoices("query", "query_text"),
                                       description="text, encoded as `lsr-lucene search --topics` does")
    vector: Optional[Vector] = Field(None, validation_alias=AliasChoices("vector", "query_tokens"))
    hits: Hits = 10
    qid: Qid = ""
    heap_factor: Optional[HeapFactor] = None
    doc: StrictBool = Field(False, description="add each hit's stored document")


class ComposeBody(BaseModel):
    """A natural-language negation (``query``, cue parser) or a composition tree (``composition``)."""

    model_config = ConfigDict(extra="forbid")
    query: Optional[StrictStr] = Field(None, description="e.g. 'tea without caffeine', or in the explicit syntax "
                                                         "'tea -caffeine' / 'tea NOT (caffeine OR milk)' (as "
                                                         "`compose --query`)")
    composition: Optional[Union[StrictStr, dict[str, Any]]] = Field(
        None, description='e.g. {"op": "not", "a": "tea", "b": "caffeine"} (as `compose --composition`)')
    hits: Hits = 10
    qid: Qid = ""
    operation: Optional[StrictStr] = Field(None, description="operation of every node type it applies to")
    not_op: Optional[StrictStr] = None
    and_op: Optional[StrictStr] = None
    or_op: Optional[StrictStr] = None
    doc: StrictBool = False


class BatchQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    qid: Qid
    query: Optional[StrictStr] = Field(None, validation_alias=AliasChoices("query", "query_text"))
    vector: Optional[Vector] = Field(None, validation_alias=AliasChoices("vector", "query_tokens"))


class BatchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    queries: list[BatchQuery]
    hits: Hits = 10
    heap_factor: Optional[HeapFactor] = None


class Candidate(BaseModel):
    docid: str
    score: float
    rank: int
    doc: Optional[str] = None


class QueryEcho(BaseModel):
    qid: Qid
    text: Optional[str]


class SearchResponse(BaseModel):
    api: str = "v1"
    index: str
    query: QueryEcho
    candidates: list[Candidate]


class ComposeResponse(SearchResponse):
    composition: Any  # the tree ranked
    exclude: Any = None  # the strict filter of the query's explicit exclusions (-word, NOT word): documents removed


class BatchResponse(BaseModel):
    results: list[SearchResponse]


class DocResponse(BaseModel):
    api: str = "v1"
    index: str
    docid: str
    doc: Any  # the stored document as JSON (an object), not a string holding escaped JSON


class Health(BaseModel):
    status: str = Field(description='"ok", or "loading" (answered 503) while the models load after the server '
                                    'started listening')
    index: str
    num_docs: int
    model: str


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


RETIRED_FIELDS = ("approximate", "query_cut")  # of the retired top-postings mode: refused, naming heap_factor
UNION_TAG = re.compile(r"^(str|int|float|bool|dict\[.*\]|list\[.*\]|function-.*)$")  # pydantic's union members


def validation_message(exc: RequestValidationError) -> str:
    """One line naming the field of FastAPI's first validation error (its location kind and union tags dropped:
    ``qid`` rather than ``body.qid.str``; a field named ``query`` stays named)."""
    first = exc.errors()[0]
    loc = [str(p) for p in first.get("loc", ())[1:] if not UNION_TAG.match(str(p))]
    field, kind, msg = ".".join(loc), first.get("type", ""), first.get("msg", "invalid")
    if kind == "json_invalid":
        return f"malformed JSON body: {first.get('ctx', {}).get('error', msg)}"
    if kind == "missing" and not loc:
        return "missing JSON body"
    if kind == "extra_forbidden":
        return retired(field) if field in RETIRED_FIELDS else f"unknown field {field!r}"
    if kind == "model_attributes_type" and not loc:
        return "the JSON body must be an object"
    return f"{field}: {msg}" if field else msg


class JsonBodies:
    """ASGI middleware: a POST body is read as JSON whatever its Content-Type (``curl -d '{...}'`` sends a form's),
    as Anserini's and OpenSearch's endpoints read it."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "POST":
            headers = [(k, v) for k, v in scope["headers"] if k != b"content-type"]
            scope = dict(scope, headers=headers + [(b"content-type", b"application/json")])
        await self.app(scope, receive, send)


class BodyTooLarge(HTTPException):
    """A request body over the server's limit: 413, answered as JSON by the app's HTTPException handler (FastAPI
    passes HTTPExceptions raised while a body is read through unchanged)."""

    def __init__(self, limit: int):
        super().__init__(413, f"request body over {limit:,} bytes, the server's limit (lsr-lucene serve "
                              "--max-body-mb)")


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes is answered 413 ``{"error"}`` before it is read whole,
    by its Content-Length or, sent in chunks, as it arrives, so one request cannot take the server's memory (uvicorn
    sets no limit; Starlette's own limit answers in plain text, and this API's errors are JSON)."""

    def __init__(self, app, limit: int):
        self.app = app
        self.limit = int(limit)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.limit:
            await error(413, BodyTooLarge(self.limit).detail)(scope, receive, send)
            return
        received = 0

        async def counted():  # a body sent in chunks: raised as it grows past the limit, answered by the handler
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise BodyTooLarge(self.limit)
            return message

        await self.app(scope, counted, send)


class HeadAsGet:
    """ASGI middleware: HEAD is answered as GET without the body (RFC 9110 9.3.2; FastAPI's routes list GET only),
    so ``curl -I .../health`` works as a readiness probe."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message):
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app(dict(scope, method="GET"), receive, headers_only)


def unicode_error(value: Any, where: str) -> Optional[str]:
    """The field path of the first string (or key) of a request body holding a lone surrogate (JSON's ``"\\ud800"``
    escapes one; it is not Unicode text and cannot be encoded, nor answered), else None."""
    if isinstance(value, str):
        return None if not any("\ud800" <= c <= "\udfff" for c in value) else where
    if isinstance(value, dict):
        for key, item in value.items():
            found = unicode_error(key, f"{where} key") or unicode_error(item, f"{where}.{key}")
            if found:
                return found
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = unicode_error(item, f"{where}.{i}")
            if found:
                return found
    return None


def check_unicode(body: BaseModel) -> None:
    """InputError naming the field when a body's string holds a lone surrogate (before any search)."""
    for name, value in body.model_dump().items():
        found = unicode_error(value, name)
        if found:
            raise InputError(f"{found}: a string holds a lone surrogate (not Unicode text)")


def create_app(engine: SearchEngine, threads: int = 2, max_body_bytes: int = MAX_BODY_MB << 20) -> FastAPI:
    """The application: routes over ``engine``, searches on ``threads`` JVM-attached worker threads, request bodies
    up to ``max_body_bytes``."""
    state: dict[str, JvmWorkerPool] = {}

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        state["pool"] = JvmWorkerPool(threads)
        try:
            yield
        finally:
            state.pop("pool").close()

    app = FastAPI(title="lsr_lucene", version=__version__, lifespan=lifespan,
                  description="Learned sparse retrieval on a Lucene impact index (Anserini REST v1 shape).")

    app.add_middleware(JsonBodies)
    app.add_middleware(HeadAsGet)
    app.add_middleware(BodyLimit, limit=max_body_bytes)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        index = request.path_params.get("index")
        if index is not None and index != engine.name:  # the unknown index first, as for a valid request
            return unknown_index(index)
        return error(400, validation_message(exc))

    def allowed(scope) -> list[str]:
        """The methods of every route at this path (the 405's ``Allow``; HEAD wherever GET is)."""
        from starlette.routing import Match

        methods = set()
        for route in app.router.routes:
            if route.matches(scope)[0] != Match.NONE:
                methods |= set(getattr(route, "methods", None) or ())
        if "GET" in methods:
            methods.add("HEAD")
        return sorted(methods)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException):
        if exc.status_code == 404 and exc.detail == "Not Found":
            return error(404, f"no route {request.url.path}")
        if exc.status_code == 405:
            methods = allowed(request.scope)
            response = error(405, f"method {request.method} not allowed on {request.url.path} (allowed: "
                                  f"{', '.join(methods)})")
            response.headers["Allow"] = ", ".join(methods)
            return response
        if exc.status_code == 400 and exc.__cause__ is not None:  # FastAPI's "error parsing the body": say why
            cause = exc.__cause__
            why = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
            return error(400, f"malformed JSON body: {why}")
        return error(exc.status_code, str(exc.detail))

    def unknown_index(index: str) -> JSONResponse:
        return error(404, f"unknown index {index!r} (this server has {engine.name!r})")

    async def run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await asyncio.wrap_future(state["pool"].submit(fn, *args, **kwargs))

    async def respond(index: str, make: Callable[[], Any], body: Optional[BaseModel] = None) -> JSONResponse:
        """The JSON of ``await make()``, or the error it raised: InputError 400, anything else 500."""
        if index != engine.name:
            return unknown_index(index)
        try:
            if body is not None:
                check_unicode(body)
            return JSONResponse(await make())
        except InputError as exc:
            return error(400, str(exc))
        except KeyError as exc:
            return error(404, f"unknown docid {exc.args[0]!r}")
        except Exception as exc:  # noqa: BLE001  (one line to the client, the server carries on)
            message = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            log.error("500 on %s: %s: %s", index, type(exc).__name__, message)
            return error(500, message)

    def response(qid, text, found: list[dict]) -> dict:
        return {"api": "v1", "index": engine.name, "query": {"qid": qid, "text": text}, "candidates": found}

    async def search_one(qid, query, vector, hits, doc, heap_factor=None) -> dict:
        if query is not None and vector is not None:
            raise InputError("give either query or vector, not both")
        if vector is not None:
            found = await run(engine.search_vector, vector, hits, doc, heap_factor)
            return response(qid, None, found)
        if query is None or not query.strip():
            raise InputError("query: missing or empty (give a text query or a vector)")
        return response(qid, query, await run(engine.search_text, query, hits, doc, heap_factor))

    @app.get("/", summary="Server name, version and documentation")
    async def root() -> dict:
        return {"name": "lsr_lucene", "version": __version__, "documentation": "/docs", "indexes": [engine.name]}

    @app.get("/health", response_model=Health, summary="Readiness probe")
    async def health():
        return JSONResponse({"status": "ok" if engine.ready else "loading", "index": engine.name,
                             "num_docs": engine.num_docs, "model": engine.model},
                            status_code=200 if engine.ready else 503)  # 503 while the models load

    @app.get("/v1/{index}/search", response_model=SearchResponse, summary="Search with a text query")
    async def search_get(request: Request, index: str,
                         query: Annotated[Optional[str], Query(description="query text")] = None,
                         hits: Annotated[int, Query(gt=0)] = 10, qid: str = "", doc: bool = False,
                         heap_factor: Annotated[Optional[float], Query(description=HEAP_FACTOR_HELP)] = None):
        async def make() -> dict:
            given = [name for name in RETIRED_FIELDS if name in request.query_params]
            if given:
                raise InputError(retired(given[0]))
            return await search_one(qid, query, None, hits, doc, heap_factor)

        return await respond(index, make)

    @app.post("/v1/{index}/search", response_model=SearchResponse, summary="Search with a text or vector query")
    async def search_post(index: str, body: SearchBody):
        return await respond(index, lambda: search_one(body.qid, body.query, body.vector, body.hits, body.doc,
                                                       body.heap_factor), body)

    @app.post("/v1/{index}/compose", response_model=ComposeResponse,
              summary="Search a negation ('tea without caffeine') or a composition tree")
    async def compose(index: str, body: ComposeBody):
        async def make() -> dict:
            if (body.query is None) == (body.composition is None):
                raise InputError("give exactly one of query (natural language) or composition (a tree)")
            source: str | dict = body.query if body.query is not None else (body.composition or {})
            options = {"operation": body.operation, "not_op": body.not_op, "and_op": body.and_op,
                       "or_op": body.or_op}
            tree, found = await run(engine.compose, source, body.hits, options, body.doc)
            out = response(body.qid, body.query, found)
            out["composition"] = tree
            from lsr_lucene.compose.searcher import composition

            out["exclude"] = composition(source, "query").exclude  # the strict filter searched, None when none
            return out

        return await respond(index, make, body)

    @app.post("/v1/{index}/batch", response_model=BatchResponse, summary="Search several queries")
    async def batch(index: str, body: BatchBody):
        async def make() -> dict:
            check_heap_factor(body.heap_factor, optional=True)  # one error for the batch, not one per query
            jobs = [search_one(q.qid, q.query, q.vector, body.hits, False, body.heap_factor) for q in body.queries]
            results = await asyncio.gather(*jobs, return_exceptions=True)
            for q, result in zip(body.queries, results):
                if isinstance(result, InputError):
                    raise InputError(f"query {q.qid}: {result}")
                if isinstance(result, BaseException):
                    raise result
            return {"results": results}

        return await respond(index, make, body)

    @app.get("/v1/{index}/doc/{docid:path}", response_model=DocResponse, summary="A stored document")
    async def document(index: str, docid: str):
        async def make() -> dict:
            return {"api": "v1", "index": engine.name, "docid": docid, "doc": await run(engine.document, docid)}

        return await respond(index, make)

    return app
