"""The CPUs this process may use: one count for every default that sizes threads or worker processes."""
from __future__ import annotations

import os


def available_cores() -> int:
    """CPUs this process may run on (its affinity mask, e.g. a container's or taskset's share; else all)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
