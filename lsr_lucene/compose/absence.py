"""Absence stated in documents: a candidate that says B is absent ("contains no caffeine", "caffeine-free", "does
not include X") answers "A without B" literally, so the `default`'s penalty must not treat it as being about B
(issue 49: "tea without caffeine" ranked caffeinated teas first, because the wanted teas name caffeine to deny it).

:func:`absence_share` reads a document's text: of its mentions of B's content words (a crude prefix stem, no
library), the share that stand in a negation's scope (a NegEx-style window after "no", "not", "without", "free of",
"lacks", "…n't", "neither/nor", or before "-free" / "free" / "is absent"). The fused not node
(:func:`lsr_lucene.compose.penalty.gated_not`) waives that share of the penalty and no more (issue 65: it never lifts
a document above what A alone gives it). Whether the text contains B as the strict filter judges it
(:func:`lsr_lucene.search.text_filter.text_contains`), which a short-term B's penalty needs, is asked of the backend
(one Lucene query over the index's text field for all candidates). Texts are read for the ``READ_DEPTH`` best
candidates by Â that match both legs (stored texts cost a JVM call and their decompression).
"""
from __future__ import annotations

import re
from typing import Callable, Iterable, Mapping, Sequence

from lsr_lucene.compose.negation_parser import B_FILLER

STEM = 6  # a word and a mention match when both start with the word's first STEM letters (whole word if shorter)
SCOPE = 5  # words after a negation trigger that it covers (NegEx uses 5-6), unless a clause boundary comes first
# candidates read per fused node: those matching both legs, best by Â first. A bound on cost, not a tuned setting:
# a stored text costs about 0.5 ms through the JVM (the raw field holds the whole vector line); deeper candidates
# keep the plain gated score
READ_DEPTH = 100

_STOP = B_FILLER | set("""
and or nor neither either not no without but for by at as on to into than then its it their his her our your my
this there here what which who whom whose how when where why any some such other others than very much many
general generally kind kinds type types sort sorts form forms way ways
""".split())
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?|[.,;:!?()\[\]\"]")
# one-word triggers whose scope runs forward; "free"/"absent" etc. look back (see _BACKWARD)
_FORWARD = set("""
no not without never nor neither cannot unable lacks lack lacking lacked none nothing zero non devoid absence
""".split())
_FORWARD_PAIRS = {("free", "of"), ("free", "from"), ("absence", "of"), ("devoid", "of"), ("instead", "of"),
                  ("rather", "than")}
_BACKWARD = set("free absent missing excluded removed".split())  # "caffeine-free", "caffeine is absent"
_BOUNDARY = set(". , ; : ! ? ( ) [ ] \" but however although though yet while whereas which who unlike".split())


def content_stems(texts: Iterable[str]) -> list[str]:
    """B's content words as prefix stems: lower-cased, filler and stop words dropped, at most ``STEM`` letters."""
    stems: list[str] = []
    for text in texts:
        for word in _WORD.findall(text.lower()):
            word = word.replace("’", "'").split("'")[0]
            if len(word) < 3 or word in _STOP or word.isdigit():
                continue
            stem = word[:STEM] if len(word) > STEM else word.rstrip("s") if len(word) > 3 else word
            if stem not in stems:
                stems.append(stem)
    return stems


def _tokens(text: str) -> list[str]:
    """Words and punctuation; "caffeine-free" becomes "caffeine", "free"; "doesn't" becomes "does", "not"."""
    out: list[str] = []
    for token in _WORD.findall(text.lower().replace("-", " ")):
        token = token.replace("’", "'")
        if token.endswith("n't"):
            out.extend([token[:-3], "not"])
        else:
            out.append(token.split("'")[0] if "'" in token else token)
    return out


def _negated(tokens: Sequence[str]) -> list[bool]:
    """Per token: whether it stands in a negation's scope (forward window from a trigger, or just before a
    backward trigger such as "free"/"absent")."""
    flags = [False] * len(tokens)
    for i, tok in enumerate(tokens):
        pair = (tok, tokens[i + 1]) if i + 1 < len(tokens) else None
        if tok in _FORWARD or pair in _FORWARD_PAIRS:
            start = i + (2 if pair in _FORWARD_PAIRS else 1)
            for j in range(start, min(len(tokens), start + SCOPE)):
                if tokens[j] in _BOUNDARY:
                    break
                flags[j] = True
        elif tok in _BACKWARD and i > 0:
            j = i - 1
            if tokens[j] in ("is", "are", "was", "were", "be", "being") and j > 0:  # "caffeine is absent"
                j -= 1
            if tokens[j] not in _BOUNDARY:
                flags[j] = True
    return flags


def absence_share(text: str | None, stems: Sequence[str]) -> float:
    """Share of the document's mentions of ``stems`` that are negated (0 when it never mentions them)."""
    if not text or not stems:
        return 0.0
    lower = text.lower()
    if not any(stem in lower for stem in stems):  # most candidates never name B: no tokenising
        return 0.0
    tokens = _tokens(text)
    # a token mentions B when it starts with one of B's stems of STEM letters or more, or is (less a plural s) one of
    # the shorter ones
    prefixes = tuple(s for s in stems if len(s) >= STEM)
    words = {s for s in stems if len(s) < STEM}
    hits = [i for i, tok in enumerate(tokens)
            if (prefixes and tok.startswith(prefixes)) or (words and tok.rstrip("s") in words)]
    if not hits:
        return 0.0
    flags = _negated(tokens)
    return sum(flags[i] for i in hits) / len(hits)


class Absence:
    """What a fused not node reads of its candidates (fetched on first use and kept): ``shares``, the absence share of
    B's content words in each stored text (``texts``: docids -> texts, e.g. a backend's ``texts``), and
    ``containing``, whether a text contains one of B's items as the strict filter judges it (``contains``: (items,
    docids) -> flags, a backend's ``containing``: one Lucene query over the text field; None: the texts read)."""

    def __init__(self, b_texts: Sequence[str], texts: Callable[[Sequence[str]], Mapping[str, str | None]],
                 contains: Callable[[Sequence[str], Sequence[str]], Sequence[bool]] | None = None):
        self.stems = content_stems(b_texts)
        self.items = list(b_texts)
        self._texts = texts
        self._contains = contains
        self._read: dict[str, str | None] = {}
        self._shares: dict[str, float] = {}
        self._containing: dict[str, bool] = {}

    def _text_of(self, docs: list[str]) -> dict[str, str | None]:
        todo = [d for d in docs if d not in self._read]
        if todo:
            texts = self._texts(todo)
            self._read.update((d, texts.get(d)) for d in todo)
        return {d: self._read[d] for d in docs}

    def shares(self, docs: Iterable[str]) -> dict[str, float]:
        """``{doc: share}`` for ``docs`` (texts read once, in one call, for those not seen yet)."""
        docs = list(docs)
        todo = [d for d in docs if d not in self._shares]
        if todo:
            texts = self._text_of(todo)
            self._shares.update((d, absence_share(texts[d], self.stems)) for d in todo)
        return {d: self._shares[d] for d in docs}

    def containing(self, docs: Iterable[str]) -> set[str]:
        """Those of ``docs`` whose text contains one of B's items (asked once per document)."""
        docs = list(docs)
        todo = [d for d in docs if d not in self._containing]
        if todo:
            if self._contains is not None:
                flags = self._contains(self.items, todo)
            else:
                from lsr_lucene.search.text_filter import texts_containing

                texts = self._text_of(todo)
                flags = texts_containing([texts[d] for d in todo], self.items)
            self._containing.update(zip(todo, map(bool, flags)))
        return {d for d in docs if self._containing[d]}
