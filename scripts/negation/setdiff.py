"""Run the set-difference exclusion benchmark (issue 65 item 4) and the pair benchmarks beside it.

``run``: every row of ``setdiff_queries.jsonl`` (:mod:`scripts.negation.setdiff_queries`) through plain search and
through ``compose``'s default (``ComposeSearcher`` on the collection's splade-tiny index with its dense leg, no other
option), with the code on ``PYTHONPATH`` (so the code before issue 65 runs from an unpacked tree of it); with the new
code, also the default re-fused with each β of the short-term penalty (``--term-scales``; "none": B's scale alone,
the old gate with the new absence rule) for the selection in folds. ``pairs``: the same variants on ExcluIR dev and
BoolQuestions dev (R@1, RR). ``score`` (:mod:`scripts.negation.setdiff_score`) makes the tables.

Usage: python -m scripts.negation.setdiff run --work work --output work/setdiff/new [--term-scales 0,0.25,none]
       python -m scripts.negation.setdiff pairs --work work --output work/setdiff/new
"""
from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Sequence

from tqdm import tqdm

COLLECTIONS = ("cranfield", "cisi", "cacm", "med", "npl")
DEPTH = 1000


def read_rows(path: str | Path) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def write_run(path: Path, run: dict[str, list[tuple[str, float]]], tag: str) -> None:
    """A TREC run (ties by docid, as the product writes them), through a temporary file."""
    from lsr_lucene.io.ranking import ordered

    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for qid, hits in run.items():
            for rank, (doc, score) in enumerate(ordered(hits), 1):
                f.write(f"{qid} Q0 {doc} {rank} {score:.6f} {tag}\n")
    tmp.replace(path)


def scales(spec: str) -> list[tuple[str, float | None, bool]]:
    """(label, β, lower-case B only) of each variant: "none" (B's scale alone), "X" (β X, any short B), "Xl" (β X,
    a short B without capitals)."""
    out: list[tuple[str, float | None, bool]] = []
    for x in (x for x in spec.split(",") if x):
        out.append((x, None, False) if x == "none" else (x, float(x.rstrip("l")), x.endswith("l")))
    return out


def with_scale(plan, beta: float | None, lower: bool = False):
    """The plan with every gated not node's β set to ``beta`` where its B is a short term (None: no text penalty)."""
    from lsr_lucene.compose.penalty import term_shaped
    from lsr_lucene.compose.operations import FusionPlan

    if not isinstance(plan, FusionPlan):
        return plan
    short = bool(plan.absence_texts) and term_shaped(plan.absence_texts, lower)
    return dataclasses.replace(plan, a=with_scale(plan.a, beta, lower), b=with_scale(plan.b, beta, lower),
                               term_scale=beta if short else None)


def compose_runs(searcher, ids: Sequence[str], queries: Sequence[str],
                 betas: Sequence[tuple[str, float | None, bool]]) -> dict:
    """{label: run} of the default and, with the new code, of each β re-fused from the same legs."""
    from lsr_lucene.compose.operations import FusionPlan, fuse
    from lsr_lucene.compose.searcher import composition
    from lsr_lucene.io.ranking import top_hits

    comps = [composition(q, i) for q, i in zip(queries, ids)]
    runs: dict[str, dict] = {"compose": {}}
    has_scale = any(f.name == "term_scale" for f in dataclasses.fields(FusionPlan))
    labels = [f"compose-beta{label}" for label, _, _ in betas] if has_scale else []
    for label in labels:
        runs[label] = {}
    for start in tqdm(range(0, len(comps), 16), desc="compose", unit="batch"):
        batch = comps[start:start + 16]
        plans = searcher.plans(batch)
        traces: dict = {}
        ranked = searcher.rank(batch, plans, DEPTH, traces=traces)
        for comp, plan in zip(batch, plans):
            runs["compose"][comp.qid] = ranked[comp.qid]
            for label, (_, beta, lower) in zip(labels, betas):
                runs[label][comp.qid] = (top_hits(fuse(with_scale(plan, beta, lower), traces[comp.qid]), DEPTH)
                                         if isinstance(plan, FusionPlan) else ranked[comp.qid])
    return runs


