"""PyTerrier experiment on the demo collection: BM25 (pyterrier_pisa, no Java), our retriever, BM25 re-ranked by
our exact scorer, and the negation composer, in one ``pt.Experiment``; ours' nDCG@10 beside trec_eval's on the
``lsr-lucene search`` run of the same index.

``python -m scripts.pyterrier.pyterrier_demo --index work/demo/index-splade-tiny --pisa work/demo/pisa
--output runs/serve/pyterrier.md`` (scripts/run_pyterrier_demo.sh).
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from lsr_lucene.demo import DEMO_DATA

DEMO = DEMO_DATA  # the shipped demo collection, in the installed package
METRICS = ("nDCG@10", "RR@10")
NAMES = ["BM25", "SPLADE", "BM25>>SPLADE", "compose"]


def experiment(index: str | Path, pisa: str | Path, topics: str | Path = DEMO / "topics.tsv",
               qrels: str | Path = DEMO / "qrels.txt", corpus: str | Path = DEMO / "corpus.jsonl"):
    """pt.Experiment of BM25, ours, BM25 % 100 >> ours' scorer and the composer: its DataFrame."""
    import ir_measures
    import pandas as pd
    import pyterrier as pt

    from lsr_lucene.eval.trec import read_qrels
    from lsr_lucene.io.topics import read_topics
    from lsr_lucene.pyterrier import ImpactIndex, pisa_bm25

    idx = ImpactIndex(index)  # lsr_lucene's objects first: one JVM per process (ours)
    ours = idx.retriever()
    bm25 = pisa_bm25(pisa, corpus)  # built when missing, without PISA's progress lines
    frame = pd.DataFrame([{"qid": q, "query": t} for q, t in read_topics(topics).items()])
    judged = pd.DataFrame([{"qid": q, "docno": d, "label": r}
                           for q, docs in read_qrels(qrels).items() for d, r in docs.items()])
    return pt.Experiment([bm25, ours, bm25 % 100 >> idx.scorer(), idx.composer()], frame, judged,
                         eval_metrics=[ir_measures.parse_measure(m) for m in METRICS], names=NAMES)


def trec_eval_ndcg(index: str | Path, topics: str | Path = DEMO / "topics.tsv",
                   qrels: str | Path = DEMO / "qrels.txt") -> float:
    """trec_eval's nDCG@10 (its C code, lsr_lucene.eval) of the ``lsr-lucene search`` run of the topics."""
    from lsr_lucene.eval.trec import evaluate
    from lsr_lucene.search.cli import main as search

    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp, "search.run")
        search(["--index", str(index), "--topics", str(topics), "--output", str(run)])
        return float(evaluate(qrels, {"search": run}, ["nDCG@10"]).loc["search", "nDCG@10"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, prog="python -m scripts.pyterrier.pyterrier_demo",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--index", default="work/demo/index-splade-tiny")
    parser.add_argument("--pisa", default="work/demo/pisa")
    parser.add_argument("--output", default=None, help="Markdown table to write (default: print only)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --output")
    args = parser.parse_args(argv)
    if args.output:
        from lsr_lucene.io.output import refuse_existing

        refuse_existing(args.output, args.overwrite)  # before the work: a tracked table is replaced only when asked
    table = experiment(args.index, args.pisa)
    reference = trec_eval_ndcg(args.index)
    from lsr_lucene.eval.trec import to_markdown

    text = (to_markdown(table.set_index("name")) +
            f"\n\ntrec_eval nDCG@10 of the `lsr-lucene search` run of {args.index}: {reference:.4f}\n")
    print(text)
    if args.output:
        from lsr_lucene.io.output import atomic_output

        with atomic_output(args.output, overwrite=args.overwrite) as tmp:
            Path(tmp).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    import sys

    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
