"""``lsr-lucene mcp``: driven by a real MCP client (fastmcp's ``Client``), in process and over stdio (a subprocess)
and streamable HTTP on 127.0.0.1; every hit list equals the CLI's run of the same query (docids, order, scores as
the run prints them), bad arguments are tool errors naming the argument, and the server keeps serving."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lsr_lucene.io.runs import read_hits

pytest.importorskip("fastmcp")
from fastmcp import Client  # noqa: E402
from fastmcp.client.transports import StdioTransport  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "lsr_lucene" / "data" / "demo"
HITS = 10
STARTUP_S = 180  # JVM, searcher and encoders load on a shared 2-core machine
TOOLS = {"search", "compose", "get_document", "list_indexes", "get_index", "eval_hits"}


def mcp_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "lsr_lucene.mcp", *args]


def environment() -> dict:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


@pytest.fixture(scope="module")
def runs(demo, tmp_path_factory):
    """The CLI's runs of the demo topics and compositions on the demo index."""
    from lsr_lucene.compose.cli import main as compose_main
    from lsr_lucene.search.cli import main as search_main

    root = tmp_path_factory.mktemp("mcp")
    index = demo / "index"
    topics = str(DEMO / "topics.tsv")
    common = ["--index", str(index), "--hits", str(HITS)]
    assert search_main([*common, "--topics", topics, "--output", str(root / "text.run")]) == 0
    assert compose_main([*common, "--topics", topics, "--output", str(root / "nl.run")]) == 0
    assert compose_main([*common, "--queries", str(DEMO / "compositions.jsonl"), "--output", str(root / "tree.run")]) == 0
    queries = dict(line.rstrip("\n").split("\t", 1) for line in open(topics, encoding="utf-8"))
    trees = {str(o["id"]): o["query"] for o in map(json.loads, open(DEMO / "compositions.jsonl", encoding="utf-8"))}
    return {"index": index, "queries": queries, "trees": trees,
            "runs": {name: read_hits(root / f"{name}.run") for name in ("text", "nl", "tree")}}


@pytest.fixture(scope="module")
def server(runs):
    """The MCP server in process over the demo index (its models loaded on the JVM worker behind the start)."""
    from lsr_lucene.mcp.indexes import Indexes
    from lsr_lucene.mcp.tools import build_server

    indexes = Indexes([runs["index"]])
    yield build_server(indexes)
    indexes.close()


def rows(answer: dict) -> list[tuple[str, float]]:
    ranks = [c["rank"] for c in answer["candidates"]]
    assert ranks == list(range(1, len(ranks) + 1))
    return [(c["docid"], c["score"]) for c in answer["candidates"]]


def run_rows(run: dict, qid: str) -> list[tuple[str, float]]:
    return [(d, float(s)) for d, s in run.get(qid, [])]


def talk(server, script):
    """``await script(client)`` with an in-process client of ``server``."""
    async def go():
        async with Client(server, timeout=STARTUP_S) as client:
            return await script(client)

    return asyncio.run(go())


def test_tools_are_listed_with_descriptions_for_a_model(server):
    async def script(client):
        return await client.list_tools(), client.instructions

    tools, instructions = talk(server, script)
    assert {t.name for t in tools} == TOOLS
    described = {t.name: t.description for t in tools}
    assert "exclusion" in described["compose"] and "compose" in described["search"]
    assert all("not probabilities" in described[name] for name in ("search", "compose"))
    assert "qrels" in described["eval_hits"] and "list_indexes" in (instructions or "")
    schema = {t.name: t.input_schema for t in tools}
    assert schema["search"]["properties"]["hits"]["type"] == "integer"
    assert "description" in schema["compose"]["properties"]["composition"]


def test_every_query_equals_the_cli_runs(server, runs):
    """search = ``lsr-lucene search --topics``; compose = ``lsr-lucene compose --topics`` / ``--queries``."""
    async def script(client):
        out = {}
        for qid, text in runs["queries"].items():
            out["text", qid] = (await client.call_tool("search", {"query": text, "hits": HITS})).structured_content
            out["nl", qid] = (await client.call_tool("compose", {"query": text, "hits": HITS})).structured_content
        for qid, tree in runs["trees"].items():
            out["tree", qid] = (await client.call_tool("compose", {"composition": tree, "hits": HITS})
                                ).structured_content
        return out

    answers = talk(server, script)
    for (kind, qid), answer in answers.items():
        assert rows(answer) == run_rows(runs["runs"][kind], qid), (kind, qid)
    composed = answers["tree", "1"]
    assert composed["tree"] == runs["trees"]["1"] and "NOT" in composed["reading"]
    assert all(c["explanation"] and c["text"] for c in composed["candidates"])
    worded = answers["nl", "1"]  # "tea without caffeine": the parse says which cue fired
    assert worded["tree"] == {"op": "not", "a": "tea", "b": "caffeine"}
    assert any("fired" in line for line in worded["parse"])
    assert all("penal" in c["explanation"] for c in worded["candidates"])  # penalised, not penalised, waived


