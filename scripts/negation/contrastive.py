"""Contrastive negation sets for composed queries: NevIR pairwise accuracy and ExcluIR exclusion metrics.

``python -m scripts.negation.contrastive excluir --corpus C --queries dev.jsonl --work W --output-dir D`` and
``python -m scripts.negation.contrastive nevir --data dev.jsonl --work W --output-dir D`` evaluate every
set-difference operation (and the encoder ablations) on queries split by the cue parser
(:mod:`lsr_lucene.compose.negation_parser`); a query without a cue is searched as it is by every operation.

- ExcluIR: the corpus is encoded and indexed under ``--work`` (once); every query ranks the whole corpus
  by exact dot products of the quantised vectors (in memory; ``--lucene`` confirms the same figures
  through the Lucene index). Metrics (``lsr_lucene.eval.contrastive_metrics.excluir_metrics``): R@1, MRR@10, ΔR@1,
  ΔMRR@10 (positive minus negative document) and RR (share of queries ranking the positive above the
  negative). λ is chosen on dev alone: the table of the λ sweep is on dev, and the selection procedure
  (operation and λ maximising R@1 + ΔR@1 + RR) is also scored by k-fold cross-validation within dev,
  so the figure of the selected setting is measured on queries it was not chosen on.
- transfer: ``--data DIR`` repeated (ExcluIR layout: corpus.jsonl + dev.jsonl; e.g. ExcluIR and BoolQuestions
  NOT) runs every set-difference setting on every benchmark from cached vectors and writes one table per
  benchmark, one with a column group per benchmark and the worst case, and the selection table
  (:mod:`scripts.negation.transfer`).
- NevIR: each query scores its row's two documents (exact dot products, the NevIR protocol); pairwise
  accuracy and the error categories of ``lsr_lucene.eval.contrastive_metrics.nevir_pairwise_accuracy`` (prefers doc1 for
  both, prefers doc2 for both, reversed, tie), as a table and a PNG bar chart. ``--lucene`` indexes the
  dev documents as a small collection and checks that Lucene's scores give the same categories.
  ``fusion-scaled`` normalises over the two documents, so its scaled scores are 0 or 1 (many ties).
"""
from __future__ import annotations

import argparse
import sys
from typing import Callable

from scripts.negation.contrastive_runs import run_collection, run_excluir, run_nevir, run_transfer

RUNS: dict[str, Callable[..., int]] = {"excluir": run_excluir, "nevir": run_nevir, "transfer": run_transfer,
                                       "collection": run_collection}


def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``python -m scripts.negation.contrastive``."""
    parser = argparse.ArgumentParser(allow_abbrev=False, prog="python -m scripts.negation.contrastive",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("excluir", help="ExcluIR: R@1, MRR@10, ΔR@1, ΔMRR@10, RR per operation")
    ex.add_argument("--corpus", required=True, help="ExcluIR corpus.jsonl")
    ex.add_argument("--queries", required=True, help="ExcluIR rows {id, query, pos_id, neg_id} (JSONL)")
    ex.add_argument("--work", required=True, help="directory for the corpus vectors and index (made once)")
    ex.add_argument("--folds", type=int, default=5, help="cross-validation folds of the λ/operation selection")
    ex.add_argument("--lucene", action="store_true", help="also run the full-encoder operations through Lucene")
    nv = sub.add_parser("nevir", help="NevIR: pairwise accuracy and error categories per operation")
    nv.add_argument("--data", required=True, help="NevIR rows {id, q1, doc1, q2, doc2} (JSONL)")
    nv.add_argument("--work", required=True, help="directory for the small Lucene collection of --lucene")
    nv.add_argument("--lucene", action="store_true", help="check the exact scores through a Lucene index")
    tr = sub.add_parser("transfer", help="several ExcluIR-layout benchmarks: every setting, worst case, selection")
    tr.add_argument("--data", action="append", required=True,
                    help="benchmark folder with corpus.jsonl and <split>.jsonl (repeatable: one per benchmark)")
    tr.add_argument("--split", default="dev", help="query file of every benchmark: <split>.jsonl (default dev)")
    tr.add_argument("--work", required=True, help="directory for the corpora's vectors (<work>/<folder>/vectors)")
    tr.add_argument("--folds", type=int, default=5, help="cross-validation folds within each benchmark")
    co = sub.add_parser("collection", help="every operation on compositions + qrels through Lucene (nDCG@10, R@100)")
    co.add_argument("--index", required=True, help="impact index of the collection")
    co.add_argument("--queries", required=True, help="compositions JSONL")
    co.add_argument("--topics", help="natural-language topics with the same ids (what vanilla encodes)")
    co.add_argument("--qrels", required=True)
    co.add_argument("--work", required=True, help="directory for the run files")
    co.add_argument("--hits", type=int, default=1000)
    co.add_argument("--ablations", action="store_true", help="also the no-expansion / no-term-weights encoders")
    for p in (ex, nv, tr, co):
        p.add_argument("--output-dir", required=True, help="tables (.md/.csv) and charts go here")
        p.add_argument("--model", default="splade-tiny")
        p.add_argument("--threads", type=int, default=2)
        p.add_argument("--overwrite", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    params = vars(build_parser().parse_args(argv))
    return RUNS[params.pop("command")](**params)


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
