"""Soak benchmark of ``lsr-lucene serve`` (issue 52): N concurrent keep-alive clients on loopback for a fixed time,
mixing text, vector and compose requests with a share of malformed ones, every answer checked against the CLI.

The query pool is the first ``--queries`` topics: as text (``GET`` and ``POST /search``), as query vectors
(``lsr-lucene encode --topics``, sent as ``POST /search {"vector"}``) and as negations made from them ("<question>
without / but not / excluding <the longest word of the next question>", ``POST /compose``). Before the server
starts, the CLI (``lsr-lucene search`` / ``compose``, subprocesses) writes the expected run of each; every 200 answer
is compared with it (docids, order and scores as the run prints them), every malformed request must get a 4xx with
a JSON ``{"error"}``. The server's resident set (``/proc/PID/status`` VmRSS: the Python process, the JVM inside it
included), threads and open files are sampled throughout; latency, QPS and RSS are reported per window. The loop is
bounded: each client stops sending at the deadline; a request unanswered after ``REQUEST_TIMEOUT_S`` is an error.
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import re
import subprocess
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from lsr_lucene import cli_options as opt
from scripts.bench.parts import first_parts, link_parts
from scripts.bench.serve import http_stack, percentile, read_response, start_server, stop_server
from lsr_lucene.errors import InputError

KINDS = ("text", "vector", "compose", "malformed")
CUES = ("{q} without {w}", "{q} but not {w}", "{q} excluding {w}")
REQUEST_TIMEOUT_S = 120.0
# Malformed requests (method, path under /v1/NAME or absolute, body): each must be answered 4xx with {"error"}.
MALFORMED: tuple[tuple[str, str, Optional[bytes]], ...] = (
    ("POST", "/search", b'{"query": "tea"'),
    ("POST", "/search", b'{"query": "t\xe9a"}'),
    ("POST", "/search", b"[1, 2]"),
    ("POST", "/search", b'{"qeury": "tea"}'),
    ("POST", "/search", b'{"query": "   "}'),
    ("POST", "/search", b'{"query": "tea", "hits": 2.5}'),
    ("POST", "/search", b'{"vector": {"tea": "x"}}'),
    ("POST", "/search", b'{"query": "tea", "vector": {"tea": 1}}'),
    ("GET", "/search?query=tea&hits=0", None),
    ("GET", "/search?query=tea&heap_factor=1.5", None),
    ("POST", "/compose", b'{"hits": 10}'),
    ("POST", "/compose", b'{"query": "tea without caffeine", "not_op": "nope"}'),
    ("POST", "/batch", b'{"queries": [{"query": "tea"}]}'),
    ("GET", "/doc/no-such-docid-soak", None),
    ("DELETE", "/search", None),
    ("GET", "/v1/no-such-index/search?query=tea", None),
)


@dataclass(frozen=True)
class Call:
    """One request of the pool: its kind, the raw HTTP bytes to send, and the expected (docid, score) rows of a
    200 answer (None: a malformed request, answered 4xx)."""

    kind: str
    raw: bytes
    expected: Optional[tuple[tuple[str, float], ...]]


def http_request(method: str, path: str, body: Optional[bytes], host: str) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return (head + "\r\n").encode() + (body or b"")


# ---- the index: the first N passages of an encoding ----------------------------------------------------------
def ensure_index(index: Path, vectors: Optional[str], docs: Optional[int]) -> None:
    """``index``, built when missing by ``lsr-lucene index`` (its defaults: the dense-impacts sidecar) from the
    first ``docs`` passages of ``vectors``."""
    if index.is_dir():
        return
    if not vectors or not docs:
        raise InputError(f"{index}: no such index (give --vectors and --docs to build it)")
    links = link_parts(first_parts(vectors, docs), index.parent / f"{index.name}.vectors")
    subprocess.run([sys.executable, "-m", "lsr_lucene.index", "--input", str(links), "--index", str(index)],
                   check=True)


# ---- the query pool and the CLI's answers -------------------------------------------------------------------
def negations(texts: dict[str, str]) -> dict[str, str]:
    """A negated query per question: a cue (rotating over CUES) and the longest word of the next question."""
    qids = list(texts)
    out = {}
    for i, qid in enumerate(qids):
        words = re.findall(r"[a-z]{4,}", texts[qids[(i + 1) % len(qids)]].lower()) or ["other"]
        out[qid] = CUES[i % len(CUES)].format(q=texts[qid].rstrip(" ?"), w=max(words, key=len))
    return out


def write_tsv(path: Path, texts: dict[str, str]) -> None:
    path.write_text("".join(f"{q}\t{t}\n" for q, t in texts.items()), encoding="utf-8")


def cli_runs(index: str, texts: dict[str, str], composed: dict[str, str], hits: int, work: Path) -> dict:
    """The CLI's runs of the pool (``lsr-lucene encode``, ``search``, ``compose`` as subprocesses, ``hits`` per
    query) and the encoded query vectors: {"text", "vector", "compose": {qid: hits}, "vectors": {qid: vector}}."""
    from lsr_lucene.io.runs import read_hits

    work.mkdir(parents=True, exist_ok=True)
    write_tsv(work / "text.tsv", texts)
    write_tsv(work / "compose.tsv", composed)
    verb = [sys.executable, "-m"]
    common = ["--index", index, "--hits", str(hits), "--overwrite"]
    for command in (
            [*verb, "lsr_lucene.encode", "--topics", str(work / "text.tsv"), "--output", str(work / "vector.jsonl"),
             "--overwrite"],
            [*verb, "lsr_lucene.search", *common, "--topics", str(work / "text.tsv"), "--output", str(work / "text.run")],
            [*verb, "lsr_lucene.search", *common, "--query-vectors", str(work / "vector.jsonl"),
             "--output", str(work / "vector.run")],
            [*verb, "lsr_lucene.compose", *common, "--topics", str(work / "compose.tsv"),
             "--output", str(work / "compose.run")]):
        subprocess.run(command, check=True)
    vectors = {str(o["id"]): o["vector"] for o in map(json.loads, open(work / "vector.jsonl", encoding="utf-8"))}
    return {**{kind: read_hits(work / f"{kind}.run") for kind in ("text", "vector", "compose")}, "vectors": vectors}


def rows(hits) -> tuple[tuple[str, float], ...]:
    return tuple((docid, float(score)) for docid, score in hits)


def make_pool(name: str, host: str, texts: dict[str, str], composed: dict[str, str], runs: dict, hits: int
              ) -> dict[str, list[Call]]:
    """The requests of each kind, with the CLI run's rows expected (text alternates GET and POST)."""
    api = f"/v1/{name}"

    def post(path: str, body: dict) -> bytes:
        return http_request("POST", api + path, json.dumps(body).encode(), host)

    pool: dict[str, list[Call]] = {kind: [] for kind in KINDS}
    for i, (qid, text) in enumerate(texts.items()):
        expected = rows(runs["text"].get(qid, []))
        raw = (http_request("GET", f"{api}/search?{urllib.parse.urlencode({'query': text, 'hits': hits})}", None,
                            host) if i % 2 else post("/search", {"query": text, "hits": hits, "qid": qid}))
        pool["text"].append(Call("text", raw, expected))
        pool["vector"].append(Call("vector", post("/search", {"vector": runs["vectors"][qid], "hits": hits}),
                                   rows(runs["vector"].get(qid, []))))
        pool["compose"].append(Call("compose", post("/compose", {"query": composed[qid], "hits": hits}),
                                    rows(runs["compose"].get(qid, []))))
    for method, path, body in MALFORMED:
        full = path if path.startswith("/v1/") else api + path
        pool["malformed"].append(Call("malformed", http_request(method, full, body, host), None))
    return pool


