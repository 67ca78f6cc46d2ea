"""Issue 36, item 2: does a second retriever on the positive leg A of fired exclusion queries lift R@1?

Most BoolQuestions misses of the `default` setting (fusion-gated) rank a third passage first: splade-tiny finds A
weakly. Here the A leg of every fired (composed) query is fused with another scorer before the gate:
Â' = minmax(Â + w·minmax(X)), X one of

- ``dense A`` / ``dense query``: all-MiniLM-L6-v2 cosine of the A text / of the whole query (lsr_lucene.dense);
- ``bm25 A`` / ``bm25 query``: in-memory BM25 (Anserini's k1 0.9, b 0.4; lower-cased alphanumeric tokens,
  a short stop list) of the same texts;
- ``dense A+B``: the dense cosine added to both legs (A: cosine of the A text; every B leaf: cosine of the root
  not node's verbalised B);
- ``dense A+query``: the sum of the cosines of the A text and of the whole query;

the dense ones also with the fusion-gated λ and gate τ of the fired queries retuned (``λ=… τ=…`` in the label);
and, with splade alone, the whole query in place of A's text, or a maxpool of both vectors.

Topics where no cue fires are left as the `default` searches them (identical runs). The settings are compared on
ExcluIR dev and BoolQuestions dev, and chosen by the worst case under the same 5-fold CV as the transfer experiment
(:func:`lsr_lucene.experiments.transfer.cross_validated`). Scores are exact dot products over the whole corpora
(the cached splade-tiny vectors of scripts/run_transfer.sh); the extra scorers are evaluated on the fused
candidates (union of the splade legs' top 1000).
"""
from __future__ import annotations

import collections
import dataclasses
import json
import math
import re
import sys
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from lsr_lucene.compose.operations import Settings, fuse, minmax
from lsr_lucene.compose.tree import Node, verbalize
from lsr_lucene.io.vectors import read_metadata

STOP = frozenset("a an the of to in on for and or is are was were be what which who how does do did can i you it "
                 "its with by at from as that this these those about".split())
WEIGHTS = (0.25, 0.5, 1.0, 2.0)
SCORERS = ("dense A", "dense query", "bm25 A", "bm25 query", "dense A+B")
# the dense scorers again with the gate's λ and τ retuned (the default's λ 1, τ 0.9 were chosen without them)
TUNED = ("dense A", "dense A+query")
TUNED_WEIGHTS = (0.75, 1.0, 1.5)
TUNED_LAMBDAS = (0.7, 1.0)
TUNED_GATES = (0.8, 0.9, 0.95)


def tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens without the stop list (BM25 of this experiment)."""
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP]


class MemoryBM25:
    """BM25 over an in-memory corpus (``{docid: text}``), Anserini's default k1 and b."""

    def __init__(self, docs: Mapping[str, str], k1: float = 0.9, b: float = 0.4):
        self.ids = list(docs)
        self.tf = [collections.Counter(tokens(docs[d])) for d in self.ids]
        lengths = np.array([sum(c.values()) for c in self.tf], dtype=float)
        self.norm = k1 * (1 - b + b * lengths / max(lengths.mean(), 1e-9))
        self.k1 = k1
        df: collections.Counter = collections.Counter()
        for c in self.tf:
            df.update(c.keys())
        n = len(self.ids)
        self.idf = {t: math.log(1 + (n - m + 0.5) / (m + 0.5)) for t, m in df.items()}

    def scores(self, text: str) -> dict[str, float]:
        """BM25 of ``text`` for every document."""
        terms = tokens(text)
        out = {}
        for i, doc in enumerate(self.ids):
            tf = self.tf[i]
            out[doc] = sum(self.idf[t] * tf[t] * (self.k1 + 1) / (tf[t] + self.norm[i]) for t in terms if tf.get(t))
        return out


def positive_text(tree) -> str:
    """Text of the positive leg: descend the ``a`` side of not nodes (an and/or node is verbalised)."""
    while not isinstance(tree, str) and tree.op == "not":
        tree = tree.a
    return tree if isinstance(tree, str) else verbalize(tree)


def with_positive(tree, replace):
    """``tree`` with its positive leg (the ``a`` side of the not nodes from the root down) replaced by
    ``replace(leg)``."""
    if isinstance(tree, str) or tree.op != "not":
        return replace(tree)
    return Node("not", with_positive(tree.a, replace), tree.b)


