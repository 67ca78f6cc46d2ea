"""The Ray cluster a distributed command runs on: an existing one (an address or ``auto``), or a local one.

A command given no address starts a local Ray instance for its own duration and stops it at the end; when the
calling process is already connected (a test, a notebook), that connection is used and left open.
"""
from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from typing import Iterator

from lsr_lucene.errors import LsrError, SetupError
from lsr_lucene.verbosity import is_verbose, redirected

# bounds of the objects a command puts in Ray's object store (shards of text, hit lists): a local instance
# started for one command does not need Ray's default of 30% of the memory
LOCAL_OBJECT_STORE_BYTES = 1 << 30
RESTARTS = 3  # max_restarts of every actor, and max_task_retries of its calls
# Ray starts its workers at niceness +15 (below the raylet): on a shared machine a local instance's actors, which do
# the command's work, then ran behind every other process, and behind the same command run on one machine (a
# distributed search on 2 loaded cores measured against one index); a local instance's workers keep the
# command's own niceness
LOCAL_SYSTEM_CONFIG = {"worker_niceness": 0}


def quiet_ray_data() -> None:
    """Our own tqdm bars report progress: Ray Data's bars and per-dataset log lines are turned off (called where
    Ray Data is used: importing it costs a command that does not use it over half a second)."""
    import ray.data

    if not is_verbose():  # its note that bars are disabled, too
        logging.getLogger("ray.data").setLevel(logging.ERROR)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING if is_verbose() else logging.ERROR)


def quiet_ray_options() -> dict:
    """``ray.init`` options, and environment read by Ray's C++ core, that keep a successful command quiet unless
    ``-v``: Ray's Python warnings (token authentication note ...), the core worker's log lines on stderr (an actor
    restart note printed as an error line) and the workers' own output are shown only when verbose; failures
    still reach the command as exceptions. Quiet, the driver reports no task events either."""
    if is_verbose():
        return {"logging_level": logging.WARNING, "log_to_driver": True, "configure_logging": True}
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")  # read by the core worker when ray.init starts it
    # this process's task events (`ray list tasks`, the dashboard's task view) are not reported: flushing them held
    # every command's exit 0.25 s (ray.shutdown); -v, or the variable set, keeps them
    os.environ.setdefault("RAY_task_events_report_interval_ms", "0")
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return {"logging_level": logging.ERROR, "log_to_driver": False, "configure_logging": True}


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """One SetupError unless ``host:port`` accepts connections (Ray itself retries an unreachable address for
    minutes); ``auto`` is left to Ray, which fails at once when no cluster runs on this machine."""
    import socket

    if address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise SetupError(f"--address {address!r}: expected host:port (e.g. 10.0.0.1:6379) or auto")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise SetupError(f"cannot connect to the Ray cluster at {address}: {exc.strerror or exc} "
                         f"(is `ray start --head` running there?)") from None


def prevent_signal_handler_takeover() -> None:
    """Keep Ray from installing its SIGSEGV handler in this process (``RAY_DISABLE_FAILURE_SIGNAL_HANDLER``,
    read when Ray is imported): a JVM uses SIGSEGV itself, and a process whose JVM was started before
    ``ray.init`` replaced the handler crashes on the JVM's next implicit null check."""
    os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")


@contextmanager
def _stderr_quiet() -> Iterator[None]:
    """Unless ``-v``: file descriptor 2 points at /dev/null while Ray's core worker starts in this process, which
    prints a line about its log level there (failures still come back as exceptions)."""
    if is_verbose():
        yield
        return
    with redirected((2,)):
        yield


@contextmanager
def ray_cluster(address: str | None = None, num_cpus: int | None = None,
                object_store_memory: int | None = LOCAL_OBJECT_STORE_BYTES) -> Iterator[dict]:
    """Connect to ``address`` (``host:port`` or ``auto``), or start a local instance with ``num_cpus`` CPUs;
    yields the cluster's resources ({"CPU": n, "GPU": n, ...}). An unreachable address is one SetupError."""
    prevent_signal_handler_takeover()
    try:
        import ray
    except ImportError:
        raise SetupError("the distributed commands need Ray: pip install 'ray[data]'") from None
    from lsr_lucene.jvm.signals import kept_jvm_handlers

    started = False
    if not ray.is_initialized():
        options = quiet_ray_options()
        try:
            with kept_jvm_handlers():  # Ray resets SIGSEGV: a JVM running here would die on its next fault
                if address:
                    check_reachable(address)
                    with _stderr_quiet():
                        ray.init(address=address, **options)
                else:
                    with _stderr_quiet():
                        # "local": a new instance even when another Ray cluster runs on this machine (without
                        # it ray.init joins that one and refuses num_cpus / object_store_memory)
                        ray.init(address="local", num_cpus=num_cpus, object_store_memory=object_store_memory,
                                 include_dashboard=False, _system_config=LOCAL_SYSTEM_CONFIG, **options)
        except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            where = f"the Ray cluster at {address}" if address else "a local Ray instance"
            raise SetupError(f"cannot connect to {where}: {first}") from None
        started = True
    try:
        yield dict(ray.cluster_resources())
    finally:
        if started:
            with kept_jvm_handlers():
                ray.shutdown()


def node_id() -> str:
    """Id of the Ray node this process runs on (recorded beside the shards it wrote)."""
    import ray

    return ray.get_runtime_context().get_node_id()


def near(node: str | None, otherwise: str = "DEFAULT"):
    """Scheduling strategy for work on data held by ``node``: that node if it is alive now (a hard affinity: a
    soft one let Ray place the work elsewhere while the node was busy), else ``otherwise``."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    if node and any(n["NodeID"] == node and n["Alive"] for n in ray.nodes()):
        return NodeAffinitySchedulingStrategy(node_id=node, soft=False)
    return otherwise


def lsr_error_in(exc: BaseException) -> LsrError | None:
    """The user error (InputError, ...) behind a Ray task failure, if that is what it is."""
    seen = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, LsrError):
            return current
        stack += [current.__cause__, current.__context__, getattr(current, "cause", None)]
    return None