def test_documents_indexes_and_evaluation(server, runs):
    from lsr_lucene.eval.trec import evaluate
    from lsr_lucene.io.corpus import read_corpus

    async def script(client):
        found = (await client.call_tool("search", {"query": runs["queries"]["1"], "hits": HITS})).structured_content
        doc = (await client.call_tool("get_document", {"docid": found["candidates"][0]["docid"]})).structured_content
        await client.call_tool("compose", {"query": "tea -milk"})  # waits until everything has loaded
        listed = (await client.call_tool("list_indexes", {})).structured_content
        one = (await client.call_tool("get_index", {})).structured_content
        scored = (await client.call_tool("eval_hits", {"qrels": str(DEMO / "qrels.txt"), "query_id": "1",
                                                       "hits": found["candidates"],
                                                       "measures": ["ndcg_cut.10", "recall.100"]})).structured_content
        return found, doc, listed, one, scored

    found, doc, listed, one, scored = talk(server, script)
    corpus = {d.id: d for d in read_corpus(DEMO / "corpus.jsonl")}
    first = corpus[doc["docid"]]
    assert doc["text"] == f"{first.title} {first.text}".strip() and "vector" not in doc["fields"]
    assert found["candidates"][0]["text"] == doc["text"]
    (entry,) = listed["result"]
    assert entry["documents"] == 298 and entry["model"] == "splade-tiny" and entry["model_recorded"]
    assert entry["dense_leg"] is None and entry["ready"] and one["metadata"]["documents"] == 298
    table = evaluate(DEMO / "qrels.txt", {"run": {"1": dict(run_rows(runs["runs"]["text"], "1"))}},
                     ["ndcg_cut.10", "recall.100"], per_query=True)
    assert scored["measures"]["ndcg_cut.10"] == pytest.approx(table.loc[("run", "1"), "nDCG@10"], abs=1e-12)
    assert scored["measures"]["recall.100"] == pytest.approx(table.loc[("run", "1"), "R@100"], abs=1e-12)
    assert scored["hits"] == HITS and scored["relevant"] > 0


BAD_CALLS = [
    ("search", {"query": "tea", "hits": 0}, "hits"),
    ("search", {"query": "tea", "hits": "many"}, "hits"),
    ("search", {"query": "tea", "index": "nope"}, "index"),
    ("search", {"query": "tea", "vector": {"tea": 1}}, "query"),
    ("search", {"query": "   "}, "query"),
    ("search", {"vector": {"tea": "strong"}}, "vector"),
    ("compose", {}, "query"),
    ("compose", {"composition": {"op": "xor", "a": "tea", "b": "milk"}}, "xor"),
    ("compose", {"query": "tea without milk", "operation": "no-such-op"}, "operation"),
    ("get_document", {"docid": "no-such-doc"}, "docid"),
    ("get_index", {"index": "nope"}, "index"),
    ("eval_hits", {"qrels": "/no/such/qrels", "query_id": "1", "hits": {"tea-01": 1.0}}, "qrels"),
    ("eval_hits", {"qrels": str(DEMO / "qrels.txt"), "query_id": "no-such-q", "hits": {"tea-01": 1.0}}, "query_id"),
    ("eval_hits", {"qrels": str(DEMO / "qrels.txt"), "query_id": "1", "hits": [{"docid": "tea-01"}]}, "hits"),
    ("eval_hits", {"qrels": str(DEMO / "qrels.txt"), "query_id": "1", "hits": {"tea-01": 1.0},
                   "measures": ["no_such_measure"]}, "measures"),
]


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(server, runs):
    async def script(client):
        out = []
        for tool, arguments, _ in BAD_CALLS:
            result = await client.call_tool(tool, arguments, raise_on_error=False)
            out.append((result.is_error, result.content[0].text if result.content else ""))
        good = await client.call_tool("search", {"query": runs["queries"]["2"], "hits": HITS})
        return out, good.structured_content

    errors, good = talk(server, script)
    for (tool, arguments, word), (is_error, text) in zip(BAD_CALLS, errors):
        assert is_error and word in text, (tool, arguments, text)
    assert rows(good) == run_rows(runs["runs"]["text"], "2")