def negative_text(tree) -> str:
    """Verbalised B of the root not node."""
    return tree.b if isinstance(tree.b, str) else verbalize(tree.b)


def dense_matrix(docs: Mapping[str, str], cache: Path, encoder) -> np.ndarray:
    """Document vectors of ``docs`` (rows in ``docs`` order), cached in ``cache`` (.npy)."""
    if cache.is_file():
        matrix = np.load(cache)
        if matrix.shape[0] == len(docs):
            return matrix
    matrix = encoder.encode(list(docs.values()), desc=f"dense {cache.parent.name}")
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.save(cache, matrix)
    return matrix


def fused_run(comps, plans, traces: Mapping[str, list], base: Mapping[str, Mapping[str, float]],
              extra_a: Mapping[str, Mapping[str, float]], weight: float,
              extra_b: Mapping[str, Mapping[str, float]] | None = None, lam: float | None = None,
              gate: float | None = None) -> dict[str, dict[str, float]]:
    """``{qid: {doc: score}}``: fired queries re-fused with ``weight``·minmax(extra) added to the A leaf (leaf 0 of
    the plan) and, when given, to B's leaves (``lam``/``gate``: the root gated not node's λ and τ instead of the
    plan's); every other query keeps its ``base`` run."""
    run = {}
    for comp, plan in zip(comps, plans):
        if comp.qid not in traces:
            run[comp.qid] = dict(base[comp.qid])
            continue
        if plan.gate is not None and (lam is not None or gate is not None):
            plan = dataclasses.replace(plan, lam=plan.lam if lam is None else lam,
                                       gate=plan.gate if gate is None else gate)
        # the leaves' scores; other inputs of the trace (the default's Absence) go back to fuse as they are
        leaves = [dict(x) if isinstance(x, Mapping) else x for x in traces[comp.qid]]
        cand = list(leaves[0])
        for i in range(len(leaves)) if extra_b is not None else [0]:
            if not isinstance(leaves[i], dict):
                continue
            source = extra_a if i == 0 or extra_b is None else extra_b  # i > 0 only with extra_b
            own, add = minmax(leaves[i]), minmax({d: source[comp.qid][d] for d in cand})
            leaves[i] = {d: own[d] + weight * add[d] for d in cand}
        run[comp.qid] = fuse(plan, leaves)
    return run


def benchmark_runs(rows: Sequence[Mapping], docs: Mapping[str, str], backend, encoder, scale: float,
                   dense, dense_docs: np.ndarray) -> dict[str, dict]:
    """``{label: run}``: the default and every scorer × weight on one benchmark."""
    from lsr_lucene.compose.compositions import Composition, parse_topics
    from lsr_lucene.compose.execute import compose, execute

    comps = parse_topics({str(r["id"]): str(r["query"]) for r in rows})
    qids = [c.qid for c in comps]
    plans = compose(comps, Settings(), encoder)
    traces: dict = {}
    base = {q: dict(r) for q, r in execute(qids, plans, backend, scale, 1000, traces=traces).items()}
    fired = [c for c in comps if c.qid in traces]
    bm25 = MemoryBM25(docs)
    ids = list(docs)

    def dense_scores(texts: list[str]) -> list[dict]:
        vectors = dense.encode_queries(texts)
        return [dict(zip(ids, (dense_docs @ v).tolist())) for v in vectors]

    texts: dict[str, list[str]] = {"A": [positive_text(c.tree) for c in fired], "query": [c.text or "" for c in fired],
             "B": [negative_text(c.tree) for c in fired]}
    extra = {f"dense {k}": dict(zip([c.qid for c in fired], dense_scores(v))) for k, v in texts.items()}
    extra["dense A+query"] = {q: {d: s + extra["dense query"][q][d] for d, s in a.items()}
                              for q, a in extra["dense A"].items()}
    for k in ("A", "query"):
        extra[f"bm25 {k}"] = {c.qid: bm25.scores(t) for c, t in zip(fired, texts[k])}
    runs = {"default": base}
    for label, swap in (("splade A = whole query", lambda a, q: q),
                        ("splade A = maxpool(A, whole query)", lambda a, q: Node("or", a, q))):
        variant = [Composition(c.qid, with_positive(c.tree, lambda a, q=c.text, swap=swap: swap(a, q)), c.text)
                   if c.qid in traces else c for c in comps]
        runs[label] = {q: dict(r) for q, r in execute(qids, compose(variant, Settings(), encoder), backend, scale,
                                                        1000).items()}
    for scorer in SCORERS:
        for w in WEIGHTS:
            if scorer == "dense A+B":
                run = fused_run(comps, plans, traces, base, extra["dense A"], w, extra["dense B"])
            else:
                run = fused_run(comps, plans, traces, base, extra[scorer], w)
            runs[f"{scorer} w={w:g}"] = run
    for scorer in TUNED:
        for w in TUNED_WEIGHTS:
            for lam in TUNED_LAMBDAS:
                for gate in TUNED_GATES:
                    runs[f"{scorer} w={w:g} λ={lam:g} τ={gate:g}"] = fused_run(comps, plans, traces, base,
                                                                              extra[scorer], w, lam=lam, gate=gate)
    return runs


