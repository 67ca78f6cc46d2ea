"""The dense leg's approximate candidates against the exact flat scan (issue 68 item 1): recall and time per query.

``python -m scripts.bench.dense_ann --dense work/npl/index/dense --topics ../shared/data/npl/topics.tsv
--output runs/dense/ann.md``: the topics are encoded as the folder's queries are (its ``query_dtype``); per query, in
turn (one thread, order rotated), the exact flat scan (``FlatSearcher``), the HNSW settings of
``lsr_lucene.dense.ann`` (efSearch = max(128, factor x (k + 16)), factors 1, 2, 4) and an IVF-Flat index (4·sqrt(N)
lists, nprobe 8, 16, 32) return their top k; recall@k is the share of the exact top k each finds.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np


def main(argv: list[str] | None = None) -> int:
    import faiss

    from lsr_lucene.compose.dense_leg import DenseLeg
    from lsr_lucene.dense import ann
    from lsr_lucene.dense.search import TIE_MARGIN, FlatSearcher
    from lsr_lucene.encode.precision import capability_string
    from lsr_lucene.io.output import write_text_atomic
    from lsr_lucene.io.topics import read_topics

    parser = argparse.ArgumentParser(prog="python -m scripts.bench.dense_ann", description=__doc__.splitlines()[0])
    parser.add_argument("--dense", required=True, help="embeddings folder")
    parser.add_argument("--topics", required=True)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("-k", type=int, action="append", help="depths (default 1000 and 100)")
    args = parser.parse_args(argv)
    faiss.omp_set_num_threads(1)
    leg = DenseLeg(args.dense)
    embeddings = leg.embeddings
    queries = leg._queries(list(read_topics(args.topics).values()))
    vectors = np.ascontiguousarray(embeddings.vectors, dtype=np.float32)
    n, dim = vectors.shape
    started = time.perf_counter()
    hnsw = faiss.IndexHNSWFlat(dim, ann.NEIGHBOURS, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = ann.EF_CONSTRUCTION
    hnsw.add(vectors)
    hnsw_build = time.perf_counter() - started
    started = time.perf_counter()
    lists = int(4 * np.sqrt(n))
    ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, lists, faiss.METRIC_INNER_PRODUCT)
    ivf.train(vectors)
    ivf.add(vectors)
    ivf_build = time.perf_counter() - started
    exact = FlatSearcher(embeddings, 1)
    lines = ["| k | setting | recall@k against the exact scan (mean, min) | ms per query (p50, mean) |",
             "|---:|---|---|---|"]
    for k in args.k or [1000, 100]:
        fetch = min(n, k + TIE_MARGIN)

        def hnsw_search(q, factor, fetch=fetch, k=k):
            hnsw.hnsw.efSearch = max(ann.EF_MIN, int(factor * fetch))
            return hnsw.search(q, fetch)[1][0][:k]

        def ivf_search(q, probes, fetch=fetch, k=k):
            ivf.nprobe = probes
            return ivf.search(q, fetch)[1][0][:k]

        settings: dict[str, Any] = {"exact flat scan (FlatSearcher)": lambda q, k=k: exact.search(q, k)}
        settings.update({f"HNSW M={ann.NEIGHBOURS}, efSearch {f:g}x(k+16)"
                         f"{' (the default)' if f == ann.EF_FACTOR else ''}": (lambda q, f=f: hnsw_search(q, f))
                         for f in (1.0, 2.0, 4.0)})
        settings.update({f"IVF-Flat {lists} lists, nprobe {p}": (lambda q, p=p: ivf_search(q, p)) for p in (8, 16, 32)})
        seconds: dict[str, list[float]] = {name: [] for name in settings}
        found: dict[str, list[float]] = {name: [] for name in settings}
        names = list(settings)
        for number, query in enumerate(queries):
            q = query[None, :]
            truth = {d for d, _ in exact.search(q, k)[0]}
            for name in names[number % len(names):] + names[:number % len(names)]:
                started = time.perf_counter()
                hits = settings[name](q)
                seconds[name].append(time.perf_counter() - started)
                docs = ({d for d, _ in hits[0]} if name.startswith("exact")
                        else {embeddings.docids[r] for r in hits if r >= 0})
                found[name].append(len(docs & truth) / len(truth))
        for name in names:
            ms = np.asarray(seconds[name]) * 1e3
            lines.append(f"| {k} | {name} | {np.mean(found[name]):.4f}, {np.min(found[name]):.3f} | "
                         f"{np.median(ms):.2f}, {ms.mean():.2f} |")
    text = (f"# The dense leg's candidates: approximate against exact ({n:,} embeddings, {len(queries)} queries)\n\n"
            f"CPU capability {capability_string()}, {os.cpu_count()} cores shared with other work (1-minute load "
            f"{os.getloadavg()[0]:.1f} at the end); Faiss with one thread, one query at a time, settings in turn per "
            f"query (rotated). Build: HNSW {hnsw_build:.1f} s, IVF {ivf_build:.1f} s.\n"
            f"`python -m scripts.bench.dense_ann {' '.join(sys.argv[1:] if argv is None else argv)}`\n\n"
            + "\n".join(lines) + "\n")
    write_text_atomic(args.output, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