# ---- the load ---------------------------------------------------------------------------------------------
@dataclass
class Soak:
    """What a soak recorded: per request (end time s, latency s, kind, status, verdict), samples of the server
    process (time s, VmRSS KiB, RssAnon KiB, threads, open file descriptors, the machine's 1-minute load average),
    the first few failures in words."""

    records: list[tuple[float, float, str, int, str]] = field(default_factory=list)
    rss: list[tuple[float, int, int, int, int, float]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    duration: float = 0.0
    clients: int = 0


def verdict(call: Call, status: int, body: bytes) -> str:
    """ok, wrong (a 200 whose hits differ from the CLI's, or a malformed request not refused 4xx), 5xx."""
    if status >= 500:
        return "5xx"
    try:
        payload = json.loads(body)
    except ValueError:
        return "wrong"
    if call.expected is None:
        return "ok" if 400 <= status < 500 and "error" in payload else "wrong"
    if status != 200:
        return "wrong"
    found = payload.get("candidates", [])
    if [c.get("rank") for c in found] != list(range(1, len(found) + 1)):
        return "wrong"
    return "ok" if tuple((c["docid"], float(c["score"])) for c in found) == call.expected else "wrong"


def process_sample(pid: int) -> tuple[int, int, int, int]:
    """(VmRSS KiB, RssAnon KiB, threads, open file descriptors) of a process; zeros once it is gone."""
    got = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key = line.split(":", 1)[0]
            if key in ("VmRSS", "RssAnon", "Threads"):
                got[key] = int(line.split()[1])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0, 0, 0, 0
    return got.get("VmRSS", 0), got.get("RssAnon", 0), got.get("Threads", 0), fds


async def _soak(host: str, port: int, pool: dict[str, list[Call]], weights: Sequence[float], clients: int,
                duration: float, pid: Optional[int], rss_every: float, seed: int) -> Soak:
    from lsr_lucene.progress import progress_bar

    out = Soak(clients=clients)
    kinds = list(KINDS)
    began = time.perf_counter()
    deadline = began + duration

    async def client(i: int) -> None:
        rng = random.Random(seed * 1_000_003 + i)
        connection = None
        while time.perf_counter() < deadline:
            kind = rng.choices(kinds, weights)[0]
            call = rng.choice(pool[kind])
            start = time.perf_counter()
            try:
                if connection is None:
                    connection = await asyncio.open_connection(host, port)
                connection[1].write(call.raw)
                status, body = await asyncio.wait_for(read_response(connection[0]), REQUEST_TIMEOUT_S)
                said = verdict(call, status, body)
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError) as exc:
                status, body, said = 0, repr(exc).encode(), "error"  # a new connection for the next request
                if connection is not None:
                    connection[1].close()
                connection = None
                await asyncio.sleep(0.1)
            end = time.perf_counter()
            out.records.append((end - began, end - start, kind, status, said))
            if said != "ok" and len(out.failures) < 20:
                out.failures.append(f"{kind} {status} {said}: {call.raw[:160]!r} -> {body[:300]!r}")
        if connection is not None:
            connection[1].close()

    async def sample() -> None:
        with progress_bar(total=int(duration), unit="s", desc=f"soak, {clients} clients") as bar:
            shown = 0
            while True:
                now = time.perf_counter() - began
                if pid is not None:
                    out.rss.append((now, *process_sample(pid), os.getloadavg()[0]))
                step = min(int(now), int(duration)) - shown
                if step > 0:
                    bar.update(step)
                    shown += step
                await asyncio.sleep(rss_every)

    sampler = asyncio.ensure_future(sample())
    try:
        await asyncio.gather(*(client(i) for i in range(clients)))
    finally:
        sampler.cancel()
        out.duration = time.perf_counter() - began
        if pid is not None:
            out.rss.append((out.duration, *process_sample(pid), os.getloadavg()[0]))
    return out


