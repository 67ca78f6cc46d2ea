"""Server benchmark: queries per second and p50 / p99 latency of ``lsr-lucene serve`` for 1, 4, 16 and 64 concurrent
clients, beside the same queries searched in process, measured in ONE run.

Modes are measured in interleaved rounds (a shared machine's load drifts over all of them alike).
In process: ``ImpactSearcher.search`` one query at a time (1 client), and the server's own search path
(``SearchEngine.search_text`` on a ``JvmWorkerPool`` of the same ``--threads``, encoder under one lock) driven by N
client threads, so that the difference to the server is HTTP, JSON and the event loop. Server: a real
``lsr-lucene serve`` process on a free loopback port; the clients are asyncio keep-alive connections in this process
(one per client) sending ``GET /v1/NAME/search?query=...&hits=K``; ``GET /health`` alone times the HTTP round
trip. Every server response is checked (status 200).
The load average is printed beside the figures: on a shared machine they are rough.
"""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Callable, Sequence

from lsr_lucene import cli_options as opt
from lsr_lucene.errors import InputError

CLIENTS = (1, 4, 16, 64)
COLUMNS = ["collection", "docs", "mode", "clients", "requests", "errors", "qps", "p50_ms", "p99_ms"]


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) of the values, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summary(latencies: Sequence[float], wall: float, errors: int) -> dict:
    return {"requests": len(latencies), "errors": errors, "qps": len(latencies) / wall if wall else 0.0,
            "p50_ms": 1000 * percentile(latencies, 0.5), "p99_ms": 1000 * percentile(latencies, 0.99)}


# ---- clients ----------------------------------------------------------------------------------------------
Load = tuple  # (latencies in seconds, wall seconds, errors)


