"""Issue 36, item 2: does another way of fusing the negation `default`'s legs generalise across ExcluIR and
BoolQuestions, judged by cross-validation and held-out parts rather than by all dev queries?

The previous `default` (fusion-gated with its dense leg) scored a fired query's candidates by
final = max(Â' − λ·gated(B̂, τ), 0.05·Â'), Â' = minmax(minmax(A) + w·minmax(cos A)) (w 1, λ 0.7, τ 0.9).
Each family below varies one part of that formula over a small grid of w, λ, τ:

- ``cos A only``: the formula as it was (cosine of A's text, min-max), the previous default's own grid;
- ``cos A + cos query``: the dense leg is the sum of the cosines of A's text and of the whole query;
- ``z-score``: each leg z-scored over the candidates instead of min-max scaled before blending;
- ``RRF``: rank fusion 1/(60 + rank) of the splade and dense legs instead of score blending;
- ``+ BM25 of A`` / ``+ BM25 of the query``: a third, lexical leg (in-memory BM25, k1 0.9, b 0.4);
- ``B blended with cos B``: the penalised side also gets the dense cosine of B's text (B̂ ← minmax(B̂ + wb·cos));
- ``+ cos to the best A match``: a third leg, the dense cosine of every candidate with the document that tops the
  blend of the first two (a one-document dense feedback: Â' = minmax(Â + w·cos A + wn·minmax(cos(d, d*))));
- ``penalty only on documents about B``: a document pays only as far as it is closer to B's text than to A's
  (cos B − cos A > δ, soft over 0.2), the failure seen on ExcluIR (the answer mentions B in passing).

Per family: the best setting on all dev queries (in-sample), 5-fold CV repeated over seeded shufflings with the
worst case of both benchmarks as criterion, the same chosen on ExcluIR only (BoolQuestions never read), and the
seeded tuning part → held-out third of :mod:`lsr_lucene.experiments.negation_harm`. A second table gives the
ceiling of each A leg: R@1 of the A leg alone once the excluded document is removed. Components come from the
compose code path (exact dot products, :func:`lsr_lucene.compose.execute.execute` with the dense leg), and the
shipped default recomputed here (the neighbour term with its compose constants) must equal compose's fused scores
(checked). The neighbour family won: it is the default since (``--neighbour-weight``, README).
"""
from __future__ import annotations

import random
import sys
from functools import partial
from pathlib import Path
from typing import Callable, Mapping, Sequence, cast

import numpy as np

from lsr_lucene.compose.operations import (DEFAULT_DENSE_WEIGHT, DEFAULT_GATE, DEFAULT_NEIGHBOUR_WEIGHT,
                                           DENSE_NOT_LAMBDA, GATED_FLOOR, FusionPlan, Settings, VectorPlan, fuse,
                                           plan_inputs)
from lsr_lucene.io.vectors import read_metadata

DEFAULT_LABEL = "w=1 λ=0.7 τ=0.9"  # the previous default (no neighbour term)
# the shipped default's parameters (compose's constants) and the previous default's
DEFAULT = {"w": DEFAULT_DENSE_WEIGHT, "lam": DENSE_NOT_LAMBDA, "gate": DEFAULT_GATE, "wn": DEFAULT_NEIGHBOUR_WEIGHT}
PREVIOUS = {"w": 1.0, "lam": 0.7, "gate": 0.9}
WEIGHTS = (0.5, 0.75, 1.0, 1.5, 2.0)
LAMBDAS = (0.5, 0.7, 1.0)
GATES = (0.8, 0.9, 0.95)
REPEATS = 10
WORST, EXCLUIR_ONLY, HELD_OUT = "5-fold CV, worst case of both", "5-fold CV, chosen on ExcluIR only", \
    "tuning part → held-out third"


