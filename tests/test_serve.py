"""``lsr-lucene serve``: a real server on a free loopback port, talked to over HTTP; every hit list equals the CLI's
run of the same query (docids, order, scores as the run prints them), also under 16 concurrent clients."""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lsr_lucene.io.runs import read_hits

pytestmark = pytest.mark.slow  # starts servers (-m 'not slow' skips it)

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "lsr_lucene" / "data" / "demo"
HITS = 10
STARTUP_S = 180  # JVM, searcher and encoder load on a shared 2-core machine


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "lsr_lucene.serve", *args]


def environment() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def spawn_server(index: Path, stderr: Path, *extra: str) -> subprocess.Popen:
    """A server on a free port of 127.0.0.1 (``--port 0``); its stderr goes to a file (a pipe nobody reads could
    fill and block it)."""
    with open(stderr, "w", encoding="utf-8") as err:
        return subprocess.Popen(serve_command("--index", str(index), "--port", "0", "--threads", "4", *extra),
                                stdout=subprocess.PIPE, stderr=err, text=True, env=environment())


def wait_ready(proc: subprocess.Popen, stderr: Path) -> str:
    """The server's base URL once its ready line is printed (bounded wait)."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(STARTUP_S)
    if not lines or not lines[0].startswith("serving "):
        proc.kill()
        proc.wait(30)
        raise AssertionError(f"no ready line: {lines!r}; stderr: {stderr.read_text(encoding='utf-8')[-2000:]}")
    assert re.fullmatch(r"serving \S+ \(\d+ docs\) at http://127\.0\.0\.1:\d+\n", lines[0]), lines[0]
    return lines[0].split(" at ", 1)[1].strip()


def wait_healthy(base: str) -> None:
    """Until ``/health`` says ok (the models load after the server listens; bounded wait)."""
    deadline = time.monotonic() + STARTUP_S
    while request(base + "/health")[0] != 200:
        assert time.monotonic() < deadline, "the models did not load"
        time.sleep(0.2)


def request(url: str, body=None, method: str | None = None, raw: bytes | None = None) -> tuple[int, dict]:
    """(status, JSON) of one request; an HTTP error status is returned, not raised."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data is not None else {})
    try:
        with urllib.request.urlopen(req, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture(scope="module")
def served(demo, tmp_path_factory):
    """The demo index served by one server for the module;
    the CLI's runs of the demo topics beside it."""
    from lsr_lucene.compose.cli import main as compose_main
    from lsr_lucene.encode.cli import main as encode_main
    from lsr_lucene.search.cli import main as search_main

    root = tmp_path_factory.mktemp("serve")
    index = root / "demo-index"
    shutil.copytree(demo / "index", index)
    proc = spawn_server(index, root / "server.err", "--name", "demo")  # loads while the CLI runs are made
    try:
        topics = str(DEMO / "topics.tsv")
        common = ["--index", str(index), "--hits", str(HITS)]
        assert search_main([*common, "--topics", topics, "--output", str(root / "text.run")]) == 0
        assert encode_main(["--topics", topics, "--output", str(root / "q.jsonl")]) == 0
        assert search_main([*common, "--query-vectors", str(root / "q.jsonl"), "--output", str(root / "vec.run")]) == 0
        assert compose_main([*common, "--topics", topics, "--output", str(root / "nl.run")]) == 0
        assert compose_main([*common, "--queries", str(DEMO / "compositions.jsonl"),
                             "--output", str(root / "tree.run")]) == 0
        queries = dict(line.rstrip("\n").split("\t", 1) for line in open(topics, encoding="utf-8"))
        vectors = {str(o["id"]): o["vector"] for o in map(json.loads, open(root / "q.jsonl", encoding="utf-8"))}
        trees = {str(o["id"]): o["query"] for o in map(json.loads, open(DEMO / "compositions.jsonl"))}
        runs = {name: read_hits(root / f"{name}.run") for name in ("text", "vec", "nl", "tree")}
        base = wait_ready(proc, root / "server.err")
        wait_healthy(base)
        yield {"proc": proc, "base": base, "api": f"{base}/v1/demo", "queries": queries, "vectors": vectors,
               "trees": trees, "runs": runs, "index": index, "stderr": root / "server.err"}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def run_rows(run: dict, qid: str) -> list[tuple[str, float]]:
    return [(d, float(s)) for d, s in run.get(qid, [])]


def response_rows(payload: dict) -> list[tuple[str, float]]:
    ranks = [c["rank"] for c in payload["candidates"]]
    assert ranks == list(range(1, len(ranks) + 1))
    return [(c["docid"], c["score"]) for c in payload["candidates"]]


def test_health_root_and_docs(served):
    status, health = request(served["base"] + "/health")
    assert status == 200 and health["status"] == "ok" and health["index"] == "demo"
    assert health["num_docs"] == 298 and health["model"] == "splade-tiny"
    assert served["base"].startswith("http://127.0.0.1:")  # the ready line's address: loopback, a free port
    status, root = request(served["base"] + "/")
    assert status == 200 and root["documentation"] == "/docs" and root["version"]
    status, spec = request(served["base"] + "/openapi.json")
    paths = set(spec["paths"])
    assert {"/health", "/v1/{index}/search", "/v1/{index}/compose", "/v1/{index}/batch",
            "/v1/{index}/doc/{docid}"} <= paths
    assert set(spec["paths"]["/v1/{index}/search"]) == {"get", "post"}
    with urllib.request.urlopen(served["base"] + "/docs", timeout=60) as response:
        assert response.status == 200 and b"swagger" in response.read().lower()


def test_every_query_equals_the_cli_runs(served):
    """Text (GET and POST), vector, approximate and composed queries: the run's docids, order and scores."""
    api, runs = served["api"], served["runs"]
    for qid, text in served["queries"].items():
        query = urllib.parse.urlencode({"query": text, "hits": HITS, "qid": qid})
        status, got = request(f"{api}/search?{query}")
        assert status == 200 and got["query"] == {"qid": qid, "text": text}
        assert response_rows(got) == run_rows(runs["text"], qid), qid
        _, posted = request(f"{api}/search", {"query_text": text, "hits": HITS, "qid": qid})
        assert posted == got
        _, vec = request(f"{api}/search", {"vector": served["vectors"][qid], "hits": HITS})
        assert response_rows(vec) == run_rows(runs["vec"], qid), qid
        _, exact = request(f"{api}/search?{query}&heap_factor=1")  # heap factor 1: exact search
        assert exact == got
        status, composed = request(f"{api}/compose", {"query": text, "hits": HITS, "qid": qid})
        assert status == 200 and response_rows(composed) == run_rows(runs["nl"], qid), qid
    for qid, tree in served["trees"].items():
        status, composed = request(f"{api}/compose", {"composition": tree, "hits": HITS})
        assert status == 200 and composed["composition"] == tree
        assert response_rows(composed) == run_rows(runs["tree"], qid), qid


def test_compose_requests_write_no_file(served, tmp_path, monkeypatch):
    """The server's compose path searches in memory: with every tempfile entry point refusing and the temporary
    folder an empty one, composed requests (fused and single-vector) answer as the CLI runs, and nothing is written."""
    import tempfile

    from lsr_lucene.serve.engine import SearchEngine

    empty = tmp_path / "tmp"
    empty.mkdir()
    engine = SearchEngine(served["index"])
    try:
        with monkeypatch.context() as patch:
            patch.setenv("TMPDIR", str(empty))
            patch.setattr(tempfile, "tempdir", str(empty))
            for name in ("TemporaryDirectory", "NamedTemporaryFile", "TemporaryFile", "mkstemp", "mkdtemp"):
                patch.setattr(tempfile, name, lambda *a, **k: pytest.fail("a temporary file was made"))
            for qid, text in served["queries"].items():
                _, found = engine.compose(text, HITS)
                assert [(c["docid"], c["score"]) for c in found] == run_rows(served["runs"]["nl"], qid), qid
            for qid, tree in served["trees"].items():
                _, found = engine.compose(tree, HITS)
                assert [(c["docid"], c["score"]) for c in found] == run_rows(served["runs"]["tree"], qid), qid
    finally:
        engine.close()
    assert list(empty.iterdir()) == []


def test_sixteen_concurrent_clients(served):
    """200 requests (text GET, text POST, vector POST mixed) from 16 clients at once: no error, every hit list the
    CLI run's."""
    api, runs = served["api"], served["runs"]
    qids = list(served["queries"])
    jobs = [(i % 3, qids[i % len(qids)]) for i in range(200)]

    def one(job):
        kind, qid = job
        text = served["queries"][qid]
        if kind == 0:
            status, got = request(f"{api}/search?" + urllib.parse.urlencode({"query": text, "hits": HITS}))
            expected = runs["text"]
        elif kind == 1:
            status, got = request(f"{api}/search", {"query": text, "hits": HITS})
            expected = runs["text"]
        else:
            status, got = request(f"{api}/search", {"query_tokens": served["vectors"][qid], "hits": HITS})
            expected = runs["vec"]
        return status == 200 and response_rows(got) == run_rows(expected, qid)

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(one, jobs))
    assert results.count(True) == 200