def soak(base: str, pool: dict[str, list[Call]], weights: Sequence[float], clients: int, duration: float,
         pid: Optional[int] = None, rss_every: float = 5.0, seed: int = 0) -> Soak:
    """``clients`` keep-alive connections to ``base`` sending requests drawn from ``pool`` (kinds in KINDS order,
    by ``weights``) for ``duration`` seconds; the resident set of process ``pid`` sampled every ``rss_every`` s."""
    parsed = urllib.parse.urlsplit(base)
    assert parsed.hostname is not None and parsed.port is not None, base
    return asyncio.run(_soak(parsed.hostname, parsed.port, pool, weights, clients, duration, pid, rss_every, seed))


# ---- summaries --------------------------------------------------------------------------------------------
def counts(records) -> dict:
    verdicts = [r[4] for r in records]
    return {"requests": len(records), "wrong": verdicts.count("wrong"), "http_5xx": verdicts.count("5xx"),
            "errors": verdicts.count("error"), "http_4xx": sum(1 for r in records if 400 <= r[3] < 500)}


def latency(records) -> dict:
    values = [r[1] for r in records]
    if not values:
        return {"p50_ms": float("nan"), "p99_ms": float("nan")}
    return {"p50_ms": 1000 * percentile(values, 0.5), "p99_ms": 1000 * percentile(values, 0.99)}


