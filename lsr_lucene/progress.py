"""The one place progress bars are made: on stderr, and only when stderr is a terminal (no carriage returns in
logs), so that bars of different steps never interleave with the lines a command prints."""
from __future__ import annotations

import sys
from typing import Any, Iterable


def progress_bar(iterable: Iterable | None = None, **kwargs: Any):
    """A tqdm bar on stderr, hidden when stderr is not a terminal (tqdm's ``disable=None``) or when asked."""
    from tqdm import tqdm

    kwargs.setdefault("file", sys.stderr)
    kwargs.setdefault("dynamic_ncols", True)
    kwargs["disable"] = True if kwargs.get("disable") else None
    return tqdm(iterable, **kwargs)
