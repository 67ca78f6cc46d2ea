"""The negation default's per-candidate signals, cached for the fitted penalty (issue 49).

For every row of the nested experiment: the default's fused score and a few signals it already computes on its best
candidates, cached once so that fitting and nested selection (:mod:`scripts.negation.negation_fitted`) run in
seconds.

The default is run as the product runs it (:func:`~lsr_lucene.compose.execute.execute` with its traces); its fused
not node is re-fused from those traces with a record (:class:`~lsr_lucene.compose.operations.FusedNode`), so every
signal is the value the default itself used. Only the dense cosine of B's texts is new (the largest over B's items).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Sequence

# per candidate, in this order: A's and B's min-max scaled sparse scores, the dense cosines of A's and of B's text,
# the gated penalty max(0, B̂ − τ)/(1 − τ) and the share of B's mentions stated absent
FEATURES = ("A sparse", "A dense", "B sparse", "B dense", "B gated", "B absent")
TOP = 20  # candidates per row the fitted score may reorder (the default's best); beyond them the default's order


def node_features(node, b_dense: Mapping[str, float], docs: Sequence[str]) -> dict[str, list[float]]:
    """``{doc: FEATURES values}`` from a gated not node's record (a
    :class:`~lsr_lucene.compose.operations.FusedNode`) and the dense cosine of B's texts."""
    from lsr_lucene.compose.operations import gated
    from lsr_lucene.compose.scaling import minmax

    a = minmax(node.a)
    b = node.b_scaled if node.b_scaled is not None else minmax(node.b)
    absent = node.absence or {}
    dense = node.dense or {}
    return {d: [a.get(d, 0.0), dense.get(d, 0.0), b.get(d, 0.0), b_dense.get(d, 0.0),
                gated(b.get(d, 0.0), node.gate), absent.get(d, 0.0)] for d in docs}


def gated_node(record: Sequence):
    """The outermost gated not node of a fused query's record (children come before parents), None if it has none."""
    nodes = [n for n in record if n.node_op == "not" and n.gate is not None]
    return min(nodes, key=lambda n: (len(n.path), n.path)) if nodes else None


def kept_docs(run: Sequence[tuple[str, float]], pos: str, negs: Sequence[str], top: int = TOP) -> list[str]:
    """The candidates a row keeps: the run's ``top`` best, then the wanted and excluded passages if retrieved."""
    retrieved = {d for d, _ in run}
    keep = [d for d, _ in run[:top]]
    return keep + [d for d in dict.fromkeys([pos, *negs]) if d in retrieved and d not in keep]


def row_features(rows: Sequence[Mapping], corpora: Mapping[str, Path], work: Path, model: str = "splade-tiny",
                 threads: int = 1, top: int = TOP) -> list[dict]:
    """Per row: its id, wanted and excluded passages, the default's (R@1, RR) ``outcome`` on its whole run, and
    ``candidates``: ``[doc, rank, default score, *FEATURES]`` for :func:`kept_docs` (rank 0-based in the default's
    run; a row whose plan has no gated not node keeps the default's scores and all-zero features)."""
    from lsr_lucene.compose.compositions import parse_topics
    from lsr_lucene.compose.execute import compose, execute
    from lsr_lucene.compose.operations import FusionPlan, Settings, fuse
    from scripts.negation.contrastive_runs import write_query_cache
    from scripts.negation.negation_nested import CANDIDATES, open_corpus, query_encoder, row_outcome
    from lsr_lucene.progress import progress_bar

    encoder, cache_path = query_encoder(work, model, threads)
    settings = Settings(**CANDIDATES["default"])
    out: list[dict] = [{}] * len(rows)
    for key in progress_bar(list(corpora), desc="corpora", unit="corpus"):
        idx = [i for i, r in enumerate(rows) if r["corpus"] == key]
        if not idx:
            continue
        backend, scale, leg = open_corpus(key, corpora[key], work, model, threads)
        comps = parse_topics({rows[i]["id"]: rows[i]["query"] for i in idx})
        plans = dict(zip([c.qid for c in comps], compose(comps, settings, encoder)))
        traces: dict = {}
        run = execute(list(plans), list(plans.values()), backend, scale, 1000, traces=traces, dense=leg)
        for i in progress_bar(idx, desc=key, unit="row"):
            row = rows[i]
            hits = run.get(row["id"], [])
            docs = kept_docs(hits, row["pos_id"], row["neg_ids"], top)
            feats: dict[str, list[float]] = {d: [0.0] * len(FEATURES) for d in docs}
            plan = plans[row["id"]]
            if isinstance(plan, FusionPlan) and row["id"] in traces:
                record: list = []
                fuse(plan, traces[row["id"]], record)
                node = gated_node(record)
                if node is not None:
                    b_texts = _b_texts(plan, node.path)
                    cosines = leg.scores(b_texts, docs) if b_texts else []
                    b_dense = {d: max(c[d] for c in cosines) for d in docs} if cosines else {}
                    feats = node_features(node, b_dense, docs)
            default = dict(hits)
            rank = {d: k for k, (d, _) in enumerate(hits)}
            out[i] = {"id": row["id"], "pos": row["pos_id"], "negs": list(row["neg_ids"]),
                      "outcome": list(row_outcome(default, row["pos_id"], row["neg_ids"])),
                      "candidates": [[d, rank[d], default[d], *feats[d]] for d in docs]}
    write_query_cache(cache_path, encoder.cache)
    return out


def _b_texts(plan, path: str) -> list[str]:
    """B's leaf texts of the fused node at ``path`` ("" the root, "A", "A.B", ...): the texts its absence rule
    reads, which the default always sets on a gated not node."""
    for step in [p for p in path.split(".") if p]:
        plan = plan.a if step == "A" else plan.b
    return list(plan.absence_texts)


def write_features(path: Path, rows: Sequence[Mapping], features: Sequence[Mapping]) -> None:
    """The cache: one JSON line per row (its fold group, part and source beside :func:`row_features`' fields)."""
    from scripts.negation.negation_harm import held_out
    from scripts.negation.negation_nested import group_of
    from lsr_lucene.io.output import write_text_atomic

    lines = [json.dumps({"source": r["source"], "family": r.get("family", ""), "group": group_of(r),
                         "part": "held-out" if held_out(r["id"]) else "tune", **f}) + "\n"
             for r, f in zip(rows, features)]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, "".join(lines))


def read_features(path: Path) -> list[dict]:
    """The cached rows of :func:`write_features`."""
    with Path(path).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main(argv: list[str] | None = None) -> int:
    """CLI: ``--excluir DIR --boolq DIR [--wiki FILE] --work W --output FILE``: the rows of the nested experiment
    (:func:`~scripts.negation.negation_nested.load_rows`) and their candidates' signals, as JSON lines."""
    import argparse

    from scripts.negation.negation_nested import load_rows, row_arguments
    from lsr_lucene.io.output import refuse_existing

    parser = argparse.ArgumentParser(prog="python -m scripts.negation.negation_features",
                                     description=__doc__.splitlines()[0])
    row_arguments(parser)
    parser.add_argument("--top", type=int, default=TOP, help=f"candidates kept per row (default {TOP})")
    parser.add_argument("--output", required=True, type=Path, help="the JSON-lines cache to write")
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    refuse_existing(args.output, args.overwrite)
    rows, corpora = load_rows(args.excluir, args.boolq, args.wiki, args.work, args.limit)
    write_features(args.output, rows, row_features(rows, corpora, args.work, args.model, top=args.top))
    return 0


if __name__ == "__main__":
    import sys

    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
