"""The JVM's fatal-signal handlers, put back after libraries that reset them (Ray's init and shutdown do).

A JVM started in this process (pyjnius) handles SIGSEGV itself: its compiled code dereferences null on purpose
and turns the fault into a NullPointerException. A library that installs its own handler or restores the default
one afterwards makes the next such fault kill the process. ``remember_jvm_handlers`` records the JVM's handlers
when it starts; ``restore_jvm_handlers`` puts back any that were replaced since (Linux; elsewhere a no-op).
"""
from __future__ import annotations

import ctypes
import signal
import sys
from contextlib import contextmanager
from typing import Iterator

SIGNALS = (signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL)
_SIGACTION_BYTES = 512  # larger than struct sigaction on every Linux ABI
_jvm_actions: dict[int, bytes] = {}  # signal -> the JVM's raw struct sigaction


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _libc():
    return ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def _action(libc, signum: int) -> bytes:
    """The raw ``struct sigaction`` now installed for ``signum``."""
    buf = ctypes.create_string_buffer(_SIGACTION_BYTES)
    libc.sigaction(signum, None, buf)
    return buf.raw


def _in_libjvm(libc, action: bytes) -> bool:
    """Whether the handler of an action lies in libjvm."""
    address = ctypes.c_void_p.from_buffer_copy(action[:ctypes.sizeof(ctypes.c_void_p)]).value
    info = _DlInfo()
    if not address or not libc.dladdr(ctypes.c_void_p(address), ctypes.byref(info)):
        return False
    return b"libjvm" in (info.dli_fname or b"")


def remember_jvm_handlers() -> None:
    """Record the fatal-signal handlers the JVM just installed (call right after it starts)."""
    libc = _libc()
    if libc is None:
        return
    for signum in SIGNALS:
        action = _action(libc, signum)
        if _in_libjvm(libc, action):
            _jvm_actions[signum] = action


def restore_jvm_handlers() -> None:
    """Put back every recorded JVM handler that something replaced."""
    libc = _libc()
    for signum, action in _jvm_actions.items():
        if _action(libc, signum) != action:
            libc.sigaction(signum, ctypes.create_string_buffer(action, _SIGACTION_BYTES), None)


@contextmanager
def kept_jvm_handlers() -> Iterator[None]:
    """Run a block that may reset signal handlers (``ray.init``, ``ray.shutdown``), then restore the JVM's."""
    try:
        yield
    finally:
        restore_jvm_handlers()
