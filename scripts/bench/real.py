"""Real-text benchmark (issue 29): the scale benchmark's engines on the first N passages of a real corpus encoded in
a seeded random order (wiki2015, MS MARCO ...), searched with real encoded topics, checked against brute force.

    python -m scripts.bench.real --corpus ../shared/data/wiki2015/passages.jsonl.xz \\
        --topics ../shared/data/wiki2015/topics.nq-test.tsv --docs 100000,300000 --output runs/real \\
        [--query-vectors Q.jsonl] [--vectors DIR] [--encode] [--orders natural,bp] [--engines ...] [--interleave]

The corpus is written once in a seeded random order (``WORK/passages.seed<S>.jsonl``; article order would
pre-cluster the passages) and encoded with ``lsr-lucene encode`` into ``WORK/vectors`` (resumable shards), so
that the first N encoded passages are a uniform N-passage sample and the natural docid order is a random one.
Without ``--encode`` the benchmark uses the shards complete so far (also those of an encoding still running) and
says how to resume the encoding when they are too few. Passages are renumbered ``d00000000``... in that order
(``WORK/docs-N/ids.txt`` maps them back) and indexed without their text, as the synthetic collection is.
Every engine, order, k, timing and check is that of ``bench.scale`` (its ``measure``; ``--interleave`` times the
engines of an order query by query in turn in one process, with thread CPU time, for a loaded machine): exact engines
are checked against brute-force dot products on the checked queries, approximate ones report recall@k against that
exact run.
Then (``bench.real_approx``) our approximate search at several heap factors and Seismic at several build and query
settings, every setting timed query by query in turn, recall@k against our exact run. Writes DIR/results.csv,
index.csv, collection.csv, skipped.csv, results.md, latency_vs_docs.png, approx.csv, approx.md and approx_curve.png.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scripts.bench import real_approx, real_report
from scripts.bench import scale_report as report
from scripts.bench.parts import encoding
from scripts.bench.real_corpus import write_shuffled
from scripts.bench.scale import check_measure_args, measure
from scripts.bench.scale_queries import KINDS, build_query_sets, sample_queries
from scripts.bench.scale_runner import DEFAULT_ENGINES, ENGINES
from scripts.bench.synthetic import Collection, DOC_ID, save_arrays, write_shards
from lsr_lucene.errors import InputError

REAL_KINDS = tuple(k for k in KINDS if k != "window")  # window clauses need per-position weights: not encoded here


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m scripts.bench.real", description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="passages: any corpus lsr-lucene reads (JSONL/TSV, .gz or .xz)")
    parser.add_argument("--vectors", help="encoded passages in the benchmark's order (default: WORK/vectors, "
                                          "encoded from --corpus)")
    parser.add_argument("--topics", help="query texts (TSV/JSONL), encoded once under WORK")
    parser.add_argument("--query-vectors", help="encoded queries (JSONL {id, vector}), instead of --topics")
    parser.add_argument("--docs", required=True, help="comma list of passage counts, e.g. 100000,300000,666157")
    parser.add_argument("--output", default="runs/real", help="folder of the result tables and plots")
    parser.add_argument("--work", default="work/real", help="folder of the encoded corpus, collections and indexes")
    parser.add_argument("--encode", action="store_true",
                        help="encode the whole corpus first when WORK/vectors is incomplete (resumable)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="all-cores thread count")
    parser.add_argument("--seed", type=int, default=0, help="seed of the passage order and of the query sample")
    parser.add_argument("--engines", default=",".join(DEFAULT_ENGINES),
                        help=f"comma list of {', '.join(ENGINES)} (default: all but ours-postings)")
    parser.add_argument("--kinds", default="plain", help=f"query kinds for ours: {', '.join(REAL_KINDS)}")
    parser.add_argument("--orders", default="natural,bp", help="comma list of docid orders: natural (the seeded "
                                                                "random order), bp (recursive graph bisection)")
    parser.add_argument("--model", default="splade-tiny")
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--queries", type=int, default=500, help="queries timed per kind (seeded sample)")
    parser.add_argument("--check", type=int, default=100, help="queries per kind and k checked against brute force")
    parser.add_argument("--ks", default="10,1000")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--heap-factors", default=",".join(f"{h:g}" for h in real_approx.HEAP_FACTORS),
                        help="heap factors of our block-max search on the curve (1: exact)")
    parser.add_argument("--seismic-postings", default=str(real_approx.SEISMIC_POSTINGS),
                        help="Seismic's n_postings (its build parameter): one index on the curve per value of this "
                             "comma list")
    parser.add_argument("--seismic-grid", default=",".join(f"{c}:{h:g}" for c, h in real_approx.SEISMIC_GRID),
                        help="Seismic's query settings on the curve, comma list of query_cut:heap_factor")
    parser.add_argument("--no-approx-curve", dest="approx_curve", action="store_false",
                        help="skip the approximate curves (ours at each heap factor, Seismic at each query setting)")
    parser.add_argument("--reuse-indexes", action="store_true",
                        help="search the indexes an earlier run of the same collection built under --work")
    parser.add_argument("--interleave", action="store_true",
                        help="time the engines of each order in one process, each query searched by every engine in "
                             "turn (per-query rows only, no batch rows): ratios that hold on a loaded machine")
    args = check_measure_args(parser.parse_args(argv), REAL_KINDS)
    try:
        args.heap_factors = [float(h) for h in args.heap_factors.split(",") if h.strip()]
        args.seismic_postings = [int(n) for n in str(args.seismic_postings).split(",") if n.strip()]
        args.seismic_grid = [(int(c), float(h)) for c, h in (p.split(":") for p in args.seismic_grid.split(",")
                                                             if p.strip())]
    except ValueError:
        raise InputError("--heap-factors: expected a comma list of numbers; --seismic-postings: of integers; "
                         "--seismic-grid: of query_cut:heap_factor pairs") from None
    if not args.heap_factors or not all(0 < h <= 1 for h in args.heap_factors):
        raise InputError(f"--heap-factors: every value must be in (0, 1], got {args.heap_factors}")
    if not args.seismic_postings or min(args.seismic_postings) <= 0:
        raise InputError(f"--seismic-postings: every value must be positive, got {args.seismic_postings}")
    if args.corpus is None and args.vectors is None:
        raise InputError("give --corpus (encoded under --work) or --vectors (already encoded in the benchmark's order)")
    if (args.topics is None) == (args.query_vectors is None):
        raise InputError("give one of --topics (encoded under --work) or --query-vectors")
    return args


# ---- encoding (lsr-lucene encode, resumable) ------------------------------------------------------------------
def shuffled_path(args) -> Path:
    return Path(args.work) / f"passages.seed{args.seed}.jsonl"


def encode_command(args) -> list[str]:
    """The ``lsr-lucene encode`` command that encodes (or resumes encoding) the shuffled corpus."""
    return [sys.executable, "-m", "lsr_lucene.encode", "--corpus", str(shuffled_path(args)),
            "--output", str(Path(args.work) / "vectors"), "--encoder", args.model, "--max-length", str(args.max_length),
            "--batch-size", str(args.batch_size), "--dtype", "fp32", "--shard-size", "10000"]


def ensure_vectors(args, need: int) -> Path:
    """The vectors directory, holding at least ``need`` passages (encoding them first with ``--encode``)."""
    vectors = Path(args.vectors) if args.vectors else Path(args.work) / "vectors"
    encoded = encoding(vectors)
    have = encoded.documents
    if have >= need or encoded.finished:
        return vectors
    if args.vectors is None and shuffled_path(args).is_file() is False:
        count = write_shuffled(args.corpus, shuffled_path(args), args.seed)
        print(f"wrote {count:,} passages in seeded random order (seed {args.seed}) to {shuffled_path(args)}", flush=True)
    command = encode_command(args)
    if args.encode and args.vectors is None:
        print("encoding: " + shlex.join(command), flush=True)
        subprocess.run(command, check=True)
        return vectors
    raise InputError(f"{vectors}: {have:,} passages encoded so far, {need:,} needed; encode (resumable) with: "
                     f"{shlex.join(command)}  (or run this benchmark with --encode)")


def _vector_rows(files: list[Path], n: int):
    """(id, vector) of the first ``n`` passages of the shards."""
    from lsr_lucene.io.vectors import read_vectors

    got = 0
    for file in files:
        for doc_id, vector in read_vectors(file):
            if got == n:
                return
            got += 1
            yield doc_id, vector


def load_collection(vectors: Path, n: int, seed: int) -> tuple[Collection, list[str]]:
    """The first ``n`` encoded passages as CSR rows over their own vocabulary (sorted), and their passage ids.
    Streams into flat arrays (666k passages hold about 140M postings: no per-passage dicts are kept)."""
    from array import array

    encoded = encoding(vectors)
    if encoded.documents < n:
        raise InputError(f"{vectors}: {encoded.documents:,} passages encoded, {n:,} asked for")
    ids: list[str] = []
    vocab: dict[str, int] = {}
    terms, weights, lengths = array("i"), array("i"), array("q")
    for doc_id, vector in _vector_rows(encoded.files, n):
        ids.append(doc_id)
        kept = [(vocab.setdefault(t, len(vocab)), int(w)) for t, w in vector.items() if int(w)]
        terms.extend(t for t, _ in kept)
        weights.extend(w for _, w in kept)
        lengths.append(len(kept))
    names = sorted(vocab)
    rank = np.empty(len(vocab), dtype=np.int32)  # first-seen id -> id in sorted order
    rank[[vocab[t] for t in names]] = np.arange(len(names), dtype=np.int32)
    indptr = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(np.frombuffer(lengths, dtype=np.int64), out=indptr[1:])
    new_terms = rank[np.frombuffer(terms, dtype=np.int32)]
    rows = np.repeat(np.arange(len(ids), dtype=np.int64), np.diff(indptr))
    order = np.lexsort((new_terms, rows))  # rows sorted by term id within each passage
    coll = Collection(names, indptr, new_terms[order], np.frombuffer(weights, dtype=np.int32)[order],
                      np.arange(len(ids), dtype=np.int32), seed)
    return coll, ids


def prepare_collection(args, vectors: Path, n: int, work: Path) -> tuple[Collection, dict]:
    """The N-passage collection: arrays, vocabulary, renumbered shards and id map under ``work`` (cached)."""
    from scripts.bench.synthetic import load_arrays

    # shards are only ever appended to an encoding of one fixed input: its first n passages stay the same
    params = {"docs": n, "vectors": str(vectors.resolve()), "seed": args.seed, "scale": _scale(vectors)}
    paths: dict[str, Any] = {"arrays": work / "collection.npz", "vectors": work / "vectors",
                             "vocab": work / "vocab.json", "positions": None, "work": work / "work",
                             "ids": work / "ids.txt"}
    stamp = work / "real.json"
    if stamp.is_file() and json.loads(stamp.read_text()) == params and paths["vectors"].is_dir() \
            and paths["arrays"].is_file() and paths["ids"].is_file():
        coll = load_arrays(paths["arrays"])
    else:
        stamp.unlink(missing_ok=True)
        work.mkdir(parents=True, exist_ok=True)
        coll, ids = load_collection(vectors, n, args.seed)
        save_arrays(coll, paths["arrays"])
        paths["vocab"].write_text(json.dumps(coll.vocab))
        paths["ids"].write_text("".join(f"{DOC_ID.format(i)}\t{doc}\n" for i, doc in enumerate(ids)))
        scale = _scale(vectors)
        write_shards(coll, paths["vectors"], scale=scale, metadata={"source": str(vectors), "seed": args.seed})
        stamp.write_text(json.dumps(params))
    paths["work"].mkdir(parents=True, exist_ok=True)
    return coll, paths


def _scale(vectors: Path) -> float:
    return float(encoding(vectors).settings.get("scale", 100))


# ---- queries --------------------------------------------------------------------------------------------------
def query_vectors_path(args) -> Path:
    """The query vectors: --query-vectors, or --topics encoded once under --work (cached by name and model)."""
    if args.query_vectors:
        return Path(args.query_vectors)
    topics = Path(args.topics)
    path = Path(args.work) / f"queries.{Path(topics.name.removesuffix('.gz')).stem}.{Path(args.model).name}.jsonl"
    if not path.is_file():
        command = [sys.executable, "-m", "lsr_lucene.encode", "--topics", str(topics), "--output", str(path),
                   "--encoder", args.model]
        print("encoding topics: " + shlex.join(command), flush=True)
        subprocess.run(command, check=True)
    return path


def load_queries(path: Path) -> list[dict]:
    """Encoded queries as the scale benchmark's query sets take them: {"qid", "vector": {term: int}}."""
    from lsr_lucene.io.vectors import read_query_vectors

    queries = [{"qid": qid, "vector": {t: int(round(w)) for t, w in vector.items() if round(w)}}
               for qid, vector in read_query_vectors(path).items()]
    if not queries:
        raise InputError(f"{path}: no query vectors")
    return queries


