"""How much of the contrastive sets the cue parser splits, and (ExcluIR) whether B names the excluded document."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping, Sequence

from lsr_lucene.compose.negation_parser import coverage, parse


def _title_words(title: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", title.lower()) if len(w) > 2 and w not in {"the", "and", "film", "album"}}


def excluir_coverage(rows: Sequence[Mapping], corpus: str | Path | None = None) -> dict:
    """Parser coverage on ExcluIR queries; with the corpus also how often B names the negative document.

    ``B names neg`` counts parsed queries whose B shares a word (3+ letters) with the negative document's
    title; ``B names pos`` the same for the positive document (a wrong split).
    """
    cov = coverage(str(r["query"]) for r in rows)
    if corpus is not None:
        from lsr_lucene.io.corpus import read_corpus

        wanted = {str(r["neg_id"]) for r in rows} | {str(r["pos_id"]) for r in rows}
        titles = {d.id: (d.title or "") for d in read_corpus(corpus) if d.id in wanted}
        names_neg = names_pos = 0
        for row in rows:
            result = parse(str(row["query"]))
            if not result.composed:
                continue
            b_words = set(re.findall(r"[a-z0-9]+", " ".join(c.b for c in result.cues).lower()))
            neg = _title_words(titles.get(str(row["neg_id"]), ""))
            pos = _title_words(titles.get(str(row["pos_id"]), "")) - neg
            names_neg += bool(b_words & neg)
            names_pos += bool(b_words & pos)
        cov["B names neg"] = names_neg / max(cov["parsed"], 1)
        cov["B names pos"] = names_pos / max(cov["parsed"], 1)
    return cov


def nevir_coverage(rows: Sequence[Mapping]) -> dict:
    """Parser coverage on NevIR: share of q1, q2 and of rows with at least one parsed query."""
    q1 = coverage(str(r["q1"]) for r in rows)
    q2 = coverage(str(r["q2"]) for r in rows)
    both = coverage([str(r["q1"]) for r in rows] + [str(r["q2"]) for r in rows])
    any_row = sum(parse(str(r["q1"])).composed or parse(str(r["q2"])).composed for r in rows)
    return {"queries": both["queries"], "parsed": both["parsed"], "coverage": both["coverage"],
            "q1 coverage": q1["coverage"], "q2 coverage": q2["coverage"], "rows with a parsed query": any_row / len(rows),
            "by_cue": both["by_cue"]}


def coverage_frame(cov: Mapping, name: str):
    """One-row table (index: the set's ``name``) of a coverage dict; cue counts flattened into one column."""
    import pandas as pd

    flat = {k: v for k, v in cov.items() if not isinstance(v, dict)}
    flat["cues (first per query)"] = ", ".join(f"{k} {v}" for k, v in cov.get("by_cue", {}).items())
    df = pd.DataFrame([flat], index=pd.Index([name], name="set"))
    return df
