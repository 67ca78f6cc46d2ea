"""How far a query-faithful ranker can get on the dev sets (issue 49): a blind, doubly annotated label audit.

ExcluIR and BoolQuestions were written by an LLM from two related passages, one marked wanted and one excluded.
Some rows contradict their own query (the "wanted" passage is what the query excludes, or nothing is excluded),
and those rows cost every ranker that follows the query. This module measures how many:

``prepare``: every dev row as {id, query, X, Y}, the wanted and the excluded passage in an order fixed by a hash
of the id (:func:`positive_shown_second`), so annotators judge which passage a searcher following the request
would want first without knowing the labels (their instructions: ``RUBRIC``). ``merge``: two annotators' CSVs
mapped back to ``positive`` / ``negative`` / ``tie`` per annotator -> one audit CSV.
``report``: agreement (Cohen's kappa), the share of rows whose consensus contradicts the labels, and the default's
R@1 / RR per consensus label (outcomes from ``negation_nested``'s per-row CSV), with 95% bootstrap intervals.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import sys
import warnings
from pathlib import Path
from typing import Mapping, Sequence

from lsr_lucene.errors import InputError, LsrError

SETS = {"ExcluIR dev": "excluir", "BoolQuestions dev": "boolq"}  # nested.csv's source -> chunk prefix
CHOICES = ("X", "Y", "tie")
ANNOTATION_FIELDS = ("id", "exclusion_stated", "excluded", "choice", "chosen_mentions_excluded",
                     "other_about_excluded", "reason")
RUBRIC = """\
# Relevance judgement task (exclusionary queries)

Each line of your input file is a JSON object {"id", "query", "X", "Y"}: a search request and two passages.
Many requests ask for something while excluding something ("What other films did P act in besides F?",
"... excluding information on Z", "... without mentioning W").

For every row, read the request and both passages, and judge as a careful human searcher who follows the
request's words literally:

1. `exclusion_stated`: `yes` if the request's words exclude something (besides, other than, apart from, except,
   excluding, without mentioning, not, neither/nor, ... including paraphrases); `no` if nothing is excluded.
2. `excluded`: the thing(s) the request excludes, in a few words (empty if none).
3. `choice`: which passage this searcher would want ranked FIRST:
   - `X` or `Y` when one passage is clearly the better result: it serves what is asked and is not mainly about
     what is excluded, while the other is worse (it is mainly about the excluded thing, or it does not serve the
     request as well).
   - `tie` when you cannot tell them apart from the request's words: both serve it equally, neither serves it, or
     the request is too garbled to follow.
4. `chosen_mentions_excluded`: `yes` if the passage you chose also mentions the excluded thing (in passing or
   fully), else `no` (`no` for tie).
5. `other_about_excluded`: `yes` if the passage you did NOT choose is mainly about the excluded thing, else `no`
   (for a tie: `yes` if either passage is mainly about the excluded thing).
6. `reason`: at most 15 words, why.

Judge each row on its own, from the request and the two passages only. Do not look at any other file, do not
search for the dataset, and do not run any retrieval code: this is a blind human-style judgement. Which of X and Y
comes first is random.

