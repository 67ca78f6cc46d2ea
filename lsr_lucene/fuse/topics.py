"""Split a collection's judged topics in two by a fixed seed (fit on one part, report on the other)."""
from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Mapping

from lsr_lucene.errors import InputError
from lsr_lucene.eval.trec import read_qrels
from lsr_lucene.io.output import atomic_output
from lsr_lucene.io.topics import read_topics

DEFAULT_SEED = 17


def split_ids(qids: list[str], seed: int = DEFAULT_SEED, fraction: float = 0.5) -> tuple[list[str], list[str]]:
    """(fit, eval) ids: sorted ids shuffled by ``random.Random(seed)``; the first ``fraction`` fit, the rest eval."""
    if not 0 < fraction < 1:
        raise InputError(f"fit fraction must be between 0 and 1, got {fraction}")
    shuffled = sorted(qids)
    random.Random(seed).shuffle(shuffled)
    cut = round(len(shuffled) * fraction)
    if cut == 0 or cut == len(shuffled):
        raise InputError(f"{len(shuffled)} judged topics cannot be split {fraction:g}/{1 - fraction:g}")
    return sorted(shuffled[:cut]), sorted(shuffled[cut:])


def one_line(text: str) -> str:
    """Query text with every run of whitespace (tabs, newlines) as one space, for TSV topics."""
    return re.sub(r"\s+", " ", text).strip()


def _write_part(topics: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]], ids: list[str],
                out: Path, part: str, overwrite: bool) -> None:
    with atomic_output(out / f"topics.{part}.tsv", overwrite) as tmp:
        Path(tmp).write_text("".join(f"{q}\t{one_line(topics[q])}\n" for q in ids), encoding="utf-8")
    with atomic_output(out / f"qrels.{part}.txt", overwrite) as tmp:
        Path(tmp).write_text("".join(f"{q} 0 {doc} {gain}\n" for q in ids for doc, gain in qrels[q].items()),
                             encoding="utf-8")


def split_topics(topics_path: str | Path, qrels_path: str | Path, output_dir: str | Path,
                 seed: int = DEFAULT_SEED, fraction: float = 0.5, overwrite: bool = False) -> tuple[int, int]:
    """Write ``topics.{fit,eval}.tsv`` and ``qrels.{fit,eval}.txt`` under ``output_dir`` for the judged topics."""
    topics = read_topics(topics_path)
    qrels = read_qrels(qrels_path)
    judged = [q for q in topics if q in qrels]
    if not judged:
        raise InputError(f"no topic of {topics_path} has judgements in {qrels_path}")
    fit_ids, eval_ids = split_ids(judged, seed, fraction)
    out = Path(output_dir)
    _write_part(topics, qrels, fit_ids, out, "fit", overwrite)
    _write_part(topics, qrels, eval_ids, out, "eval", overwrite)
    return len(fit_ids), len(eval_ids)
