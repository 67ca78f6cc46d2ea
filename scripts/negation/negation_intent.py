"""Negation intent (issue 50): train the intent model on the development part of the labelled intent set, and
report how the parser decides on the held-out part (``runs/negation/intent.md``).

``train``: every candidate negation cue of a development query (but those the rules reject as hedges, idioms,
numbering …: :func:`lsr_lucene.compose.intent.lexical_veto`) becomes one example (features:
:func:`lsr_lucene.compose.intent_model.cue_features`); in a sought-negation query every cue is negative, in an
exclusion query the cue that carries the exclusion is positive (the first explicit exclusion cue, else the first
general negation; the query's other cues are left out, unlabelled). A logistic regression (scikit-learn, L2) is
fitted (``pip install lsr_lucene[intent]``: scikit-learn, for training only; the shipped model scores without it); its
one knob, C, is chosen by grouped cross-validation inside the development part (families kept
together), scored on query decisions (a query fires when one of its cues does: the highest recall of exclusions
with at most 5% of sought negations firing); the estimate of that choice is
itself cross-validated (nested: outer folds never seen by the inner choice). Weights go to
``lsr_lucene/compose/intent_model.json``.

``report``: the parser as shipped (model) and the rules alone on the held-out part: firing precision and recall
per category, false-fire rate, every paraphrase family's consistency; and how many ordinary topics fire (SciFact
claims, CACM, CISI, Cranfield, NPL, MED, NQ test) with the rules and with the model. The held-out part is read
only here, after training.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator, Sequence

from lsr_lucene.compose import intent_model
from lsr_lucene.compose.intent import lexical_veto, rule_decision
from lsr_lucene.compose.negation_parser import _CUES, _cue_matches, _protected, normalise, parse
from scripts.negation.negation_intent_set import SHARED_DATA, read_set
from lsr_lucene.io.output import atomic_output

C_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)
THRESHOLDS = (0.5,)  # the model's own boundary: no threshold knob
MAX_FALSE_FIRE = 0.05  # issue 50's goal on sought negations
FOLDS = 5
ORDINARY = ("scifact", "cacm", "cisi", "cranfield", "npl", "med")


def cue_examples(text: str, label: str, dense: bool = True) -> list[tuple[list[str], tuple, int | None]]:
    """(features, embedding, 1 / 0 / None unlabelled) for every candidate negation cue of a query (see module doc;
    ``dense``: with the embedding of the cue's sentence, else an empty one)."""
    norm = normalise(text)
    cues = [(s, e, i) for s, e, i in _cue_matches(norm, _protected(norm)) if _CUES[i][1] != "and"]
    rules = {c: rule_decision(norm, c[0], c[1], _CUES[c[2]][0], _CUES[c[2]][1]) for c in cues}
    cues = [c for c in cues if not lexical_veto(rules[c])]  # final without the model
    out = []
    explicit = [c for c in cues if _CUES[c[2]][1] == "not"]
    target = (explicit or cues)[0] if cues else None
    for s, e, i in cues:
        cue_label = _CUES[i][0]
        feats = intent_model.cue_features(norm, s, e, cue_label, rules[s, e, i])
        y = 0 if label == "plain" else (1 if (s, e, i) == target else None)
        out.append((feats, intent_model.embedding(intent_model.cue_sentence(norm, s)) if dense else (), y))
    return out


def _fit(examples: Sequence[tuple[list[str], tuple, int]], c: float) -> intent_model.IntentModel:
    """A logistic regression over binary features and the embedding (scikit-learn's liblinear: deterministic)."""
    import numpy as np
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    vec = DictVectorizer()
    x = vec.fit_transform([{f: 1 for f in feats} for feats, _, _ in examples]).toarray()
    dims = len(examples[0][1])
    if dims:
        x = np.hstack([x, np.array([vector for _, vector, _ in examples], dtype=np.float64)])
    y = [label for _, _, label in examples]
    lr = LogisticRegression(C=c, solver="liblinear", max_iter=2000, fit_intercept=False, random_state=0).fit(x, y)
    coef = lr.coef_[0]
    names = vec.get_feature_names_out()
    weights = {name: round(float(w), 6) for name, w in zip(names, coef[:len(names)]) if abs(w) > 1e-6}
    return intent_model.IntentModel(weights, tuple(round(float(w), 6) for w in coef[len(names):]))


def _query_fires(model: intent_model.IntentModel, cues: Sequence[tuple[list[str], tuple, int | None]]) -> bool:
    return any(model.probability(feats, vector) >= model.threshold for feats, vector, _ in cues)


def _rates(model, rows: Sequence[dict], cues: dict) -> tuple[int, int, int, int]:
    """(exclusions fired, exclusions, sought negations fired, sought negations) over query decisions."""
    tp = n_fire = fp = n_plain = 0
    for row in rows:
        fired = _query_fires(model, cues[row["query"]])
        if row["label"] == "fire":
            tp, n_fire = tp + fired, n_fire + 1
        else:
            fp, n_plain = fp + fired, n_plain + 1
    return tp, n_fire, fp, n_plain


def _folds(rows: Sequence[dict], k: int) -> list[list[dict]]:
    """``k`` folds by family (a family's rows stay together), assigned round-robin over sorted families."""
    families = sorted({r["family"] for r in rows})
    which = {f: i % k for i, f in enumerate(families)}
    return [[r for r in rows if which[r["family"]] == i] for i in range(k)]


def _examples(rows, cues):
    return [(f, v, y) for r in rows for f, v, y in cues[r["query"]] if y is not None]


def choose(rows: Sequence[dict], cues: dict) -> tuple[float, float, dict]:
    """(C, threshold) by grouped folds of ``rows``: the highest exclusion recall among the settings whose
    false-fire rate on sought negations is at most :data:`MAX_FALSE_FIRE` (else the lowest false-fire rate)."""
    folds = _folds(rows, FOLDS)
    totals: dict = {}
    for c in C_GRID:
        for i, test in enumerate(folds):
            train = [r for j, fold in enumerate(folds) if j != i for r in fold]
            fitted = _fit(_examples(train, cues), c)
            for threshold in THRESHOLDS:
                rates = _rates(replace(fitted, threshold=threshold), test, cues)
                totals[c, threshold] = [a + b for a, b in zip(totals.get((c, threshold), (0, 0, 0, 0)), rates)]
    scores = {key: (tp / nf, fp / npl) for key, (tp, nf, fp, npl) in totals.items()}
    feasible = [k for k, (_, ff) in scores.items() if ff <= MAX_FALSE_FIRE]
    best = max(feasible, key=lambda k: (scores[k][0], -scores[k][1], -k[0])) if feasible else \
        min(scores, key=lambda k: (scores[k][1], -scores[k][0]))
    return best[0], best[1], scores


def train(path: str | Path | None = None, output: str | Path = intent_model.MODEL_PATH, dense: bool = True,
          data: str | Path = SHARED_DATA) -> str:
    """Fit the model on the development part (``dense``: with the embedding) of the set (``path``, else built from
    the shared ``data``); returns a summary of the nested cross-validation."""
    dev = [r for r in read_set(path, data) if r["split"] == "dev"]
    cues = {r["query"]: cue_examples(r["query"], r["label"], dense) for r in dev}
    outer = [0, 0, 0, 0]
    folds = _folds(dev, FOLDS)
    for i, test in enumerate(folds):
        train_rows = [r for j, fold in enumerate(folds) if j != i for r in fold]
        c, threshold, _ = choose(train_rows, cues)
        rates = _rates(replace(_fit(_examples(train_rows, cues), c), threshold=threshold), test, cues)
        outer = [a + b for a, b in zip(outer, rates)]
    c, threshold, _ = choose(dev, cues)
    model = replace(_fit(_examples(dev, cues), c), threshold=threshold)
    with atomic_output(output, overwrite=True) as tmp:
        trained_on = "the negation intent set (experiments.negation_intent_set), split dev"
        Path(tmp).write_text(json.dumps({"trained_on": trained_on,
                                         "C": c, **model.to_json()}, indent=0, sort_keys=True) + "\n",
                             encoding="utf-8")
    tp, nf, fp, npl = outer
    return (f"{'words + embedding' if dense else 'words only'}: nested {FOLDS}-fold cross-validation on the "
            f"development part (C chosen inside each outer fold): exclusion recall {tp / nf:.3f} ({tp}/{nf}), "
            f"false-fire rate {fp / npl:.3f} ({fp}/{npl}); "
            f"shipped: C={c}, threshold {threshold}, {len(model.weights)} feature weights"
            f"{f' + {len(model.dense)} embedding weights' if model.dense else ''}")


@contextmanager
def rules_only(model: intent_model.IntentModel | None = None) -> Iterator[None]:
    """The parser with the rules alone deciding (the intent model switched off), or with ``model`` instead of the
    shipped one, for comparison."""
    saved = intent_model.shipped_model
    intent_model.shipped_model = lambda: model  # type: ignore[assignment]
    try:
        yield
    finally:
        intent_model.shipped_model = saved


def load_model(path: str | Path) -> intent_model.IntentModel:
    """A model file written by :func:`train`."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return intent_model.IntentModel(data["weights"], tuple(data.get("dense") or ()), float(data["threshold"]))


def fires(text: str) -> bool:
    """Whether the parser composes an exclusion (a not node) from the text."""
    report = parse(text)
    return any(c.kind == "not" for c in report.fired)


def _pr(rows: Sequence[dict], decided: dict[str, bool]) -> tuple[int, int, str, str]:
    fire = [r for r in rows if r["label"] == "fire"]
    plain = [r for r in rows if r["label"] == "plain"]
    tp = sum(decided[r["query"]] for r in fire)
    fp = sum(decided[r["query"]] for r in plain)
    recall = f"{tp / len(fire):.3f} ({tp}/{len(fire)})" if fire else ""
    false_fire = f"{fp / len(plain):.3f} ({fp}/{len(plain)})" if plain else ""
    return len(fire), len(plain), recall, false_fire


def _wilson(k: int, n: int) -> str:
    """95% Wilson interval of a proportion."""
    if not n:
        return ""
    z, p = 1.96, k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return f"[{max(0.0, mid - half):.3f}, {min(1.0, mid + half):.3f}]"


def report(path: str | Path | None, data: Path | None, summary: str = "",
           words_only: str | Path | None = None) -> str:
    """The Markdown of ``runs/negation/intent.md`` (``words_only``: a model file without the embedding, compared on
    the held-out part)."""
    rows = read_set(path, data or SHARED_DATA)
    held = [r for r in rows if r["split"] == "held-out"]
    model_dec = {r["query"]: fires(r["query"]) for r in rows}
    with rules_only():
        rule_dec = {r["query"]: fires(r["query"]) for r in rows}
    words_dec = {}
    if words_only:
        with rules_only(load_model(words_only)):
            words_dec = {r["query"]: fires(r["query"]) for r in held}
    out = ["# Negation intent: which cues fire (issue 50)", "",
           "Written by `scripts/run_negation_intent.sh` (`python -m scripts.negation.negation_intent`). Set: "
           + (f"`{Path(path).as_posix()}`" if path else "`scripts.negation.negation_intent_set`, the written "
              "rows in `lsr_lucene/data/negation_intent/` and rows read from `../shared/data`")
           + f" ({len(rows)} queries: "
           f"{sum(r['label'] == 'fire' for r in rows)} exclusion requests, {sum(r['label'] == 'plain' for r in rows)}"
           f" sought negations); split by family (sha1, one family in three held out) before training. A query "
           "fires when the parser composes a not node from it. `model`: the shipped parser (intent model); "
           "`rules`: the phrasing rules alone (before issue 50).", ""]
    if summary:
        out += [f"Training (development part only): {summary}", ""]
    for name, part in (("held-out", held), ("development", [r for r in rows if r["split"] == "dev"])):
        out += [f"## {name.capitalize()} part: firing per category", "",
                "| category | exclusions | sought | model recall | model false-fire | rules recall "
                "| rules false-fire |",
                "|:---|---:|---:|---:|---:|---:|---:|"]
        cats = sorted({r["category"] for r in part}, key=lambda c: (c not in ("keyword", "question", "request",
                                                                               "relative"), c))
        for cat in cats + ["all"]:
            sel = part if cat == "all" else [r for r in part if r["category"] == cat]
            n_fire, n_plain, m_rec, m_ff = _pr(sel, model_dec)
            _, _, r_rec, r_ff = _pr(sel, rule_dec)
            out.append(f"| {'**all**' if cat == 'all' else cat} | {n_fire} | {n_plain} | {m_rec} | {m_ff} | {r_rec} "
                       f"| {r_ff} |")
        fire = [r for r in part if r["label"] == "fire"]
        plain = [r for r in part if r["label"] == "plain"]
        tp = sum(model_dec[r["query"]] for r in fire)
        fp = sum(model_dec[r["query"]] for r in plain)
        precision = tp / (tp + fp) if tp + fp else 0.0
        out += ["", f"Model on the {name} part: recall {tp / len(fire):.3f} 95% {_wilson(tp, len(fire))}, "
                f"false-fire rate {fp / len(plain):.3f} 95% {_wilson(fp, len(plain))}, firing precision "
                f"{precision:.3f}" + (" (fitted on this part: a training fit, not an estimate)" if name != "held-out"
                                      else "") + ".", ""]
        if name == "held-out" and words_dec:
            wtp = sum(words_dec[r["query"]] for r in fire)
            wfp = sum(words_dec[r["query"]] for r in plain)
            out += [f"The same model without the embedding (words only, trained alike): recall {wtp / len(fire):.3f} "
                    f"({wtp}/{len(fire)}), false-fire rate {wfp / len(plain):.3f} ({wfp}/{len(plain)}).", ""]
    out += ["## Paraphrase families (all members decided alike?)", "",
            "| family | split | label | members | model fires | model consistent | rules fires | rules consistent |",
            "|:---|:---|:---|---:|---:|:---|---:|:---|"]
    families = defaultdict(list)
    for r in rows:
        families[r["family"]].append(r)
    consistent = {"model": 0, "rules": 0}
    multi = [f for f, members in sorted(families.items()) if len(members) > 1]
    for fam in multi:
        members = families[fam]
        m = sum(model_dec[r["query"]] for r in members)
        k = sum(rule_dec[r["query"]] for r in members)
        consistent["model"] += m in (0, len(members))
        consistent["rules"] += k in (0, len(members))
        out.append(f"| {fam} | {members[0]['split']} | {members[0]['label']} | {len(members)} | {m} | "
                   f"{'yes' if m in (0, len(members)) else 'no'} | {k} | {'yes' if k in (0, len(members)) else 'no'} |")
    held_multi = [f for f in multi if families[f][0]["split"] == "held-out"]
    held_consistent = {name: sum(len({dec[r["query"]] for r in families[f]}) == 1 for f in held_multi)
                       for name, dec in (("model", model_dec), ("rules", rule_dec))}
    out += ["", f"Consistent families: model {consistent['model']}/{len(multi)}, rules {consistent['rules']}/"
            f"{len(multi)}; of the held-out families (not trained on): model {held_consistent['model']}/"
            f"{len(held_multi)}, rules {held_consistent['rules']}/{len(held_multi)}.", ""]
    mistakes = [r for r in held if model_dec[r["query"]] != (r["label"] == "fire")]
    out += ["## Held-out mistakes of the model", ""] + [
        f"- `{r['query']}` ({r['label']}, {r['category']}, {r['family']})" for r in mistakes] + [""]
    out += timing_lines([r["query"] for r in rows])
    if data is not None:
        out += ordinary_table(data)
    return "\n".join(out) + "\n"


def timing_lines(texts: Sequence[str]) -> list[str]:
    """Parse time per query (best of 3 calls, embeddings cached after the first: what a repeated query costs) and
    of the first call of each sentence (the embedding computed), model vs rules alone, measured in this run."""
    import os
    import time

    from lsr_lucene.encode.precision import capability_string

    def best(fn) -> float:
        times = []
        for text in texts:
            runs = []
            for _ in range(3):
                started = time.perf_counter()
                fn(text)
                runs.append(time.perf_counter() - started)
            times.append(min(runs))
        return 1e6 * sum(times) / len(times)

    intent_model.embedding.cache_clear()
    first = []
    for text in texts:
        started = time.perf_counter()
        parse(text)
        first.append(time.perf_counter() - started)
    with rules_only():
        rules = best(parse)
    cached = best(parse)
    return ["## Parse time", "",
            f"Mean over the {len(texts)} queries of the set, one thread, CPU capability {capability_string()}: rules "
            f"alone {rules:.0f} µs; model, first call of a sentence (its embedding computed) "
            f"{1e6 * sum(first) / len(first):.0f} µs; model, embedding cached {cached:.0f} µs (load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs when measured). A query without a candidate cue "
            "computes no embedding.", ""]


def ordinary_table(data: Path) -> list[str]:
    """How many ordinary topics fire with the rules alone and with the model (the do-no-harm sets)."""
    from lsr_lucene.io.topics import read_topics

    sets = []
    for name in ORDINARY:
        topics = data / name / ("topics.train.tsv" if name == "scifact" else "topics.tsv")
        if topics.is_file():
            sets.append((name, topics))
    nq = data / "wiki2015" / "topics.nq-test.tsv"
    if nq.is_file():
        sets.append(("nq-test", nq))
    out = ["## Ordinary topics that fire (the do-no-harm sets)", "",
           "| set | topics | rules fire | model fires | fire with both | model only | rules only |",
           "|:---|---:|---:|---:|---:|---:|---:|"]
    for name, path in sets:
        texts = read_topics(path)
        model = {q for q, t in texts.items() if fires(t)}
        with rules_only():
            rules = {q for q, t in texts.items() if fires(t)}
        out.append(f"| {name} | {len(texts)} | {len(rules)} | {len(model)} | {len(model & rules)} | "
                   f"{', '.join(sorted(model - rules)) or 0} | {', '.join(sorted(rules - model)) or 0} |")
    return out + [""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.negation.negation_intent",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="fit the intent model on the development part")
    t.add_argument("--set", help="the set as a TSV (default: built from the written rows and --data)")
    t.add_argument("--data", default=str(SHARED_DATA), help="shared data folder")
    t.add_argument("--output", default=str(intent_model.MODEL_PATH))
    t.add_argument("--words-only", action="store_true", help="without the embedding (for comparison)")
    r = sub.add_parser("report", help="write runs/negation/intent.md")
    r.add_argument("--set", help="the set as a TSV (default: built from the written rows and --data)")
    r.add_argument("--data", default=None, help="shared data folder (adds the ordinary-topics table)")
    r.add_argument("--summary", action="append", default=[], help="a training summary line to include")
    r.add_argument("--words-only", help="a words-only model file to compare on the held-out part")
    r.add_argument("--output", default="runs/negation/intent.md")
    r.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "train":
        summary = train(args.set, args.output, not args.words_only, args.data)
        print(summary)
        return 0
    text = report(args.set, Path(args.data) if args.data else None, " ".join(args.summary), args.words_only)
    with atomic_output(args.output, args.overwrite) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
