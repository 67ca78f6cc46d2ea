"""A negated query end to end, by stage, beside a plain exact search of the same text (issue 68 item 1).

``python -m scripts.bench.negation_latency --index work/npl/index --topics ../shared/data/npl/topics.tsv
--leg after=work/npl/index/dense [--code before=work/old-code --code after=.] --output runs/dense/negation_latency.md``

Each query is NPL-style text "A but not B" (topic i, and the first words of topic i+1 as B: every query is
negated). Per query, in turn (the order rotated query by query, one query at a time, one thread): a plain exact
search of the whole text (``ImpactSearcher.search``: sparse encoding and exact search) and, for each ``--leg``,
``ComposeSearcher.search`` with that dense leg (from the text: parse and intent, sparse encoding of the atomic
texts, A and B sparse searches, dense query encoding, dense candidates, dense scoring, fusion). Caches that would
serve a repeated text (the intent embedding, the dense leg's query memo) are cleared before every call. Also the
share of queries whose top 10 is the same with every leg (candidates by the approximate index against exact).

``--code NAME=TREE`` (repeatable): run every leg with the code of each tree (a checkout, or an unpacked
``git archive REV lsr_lucene`` beside its jar), each in its own worker process (``PYTHONPATH=TREE:<this checkout>``)
that holds its searchers; the queries go to the workers in turn (rotated), one at a time, so code before and after a
change is timed in one interleaved run. Without it, the legs run with this checkout's code in one worker.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

STAGES = ("parse and intent", "sparse query encoding", "A and B sparse searches", "dense query encoding",
          "dense candidates", "dense scoring", "stored texts and containment (absence)", "fusion and the rest")


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


def serve(args) -> int:
    """Worker: open the plain searcher and each leg's ComposeSearcher with the code on PYTHONPATH, then answer
    one JSON request a line ({"engine", "text"}) with {"seconds", "stages", "docids"} (stage seconds exclusive)."""
    from lsr_lucene.compose import intent_model
    from lsr_lucene.compose import searcher as compose_searcher
    from lsr_lucene.compose.searcher import ComposeSearcher
    from lsr_lucene.search.impact_searcher import ImpactSearcher

    out = sys.stdout
    sys.stdout = sys.stderr  # notes of the code under test must not enter the protocol
    plain = ImpactSearcher(args.index, threads=1)
    legs = dict(leg.split("=", 1) for leg in args.leg)
    timer = StageTimer()  # one for every compose call (calls run one after another), cleared before each
    timer.wrap(compose_searcher, "composition", "parse and intent")  # the module function search calls
    searchers = {name: ComposeSearcher(args.index, threads=1, dense=folder) for name, folder in legs.items()}
    for name in args.blas_scoring:
        blas_scoring(searchers[name].dense_leg)
    warm = args.warm
    for s in searchers.values():  # warm-up: models, JVM, the dense index; then each searcher's parts are timed
        s.search(warm, args.k)
        timer.wrap(s.query_encoder, "encode", "sparse query encoding")
        timer.wrap(s.backend, "search_many", "A and B sparse searches")
        for method in ("texts", "containing"):
            if hasattr(s.backend, method):
                timer.wrap(s.backend, method, "stored texts and containment (absence)")
        leg = s.dense_leg
        timer.wrap(leg._load(), "encode_queries", "dense query encoding")
        timer.wrap(leg, "search", "dense candidates")
        timer.wrap(leg, "scores", "dense scoring")
        timer.wrap(leg, "similar", "dense scoring")
    plain.search(warm, args.k)
    import lsr_lucene

    out.write(json.dumps({"ready": True, "code": str(Path(lsr_lucene.__file__).parent),
                          "documents": {n: len(s.dense_leg.embeddings.docids)
                                                       for n, s in searchers.items()}}) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        intent_model.embedding.cache_clear()
        name, text = request["engine"], request["text"]
        if name == "plain":
            started = time.perf_counter()
            hits = plain.search(text, args.k)
            total, stages = time.perf_counter() - started, {}
        else:
            s = searchers[name]
            s.dense_leg._memo.clear()
            timer.seconds.clear()
            started = time.perf_counter()
            hits = s.search(text, args.k)
            total = time.perf_counter() - started
            stages = {stage: timer.seconds.get(stage, 0.0) for stage in STAGES[:-1]}
            stages["fusion and the rest"] = total - sum(stages.values())
        out.write(json.dumps({"seconds": total, "stages": stages, "docids": [h.docid for h in hits]}) + "\n")
        out.flush()
    return 0


# the workers' native thread pools: one thread, so that no pool's idle threads spin on the cores the other worker is
# timed on (one query at a time, one thread, is the protocol; torch's own intra-op pool is the encoders' threads=1)
ONE_THREAD = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


class Worker:
    """A worker process (:func:`serve`) with one code tree's lsr_lucene first on its path."""

    def __init__(self, tree: str, argv: list[str]):
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(dict.fromkeys([str(Path(tree).resolve()), root])),
                   **dict.fromkeys(ONE_THREAD, "1"))
        # run in the tree (``python -m`` puts the working directory first on the path), paths made absolute
        self.process = subprocess.Popen([sys.executable, "-m", "scripts.bench.negation_latency", "--worker", *argv],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                        cwd=str(Path(tree).resolve()))
        self.ready = self._read()

    def _read(self) -> dict:
        line = self.process.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise SystemExit(f"error: the worker of {self.process.args!r} ended (exit {self.process.wait()})")
        return json.loads(line)

    def ask(self, engine: str, text: str) -> dict:
        self.process.stdin.write(json.dumps({"engine": engine, "text": text}) + "\n")  # type: ignore[union-attr]
        self.process.stdin.flush()  # type: ignore[union-attr]
        return self._read()

    def close(self) -> None:
        self.process.stdin.close()  # type: ignore[union-attr]
        self.process.wait()


