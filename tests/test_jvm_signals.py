"""The JVM's SIGSEGV handler survives libraries that reset it (Ray's init and shutdown did, and the next null
check in the JVM's compiled code then killed the process: tests/test_exact_scores.py then test_index_search.py)."""
from __future__ import annotations

import ctypes
import signal
import sys

import pytest

from lsr_lucene.jvm import signals

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sigaction via ctypes: Linux only")


def handler_library() -> bytes | None:
    libc = ctypes.CDLL(None)
    action = signals._action(libc, signal.SIGSEGV)
    info = signals._DlInfo()
    address = ctypes.c_void_p.from_buffer_copy(action[:8]).value
    if not address or not libc.dladdr(ctypes.c_void_p(address), ctypes.byref(info)):
        return None
    return info.dli_fname


def test_a_reset_handler_is_put_back():
    from lsr_lucene.jvm import runtime as jvm

    jvm.start()
    assert b"libjvm" in (handler_library() or b"")
    previous = signal.signal(signal.SIGSEGV, signal.SIG_DFL)  # what Ray's shutdown leaves behind
    try:
        assert handler_library() is None
        with signals.kept_jvm_handlers():
            pass
        assert b"libjvm" in (handler_library() or b"")
        jvm.autoclass("java.lang.System").gc()  # the JVM still runs with its own handler back
    finally:
        signal.signal(signal.SIGSEGV, previous) if previous is not None else None
        signals.restore_jvm_handlers()
