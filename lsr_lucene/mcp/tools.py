"""The MCP server's tools over :class:`~lsr_lucene.mcp.indexes.Indexes`, with descriptions written for a language
model: what a score is, what an exclusion is, when to compose.

Every answer is the CLI's: ``search`` is ``lsr-lucene search`` (``--topics`` / ``--query-vectors``), ``compose`` is
``lsr-lucene compose`` (``--query`` / ``--composition``), same docids, order and scores as the run file prints them.
Bad arguments are a tool error naming the argument (the server keeps serving).
"""
from __future__ import annotations

import contextlib
from typing import Annotated, Any, Optional, Union

from pydantic import Field

from lsr_lucene.errors import LsrError
from lsr_lucene.mcp.indexes import Indexes

INSTRUCTIONS = """\
Learned sparse retrieval (SPLADE-style term weights) over local Lucene impact indexes.
Call list_indexes first to see which indexes exist and what each holds. Use `search` for an ordinary information
need. Use `compose` when the request excludes something ("X but not Y", "X without Y", "X, no Y", "X -Y") or
combines needs (AND / OR): plain search treats "not Y" as more words about Y and ranks Y documents high; compose
searches X and pushes documents about Y down. Scores rank documents within one answer only: compare them inside
a result list, never across queries, indexes or tools. Fetch a hit's full text with get_document; measure a list
of hits against relevance judgments (a qrels file the user names) with eval_hits."""

SCORE_NOTE = ("Scores only order the hits of this one call (higher is better; ties broken by docid); they are not "
              "probabilities and are not comparable across queries, tools or indexes.")
Hits = Annotated[int, Field(description="how many documents to return (1 or more; default 10)")]
IndexName = Annotated[Optional[str], Field(description="index name from list_indexes (may be left out when the server "
                                                        "holds one index)")]
WithText = Annotated[bool, Field(description="add each hit's text (default true)")]
TEXT_LIMIT = 2000  # characters of a hit's text returned by search / compose (get_document returns it whole)


def tool_error(message: str) -> Exception:
    """fastmcp's ToolError (what the client sees as the tool's error text), imported only when raised."""
    from fastmcp.exceptions import ToolError

    return ToolError(message)


def _check_hits(hits: Any) -> int:
    if isinstance(hits, bool) or not isinstance(hits, int) or hits < 1:
        raise tool_error(f"hits: expected a positive integer, got {hits!r}")
    return hits


def _texts(indexes: Indexes, name: str, rows: list[dict], with_text: bool) -> list[dict]:
    """Hits with their text (the stored document's ``contents``, cut at TEXT_LIMIT characters) when asked."""
    from lsr_lucene.search.impact_searcher import contents_of

    if with_text:
        engine = indexes.engines[name]
        for row in rows:
            text = contents_of(engine.searcher.raw(row["docid"])) or ""
            row["text"] = text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + " …"
    return rows


def short_explanation(account) -> str:
    """One line of why a composed hit scored what it did (a ``DocExplanation`` without its rank/score head)."""
    lines = account.lines()
    if account.nodes:
        return "; ".join(line.strip() for line in lines[1:])
    head = lines[0].split(" = ", 1)[1] if " = " in lines[0] else lines[0]
    return "terms: " + head + ("; " + lines[1].strip() if len(lines) > 1 else "")


