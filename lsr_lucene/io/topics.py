"""Read queries (TSV, TREC topics, JSONL, BEIR, ir_datasets) and pre-encoded query vectors."""
from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path
from typing import Iterator, Sequence

from lsr_lucene.io.corpus import (check_id, irds_id, irds_iter, jsonl_objects, load_irds, missing,
                                  open_text, tsv_rows)
from lsr_lucene.errors import InputError

QID_KEYS = ("id", "qid", "_id", "query_id")
QUERY_TEXT_KEYS = ("text", "query", "title", "contents")
TREC_READER = "io.anserini.search.topicreader.TrecTopicReader"
FLOAT32_MAX = 3.4028234663852886e38  # Lucene scores (and our Java query weights) are floats
# Largest Σ|w| of a query: with impacts up to 2^31 - 1 (lsr_lucene.index.impact.MAX_WEIGHT), Σ|w|·impact stays
# within half the float range, so no score, partial sum or CPT pair score overflows to infinity.
MAX_QUERY_WEIGHT_SUM = FLOAT32_MAX / 2 / (2**31 - 1)


class _Collector:
    """Ordered qid -> value map that rejects duplicate qids with file:line."""

    def __init__(self, path: object):
        self.path = path
        self.items: dict = {}
        self.where: dict[str, int] = {}

    def add(self, qid: str, value, line_no: int | None) -> None:
        where = f"{self.path}:{line_no}" if line_no is not None else f"{self.path}"
        check_id(qid, where, "query")
        if qid in self.items:
            first = f" (first at line {self.where[qid]})" if self.where.get(qid) else ""
            raise InputError(f"{where}: duplicate query id {qid!r}{first}")
        self.items[qid] = value
        self.where[qid] = line_no or 0

    def result(self) -> dict:
        if not self.items:
            raise InputError(f"{self.path}: no queries found (empty file?)")
        return self.items


def _first_content_line(path: Path) -> str:
    with open_text(path) as handle:
        for line in handle:
            if line.strip():
                return line.strip()
    return ""


def _existing_file(spec: str | Path) -> Path:
    path = Path(spec)
    if path.is_dir():
        for name in ("queries.jsonl", "queries.jsonl.gz", "topics.tsv", "queries.tsv"):
            if (path / name).is_file():
                return path / name
        raise InputError(f"{path}: directory holds no queries.jsonl or topics.tsv")
    if not path.is_file():
        raise missing(path)
    return path


def _tsv_topics(path: Path) -> dict[str, str]:
    out = _Collector(path)
    for line_no, _line, cols in tsv_rows(path, "a query"):
        if len(cols) != 2:
            raise InputError(f"{path}:{line_no}: expected 'qid<TAB>query text', "
                             f"got {len(cols)} tab-separated column(s)")
        qid, text = cols[0].strip(), cols[1].strip()
        if not qid:
            raise InputError(f"{path}:{line_no}: empty query id")
        if not text:
            raise InputError(f"{path}:{line_no}: query {qid} has no text")
        out.add(qid, text, line_no)
    return out.result()


def _jsonl_topics(path: Path) -> dict[str, str]:
    out = _Collector(path)
    for line_no, obj in jsonl_objects(path):
        qid = next((obj[k] for k in QID_KEYS if obj.get(k) is not None), None)
        if qid is None or str(qid).strip() == "":
            raise InputError(f"{path}:{line_no}: query has no id (expected \"id\", \"qid\" or \"_id\")")
        text = next((obj[k] for k in QUERY_TEXT_KEYS if isinstance(obj.get(k), str)), None)
        if text is None or not text.strip():
            raise InputError(f"{path}:{line_no}: query {qid} has no text (expected \"text\", \"query\" or \"title\")")
        out.add(str(qid).strip(), text.strip(), line_no)
    return out.result()


def _trec_topics(path: Path, field: str) -> dict[str, str]:
    """TREC <top> topics through Anserini's TrecTopicReader (the reader Pyserini uses), in file order."""
    from lsr_lucene.jvm import runtime as jvm

    reader = jvm.autoclass("io.anserini.search.topicreader.TopicReader")
    try:
        topics = reader.getTopicsWithStringIdsFromFileWithTopicReaderClass(TREC_READER, str(path))
    except Exception as exc:  # pyjnius JavaException: a topic file Anserini cannot parse
        raise InputError(f"{path}: Anserini's TrecTopicReader could not parse it ({exc})") from None
    if topics is None or topics.isEmpty():
        raise InputError(f"{path}: no <top> topics found")
    parsed: dict[str, str] = {}
    for qid in topics.keySet().toArray():
        fields = topics.get(qid)
        value = fields.get(field) if fields.containsKey(field) else None
        parsed[str(qid)] = (value or "").strip()
    # Anserini returns a hash map: restore the order of the <num> lines and catch duplicates it would merge.
    with open_text(path) as handle:
        text = handle.read()
    out = _Collector(path)
    for match in re.finditer(r"<num>\s*(?:Number:)?\s*(\S+)", text):
        qid, line_no = match.group(1), text.count("\n", 0, match.start()) + 1
        if qid in parsed:
            out.add(qid, parsed[qid], line_no)
    for qid in parsed:
        if qid not in out.items:
            out.add(qid, parsed[qid], None)
    for qid, value in out.items.items():
        if not value:
            raise InputError(f"{path}:{out.where.get(qid) or '?'}: topic {qid} has an empty <{field}>")
    return out.result()


