"""A QUEST collection on disk (corpus, compositions, topics, qrels, titles) and its evaluation per template.

:func:`convert` writes the files ``lsr-lucene compose`` and trec_eval need; :func:`evaluate_runs` reports
NDCG@10 and R@100 overall and per QUEST template (trec_eval through :mod:`lsr_lucene.eval.trec`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Mapping

from lsr_lucene.compose.tree import tree_to_json
from scripts.negation.quest_queries import QuestQuery
from lsr_lucene.eval.trec import evaluate

MEASURES = ("ndcg_cut_10", "recall_100")


def convert(queries: list[QuestQuery], documents: Iterable[tuple[str, str]] | None, out_dir: str | Path,
            overwrite: bool = False) -> dict:
    """Write corpus.jsonl, compositions.jsonl, topics.tsv, qrels.txt and titles.tsv under ``out_dir``.

    With ``documents`` (titles, texts) documents get ids ``d1, d2, ...`` and relevant titles are mapped to
    them (titles missing from the corpus are counted and left out); without, relevant ids are used as given.
    """
    from lsr_lucene.io.output import atomic_output

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    title_id: dict[str, str] = {}
    if documents is not None:
        with atomic_output(out / "corpus.jsonl", overwrite) as tmp_c, atomic_output(out / "titles.tsv", overwrite) as tmp_t:
            with open(tmp_c, "w", encoding="utf-8") as corpus, open(tmp_t, "w", encoding="utf-8") as titles:
                for n, (title, text) in enumerate(documents, 1):
                    if title in title_id:
                        continue
                    doc_id = f"d{n}"
                    title_id[title] = doc_id
                    corpus.write(json.dumps({"id": doc_id, "title": title, "text": text}, ensure_ascii=False) + "\n")
                    titles.write(f"{doc_id}\t{title}\n")
    missing = 0
    with atomic_output(out / "compositions.jsonl", overwrite) as tmp_q, \
            atomic_output(out / "topics.tsv", overwrite) as tmp_t, atomic_output(out / "qrels.txt", overwrite) as tmp_r:
        with open(tmp_q, "w", encoding="utf-8") as comps, open(tmp_t, "w", encoding="utf-8") as topics, \
                open(tmp_r, "w", encoding="utf-8") as qrels:
            for q in queries:
                comps.write(json.dumps({"id": q.qid, "query": tree_to_json(q.tree), "text": q.text,
                                        "template": q.template}, ensure_ascii=False) + "\n")
                topics.write(f"{q.qid}\t{q.text}\n")
                for doc in q.relevant:
                    judged = title_id.get(doc) if documents is not None else doc
                    if judged is None:
                        missing += 1
                        continue
                    qrels.write(f"{q.qid} 0 {judged} 1\n")
    return {"queries": len(queries), "documents": len(title_id), "relevant titles not in corpus": missing}


def templates_of(compositions: str | Path) -> dict[str, str]:
    """qid -> template of a compositions.jsonl written by :func:`convert` ("_" when absent)."""
    from lsr_lucene.io.output import open_jsonl

    return {str(obj.get("id")): str(obj.get("template", "_")) for _, obj in open_jsonl(compositions)}


def evaluate_runs(qrels: str | Path, runs: Mapping[str, str | Path], templates: dict[str, str] | None = None):
    """NDCG@10 and R@100 per run: overall (trec_eval -c) and, given templates, the mean per template."""
    import pandas as pd

    overall = evaluate(qrels, runs, MEASURES)
    if not templates:
        return overall, None
    per_query = evaluate(qrels, runs, MEASURES, per_query=True)
    frames = []
    for run_name in runs:
        rows = per_query.loc[run_name]
        rows = rows[rows.index.isin(list(templates))]
        grouped = rows.groupby(rows.index.map(lambda q: templates.get(q, "_"))).mean()
        grouped.index = pd.MultiIndex.from_tuples([(run_name, t) for t in grouped.index], names=["run", "template"])
        frames.append(grouped)
    return overall, pd.concat(frames)