def mm(x: np.ndarray) -> np.ndarray:
    """Min-max scaling to [0, 1] (all 0 when constant), as :func:`lsr_lucene.compose.operations.minmax`."""
    low, high = x.min(), x.max()
    return (x - low) / (high - low) if high > low else np.zeros_like(x)


def zscore(x: np.ndarray) -> np.ndarray:
    """(x − mean) / std over the candidates (all 0 when constant)."""
    s = x.std()
    return (x - x.mean()) / s if s > 0 else np.zeros_like(x)


def rrf(x: np.ndarray, k: int = 60) -> np.ndarray:
    """1/(k + rank), rank 1 the highest score (ties by position, as a stable sort)."""
    order = np.argsort(-x, kind="stable")
    rank = np.empty(len(x))
    rank[order] = np.arange(1, len(x) + 1)
    return 1.0 / (k + rank)


def gated_final(a: np.ndarray, b: np.ndarray, lam: float, gate: float, pay: np.ndarray | float = 1.0) -> np.ndarray:
    """max(Â − λ·pay·max(0, B̂ − τ)/(1 − τ), φ·Â): the fusion-gated score (``pay`` scales each document's penalty)."""
    return np.maximum(a - lam * pay * np.maximum(0.0, b - gate) / (1.0 - gate), GATED_FLOOR * a)


def grid(extra: Sequence[tuple[str, dict]] = (("", {}),), weights: Sequence[float] = WEIGHTS) -> list[tuple]:
    """(label, parameters) over w × λ × τ and the family's own ``extra`` settings."""
    return [(f"{tag}w={w:g} λ={lam:g} τ={gate:g}", {**more, "w": w, "lam": lam, "gate": gate})
            for tag, more in extra for w in weights for lam in LAMBDAS for gate in GATES]


def near_best(c: Mapping, a: np.ndarray) -> np.ndarray:
    """Every candidate's dense cosine with the best A match d* (argmax of ``a``; ties: the first candidate, i.e. the
    smallest docid, as compose's candidates are sorted)."""
    return c["matrix"][c["rows"]] @ c["matrix"][c["rows"][int(np.argmax(a))]]


def score(c: Mapping, p: Mapping) -> np.ndarray:
    """Final scores of one fired query's candidates (``c``: its components) under parameters ``p``."""
    norm = {"mm": mm, "z": zscore, "rrf": rrf}[p.get("norm", "mm")]
    dense = c["cos A"] + c["cos query"] if p.get("dense") == "A+query" else c["cos A"]
    a = norm(c["A"]) + p["w"] * norm(dense)
    if p.get("wn"):
        a = a + p["wn"] * norm(near_best(c, a))
    if p.get("bm25"):
        a = a + p["bm25 w"] * norm(c[p["bm25"]])
    b = mm(c["B"] + p["wb"] * mm(c["cos B"])) if p.get("wb") else c["B"]
    pay = np.clip((c["cos B"] - c["cos A"] - p["delta"]) / 0.2, 0.0, 1.0) if "delta" in p else 1.0
    return gated_final(mm(a), b, p["lam"], p["gate"], pay)


FAMILIES: dict[str, list[tuple[str, dict]]] = {
    "cos A only (the previous default's grid)": grid(),
    "cos A + cos query": grid([("", {"dense": "A+query"})]),
    "z-score legs": grid([("", {"norm": "z"})]),
    "RRF of the legs": grid([("", {"norm": "rrf"})]),
    "+ BM25 of A": grid([(f"bm25 {v:g}, ", {"bm25": "bm25 A", "bm25 w": v}) for v in (0.25, 0.5, 1.0)], (0.75, 1.0)),
    "+ BM25 of the query": grid([(f"bm25 {v:g}, ", {"bm25": "bm25 query", "bm25 w": v}) for v in (0.25, 0.5, 1.0)],
                                (0.75, 1.0)),
    "B blended with cos B": grid([(f"wb={v:g}, ", {"wb": v}) for v in (0.25, 0.5, 1.0)], (0.75, 1.0)),
    "+ cos to the best A match": grid([(f"wn={v:g}, ", {"wn": v}) for v in (0.5, 1.0, 1.5, 2.0)], (0.75, 1.0)),
    "+ cos to the best A match, the default's w, λ, τ": [(f"wn={v:g}, {DEFAULT_LABEL}", {"wn": v, "w": 1.0, "lam": 0.7,
                                                                                      "gate": 0.9})
                                                          for v in (0.0, 0.5, 1.0, 1.5, 2.0)],
    "penalty only on documents about B": grid([(f"δ={v:g}, ", {"delta": v}) for v in (-0.5, -0.4, -0.3, -0.2)],
                                               (0.75, 1.0)),
}


