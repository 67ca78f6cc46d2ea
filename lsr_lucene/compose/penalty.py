"""What a natural-language exclusion costs a candidate: the penalty of the `default`'s fused not node (fusion-gated).

Two kinds of evidence that a document is about B (issue 65):

- **B's scale** (issues 36, 49): a document near the top of B's own min-max scaled scores pays
  λ·max(0, B̂ − τ)/(1 − τ) (gate τ 0.9). This catches a document about B in other words, and spares a wanted document
  that names B's entity in passing, as the pair benchmarks want.
- **B in the text** (issue 65): when B is a word or a short term (:func:`term_shaped`: at most ``TERM_WORDS`` words
  an item and none capitalised: not a description, not a name that a wanted passage names in passing), a candidate
  whose stored text contains B (as the strict filter judges it: :mod:`lsr_lucene.search.text_filter`) pays min(1,
  B̂/β) of its scaled A score: every document with B goes down, the further the more of B's weight it carries, so a
  document whose B weight is a small share of the top (B̂ < β) keeps part of its place. β (``TERM_SCALE``) and the
  capital rule (``LOWER_ONLY``) were chosen inside folds of the set-difference benchmark with the pair benchmarks as
  a constraint (runs/negation/setdiff.md).

The larger of the two is paid. Stated absence (:mod:`lsr_lucene.compose.absence`: "contains no caffeine",
"caffeine-free") waives the share s of the penalty for the share of B's mentions that deny B, and never lifts: the
document then scores what A alone gives it. No score falls below ``GATED_FLOOR``·Â (a penalised A-match stays above
every candidate that does not match A).
"""
from __future__ import annotations

from typing import Sequence

# fusion-gated: share of its scaled A score a penalised document keeps (issue 36: a penalty must not push a strong
# A-match below the documents that do not match A at all, out of the list)
GATED_FLOOR = 0.05
TERM_WORDS = 3  # B is a short term when each of its items has at most this many words (and none capitalised)
LOWER_ONLY = True  # a capitalised B (a name, a title) is no short term (chosen in folds with β)
TERM_SCALE = 0.75  # β: a document that contains B pays min(1, B̂/β) (chosen in folds, runs/negation/setdiff.md)


def term_shaped(items: Sequence[str], lower: bool = LOWER_ONLY) -> bool:
    """Whether B (its items' texts) is a word or short term: each item at most ``TERM_WORDS`` words (``lower``: and
    no capitalised word, which marks a name or a title)."""
    words = [item.strip('"').split() for item in items]
    return bool(words) and all(0 < len(w) <= TERM_WORDS and not (lower and any(x[:1].isupper() for x in w))
                               for w in words)


def gated(scaled: float, gate: float) -> float:
    """max(0, x − τ)/(1 − τ) of a min-max scaled score x: 0 below the gate τ, 1 at the top score."""
    return max(0.0, scaled - gate) / (1.0 - gate)


def penalty(b: float, lam: float, gate: float, absent: float = 0.0, contains: bool = False,
            term_scale: float | None = None) -> float:
    """What a candidate of scaled B score ``b`` pays: λ·gated(B̂), or for a text that contains a short-term B
    (``contains`` and ``term_scale`` β set) at least min(1, B̂/β); the share ``absent`` of it is waived."""
    pay = lam * gated(b, gate)
    if contains and term_scale is not None:
        pay = max(pay, min(1.0, b / term_scale) if term_scale > 0 else 1.0)
    return (1.0 - absent) * pay


def gated_not(a: float, b: float, lam: float, gate: float, floor: float = GATED_FLOOR, absent: float = 0.0,
              contains: bool = False, term_scale: float | None = None) -> float:
    """fusion-gated score of one document from its min-max scaled A and B scores: Â − :func:`penalty`, never below
    ``floor``·Â and never above Â (stated absence waives, it does not lift)."""
    return max(a - penalty(b, lam, gate, absent, contains, term_scale), floor * a)
