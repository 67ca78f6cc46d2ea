"""Training data: NevIR rows and query/positive/negative triples (JSONL), held-out dev rows.

Training data (JSONL, one row per line, both kinds may be mixed):

- NevIR rows ``{"q1", "doc1", "q2", "doc2"}``: q1 is relevant to doc1 only, q2 to doc2 only;
- triples ``{"query", "positive", "negative"}`` (``negative`` may be a list of texts).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from lsr_lucene.errors import InputError

NEVIR_FIELDS = ("q1", "doc1", "q2", "doc2")
TRIPLE_FIELDS = ("query", "positive", "negative")


@dataclass
class Example:
    """One training row: documents, and (query, index of its relevant document) pairs."""

    id: str
    docs: list[str]
    queries: list[tuple[str, int]]


def _text(obj: dict, key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise InputError(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InputError(f"{where}: field {key!r} is empty")
    return value


def parse_example(obj: dict, where: str, default_id: str) -> Example:
    """A NevIR row or a triple as an :class:`Example`; InputError names ``where`` and the missing field."""
    row_id = str(obj.get("id", default_id))
    if any(k in obj for k in NEVIR_FIELDS):
        missing = [k for k in NEVIR_FIELDS if k not in obj]
        if missing:
            raise InputError(f"{where}: NevIR row lacks field(s) {', '.join(missing)} "
                             f"(expected {{\"q1\", \"doc1\", \"q2\", \"doc2\"}})")
        q1, d1, q2, d2 = (_text(obj, k, where) for k in NEVIR_FIELDS)
        return Example(row_id, [d1, d2], [(q1, 0), (q2, 1)])
    if any(k in obj for k in TRIPLE_FIELDS):
        missing = [k for k in TRIPLE_FIELDS if k not in obj]
        if missing:
            raise InputError(f"{where}: triple lacks field(s) {', '.join(missing)} "
                             f"(expected {{\"query\", \"positive\", \"negative\"}})")
        query, positive = _text(obj, "query", where), _text(obj, "positive", where)
        negatives = obj["negative"] if isinstance(obj["negative"], list) else [obj["negative"]]
        if not negatives:
            raise InputError(f"{where}: field 'negative' is an empty list")
        negs = [_text({"negative": n}, "negative", where) for n in negatives]
        return Example(row_id, [positive, *negs], [(query, 0)])
    raise InputError(f"{where}: row has neither NevIR fields (q1, doc1, q2, doc2) nor triple fields "
                     f"(query, positive, negative)")


def read_examples(path: str | Path) -> list[Example]:
    """Training rows from a JSONL file; a malformed row raises InputError naming file:line."""
    from lsr_lucene.io.output import open_jsonl

    examples = [parse_example(obj, f"{path}:{line_no}", f"line{line_no}") for line_no, obj in open_jsonl(path)]
    if not examples:
        raise InputError(f"{path}: no training rows (empty file?)")
    return examples


@dataclass
class NevirRow:
    """A dev row: q1 should rank doc1 above doc2, q2 doc2 above doc1."""

    id: str
    q1: str
    doc1: str
    q2: str
    doc2: str


def read_nevir_rows(path: str | Path) -> list[NevirRow]:
    """NevIR dev rows ``{"id"?, "q1", "doc1", "q2", "doc2"}``; InputError on a missing field, empty text or no rows."""
    from lsr_lucene.io.output import open_jsonl

    rows = []
    for line_no, obj in open_jsonl(path):
        where = f"{path}:{line_no}"
        missing = [k for k in NEVIR_FIELDS if k not in obj]
        if missing:
            raise InputError(f"{where}: NevIR row lacks field(s) {', '.join(missing)}")
        rows.append(NevirRow(str(obj.get("id", f"line{line_no}")), *(_text(obj, k, where) for k in NEVIR_FIELDS)))
    if not rows:
        raise InputError(f"{path}: no NevIR rows (empty file?); the dev file needs rows "
                         f"{{\"q1\", \"doc1\", \"q2\", \"doc2\"}}")
    return rows


def split_holdout(examples: Sequence[Example], count: int, seed: int) -> tuple[list[Example], list[Example]]:
    """Hold out about ``count`` rows for early stopping; rows sharing a document text stay on the same side."""
    if count <= 0:
        return list(examples), []
    parent = list(range(len(examples)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, ex in enumerate(examples):
        for doc in ex.docs:
            j = owner.setdefault(doc, i)
            parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(examples)):
        groups.setdefault(find(i), []).append(i)
    order = sorted(groups.values(), key=lambda g: g[0])
    random.Random(seed).shuffle(order)
    held: set[int] = set()
    for group in order:
        if len(held) >= count:
            break
        held.update(group)
    if len(held) >= len(examples):
        raise InputError(f"--holdout {count} leaves no training rows ({len(examples)} rows)")
    return ([ex for i, ex in enumerate(examples) if i not in held],
            [ex for i, ex in enumerate(examples) if i in held])


def examples_as_nevir(examples: Iterable[Example]) -> list[NevirRow]:
    """Held-out NevIR examples as dev rows (triples are skipped: pairwise accuracy needs both queries)."""
    return [NevirRow(ex.id, ex.queries[0][0], ex.docs[0], ex.queries[1][0], ex.docs[1])
            for ex in examples if len(ex.queries) == 2 and len(ex.docs) == 2]
