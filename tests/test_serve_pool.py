"""``JvmWorkerPool``, the server's search threads: bounded, each attached to the JVM once, and Java calls on them run
in parallel (pyjnius releases the GIL), checked by counting, not timing."""
from __future__ import annotations

import threading

import pytest


def test_pool_threads_attach_once_and_call_java_in_parallel():
    from lsr_lucene.jvm.runtime import autoclass
    from lsr_lucene.serve.pool import JvmWorkerPool

    Thread, System = autoclass("java.lang.Thread"), autoclass("java.lang.System")
    lock = threading.Lock()
    state = {"inside": 0, "most": 0}
    barrier = threading.Barrier(4, timeout=60)

    def task(wait: bool):
        if wait:
            barrier.wait()  # the four first tasks start together
        with lock:
            state["inside"] += 1
            state["most"] = max(state["most"], state["inside"])
        Thread.sleep(200)  # Java: the GIL is released while it sleeps, so the others enter too
        with lock:
            state["inside"] -= 1
        # static calls only: an instance method called on a temporary Java object from several threads can run on
        # another thread's object (pyjnius #287, #563: one j_self per method of a class), so no currentThread().getId()
        return threading.get_ident(), System.identityHashCode(Thread.currentThread())

    pool = JvmWorkerPool(4, name="pool-test")
    try:
        futures = [pool.submit(task, i < 4) for i in range(24)]
        done = [f.result(timeout=120) for f in futures]
    finally:
        pool.close()
    assert state["most"] == 4  # parallel in Java, and never more than the pool's threads
    assert len({python for python, _ in done}) == 4  # the same four workers served all 24 tasks
    assert len({java for _, java in done}) == 4  # each kept one Java thread: attached once, no churn
    with pytest.raises(RuntimeError, match="closed"):
        pool.submit(task, False)


def test_a_failing_task_is_handed_to_its_caller_and_the_worker_goes_on():
    from lsr_lucene.serve.pool import JvmWorkerPool

    pool = JvmWorkerPool(1, name="pool-fail")
    try:
        failed = pool.submit(lambda: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            failed.result(timeout=60)
        assert pool.submit(lambda x: x + 1, 2).result(timeout=60) == 3
    finally:
        pool.close()
    with pytest.raises(ValueError):
        JvmWorkerPool(0)
