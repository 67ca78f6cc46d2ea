"""A real corpus in a seeded random order, written once, so that its first N passages are the N-passage sample.

Passages of a collection like wiki2015 come in article order, which pre-clusters them by topic; a seeded random
order is the "natural" (arbitrary) order the real-text benchmark starts from, as MS MARCO's is. Encoding this file
shard by shard (``lsr-lucene encode``, resumable) makes every prefix of the vectors a uniform random sample.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from lsr_lucene.io.corpus import read_corpus
from lsr_lucene.io.output import atomic_output


def seeded_order(count: int, seed: int) -> np.ndarray:
    """A permutation of range(count) fixed by ``seed`` (numpy's PCG64, stable across runs and machines)."""
    return np.random.default_rng(seed).permutation(count)


def write_shuffled(corpus: str | Path, output: str | Path, seed: int = 0, limit: int | None = None,
                   overwrite: bool = False) -> int:
    """Write ``corpus`` (any format read_corpus reads, .xz too) as JSONL {id, title, text} in a seeded random order,
    only its first ``limit`` passages of that order when given; returns the number written."""
    docs = list(read_corpus(corpus))
    order = seeded_order(len(docs), seed)
    if limit is not None:
        order = order[:limit]
    with atomic_output(Path(output), overwrite=overwrite) as tmp:
        with open(tmp, "w", encoding="utf-8") as out:
            for index in order:
                doc = docs[int(index)]
                out.write(json.dumps({"id": doc.id, "title": doc.title, "text": doc.text}, ensure_ascii=False) + "\n")
    return len(order)


def main(argv: list[str] | None = None) -> int:
    """``python -m scripts.bench.real_corpus CORPUS OUTPUT [--seed S] [--limit N]``."""
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("output")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    count = write_shuffled(args.corpus, args.output, args.seed, args.limit, args.overwrite)
    print(f"wrote {count} passages to {args.output} (seed {args.seed})")
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    run_main(main)
