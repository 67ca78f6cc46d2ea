"""The strict text filter of explicit exclusions (``-word``, ``NOT "a phrase"``), judged in Python as Lucene judges it.

One analyser, Lucene's EnglishAnalyzer through the JVM (Java ``search.TextFilter``: standard tokenizer, possessive
's dropped, lower case, English stop words removed, Porter stems), reads both the index's text field and the
excluded clauses. A clause is a word or a phrase (quotes optional; several words are a phrase: their analysed terms at
the positions the analyser gives them, stop-word gaps included, as Lucene's PhraseQuery matches them). A filter
expression is what a query spec's ``exclude`` carries: ``{"text": clause}``, ``{"any": words}`` (one of the
terms), ``{"or": [..]}``, ``{"and": [..]}``, ``{"not": e}``. :func:`text_contains` and :func:`expression_matches` are
the brute-force reference of the filter that searches apply inside Lucene.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Mapping, Sequence

from lsr_lucene.errors import InputError


@lru_cache(maxsize=1)
def _java():
    from lsr_lucene.jvm.classes import java_class

    return java_class("search.TextFilter")


@lru_cache(maxsize=4096)
def analysed_positions(text: str) -> tuple[str, ...]:
    """The analysed terms of ``text`` by position ("" where a stop word left a gap), as the text field indexes it."""
    return tuple(str(t) for t in _java().positions(text))


def analysed_terms(text: str) -> list[str]:
    """The terms Lucene's EnglishAnalyzer makes of ``text`` (case folded, stop words dropped, Porter stems)."""
    return [t for t in analysed_positions(text) if t]


def _clause_terms(clause: str) -> tuple[tuple[int, str], ...]:
    """(offset, term) of a clause's analysed terms, offsets from its first term; InputError for stop words alone."""
    inner = clause.strip()
    if len(inner) >= 2 and inner[0] == inner[-1] == '"':
        inner = inner[1:-1]
    pos = analysed_positions(inner)
    found = [(i, t) for i, t in enumerate(pos) if t]
    if not found:
        raise InputError(f"'{clause}' has no word the text field indexes (only English stop words or punctuation), "
                         "so it cannot exclude anything")
    first = found[0][0]
    return tuple((i - first, t) for i, t in found)


def _holds_phrase(doc: tuple[str, ...], phrase: tuple[tuple[int, str], ...]) -> bool:
    head = phrase[0][1]
    last = phrase[-1][0]
    return any(doc[p] == head and p + last < len(doc) and all(doc[p + o] == t for o, t in phrase[1:])
               for p in range(len(doc) - last))


def text_contains(text: str, clause: str) -> bool:
    """Whether ``text`` contains ``clause`` (a word, or a phrase with or without quotes) as the filter judges it."""
    return _holds_phrase(analysed_positions(text), _clause_terms(clause))


def indexes_a_word(clause: str) -> bool:
    """Whether a clause has a word the text field indexes (one of only stop words or punctuation contains nothing)."""
    try:
        _clause_terms(clause)
    except InputError:
        return False
    return True


def any_of(items: Sequence[str]) -> dict | None:
    """The filter expression of the documents that contain one of ``items`` (those with an indexed word; None when
    none has one)."""
    clauses = [{"text": item} for item in items if indexes_a_word(item)]
    return None if not clauses else clauses[0] if len(clauses) == 1 else {"or": clauses}


def texts_containing(texts: Sequence[str | None], items: Sequence[str]) -> list[bool]:
    """Per text, whether it contains one of ``items`` (:func:`text_contains`; a text of None contains nothing, an item
    with no indexed word neither): the brute-force reference of :func:`any_of`'s filter."""
    clauses = [item for item in items if indexes_a_word(item)]
    return [any(text_contains(text, item) for item in clauses) if text else False for text in texts]


def expression_matches(text: str | None, expression: Mapping) -> bool:
    """Whether a document of ``text`` matches a filter expression (a document without text matches no clause)."""
    doc = analysed_positions(text) if text else ()
    return _matches(doc, expression)


def _matches(doc: tuple[str, ...], e: Mapping) -> bool:
    (op, value), = e.items()
    if op == "text":
        return _holds_phrase(doc, _clause_terms(value))
    if op == "any":
        return any(t in doc for _, t in _clause_terms(value))
    if op == "or":
        return any(_matches(doc, x) for x in value)
    if op == "and":
        return all(_matches(doc, x) for x in value)
    if op == "not":
        return not _matches(doc, value)
    raise InputError(f"unknown text filter operator {op!r}")
