"""The int8 (or bf16) dense leg against the fp32 one, and the int8 leg's approximate index against its exact scan
(issue 68).

Per benchmark of the ExcluIR layout (ExcluIR, BoolQuestions NOT): the document cosines between the two encodings,
the dense top-k overlap of the queries, and the negation default's figures (R@1, MRR@10, RR) with each leg, with
the queries whose ranking changes.

``python -m scripts.bench.dense_agreement --work work/agreement --output runs/dense/agreement.md
[--benchmark ../shared/data/excluir ...] [--precision fp32 --precision bf16]``: encodings are cached under ``--work``
(sparse vectors once, a dense leg per precision); the first ``--precision`` is the reference (default fp32, int8).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

BENCHMARKS = ("../shared/data/excluir", "../shared/data/boolquestions_not")
PRECISIONS = ("fp32", "int8")  # the reference first
COLUMNS = ("R@1", "MRR@10", "RR")


def sparse_vectors(corpus: Path, work: Path, threads: int) -> Path:
    """splade-tiny vectors of ``corpus`` (as the negation studies encode them: 512 tokens), encoded once."""
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.io.corpus import count_docs, read_corpus
    from lsr_lucene.io.vectors import metadata_file, write_vectors

    vectors = work / "vectors"
    if metadata_file(vectors) is None:  # the record beside the folder (or inside it, as written before)
        write_vectors(read_corpus(str(corpus)), SparseEncoder(max_length=512, threads=threads), vectors,
                      total=count_docs(str(corpus)), source=str(corpus))
    return vectors


def dense_leg(corpus: Path, work: Path, dtype: str, threads: int) -> Path:
    """The dense leg of ``corpus`` in ``dtype`` (``lsr-lucene dense encode``), encoded once."""
    from lsr_lucene.dense.cli import main as dense_main

    folder = work / f"dense-{dtype}"
    if not (folder / "metadata.json").is_file():
        dense_main(["encode", "--corpus", str(corpus), "--output", str(folder), "--threads", str(threads),
                    "--dtype", dtype])
    return folder


def overlap(a: list[list[str]], b: list[list[str]]) -> float:
    """Mean share of a's top k found in b's top k."""
    return float(np.mean([len(set(x) & set(y)) / max(len(x), 1) for x, y in zip(a, b)]))


def changed(run: dict, reference: dict, qids: list[str], k: int) -> str:
    """How many queries' top ``k`` documents (in order) differ from the reference run's, as 'n / queries'."""
    return f"{sum([d for d, _ in run[q][:k]] != [d for d, _ in reference[q][:k]] for q in qids)} / {len(qids)}"


def compare(benchmark: Path, work: Path, threads: int, encoder, precisions: tuple[str, ...] = PRECISIONS) -> list[dict]:
    """One row per precision: its figures, and against the fp32 leg its cosines, overlaps and changed queries."""
    from lsr_lucene.compose.backends import ExactBackend
    from lsr_lucene.compose.compositions import parse_topics
    from lsr_lucene.compose.dense_leg import DenseLeg
    from lsr_lucene.compose.execute import compose, execute
    from lsr_lucene.compose.operations import Settings
    from lsr_lucene.dense.ann import ann_path
    from lsr_lucene.dense.leg import add_ann
    from lsr_lucene.dense.search import FlatSearcher
    from lsr_lucene.eval.contrastive_metrics import excluir_metrics, read_excluir
    from lsr_lucene.io.vectors import read_metadata

    rows = read_excluir(benchmark / "dev.jsonl")
    slug = work / benchmark.resolve().name
    vectors = sparse_vectors(benchmark / "corpus.jsonl", slug, threads)
    scale = read_metadata(vectors).get("scale") or 100
    backend = ExactBackend(vectors)
    comps = parse_topics({str(r["id"]): str(r["query"]) for r in rows})
    qids = [c.qid for c in comps]
    texts = [str(r["query"]) for r in rows]
    out, reference = [], None
    for dtype in precisions:
        leg = DenseLeg(dense_leg(benchmark / "corpus.jsonl", slug, dtype, threads), backend.n)
        leg._flat = FlatSearcher(leg.embeddings, 1)  # exact dense candidates (the approximate index: below)
        run = execute(qids, compose(comps, Settings(dense=True), encoder), backend, scale, 1000, dense=leg)
        top10, top100 = leg.search(texts, 10), leg.search(texts, 100)
        figures = excluir_metrics({q: dict(r) for q, r in run.items()}, rows)
        row: dict = {"benchmark": benchmark.name, "leg": dtype, "queries": len(rows),
               **{k: round(figures[k], 4) for k in COLUMNS}}
        if reference is None:
            reference = (leg, run, top10, top100)
        else:
            ref_leg, ref_run, ref10, ref100 = reference
            cosines = np.einsum("ij,ij->i", np.asarray(leg.embeddings.vectors, dtype=np.float64),
                                np.asarray(ref_leg.embeddings.vectors, dtype=np.float64))
            queries = np.einsum("ij,ij->i", leg._queries(texts).astype(np.float64),
                                ref_leg._queries(texts).astype(np.float64))
            row.update({"doc cosine min / mean": f"{cosines.min():.4f} / {cosines.mean():.5f}",
                        "query cosine min / mean": f"{queries.min():.4f} / {queries.mean():.5f}",
                        "dense top-10 / top-100 overlap": f"{overlap(top10, ref10):.3f} / {overlap(top100, ref100):.3f}",
                        "default's top 1 changed": changed(run, ref_run, qids, 1),
                        "default's top 10 changed": changed(run, ref_run, qids, 10)})
            for k in COLUMNS:
                row[f"Δ{k}"] = round(row[k] - out[0][k], 4)
        out.append(row)
        if dtype == "int8":  # the default leg with its approximate index against its exact scan
            if not ann_path(leg.path).is_file():
                add_ann(leg.path, threads)
            approximate = DenseLeg(leg.path, backend.n)
            ann_run = execute(qids, compose(comps, Settings(dense=True), encoder), backend, scale, 1000,
                              dense=approximate)
            ann_figures = excluir_metrics({q: dict(r) for q, r in ann_run.items()}, rows)
            out.append({"benchmark": benchmark.name, "leg": f"{dtype} + approximate index", "queries": len(rows),
                        **{k: round(ann_figures[k], 4) for k in COLUMNS},
                        "dense top-10 / top-100 overlap": "against the exact scan: " + " / ".join(
                            f"{overlap(approximate.search(texts, k), exact):.3f}" for k, exact in
                            ((10, top10), (100, top100))),
                        "default's top 1 changed": changed(ann_run, run, qids, 1),
                        "default's top 10 changed": changed(ann_run, run, qids, 10)})
    return out


def main(argv: list[str] | None = None) -> int:
    import pandas as pd

    from lsr_lucene.eval.trec import to_markdown
    from lsr_lucene.compose.query_encoder import QueryEncoder
    from lsr_lucene.encode.precision import capability_string
    from lsr_lucene.io.output import write_text_atomic

    parser = argparse.ArgumentParser(prog="python -m scripts.bench.dense_agreement", description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", action="append", help="ExcluIR-layout folder (corpus.jsonl, dev.jsonl)")
    parser.add_argument("--work", type=Path, default=Path("work/agreement"))
    parser.add_argument("--output", type=Path, default=Path("runs/dense/agreement.md"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--precision", action="append", help="dense legs to compare, the reference first "
                        "(default: fp32, int8)")
    args = parser.parse_args(argv)
    precisions = tuple(args.precision or PRECISIONS)
    encoder = QueryEncoder("splade-tiny", "full", threads=args.threads)
    rows = [r for b in (args.benchmark or BENCHMARKS) for r in compare(Path(b), args.work, args.threads, encoder,
                                                                               precisions)]
    table = to_markdown(pd.DataFrame(rows).fillna("").set_index("benchmark"))
    flags = "".join(f" --precision {p}" for p in args.precision or [])
    text = (f"# The {' and '.join(precisions[1:])} dense leg against {precisions[0]} (dev sets, the negation "
            f"default)\n\nCPU capability {capability_string()}; `python -m scripts.bench.dense_agreement{flags}`.\n\n"
            f"{table}\n")
    write_text_atomic(args.output, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
