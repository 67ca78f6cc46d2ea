"""Pipeline benchmark: encoding throughput, index time/size and per-query search latency, measured in ONE run.

On the same vectors it times: our fast encoder (fp32, bf16 and the auto choice, beside the CPU capability)
against a naive padded full-logits loop;
building the Anserini impact index; and k=1000 search one query at a time with our Lucene searcher,
Pyserini's LuceneImpactSearcher, a brute-force scipy sparse product and Seismic (approximate; its
nDCG@10 is reported too). Every part whose dependency is missing is skipped with a note.
Timings depend on the machine's load: the load average is printed beside them.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from lsr_lucene import cli_options as opt
from lsr_lucene.errors import InputError
from lsr_lucene.io.runs import write_run
from lsr_lucene.io.vectors import read_metadata

DEFAULT_HITS = opt.DEFAULT_HITS
SKIPPABLE = ("encode", "bf16", "ours", "pyserini", "scipy", "seismic")  # the parts --skip names


# ---- helpers -------------------------------------------------------------------------------------------
def collection_files(collection: Path) -> dict[str, Path]:
    """corpus.jsonl, topics and qrels of an ad hoc collection folder (SciFact's train split names included)."""
    corpus = collection / "corpus.jsonl"
    topics = next((collection / n for n in ("topics.tsv", "topics.train.tsv", "queries.jsonl")
                   if (collection / n).is_file()), None)
    qrels = next((collection / n for n in ("qrels.txt", "qrels.train.txt") if (collection / n).is_file()), None)
    if not corpus.is_file() or topics is None or qrels is None:
        raise InputError(f"{collection}: expected corpus.jsonl, topics(.train).tsv and qrels(.train).txt")
    return {"corpus": corpus, "topics": topics, "qrels": qrels}


def load_note() -> str:
    """One-minute load average over the core count: timings on a busy machine are not comparable."""
    try:
        return f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    except OSError:
        return "load unknown"


def latency_stats(seconds: list[float]) -> dict[str, float]:
    """Mean, median and 95th percentile in milliseconds."""
    ms = sorted(s * 1000 for s in seconds)
    return {"mean_ms": statistics.fmean(ms), "median_ms": statistics.median(ms),
            "p95_ms": ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]}


def time_queries(search: Callable[[str], list[tuple[str, float]]], qids: list[str], warmup: int = 5
                 ) -> tuple[dict[str, list[tuple[str, float]]], dict[str, float]]:
    """Run ``search(qid)`` for each query one at a time (after a warm-up); (results, latency stats)."""
    for qid in qids[:warmup]:
        search(qid)
    results, seconds = {}, []
    for qid in qids:
        started = time.perf_counter()
        results[qid] = search(qid)
        seconds.append(time.perf_counter() - started)
    return results, latency_stats(seconds)


def ndcg10(qrels: Path, runs: dict[str, Path]) -> dict[str, float]:
    """nDCG@10 of each run with trec_eval -c (our eval module); {} when it cannot run."""
    try:
        from lsr_lucene.eval.trec import evaluate

        table = evaluate(qrels, runs, measures=["ndcg_cut.10"])
        return {name: float(table.loc[name].iloc[0]) for name in runs}
    except Exception as exc:  # evaluation is a convenience here: report and go on
        print(f"  note: nDCG@10 not computed ({exc})", file=sys.stderr)
        return {}


def encode_throughput(texts: list[str], model: str, max_length: int, threads: int, batch_size: int,
                      naive_sample: int) -> dict[str, dict]:
    """docs/s (wall and per CPU-second) of the fast encoder in fp32, bf16 and auto, and of the naive padded loop."""
    from lsr_lucene.encode.encoder import SparseEncoder

    out: dict[str, dict] = {}
    for label, dtype, naive in (("fast fp32", "fp32", False), ("fast bf16", "bf16", False),
                                ("fast auto", "auto", False), ("naive padded fp32", "fp32", True)):
        encoder = SparseEncoder(model, max_length=max_length, threads=threads, dtype=dtype)
        if dtype == "auto":
            label = f"fast auto ({encoder.dtype})"
        sample = texts[:naive_sample] if naive else texts
        warm = sample[:batch_size]
        (encoder.encode_naive if naive else encoder.encode_documents)(warm, batch_size=batch_size)
        previous = None
        if naive:  # the reference loop uses torch's own intra-op threads
            import torch

            previous = torch.get_num_threads()
            torch.set_num_threads(threads)
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            if naive:
                encoder.encode_naive(sample, batch_size=batch_size)
            else:
                encoder.encode_documents(sample, batch_size=batch_size)
        finally:
            if previous is not None:
                import torch

                torch.set_num_threads(previous)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        out[label] = {"docs": len(sample), "docs_per_s": len(sample) / wall,
                      "docs_per_cpu_s": len(sample) / cpu if cpu > 0 else float("nan"), "load": load_note(),
                      "dtype": encoder.dtype, "cpu_capability": encoder.precision.capability}
        print(f"  {label:21s} {len(sample) / wall:7.1f} docs/s  ({len(sample)} docs, "
              f"{len(sample) / cpu:.1f} docs per CPU-second; CPU capability {encoder.precision.capability}; "
              f"{load_note()})", flush=True)
    return out


