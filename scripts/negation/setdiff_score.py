"""Tables of the set-difference benchmark and the pair benchmarks (issue 65 items 2 and 4) from the runs of
:mod:`scripts.negation.setdiff`: nDCG@10 against the set-difference judgements and the share of top-10 documents that
contain B, per part (tuning / held-out) and query group, with 95% bootstrap intervals over topics; β of the short-term
penalty chosen inside five folds of the tuning topics; ExcluIR and BoolQuestions dev R@1 / RR beside them.

Usage: python -m scripts.negation.setdiff_score --new work/setdiff/new --old work/setdiff/old \
         --output runs/negation/setdiff
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
from collections import defaultdict
from pathlib import Path
from typing import Callable, Mapping, Sequence

from lsr_lucene.io.corpus import doc_contents

from scripts.negation.text_match import analysed_terms, containing

FOLDS = 5
RESAMPLES = 2000
SHARE_GOAL = 0.05
PAIR_SLACK = 0.01  # a β is eligible when both pair benchmarks' tuning parts lose at most this (R@1 and RR)
NATURAL = ("but-not", "excluding", "without")
EXPLICIT = ("minus", "NOT")


def read_run(folder: Path, label: str) -> dict[str, list[str]]:
    """qid -> docids in rank order, from every collection's ``<collection>.<label>.run`` in ``folder``."""
    run: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for path in sorted(folder.glob(f"*.{label}.run")):
        if path.name.split(".")[0] in ("excluir", "boolquestions_not"):
            continue
        with open(path) as f:
            for line in f:
                qid, _, doc, rank, _score, _tag = line.split()
                run[qid].append((int(rank), doc))
    return {q: [d for _, d in sorted(hits)] for q, hits in run.items()}


def read_scores(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = defaultdict(dict)
    with open(path) as f:
        for line in f:
            qid, _, doc, _rank, score, _tag = line.split()
            run[qid][doc] = float(score)
    return run


def fold_of(row: Mapping) -> int:
    return int(hashlib.sha1(f"fold/{row['collection']}/{row['qid']}".encode()).hexdigest(), 16) % FOLDS


class Judge:
    """Per row: the set-difference qrels and the documents that count as B (contain it, or the described one)."""

    def __init__(self, rows: Sequence[Mapping], data: Path):
        from lsr_lucene.eval.trec import read_qrels

        self.excluded: dict[str, set[str]] = {}
        self.qrels: dict[str, dict[str, int]] = {}
        for collection in sorted({r["collection"] for r in rows}):
            texts, terms = {}, {}
            with open(data / collection / "corpus.jsonl") as f:
                for line in f:
                    doc = json.loads(line)
                    texts[str(doc["id"])] = doc_contents(doc.get("title") or "", doc.get("text") or "")
                    terms[str(doc["id"])] = frozenset(analysed_terms(texts[str(doc["id"])]))
            qrels = read_qrels(data / collection / "qrels.txt")
            found: dict[str, set[str]] = {}
            for r in rows:
                if r["collection"] != collection:
                    continue
                if r["kind"] == "description":
                    out = {r["excluded_doc"]}
                else:
                    out = found.setdefault(r["b"], found.get(r["b"]) or containing(texts, r["b"], terms))
                self.excluded[r["id"]] = out
                self.qrels[r["id"]] = {d: g for d, g in qrels[r["qid"]].items() if g > 0 and d not in out}


def row_figures(rows: Sequence[Mapping], run: Mapping[str, list[str]], judge: Judge, drop: bool = False) -> dict:
    """{row id: (nDCG@10, share of top 10 that is B)}; ``drop``: B's documents removed from the run first."""
    import pytrec_eval

    ranked = {r["id"]: [d for d in run.get(r["id"], []) if not (drop and d in judge.excluded[r["id"]])][:10]
              for r in rows}
    evaluator = pytrec_eval.RelevanceEvaluator({q: judge.qrels[q] for q in ranked}, {"ndcg_cut.10"})
    values = evaluator.evaluate({q: {d: 10.0 - i for i, d in enumerate(docs)} or {"none": 0.0}
                                 for q, docs in ranked.items()})
    return {q: (values[q]["ndcg_cut_10"], sum(d in judge.excluded[q] for d in docs) / 10)
            for q, docs in ranked.items()}


def bootstrap(rows: Sequence[Mapping], value: Callable[[Mapping], float], seed: int = 65) -> tuple[float, float, float]:
    """Mean and 95% percentile interval, resampling topics (all rows of a topic together)."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    for r in rows:
        groups[(r["collection"], r["qid"])].append(value(r))
    keys = sorted(groups)
    if not keys:
        return math.nan, math.nan, math.nan
    mean = sum(v for k in keys for v in groups[k]) / sum(len(groups[k]) for k in keys)
    rng = random.Random(seed)
    means = []
    for _ in range(RESAMPLES):
        pick = [keys[rng.randrange(len(keys))] for _ in keys]
        n = sum(len(groups[k]) for k in pick)
        means.append(sum(v for k in pick for v in groups[k]) / n)
    means.sort()
    return mean, means[int(0.025 * RESAMPLES)], means[int(0.975 * RESAMPLES) - 1]


def objective(rows: Sequence[Mapping], figures: Mapping[str, tuple[float, float]]) -> float:
    """What the selection maximises (fixed before any run): nDCG@10 less the B share above the goal."""
    if not rows:
        return -math.inf
    ndcg = sum(figures[r["id"]][0] for r in rows) / len(rows)
    share = sum(figures[r["id"]][1] for r in rows) / len(rows)
    return ndcg - max(0.0, share - SHARE_GOAL)


def pair_rows(data: Path) -> dict[str, list[dict]]:
    from lsr_lucene.eval.contrastive_metrics import read_excluir

    return {name: read_excluir(data / name / "dev.jsonl") for name in ("excluir", "boolquestions_not")}


def held_out_pair(qid: str) -> bool:
    """The pair benchmarks' held-out third (runs/negation/exclusion.md's rule: sha1 of the row id, first 8 hex)."""
    return int(hashlib.sha1(str(qid).encode("utf-8")).hexdigest()[:8], 16) % 3 == 0


def pair_outcomes(run: Mapping[str, Mapping[str, float]], rows: Sequence[Mapping]) -> dict[str, tuple[float, float]]:
    """{row id: (R@1, RR win)} as lsr_lucene.eval.contrastive_metrics counts them."""
    from lsr_lucene.eval.contrastive_metrics import excluir_outcome

    out = {}
    for r in rows:
        o = excluir_outcome(run.get(str(r["id"]), {}), str(r["pos_id"]), str(r["neg_id"]))
        out[str(r["id"])] = (float(o["pos rank"] == 1), float(o["outcome"] == "win"))
    return out


def pair_filtered(run: Mapping[str, Mapping[str, float]], rows: Sequence[Mapping], data: Path, name: str) -> dict:
    """The run with every document whose text contains one of the parsed B's items removed (the hard filter)."""
    from lsr_lucene.compose.operations import leaf_texts
    from lsr_lucene.compose.searcher import composition
    from lsr_lucene.compose.tree import Node

    texts = {}
    with open(data / name / "corpus.jsonl") as f:
        for line in f:
            doc = json.loads(line)
            texts[str(doc["id"])] = doc_contents(doc.get("title") or "", doc.get("text") or "")
    out = {}
    for r in rows:
        tree = composition(str(r["query"]), str(r["id"])).tree
        items = leaf_texts(tree.b) if isinstance(tree, Node) and tree.op == "not" else []
        scores = run.get(str(r["id"]), {})
        gone = set()
        for item in items:
            try:
                gone |= containing({d: texts[d] for d in scores if d in texts}, item)
            except Exception:  # an item of stop words only excludes nothing
                continue
        out[str(r["id"])] = {d: s for d, s in scores.items() if d not in gone}
    return out


