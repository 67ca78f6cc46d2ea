"""A fitted penalty for the negation default, evaluated in nested folds (issue 49).

Does a small linear model over the signals the default already computes separate wanted from excluded passages better
than the hand-set rule? A candidate among a row's best ``TOP`` scores ``s·d + w·z`` (below them, the default's order
stays): d the default's score min-max scaled over the row's cached candidates, z the
:data:`~scripts.negation.negation_features.FEATURES` standardised on the training rows. (s, w) minimise a
pairwise logistic loss, the wanted passage against each other cached candidate (half of a row's weight) and against
each excluded passage (the other half), plus (α/2)·|w|² (s is not penalised, so a large α gives back the default's
order). Everything is fitted inside the folds: in each outer group fold of the tuning part (the folds and groups of
:mod:`scripts.negation.negation_nested`), each α of ``ALPHAS`` is cross-fitted over the inner folds, and the
existing rule (:func:`~scripts.negation.negation_nested.choose`) picks between the default and the fitted
models; the pick is refitted on the outer-training rows and scores the outer-test rows. The held-out third is scored
once, at the end, by the default and by the model fitted on the whole tuning part.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from scripts.negation.negation_features import FEATURES
from scripts.negation.negation_nested import INNER_FOLDS, OUTER_FOLDS, choose, group_folds, row_outcome

ALPHAS = (0.01, 0.1, 1.0)  # the L2 strengths the inner folds choose from (fixed before any fit)
DEFAULT = "default"
FIRST = 3  # in a cached candidate [doc, rank, default score, *FEATURES], where the features start


@dataclass
class Model:
    """A fitted penalty: feature means and spreads of the training rows, the default's weight s and w."""

    mean: np.ndarray
    scale: np.ndarray
    s: float
    w: np.ndarray

    def scores(self, candidates: Sequence[Sequence]) -> dict[str, float]:
        """``{doc: score}`` of a row's cached candidates: the :func:`reorderable` ones score ``s·d + w·z`` shifted
        above every other, which keep the default's scores (and order)."""
        if not candidates:
            return {}
        default = np.array([c[2] for c in candidates], dtype=float)
        z = (np.array([c[FIRST:] for c in candidates], dtype=float) - self.mean) / self.scale
        fitted = self.s * row_scaled(candidates) + z @ self.w
        top = np.arange(len(candidates)) < reorderable(candidates)
        lift = default.max() + 1.0 - (fitted[top].min() if top.any() else 0.0)
        return {str(c[0]): float(fitted[k] + lift if top[k] else default[k]) for k, c in enumerate(candidates)}


def row_scaled(candidates: Sequence[Sequence]) -> np.ndarray:
    """The default's scores min-max scaled over a row's cached candidates (same order; a row the parser left
    unfused carries raw sparse dot products in the hundreds of thousands, a fused one scores near [0, 1])."""
    default = np.array([c[2] for c in candidates], dtype=float)
    span = default.max() - default.min() if len(default) else 0.0
    return (default - default.min()) / span if span > 0 else np.zeros(len(default))


def reorderable(candidates: Sequence[Sequence]) -> int:
    """How many of a row's cached candidates the model reorders: the default's best, cached first with ranks 0, 1,
    2, ... (the wanted and excluded passages below that cut follow with their own ranks)."""
    k = 0
    while k < len(candidates) and candidates[k][1] == k:
        k += 1
    return k


def identity(features: int = len(FEATURES)) -> Model:
    """The model that reproduces the default (s 1, w 0)."""
    return Model(np.zeros(features), np.ones(features), 1.0, np.zeros(features))


def outcome(row: Mapping, model: Model | None) -> tuple[int, int]:
    """(R@1, RR) of a cached row under ``model`` (None: the default's scores)."""
    cands = row["candidates"]
    scores = {str(c[0]): float(c[2]) for c in cands} if model is None else model.scores(cands)
    return row_outcome(scores, row["pos"], row["negs"])