Write a CSV (Python's csv module, header exactly:
`id,exclusion_stated,excluded,choice,chosen_mentions_excluded,other_about_excluded,reason`) with one row per input
row, in input order, every id present once. Write it to a temporary name and rename it to the output path when
complete. Read the input in pieces (for instance 10-15 rows at a time with a short python or sed command), judge
them, append your judgements, and go on until every row is done. Then check the file: row count, ids in input
order, allowed values only.
"""  # the text the committed audit's annotators were given


def positive_shown_second(qid: str) -> bool:
    """Whether the wanted passage is shown as Y (sha1 of ``"audit" + id`` is odd): fixed, order-free, blind."""
    return int(hashlib.sha1(f"audit{qid}".encode("utf-8")).hexdigest(), 16) % 2 == 1


def _passage(doc: Mapping) -> str:
    return f"{doc['title']}: {doc['text']}" if doc.get("title") else str(doc["text"])


def blind_rows(folder: Path) -> list[dict]:
    """The dev rows of an ExcluIR-layout folder as {id, query, X, Y}, in the order :func:`positive_shown_second`."""
    corpus = {}
    with open(folder / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            corpus[str(doc["id"])] = doc
    rows = []
    with open(folder / "dev.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            pos, neg = corpus[str(row["pos_id"])], corpus[str(row["neg_id"])]
            x, y = (neg, pos) if positive_shown_second(str(row["id"])) else (pos, neg)
            rows.append({"id": str(row["id"]), "query": row["query"], "X": _passage(x), "Y": _passage(y)})
    return rows


def prepare(folders: Mapping[str, Path], output: Path, parts: int = 2, overwrite: bool = False) -> list[Path]:
    """Write the folder ``output``: each set's blind rows in ``parts`` chunks (``<prefix>-<i>.jsonl``) and the rubric
    (``RUBRIC.md``), through a temporary folder; an existing folder is refused unless ``overwrite``."""
    from lsr_lucene.io.output import atomic_output

    names = []
    with atomic_output(output, overwrite, directory=True) as tmp:
        for source, folder in folders.items():
            rows = blind_rows(folder)
            size = -(-len(rows) // parts)
            for i in range(parts):
                name = f"{SETS[source]}-{i + 1}.jsonl"
                chunk = rows[i * size:(i + 1) * size]
                (tmp / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in chunk),
                                        encoding="utf-8")
                names.append(name)
        (tmp / "RUBRIC.md").write_text(RUBRIC, encoding="utf-8")
    return [output / name for name in names]


def read_annotations(path: Path) -> dict[str, dict]:
    """One annotator's CSV by id; a missing column or a choice outside X / Y / tie is refused naming the line."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = set(ANNOTATION_FIELDS) - set(reader.fieldnames or ())
        if missing:
            raise InputError(f"{path}: missing columns {', '.join(sorted(missing))}")
        out = {}
        for line, row in enumerate(reader, start=2):
            if row["choice"] not in CHOICES:
                raise InputError(f"{path}:{line}: choice {row['choice']!r}; expected X, Y or tie")
            out[row["id"]] = row
    return out


def label_of(choice: str, qid: str) -> str:
    """An annotator's X / Y / tie as ``positive`` (the wanted passage first), ``negative`` or ``tie``."""
    if choice == "tie":
        return "tie"
    return "positive" if (choice == "Y") == positive_shown_second(qid) else "negative"


def unblind(reason: str, qid: str) -> str:
    """A reason with its passage letters named: X / Y -> ``[wanted]`` / ``[excluded]`` as the labels have them."""
    second = positive_shown_second(qid)
    names = {"X": "[excluded]" if second else "[wanted]", "Y": "[wanted]" if second else "[excluded]"}
    return re.sub(r"(?<![\w'-])([XY])(?![\w-])", lambda m: names[m.group(1)], reason)


def consensus(first: str, second: str) -> str:
    """The two annotators' label where they agree, else ``disputed``."""
    return first if first == second else "disputed"


def merge(annotations: Path, folders: Mapping[str, Path]) -> list[dict]:
    """Audit rows from ``<prefix>-<i>-{a,b}.csv``: set, id, each annotator's label and reason, consensus (no query
    text: the data stay in ../shared)."""
    rows = []
    for source, folder in folders.items():
        prefix = SETS[source]
        by_annotator = []
        for who in ("a", "b"):
            merged: dict[str, dict] = {}
            for path in sorted(annotations.glob(f"{prefix}-*-{who}.csv")):
                merged.update(read_annotations(path))
            by_annotator.append(merged)
        for row in blind_rows(folder):
            qid = row["id"]
            for who, judged in zip("ab", by_annotator):
                if qid not in judged:
                    raise InputError(f"{annotations}: no judgement of {source} row {qid} by annotator {who}")
            first, second = (judged[qid] for judged in by_annotator)
            a, b = label_of(first["choice"], qid), label_of(second["choice"], qid)
            rows.append({"set": source, "id": qid, "a": a, "b": b, "consensus": consensus(a, b),
                         "exclusion stated": f"{first['exclusion_stated']}/{second['exclusion_stated']}",
                         "excluded (a)": first["excluded"], "a reason": unblind(first["reason"], qid),
                         "b reason": unblind(second["reason"], qid)})
    return rows


def _share(flags: Sequence[int]) -> str:
    from scripts.negation.negation_estimate import bootstrap

    mean, lo, hi = bootstrap(flags)
    return f"{mean:.3f} ({lo:.3f}–{hi:.3f})"