# ---- main -----------------------------------------------------------------------------------------------------
def run_docs(args, vectors: Path, queries: list[dict], n: int, capability: str, skipped: list) -> tuple:
    """Everything at one size: (result rows, index rows, collection stats)."""
    work = Path(args.work) / f"docs-{n}"
    coll, paths = prepare_collection(args, vectors, n, work)
    stats = real_report.collection_stats(coll).assign(docs_run=n)
    print(report.to_text(stats), flush=True)
    known = {coll.vocab[t] for t in np.unique(coll.terms)}
    sample = sample_queries(queries, args.queries, args.seed, known)
    sets = build_query_sets(sample, tuple(args.kind_list))
    rows, index_rows = measure(args, coll, paths, work, sets, capability, skipped)
    curve: list[dict] = []
    if args.approx_curve and "ours" in args.engine_list:
        curve, sidecars = real_approx.measure_curve(args, paths, work, sets["plain"], n, capability)
        index_rows += sidecars
    return rows, index_rows, stats, curve


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    Path(args.work).mkdir(parents=True, exist_ok=True)
    capability = report.cpu_capability()
    print(f"real-text benchmark: docs {args.docs_list}, engines {', '.join(args.engine_list)}; {report.machine()}",
          flush=True)
    queries = load_queries(query_vectors_path(args))
    vectors = ensure_vectors(args, max(args.docs_list))
    command = "python -m scripts.bench.real " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    for n in args.docs_list:  # tables are updated after each size: a later failure keeps the earlier sizes
        print(f"== {n:,} passages", flush=True)
        skipped: list[dict] = []
        r, i, s, curve = run_docs(args, vectors, queries, n, capability, skipped)
        real_report.write_outputs(out, pd.DataFrame(r), pd.DataFrame(i), s, skipped, command, args)
        real_approx.write_curve(out, curve, command)
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