def run_setdiff(args) -> None:
    from lsr_lucene.compose.searcher import ComposeSearcher
    from lsr_lucene.search.impact_searcher import ImpactSearcher

    rows = read_rows(args.queries)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    for collection in args.collections.split(","):
        runs: dict[str, dict] = {}
        mine = [r for r in rows if r["collection"] == collection]
        index = Path(args.work) / collection / "index-splade-tiny"
        if not mine or not index.is_dir():
            print(f"skip {collection}: {index} missing")
            continue
        ids, texts = [r["id"] for r in mine], [r["query"] for r in mine]
        plain = ImpactSearcher(index)
        hits = plain.batch_search(texts, ids, DEPTH)
        runs.setdefault("plain", {}).update({q: [(h.docid, h.score) for h in hs] for q, hs in hits.items()})
        plain.close()
        dense = index / "dense" if (index / "dense").is_dir() else Path(args.work) / collection / "dense"
        with ComposeSearcher(index, dense=str(dense)) as searcher:
            for label, run in compose_runs(searcher, ids, texts, scales(args.term_scales)).items():
                runs.setdefault(label, {}).update(run)
        for label, run in runs.items():
            write_run(out / f"{collection}.{label}.run", run, label)
        print(f"{collection}: {len(mine)} rows")


def run_pairs(args) -> None:
    """ExcluIR dev and BoolQuestions dev through the default (exact dot products, as runs/negation/exclusion.md)."""
    from lsr_lucene.compose.backends import ExactBackend
    from lsr_lucene.compose.dense_leg import DenseLeg
    from lsr_lucene.compose.compositions import parse_topics
    from lsr_lucene.compose.execute import compose, execute
    from lsr_lucene.compose.operations import FusionPlan, Settings, fuse
    from lsr_lucene.compose.query_encoder import QueryEncoder
    from lsr_lucene.eval.contrastive_metrics import read_excluir
    from lsr_lucene.io.ranking import top_hits
    from lsr_lucene.io.vectors import read_metadata

    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    encoder = QueryEncoder("splade-tiny")
    has_scale = any(f.name == "term_scale" for f in dataclasses.fields(FusionPlan))
    betas = scales(args.term_scales) if has_scale else []
    for name in ("excluir", "boolquestions_not"):
        rows = read_excluir(Path(args.data) / name / "dev.jsonl")
        vectors = Path(args.work) / name / "vectors"
        backend = ExactBackend(vectors)
        scale = read_metadata(vectors).get("scale") or 100  # beside the folder (issue 67) or inside it
        leg = DenseLeg(Path(args.work) / name / "dense", backend.n)
        comps = parse_topics({str(r["id"]): str(r["query"]) for r in rows})
        qids = [c.qid for c in comps]
        plans = compose(comps, Settings(dense=True), encoder)
        traces: dict = {}
        run = execute(qids, plans, backend, scale, DEPTH, dense=leg, traces=traces)
        write_run(out / f"{name}.compose.run", run, "compose")
        from lsr_lucene.compose.backends import make_spec, spec_matches

        specs = [make_spec(str(r["id"]), v, scale) for r, v in zip(rows, encoder.encode([str(r["query"]) for r in rows]))]
        write_run(out / f"{name}.plain.run", backend.search_many([s for s in specs if s and spec_matches(s)], DEPTH),
                  "plain")
        for name_, beta, lower in betas:
            label = f"compose-beta{name_}"
            refused = {q: top_hits(fuse(with_scale(p, beta, lower), traces[q]), DEPTH) if isinstance(p, FusionPlan)
                       else run[q] for q, p in zip(qids, plans)}
            write_run(out / f"{name}.{label}.run", refused, label)
        print(f"{name}: {len(rows)} rows")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "pairs"):
        p = sub.add_parser(name)
        p.add_argument("--work", default="work")
        p.add_argument("--data", default="../shared/data")
        p.add_argument("--queries", default="runs/negation/setdiff_queries.jsonl")
        p.add_argument("--collections", default=",".join(COLLECTIONS))
        p.add_argument("--term-scales", default="0,0.1,0.25,0.5,1,0l,0.1l,0.25l,0.5l,1l,none")
        p.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    (run_setdiff if args.command == "run" else run_pairs)(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