def report(audit: Sequence[Mapping], outcomes: Sequence[Mapping], setting: str = "default") -> tuple[str, list[dict]]:
    """Markdown and table rows: agreement, label shares, and ``setting``'s R@1 / RR per consensus label and part."""
    from sklearn.metrics import cohen_kappa_score

    from scripts.negation.negation_nested import _figure

    by_id = {(o["source"], o["id"]): o for o in outcomes}
    table: list[dict] = []
    lines = []
    for source in SETS:
        rows = [r for r in audit if r["set"] == source]
        if not rows:
            continue
        agree = sum(r["a"] == r["b"] for r in rows)
        with warnings.catch_warnings():  # one label only: kappa is undefined and printed as nan
            warnings.simplefilter("ignore")
            kappa = cohen_kappa_score([r["a"] for r in rows], [r["b"] for r in rows])
        lines.append(f"- {source}: {len(rows)} rows, the annotators agree on {agree} ({agree / len(rows):.1%}), "
                     f"Cohen's kappa {kappa:.2f}; consensus negative (the query excludes the wanted passage or "
                     f"wants the excluded one): {_share([r['consensus'] == 'negative' for r in rows])}; not "
                     f"positive (negative, tie or disputed): {_share([r['consensus'] != 'positive' for r in rows])}. "
                     f"A ranker that follows every query as the annotators read it gets RR between "
                     f"{_share([r['consensus'] == 'positive' for r in rows])} (ties and disputed rows lost) and "
                     f"{_share([r['consensus'] != 'negative' for r in rows])} (all won).")
        for part in ("all", "held-out"):
            for label in ("all", "positive", "tie", "disputed", "negative"):
                picked = [r for r in rows if label in ("all", r["consensus"])
                          and (part == "all" or by_id[(source, r["id"])]["part"] == part)]
                if not picked:
                    continue
                got = [by_id[(source, r["id"])] for r in picked]
                figure = _figure([int(o[f"{setting} R@1"]) for o in got], [int(o[f"{setting} RR"]) for o in got])
                figure.pop("_ci")
                table.append({"set": source, "part": part, "consensus": label, **figure,
                              "RR misses": sum(o[f"{setting} RR"] == "0" for o in got)})
    return "\n".join(lines), table


def main(argv: list[str] | None = None) -> int:
    """CLI: ``prepare --excluir DIR --boolq DIR --output DIR``; ``merge ... --annotations DIR --output CSV``;
    ``report --audit CSV --outcomes nested.csv --output STEM`` (STEM.md, STEM.csv)."""
    parser = argparse.ArgumentParser(prog="python -m scripts.negation.negation_label_audit",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    for name in ("prepare", "merge"):
        step = sub.add_parser(name)
        step.add_argument("--excluir", required=True, type=Path, help="ExcluIR folder (corpus.jsonl, dev.jsonl)")
        step.add_argument("--boolq", required=True, type=Path, help="BoolQuestions NOT folder")
        step.add_argument("--output", required=True, type=Path)
    sub.choices["merge"].add_argument("--annotations", required=True, type=Path,
                                      help="folder of <excluir|boolq>-<i>-<a|b>.csv")
    rep = sub.add_parser("report")
    rep.add_argument("--audit", required=True, type=Path, help="the merged audit CSV")
    rep.add_argument("--outcomes", required=True, type=Path, help="negation_nested's per-row CSV")
    rep.add_argument("--output", required=True, type=Path, help="output stem: STEM.md, STEM.csv")
    for step in sub.choices.values():
        step.add_argument("--overwrite", action="store_true", help="replace existing outputs")
    args = parser.parse_args(argv)
    try:
        if args.step == "report":
            import pandas as pd

            from lsr_lucene.eval.trec import table_paths, write_table

            if args.audit.resolve() in {p.resolve() for p in table_paths(args.output)}:
                raise InputError(f"{args.audit}: --output would overwrite the audit it reads; choose another stem")
            with open(args.audit, newline="", encoding="utf-8") as f:
                audit = list(csv.DictReader(f))
            with open(args.outcomes, newline="", encoding="utf-8") as f:
                outcomes = list(csv.DictReader(f))
            summary, table = report(audit, outcomes)
            _, md = write_table(pd.DataFrame(table).set_index(["set", "part", "consensus"]), args.output,
                                args.overwrite, ".3f", preamble="# Label audit of the dev sets, and the default per "
                                                                f"consensus label\n\n{summary}\n\n")
            print(f"wrote {md}", file=sys.stderr)
            return 0
        folders = {"ExcluIR dev": args.excluir, "BoolQuestions dev": args.boolq}
        if args.step == "prepare":
            for path in prepare(folders, args.output, overwrite=args.overwrite):
                print(f"wrote {path}", file=sys.stderr)
        else:
            from lsr_lucene.io.output import write_csv_rows

            write_csv_rows(args.output, merge(args.annotations, folders), args.overwrite)
            print(f"wrote {args.output}", file=sys.stderr)
    except (LsrError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