def main(argv: list[str] | None = None) -> int:
    from lsr_lucene.encode.precision import capability_string
    from lsr_lucene.io.output import write_text_atomic
    from lsr_lucene.io.topics import read_topics

    parser = argparse.ArgumentParser(prog="python -m scripts.bench.negation_latency", description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--topics")
    parser.add_argument("--leg", action="append", required=True, help="NAME=DENSE_FOLDER (the first: the reference)")
    parser.add_argument("--code", action="append", default=[],
                        help="NAME=TREE: also run every leg with that tree's code, in a worker of its own")
    parser.add_argument("--output", type=Path)
    parser.add_argument("--queries", type=int, default=0, help="the first N topics (0: all)")
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--reference", help="the engine whose top k the others are compared with (default: the first)")
    parser.add_argument("--blas-scoring", action="append", default=[],
                        help="a leg that scores with BLAS products as DenseLeg did before cf0d39e (the code before)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--warm", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return serve(args)
    if not args.topics or args.output is None:
        parser.error("--topics and --output are required")
    topics = read_topics(args.topics)
    queries = negated_queries({q: topics[q] for q in list(topics)[:args.queries or None]})
    legs = [leg.split("=", 1)[0] for leg in args.leg]
    codes = dict(c.split("=", 1) for c in args.code) or {"": "."}
    worker_argv = ["--index", str(Path(args.index).resolve()), "-k", str(args.k), "--warm",
                   next(iter(queries.values()))]
    for leg in args.leg:
        name, folder = leg.split("=", 1)
        worker_argv += ["--leg", f"{name}={Path(folder).resolve()}"]
    worker_argv += [x for leg in args.blas_scoring for x in ("--blas-scoring", leg)]
    workers = {code: Worker(tree, worker_argv) for code, tree in codes.items()}
    # engines: (code, leg or "plain"); named "leg" with one code tree, "code leg" with several
    engines = [(code, e) for code in codes for e in ["plain", *legs]]
    label = {(c, e): (f"{c} {e}" if c else e) for c, e in engines}
    timed = [x for x in engines if x[1] != "plain"]
    runs: dict = {x: {} for x in engines}
    totals: dict = {x: [] for x in engines}
    stage_rows: dict = {x: [] for x in timed}
    for number, (qid, text) in enumerate(queries.items()):
        rotation = engines[number % len(engines):] + engines[:number % len(engines)]
        for code, engine in rotation:
            answer = workers[code].ask(engine, text)
            totals[(code, engine)].append(answer["seconds"])
            if engine != "plain":
                stage_rows[(code, engine)].append(answer["stages"])
            runs[(code, engine)][qid] = answer["docids"]
    load = os.getloadavg()[0]
    documents = next(iter(workers.values())).ready["documents"][legs[0]]
    for w in workers.values():
        w.close()
    reference = next((x for x in timed if label[x] == args.reference), timed[0])
    lines = ["| stage (p50 / mean ms) | " + " | ".join(label[x] for x in timed) + " |", "|---|" + "---:|" * len(timed)]
    for stage in STAGES:
        cells = []
        for x in timed:
            values = np.asarray([r.get(stage, 0.0) for r in stage_rows[x]]) * 1e3
            cells.append(f"{np.median(values):.2f} / {values.mean():.2f}")
        lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    plain = {x: totals[(x[0], "plain")] for x in timed}
    lines.append("| **negated query, total** | " + " | ".join(
        f"**{np.median(totals[x]) * 1e3:.2f}** / {np.mean(totals[x]) * 1e3:.2f}" for x in timed) + " |")
    lines.append("| plain exact search of the same text, same worker (p50 / mean) | " + " | ".join(
        f"{np.median(plain[x]) * 1e3:.2f} / {np.mean(plain[x]) * 1e3:.2f}" for x in timed) + " |")
    lines.append("| **negated p50 / plain p50** | " + " | ".join(
        f"**{np.median(totals[x]) / np.median(plain[x]):.2f}**" for x in timed) + " |")
    same = {x: sum(runs[x][q] == runs[reference][q] for q in queries) for x in timed}
    lines.append(f"| top {args.k} the same as {label[reference]}'s | " + " | ".join(
        f"{same[x]}/{len(queries)}" for x in timed) + " |")
    folders = {leg.split("=", 1)[0]: Path(leg.split("=", 1)[1]) for leg in args.leg}
    import torch

    text = (f"# A negated query by stage ({args.index}: {documents:,} documents)\n\n"
            f"CPU capability {capability_string()} (torch {torch.backends.cpu.get_cpu_capability()}), "
            f"{os.cpu_count()} cores shared with other work (1-minute load {load:.1f} at the end); one thread "
            f"(workers with {ONE_THREAD[0]}=1 and the like), one query at a time, {len(queries)} queries, "
            f"k={args.k}, every engine in turn per query (rotated). Legs: "
            + "; ".join(f"{n} = {f}{' (approximate index)' if (f / 'ann.faiss').is_file() else ' (exact scan)'}"
                        for n, f in folders.items())
            + (". Code: " + "; ".join(f"{c} = {t} (lsr_lucene from {workers[c].ready['code']})"
                                     for c, t in codes.items()) if args.code else "")
            + ".\n`python -m scripts.bench.negation_latency " + " ".join(sys.argv[1:] if argv is None else argv)
            + "`\n\n" + "\n".join(lines) + "\n")
    write_text_atomic(args.output, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
