"""A negated query end to end, by stage, beside a plain exact search of the same text (issue 68 item 1).

``python -m scripts.bench.negation_latency --index work/npl/index --topics ../shared/data/npl/topics.tsv
--leg before=work/npl/dense-fp32 --leg after=work/npl/index/dense --output runs/dense/negation_latency.md``

Each query is NPL-style text "A but not B" (topic i, and the first words of topic i+1 as B: every query is
negated). Per query, in turn (the order rotated query by query, one query at a time, one thread): a plain exact
search of the whole text (``ImpactSearcher.search``: sparse encoding and exact search) and, for each ``--leg``,
``ComposeSearcher.search`` with that dense leg (from the text: parse and intent, sparse encoding of the atomic
texts, A and B sparse searches, dense query encoding, dense candidates, dense scoring, fusion). Caches that would
serve a repeated text (the intent embedding, the dense leg's query memo) are cleared before every call. Also the
share of queries whose top 10 is the same with every leg (candidates by the approximate index against exact).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

STAGES = ("parse and intent", "sparse query encoding", "A and B sparse searches", "dense query encoding",
          "dense candidates", "dense scoring", "fusion and the rest")


class StageTimer:
    """Exclusive wall time per stage of nested timed calls (a stage inside another is taken out of the outer)."""

    def __init__(self):
        self.seconds: dict[str, float] = defaultdict(float)
        self._stack: list[list] = []

    def wrap(self, owner, name: str, stage: str) -> None:
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            self._stack.append([stage, time.perf_counter(), 0.0])
            try:
                return original(*args, **kwargs)
            finally:
                stage_, started, inner = self._stack.pop()
                spent = time.perf_counter() - started
                self.seconds[stage_] += spent - inner
                if self._stack:
                    self._stack[-1][2] += spent
        setattr(owner, name, timed)


def blas_scoring(leg) -> None:
    """Give ``leg`` the BLAS products of DenseLeg.scores / similar before cf0d39e (same values, the old cost)."""
    def scores(texts, candidates):
        rows = np.asarray([leg.row[d] for d in candidates], dtype=np.int64)
        with leg._lock:
            queries = leg._queries(texts)
        block = np.asarray(leg.embeddings.vectors[rows], dtype=np.float32)
        values = (block.astype(np.float64) @ queries.astype(np.float64).T).T
        return [dict(zip(candidates, row.tolist())) for row in values]

    def similar(doc, candidates):
        rows = np.asarray([leg.row[d] for d in candidates], dtype=np.int64)
        block = np.asarray(leg.embeddings.vectors[rows], dtype=np.float32).astype(np.float64)
        target = np.asarray(leg.embeddings.vectors[leg.row[doc]], dtype=np.float32).astype(np.float64)
        return dict(zip(candidates, (block @ target).tolist()))
    leg.scores, leg.similar = scores, similar


def negated_queries(topics: dict[str, str], words: int = 3) -> dict[str, str]:
    """'A but not B' per topic: A the topic, B the first ``words`` words of the next topic."""
    qids = list(topics)
    return {q: f"{topics[q]} but not {' '.join(topics[qids[(i + 1) % len(qids)]].split()[:words])}"
            for i, q in enumerate(qids)}


def main(argv: list[str] | None = None) -> int:
    from lsr_lucene.compose import intent_model
    from lsr_lucene.compose import searcher as compose_searcher
    from lsr_lucene.compose.searcher import ComposeSearcher
    from lsr_lucene.encode.precision import capability_string
    from lsr_lucene.io.output import write_text_atomic
    from lsr_lucene.io.topics import read_topics
    from lsr_lucene.search.impact_searcher import ImpactSearcher

    parser = argparse.ArgumentParser(prog="python -m scripts.bench.negation_latency", description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--topics", required=True)
    parser.add_argument("--leg", action="append", required=True, help="NAME=DENSE_FOLDER (the first: the reference)")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=0, help="the first N topics (0: all)")
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--reference", help="the leg whose top k the others are compared with (default: the first)")
    parser.add_argument("--blas-scoring", action="append", default=[],
                        help="a leg that scores with BLAS products as DenseLeg did before cf0d39e (the code before)")
    args = parser.parse_args(argv)
    topics = read_topics(args.topics)
    queries = negated_queries({q: topics[q] for q in list(topics)[:args.queries or None]})
    plain = ImpactSearcher(args.index, threads=1)
    legs = dict(leg.split("=", 1) for leg in args.leg)
    timer = StageTimer()  # one for every compose call (calls run one after another), cleared before each
    timer.wrap(compose_searcher, "composition", "parse and intent")  # the module function search calls
    searchers = {name: ComposeSearcher(args.index, threads=1, dense=folder) for name, folder in legs.items()}
    runs: dict[str, dict[str, list[str]]] = {name: {} for name in ["plain", *legs]}
    totals: dict[str, list[float]] = {name: [] for name in ["plain", *legs]}
    stage_rows: dict[str, list[dict[str, float]]] = {name: [] for name in legs}
    for name in args.blas_scoring:
        blas_scoring(searchers[name].dense_leg)
    for s in searchers.values():  # warm-up: models, JVM, the dense index; then each searcher's parts are timed
        s.search(next(iter(queries.values())), args.k)
        timer.wrap(s.query_encoder, "encode", "sparse query encoding")
        timer.wrap(s.backend, "search_many", "A and B sparse searches")
        leg = s.dense_leg
        timer.wrap(leg._load(), "encode_queries", "dense query encoding")
        timer.wrap(leg, "search", "dense candidates")
        timer.wrap(leg, "scores", "dense scoring")
        timer.wrap(leg, "similar", "dense scoring")
    plain.search(next(iter(queries.values())), args.k)
    order = ["plain", *legs]
    for number, (qid, text) in enumerate(queries.items()):
        rotation = order[number % len(order):] + order[:number % len(order)]
        for name in rotation:
            intent_model.embedding.cache_clear()
            if name == "plain":
                started = time.perf_counter()
                hits = plain.search(text, args.k)
                totals[name].append(time.perf_counter() - started)
            else:
                s = searchers[name]
                s.dense_leg._memo.clear()
                timer.seconds.clear()
                started = time.perf_counter()
                hits = s.search(text, args.k)
                total = time.perf_counter() - started
                totals[name].append(total)
                row = {stage: timer.seconds.get(stage, 0.0) for stage in STAGES[:-1]}
                row["fusion and the rest"] = total - sum(row.values())
                stage_rows[name].append(row)
            runs[name][qid] = [h.docid for h in hits]
    reference = args.reference or list(legs)[0]
    lines = ["| stage (p50 / mean ms) | " + " | ".join(legs) + " |", "|---|" + "---:|" * len(legs)]
    for stage in STAGES:
        cells = []
        for name in legs:
            values = np.asarray([r[stage] for r in stage_rows[name]]) * 1e3
            cells.append(f"{np.median(values):.2f} / {values.mean():.2f}")
        lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    plain_p50 = np.median(totals["plain"]) * 1e3
    lines.append("| **negated query, total** | " + " | ".join(
        f"**{np.median(totals[n]) * 1e3:.2f}** / {np.mean(totals[n]) * 1e3:.2f}" for n in legs) + " |")
    lines.append("| plain exact search of the same text (p50 / mean) | " + " | ".join(
        f"{plain_p50:.2f} / {np.mean(totals['plain']) * 1e3:.2f}" for _ in legs) + " |")
    lines.append("| **negated p50 / plain p50** | " + " | ".join(
        f"**{np.median(totals[n]) * 1e3 / plain_p50:.2f}**" for n in legs) + " |")
    same = {n: sum(runs[n][q] == runs[reference][q] for q in queries) for n in legs}
    lines.append(f"| top {args.k} the same as {reference}'s | " + " | ".join(
        f"{same[n]}/{len(queries)}" for n in legs) + " |")
    meta = {n: Path(f) for n, f in legs.items()}
    documents = len(searchers[reference].dense_leg.embeddings.docids)
    text = (f"# A negated query by stage ({args.index}: {documents:,} documents)\n\n"
            f"CPU capability {capability_string()}, {os.cpu_count()} cores shared with other work (1-minute load "
            f"{os.getloadavg()[0]:.1f} at the end); one thread, one query at a time, {len(queries)} queries, k={args.k}, "
            f"every engine in turn per query (rotated). Legs: " + "; ".join(
                f"{n} = {f}{' (approximate index)' if (f / 'ann.faiss').is_file() else ' (exact scan)'}"
                for n, f in meta.items()) + ".\n`python -m scripts.bench.negation_latency "
            + " ".join(sys.argv[1:] if argv is None else argv) +
            "`\n\n" + "\n".join(lines) + "\n")
    write_text_atomic(args.output, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
