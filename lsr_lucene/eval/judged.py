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


def unanswered_warning(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Collection[str]], name: str
                       ) -> str | None:
    """A warning line when judged queries have no results in run ``name``: trec_eval -c scores them 0, so the
    means drop without a word (``--qids`` evaluates a subset of the topics instead)."""
    missing = [qid for qid in qrels if not run.get(qid)]
    if not missing:
        return None
    shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
    return (f"warning: run {name}: {len(missing)} of {len(qrels)} judged queries have no results and count as 0 "
            f"in the means ({shown}); --qids FILE evaluates a subset of the topics")


def read_qids(path: str | Path) -> list[str]:
    """Query ids of a topic subset: a topics file (TSV, JSONL, TREC) or one qid per line (the first field; blank
    lines and # comments skipped); InputError for a missing or empty file."""
    from lsr_lucene.errors import InputError
    from lsr_lucene.io.corpus import missing, open_text
    from lsr_lucene.io.topics import read_topics, topics_format

    path = Path(path)
    if not path.is_file():
        raise missing(path, "qids file")
    if topics_format(path) in ("jsonl", "trec"):
        return list(read_topics(path))
    with open_text(path) as handle:
        qids = [line.split()[0] for line in handle if line.strip() and not line.lstrip().startswith("#")]
    if not qids:
        raise InputError(f"{path}: no query ids")
    return list(dict.fromkeys(qids))


def subset(qrels: Mapping[str, Mapping[str, int]], qids: list[str], path: str | Path) -> dict[str, dict[str, int]]:
    """The qrels of the queries ``qids`` (read from ``path``); InputError when none of them is judged."""
    from lsr_lucene.errors import InputError

    kept = {qid: dict(qrels[qid]) for qid in qids if qid in qrels}
    if not kept:
        raise InputError(f"{path}: none of its {len(qids)} query ids is judged in the qrels (first: {qids[0]})")
    return kept