def test_two_indexes_need_a_name(runs, tmp_path):
    """Several --index folders: each tool names one (unknown or missing: a tool error listing them); two folders
    of one name are refused at start."""
    import shutil

    from lsr_lucene.errors import InputError
    from lsr_lucene.mcp.indexes import Indexes
    from lsr_lucene.mcp.tools import build_server

    other = tmp_path / "other"
    shutil.copytree(runs["index"], other)
    twin = shutil.copytree(runs["index"], tmp_path / "twin" / runs["index"].name)
    with pytest.raises(InputError, match="second index named"):
        Indexes([runs["index"], twin])
    indexes = Indexes([runs["index"], other])
    try:
        async def script(client):
            missing = await client.call_tool("search", {"query": "tea"}, raise_on_error=False)
            named = await client.call_tool("search", {"query": runs["queries"]["1"], "index": "other", "hits": HITS})
            return missing, named.structured_content

        missing, named = talk(build_server(indexes), script)
        assert missing.is_error and "index" in missing.content[0].text and "other" in missing.content[0].text
        assert named["index"] == "other" and rows(named) == run_rows(runs["runs"]["text"], "1")
    finally:
        indexes.close()


def test_stdio_server_answers_its_first_call_as_a_warm_one(runs, tmp_path):
    """A real subprocess over stdio: the handshake and tool list come before the models load; the first search,
    asked at once, equals a warm one and the CLI's run."""
    log = tmp_path / "stderr.txt"
    transport = StdioTransport(sys.executable, ["-m", "lsr_lucene.mcp", "--index", str(runs["index"])],
                               env=environment(), cwd=str(tmp_path), keep_alive=False, log_file=log)
    text = runs["queries"]["1"]

    async def go():
        async with Client(transport, timeout=STARTUP_S, init_timeout=STARTUP_S) as client:
            tools = await client.list_tools()
            first = await client.call_tool("search", {"query": text, "hits": HITS})
            warm = await client.call_tool("search", {"query": text, "hits": HITS})
            composed = await client.call_tool("compose", {"query": text, "hits": HITS})
            bad = await client.call_tool("search", {"query": text, "hits": -1}, raise_on_error=False)
            return tools, first.structured_content, warm.structured_content, composed.structured_content, bad

    tools, first, warm, composed, bad = asyncio.run(asyncio.wait_for(go(), 2 * STARTUP_S))
    assert {t.name for t in tools} == TOOLS
    assert first == warm and rows(first) == run_rows(runs["runs"]["text"], "1")
    assert rows(composed) == run_rows(runs["runs"]["nl"], "1")
    assert bad.is_error and "hits" in bad.content[0].text
    said = log.read_text(encoding="utf-8")
    assert "serving index (298 docs) over stdio" in said and "ready: models loaded" in said


def test_http_server_listens_on_loopback(runs, tmp_path):
    """``--transport http --port 0``: the ready line names a loopback URL; a client searches there."""
    with open(tmp_path / "stderr.txt", "w", encoding="utf-8") as err:
        proc = subprocess.Popen(mcp_command("--index", str(runs["index"]), "--transport", "http", "--port", "0"),
                                stdout=subprocess.PIPE, stderr=err, text=True, env=environment())
    try:
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(STARTUP_S)
        assert lines and lines[0].startswith("serving index (298 docs) at http://127.0.0.1:"), \
            (lines, (tmp_path / "stderr.txt").read_text(encoding="utf-8")[-2000:])
        url = lines[0].split(" at ", 1)[1].strip()
        assert url.endswith("/mcp")

        async def go():
            async with Client(url, timeout=STARTUP_S) as client:
                return (await client.call_tool("search", {"query": runs["queries"]["3"], "hits": HITS})
                        ).structured_content

        assert rows(asyncio.run(asyncio.wait_for(go(), 2 * STARTUP_S))) == run_rows(runs["runs"]["text"], "3")
    finally:
        proc.terminate()
        proc.wait(30)


def test_startup_errors_are_one_line(runs, tmp_path):
    cases = [(["--index", str(tmp_path / "missing")], "no such index"),
             (["--index", str(runs["index"]), "--encoder", "no-such-model-xyz"], "no-such-model-xyz"),
             (["--index", str(runs["index"]), "--transport", "http", "--port", "70000"], "--port")]
    for args, words in cases:
        done = subprocess.run(mcp_command(*args), capture_output=True, text=True, timeout=STARTUP_S,
                              env=environment(), stdin=subprocess.DEVNULL)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and lines and lines[-1].startswith("error: ") and words in lines[-1], done.stderr
        assert not done.stdout
