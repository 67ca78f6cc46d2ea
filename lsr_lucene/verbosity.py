"""Library noise (transformers' logs and model loading bar, Hugging Face Hub bars, Lucene's JUL warnings) off by
default in commands; ``-v/--verbose`` (or ``LSR_VERBOSE=1``) shows it."""
from __future__ import annotations

import contextlib
import os
import sys
import warnings
from typing import Iterator, Sequence

_QUIET_ENV = {"TRANSFORMERS_VERBOSITY": "error", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
              "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1", "TOKENIZERS_PARALLELISM": "false"}
_state = {"verbose": os.environ.get("LSR_VERBOSE", "") not in ("", "0")}


def is_verbose() -> bool:
    """Whether library logs and bars are to be shown (``-v``)."""
    return _state["verbose"]


def set_verbose(on: bool) -> None:
    """Show (True) or hide (False) library logs and bars, now and for libraries imported later."""
    _state["verbose"] = on
    if on:
        os.environ["LSR_VERBOSE"] = "1"  # child processes (Ray workers, separate JVMs) inherit it
        for name in ("TRANSFORMERS_VERBOSITY", "HF_HUB_DISABLE_PROGRESS_BARS", "TRANSFORMERS_NO_ADVISORY_WARNINGS"):
            if os.environ.get(name) == _QUIET_ENV[name]:
                del os.environ[name]
    else:
        os.environ.pop("LSR_VERBOSE", None)  # child processes started later are quiet too
        for name, value in _QUIET_ENV.items():
            os.environ.setdefault(name, value)
    if "transformers" in sys.modules:
        _apply_transformers(on)


@contextlib.contextmanager
def kept_verbosity() -> Iterator[None]:
    """Verbosity as it was before, once the block ends: a command's ``-v`` holds for that command alone, also when
    several commands run in one process (tests, notebooks calling ``main``)."""
    before = is_verbose()
    try:
        yield
    finally:
        if is_verbose() != before:
            set_verbose(before)


def quiet_libraries() -> None:
    """Commands start quiet unless ``-v``/``LSR_VERBOSE`` asked otherwise (called by lsr_lucene.cli.run_main)."""
    set_verbose(is_verbose())


def _apply_transformers(on: bool) -> None:
    from transformers.utils import logging

    if on:
        logging.set_verbosity_warning()
        with warnings.catch_warnings():  # the Hub library may keep its own bars off (it read the environment once)
            warnings.simplefilter("ignore")
            logging.enable_progress_bar()
    else:
        logging.set_verbosity_error()
        logging.disable_progress_bar()


@contextlib.contextmanager
def quiet_loading() -> Iterator[None]:
    """Model loading without transformers' "Loading weights" bar and load notes unless verbose, in library use
    too (``ImpactSearcher``, ``SparseEncoder``: no command has quieted the libraries); settings restored after."""
    if is_verbose():
        yield
        return
    from transformers.utils import logging

    bar, level = logging.is_progress_bar_enabled(), logging.get_verbosity()
    logging.disable_progress_bar()
    logging.set_verbosity_error()
    try:
        yield
    finally:
        if bar:
            with warnings.catch_warnings():  # the Hub's bars may be off by its environment variable
                warnings.simplefilter("ignore")
                logging.enable_progress_bar()
        logging.set_verbosity(level)


@contextlib.contextmanager
def redirected(fds: Sequence[int], target: int | None = None) -> Iterator[None]:
    """File descriptors ``fds`` point at ``target`` (None: /dev/null) for the block, then back: quiets (or diverts)
    what native code and child threads write there, which Python's ``sys.stdout``/``sys.stderr`` cannot catch."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(fd) for fd in fds]
    dest = os.open(os.devnull, os.O_WRONLY) if target is None else target
    try:
        for fd in fds:
            os.dup2(dest, fd)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, old in zip(fds, saved):
            os.dup2(old, fd)
            os.close(old)
        if target is None:
            os.close(dest)
