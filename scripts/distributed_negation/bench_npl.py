"""Negated queries on NPL: single-index ``compose`` (ComposeSearcher, its default with the dense leg) against
``distributed search``'s path for them (lsr_lucene.distributed.compose, 2 shards on a local Ray instance), one
interleaved run: per query, both searched one after the other (which goes first alternates), each timed; p50s and
whether every ranking agrees (docids in order, scores to 1e-6).

The negated topics are made from NPL's own: "<topic> but not <word>" and "<topic> -<word>", <word> the longest word of
the next topic. The one index is work/npl/index-splade-tiny with work/npl/dense copied in; the distributed index is
built from work/npl/vectors-splade-tiny (its two files: two shards), each shard's dense/ the rows of work/npl/dense
for its documents with its own HNSW graph (the same embeddings as the one index's: the test is the search).

    PYTHONPATH=$PWD nice python scripts/distributed_negation/bench_npl.py --work /tmp/dist-neg-npl \
        --output runs/distributed/negation-npl.md
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")


def negated_topics(topics: dict[str, str], n: int) -> dict[str, str]:
    qids = list(topics)
    out = {}
    for i, qid in enumerate(qids[:n]):
        word = max(topics[qids[(i + 1) % len(qids)]].split(), key=len).strip(",.;:()")
        out[f"{qid}-nl"] = f"{topics[qid]} but not {word}"
        out[f"{qid}-syn"] = f"{topics[qid]} -{word}"
    return out


def build(work: Path, npl: Path, ann: bool = True) -> tuple[Path, Path]:
    import numpy as np

    from lsr_lucene.dense.ann import build_ann
    from lsr_lucene.dense.store import read_embeddings, write_embeddings
    from lsr_lucene.distributed.index import distributed_index
    from lsr_lucene.io.vectors import read_vectors

    single, dist = work / "index", work / "dist"
    if not single.is_dir():
        shutil.copytree(npl / "index-splade-tiny", single)
        shutil.copytree(npl / "dense", single / "dense",
                        ignore=None if ann else shutil.ignore_patterns("ann.faiss", "ann.json"))
    if not (dist / "shards.json").is_file():
        manifest = distributed_index(npl / "vectors-splade-tiny", dist, workers=1)
        whole = read_embeddings(npl / "dense")
        row = {d: i for i, d in enumerate(whole.docids)}
        placed: set[str] = set()
        shards = manifest["shards"]
        for number, shard in enumerate(shards):
            ids = [doc for doc, _ in read_vectors(shard["vectors"])]
            if number == len(shards) - 1:  # the embeddings of documents no vector file holds (empty texts)
                ids += [d for d in whole.docids if d not in placed and d not in set(ids)]
            placed.update(ids)
            folder = dist / shard["path"] / "dense"
            write_embeddings(folder, ids, np.asarray(whole.vectors)[[row[d] for d in ids]], whole.metadata)
            if ann:
                build_ann(folder, read_embeddings(folder), threads=1)
    return single, dist


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/dist-neg-npl"))
    parser.add_argument("--npl", type=Path, default=Path("work/npl"))
    parser.add_argument("--topics", type=Path, default=Path("../shared/data/npl/topics.tsv"))
    parser.add_argument("--queries", type=int, default=30, help="NPL topics used (two negated queries each)")
    parser.add_argument("--hits", type=int, nargs="+", default=[10, 1000])
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--exact-dense", action="store_true",
                        help="no HNSW graphs (one index's and the shards' dense candidates by exact scans); use "
                             "another --work")
    args = parser.parse_args()

    import numpy as np
    import ray
    import torch

    torch.set_num_threads(1)
    from lsr_lucene.compose.compositions import parse_topics
    from lsr_lucene.compose.searcher import ComposeSearcher
    from lsr_lucene.distributed.compose import ComposeShardSearcher, DistributedComposer
    from lsr_lucene.distributed.search import DistributedSearcher
    from lsr_lucene.io.topics import read_topics

    args.work.mkdir(parents=True, exist_ok=True)
    topics = negated_topics(read_topics(args.topics), args.queries)
    comps = parse_topics(topics)
    ray.init(address="local", num_cpus=2, include_dashboard=False, configure_logging=False)
    single_index, dist = build(args.work, args.npl, ann=not args.exact_dense)
    times: dict[tuple[str, int], list[float]] = {}
    agree = {k: 0 for k in args.hits}
    worst = {k: 0.0 for k in args.hits}
    with ComposeSearcher(single_index) as single, \
            DistributedSearcher(dist, actor=ComposeShardSearcher, threads=1) as searcher:
        # the same sparse query encoder for both
        composer = DistributedComposer(searcher, single.query_encoder.encoder, single.scale)

        def one(where: str, comp, k: int):
            started = time.perf_counter()
            if where == "single":
                ranked = single.rank([comp], single.plans([comp]), k)[comp.qid]
            else:
                ranked = composer.rank([comp], k)[comp.qid]
            times.setdefault((where, k), []).append(time.perf_counter() - started)
            return ranked

        for comp in comps[:2]:  # warm-up (JVMs, encoders, HNSW graphs), not timed
            for k in args.hits:
                one("single", comp, k), one("distributed", comp, k)
        times.clear()
        for i, comp in enumerate(comps):
            for k in args.hits:
                order = ("single", "distributed") if i % 2 == 0 else ("distributed", "single")
                got = {where: one(where, comp, k) for where in order}
                a, b = got["single"], got["distributed"]
                same = [d for d, _ in a] == [d for d, _ in b] and np.allclose(
                    [s for _, s in a], [s for _, s in b], rtol=0, atol=1e-6)
                agree[k] += same
                if len(a) == len(b) and a:
                    worst[k] = max(worst[k], max(abs(x - y) for (_, x), (_, y) in zip(a, b)))
        batch: dict[tuple[str, int], list[float]] = {}  # every query in one call (the command's way), 3 rounds
        for round_ in range(3):
            for k in args.hits:
                for where in (("single", "distributed") if round_ % 2 == 0 else ("distributed", "single")):
                    started = time.perf_counter()
                    if where == "single":
                        single.rank(comps, single.plans(comps), k)
                    else:
                        composer.rank(comps, k)
                    batch.setdefault((where, k), []).append(time.perf_counter() - started)
    ray.shutdown()
    capability = torch.backends.cpu.get_cpu_capability()
    lines = [f"Negated queries on NPL (11,429 documents; {len(comps)} queries: {args.queries} NPL topics as "
             "'A but not B' and 'A -B'), compose's default with the dense leg (its "
             f"candidates {'by exact scans' if args.exact_dense else 'from HNSW graphs, one per index and per shard'}); "
             "one interleaved run, one query at a "
             f"time, 2 warm-up queries not timed. CPU capability: {capability}; {os.cpu_count()} cores (shared).",
             "", "| k | single-index compose p50 ms | distributed (2 shards, local Ray) p50 ms | ratio | "
             "rankings equal (docids, scores 1e-6) |", "|---:|---:|---:|---:|---:|"]
    for k in args.hits:
        s = 1e3 * statistics.median(times[("single", k)])
        d = 1e3 * statistics.median(times[("distributed", k)])
        lines.append(f"| {k} | {s:.1f} | {d:.1f} | {d / s:.2f}x | {agree[k]} of {len(comps)} "
                     f"(largest score gap {worst[k]:.1e}) |")
    lines += ["", f"All {len(comps)} queries in one call (as `distributed search --topics` ranks them), median of 3 "
              "interleaved rounds, ms per query:", "", "| k | single-index compose | distributed | ratio |",
              "|---:|---:|---:|---:|"]
    for k in args.hits:
        s = 1e3 * statistics.median(batch[("single", k)]) / len(comps)
        d = 1e3 * statistics.median(batch[("distributed", k)]) / len(comps)
        lines.append(f"| {k} | {s:.1f} | {d:.1f} | {d / s:.2f}x |")
    lines += ["", "Command (from the repository root):", "", "```",
              "PYTHONPATH=$PWD nice python scripts/distributed_negation/bench_npl.py " + " ".join(sys.argv[1:]), "```"]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        args.output.write_text("# Negated queries through distributed search on NPL\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