def components(folder: Path, work: Path, encoder, model: str, threads: int) -> dict:
    """One benchmark's dev rows, the default's run, and per fired query (a gated not node with the dense leg
    over a single A vector) its candidates and legs: splade A (raw), B̂ (B's scaled, fused side), the dense
    cosines of A's text, of the query and of B's text, and BM25 of A's text and of the query."""
    from lsr_lucene.compose.backends import ExactBackend
    from lsr_lucene.compose.compositions import parse_topics
    from lsr_lucene.compose.dense_leg import DenseLeg
    from lsr_lucene.compose.execute import compose, execute
    from lsr_lucene.eval.contrastive_metrics import read_excluir
    from lsr_lucene.experiments.excluir import ensure_vectors
    from lsr_lucene.experiments.negation_harm import ensure_dense
    from lsr_lucene.experiments.positive_leg import MemoryBM25, negative_text
    from lsr_lucene.io.corpus import read_corpus

    rows = read_excluir(folder / "dev.jsonl")
    slug = work / folder.resolve().name
    vectors = ensure_vectors(folder / "corpus.jsonl", slug, model, threads)
    scale = read_metadata(vectors).get("scale") or 100
    backend = ExactBackend(vectors)
    leg = DenseLeg(ensure_dense(folder / "corpus.jsonl", slug / "dense", threads), backend.n)
    bm25 = MemoryBM25({d.id: f"{d.title or ''} {d.text or ''}".strip() for d in read_corpus(folder / "corpus.jsonl")})
    comps = parse_topics({str(r["id"]): str(r["query"]) for r in rows})
    plans = compose(comps, Settings(dense=True), encoder)
    traces: dict = {}
    base = execute([c.qid for c in comps], plans, backend, scale, 1000, traces=traces, dense=leg)
    legs = {}
    matrix = np.asarray(leg.embeddings.vectors, dtype=np.float32).astype(np.float64)
    for comp, plan in zip(comps, plans):
        if comp.qid not in traces or not (isinstance(plan, FusionPlan) and plan.gate is not None
                                           and plan.dense_text is not None and isinstance(plan.a, VectorPlan)):
            continue  # not fired, or a nested shape: every family keeps the default's run
        trace, record = traces[comp.qid], cast(list, [])
        fuse(plan, trace, record)
        cand = list(trace[0])
        dense_at = [kind for kind, _ in plan_inputs(plan)].index("dense")
        assert plan.dense_text is not None and comp.text is not None  # checked above; a parsed query has its text
        cos_query, cos_b = leg.scores([comp.text, negative_text(comp.tree)], cand)
        bm_a, bm_q = bm25.scores(plan.dense_text), bm25.scores(comp.text)
        column = {"A": trace[0], "B": record[-1].b_scaled, "cos A": trace[dense_at], "cos query": cos_query,
                  "cos B": cos_b, "bm25 A": bm_a, "bm25 query": bm_q, "fused": record[-1].fused}
        legs[comp.qid] = {"cand": cand, **{k: np.array([v[d] for d in cand], dtype=float) for k, v in column.items()}}
        legs[comp.qid].update(ids=np.array(cand), matrix=matrix,
                              rows=np.array([leg.row[d] for d in cand], dtype=np.int64))
    return {"rows": rows, "base": {q: dict(r) for q, r in base.items()}, "legs": legs}