def test_batch_and_documents(served):
    api, runs = served["api"], served["runs"]
    qids = list(served["queries"])[:5]
    batch = [{"qid": q, "query": served["queries"][q]} if i % 2 else {"qid": q, "vector": served["vectors"][q]}
             for i, q in enumerate(qids)]
    status, got = request(f"{api}/batch", {"queries": batch, "hits": HITS})
    assert status == 200 and [r["query"]["qid"] for r in got["results"]] == qids
    for i, (q, result) in enumerate(zip(qids, got["results"])):
        assert response_rows(result) == run_rows(runs["text" if i % 2 else "vec"], q)
    status, doc = request(f"{api}/doc/tea-01")
    assert status == 200 and doc["docid"] == "tea-01" and "Camellia sinensis" in doc["doc"]["contents"]
    assert doc["doc"]["id"] == "tea-01" and isinstance(doc["doc"]["vector"], dict)  # JSON, not escaped JSON text
    _, with_docs = request(f"{api}/search", {"query": "green tea", "hits": 2, "doc": True})
    assert all(c["doc"] and json.loads(c["doc"])["id"] == c["docid"] for c in with_docs["candidates"])


BAD_REQUESTS = [
    # (method, path under /v1/demo or absolute, JSON body or raw bytes, status, words of the message)
    ("GET", "/search", None, 400, "query"),
    ("GET", "/search?query=tea&hits=0", None, 400, "hits"),
    ("GET", "/search?query=tea&hits=x", None, 400, "hits"),
    ("POST", "/search", b'{"query": "tea"', 400, "malformed JSON"),
    ("POST", "/search", {"query": ""}, 400, "query"),
    ("POST", "/search", {"query": "tea", "vector": {"tea": 1}}, 400, "vector"),
    ("POST", "/search", {"query": "tea", "hits": 2.5}, 400, "hits"),
    ("POST", "/search", {"query": "tea", "hits": -3}, 400, "hits"),
    ("POST", "/search", {"vector": {"tea": "x"}}, 400, "vector"),
    ("POST", "/search", {"vector": ["tea"]}, 400, "vector"),
    ("POST", "/search", {"qeury": "tea"}, 400, "qeury"),
    ("GET", "/search?query=tea&heap_factor=0", None, 400, "heap_factor"),
    ("GET", "/search?query=tea&heap_factor=x", None, 400, "heap_factor"),
    ("POST", "/search", {"query": "tea", "heap_factor": 1.5}, 400, "heap_factor"),
    ("POST", "/search", {"vector": {"tea": 1}, "heap_factor": "x"}, 400, "heap_factor"),
    ("POST", "/batch", {"queries": [{"qid": "a", "query": "tea"}], "heap_factor": 0}, 400, "heap_factor"),
    ("POST", "/compose", {"composition": {"op": "xor", "a": "tea", "b": "milk"}}, 400, "composition"),
    ("POST", "/compose", {"query": "tea without milk", "operation": "nope"}, 400, "operation"),
    ("POST", "/compose", {"hits": 3}, 400, "composition"),
    ("GET", "/doc/no-such-doc", None, 404, "no-such-doc"),
    ("GET", "/v1/other/search?query=tea", None, 404, "other"),
    ("GET", "/no/route", None, 404, "/no/route"),
    ("DELETE", "/search", None, 405, "DELETE"),
    ("PUT", "/compose", {"query": "tea"}, 405, "PUT"),
    # the audit's adversarial requests (each message names the field)
    ("POST", "/search", b"", 400, "missing JSON body"),
    ("POST", "/search", b'{"query": "t\xe9a"}', 400, "malformed JSON body: 'utf-8' codec"),
    pytest.param("POST", "/compose", b'{"composition": ' + b'{"op": "and", "a": ' * 3000 + b'"tea"'
                 + b', "b": "milk"}' * 3000 + b"}", 400, "malformed JSON body: maximum recursion depth",
                 id="composition-nested-3000-deep"),
    ("POST", "/search", b"[1, 2]", 400, "object"),
    ("POST", "/search", b"null", 400, "object"),
    ("POST", "/search", {"query": "   "}, 400, "query"),
    ("POST", "/search", {"query": 5}, 400, "query:"),
    ("POST", "/search", {"query": "tea", "qid": 1.5}, 400, "qid:"),
    ("POST", "/search", {"query": "tea", "hits": True}, 400, "hits"),
    ("POST", "/search", {"query": "tea", "hits": 1e3}, 400, "hits"),
    ("POST", "/search", {"vector": {"tea": True}}, 400, "vector"),
    ("POST", "/search", {"vector": {"tea": 0}}, 400, "vector"),
    ("POST", "/search", {"vector": {}}, 400, "vector"),
    ("POST", "/search", b'{"query": "th\\u00e9 \\ud800"}', 400, "query: a string holds a lone surrogate"),
    ("POST", "/search", b'{"query": "tea", "qid": "\\udc00"}', 400, "qid: a string holds a lone surrogate"),
    ("POST", "/search", b'{"vector": {"\\ud800": 1}}', 400, "vector key: a string holds a lone surrogate"),
    ("POST", "/batch", b'{"queries": [{"qid": "a", "query": "\\ud800"}]}', 400, "queries.0.query"),
    ("POST", "/compose", b'{"composition": {"op": "not", "a": "tea", "b": "\\ud800"}}', 400, "composition.b"),
    ("GET", "/search?query=tea&approximate=10", None, 400, "approximate is retired"),
    ("POST", "/search", {"query": "tea", "query_cut": 2}, 400, "query_cut is retired"),
    ("GET", "/search?query=tea&doc=maybe", None, 400, "doc"),
    ("POST", "/batch", {"queries": [{"qid": "a"}]}, 400, "query a"),
    ("POST", "/batch", {"queries": [{"query": "tea"}]}, 400, "queries.0.qid"),
    ("POST", "/compose", {"composition": [1]}, 400, "composition"),
    ("POST", "/compose", {"query": "tea", "composition": "tea"}, 400, "composition"),
    ("POST", "/compose", {"query": "tea without milk", "not_op": "nope"}, 400, "not_op:"),
    ("POST", "/compose", {"query": "tea without milk", "and_op": "nrf"}, 400, "and_op:"),
    ("POST", "/v1/other/search", {"qeury": "tea"}, 404, "unknown index 'other'"),  # the index before the body
    ("GET", "/v1/other/search?hits=0", None, 404, "unknown index 'other'"),
    ("GET", "/doc/a/b", None, 404, "unknown docid 'a/b'"),
    ("POST", "/health", None, 405, "POST"),
    ("OPTIONS", "/search", None, 405, "OPTIONS"),
]


