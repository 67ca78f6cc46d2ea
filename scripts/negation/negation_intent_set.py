"""Builds the labelled negation intent set (issue 50): queries whose negation cue should fire (exclusion requests)
or stay plain (negation the user is looking for), with category, paraphrase family and a fixed split.

Sources: the hand-written rows (``lsr_lucene/data/negation_intent/written.tsv``: keyword, question, request and
relative-clause exclusions in paraphrase families; sought states, facts and titles; the examples of issue 50 in
``issue-*`` families), a seeded sample of the ExcluIR and BoolQuestions NOT dev queries (exclusions), the NQ test
questions in which the cue parser finds a candidate cue (hand-labelled below: sought unless listed in ``NQ_FIRE``)
and the SciFact claims with a candidate cue (negated facts), the CACM, CISI and Cranfield topics with a candidate cue
(hand-labelled below), and one natural-language row per topic and B kind of the set-difference benchmark
(``runs/negation/setdiff_queries.jsonl``, issue 65: exclusions; phrasing drawn by seed; split by that benchmark's own
held-out topics, so none of its held-out topics trains the model). The split is by family (paraphrases stay
together): a sha1 hash of the family holds out one family in three (:func:`held_out`); ``issue-*`` families are
always development (they are the tests). Only the written rows ship in the package: the benchmark, NQ and SciFact
rows are read from the shared data each time (:func:`read_set`; data is never copied into the project).
Usage: ``python -m scripts.negation.negation_intent_set --data ../shared/data --output FILE`` writes the
whole set for reading.
"""
from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
from pathlib import Path

import lsr_lucene
from scripts.negation.negation_harm import held_out
from lsr_lucene.io.output import atomic_output
from lsr_lucene.io.topics import read_topics

WRITTEN = Path(lsr_lucene.__file__).resolve().parent / "data" / "negation_intent" / "written.tsv"  # the package's
SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"  # ../shared/data beside the checkout
COLUMNS = ("query", "label", "category", "family", "split", "source")
SEED = 50
BENCHMARK_SAMPLE = {"excluir": 80, "boolquestions_not": 40}
SETDIFF = Path(__file__).resolve().parents[2] / "runs" / "negation" / "setdiff_queries.jsonl"
SETDIFF_PHRASINGS = ("but-not", "excluding", "without")  # its natural-language rows (the explicit syntax is parsed)
# NQ test questions with a candidate cue whose negation is an exclusion (the rest are sought negations)
NQ_FIRE = {"test2783"}  # "other than water what else has hydrogen bonds"
# the judged collections' topics with a candidate cue (hand-labelled: sought or descriptive negations unless listed);
# with the set-difference rows built from these collections, the model must also see their own negations
JUDGED = ("cacm", "cisi", "cranfield")  # npl and med topics have no candidate cue
JUDGED_FIRE = {"cacm/6", "cacm/28", "cranfield/124", "cranfield/176", "cranfield/199"}  # "not interested in", "other than"
_TITLE = re.compile(r"\b(?:sings?|sang|sing|wrote|recorded|said|lyrics|meaning|released|come out|tour|song|"
                    r"anime|filmed|published|take place|soldier|kennedy|pay we'll)\b", re.IGNORECASE)


def _candidates(topics: dict[str, str]) -> dict[str, str]:
    """The topics in which the cue parser's cue finder sees at least one candidate negation cue (whatever is then
    decided about it: the set does not depend on the intent decision)."""
    from lsr_lucene.compose.negation_parser import _CUES, _cue_matches, _protected, normalise

    out = {}
    for qid, text in topics.items():
        norm = normalise(text)
        if any(_CUES[i][1] != "and" for _, _, i in _cue_matches(norm, _protected(norm))):
            out[qid] = text
    return out


def _kind(text: str) -> str:
    from lsr_lucene.compose.intent import sentence_kind

    kind = sentence_kind(text, 0)
    return "question" if kind == "question" else "request"


def build(data: Path) -> list[dict]:
    """All rows of the set, with their split."""
    rows = []
    with WRITTEN.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE, quotechar=None):
            rows.append({**row, "source": "written"})
    rng = random.Random(SEED)
    for name, size in BENCHMARK_SAMPLE.items():
        with (data / name / "dev.jsonl").open(encoding="utf-8") as handle:
            queries = [json.loads(line) for line in handle if line.strip()]
        for q in sorted(rng.sample(queries, size), key=lambda q: q["id"]):
            text = " ".join(q["query"].split())
            rows.append({"query": text, "label": "fire", "category": _kind(text), "family": f"{name}-{q['id']}",
                         "source": f"{name} dev"})
    nq = _candidates(read_topics(data / "wiki2015" / "topics.nq-test.tsv"))
    for qid, text in nq.items():
        fire = qid in NQ_FIRE
        category = "question" if fire else "title" if _TITLE.search(text) else "fact"
        rows.append({"query": text, "label": "fire" if fire else "plain", "category": category, "family": f"nq-{qid}",
                     "source": "nq test"})
    for qid, text in _candidates(read_topics(data / "scifact" / "topics.train.tsv")).items():
        rows.append({"query": text, "label": "plain", "category": "fact", "family": f"scifact-{qid}",
                     "source": "scifact train"})
    for name in JUDGED:
        for qid, text in _candidates(read_topics(data / name / "topics.tsv")).items():
            fire = f"{name}/{qid}" in JUDGED_FIRE
            rows.append({"query": text, "label": "fire" if fire else "plain",
                         "category": _kind(text) if fire else "state", "family": f"{name}-{qid}",
                         "source": f"{name} topics"})
    for row in rows:
        row["split"] = "dev" if row["family"].startswith("issue-") or not held_out(row["family"]) else "held-out"
    return rows + _setdiff_rows(rng)  # split by the set-difference benchmark's own held-out topics


def _setdiff_rows(rng: random.Random) -> list[dict]:
    """One natural-language exclusion per (topic, kind of B) of the set-difference benchmark, its phrasing drawn by
    ``rng``; its split is the benchmark's (held-out topics stay held out here too)."""
    groups: dict[tuple, list[dict]] = {}
    with SETDIFF.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["phrasing"] in SETDIFF_PHRASINGS or row["kind"] == "description":
                groups.setdefault((row["collection"], row["qid"], row["kind"]), []).append(row)
    out = []
    for key in sorted(groups):
        row = rng.choice(sorted(groups[key], key=lambda r: r["id"]))
        out.append({"query": row["query"], "label": "fire", "category": _kind(row["query"]),
                    "family": f"setdiff-{row['collection']}-{row['qid']}", "source": "setdiff",
                    "split": "held-out" if row["heldout"] else "dev"})
    return out


def read_set(path: str | Path | None = None, data: str | Path = SHARED_DATA) -> list[dict]:
    """The labelled rows of the intent set (dicts with :data:`COLUMNS`): from ``path`` (a file :func:`main`
    wrote), else built from the written rows and the shared ``data``."""
    if path is None:
        return build(Path(data))
    with Path(path).open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE, quotechar=None))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.negation.negation_intent_set",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED_DATA), help="the shared data folder")
    parser.add_argument("--output", required=True, help="the TSV to write")
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    rows = build(Path(args.data))
    with atomic_output(args.output, args.overwrite) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, COLUMNS, delimiter="\t", quoting=csv.QUOTE_NONE, quotechar=None,
                                    lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    counts: dict = {}
    for row in rows:
        counts[(row["split"], row["label"])] = counts.get((row["split"], row["label"]), 0) + 1
    print(f"{len(rows)} rows -> {args.output}: {dict(sorted(counts.items()))}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
