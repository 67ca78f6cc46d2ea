"""How long ``lsr-lucene serve`` and ``lsr-lucene mcp`` take to be ready on an index (issue 67, items 7 and 8).

``python -m scripts.bench.startup --index DIR [--index DIR ...] [--code LABEL=TREE ...] [--repeats 3] [--mcp]
[--output runs/serve/x.md]`` spawns each server afresh and times, from the spawn: its ready line (it listens; for
the MCP server over stdio, its handshake), the first text search and the first composed search (each sent at once,
so it waits for what is still loading). ``--code`` names source trees to time side by side (``PYTHONPATH=TREE``,
run from a neutral folder; default: this checkout), interleaved start by start so that a shared machine's load
falls on each alike. Medians over the repeats, with the CPU (torch's capability) and the load average beside them.
Prints a Markdown table; ``--output`` also writes it (refused if it exists, unless ``--overwrite``).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

QUERY = "tea without caffeine"
LIMIT_S = 600


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=LIMIT_S) as response:
        return json.loads(response.read())


def environment(tree: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": tree}


def time_serve(index: str, tree: str) -> dict[str, float]:
    """Seconds from spawn to the ready line, the first search's answer and the first compose's answer."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "lsr_lucene.serve", "--index", index, "--port", "0",
                             "--name", "x"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=environment(tree), cwd=tempfile.gettempdir())
    try:
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline()), daemon=True)  # type: ignore
        reader.start()
        reader.join(LIMIT_S)
        if not lines or not lines[0].startswith("serving "):
            raise SystemExit(f"error: no ready line from lsr-lucene serve --index {index}: {lines!r}")
        out = {"listening": time.perf_counter() - started}
        base = lines[0].split(" at ", 1)[1].strip()
        query = urllib.parse.urlencode({"query": QUERY, "hits": 10})
        with urllib.request.urlopen(f"{base}/v1/x/search?{query}", timeout=LIMIT_S) as response:
            response.read()
        out["first search"] = time.perf_counter() - started
        _post(f"{base}/v1/x/compose", {"query": QUERY, "hits": 10})
        out["first compose"] = time.perf_counter() - started
        return out
    finally:
        proc.terminate()
        proc.wait(60)


def time_mcp(index: str, tree: str) -> dict[str, float]:
    """Seconds from spawn to the MCP handshake (stdio), the first search tool's answer and the first compose's."""
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    async def go() -> dict[str, float]:
        started = time.perf_counter()
        transport = StdioTransport(sys.executable, ["-m", "lsr_lucene.mcp", "--index", index],
                                   env=environment(tree), cwd=tempfile.gettempdir(), keep_alive=False,
                                   log_file=Path(os.devnull))
        async with Client(transport, timeout=LIMIT_S, init_timeout=LIMIT_S) as client:
            out = {"listening": time.perf_counter() - started}
            await client.call_tool("search", {"query": QUERY, "hits": 10})
            out["first search"] = time.perf_counter() - started
            await client.call_tool("compose", {"query": QUERY, "hits": 10})
            out["first compose"] = time.perf_counter() - started
            return out

    return asyncio.run(go())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench.startup", description=__doc__.splitlines()[0])
    parser.add_argument("--index", action="append", required=True, help="impact index folder (repeatable)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mcp", action="store_true", help="also time lsr-lucene mcp over stdio")
    parser.add_argument("--code", action="append", metavar="LABEL=TREE",
                        help="a source tree to time, named LABEL in the table (repeatable; default: this checkout)")
    parser.add_argument("--output", help="also write the table here (Markdown)")
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    if args.output and Path(args.output).exists() and not args.overwrite:
        raise SystemExit(f"error: {args.output} exists; --overwrite replaces it")
    import torch

    codes = [c.partition("=")[::2] for c in args.code or [f"this checkout={Path.cwd()}"]]
    servers = [("serve", time_serve)] + ([("mcp (stdio)", time_mcp)] if args.mcp else [])
    rows = ["| code | server | index | listening (s) | first search (s) | first compose (s) | load avg |",
            "|---|---|---|---:|---:|---:|---:|"]
    for shown_index, index in ((i, str(Path(i).resolve())) for i in args.index):
        for name, timer in servers:
            runs: dict[str, list[dict[str, float]]] = {label: [] for label, _ in codes}
            loads: dict[str, list[float]] = {label: [] for label, _ in codes}
            for _ in range(args.repeats):
                for label, tree in codes:
                    if name != "serve" and not (Path(tree) / "lsr_lucene" / "mcp").is_dir():
                        continue  # a tree before the MCP server
                    loads[label].append(os.getloadavg()[0])
                    runs[label].append(timer(index, str(Path(tree).resolve())))
                    print(f"{label} {name} {shown_index}: " +
                          ", ".join(f"{k} {v:.1f} s" for k, v in runs[label][-1].items()), file=sys.stderr)
            for label, got in runs.items():
                if got:
                    med = {key: statistics.median(r[key] for r in got) for key in got[0]}
                    rows.append(f"| {label} | {name} | {shown_index} | {med['listening']:.1f} | "
                                f"{med['first search']:.1f} | {med['first compose']:.1f} | "
                                f"{statistics.median(loads[label]):.1f} |")
    table = "\n".join(rows) + (f"\n\nMedians of {args.repeats} starts; CPU {torch.backends.cpu.get_cpu_capability()}, "
                               f"{os.cpu_count()} cores.\n")
    print(table)
    if args.output:
        tmp = Path(args.output).with_suffix(".tmp")
        tmp.write_text(table, encoding="utf-8")
        tmp.replace(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
