"""A query's text as the negation parser reads it: punctuation and apostrophes unified, white space collapsed, and
split exclusion verbs joined so that the cue comes before what it excludes ("leaving X out" -> "leaving out X")."""
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
