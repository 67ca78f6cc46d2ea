"""A query's text as the negation parser reads it: punctuation and apostrophes unified, white space collapsed, and
split exclusion verbs joined so that the cue comes before what it excludes ("leaving X out" -> "leaving out X"); and
where its sentences end (the parser and the intent rules split alike)."""
from __future__ import annotations

import re

_SPACE_RE = re.compile(r"\s+")
_TRANSLATE = str.maketrans({"？": "?", "，": ",", "；": ";", "！": "!", "’": "'", "‘": "'", "\u00a0": " ",
                            "\u3000": " ", "：": ":"})

# a split exclusion verb joined up, so the cue comes before what it excludes: "leaving X out (of it)" -> "leaving out
# X", "setting X aside" -> "setting aside X", "with X left out" -> "leaving out X"
_SPLIT_LEAVE = re.compile(r"\b(leav(?:e|es|ing)|(?:set|put)(?:s|ting)?|lay(?:s|ing)?)\s+([^,;?!.]{1,80}?)\s+"
                          r"(out|aside)(?:\s+of\s+(?:it|this|that|account|consideration))?(?=\s*(?:[,;?!.]|$))",
                          re.IGNORECASE)
_LEFT_OUT = re.compile(r"\bwith\s+([^,;?!.]{1,80}?)\s+left\s+(?:out|aside)\b", re.IGNORECASE)


def normalise(text: str) -> str:
    """Unify full-width punctuation and apostrophes, collapse white space, and join split "leave X out" phrases."""
    text = _SPACE_RE.sub(" ", text.translate(_TRANSLATE)).strip()
    text = _SPLIT_LEAVE.sub(_join_split_verb, text)
    return _LEFT_OUT.sub(lambda m: f"leaving out {m.group(1)}", text)


def _join_split_verb(m: re.Match) -> str:
    """"leaving X out" -> "leaving out X", "setting X aside" -> "setting aside X"; "put X out" stays (it puts out)."""
    verb, words, particle = m.group(1), m.group(2), m.group(3)
    if particle.lower() == "out" and not verb.lower().startswith("leav"):
        return m.group(0)
    return f"{verb} {particle} {words}"


# words whose period ends no sentence (with initials and decimal points: sentence_end)
ABBREVIATIONS = set("jr sr dr mr mrs ms st mt ft vs etc inc ltd co corp no vol fig gen gov sen rep prof rev lt col "
                    "capt sgt u.s u.k e.g i.e a.m p.m approx dept est".split())


def sentence_end(text: str, i: int) -> bool:
    """Whether the period at ``i`` ends a sentence (not an abbreviation, initial or decimal point)."""
    if i + 1 < len(text) and not text[i + 1].isspace():
        return False
    word = re.search(r"([\w.]+)$", text[:i])
    if word:
        w = word.group(1).lower()
        if len(w) == 1 or w in ABBREVIATIONS or "." in w:
            return False
    return True