# ---- main ----------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    """CLI: every part of the benchmark on one collection, in one run (``python -m scripts.bench scale ...``: the
    scale benchmark, scripts.bench.scale)."""
    if argv and argv[0] == "scale":
        from scripts.bench.scale import main as scale_main

        return scale_main(argv[1:])
    if argv and argv[0] == "real":  # the same engines on a real corpus and topics (scripts.bench.real)
        from scripts.bench.real import main as real_main

        return real_main(argv[1:])
    from lsr_lucene.encode.cli import add_dtype_arguments

    parser = opt.Parser(prog="python -m scripts.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--collection", required=True, help="folder with corpus.jsonl, topics(.train).tsv, qrels")
    parser.add_argument("--work", default=None, help="where vectors and indexes go (default: a temporary folder)")
    opt.add_encoder(parser, "splade-tiny", "sparse encoder: registry name, HF id or local model folder", dest="model")
    opt.add_max_length(parser)
    opt.add_threads(parser, help="threads of every part")
    opt.add_batch_size(parser, 16)
    add_dtype_arguments(parser)  # precision of the vectors that are indexed and searched
    opt.add_number(parser, "--throughput-sample", default=1000, help="documents timed per encoder variant")
    opt.add_number(parser, "--naive-sample", default=200, help="documents timed for the naive loop")
    opt.add_hits(parser)
    opt.add_number(parser, "--max-queries", default=None, help="time at most this many queries")
    parser.add_argument("--skip", default="",
                        help="comma list of parts to skip: encode,bf16 (the other-precision vectors),ours,"
                             "pyserini,scipy,seismic")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if skip - set(SKIPPABLE):  # a misspelt part was silently run (and timed)
        raise InputError(f"--skip: unknown part(s) {', '.join(sorted(skip - set(SKIPPABLE)))} "
                         f"(parts: {','.join(SKIPPABLE)})")
    files = collection_files(Path(args.collection))
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="lsr-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        run_bench(args, files, work, skip)
    finally:
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def run_bench(args: argparse.Namespace, files: dict[str, Path], work: Path, skip: set[str]) -> None:
    """All parts of the benchmark, printing as it goes and a summary table at the end."""
    from lsr_lucene.io.corpus import read_corpus
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.io.topics import read_topics
    from lsr_lucene.io.vectors import quantise_query, read_vectors, write_vectors

    docs = list(read_corpus(files["corpus"]))
    topics = read_topics(files["topics"])
    qids = list(topics)[: args.max_queries] if args.max_queries else list(topics)
    print(f"collection {args.collection}: {len(docs)} documents, {len(qids)} queries; model {args.model}, "
          f"max length {args.max_length}, {args.threads} threads; {load_note()}", flush=True)
    summary: dict[str, Any] = {}

    texts = [d.contents for d in docs if d.contents.strip()]
    if "encode" not in skip:
        print("== encoding throughput", flush=True)
        summary["encoding"] = encode_throughput(texts[: args.throughput_sample], args.model, args.max_length,
                                                args.threads, args.batch_size, args.naive_sample)

    encoder = SparseEncoder(args.model, max_length=args.max_length, threads=args.threads, dtype=args.dtype)
    print(f"== vectors ({encoder.dtype}, all documents)", flush=True)
    vectors_dir = work / "vectors"
    started = time.perf_counter()
    if not vectors_dir.exists():
        write_vectors(docs, encoder, vectors_dir, batch_size=args.batch_size, source=str(files["corpus"]))
    print(f"  {time.perf_counter() - started:.1f}s", flush=True)
    scale = read_metadata(vectors_dir)["scale"]
    query_vectors = {q: quantise_query(v, scale) for q, v in
                     zip(qids, encoder.encode_queries([topics[q] for q in qids]))}
    doc_vectors = list(read_vectors(vectors_dir))
    runs: dict[str, Path] = {}
    latency: dict[str, dict] = {}

    if "bf16" not in skip:  # the other precision, for its nDCG@10 difference
        other = "fp32" if encoder.dtype == "bf16" else "bf16"
        print(f"== {other} vectors (nDCG@10 difference, exact brute force)", flush=True)
        second = SparseEncoder(args.model, max_length=args.max_length, threads=args.threads, dtype=other)
        write_vectors(docs, second, work / f"vectors-{other}", batch_size=args.batch_size, overwrite=True)
        other_docs = list(read_vectors(work / f"vectors-{other}"))
        other_queries = {q: quantise_query(v, scale) for q, v in
                         zip(qids, second.encode_queries([topics[q] for q in qids]))}
        results = brute_force(other_docs, other_queries, args.hits)
        write_run(results, work / f"{other}-brute.run", other, overwrite=True)
        runs[f"{other} brute force"] = work / f"{other}-brute.run"

    index_dir = work / "index"
    index_info: dict = {}
    try:
        from lsr_lucene.index.impact import build_impact_index

        print("== impact index (Anserini IndexCollection)", flush=True)
        started = time.perf_counter()
        index_info = build_impact_index(vectors_dir, index_dir, threads=args.threads, overwrite=True,
                                        dense_impacts="auto")  # as lsr-lucene index builds it
        index_info["seconds"] = time.perf_counter() - started
        print(f"  {index_info['seconds']:.1f}s, {index_info['size_bytes'] / 1e6:.1f} MB, "
              f"{index_info['indexed']} documents", flush=True)
    except Exception as exc:  # Java missing etc.: the Lucene parts below are skipped
        print(f"  skipped: index not built ({exc})", flush=True)
        skip |= {"ours", "pyserini"}

    print(f"== search latency, k={args.hits}, one query at a time ({load_note()})", flush=True)

    def record(label: str, tag: str, results: dict, stats: dict) -> None:
        """Keep a searcher's latency and write its run (work/<tag>.run) for the nDCG@10 check."""
        latency[label] = stats
        runs[label] = work / f"{tag}.run"
        write_run(results, runs[label], tag, overwrite=True)

    if "ours" not in skip:
        try:
            from lsr_lucene.search.spec_searcher import SpecSearcher

            with SpecSearcher(str(index_dir)) as searcher:
                results, stats = time_queries(
                    lambda q: searcher.search({"qid": q, "terms": query_vectors[q]}, k=args.hits)
                    if query_vectors[q] else [], qids)
            record("lsr_lucene (Lucene)", "ours", results, stats)
        except ImportError as exc:
            print(f"  skipped our searcher: {exc}", flush=True)
    if "pyserini" not in skip:
        try:
            results, stats = pyserini_search(index_dir, query_vectors, qids, args.hits)
            record("Pyserini LuceneImpactSearcher", "pyserini", results, stats)
        except ImportError as exc:
            print(f"  skipped Pyserini: {exc}", flush=True)
    if "scipy" not in skip:
        try:
            search = brute_force_searcher(doc_vectors, args.hits)
            results, stats = time_queries(lambda q: search(query_vectors[q]), qids)
            record("brute force (scipy sparse)", "brute", results, stats)
        except ImportError as exc:
            print(f"  skipped brute force: {exc}", flush=True)
    if "seismic" not in skip:
        try:
            results, stats, build_s = seismic_search(doc_vectors, query_vectors, qids, args.hits, args.threads)
            print(f"  Seismic index built in {build_s:.1f}s", flush=True)
            record("Seismic (approximate)", "seismic", results, stats)
        except ImportError as exc:
            print(f"  skipped Seismic: {exc} (pip install pyseismic-lsr)", flush=True)

    qrels = files["qrels"]
    if args.max_queries:  # trec_eval -c would count the untimed queries as zeros
        from lsr_lucene.eval.trec import read_qrels

        judged = read_qrels(qrels)
        qrels = work / "qrels-timed.txt"
        with qrels.open("w") as out:
            for qid in qids:
                for doc, gain in judged.get(qid, {}).items():
                    out.write(f"{qid} 0 {doc} {gain}\n")
    quality = ndcg10(qrels, runs) if runs else {}
    print_summary(summary.get("encoding"), index_info, latency, quality, encoder.dtype)