def threaded_load(call: Callable[[str], object], texts: Sequence[str], clients: int, requests: int) -> Load:
    """``clients`` threads calling ``call(text)`` for ``requests`` texts in all (cycled): latency of each call."""
    latencies: list[float] = []
    errors = [0]
    counter = iter(range(requests))
    lock = threading.Lock()

    def client() -> None:
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            start = time.perf_counter()
            try:
                call(texts[i % len(texts)])
            except Exception:  # noqa: BLE001  (counted)
                with lock:
                    errors[0] += 1
                continue
            elapsed = time.perf_counter() - start
            with lock:
                latencies.append(elapsed)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, time.perf_counter() - began, errors[0]


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """(status, body) of one HTTP/1.1 response on a keep-alive connection (uvicorn sends a Content-Length)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    return int(head.split(b" ", 2)[1]), await reader.readexactly(length)


async def _http_clients(host: str, port: int, paths: Sequence[str], clients: int, requests: int) -> Load:
    latencies: list[float] = []
    errors = 0
    counter = iter(range(requests))

    async def client() -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection(host, port)
        try:
            for i in counter:
                message = f"GET {paths[i % len(paths)]} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
                start = time.perf_counter()
                writer.write(message)
                status, _ = await read_response(reader)
                elapsed = time.perf_counter() - start
                if status == 200:
                    latencies.append(elapsed)
                else:
                    errors += 1
        finally:
            writer.close()

    began = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, time.perf_counter() - began, errors


def http_load(base: str, paths: Sequence[str], clients: int, requests: int) -> Load:
    """``clients`` keep-alive connections sending ``requests`` GETs in all (cycled over ``paths``)."""
    parsed = urllib.parse.urlsplit(base)
    assert parsed.hostname is not None and parsed.port is not None, base
    return asyncio.run(_http_clients(parsed.hostname, parsed.port, paths, clients, requests))


# ---- the two sides, interleaved ---------------------------------------------------------------------------
def start_server(index: str, threads: int, name: str = "bench", stderr=subprocess.DEVNULL
                 ) -> tuple[subprocess.Popen, str]:
    """A real ``lsr-lucene serve`` process on a free loopback port: (process, base URL) once it is ready; its
    stderr goes to ``stderr`` (an open file; default: discarded)."""
    command = [sys.executable, "-m", "lsr_lucene.serve", "--index", index, "--name", name, "--port", "0",
               "--threads", str(threads)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True)
    assert proc.stdout is not None  # stdout=PIPE
    line = proc.stdout.readline()
    if not line.startswith("serving "):
        proc.kill()
        raise InputError(f"the server did not start (exit status {proc.wait(60)})")
    return proc, line.split(" at ", 1)[1].strip()


def stop_server(proc: subprocess.Popen) -> int:
    """SIGTERM (uvicorn's graceful shutdown), SIGKILL after 15 s; the exit status."""
    proc.terminate()
    try:
        return proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def measure(index: str, texts: Sequence[str], clients: Sequence[int], requests: int, hits: int, threads: int,
            rounds: int) -> list[dict]:
    """Every mode at every client count, in ``rounds`` interleaved rounds (in process, then server, then again),
    so that a shared machine's load drifts over all modes alike; latencies pooled over the rounds."""
    from lsr_lucene.serve.engine import SearchEngine
    from lsr_lucene.serve.pool import JvmWorkerPool

    engine = SearchEngine(index, compose=False)
    pool = JvmWorkerPool(threads)
    proc, base = start_server(index, threads)
    paths = [f"/v1/bench/search?{urllib.parse.urlencode({'query': t, 'hits': hits})}" for t in texts]
    pooled: dict[tuple[str, int], list] = {}

    def add(mode: str, n: int, load: Load) -> None:
        entry = pooled.setdefault((mode, n), [[], 0.0, 0])
        entry[0].extend(load[0])
        entry[1] += load[1]
        entry[2] += load[2]

    def single(text: str):
        return engine.searcher.search(text, hits)

    def on_pool(text: str):
        return pool.submit(engine.search_text, text, hits).result()

    try:
        threaded_load(single, texts, 1, len(texts))  # warm-ups
        threaded_load(on_pool, texts, max(clients), len(texts))
        http_load(base, paths, max(clients), len(paths))
        for n in clients:
            chunk = max(requests, 4 * n) // rounds
            for _ in range(rounds):
                if n == 1:
                    add("ImpactSearcher.search", 1, threaded_load(single, texts, 1, chunk))
                    add("server GET /health (HTTP only)", 1, http_load(base, ["/health"], 1, chunk))
                add(f"in process ({threads} search threads)", n, threaded_load(on_pool, texts, n, chunk))
                add(f"server ({threads} search threads)", n, http_load(base, paths, n, chunk))
    finally:
        stop_server(proc)
        pool.close()
        engine.close()
    order = ["ImpactSearcher.search", "in process", "server GET", "server ("]
    keys = sorted(pooled, key=lambda k: (next(i for i, o in enumerate(order) if k[0].startswith(o)), k[1]))
    return [{"mode": mode, "clients": n, **summary(*pooled[(mode, n)])} for mode, n in keys]


def http_stack() -> str:
    """What uvicorn's "auto" picks here: httptools or h11 for HTTP, uvloop or asyncio for the event loop."""
    import importlib.util

    parser = "httptools" if importlib.util.find_spec("httptools") else "h11"
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    return f"{parser} + {loop}"


# ---- tables -----------------------------------------------------------------------------------------------
def write_tables(rows: list[dict], out_dir: Path) -> None:
    """results.csv (rows of earlier collections kept, this run's collections replaced) and results.md."""
    import pandas as pd

    from lsr_lucene.eval.trec import to_markdown
    from lsr_lucene.io.output import atomic_output

    out_dir.mkdir(parents=True, exist_ok=True)
    csv = out_dir / "results.csv"
    frame = pd.DataFrame(rows, columns=COLUMNS)
    if csv.is_file():
        old = pd.read_csv(csv)
        frame = pd.concat([old[~old["collection"].isin(frame["collection"])], frame], ignore_index=True)
    with atomic_output(csv, overwrite=True) as tmp:
        frame.to_csv(tmp, index=False, float_format="%.3f")
    lines = ["# lsr-lucene serve: queries per second and latency", "",
             "Written by scripts/run_serve_bench.sh (scripts/bench/serve.py); see README.md for the setup. "
             f"Last run: uvicorn on {http_stack()}; load average {os.getloadavg()[0]:.2f} at the end.", ""]
    for name, part in frame.groupby("collection", sort=False):
        lines += [f"## {name} ({int(part['docs'].iloc[0])} documents)", "",
                  to_markdown(part.drop(columns=["collection", "docs"]).set_index("mode"), ".2f")]
        one = part[part["clients"] == 1].set_index("mode")["p50_ms"]
        server = [m for m in one.index if m.startswith("server (")]
        local = [m for m in one.index if m.startswith("in process")]
        if server and local:
            lines += [f"At 1 client the server's p50 minus the in-process pool's: "
                      f"{one[server[0]] - one[local[0]]:+.2f} ms; minus ImpactSearcher.search's: "
                      f"{one[server[0]] - one.get('ImpactSearcher.search', float('nan')):+.2f} ms; the HTTP round "
                      f"trip alone (GET /health): {one.get('server GET /health (HTTP only)', float('nan')):.2f} ms.",
                      ""]
    with atomic_output(out_dir / "results.md", overwrite=True) as tmp:
        Path(tmp).write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    import torch

    from lsr_lucene.io.topics import read_topics

    parser = opt.Parser(prog="python -m scripts.bench.serve", description=__doc__.splitlines()[0])
    opt.add_index(parser, "impact index to serve")
    opt.add_topics(parser, required=True)
    parser.add_argument("--collection", required=True, help="name of the collection in the tables")
    parser.add_argument("--clients", default=",".join(map(str, CLIENTS)), help="client counts (comma list)")
    opt.add_number(parser, "--requests", default=500, help="requests per client count (at least 4 per client)")
    opt.add_number(parser, "--queries", default=200, help="topics used (the first N)")
    opt.add_number(parser, "--rounds", default=5, help="interleaved rounds the requests are split into")
    opt.add_hits(parser, default=10)
    opt.add_threads(parser, help="search threads of the server (and of the in-process pool)")
    parser.add_argument("--output-dir", default="runs/serve")
    args = parser.parse_args(argv)
    try:
        clients = [int(c) for c in args.clients.split(",")]
    except ValueError:
        raise InputError(f"--clients {args.clients}: expected a comma list of integers") from None
    texts = list(read_topics(args.topics).values())[:args.queries]
    print(f"torch CPU capability {torch.backends.cpu.get_cpu_capability()}; {os.cpu_count()} cores; "
          f"load average {os.getloadavg()[0]:.2f}; uvicorn HTTP {http_stack()}", file=sys.stderr)
    rows = measure(args.index, texts, clients, args.requests, args.hits, args.threads, args.rounds)
    from lsr_lucene.search.spec_searcher import SpecSearcher

    with SpecSearcher(args.index) as s:
        docs = s.num_docs
    for row in rows:
        row.update(collection=args.collection, docs=docs)
        print(f"{row['mode']:<32} clients {row['clients']:>3}: {row['qps']:8.1f} q/s  p50 {row['p50_ms']:7.2f} ms  "
              f"p99 {row['p99_ms']:7.2f} ms  errors {row['errors']}", file=sys.stderr)
    print(f"load average after: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    write_tables(rows, Path(args.output_dir))
    print(f"wrote {args.output_dir}/results.csv and results.md")
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