@pytest.mark.parametrize("method, path, body, status, word", BAD_REQUESTS)
def test_errors_are_json_and_the_server_keeps_serving(served, method, path, body, status, word):
    url = (served["base"] + path) if path.startswith(("/v1/other", "/no/", "/health")) else served["api"] + path
    raw = body if isinstance(body, bytes) else None
    got_status, got = request(url, None if raw is not None else body, method, raw)
    assert got_status == status and set(got) == {"error"} and word.lower() in got["error"].lower(), got
    status, health = request(served["base"] + "/health")
    assert status == 200


def test_query_without_index_terms_has_no_candidates(served):
    status, got = request(served["api"] + "/search", {"vector": {"zzqqxx": 3}})
    assert status == 200 and got["candidates"] == []


def test_startup_errors_are_one_line(tmp_path, served):
    """A missing index, a port in use, a non-impact index: one error line, exit status 2, before listening."""
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    cases = [(["--index", str(tmp_path / "missing")], "no such index"),
             (["--index", str(served["index"]), "--port", str(port)], "port in use"),
             (["--index", str(tmp_path)], str(tmp_path)),
             (["--index", str(served["index"]), "--encoder", "no-such-model-xyz"], "no-such-model-xyz"),
             (["--index", str(served["index"]), "--heap-factor", "0"], "--heap-factor must be a number above 0")]
    try:
        cases += [(["--index", str(served["index"]), "--port", "70000"], "--port must be a port number"),
                  (["--index", str(served["index"]), "--name", "a/b"], "--name must be")]
        for args, words in cases:
            done = subprocess.run(serve_command(*args), capture_output=True, text=True, timeout=STARTUP_S,
                                  env=environment())
            lines = done.stderr.strip().splitlines()
            assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr
            assert words in lines[0] and not done.stdout
    finally:
        busy.close()


