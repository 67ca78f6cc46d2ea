"""Absence stated in documents: a candidate that says B is absent ("contains no caffeine", "caffeine-free", "does
not include X") answers "A without B" literally, so the `default`'s penalty must not treat it as being about B
(issue 49: "tea without caffeine" ranked caffeinated teas first, because the wanted teas name caffeine to deny it).

:func:`absence_share` reads a document's text: of its mentions of B's content words (a crude prefix stem, no
library), the share that stand in a negation's scope (a NegEx-style window after "no", "not", "without", "free of",
"lacks", "…n't", "neither/nor", or before "-free" / "free" / "is absent"). The fused not node
(:func:`lsr_lucene.compose.penalty.gated_not`) waives that share of the penalty and no more (issue 65: it never lifts
a document above what A alone gives it). The same read tells whether the text contains B as the strict filter judges
it (:func:`lsr_lucene.search.text_filter.text_contains`), which a short-term B's penalty needs. Texts are read for the
``READ_DEPTH`` best candidates by Â that match both legs (a stored text costs a JVM call).
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


def _mentions(token: str, stems: Sequence[str]) -> bool:
    return any(token.startswith(s) if len(s) >= STEM else token.rstrip("s") == s for s in stems)


def absence_share(text: str | None, stems: Sequence[str]) -> float:
    """Share of the document's mentions of ``stems`` that are negated (0 when it never mentions them)."""
    if not text or not stems:
        return 0.0
    lower = text.lower()
    if not any(stem in lower for stem in stems):  # most candidates never name B: no tokenising
        return 0.0
    tokens = _tokens(text)
    hits = [i for i, tok in enumerate(tokens) if _mentions(tok, stems)]
    if not hits:
        return 0.0
    flags = _negated(tokens)
    return sum(flags[i] for i in hits) / len(hits)


class Absence:
    """What a fused not node reads of a candidate's stored text (``texts``: docids -> texts, e.g. a backend's
    ``texts``), fetched on first use and kept: ``shares``, the absence share of B's content words, and ``containing``,
    whether the text contains one of B's items as the strict filter judges it."""

    def __init__(self, b_texts: Sequence[str], texts: Callable[[Sequence[str]], Mapping[str, str | None]]):
        self.stems = content_stems(b_texts)
        self.items = list(b_texts)
        self._texts = texts
        self._seen: dict[str, tuple[float, bool]] = {}

    def _read(self, docs: list[str]) -> None:
        todo = [d for d in docs if d not in self._seen]
        if todo:
            texts = self._texts(todo)
            self._seen.update((d, (absence_share(texts.get(d), self.stems), _contains(texts.get(d), self.items)))
                              for d in todo)

    def shares(self, docs: Iterable[str]) -> dict[str, float]:
        """``{doc: share}`` for ``docs`` (texts read once, in one call, for those not seen yet)."""
        docs = list(docs)
        self._read(docs)
        return {d: self._seen[d][0] for d in docs}

    def containing(self, docs: Iterable[str]) -> set[str]:
        """Those of ``docs`` whose text contains one of B's items (texts read once)."""
        docs = list(docs)
        self._read(docs)
        return {d for d in docs if self._seen[d][1]}


def _contains(text: str | None, items: Sequence[str]) -> bool:
    """Whether ``text`` contains one of ``items`` (an item with no indexed word, only stop words, contains nothing)."""
    if not text:
        return False
    from lsr_lucene.errors import InputError
    from lsr_lucene.search.text_filter import text_contains

    for item in items:
        try:
            if text_contains(text, item):
                return True
        except InputError:
            continue
    return False