def brute_force(doc_vectors: list[tuple[str, dict]], query_vectors: dict[str, dict], k: int
                ) -> dict[str, list[tuple[str, float]]]:
    """Exact top-k of every query by sparse matrix product."""
    search = brute_force_searcher(doc_vectors, k)
    return {qid: search(vector) for qid, vector in query_vectors.items()}


def brute_force_searcher(doc_vectors: list[tuple[str, dict]], k: int) -> Callable[[dict], list[tuple[str, float]]]:
    """A function query vector -> exact top-k (docid, score): the project's one signed brute-force reference
    (lsr_lucene.compose.backends.ExactBackend: ``neg_<t>`` columns subtract, ties by docid)."""
    from lsr_lucene.compose.backends import ExactBackend

    backend = ExactBackend(doc_vectors)
    return lambda query: backend.search({"terms": query}, k)


def pyserini_search(index_dir: Path, query_vectors: dict[str, dict], qids: list[str], k: int):
    """Pyserini's LuceneImpactSearcher with our pre-encoded (positive, integer) query vectors."""
    from lsr_lucene.jvm import runtime as jvm

    jvm.start()
    from pyserini.search.lucene import LuceneImpactSearcher

    class PreEncoded:
        """Query 'encoder' that looks up the query vector of a qid."""

        def encode(self, qid: str) -> dict[str, int]:
            return {t: int(w) for t, w in query_vectors[qid].items() if w > 0}

    searcher = LuceneImpactSearcher(str(index_dir), PreEncoded())
    try:
        return time_queries(lambda q: [(h.docid, float(h.score)) for h in searcher.search(q, k=k)], qids)
    finally:
        searcher.close()