def test_heap_factor_server_default_and_per_request(zipf, tmp_path):
    """``serve --heap-factor 0.5`` on an index where 0.5 prunes: vector queries keep the heap factor's promise
    (exact scores, every document above the exact k-th score / 0.5) and miss some of the exact top k; a request's
    ``heap_factor`` 1 is the exact top k, also in a batch and while 0.5 requests run beside it on the shared
    searcher."""
    proc = spawn_server(zipf.plain, tmp_path / "server.err", "--name", "zipf", "--heap-factor", "0.5",
                        "--encoder", "splade-tiny")  # a synthetic index records no model: name one
    try:
        api = wait_ready(proc, tmp_path / "server.err") + "/v1/zipf"
        specs = zipf.queries(20, 5)

        def one(job):
            spec, k, h = job
            body = {"vector": spec["terms"], "hits": k, **({"heap_factor": h} if h != 0.5 else {})}
            status, got = request(f"{api}/search", body)
            assert status == 200, got
            return zipf.check_heap_factor(response_rows(got), spec["terms"], k, h)

        jobs = [(spec, k, h) for spec in specs for k in (10, 100) for h in (0.5, 1)]
        with ThreadPoolExecutor(8) as pool:
            missed = sum(pool.map(one, jobs))
        assert missed > 0  # the server's 0.5 reached the searcher
        status, got = request(f"{api}/batch", {"queries": [{"qid": s["qid"], "vector": s["terms"]} for s in specs],
                                               "hits": 10, "heap_factor": 1})
        assert status == 200
        for spec, result in zip(specs, got["results"]):
            assert response_rows(result) == zipf.brute_force(spec["terms"], 10)
        started = time.monotonic()  # SIGINT (Ctrl-C) stops it gracefully too: within 10 s, exit 130, no traceback
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) in (0, 128 + signal.SIGINT) and time.monotonic() - started < 10
        assert "Traceback" not in (tmp_path / "server.err").read_text(encoding="utf-8")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def test_engine_defaults_to_the_folder_name(demo):
    """The search path the server runs (in process here)."""
    from lsr_lucene.serve.engine import SearchEngine

    engine = SearchEngine(demo / "index", compose=False)
    try:
        assert (engine.name, engine.model) == ("index", "splade-tiny")  # NAME defaults to the folder's basename
        assert [c["rank"] for c in engine.search_text("green tea", 3)] == [1, 2, 3]
    finally:
        engine.close()