def _irds_topics(dataset_id: str) -> dict[str, str]:
    dataset = load_irds(dataset_id, "queries")
    out = _Collector(f"irds:{dataset_id}")
    for query in irds_iter(dataset_id, dataset.queries_iter()):
        text = getattr(query, "text", None) or getattr(query, "title", None)
        if text is None and hasattr(query, "default_text"):
            text = query.default_text()
        out.add(str(query.query_id), (text or "").strip(), None)
    return out.result()


def topics_format(path: Path) -> str:
    """Sniff a topic file's format from its first non-blank line: "trec", "jsonl" or "tsv"."""
    first = _first_content_line(path)
    if not first:
        raise InputError(f"{path}: empty file")
    if first.lower().startswith("<top"):
        return "trec"
    if first.startswith("{"):
        return "jsonl"
    return "tsv"


def read_topics(spec: str | Path, field: str = "title") -> dict[str, str]:
    """Queries as an ordered ``{qid: text}`` from a TSV/TREC/JSONL/BEIR file or folder, or ``irds:<id>``.

    ``field`` picks the TREC topic field (title, description, narrative).
    """
    dataset_id = irds_id(spec)
    if dataset_id is not None:
        return _irds_topics(dataset_id)
    path = _existing_file(spec)
    kind = topics_format(path)
    if kind == "trec":
        return _trec_topics(path, field)
    if kind == "jsonl":
        return _jsonl_topics(path)
    return _tsv_topics(path)


def _weight(value, where: str, term: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            (isinstance(value, float) and not math.isfinite(value)):
        raise InputError(f"{where}: weight of term {term!r} is not a finite number ({value!r})")
    if abs(value) > FLOAT32_MAX:
        raise InputError(f"{where}: weight of term {term!r} is {value}, beyond the float range of Lucene's scores")
    if not term or any(ch.isspace() for ch in term):
        raise InputError(f"{where}: term {term!r} is empty or contains whitespace")
    return float(value)


def check_query_weights(vector: dict[str, float], where: str) -> None:
    """InputError when a query's weights could overflow Lucene's float scores (see MAX_QUERY_WEIGHT_SUM)."""
    total = sum(abs(w) for w in vector.values())
    if total > MAX_QUERY_WEIGHT_SUM:
        raise InputError(f"{where}: absolute term weights sum to {total:.3g}, over {MAX_QUERY_WEIGHT_SUM:.3g}: "
                         "weight x impact would overflow Lucene's float scores")


def _jsonl_vectors(path: Path) -> Iterator[tuple[int, str, dict[str, float]]]:
    for line_no, obj in jsonl_objects(path):
        where = f"{path}:{line_no}"
        qid = next((obj[k] for k in QID_KEYS if obj.get(k) is not None), None)
        if qid is None or str(qid).strip() == "":
            raise InputError(f"{where}: query vector has no id (expected \"id\" or \"qid\")")
        vector = obj.get("vector")
        if not isinstance(vector, dict):
            raise InputError(f"{where}: query {qid} has no \"vector\" object of term weights")
        yield line_no, str(qid).strip(), query_weights(vector, where, f"{where}: query {qid}")


def query_weights(vector: dict, where: str, query: str | None = None) -> dict[str, float]:
    """A {term: weight} query vector checked as a ``--query-vectors`` line is (finite float32 weights, terms without
    whitespace; ``query`` names it in the weight-range errors, default ``where``)."""
    weights = {str(t): _weight(w, where, str(t)) for t, w in vector.items()}
    check_query_weights(weights, query or where)
    return weights


def _tsv_vectors(path: Path) -> Iterator[tuple[int, str, dict[str, float]]]:
    for line_no, _line, cols in tsv_rows(path, "a query"):
        if len(cols) != 2 or not cols[0].strip():
            raise InputError(f"{path}:{line_no}: expected 'qid<TAB>token token ...' (Anserini pretokenized "
                             f"query: weight = repetitions), got {len(cols)} tab-separated column(s)")
        counts = Counter(cols[1].split())
        yield line_no, cols[0].strip(), {t: float(n) for t, n in counts.items()}


def read_query_vectors(spec: str | Path) -> dict[str, dict[str, float]]:
    """Pre-encoded queries ``{qid: {term: weight}}``: JSONL ``{"id", "vector"}`` or Anserini's repeated-token TSV."""
    path = Path(spec)
    if not path.is_file():
        raise missing(path)
    first = _first_content_line(path)
    if not first:
        raise InputError(f"{path}: empty file")
    rows = _jsonl_vectors(path) if first.startswith("{") else _tsv_vectors(path)
    out = _Collector(path)
    for line_no, qid, vector in rows:
        out.add(qid, vector, line_no)
    return out.result()


def refuse_duplicate_qids(qids: Sequence[str], what: str) -> None:
    """InputError naming the first qid given twice (a dict of results would keep only one of them)."""
    seen: set[str] = set()
    for qid in qids:
        if qid in seen:
            raise InputError(f"duplicate qid {qid!r} in the {what}")
        seen.add(qid)
