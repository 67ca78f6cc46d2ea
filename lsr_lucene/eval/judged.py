"""How much of a run its qrels judge: a warning line when queries or documents go unjudged (e.g. another
collection's qrels), since trec_eval then prints a low score without a word."""
from __future__ import annotations

from pathlib import Path
from typing import Collection, Mapping


def judged_warnings(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Collection[str]], name: str,
                    qrels_path: str | Path) -> list[str]:
    """Warning lines for run ``name``: queries without judgements (not evaluated), and judged queries none of whose
    retrieved documents is judged (qrels of another collection?)."""
    lines = []
    judged = [qid for qid in run if qid in qrels]
    if len(judged) < len(run):
        unjudged = [qid for qid in run if qid not in qrels]
        shown = ", ".join(unjudged[:5]) + (" ..." if len(unjudged) > 5 else "")
        lines.append(f"warning: run {name}: {len(judged)} of {len(run)} queries are judged in {qrels_path}; "
                     f"the other {len(unjudged)} are not evaluated ({shown})")
    if judged and not any(doc in qrels[qid] for qid in judged for doc in run[qid]):
        lines.append(f"warning: run {name}: none of its documents is judged in {qrels_path} "
                     f"(qrels of another collection?)")
    return lines