def test_keep_alive_head_and_allow(served):
    """One keep-alive connection carries answers, errors (400, 404, 405) and HEADs: the socket is never closed;
    HEAD answers a GET route with its headers and no body; a 405 lists the path's methods in ``Allow``."""
    import http.client

    host, port = served["base"].removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    qid, text = next(iter(served["queries"].items()))
    search = "/v1/demo/search?" + urllib.parse.urlencode({"query": text, "hits": HITS})
    sockets = set()

    def send(method, path, body=None):
        conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        sockets.add(id(conn.sock))
        assert response.getheader("connection", "keep-alive").lower() != "close"
        return response, data

    try:
        for _ in range(2):
            response, data = send("GET", search)
            assert response.status == 200 and response_rows(json.loads(data)) == run_rows(served["runs"]["text"], qid)
            head, empty = send("HEAD", search)
            assert head.status == 200 and empty == b"" and int(head.getheader("content-length")) == len(data)
            head, empty = send("HEAD", "/health")
            assert head.status == 200 and empty == b""
            response, data = send("POST", "/v1/demo/search", b'{"query": ')
            assert response.status == 400 and "malformed JSON" in json.loads(data)["error"]
            response, data = send("GET", "/v1/other/search?query=tea")
            assert response.status == 404
            response, data = send("DELETE", "/v1/demo/search", b"{}")
            assert response.status == 405 and response.getheader("allow") == "GET, HEAD, POST"
            response, data = send("PUT", "/v1/demo/doc/tea-01")
            assert response.status == 405 and response.getheader("allow") == "GET, HEAD"
    finally:
        conn.close()
    assert len(sockets) == 1


