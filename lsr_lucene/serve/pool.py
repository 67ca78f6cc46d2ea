"""A fixed pool of worker threads that call the JVM: each attaches once, runs tasks, and detaches when it stops.

pyjnius attaches a Python thread to the JVM on its first Java call; a thread that ends attached leaks its Java
thread (pyjnius #107, #287, #563), and attaching per task costs every request. The server's searches therefore run
on ``threads`` long-lived workers (the JVM releases the GIL during Java calls, so they search in parallel).
Tasks call Java instance methods only on long-lived shared objects (the searchers): pyjnius keeps one ``j_self`` per
method of a class (#287, #563), so the same method called at once on two objects of one class may run on the other
thread's object, and on a temporary one it may hit a freed reference (NullPointerException).
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import queue
import threading
from typing import Any, Callable

_STOP = object()


class JvmWorkerPool:
    """``submit(fn, *args)`` → a ``concurrent.futures.Future``; ``threads`` workers attached to the JVM."""

    def __init__(self, threads: int, name: str = "lsr-serve"):
        if threads <= 0:
            raise ValueError(f"threads must be positive, got {threads}")
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        self._workers = [threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True) for i in range(threads)]
        self._closed = False
        for worker in self._workers:
            worker.start()

    @property
    def threads(self) -> int:
        return len(self._workers)

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> concurrent.futures.Future:
        if self._closed:
            raise RuntimeError("the worker pool is closed")
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._tasks.put((future, fn, args, kwargs))
        return future

    def _work(self) -> None:
        from lsr_lucene.jvm.runtime import autoclass

        autoclass("java.lang.Thread").currentThread()  # attach now, once, not on the first request
        try:
            while True:
                task = self._tasks.get()
                if task is _STOP:
                    return
                future, fn, args, kwargs = task
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as exc:  # handed to the caller, the worker carries on
                    future.set_exception(exc)
        finally:
            import jnius

            with contextlib.suppress(Exception):
                jnius.detach()

    def close(self, timeout: float = 10.0) -> None:
        """Let queued tasks finish, stop the workers (each detaches from the JVM) and wait for them."""
        if self._closed:
            return
        self._closed = True
        for _ in self._workers:
            self._tasks.put(_STOP)
        for worker in self._workers:
            worker.join(timeout)
