"""Whether a text contains a word or phrase, judged as the strict filter judges it (Lucene's EnglishAnalyzer,
:mod:`lsr_lucene.search.text_filter`), and a collection's documents analysed once for many such judgements."""
from __future__ import annotations

from typing import Iterable, Mapping

from lsr_lucene.search.text_filter import analysed_positions, analysed_terms, text_contains

__all__ = ["analysed_positions", "analysed_terms", "text_contains", "containing"]


def containing(texts: Mapping[str, str], clause: str, terms: Mapping[str, frozenset] | None = None) -> set[str]:
    """The docids of ``texts`` that contain ``clause`` (``terms``: each document's analysed term set, a prefilter)."""
    wanted = set(analysed_terms(clause.strip('"')))
    docs: Iterable[str] = (d for d in texts if terms is None or wanted <= terms[d])
    return {d for d in docs if text_contains(texts[d], clause)}
