"""Named input runs and, per query, the pool of documents they retrieved (ranks and scores side by side)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Collection, Mapping, Sequence

import numpy as np

from lsr_lucene.errors import InputError
from lsr_lucene.io.ranking import ranking
from lsr_lucene.io.runs import read_run

MIN_RUNS = 2


def parse_named(specs: Sequence[str], what: str) -> dict[str, str]:
    """``["a=x", "b=y"]`` -> ``{"a": "x", "b": "y"}`` for ``--run``/``--weight``; one error line for a bad item."""
    named: dict[str, str] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise InputError(f"{what} {spec!r}: expected NAME=VALUE")
        if name.strip() in named:
            raise InputError(f"{what}: name {name.strip()!r} given twice")
        named[name.strip()] = value.strip()
    return named


def read_runs(paths: Mapping[str, str | Path], topics: Collection[str] | None = None
              ) -> dict[str, dict[str, dict[str, float]]]:
    """``{name: {qid: {docid: score}}}`` of two or more run files (each validated, bad lines named file:line),
    restricted to ``topics`` when given (other queries are dropped as soon as each file is read)."""
    if len(paths) < MIN_RUNS:
        raise InputError(f"fusion needs at least {MIN_RUNS} runs (--run NAME=FILE), got {len(paths)}")
    runs = {}
    for name, path in paths.items():
        run = read_run(path)
        runs[name] = run if topics is None else {q: docs for q, docs in run.items() if q in topics}
    return runs


@dataclass(frozen=True)
class Pool:
    """One query's documents across runs: ``docids`` ascending; ``ranks`` (docs × runs, 1-based, 0 where a run
    did not retrieve the document within the depth) and ``scores`` (docs × runs, NaN where absent)."""

    qid: str
    docids: list[str]
    ranks: np.ndarray
    scores: np.ndarray


def top(scores: Mapping[str, float], depth: int | None) -> list[str]:
    """A run's first ``depth`` documents for one query, ranked by score with ties by docid (ranks in the file are
    not trusted: the same order whatever the rank column says, as Pyserini's ``--resort``)."""
    ordered = ranking(scores)
    return ordered if depth is None else ordered[:depth]


def build_pools(runs: Mapping[str, Mapping[str, Mapping[str, float]]], depth: int | None = 1000
                ) -> dict[str, Pool]:
    """``{qid: Pool}`` over every query any run answers (sorted qids), each run cut to its top ``depth``."""
    if depth is not None and depth < 1:
        raise InputError(f"depth must be at least 1, got {depth}")
    names = list(runs)
    qids = sorted({q for run in runs.values() for q in run})
    pools = {}
    for qid in qids:
        tops = [top(runs[name].get(qid, {}), depth) for name in names]
        docids = sorted({d for ranked in tops for d in ranked})
        where = {d: i for i, d in enumerate(docids)}
        ranks = np.zeros((len(docids), len(names)), dtype=np.int64)
        scores = np.full((len(docids), len(names)), np.nan)
        for col, (name, ranked) in enumerate(zip(names, tops)):
            for rank, doc in enumerate(ranked, 1):
                ranks[where[doc], col] = rank
                scores[where[doc], col] = runs[name][qid][doc]
        pools[qid] = Pool(qid, docids, ranks, scores)
    return pools
