"""Min-max scaling of a leg's scores, shared by the fused operations and the dense leg's blend."""
from __future__ import annotations

from typing import Mapping


def minmax(scores: Mapping[str, float]) -> dict[str, float]:
    """Scores scaled to [0, 1] by (s − min) / (max − min); all 0 when every score is equal."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high == low:
        return dict.fromkeys(scores, 0.0)
    return {d: (s - low) / (high - low) for d, s in scores.items()}