def seismic_search(doc_vectors: list[tuple[str, dict]], query_vectors: dict[str, dict], qids: list[str], k: int,
                   threads: int, query_cut: int = 20, heap_factor: float = 0.8):
    """Seismic (approximate learned-sparse retrieval, Rust); returns (results, latency stats, build seconds)."""
    import numpy as np
    from seismic import SeismicDataset, SeismicIndex, get_seismic_string

    string_type = get_seismic_string() if callable(get_seismic_string) else "U30"
    started = time.perf_counter()
    dataset = SeismicDataset()
    known: set[str] = set()
    for doc_id, vector in doc_vectors:
        if not vector:
            continue
        known.update(vector)
        dataset.add_document(doc_id, np.array(list(vector), dtype=string_type),
                             np.array(list(vector.values()), dtype=np.float32))
    index = SeismicIndex.build_from_dataset(dataset, num_threads=threads)
    build = time.perf_counter() - started

    def search(qid: str) -> list[tuple[str, float]]:
        terms = {t: w for t, w in query_vectors[qid].items() if t in known}
        if not terms:
            return []
        hits = index.search(query_id=qid, query_components=np.array(list(terms), dtype=string_type),
                            query_values=np.array(list(terms.values()), dtype=np.float32), k=k,
                            query_cut=query_cut, heap_factor=heap_factor)
        return [(str(doc), float(score)) for _, score, doc in hits]

    results, stats = time_queries(search, qids)
    return results, stats, build


def print_summary(encoding: dict | None, index_info: dict, latency: dict[str, dict], quality: dict[str, float],
                  dtype: str = "fp32") -> None:
    """The results table, with ratios against our fp32 encoder and our Lucene searcher (vectors in ``dtype``)."""
    print("\n===== summary =====")
    if encoding:
        base = encoding["fast fp32"]["docs_per_s"]
        base_cpu = encoding["fast fp32"]["docs_per_cpu_s"]
        print("encoding                docs/s   ×fp32   docs/CPU-s   ×fp32   CPU capability")
        for label, row in encoding.items():
            print(f"  {label:21s} {row['docs_per_s']:7.1f}  {row['docs_per_s'] / base:6.2f}   "
                  f"{row['docs_per_cpu_s']:9.1f}  {row['docs_per_cpu_s'] / base_cpu:6.2f}   {row['cpu_capability']}")
    if index_info:
        print(f"index: {index_info.get('seconds', float('nan')):.1f}s, {index_info['size_bytes'] / 1e6:.1f} MB, "
              f"{index_info['indexed']} documents, {index_info.get('postings', 0)} postings")
    if latency:
        reference = latency.get("lsr_lucene (Lucene)", next(iter(latency.values())))["mean_ms"]
        print("search (k=1000)                    mean ms  median ms  p95 ms  ×ours(mean)  nDCG@10")
        for label, stats in latency.items():
            print(f"  {label:31s} {stats['mean_ms']:8.2f} {stats['median_ms']:9.2f} {stats['p95_ms']:7.2f} "
                  f"{stats['mean_ms'] / reference:11.2f}  {quality.get(label, float('nan')):.4f}")
    for label, value in quality.items():
        if label not in latency:
            exact = quality.get("brute force (scipy sparse)")
            delta = f" ({dtype} exact {exact:.4f}, difference {value - exact:+.4f})" if exact is not None else ""
            print(f"  {label}: nDCG@10 {value:.4f}{delta}")

