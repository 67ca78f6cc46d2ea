"""TREC run files, the one reader and writer: ``qid Q0 docid rank score tag`` lines, score descending and ties by
docid ascending (Anserini's convention), scores printed as Python's ``'%.6f'`` (Java's ``RunBuffer`` prints the
same bytes). Reading validates every line and names the first bad one as ``file:line``; nothing is skipped."""
from __future__ import annotations

import heapq
import math
from pathlib import Path
from typing import IO, Iterable, Iterator, Mapping, NamedTuple, Sequence, Union

from lsr_lucene.errors import InputError
from lsr_lucene.io.corpus import missing, open_text
from lsr_lucene.io.output import atomic_output
from lsr_lucene.io.ranking import Hits, ordered

DECIMALS = 6
RankedOrScores = Union[Sequence[tuple[str, float | str]], Mapping[str, float]]  # a str score: as printed


class RunLine(NamedTuple):
    """One validated run line."""

    qid: str
    docid: str
    rank: int
    score: float
    tag: str


# ---------------------------------------------------------------- reading


def parse_line(line: str, where: str) -> RunLine | None:
    """A run line as RunLine (None for a blank line); InputError naming ``where`` (file:line) when malformed."""
    cols = line.split()
    if not cols:
        return None
    if len(cols) != 6:
        raise InputError(f"{where}: expected 6 columns 'qid Q0 docid rank score tag', got {len(cols)}")
    qid, _, docid, rank, score, tag = cols
    try:
        rank_value = int(rank)
    except ValueError:
        raise InputError(f"{where}: rank {rank!r} is not an integer") from None
    try:
        value = float(score)
    except ValueError:
        raise InputError(f"{where}: score {score!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(f"{where}: score {score!r} is not finite")
    return RunLine(qid, docid, rank_value, value, tag)


def iter_lines(lines: Iterable[str], source: str) -> Iterator[RunLine]:
    """Validated RunLines of run text (``source`` names it in errors); a document twice for a query is an error."""
    seen: dict[str, set[str]] = {}
    for line_no, line in enumerate(lines, 1):
        row = parse_line(line, f"{source}:{line_no}")
        if row is None:
            continue
        docs = seen.setdefault(row.qid, set())
        if row.docid in docs:
            raise InputError(f"{source}:{line_no}: document {row.docid} appears twice for query {row.qid}")
        docs.add(row.docid)
        yield row


def iter_run(path: str | Path) -> Iterator[RunLine]:
    """Validated RunLines of a (possibly gzipped) run file, in file order."""
    path = Path(path)
    if not path.is_file():
        raise missing(path, "run file")
    with open_text(path) as handle:
        yield from iter_lines(handle, str(path))


def read_hits(path: str | Path, allow_empty: bool = True) -> dict[str, Hits]:
    """``{qid: [(docid, score), ...]}`` of a run file, in file order."""
    return _collect(iter_run(path), path, allow_empty)


def parse_hits(text: str, source: str) -> dict[str, Hits]:
    """``{qid: [(docid, score), ...]}`` of run text in memory (e.g. what the Java searcher returns), in order."""
    return _collect(iter_lines(text.splitlines(), source), source, True)


def _collect(rows: Iterable[RunLine], source: str | Path, allow_empty: bool) -> dict[str, Hits]:
    out: dict[str, Hits] = {}
    for row in rows:
        out.setdefault(row.qid, []).append((row.docid, row.score))
    if not out and not allow_empty:
        raise InputError(f"{source}: empty run file")
    return out


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """``{qid: {docid: score}}`` of a run file; a malformed or empty file raises InputError."""
    return {qid: dict(hits) for qid, hits in read_hits(path, allow_empty=False).items()}


def answered(path: str | Path) -> set[str]:
    """The qids that have at least one line in a run file."""
    return {row.qid for row in iter_run(path)}


# ---------------------------------------------------------------- writing


def format_score(score: float, decimals: int = DECIMALS) -> str:
    """A score as run files print it: ``'%.{decimals}f'`` (round half to even on the exact binary value)."""
    return f"{score:.{decimals}f}"


def run_lines(qid: str, hits: Iterable[tuple[str, float | str]], tag: str, decimals: int = DECIMALS) -> Iterator[str]:
    """Lines of one query's hits, already in run order; a score given as text is written as it is."""
    for rank, (doc, score) in enumerate(hits, 1):
        shown = score if isinstance(score, str) else format_score(score, decimals)
        yield f"{qid} Q0 {doc} {rank} {shown} {tag}\n"


def write_lines(out: IO[str], results: Mapping[str, RankedOrScores], tag: str, decimals: int = DECIMALS,
                hits: int | None = None, qids: Sequence[str] | None = None, sort: bool = True) -> None:
    """Write queries' hits to an open text stream (sorted into run order unless ``sort`` is false), ``hits`` per
    query; ``qids`` chooses and orders the queries written (default: all, in mapping order)."""
    for qid in (results if qids is None else qids):
        ranked = results.get(qid, ())
        items = list(ranked.items()) if isinstance(ranked, Mapping) else list(ranked)
        if sort:
            items = ordered(items)
        out.writelines(run_lines(qid, items if hits is None else items[:hits], tag, decimals))


def write_run(results: Mapping[str, RankedOrScores], output: str | Path, tag: str, overwrite: bool = False,
              decimals: int = DECIMALS, hits: int | None = None, qids: Sequence[str] | None = None) -> None:
    """A TREC run file (score desc, ties by docid asc, ``hits`` per query), written to a temporary and renamed
    when complete; refuses an existing file unless ``overwrite``."""
    with atomic_output(output, overwrite=overwrite) as tmp:
        with open(tmp, "w", encoding="utf-8") as out:
            write_lines(out, results, tag, decimals, hits, qids)


# ---------------------------------------------------------------- merging


def merge_hits(parts: Iterable[Sequence[tuple]], k: int | None = None, score_index: int = 1) -> list:
    """Several hit lists ``(docid, score, ...)`` of one query, each in run order (e.g. one per shard), merged in run
    order by ``hit[score_index]`` then docid, ``k`` kept; a document in several lists keeps its first occurrence."""
    out: list = []
    seen: set[str] = set()
    for hit in heapq.merge(*parts, key=lambda hit: (-hit[score_index], hit[0])):
        if hit[0] in seen:
            continue
        seen.add(hit[0])
        out.append(hit)
        if k is not None and len(out) >= k:
            break
    return out