def per_query(bench: Mapping, scorer: Callable[[Mapping], np.ndarray] | None, hits: int = 1000) -> dict:
    """``{qid: ExcluIR figures}`` of one benchmark with fired queries rescored by ``scorer`` (None: the default's
    run); a run keeps the best ``hits`` (ties by docid, the run convention)."""
    from lsr_lucene.eval.contrastive_metrics import excluir_metrics

    out = {}
    for row in bench["rows"]:
        qid = str(row["id"])
        c = bench["legs"].get(qid)
        if c is None or scorer is None:
            run = {qid: bench["base"][qid]}
        else:
            s = np.round(scorer(c), 12)
            order = np.lexsort((c["ids"], -s))[:hits]
            run = {qid: {c["cand"][i]: float(s[i]) for i in order}}
        out[qid] = excluir_metrics(run, [row])
    return out


def check_default(bench: Mapping) -> float:
    """Largest |default recomputed here − compose's fused score| over the fired queries' candidates (must be ~0)."""
    return max((float(np.abs(score(c, DEFAULT) - c["fused"]).max()) for c in bench["legs"].values()), default=0.0)


def shuffled(rows: Sequence[Mapping], seed: int) -> list:
    """The rows in a seeded order (repeat ``seed`` of the repeated CV; 0: the file order)."""
    rows = list(rows)
    if seed:
        random.Random(seed).shuffle(rows)
    return rows


def family_rows(figures: Mapping, rows_by_bench: Mapping[str, Sequence[Mapping]], labels: Sequence[str],
                folds: int = 5, repeats: int = REPEATS) -> list[tuple[str, dict, str]]:
    """(procedure, {benchmark: figures}, chosen settings) for one family: in-sample best, repeated k-fold CV on the
    worst case of both and on ExcluIR only, and tuning part → held-out third."""
    from lsr_lucene.experiments.negation_harm import held_out
    from lsr_lucene.experiments.transfer import _label_counts, choose, cross_validated, mean_figures

    names = list(rows_by_bench)
    out = []
    best = choose(figures, rows_by_bench, labels)
    out.append(("in-sample best (all dev, worst case)",
                {n: mean_figures(figures[n][best], rows_by_bench[n]) for n in names}, best))
    for title, criterion in ((WORST, names), (EXCLUIR_ONLY, names[:1])):
        sums: dict = {n: {} for n in names}
        chosen: list[str] = []
        for seed in range(repeats):
            cv = cross_validated(figures, {n: shuffled(rows_by_bench[n], seed) for n in names}, criterion, labels,
                                 folds)
            chosen += cv["chosen"]
            for n in names:
                for key, value in cv["figures"][n].items():
                    sums[n][key] = sums[n].get(key, 0.0) + value / repeats
        counts = _label_counts(chosen).split("; ")
        out.append((title + f" (×{repeats})", sums, "; ".join(counts[:3]) + ("; …" if len(counts) > 3 else "")))
    tune = {n: [r for r in rows_by_bench[n] if not held_out(str(r["id"]))] for n in names}
    label = choose(figures, tune, labels)
    out.append((HELD_OUT, {n: mean_figures(figures[n][label], [r for r in rows_by_bench[n] if held_out(str(r["id"]))])
                           for n in names}, label))
    return out


