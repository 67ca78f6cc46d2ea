"""NevIR with composed queries: each query scores its row's two documents; accuracy table, chart, Lucene check.

Scores are exact dot products (the NevIR protocol); ``fusion`` is fused over exactly the row's two documents,
so ``fusion-scaled`` scores are 0 or 1 (many ties).
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from lsr_lucene.compose.backends import LuceneBackend, make_spec
from lsr_lucene.compose.compositions import Composition, parse_topics
from lsr_lucene.compose.execute import compose
from lsr_lucene.compose.dense_leg import leaf_inputs
from lsr_lucene.compose.operations import Plan, VectorPlan, fuse, plan_inputs, plan_vectors
from lsr_lucene.compose.query_encoder import QueryEncoder
from scripts.negation.contrastive_configs import Config
from lsr_lucene.eval.contrastive_metrics import NEVIR_CATEGORIES, nevir_category, nevir_ids, nevir_pairwise_accuracy
from lsr_lucene.io.vectors import metadata_file


def plan_scores(plan: Plan, backend, scale: float, docs: Sequence[str]) -> list[float]:
    """Exact scores of a plan for the given documents (fusion: fused over exactly these documents; no stored texts,
    so no document states B absent)."""
    if isinstance(plan, VectorPlan):
        spec = make_spec("q", plan.vector, scale)
        return backend.score(spec, list(docs)) if spec else [0.0] * len(docs)
    per_leaf = []
    for i, vec in enumerate(plan_vectors(plan)):
        spec = make_spec(f"q#{i}", vec, scale)
        per_leaf.append(dict(zip(docs, backend.score(spec, list(docs)) if spec else [0.0] * len(docs))))
    fused = fuse(plan, leaf_inputs(plan_inputs(plan), per_leaf, None, list(docs)))
    return [fused[d] for d in docs]


def nevir_documents(rows: Sequence[Mapping]) -> list[tuple[str, str]]:
    """(doc id, text) of every NevIR document: ``<row id>/1`` and ``<row id>/2`` (:func:`nevir_ids`)."""
    docs = []
    for row in rows:
        ids = nevir_ids(str(row["id"]))
        docs += [(ids["doc1"], str(row["doc1"])), (ids["doc2"], str(row["doc2"]))]
    return docs


def nevir_compositions(rows: Sequence[Mapping]) -> list[Composition]:
    """Parsed q1 and q2 of every row (ids ``<row id>/q1``, ``<row id>/q2``: :func:`nevir_ids`, what
    ``lsr-lucene eval --contrastive`` reads from a NevIR run)."""
    topics = {}
    for row in rows:
        ids = nevir_ids(str(row["id"]))
        topics[ids["q1"]] = str(row["q1"])
        topics[ids["q2"]] = str(row["q2"])
    return parse_topics(topics)


def nevir_scores(rows: Sequence[Mapping], configs: Sequence[Config], backend, encoders: Mapping[str, QueryEncoder],
                 scale: float) -> dict[str, list[tuple[float, float, float, float]]]:
    """``{label: [(q1·doc1, q1·doc2, q2·doc1, q2·doc2), ...]}`` for every configuration."""
    comps = nevir_compositions(rows)
    out = {}
    for config in configs:
        plans = dict(zip((c.qid for c in comps), compose(comps, config.settings(), encoders[config.mode])))
        scores = []
        for row in rows:
            ids = nevir_ids(str(row["id"]))
            docs = [ids["doc1"], ids["doc2"]]
            s1 = plan_scores(plans[ids["q1"]], backend, scale, docs)
            s2 = plan_scores(plans[ids["q2"]], backend, scale, docs)
            scores.append((s1[0], s1[1], s2[0], s2[1]))
        out[config.label] = scores
    return out


def nevir_table(scores: Mapping[str, Sequence]):
    """DataFrame: pairwise accuracy and the error-category counts per configuration."""
    import pandas as pd

    data = {label: nevir_pairwise_accuracy(rows) for label, rows in scores.items()}
    df = pd.DataFrame.from_dict(data, orient="index")
    df.index.name = "operation"
    return df


def nevir_chart(df, path: str | Path, overwrite: bool = False, title: str = "NevIR dev: outcome per operation") -> Path:
    """Grouped bar chart (PNG) of the NevIR outcome categories per operation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from lsr_lucene.io.output import save_png

    categories = [c for c in NEVIR_CATEGORIES if c in df.columns]
    labels = list(df.index)
    x = np.arange(len(labels))
    width = 0.8 / len(categories)
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(labels) + 2), 4.8))
    for i, cat in enumerate(categories):
        share = 100 * df[cat] / df["rows"]
        ax.bar(x + (i - (len(categories) - 1) / 2) * width, share, width, label=cat)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=30, ha="right")
    ax.set_ylabel("% of rows")
    ax.axhline(25, color="grey", linestyle=":", linewidth=1)
    ax.set_title(title)
    ax.legend(fontsize=8)
    save_png(fig, path, 120, overwrite=overwrite)
    return Path(path)


def nevir_lucene_check(rows, docs, configs, encoders, exact_scores, work: Path, threads: int = 2):
    """Index the NevIR documents as a small collection and compare Lucene's scores with the exact ones."""
    import pandas as pd

    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.index.impact import build_impact_index
    from lsr_lucene.io.vectors import write_vectors

    vectors, index = work / "vectors", work / "index"
    if not (metadata_file(vectors) is not None):
        encoder: SparseEncoder = encoders["full"].encoder
        write_vectors(docs, encoder, vectors, source="nevir documents")
    if not index.is_dir():
        build_impact_index(vectors, index, threads=threads)
    backend = LuceneBackend(index, threads)
    try:
        lucene = nevir_scores(rows, configs, backend, encoders, 100)
    finally:
        backend.close()
    data = {}
    for config in configs:
        exact, luc = exact_scores[config.label], lucene[config.label]
        same = sum(nevir_category(*a) == nevir_category(*b) for a, b in zip(exact, luc))
        diff = max(abs(x - y) / max(1.0, abs(x)) for a, b in zip(exact, luc) for x, y in zip(a, b))
        data[config.label] = {"rows": len(rows), "same category": same, "max relative score difference": diff}
    df = pd.DataFrame.from_dict(data, orient="index")
    df.index.name = "operation"
    return df