def _pairs(rows: Sequence[Mapping]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every training pair (the wanted passage, when among the reorderable candidates; another cached candidate):
    Δdefault, Δ raw features, weight, and all cached candidates' raw features (for the standardisation)."""
    dd, dx, wt, every = [], [], [], []
    for row in rows:
        cands = [[*c[:2], d, *c[FIRST:]] for c, d in zip(row["candidates"], row_scaled(row["candidates"]))]
        every += [c[FIRST:] for c in cands]
        pos = next((c for c in cands[:reorderable(cands)] if c[0] == row["pos"]), None)
        if pos is None:  # not retrieved, or below the cut: no model can lift it
            continue
        negs = [c for c in cands if c[0] in row["negs"]]
        others = [c for c in cands if c[0] != row["pos"] and c[0] not in row["negs"]]
        for group in (others, negs):
            for c in group:
                dd.append(pos[2] - c[2])
                dx.append(np.subtract(pos[FIRST:], c[FIRST:]))
                wt.append(0.5 / len(group))
    width = len(FEATURES)
    return (np.asarray(dd, dtype=float), np.asarray(dx, dtype=float).reshape(-1, width),
            np.asarray(wt, dtype=float), np.asarray(every, dtype=float).reshape(-1, width))


def fit(rows: Sequence[Mapping], alpha: float) -> Model:
    """(s, w) minimising the weighted pairwise logistic loss (mean over rows) plus (α/2)·|w|², features
    standardised on ``rows``' cached candidates (a constant feature gets spread 1)."""
    from scipy.optimize import minimize

    dd, dx, wt, every = _pairs(rows)
    if not len(dd):
        return identity()
    mean = every.mean(axis=0)
    scale = every.std(axis=0)
    scale[scale == 0] = 1.0
    dz = dx / scale  # differences: the means cancel
    wt = wt / len(rows)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        margin = theta[0] * dd + dz @ theta[1:]
        value = float(wt @ np.logaddexp(0.0, -margin)) + 0.5 * alpha * float(theta[1:] @ theta[1:])
        slope = -wt / (1.0 + np.exp(np.clip(margin, -50, 50)))  # d loss / d margin
        grad = np.concatenate([[slope @ dd], dz.T @ slope + alpha * theta[1:]])
        return value, grad

    start = np.concatenate([[1.0], np.zeros(dz.shape[1])])
    theta = minimize(loss, start, jac=True, method="L-BFGS-B").x
    return Model(mean, scale, float(theta[0]), theta[1:])


def crossfit(rows: Sequence[Mapping], groups: Sequence[str], folds: int, alpha: float) -> list[float]:
    """Per row, (R@1 + RR)/2 under a model fitted on the other group folds (the folds :func:`choose` uses)."""
    out = [0.0] * len(rows)
    for part in group_folds(groups, folds):
        held = set(part)
        model = fit([r for k, r in enumerate(rows) if k not in held], alpha)
        for k in part:
            out[k] = sum(outcome(rows[k], model)) / 2
    return out


def select(rows: Sequence[Mapping], groups: Sequence[str], folds: int = INNER_FOLDS) -> tuple[str, float]:
    """The selection on ``rows``: the default or ``fitted α`` by :func:`choose` over cross-fitted inner folds, and
    the α a fitted model uses (the chosen one's; when the default was chosen, the best inner mean among ``ALPHAS``,
    ties to the smaller)."""
    names = {f"fitted α {a:g}": a for a in ALPHAS}
    score = {DEFAULT: [sum(outcome(r, None)) / 2 for r in rows]}
    score |= {name: crossfit(rows, groups, folds, a) for name, a in names.items()}
    picked = choose(score, groups, folds)
    return picked, names.get(picked, max(ALPHAS, key=lambda a: (np.mean(score[f"fitted α {a:g}"]), -a)))


def nested_fitted(rows: Sequence[Mapping], outer: int = OUTER_FOLDS) -> dict:
    """Outer group folds of ``rows`` (the tuning part): per row the procedure's outcome (``procedure``), the always
    fitted model's (``fitted``: α from the inner folds, no rule against the default) and the default's, and each
    fold's ``choices`` (what it chose, the α, the fitted weights)."""
    groups = [r["group"] for r in rows]
    res: dict = {"procedure": [None] * len(rows), "fitted": [None] * len(rows),
                 "default": [outcome(r, None) for r in rows], "choices": []}
    for test in group_folds(groups, outer):
        held = set(test)
        train = [k for k in range(len(rows)) if k not in held]
        picked, alpha = select([rows[k] for k in train], [groups[k] for k in train])
        model = fit([rows[k] for k in train], alpha)
        for k in test:
            res["fitted"][k] = outcome(rows[k], model)
            res["procedure"][k] = res["fitted"][k] if picked != DEFAULT else res["default"][k]
        res["choices"].append({"rows": len(test), "chose": picked, "α": alpha, "model": model})
    return res


def weights_line(model: Model) -> str:
    """The fitted weights on standardised features, and s, in one line."""
    return f"s {model.s:.3g}; " + ", ".join(f"{n} {w:+.3g}" for n, w in zip(FEATURES, model.w))


def paired(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> dict:
    """a − b per row: mean R@1 and RR differences, and (R@1 + RR)/2's mean difference with its standard error."""
    d1 = np.array([x[0] - y[0] for x, y in zip(a, b)], dtype=float)
    d2 = np.array([x[1] - y[1] for x, y in zip(a, b)], dtype=float)
    both = (d1 + d2) / 2
    se = both.std(ddof=1) / np.sqrt(len(both)) if len(both) > 1 else 0.0
    return {"Δ R@1": round(float(d1.mean()), 3), "Δ RR": round(float(d2.mean()), 3),
            "Δ (R@1+RR)/2": round(float(both.mean()), 4), "its SE": round(float(se), 4),
            "rows better / worse": f"{int((both > 0).sum())} / {int((both < 0).sum())}"}


def report(rows: Sequence[Mapping]) -> dict:
    """The figures: ``check`` (cache against the default's runs), ``nested`` and ``differences`` (outer folds of
    the tuning part), ``choices``, ``final`` (choice, α, model on the whole tuning part), ``held-out`` (scored
    once), and ``per_row`` outcomes."""
    from scripts.negation.negation_nested import by_source, figure_of

    tune = [r for r in rows if r["part"] == "tune"]
    test = [r for r in rows if r["part"] != "tune"]
    check = {"rows whose cached default outcome differs from its run's": sum(
        outcome(r, None) != tuple(r["outcome"]) for r in rows),
        "rows where s 1, w 0 differs from the default": sum(outcome(r, identity()) != outcome(r, None) for r in rows)}
    res = nested_fitted(tune)
    settings = {"selection procedure (outer folds)": res["procedure"], "fitted, no selection (outer folds)":
                res["fitted"], "default, no selection": res["default"]}
    nested_rows, differences = [], []
    for src, idx in by_source(tune, range(len(tune))).items():
        for name, values in settings.items():
            nested_rows.append({"rows": src, "setting": name, **figure_of(values, idx)})
        for name in list(settings)[:2]:
            differences.append({"rows": src, "setting − default": name,
                                **paired([settings[name][i] for i in idx], [res["default"][i] for i in idx])})
    picked, alpha = select(tune, [r["group"] for r in tune], OUTER_FOLDS)
    model = fit(tune, alpha)
    held_default = [outcome(r, None) for r in test]
    held_fitted = [outcome(r, model) for r in test]
    held = []
    for src, idx in by_source(test, range(len(test))).items():
        for name, values in (("default", held_default), (f"fitted α {alpha:g} (all tuning rows)", held_fitted)):
            held.append({"rows": src, "setting": name, **figure_of(values, idx)})
    per_row = []
    for k, r in enumerate(tune):
        per_row.append({"id": r["id"], "source": r["source"], "group": r["group"], "part": "tune",
                        "default": res["default"][k], "fitted": res["fitted"][k], "procedure": res["procedure"][k]})
    for k, r in enumerate(test):
        per_row.append({"id": r["id"], "source": r["source"], "group": r["group"], "part": "held-out",
                        "default": held_default[k], "fitted": held_fitted[k],
                        "procedure": held_fitted[k] if picked != DEFAULT else held_default[k]})
    return {"check": check, "nested": nested_rows, "differences": differences, "choices": res["choices"],
            "final": {"chose": picked, "α": alpha, "model": model}, "held-out": held, "per_row": per_row}


def row_table(result: Mapping):
    """DataFrame, one line per row: source, group, part, and R@1 / RR of the default, the fitted model (outer folds
    on the tuning part, the final model on the held-out part) and the procedure."""
    import pandas as pd

    records = []
    for r in result["per_row"]:
        record = {k: r[k] for k in ("id", "source", "group", "part")}
        for name in ("default", "fitted", "procedure"):
            record[f"{name} R@1"], record[f"{name} RR"] = r[name]
        records.append(record)
    return pd.DataFrame(records).set_index("id")


def markdown(result: Mapping, preamble: str) -> str:
    """The Markdown page: ``preamble``, the check, the nested figures and differences, the choices, the held-out
    part."""
    import pandas as pd

    from lsr_lucene.eval.trec import to_markdown
    from scripts.negation.negation_nested import figure_table

    final = result["final"]
    choices = [f"outer fold {k + 1} ({c['rows']} rows): chose **{c['chose']}** (a fitted model would use α "
               f"{c['α']:g}: {weights_line(c['model'])})" for k, c in enumerate(result["choices"])]
    return "\n\n".join([
        preamble,
        "Check: " + "; ".join(f"{k}: {v}" for k, v in result["check"].items()) + ".",
        "## Nested folds: the fitted penalty on unseen template families (tuning part)",
        "\n".join(f"- {line}" for line in choices) + f"\n- on the whole tuning part: **{final['chose']}** (α "
        f"{final['α']:g}: {weights_line(final['model'])})",
        figure_table(result["nested"]),
        "Paired differences from the default on the same rows (outer folds; SE: standard error of the per-row "
        "differences of (R@1 + RR)/2):",
        to_markdown(pd.DataFrame(result["differences"]).set_index("rows"), ".4f"),
        "## Held-out part (one row in three by hash, fixed before any run), scored once",
        figure_table(result["held-out"]), ""])


def main(argv: list[str] | None = None) -> int:
    """CLI: ``--features FILE --output STEM``: the nested evaluation of the fitted penalty from the cached signals
    (:mod:`scripts.negation.negation_features`); writes STEM.md and STEM.csv."""
    import argparse
    import shlex
    import sys

    from scripts.bench.scale_report import machine
    from scripts.negation.negation_features import TOP, read_features
    from lsr_lucene.io.output import refuse_existing, write_text_atomic

    parser = argparse.ArgumentParser(prog="python -m scripts.negation.negation_fitted",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--features", required=True, type=Path, help="the cached signals (negation_features)")
    parser.add_argument("--output", required=True, type=Path, help="stem: writes STEM.md and STEM.csv")
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    md, csv = args.output.with_name(args.output.name + ".md"), args.output.with_name(args.output.name + ".csv")
    for path in (md, csv):
        refuse_existing(path, args.overwrite)
    result = report(read_features(args.features))
    preamble = (f"# Negation: a fitted penalty in nested folds (issue 49)\n\n"
                f"Command: `python -m scripts.negation.negation_fitted {shlex.join(argv or sys.argv[1:])}` "
                f"(scripts/run_negation_fitted.sh). Machine: {machine()}.\n\n{__doc__.split(chr(10), 2)[2].strip()}"
                f"\n\nFeatures: {', '.join(FEATURES)}; the best {TOP} candidates of the default are reorderable. "
                f"α from {', '.join(f'{a:g}' for a in ALPHAS)}. Intervals: 2,000 bootstrap resamplings of the rows "
                "(seed 0). Every row's outcomes: the .csv beside this page.")
    write_text_atomic(md, markdown(result, preamble))
    write_text_atomic(csv, row_table(result).to_csv())
    print(f"final choice: {result['final']['chose']}; written {md}, {csv}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    import sys

    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
