"""NevIR polarity probe: can a query's own features tell whether it wants the negated document of its row?

A signed sparse model beats random on NevIR only if each query, encoded alone, carries which side of the
negation it wants, so that its sign can point to the right document. NevIR's annotators could not use words
found in only one document, so this cannot come from negation cues: "What coveted position did Euler fail in
obtaining?" wants the document without "not". This module measures how much of that signal a model's
features hold, as an upper bound for what a signed head on them can learn:

- the negated document of a row is the one with more negation cue words (rows where both have as many are
  left out); each query is labelled 1 when its own document is the negated one;
- an L2-regularised logistic regression, cross-validated over folds of whole rows, predicts the label from
  the query's ``hidden`` state (the encoder's mean transformed hidden state, which the mean negative head
  maps linearly), its sparse ``terms`` vector, or its ``words`` (bag of lowercase words);
- a row is "both right" when both of its queries are labelled correctly. If a signed polarity term were the
  only difference between the two documents' scores, that would be the row's pairwise accuracy: chance is 25%.

The table's header also gives what the model's own vectors do with the rows, and how often the query with
more cue words goes with the document with more of them.

    python -m scripts.studies.nevir_probe --nevir ../shared/data/nevir/train.jsonl --output runs/nevir/polarity
"""
from __future__ import annotations

import argparse
import re
from typing import Mapping, Sequence

import numpy as np

from lsr_lucene.errors import InputError
from lsr_lucene.encode.negative_head import NEGATION_CUES

FEATURES = ("hidden", "terms", "words")
L2_GRID = (0.001, 0.01, 0.1, 1.0)
_WORD = re.compile(r"[a-z]+")


def words(text: str) -> list[str]:
    """Lowercase words, with the clitic n't as the word "not"."""
    return _WORD.findall(text.lower().replace("n't", " not "))


def cue_count(text: str) -> int:
    """Number of negation cue words (negative_head.NEGATION_CUES, n't counting as "not") in ``text``."""
    return sum(word in NEGATION_CUES for word in words(text))


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def cue_agreement(rows: Sequence[Mapping[str, str]]) -> dict[str, int]:
    """Rows by whether the query with more cue words goes with the document with more of them."""
    counts = dict.fromkeys(("documents tie on cues", "queries tie on cues", "agree", "disagree"), 0)
    for row in rows:
        docs = _sign(cue_count(row["doc1"]) - cue_count(row["doc2"]))
        queries = _sign(cue_count(row["q1"]) - cue_count(row["q2"]))
        key = ("documents tie on cues" if not docs else "queries tie on cues" if not queries
               else "agree" if docs == queries else "disagree")
        counts[key] += 1
    return counts