def windows(result: Soak, window: float) -> list[dict]:
    """Per window of request end times: requests, QPS, p50/p99 of the non-malformed requests, failures, and the
    server's last RSS sample in the window (MiB)."""
    out = []
    n = max(1, int(round(result.duration / window)))
    for w in range(n):
        lo, hi = w * window, (w + 1) * window if w < n - 1 else float("inf")
        part = [r for r in result.records if lo <= r[0] < hi]
        served = [r for r in part if r[2] != "malformed"]
        rss = [s[1] for s in result.rss if s[0] < hi]
        span = (min(hi, result.duration) - lo) or window
        out.append({"t_s": round(min(hi, result.duration), 1), **counts(part), "qps": len(part) / span,
                    **latency(served), "rss_mib": rss[-1] / 1024 if rss else float("nan")})
    return out


def rss_growth(result: Soak, last: float, column: int = 1) -> dict:
    """RSS over the last ``last`` seconds (``column`` of the samples: 1 VmRSS, 2 RssAnon): the sample at its start,
    the largest and the last one (MiB), and the growth of the largest over the start (%)."""
    inside = [s for s in result.rss if s[0] >= result.duration - last and s[1] > 0]
    if not inside:
        return {"rss_start_mib": float("nan"), "rss_max_mib": float("nan"), "rss_end_mib": float("nan"),
                "rss_growth_pct": float("nan")}
    start, peak, end = inside[0][column], max(s[column] for s in inside), inside[-1][column]
    return {"rss_start_mib": start / 1024, "rss_max_mib": peak / 1024, "rss_end_mib": end / 1024,
            "rss_growth_pct": 100.0 * (peak - start) / start}


def by_kind(result: Soak) -> list[dict]:
    out = []
    for kind in (*KINDS, "all"):
        part = [r for r in result.records if kind in ("all", r[2])]
        out.append({"kind": kind, **counts(part), "qps": len(part) / result.duration if result.duration else 0.0,
                    **latency(part)})
    return out


def criteria(result: Soak, rss_last: float, max_growth_pct: float = 5.0) -> dict[str, bool]:
    """The issue's conditions: zero wrong answers, zero 5xx, no connection error or timeout, every malformed request
    refused 4xx, RSS growth over the last ``rss_last`` seconds under ``max_growth_pct``."""
    total = counts(result.records)
    malformed = [r for r in result.records if r[2] == "malformed"]
    growth = rss_growth(result, rss_last)["rss_growth_pct"]
    return {"zero wrong answers": total["wrong"] == 0, "zero 5xx": total["http_5xx"] == 0,
            "zero connection errors / timeouts": total["errors"] == 0,
            "malformed requests all 4xx": all(400 <= r[3] < 500 for r in malformed),
            f"RSS growth over the last {rss_last:.0f} s < {max_growth_pct:g} %": growth < max_growth_pct}