def ran_rows(rows: Sequence[Mapping], new: Path, old: Path) -> list[Mapping]:
    """The rows of the collections that were run (a ``<collection>.compose.run`` in both folders): a collection built
    but not run must not count as empty runs (nDCG@10 0, B share 0)."""
    def ran(folder: Path) -> set[str]:
        return {p.name.split(".")[0] for p in folder.glob("*.compose.run")} - {"excluir", "boolquestions_not"}

    collections = ran(new) & ran(old)
    if not collections:
        raise SystemExit(f"no collection's compose run in both {new} and {old}")
    return [r for r in rows if r["collection"] in collections]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", default="runs/negation/setdiff_queries.jsonl")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--new", required=True, help="folder of the new code's runs (setdiff run / pairs)")
    parser.add_argument("--old", required=True, help="folder of the code before issue 65's runs")
    parser.add_argument("--output", required=True, help="output prefix (.md, .csv)")
    args = parser.parse_args(argv)
    from scripts.negation.setdiff import read_rows
    from scripts.negation.setdiff_tables import write_tables

    data, new, old = Path(args.data), Path(args.new), Path(args.old)
    rows = ran_rows(read_rows(args.queries), new, old)
    judge = Judge(rows, data)
    systems = {"plain": (new, "plain", False), "old default": (old, "compose", False),
               "new default": (new, "compose", False),
               "hard filter (old default, B removed)": (old, "compose", True),
               "new default, B removed": (new, "compose", True)}
    variants = sorted({".".join(p.name.split(".")[1:-1]) for p in new.glob("cranfield.compose-beta*.run")})
    figures = {name: row_figures(rows, read_run(folder, label), judge, drop)
               for name, (folder, label, drop) in systems.items()}
    beta_figures = {label: row_figures(rows, read_run(new, label), judge) for label in variants}
    pairs = pair_rows(data)
    pair_figs: dict[str, dict[str, dict]] = {}
    for name, prow in pairs.items():
        runs = {"plain": read_scores(new / f"{name}.plain.run"), "old default": read_scores(old / f"{name}.compose.run"),
                "new default": read_scores(new / f"{name}.compose.run")}
        runs["hard filter (old default, B removed)"] = pair_filtered(runs["old default"], prow, data, name)
        for p in sorted(new.glob(f"{name}.compose-beta*.run")):
            runs[".".join(p.name.split(".")[1:-1])] = read_scores(p)
        pair_figs[name] = {label: pair_outcomes(run, prow) for label, run in runs.items()}
    write_tables(Path(args.output), rows, figures, beta_figures, pairs, pair_figs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