def build_server(indexes: Indexes, name: str = "lsr-lucene"):
    """A FastMCP server with the tools over ``indexes``."""
    from fastmcp import FastMCP

    from lsr_lucene import __version__

    @contextlib.asynccontextmanager
    async def lifespan(_server):
        indexes.start_loading()  # the models load once the server runs (its handshake is not slowed by them)
        yield {}

    mcp = FastMCP(name, instructions=INSTRUCTIONS, version=__version__, mask_error_details=False, lifespan=lifespan)

    async def call(index: str | None, work):
        """``work(engine_name)`` on the JVM worker; a user error as a tool error naming the argument."""
        try:
            engine = indexes.engine(index)
            return await indexes.run(work, engine.name)
        except LsrError as exc:
            raise tool_error(str(exc)) from None

    @mcp.tool(annotations={"readOnlyHint": True}, description=f"""\
Search an index with a natural-language query (or a {{term: weight}} vector) and return the top documents, best
first: rank, docid, score and text. The query is encoded by the index's sparse model exactly as
`lsr-lucene search` encodes it, and the hits are that command's run. It does not understand negation: "tea
without caffeine" is read as words about tea AND caffeine; for exclusions and AND/OR combinations use `compose`.
{SCORE_NOTE}""")
    async def search(query: Annotated[Optional[str], Field(description="the query text")] = None,
                     index: IndexName = None, hits: Hits = 10,
                     vector: Annotated[Optional[dict[str, float]],
                                       Field(description="instead of query: {term: weight} in the model's vocabulary "
                                                         "(a `search --query-vectors` line)")] = None,
                     with_text: WithText = True) -> dict:
        k = _check_hits(hits)
        if (query is None) == (vector is None):
            raise tool_error("query: give either query (a text) or vector, not both and not neither")
        if query is not None and not query.strip():
            raise tool_error("query: empty query")

        def work(name: str) -> dict:
            engine = indexes.engines[name]
            found = engine.search_text(query, k) if query is not None else engine.search_vector(vector or {}, k)
            return {"index": name, "query": query if query is not None else vector,
                    "candidates": _texts(indexes, name, found, with_text)}

        return await call(index, work)

    @mcp.tool(annotations={"readOnlyHint": True}, description=f"""\
Search with an exclusion or a set combination, and see how it was read. An exclusion asks for documents about A
that are not about B ("A but not B", "A without B", "A, excluding B", "A -B", "A NOT (B OR C)"): documents about
B are pushed down, not merely ranked by more words. Give `query` in natural language (a cue parser finds the
negation; `tree` and `parse` in the answer show what it understood: check them) or an explicit `composition` tree
{{"op": "not"|"and"|"or", "a": ..., "b": ...}} whose leaves are texts. Use it instead of `search` whenever the user
excludes or combines topics; a query with no exclusion cue is searched as one text. Each hit carries an
`explanation`: the A and B leg scores, the dense cosine blended into A where the index has a dense leg, the gate
and the penalty. The hits are `lsr-lucene compose`'s run for the same query. {SCORE_NOTE}""")
    async def compose(query: Annotated[Optional[str], Field(description="natural-language request, e.g. 'tea "
                                                                        "without caffeine' or 'tea -caffeine'")] = None,
                      composition: Annotated[Optional[dict[str, Any]],
                                             Field(description='instead of query: a tree such as {"op": "not", '
                                                               '"a": "tea", "b": "caffeine"}')] = None,
                      index: IndexName = None, hits: Hits = 10,
                      operation: Annotated[Optional[str],
                                           Field(description="advanced: the operation of every node it applies to "
                                                             "(as compose --operation); leave out for the default")] = None,
                      with_text: WithText = True) -> dict:
        from lsr_lucene.compose.tree import format_tree, tree_from_json

        k = _check_hits(hits)
        if (query is None) == (composition is None):
            raise tool_error("query: give either query (a text) or composition (a tree), not both and "
                                         "not neither")

        def work(name: str) -> dict:
            from lsr_lucene.compose.query_syntax import read_query

            engine = indexes.engines[name]
            source: str | dict = query if query is not None else composition or {}
            tree, found = engine.compose(source, k, {"operation": operation}, explain=True)
            for row in found:
                row["explanation"] = short_explanation(row["explanation"])
            out: dict = {"index": name, "query": source, "tree": tree,
                         "reading": format_tree(tree_from_json(tree, "tree"))}
            if query is not None:
                out["parse"] = read_query(query).decisions()
            out["candidates"] = _texts(indexes, name, found, with_text)
            return out

        return await call(index, work)

    @mcp.tool(annotations={"readOnlyHint": True}, description="""\
Fetch one document of an index by its docid (as search and compose return it): its full text and stored fields
(the sparse vector left out unless with_vector).""")
    async def get_document(docid: Annotated[str, Field(description="the document's id")], index: IndexName = None,
                           with_vector: Annotated[bool, Field(description="add the stored term-weight vector")] = False
                           ) -> dict:
        def work(name: str) -> dict:
            try:
                stored = indexes.engines[name].document(docid)
            except KeyError:
                raise tool_error(f"docid: no document {docid!r} in index {name!r}") from None
            fields = dict(stored) if isinstance(stored, dict) else {"contents": stored}
            if not with_vector:
                fields.pop("vector", None)
            return {"index": name, "docid": docid, "text": fields.pop("contents", None), "fields": fields}

        return await call(index, work)

    @mcp.tool(annotations={"readOnlyHint": True}, description="""\
List the indexes this server searches, with what each records: name, documents, the sparse query encoder (model;
model_recorded false means the index did not say and the default is assumed), its dense leg (the embeddings that
compose blends in for exclusions; null: none, compose is weaker), positions (window clauses) and whether its models
have loaded (ready).""")
    async def list_indexes() -> list[dict]:
        return [indexes.describe(name) for name in indexes.names]

    @mcp.tool(annotations={"readOnlyHint": True}, description="""\
Describe one index as list_indexes does, with the metadata it records (encoder settings, postings, sidecars).""")
    async def get_index(index: IndexName = None) -> dict:
        try:
            return indexes.describe(indexes.engine(index).name, full=True)
        except LsrError as exc:
            raise tool_error(str(exc)) from None

    @mcp.tool(annotations={"readOnlyHint": True}, description="""\
Evaluate one query's hits against relevance judgments with trec_eval's measures (pytrec_eval, as lsr-lucene eval
computes them). `qrels` is a TREC qrels file the user points at ("qid 0 docid relevance" lines); `query_id` the
query's id in it; `hits` the candidates of a search or compose answer (or {docid: score}); `measures` trec_eval
names such as ndcg_cut.10, recall.100, map, recip_rank, P.5. Returns each measure's value for this query (0..1,
higher is better), how many documents the qrels judge relevant for it and how many hits were judged at all.""")
    async def eval_hits(qrels: Annotated[str, Field(description="path of a TREC qrels file")],
                        query_id: Annotated[str, Field(description="the query's id in the qrels")],
                        hits: Annotated[Union[list[dict[str, Any]], dict[str, float]],
                                        Field(description="candidates [{docid, score}, ...] or {docid: score}")],
                        measures: Annotated[Optional[list[str]],
                                            Field(description="trec_eval measures (default ndcg_cut.10, recall.100, "
                                                              "recip_rank)")] = None) -> dict:
        from lsr_lucene.mcp.evaluation import evaluate_hits

        try:
            return evaluate_hits(qrels, query_id, hits, measures)
        except LsrError as exc:
            raise tool_error(str(exc)) from None

    return mcp