# ---- report -----------------------------------------------------------------------------------------------
def plot(frame, result: Soak, rss_last: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lsr_lucene.io.output import save_png

    fig, axes = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    axes[0].plot(frame["t_s"], frame["qps"], marker=".")
    axes[0].set_ylabel("requests / s")
    axes[1].plot(frame["t_s"], frame["p50_ms"], marker=".", label="p50")
    axes[1].plot(frame["t_s"], frame["p99_ms"], marker=".", label="p99")
    axes[1].set_yscale("log")
    axes[1].set_ylabel("latency (ms)")
    axes[1].legend()
    times = [s[0] for s in result.rss if s[1] > 0]
    axes[2].plot(times, [s[1] / 1024 for s in result.rss if s[1] > 0], label="VmRSS")
    axes[2].plot(times, [s[2] / 1024 for s in result.rss if s[1] > 0], label="RssAnon")
    axes[2].axvspan(result.duration - rss_last, result.duration, alpha=0.12, label=f"last {rss_last:.0f} s")
    axes[2].set_ylabel("server RSS (MiB)")
    axes[2].set_xlabel("time since the first request (s)")
    axes[2].legend()
    save_png(fig, path, 100)


def write_report(out_dir: Path, setup: list[str], result: Soak, window: float, rss_last: float) -> dict[str, bool]:
    """soak.md, soak.csv (per window), soak_rss.csv (every sample) and soak.png in ``out_dir``; the criteria."""
    import pandas as pd

    from lsr_lucene.eval.trec import to_markdown
    from lsr_lucene.io.output import atomic_output, write_text_atomic

    out_dir.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(windows(result, window))
    with atomic_output(out_dir / "soak.csv", overwrite=True) as tmp:
        frame.to_csv(tmp, index=False, float_format="%.3f")
    rss = pd.DataFrame([(round(t, 2), k / 1024, a / 1024, n, f, load) for t, k, a, n, f, load in result.rss],
                       columns=["t_s", "rss_mib", "rss_anon_mib", "threads", "open_fds", "load_1min"])
    with atomic_output(out_dir / "soak_rss.csv", overwrite=True) as tmp:
        rss.to_csv(tmp, index=False, float_format="%.1f")
    plot(frame, result, rss_last, out_dir / "soak.png")
    held = criteria(result, rss_last)
    growth, anon = rss_growth(result, rss_last), rss_growth(result, rss_last, column=2)
    live = [s for s in result.rss if s[1] > 0] or [(0.0, 0, 0, 0, 0, 0.0)]
    loads, total, clients = [s[5] for s in live], counts(result.records), result.clients
    served = frame.iloc[:-1] if len(frame) > 1 else frame  # the last window holds the stragglers only
    lines = ["# `lsr-lucene serve` under sustained load (soak)", "",
             "Written by scripts/run_serve_soak.sh (scripts/bench/soak.py).", "", *setup, "",
             "## Conditions", "", "| condition | held |", "|---|---|",
             *[f"| {name} | {'yes' if ok else '**NO**'} |" for name, ok in held.items()], "",
             "## Requests by kind (latency: send to last byte of the answer, at the client)", "",
             to_markdown(pd.DataFrame(by_kind(result)).set_index("kind"), ".2f"), "",
             f"## Over time ({window:g} s windows: `soak.csv`; RSS samples: `soak_rss.csv`)", "",
             f"- QPS per window: min {served['qps'].min():.1f}, median {served['qps'].median():.1f}, "
             f"max {served['qps'].max():.1f}. Every client waits for its answer before the next request, so the "
             f"latency is mostly queueing on the server's search threads: by Little's law {clients} clients / "
             f"{total['requests'] / result.duration:.1f} requests/s = {clients * result.duration / total['requests']:.2f}"
             f" s per request, against the measured mean {sum(r[1] for r in result.records) / total['requests']:.2f}"
             f" s.",
             f"- Load average (1 min) of the machine during the run: {min(loads):.1f} to {max(loads):.1f} "
             f"(`soak_rss.csv`), on {os.cpu_count()} cores.",
             f"- p50 per window: {served['p50_ms'].min():.1f} to {served['p50_ms'].max():.1f} ms; "
             f"p99 per window: {served['p99_ms'].min():.1f} to {served['p99_ms'].max():.1f} ms.",
             f"- Server RSS (VmRSS, JVM included) over the last {rss_last:.0f} s: {growth['rss_start_mib']:.1f} MiB "
             f"at its start, at most {growth['rss_max_mib']:.1f} MiB, {growth['rss_end_mib']:.1f} MiB at the end: "
             f"growth {growth['rss_growth_pct']:+.2f} % (largest sample over the first); its anonymous part "
             f"(RssAnon: the heaps, without the memory-mapped index files) {anon['rss_start_mib']:.1f} MiB, at most "
             f"{anon['rss_max_mib']:.1f} MiB: {anon['rss_growth_pct']:+.2f} %.",
             f"- Server threads {live[0][3]} at the first sample, {live[-1][3]} at the last (at most "
             f"{max(s[3] for s in live)}); open file descriptors {live[0][4]}, {live[-1][4]} (at most "
             f"{max(s[4] for s in live)}).",
             "", "![p50/p99, QPS and RSS over time](soak.png)", ""]
    if result.failures:
        lines += ["## First failures", "", *[f"- `{f}`" for f in result.failures], ""]
    write_text_atomic(out_dir / "soak.md", "\n".join(lines))
    return held


def main(argv: list[str] | None = None) -> int:
    from scripts.bench.scale_report import machine
    from lsr_lucene.io.topics import read_topics
    from lsr_lucene.search.spec_searcher import SpecSearcher

    parser = opt.Parser(prog="python -m scripts.bench.soak", description=__doc__.splitlines()[0])
    opt.add_index(parser, "impact index to serve (built when missing, from --vectors and --docs)")
    parser.add_argument("--vectors", help="encoded passages (lsr-lucene encode's folder, finished or still being "
                                          "written) of which the first --docs make the index")
    opt.add_number(parser, "--docs", default=None, help="passages of the index built from --vectors")
    opt.add_topics(parser, required=True, help="questions of the query pool (TSV, JSONL, ...)")
    opt.add_number(parser, "--queries", default=300, help="pool size: the first N topics")
    opt.add_number(parser, "--clients", default=64, help="concurrent keep-alive connections")
    opt.add_number(parser, "--duration", kind=opt.POSITIVE_NUMBER, default=600.0, help="seconds of load")
    opt.add_number(parser, "--window", kind=opt.POSITIVE_NUMBER, default=10.0, help="seconds per reported window")
    opt.add_number(parser, "--rss-every", kind=opt.POSITIVE_NUMBER, default=2.0, help="seconds between RSS samples")
    opt.add_number(parser, "--rss-last", kind=opt.POSITIVE_NUMBER, default=480.0,
                   help="RSS growth is measured over the last S seconds (at most 0.8 of --duration)")
    opt.add_number(parser, "--malformed", kind=opt.SHARE, default=0.01, help="share of malformed requests")
    parser.add_argument("--mix", default="1,1,1", help="weights of text, vector and compose requests")
    opt.add_hits(parser, default=10)
    opt.add_threads(parser, help="search threads of the server")
    parser.add_argument("--work", default="work/soak", help="folder of the pool and the CLI's runs")
    parser.add_argument("--output-dir", default="runs/serve")
    parser.add_argument("--collection", default=None, help="name of the collection in the report")
    opt.add_number(parser, "--seed", kind=opt.NON_NEGATIVE_INT, default=0, help="seed of the clients' draws")
    args = parser.parse_args(argv)
    try:
        mix = [float(w) for w in args.mix.split(",")]
        assert len(mix) == 3 and min(mix) >= 0 and sum(mix) > 0
    except (ValueError, AssertionError):
        raise InputError(f"--mix {args.mix}: expected three non-negative weights, e.g. 1,1,1") from None
    weights = [(1 - args.malformed) * w / sum(mix) for w in mix] + [args.malformed]
    rss_last = min(args.rss_last, 0.8 * args.duration)
    ensure_index(Path(args.index), args.vectors, args.docs)
    texts = dict(list(read_topics(args.topics).items())[:args.queries])
    composed = negations(texts)
    before = machine()
    print(f"{before}; uvicorn HTTP {http_stack()}", file=sys.stderr)
    runs = cli_runs(args.index, texts, composed, args.hits, Path(args.work))
    with SpecSearcher(args.index) as searcher:
        docs = searcher.num_docs
    sidecar = sorted(p.name for p in Path(args.index).glob("*dense*"))
    work = Path(args.work)
    with open(work / "server.err", "w", encoding="utf-8") as err:
        proc, base = start_server(args.index, args.threads, "soak", stderr=err)
        try:
            host = urllib.parse.urlsplit(base).netloc
            pool = make_pool("soak", host, texts, composed, runs, args.hits)
            result = soak(base, pool, weights, args.clients, args.duration, proc.pid, args.rss_every, args.seed)
            alive = proc.poll() is None
        finally:
            status = stop_server(proc)
    after = machine()
    setup = [f"- Index: `{args.index}` ({docs:,} documents; sidecar files: {', '.join(sidecar) or 'none'}); "
             f"collection {args.collection or Path(args.index).name}.",
             f"- Load: {args.clients} concurrent keep-alive HTTP/1.1 clients on loopback (one asyncio process) for "
             f"{args.duration:g} s, each sending its next request when the last is answered; kinds drawn with "
             f"weights text {weights[0]:.3f} (GET and POST), vector {weights[1]:.3f}, compose {weights[2]:.3f}, "
             f"malformed {weights[3]:.3f} ({len(MALFORMED)} kinds: bad JSON, bad fields, unknown index/docid, "
             f"wrong method...); hits {args.hits}.",
             f"- Pool: the first {len(texts)} topics of `{args.topics}`; their negations as '<question> "
             f"without/but not/excluding <longest word of the next question>'. Expected answers: the runs of "
             f"`lsr-lucene search --topics`, `search --query-vectors` (vectors from `lsr-lucene encode --topics`) "
             f"and `lsr-lucene compose --topics` of the pool, every 200 answer compared (docids, order, scores).",
             f"- Server: `lsr-lucene serve --threads {args.threads}` (uvicorn on {http_stack()}); it was "
             f"{'still running' if alive else 'NOT running'} at the end; stopped with SIGTERM (exit status {status}).",
             f"- Machine: {before} before the run and {after.split(', load average ')[1]} after. The server, "
             f"its search threads and the load generator share these cores with other jobs (other developers' "
             f"builds and tests, a long encoding job): figures are noisy and lower than on an idle machine."]
    held = write_report(Path(args.output_dir), setup, result, args.window, rss_last)
    total = counts(result.records)
    print(f"{total['requests']:,} requests in {result.duration:.0f} s: {total['wrong']} wrong, {total['http_5xx']} 5xx, "
          f"{total['errors']} errors; " + "; ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in held.items()),
          file=sys.stderr)
    print(f"wrote {args.output_dir}/soak.md, soak.csv, soak_rss.csv and soak.png")
    return 0 if all(held.values()) else 1


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