def polarity_examples(rows: Sequence[Mapping[str, str]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(queries, labels, row numbers) of the rows whose documents differ in cue words; a query's label is 1
    when its document is the one with more cues (the negated one)."""
    queries, labels, groups = [], [], []
    for number, row in enumerate(rows):
        diff = cue_count(row["doc1"]) - cue_count(row["doc2"])
        if diff == 0:
            continue
        for k in (1, 2):
            queries.append(row[f"q{k}"])
            labels.append(int((diff > 0) == (k == 1)))
            groups.append(number)
    return queries, np.array(labels, dtype=np.int64), np.array(groups, dtype=np.int64)


# ---------------------------------------------------------------------------------------------- features
def word_features(texts: Sequence[str]) -> np.ndarray:
    """Binary bag-of-words matrix (texts × words seen in at least two texts)."""
    return _matrix([dict.fromkeys(words(t), 1.0) for t in texts])


def term_features(vectors: Sequence[Mapping[str, float]]) -> np.ndarray:
    """Sparse vectors as a dense matrix over the terms present in at least two of them."""
    return _matrix(vectors)


def _matrix(rows: Sequence[Mapping[str, float]]) -> np.ndarray:
    seen: dict[str, int] = {}
    for row in rows:
        for key in row:
            seen[key] = seen.get(key, 0) + 1
    columns = {key: i for i, key in enumerate(sorted(k for k, n in seen.items() if n >= 2))}
    out = np.zeros((len(rows), len(columns)))
    for r, row in enumerate(rows):
        for key, value in row.items():
            if key in columns:
                out[r, columns[key]] = value
    return out


def encoder_features(encoder, queries: Sequence[str]) -> dict[str, np.ndarray]:
    """The ``hidden`` and ``terms`` features of ``queries`` from a SparseEncoder."""
    return {"hidden": encoder.mean_hidden(queries, encoder.query_max_length, queries=True),
            "terms": term_features(encoder.encode_queries(queries))}


def vector_outcomes(encoder, rows: Sequence[Mapping[str, str]]) -> dict[str, float]:
    """What a SparseEncoder's own vectors do with the rows: the NevIR outcome counts, plus ``direction``, the
    rows whose query difference points to their document difference, (q1 - q2)·(doc1 - doc2) > 0."""
    from lsr_lucene.eval.contrastive_metrics import nevir_pairwise_accuracy
    from lsr_lucene.compose.operations import dot

    n = len(rows)
    q = encoder.encode_queries([r["q1"] for r in rows] + [r["q2"] for r in rows])
    d = encoder.encode_documents([r["doc1"] for r in rows] + [r["doc2"] for r in rows])
    scores = [(dot(q[i], d[i]), dot(q[i], d[n + i]), dot(q[n + i], d[i]), dot(q[n + i], d[n + i]))
              for i in range(n)]
    return {**nevir_pairwise_accuracy(scores),
            "direction": sum(q1d1 - q1d2 + q2d2 - q2d1 > 0 for q1d1, q1d2, q2d1, q2d2 in scores)}


# ---------------------------------------------------------------------------------------------- probe
def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    """Weights (bias last) of a logistic regression minimising mean log-loss + l2/2 · |w|² (bias free)."""
    from scipy.optimize import minimize
    from scipy.special import expit

    xb = np.hstack([x, np.ones((len(x), 1))])
    sign = 2.0 * y - 1.0

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        margin = sign * (xb @ w)
        value = np.logaddexp(0.0, -margin).mean() + 0.5 * l2 * (w[:-1] @ w[:-1])
        grad = xb.T @ (-sign * expit(-margin)) / len(y)
        grad[:-1] += l2 * w[:-1]
        return value, grad

    return minimize(loss, np.zeros(xb.shape[1]), jac=True, method="L-BFGS-B").x


def row_folds(groups: np.ndarray, folds: int, seed: int) -> list[np.ndarray]:
    """Test indices of ``folds`` folds that keep each row's queries together (rows shuffled with ``seed``)."""
    rows = np.unique(groups)
    if len(rows) < folds:
        raise InputError(f"{len(rows)} rows with a negated document, fewer than {folds} folds")
    order = np.random.default_rng(seed).permutation(rows)
    fold_of = {row: i % folds for i, row in enumerate(order)}
    assignment = np.array([fold_of[g] for g in groups])
    return [np.flatnonzero(assignment == k) for k in range(folds)]


def probe(x: np.ndarray, labels: np.ndarray, groups: np.ndarray, l2: float,
          folds: Sequence[np.ndarray]) -> dict[str, float]:
    """Cross-validated query accuracy and the share of rows with both queries right (features standardised
    on each training part)."""
    predicted = np.zeros(len(labels), dtype=np.int64)
    for test in folds:
        train = np.setdiff1d(np.arange(len(labels)), test)
        mean, std = x[train].mean(0), x[train].std(0)
        std[std == 0] = 1.0
        w = fit_logistic((x[train] - mean) / std, labels[train], l2)
        scores = np.hstack([(x[test] - mean) / std, np.ones((len(test), 1))]) @ w
        predicted[test] = scores > 0
    right = predicted == labels
    rows = np.unique(groups)
    return {"query accuracy": float(right.mean()),
            "both right": float(np.mean([right[groups == row].all() for row in rows]))}


def probe_table(features: Mapping[str, np.ndarray], labels: np.ndarray, groups: np.ndarray,
                folds: int = 5, seed: int = 13, l2_grid: Sequence[float] = L2_GRID):
    """DataFrame: the probe's figures per feature set and regularisation strength."""
    import pandas as pd

    split = row_folds(groups, folds, seed)
    records = [{"features": name, "l2": l2, **probe(x, labels, groups, l2, split)}
               for name, x in features.items() for l2 in l2_grid]
    return pd.DataFrame(records).set_index(["features", "l2"])


# ---------------------------------------------------------------------------------------------- CLI
def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``python -m scripts.studies.nevir_probe``."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m scripts.studies.nevir_probe", description=__doc__.splitlines()[0])
    parser.add_argument("--nevir", required=True, help="NevIR rows {id, q1, doc1, q2, doc2} (JSONL)")
    parser.add_argument("--model", default="splade-tiny", help="sparse encoder for the hidden and terms features")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=13, help="shuffles rows into folds")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--output", required=True, help="path stem: writes STEM.md and STEM.csv")
    parser.add_argument("--overwrite", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Probe each feature set and write the table, with the cue counts as a header."""
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.eval.contrastive_metrics import NEVIR_CATEGORIES, read_nevir
    from lsr_lucene.eval.trec import table_paths, to_markdown, write_table
    from lsr_lucene.io.output import refuse_existing

    args = build_parser().parse_args(argv)
    if args.folds < 2:
        raise InputError(f"--folds must be at least 2, got {args.folds}")
    for path in table_paths(args.output):
        refuse_existing(path, args.overwrite)
    rows = read_nevir(args.nevir)
    queries, labels, groups = polarity_examples(rows)
    probed = len(np.unique(groups))
    if probed < args.folds:  # checked before the encoder loads, naming the file
        raise InputError(f"{args.nevir}: {probed} rows whose documents differ in negation cue "
                         f"words, fewer than {args.folds} folds")
    encoder = SparseEncoder(args.model, threads=args.threads)
    features = {**encoder_features(encoder, queries), "words": word_features(queries)}
    table = probe_table(features, labels, groups, args.folds, args.seed)
    outcomes = vector_outcomes(encoder, rows)
    cues = cue_agreement(rows)
    header = (f"NevIR polarity probe on {args.nevir} ({len(rows)} rows), model {args.model}, "
              f"{args.folds} folds by row (seed {args.seed}).\n\n"
              f"The model's own vectors: "
              + ", ".join(f"{key} {outcomes[key]}" for key in NEVIR_CATEGORIES)
              + f"; the query difference points to the document difference ((q1 - q2)·(doc1 - doc2) > 0) in "
              f"{outcomes['direction']} of {len(rows)} rows.\n\n"
              f"Query with more cue words vs document with more cue words: "
              + ", ".join(f"{key}: {n}" for key, n in cues.items()) + ".\n\n"
              f"Probed: {probed} rows whose documents differ in cue words ({len(queries)} queries, "
              f"{labels.mean():.0%} labelled 1). Chance: query accuracy 0.5, both right 0.25.\n\n")
    write_table(table, args.output, overwrite=args.overwrite, preamble=header)
    print(header + to_markdown(table))
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    raise SystemExit(run_main(main))