def ceiling_table(benches: Mapping[str, Mapping]):
    """R@1 of each A leg alone among the fired queries once the excluded document is removed (a perfect penalty):
    how far the positive leg can take a benchmark."""
    import pandas as pd

    legs = {"splade A": lambda c: c["A"], "cos A": lambda c: c["cos A"], "cos query": lambda c: c["cos query"],
            "BM25 A": lambda c: c["bm25 A"],
            "the previous default: minmax(A) + minmax(cos A)": lambda c: mm(c["A"]) + mm(c["cos A"]),
            "the default: + minmax(cos with the best A match)":
                lambda c: mm(c["A"]) + mm(c["cos A"]) + mm(near_best(c, mm(c["A"]) + mm(c["cos A"]))),
            "minmax(A) + minmax(cos A + cos query)": lambda c: mm(c["A"]) + mm(c["cos A"] + c["cos query"]),
            "z(A) + z(cos A)": lambda c: zscore(c["A"]) + zscore(c["cos A"]),
            "minmax(A) + minmax(cos A) + 0.5·minmax(BM25 A)":
                lambda c: mm(c["A"]) + mm(c["cos A"]) + 0.5 * mm(c["bm25 A"])}
    records = {}
    for label, fn in legs.items():
        rec = {}
        for name, bench in benches.items():
            hits = []
            for row in bench["rows"]:
                c = bench["legs"].get(str(row["id"]))
                if c is None:
                    continue
                s = fn(c).astype(float)
                keep = [i for i, d in enumerate(c["cand"]) if d != str(row["neg_id"])]
                pos = c["cand"].index(str(row["pos_id"])) if str(row["pos_id"]) in c["cand"] else None
                hits.append(pos is not None and all(s[i] < s[pos] or (s[i] == s[pos] and c["cand"][i] >= c["cand"][pos])
                                                    for i in keep))
            rec[f"{name}: R@1 without the excluded document"] = sum(hits) / len(hits)
            rec[f"{name}: queries"] = len(hits)
        records[label] = rec
    df = pd.DataFrame.from_dict(records, orient="index")
    df.index.name = "A leg"
    return df