def test_unicode_and_huge_hits_equal_the_cli_run(served, tmp_path):
    """Non-ASCII queries (GET, percent-encoded, and POST) and ``hits`` far beyond the index (10**12): the
    ``lsr-lucene search --topics`` run of the same texts with more hits than documents."""
    from lsr_lucene.search.cli import main as search_main

    texts = {"u1": "thé vert sans caféine", "u2": "茶 🍵 tea", "u3": "Grüner Tee ohne Koffein"}
    topics = tmp_path / "unicode.tsv"
    topics.write_text("".join(f"{q}\t{t}\n" for q, t in texts.items()), encoding="utf-8")
    assert search_main(["--index", str(served["index"]), "--topics", str(topics), "--hits", "1000",
                        "--output", str(tmp_path / "u.run")]) == 0
    run = read_hits(tmp_path / "u.run")
    api = served["api"]
    for qid, text in texts.items():
        status, got = request(f"{api}/search?" + urllib.parse.urlencode({"query": text, "hits": 10**12}))
        assert status == 200 and got["query"]["text"] == text
        assert response_rows(got) == run_rows(run, qid) and 10 < len(got["candidates"]) <= 298
        status, posted = request(f"{api}/search", {"query": text, "hits": 10**12})
        assert status == 200 and posted == got


def brute_force(vectors: dict, query: dict, k: int) -> list[tuple[str, float]]:
    """The top k of exact dot products, ties by docid, scores as the run prints them."""
    from lsr_lucene.io.runs import format_score

    scores = {d: sum(w * vec.get(t, 0) for t, w in query.items()) for d, vec in vectors.items()}
    ranked = sorted(((d, s) for d, s in scores.items() if s > 0), key=lambda x: (-x[1], x[0]))[:k]
    return [(d, float(format_score(s))) for d, s in ranked]


def test_concurrent_mixed_requests_equal_sequential_ones(served, demo):
    """16 clients sending text GET/POST, vector POST, compose (text and tree), batch, document and bad requests at
    once: every answer (status and JSON) equals the one sent alone, vector answers equal brute-force dot products,
    and the server still answers afterwards."""
    from lsr_lucene.io.vectors import read_vectors, signed

    api, queries, vectors = served["api"], served["queries"], served["vectors"]
    docs = {doc_id: signed(vector) for doc_id, vector in read_vectors(demo / "vectors")}
    for qid, vector in vectors.items():
        status, got = request(f"{api}/search", {"vector": vector, "hits": HITS})
        assert status == 200 and response_rows(got) == brute_force(docs, vector, HITS), qid
    qids = list(queries)
    kinds = [
        lambda q: (f"{api}/search?" + urllib.parse.urlencode({"query": queries[q], "qid": q}), None),
        lambda q: (f"{api}/search", {"query": queries[q], "qid": q, "hits": 5}),
        lambda q: (f"{api}/search", {"query_tokens": vectors[q], "hits": 7}),
        lambda q: (f"{api}/compose", {"query": queries[q], "hits": 4}),
        lambda q: (f"{api}/compose", {"composition": next(iter(served["trees"].values())), "hits": 3}),
        lambda q: (f"{api}/batch", {"queries": [{"qid": q, "query": queries[q]}, {"qid": "v", "vector": vectors[q]}]}),
        lambda q: (f"{api}/doc/tea-0{len(q) % 9 + 1}", None),
        lambda q: (f"{api}/search", {"query": queries[q], "hits": 0}),
        lambda q: (f"{api}/doc/missing-{q}", None),
    ]
    jobs = [kinds[i % len(kinds)](qids[i % len(qids)]) for i in range(180)]
    alone = {job_key: request(*json.loads(job_key)) for job_key in {json.dumps(job) for job in jobs}}
    with ThreadPoolExecutor(16) as pool:
        together = list(pool.map(lambda job: request(*job), jobs))
    assert [alone[json.dumps(job)] for job in jobs] == together
    assert {status for status, _ in together} == {200, 400, 404}
    assert request(served["base"] + "/health")[0] == 200


@contextlib.contextmanager
def stub_server(engine, **options):
    """The app over a stub ``engine`` on uvicorn in a thread of this process; yields its base URL."""
    import uvicorn

    from lsr_lucene.serve.app import create_app

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(engine, 1, **options), log_level="critical", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def test_an_unexpected_error_is_a_500_with_its_first_line(demo):
    """An exception that is not bad input (a stub engine's RuntimeError) → 500 ``{"error": <its first line>}``; the
    server (the app on uvicorn, in this process) keeps serving."""

    class Failing:
        name, num_docs, model, ready = "stub", 3, "none", True

        def search_text(self, *args, **kwargs):
            raise RuntimeError("the searcher broke\nsecond line of the cause")

    with stub_server(Failing()) as base:
        assert request(f"{base}/v1/stub/search?query=tea") == (500, {"error": "the searcher broke"})
        assert request(f"{base}/v1/stub/search", {"query": "tea"}) == (500, {"error": "the searcher broke"})
        assert request(f"{base}/health") == (200, {"status": "ok", "index": "stub", "num_docs": 3, "model": "none"})


