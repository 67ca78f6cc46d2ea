"""The one place progress bars are made, on stderr. In a terminal: a tqdm bar. Elsewhere (logs, CI, ``nohup``): a
plain line every few seconds with the count, rate and ETA (no carriage returns), none for work done sooner.

``LSR_PROGRESS_SECONDS`` sets the seconds between log lines (default 10). ``feeding(bar)`` lets an inner step's
bar (the encoder's per-batch bar) advance an outer one, so that the outer bar moves per batch.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import Any, Iterable, Iterator

LOG_SECONDS = 10.0  # default seconds between progress lines when stderr is not a terminal
_local = threading.local()  # the bars that inner bars feed (feeding), per thread


def log_seconds() -> float:
    """Seconds between progress lines in logs (``LSR_PROGRESS_SECONDS``, default 10)."""
    try:
        return max(0.0, float(os.environ.get("LSR_PROGRESS_SECONDS", LOG_SECONDS)))
    except ValueError:
        return LOG_SECONDS


def progress_bar(iterable: Iterable | None = None, **kwargs: Any):
    """A tqdm bar on stderr when it is a terminal, else progress lines (:class:`LogProgress`); nothing when
    ``disable``; inside :func:`feeding`, a bar that advances the fed one."""
    fed = getattr(_local, "stack", None)
    if fed:
        return _Feeder(iterable, *fed[-1])
    file = kwargs.get("file") or sys.stderr
    if kwargs.get("disable"):
        kwargs["disable"] = True
    elif not _is_terminal(file):
        return LogProgress(iterable, file=file, **{k: v for k, v in kwargs.items() if k != "file"})
    from tqdm import tqdm

    kwargs.setdefault("file", sys.stderr)
    kwargs.setdefault("dynamic_ncols", True)
    kwargs["disable"] = True if kwargs.get("disable") else None
    return tqdm(iterable, **kwargs)


def _is_terminal(file) -> bool:
    try:
        return bool(file.isatty())
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def feeding(bar) -> Iterator[list[float]]:
    """While active, bars made on this thread advance ``bar`` instead of drawing their own; yields ``[count]`` of
    the items they fed, so that the caller adds only the rest."""
    fed: list[float] = [0]
    stack = list(getattr(_local, "stack", None) or [])
    _local.stack = stack + [(bar, fed)]
    try:
        yield fed
    finally:
        _local.stack = stack


def is_feeding() -> bool:
    """Whether bars made on this thread now advance an outer one (:func:`feeding`)."""
    return bool(getattr(_local, "stack", None))


class _Feeder:
    """An inner bar that advances an outer one (``feeding``)."""

    def __init__(self, iterable, bar, fed: list[float]):
        self.iterable, self.bar, self.fed = iterable, bar, fed
        self.n: float = 0

    def __iter__(self):
        for item in self.iterable:
            yield item
            self.update(1)

    def update(self, n: float = 1) -> None:
        self.n += n
        self.fed[0] += n
        self.bar.update(n)

    def set_postfix(self, *args, **kwargs) -> None:
        pass

    def write(self, text: str, file=None) -> None:
        print(text, file=file or sys.stderr)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LogProgress:
    """tqdm's interface (iterate, ``update``, ``close``, ``n``, ``set_postfix``, ``write``) as log lines: one every
    :func:`log_seconds` with count, share, rate and ETA, and a last one at close when any was printed."""

    def __init__(self, iterable: Iterable | None = None, desc: str | None = None, total: float | None = None,
                 unit: str = "it", file=None, disable: bool = False, **_ignored: Any):
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self.iterable, self.desc, self.total, self.unit = iterable, desc or "progress", total, unit
        self.file, self.disable, self.postfix = file or sys.stderr, disable, ""
        self.n: float = 0
        self.interval = log_seconds()
        self.started = self.last = time.monotonic()
        self.printed = False
        self.closed = False

    def __iter__(self):
        for item in self.iterable or ():
            yield item
            self.update(1)
        self.close()

    def __len__(self) -> int:
        return int(self.total or 0)

    def update(self, n: float = 1) -> None:
        self.n += n
        now = time.monotonic()
        if not self.disable and now - self.last >= self.interval:
            self.last = now
            self._line(now)

    def set_postfix(self, ordered_dict=None, refresh: bool = True, **kwargs: Any) -> None:
        items = {**(ordered_dict or {}), **kwargs}
        self.postfix = ", ".join(f"{k}={v}" for k, v in items.items())

    def write(self, text: str, file=None) -> None:
        print(text, file=file or self.file, flush=True)

    def close(self) -> None:
        if not self.closed and self.printed and not self.disable:
            self._line(time.monotonic(), final=True)
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _line(self, now: float, final: bool = False) -> None:
        elapsed = max(now - self.started, 1e-9)
        rate = self.n / elapsed
        unit = self.unit.strip() or "it"
        parts = [f"{self.desc}: {_count(self.n)}"]
        if self.total:
            parts[0] += f"/{_count(self.total)} {unit} ({100 * self.n / self.total:.0f}%)"
        else:
            parts[0] += f" {unit}"
        parts.append(f"{rate:.3g} {unit}/s")
        if final:
            parts.append(f"done in {_clock(elapsed)}")
        elif self.total and rate > 0:
            parts.append(f"ETA {_clock((self.total - self.n) / rate)}")
        if self.postfix:
            parts.append(self.postfix)
        print(", ".join(parts), file=self.file, flush=True)
        self.printed = True


def _count(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else f"{n:.1f}"


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"