def run(data: Sequence[str | Path], work: str | Path, output_dir: str | Path, model: str = "splade-tiny",
        threads: int = 2, folds: int = 5, repeats: int = REPEATS, overwrite: bool = False) -> int:
    """Every family on ExcluIR dev and BoolQuestions dev; writes leg_fusion{,_ceiling}.{md,csv}."""
    import pandas as pd

    from lsr_lucene.compose.query_encoder import CachedQueryEncoder
    from lsr_lucene.eval.trec import to_markdown, write_table
    from lsr_lucene.experiments.contrastive_configs import make_encoders
    from lsr_lucene.experiments.contrastive_runs import read_query_cache, write_query_cache
    from lsr_lucene.experiments.excluir import RR_NOTE
    from lsr_lucene.experiments.transfer import benchmark_name, mean_figures

    out = Path(output_dir)
    for stem in ("leg_fusion", "leg_fusion_ceiling"):
        for suffix in (".csv", ".md"):
            if (out / (stem + suffix)).exists() and not overwrite:
                from lsr_lucene.errors import InputError
                raise InputError(f"{out / (stem + suffix)} exists; pass --overwrite to replace it")
    cache_path = Path(work) / f"query-vectors-{Path(model).name}.json"
    encoder = CachedQueryEncoder(make_encoders(model, ("full",), threads=threads)["full"], read_query_cache(cache_path))
    benches = {benchmark_name(folder, "dev"): components(Path(folder), Path(work), encoder, model, threads)
               for folder in data}
    write_query_cache(cache_path, encoder.cache)
    for name, bench in benches.items():
        gap = check_default(bench)
        print(f"{name}: {len(bench['legs'])} fired queries rescored; default recomputed vs compose: max |Δ| {gap:.2e}",
              file=sys.stderr)
        if gap > 1e-9:
            raise RuntimeError(f"{name}: the recomputed default differs from compose's scores by {gap}")
    rows_by_bench = {name: bench["rows"] for name, bench in benches.items()}
    names = list(benches)
    records = []

    def add(family: str, procedure: str, figs: Mapping, chosen: str) -> None:
        rec = {"family": family, "procedure": procedure}
        for n in names:
            rec.update({f"{n}: R@1": figs[n]["R@1"], f"{n}: ΔR@1": figs[n]["ΔR@1"], f"{n}: RR": figs[n]["RR"]})
        rec["worst case: R@1"] = min(figs[n]["R@1"] for n in names)
        rec["worst case: RR"] = min(figs[n]["RR"] for n in names)
        rec["chosen"] = chosen
        records.append(rec)

    from lsr_lucene.experiments.negation_harm import held_out
    fixed = (("the previous default (cos A only)", {n: per_query(b, lambda c: score(c, PREVIOUS))
                                                    for n, b in benches.items()}, DEFAULT_LABEL),
             ("the default (compose's run)", {n: per_query(b, None) for n, b in benches.items()},
              f"wn={DEFAULT['wn']:g}, w={DEFAULT['w']:g} λ={DEFAULT['lam']:g} τ={DEFAULT['gate']:g}"))
    for title, figures, label in fixed:
        add(title, "all dev queries", {n: mean_figures(figures[n], rows_by_bench[n]) for n in names}, label)
        add(title, "held-out third", {n: mean_figures(figures[n], [r for r in rows_by_bench[n]
                                                                    if held_out(str(r["id"]))]) for n in names}, label)
    for family, settings in FAMILIES.items():
        print(f"== {family}: {len(settings)} settings", file=sys.stderr)
        figures = {n: {label: per_query(b, partial(score, p=p)) for label, p in settings} for n, b in benches.items()}
        for procedure, figs, chosen in family_rows(figures, rows_by_bench, [label for label, _ in settings], folds,
                                                   repeats):
            add(family, procedure, figs, chosen)
    table = pd.DataFrame(records).set_index(["family", "procedure"])
    ceiling = ceiling_table(benches)
    note = (f"Each family's grid (w × λ × τ and its own knob) rescored on the fired queries of ExcluIR dev (300) and "
            f"BoolQuestions dev (107), other queries as the default runs them. In-sample: best worst-case objective "
            f"(R@1 + ΔR@1 + RR) on all dev queries; {folds}-fold CV ×{repeats}: seeded shufflings, each fold's "
            f"setting chosen on the other folds, figures on the held-out folds averaged over the repeats (chosen on "
            f"ExcluIR only: BoolQuestions figures on all its queries, never read); held-out third: chosen on the "
            f"seeded tuning part of both, figures on the held-out third (ExcluIR 107, BoolQuestions 35). "
            f"scripts/run_leg_fusion.sh.\n\n")
    out.mkdir(parents=True, exist_ok=True)
    write_table(table, out / "leg_fusion", overwrite=overwrite, preamble=note + RR_NOTE)
    write_table(ceiling, out / "leg_fusion_ceiling", overwrite=overwrite,
                preamble="R@1 of the positive leg alone on the fired queries (one gated not over one A vector) once "
                         "the excluded document is removed from the candidates: what a perfect penalty would give "
                         "with that leg.\n\n")
    print(to_markdown(table))
    print(to_markdown(ceiling))
    return 0


def main(argv: list[str] | None = None) -> int:
    """CLI of this experiment (scripts/run_leg_fusion.sh)."""
    import argparse

    ap = argparse.ArgumentParser(allow_abbrev=False, prog="python -m lsr_lucene.experiments.leg_fusion",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--data", action="append", required=True, help="benchmark folder, ExcluIR first (repeatable)")
    ap.add_argument("--work", required=True, help="folder of cached vectors")
    ap.add_argument("--output-dir", required=True, help="folder for leg_fusion{,_ceiling}.{md,csv}")
    ap.add_argument("--model", default="splade-tiny")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=REPEATS, help="CV repeats over seeded shufflings")
    ap.add_argument("--overwrite", action="store_true", help="replace existing tables")
    return run(**vars(ap.parse_args(argv)))


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
