"""Latency of composed queries against the vanilla query, measured in one run (a benchmark script, not a test).

``python -m scripts.bench.compose --index work/excluir/index --queries ../shared/data/excluir/dev.jsonl``

Every query is timed end to end, one query at a time as an interactive user would send it: cue parsing,
encoding of the texts the operation needs (one text for vanilla, the atomic parts otherwise, encoded in
one batch), composition, quantisation and the Lucene search of the top ``--hits`` (fusion: each leaf's
search plus exact scoring of the candidates). For every query all operations run back to back in a
rotating order (so drift in machine load hits them alike), after a warm-up pass. ``and`` operations
(add, maxpool, cpt) are timed on the same parts joined as an intersection. The table gives mean,
median and 95th percentile milliseconds and the ratios of mean and median to vanilla's.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from lsr_lucene.compose.backends import LuceneBackend
from lsr_lucene.compose.execute import run_one
from lsr_lucene.compose.negation_parser import parse
from lsr_lucene.compose.operations import Settings, build_plan, required_texts
from lsr_lucene.compose.query_encoder import QueryEncoder
from lsr_lucene.compose.tree import Node, Tree
from lsr_lucene.errors import InputError

NOT_OPS = ("vanilla", "ignore", "subtract", "nrf", "orthogonal", "disentangled", "fusion", "fusion-scaled")
AND_OPS = ("add", "maxpool", "cpt")


def _as_and(tree: Tree) -> Tree:
    """The same parts joined by ``and`` (to time intersection operations on realistic atomic texts)."""
    if isinstance(tree, str):
        return tree
    return Node("and", _as_and(tree.a), _as_and(tree.b))


def timed_query(text: str, op: str, encoder: QueryEncoder, backend, scale: float,
                hits: int) -> tuple[float, float, float]:
    """Seconds for one query end to end under one operation, and the encoding and search parts of it."""
    started = time.perf_counter()
    result = parse(text)
    tree = result.tree if result.composed else text
    if op in AND_OPS:
        tree = _as_and(tree)
    settings = Settings(op)
    texts = list(dict.fromkeys(required_texts(tree, settings, text)))
    encode_start = time.perf_counter()
    vectors = dict(zip(texts, encoder.encode(texts)))
    encoded = time.perf_counter()
    plan = build_plan(tree, settings, vectors, text)
    search_start = time.perf_counter()
    run_one("q", plan, backend, scale, hits)
    done = time.perf_counter()
    return done - started, encoded - encode_start, done - search_start


def main(argv: list[str] | None = None) -> int:
    """Print the latency table (and write it with --output)."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m scripts.bench.compose", description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="impact index (its encoder settings are used)")
    parser.add_argument("--queries", required=True, help="ExcluIR-style JSONL {id, query} or topics file")
    parser.add_argument("--limit", type=int, default=100, help="queries timed (default 100)")
    parser.add_argument("--hits", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=1, help="torch threads for query encoding")
    parser.add_argument("--output", help="also write the table as Markdown here")
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    from lsr_lucene.search.impact import index_settings

    if not Path(args.index).is_dir():
        raise InputError(f"{args.index}: no such index directory")
    if args.queries.endswith(".jsonl"):
        from lsr_lucene.io.output import open_jsonl

        texts = [str(obj.get("query") or obj.get("text")) for _, obj in open_jsonl(args.queries)]
    else:
        from lsr_lucene.io.topics import read_topics

        texts = list(read_topics(args.queries).values())
    texts = texts[:args.limit]
    info = index_settings(args.index)
    scale = info.get("scale") or 100
    encoder = QueryEncoder(info.get("model") or "splade-tiny", threads=args.threads)
    backend = LuceneBackend(args.index, threads=1)
    ops = NOT_OPS + AND_OPS
    times: dict[str, list[float]] = {op: [] for op in ops}
    parts: dict[str, list[tuple[float, float]]] = {op: [] for op in ops}
    try:
        for text in texts[:5]:  # warm-up: JIT, caches, lazy imports
            for op in ops:
                timed_query(text, op, encoder, backend, scale, args.hits)
        for i, text in enumerate(texts):
            order = ops[i % len(ops):] + ops[:i % len(ops)]
            for op in order:
                seconds, encoding, searching = timed_query(text, op, encoder, backend, scale, args.hits)
                times[op].append(seconds)
                parts[op].append((encoding, searching))
    finally:
        backend.close()
    base_mean = statistics.mean(times["vanilla"])
    base_median = statistics.median(times["vanilla"])
    lines = [f"Latency per query, end to end (parse, encode, compose, Lucene top-{args.hits}); "
             f"{len(texts)} queries from {Path(args.queries).name}, index {args.index}",
             "", "| operation | mean ms | median ms | p95 ms | mean / vanilla | median / vanilla "
                 "| encode ms (mean) | search ms (mean) |",
             "|:---|---:|---:|---:|---:|---:|---:|---:|"]
    for op in ops:
        values = sorted(times[op])
        p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
        mean, median = statistics.mean(values), statistics.median(values)
        enc = statistics.mean(e for e, _ in parts[op])
        srch = statistics.mean(s for _, s in parts[op])
        lines.append(f"| {op} | {1000 * mean:.1f} | {1000 * median:.1f} | {1000 * p95:.1f} | "
                     f"{mean / base_mean:.2f} | {median / base_median:.2f} | {1000 * enc:.1f} | {1000 * srch:.1f} |")
    import os

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines += ["", f"Machine: {os.cpu_count()} CPUs, load average {load:.1f} at the end of the run."]
    table = "\n".join(lines) + "\n"
    print(table)
    if args.output:
        from lsr_lucene.io.output import atomic_output

        with atomic_output(args.output, overwrite=args.overwrite) as tmp:
            Path(tmp).write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
