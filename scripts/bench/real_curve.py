"""Query-term cut for the approximate curve (issue 68 item 3): keep a query's heaviest terms covering a share of
its total weight, applied to the query vector before our (heap-factor) search; the product is not changed.
"""
from __future__ import annotations


def cut_query(vector: dict[str, int], share: float) -> dict[str, int]:
    """The heaviest terms of ``vector`` whose weights first reach ``share`` of its total weight (ties by term, so
    the cut is deterministic); ``share`` 1 keeps every term, and at least one term is always kept."""
    if not 0 < share <= 1:
        raise ValueError(f"share must be in (0, 1], got {share}")
    ranked = sorted(vector.items(), key=lambda item: (-item[1], item[0]))
    total = sum(w for _, w in ranked)
    kept: dict[str, int] = {}
    covered = 0
    for term, weight in ranked:
        if kept and covered >= share * total:
            break
        kept[term] = weight
        covered += weight
    return kept
