"""Split judged topics in two by a fixed seed: ``python -m scripts.fusion.split_topics``.

Writes ``topics.fit.tsv``, ``qrels.fit.txt``, ``topics.eval.tsv`` and ``qrels.eval.txt`` into ``--output-dir``
(fit fusion on one part with ``lsr-lucene fuse --fit``, report on the other).
"""
from __future__ import annotations

import argparse
import sys

from lsr_lucene.fuse.topics import DEFAULT_SEED, split_topics


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m scripts.fusion.split_topics", description=__doc__.splitlines()[0])
    parser.add_argument("--topics", required=True, help="topics: TSV, TREC topic file, JSONL or ir_datasets id")
    parser.add_argument("--qrels", required=True, help="TREC qrels; topics without judgements are left out")
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"shuffle seed (default {DEFAULT_SEED})")
    parser.add_argument("--fit-fraction", type=float, default=0.5, help="share of topics to fit on (default 0.5)")
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    n_fit, n_eval = split_topics(args.topics, args.qrels, args.output_dir, args.seed, args.fit_fraction,
                                 args.overwrite)
    print(f"{n_fit} fit topics, {n_eval} eval topics in {args.output_dir} (seed {args.seed})")
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