def test_a_body_over_the_limit_is_a_413_before_it_is_read(demo):
    """``--max-body-mb``: a body over the limit is 413 ``{"error"}`` naming the option, whether its Content-Length
    says so or it arrives in chunks; the engine never sees it, and a body within the limit is served."""
    import http.client

    seen = []

    class Stub:
        name, num_docs, model, ready = "stub", 3, "none", True

        def search_text(self, text, *args, **kwargs):
            seen.append(text)
            return []

    def post(base: str, body: bytes, chunked: bool) -> tuple[int, dict]:
        connection = http.client.HTTPConnection(*base.removeprefix("http://").split(":"), timeout=30)
        try:
            connection.request("POST", "/v1/stub/search", body=iter([body[:700], body[700:]]) if chunked else body,
                               encode_chunked=chunked, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    limit = 1000
    big, small = (json.dumps({"query": "x" * n}).encode() for n in (limit, limit - 20))
    assert len(big) > limit >= len(small)
    with stub_server(Stub(), max_body_bytes=limit) as base:
        for chunked in (False, True):
            status, payload = post(base, big, chunked)
            assert status == 413 and "over 1,000 bytes" in payload["error"] and "--max-body-mb" in payload["error"]
            assert post(base, small, chunked)[0] == 200
    assert seen == ["x" * (limit - 20)] * 2


def test_compose_route_reads_the_explicit_syntax(served):
    """Issues 50 and 65: a query in the explicit syntax removes, inside the search, every document whose text contains
    an excluded word and ranks the rest as its not node (the default's fusion): the hits of that tree with that filter,
    none holding an excluded word, and the filter in the answer."""
    from lsr_lucene.search.impact_searcher import contents_of
    from lsr_lucene.search.text_filter import text_contains

    api = served["api"]
    status, syntax = request(f"{api}/compose", {"query": "tea NOT (caffeine OR milk)", "hits": HITS, "doc": True})
    tree = {"op": "not", "a": "tea", "b": {"op": "or", "a": "caffeine", "b": "milk"}}
    assert status == 200 and syntax["composition"] == tree
    assert syntax["exclude"] == {"or": [{"text": "caffeine"}, {"text": "milk"}]}
    status, same = request(f"{api}/compose", {"composition": {"query": tree, "exclude": ["caffeine", "milk"]},
                                              "hits": HITS})
    got = [(row["docid"], row["score"]) for row in syntax["candidates"]]
    assert status == 200 and got == [(row["docid"], row["score"]) for row in same["candidates"]] and len(got) == HITS
    assert not any(text_contains(contents_of(row["doc"]), b) for row in syntax["candidates"] for b in ("caffeine", "milk"))
    status, bad = request(f"{api}/compose", {"query": "-caffeine", "hits": HITS})
    assert status == 400 and "something to keep" in bad["error"]


def test_short_soak_answers_as_the_cli(served):
    """A 2.5 s soak (bench/soak.py) of 6 clients mixing text, vector, compose and malformed requests: every answer is
    the CLI run's, every malformed request gets a 4xx, no 5xx; the server's RSS is sampled; the check can fail."""
    from scripts.bench.soak import KINDS, MALFORMED, Call, counts, make_pool, soak, verdict

    runs = served["runs"]
    host = urllib.parse.urlsplit(served["base"]).netloc
    pool = make_pool("demo", host, served["queries"], served["queries"],
                     {"text": runs["text"], "vector": runs["vec"], "compose": runs["nl"], "vectors": served["vectors"]},
                     HITS)
    assert [len(pool[k]) for k in KINDS] == [len(served["queries"])] * 3 + [len(MALFORMED)]
    mixed = soak(served["base"], pool, [1, 1, 1, 0.3], 6, 2.5, served["proc"].pid, rss_every=0.5)
    refused = soak(served["base"], pool, [0, 0, 0, 1], 2, 0.5)
    for result in (mixed, refused):
        assert result.failures == [] and result.records
        total = counts(result.records)
        assert total["wrong"] == total["http_5xx"] == total["errors"] == 0
    assert {r[2] for r in mixed.records} >= {"text", "vector"}
    assert {r[2] for r in refused.records} == {"malformed"} and all(400 <= r[3] < 500 for r in refused.records)
    assert mixed.rss and all(s[1] > 0 for s in mixed.rss)
    answer = json.dumps({"candidates": [{"docid": "d2", "score": 1.0, "rank": 1}]}).encode()
    assert verdict(Call("text", b"", (("d1", 1.0),)), 200, answer) == "wrong"
    assert verdict(Call("text", b"", (("d2", 1.0),)), 200, answer) == "ok"
    assert verdict(Call("text", b"", (("d2", 1.0),)), 500, b'{"error": "x"}') == "5xx"
    assert verdict(Call("malformed", b"", None), 200, answer) == "wrong"
    assert verdict(Call("malformed", b"", None), 400, b'{"error": "x"}') == "ok"


def test_sigterm_stops_gracefully(served):
    """The last test: SIGTERM stops the module's server within 10 s, without a traceback."""
    proc = served["proc"]
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(10)
    assert time.monotonic() - started < 10
    assert proc.returncode in (0, 128 + signal.SIGTERM, -signal.SIGTERM)
    assert "Traceback" not in served["stderr"].read_text(encoding="utf-8")


def test_compose_shares_the_search_index_and_stays_exact(zipf):
    """The server opens the index once: compose's backend searches the text search's SpecSearcher, exactly (heap
    factor 1) although the server's default is 0.5, and closing the composer leaves the shared searcher open."""
    from lsr_lucene.serve.engine import SearchEngine

    engine = SearchEngine(zipf.plain, heap_factor=0.5, encoder="splade-tiny")  # the index records no model
    try:
        backend = engine.composer.backend
        assert backend.searcher is engine.searcher.spec_searcher
        specs = zipf.queries(20, 7)
        def hits(spec, k, **options):
            return [(h.docid, h.score) for h in engine.searcher.search_spec(spec, k, **options)]

        missed = sum(zipf.check_heap_factor(hits(s, 10), s["terms"], 10, 0.5) for s in specs)
        assert missed > 0  # 0.5 prunes here, so the exact results below are the backend's doing
        for threads in (1, 2):
            got = backend.search_many(specs, 10, threads)
            assert all(got[s["qid"]] == zipf.brute_force(s["terms"], 10) for s in specs)
        engine.composer.close()
        assert hits(specs[0], 3, heap_factor=1) == zipf.brute_force(specs[0]["terms"], 3)
    finally:
        engine.close()


def test_the_first_answer_equals_a_warm_one(served, tmp_path):
    """The server listens before its models load: requests sent the moment the ready line appears wait for them,
    and their answers equal warm ones and the CLI's runs (compose first: it waits for everything)."""
    proc = spawn_server(served["index"], tmp_path / "server.err", "--name", "demo")
    try:
        base = wait_ready(proc, tmp_path / "server.err")
        status, health = request(base + "/health")
        assert (status, health["status"]) in ((503, "loading"), (200, "ok")) and health["num_docs"] == 298
        qid, text = next(iter(served["queries"].items()))
        compose_body = {"query": text, "hits": HITS, "qid": qid}
        first = [request(f"{base}/v1/demo/compose", compose_body), request(f"{base}/v1/demo/search", compose_body)]
        warm = [request(f"{base}/v1/demo/compose", compose_body), request(f"{base}/v1/demo/search", compose_body)]
        assert first == warm and all(status == 200 for status, _ in first)
        assert response_rows(first[0][1]) == run_rows(served["runs"]["nl"], qid)
        assert response_rows(first[1][1]) == run_rows(served["runs"]["text"], qid)
        assert request(base + "/health")[0] == 200
        deadline = time.monotonic() + 30
        while "ready: models loaded" not in (said := (tmp_path / "server.err").read_text(encoding="utf-8")):
            assert time.monotonic() < deadline, said[-2000:]
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(30)


def test_health_is_503_until_the_models_load(demo):
    """An engine whose models have not loaded (``loading="later"``): /health 503 "loading", then 200 "ok"."""
    from lsr_lucene.serve.engine import SearchEngine

    engine = SearchEngine(demo / "index", "demo", loading="later")
    try:
        with pytest.raises(TimeoutError):
            engine.wait(timeout=0)
        with stub_server(engine) as base:
            assert request(f"{base}/health") == (503, {"status": "loading", "index": "demo", "num_docs": 298,
                                                       "model": "splade-tiny"})
            engine.load()
            assert request(f"{base}/health")[1]["status"] == "ok" and engine.ready
            assert engine.seconds.keys() >= {"jvm and index", "query encoder", "warm-up search", "composer"}
    finally:
        engine.close()