def run(data: Sequence[str | Path], work: str | Path, output_dir: str | Path, model: str = "splade-tiny",
        threads: int = 2, folds: int = 5, overwrite: bool = False) -> int:
    """Every scorer × weight on each benchmark (dev), the worst case and the CV selection, as tables."""
    from lsr_lucene.compose.backends import ExactBackend
    from lsr_lucene.compose.query_encoder import CachedQueryEncoder
    from lsr_lucene.dense.encoder import DenseEncoder
    from lsr_lucene.eval.contrastive_metrics import read_excluir
    from lsr_lucene.eval.trec import to_markdown
    from lsr_lucene.experiments.contrastive_configs import make_encoders
    from lsr_lucene.experiments.contrastive_runs import _write, read_query_cache, write_query_cache
    from lsr_lucene.experiments.excluir import ensure_vectors
    from lsr_lucene.experiments.transfer import (benchmark_name, benchmark_tables, cross_table, query_figures,
                                                 selection_table)

    base = make_encoders(model, ("full",), threads=threads)["full"]
    cache_path = Path(work) / f"query-vectors-{Path(model).name}.json"
    encoder = CachedQueryEncoder(base, read_query_cache(cache_path))
    dense = DenseEncoder(threads=threads)
    runs, rows_by_bench = {}, {}
    for folder in map(Path, data):
        name = benchmark_name(folder, "dev")
        rows = read_excluir(folder / "dev.jsonl")
        docs = {}
        with open(folder / "corpus.jsonl", encoding="utf-8") as handle:
            for line in handle:
                d = json.loads(line)
                docs[str(d["id"])] = f"{d.get('title') or ''} {d.get('text') or ''}".strip()
        slug = folder.resolve().name
        vectors = ensure_vectors(folder / "corpus.jsonl", Path(work) / slug, model, threads)
        scale = read_metadata(vectors).get("scale") or 100
        matrix = dense_matrix(docs, Path(work) / slug / "dense-all-minilm-l6-v2.npy", dense)
        print(f"== {name}: {len(rows)} queries", file=sys.stderr)
        runs[name] = benchmark_runs(rows, docs, ExactBackend(vectors), encoder, scale, dense, matrix)
        rows_by_bench[name] = rows
    write_query_cache(cache_path, encoder.cache)
    cross = cross_table(benchmark_tables(runs, rows_by_bench))
    labels = list(next(iter(runs.values())))
    figures = {name: query_figures(runs[name], rows) for name, rows in rows_by_bench.items()}
    sel = selection_table(figures, rows_by_bench, labels, folds)
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    _write(cross, out / "positive_leg", overwrite)
    _write(sel, out / "positive_leg_selection", overwrite)
    print(to_markdown(cross))
    print(to_markdown(sel))
    return 0


def main(argv: list[str] | None = None) -> int:
    """CLI of this experiment (scripts/run_positive_leg.sh)."""
    import argparse

    ap = argparse.ArgumentParser(allow_abbrev=False, prog="python -m lsr_lucene.experiments.positive_leg",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--data", action="append", required=True, help="benchmark folder (repeatable)")
    ap.add_argument("--work", required=True, help="folder of cached vectors and indexes")
    ap.add_argument("--output-dir", required=True, help="folder for positive_leg{,_selection}.{md,csv}")
    ap.add_argument("--threads", type=int, default=2, help="search threads")
    ap.add_argument("--folds", type=int, default=5, help="cross-validation folds")
    ap.add_argument("--overwrite", action="store_true", help="replace existing tables")
    return run(**vars(ap.parse_args(argv)))


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
