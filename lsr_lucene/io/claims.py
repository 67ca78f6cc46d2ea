"""Who is writing an output: a kernel-locked lock file naming the writer, and leftovers of writers that died.

Every output the project writes is claimed by a hidden ``.<name>.lock`` beside it for as long as the
writer runs: the writer holds an exclusive ``flock`` on it (taken atomically by the kernel, and dropped by
the kernel when the process dies, however it dies), and the file names the writer as
``<pid>.<start>@<host>``. Outputs are built in hidden ``.<name>.tmp-<pid>.<start>@<host>-*`` temporaries,
where ``<start>`` is the writer's start time in clock ticks (so a reused pid is told apart). A writer killed
outright (SIGKILL) leaves both behind; the next writer of the same output takes the lock (the kernel says its
holder is gone), removes the temporaries whose process is gone on this host, and says so in one line.
Temporaries of a writer on another host (a file system shared by several machines) are never judged by a
pid check: they are left alone.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import glob
import os
import re
import shutil
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

from lsr_lucene.errors import OutputError

TEMP_MARK = ".tmp-"  # temporaries are .<name>.tmp-<pid>[.<start>][@<host>]-<suffix>
LOCK_SUFFIX = ".lock"
_HELD: dict[str, int] = {}  # lock files this process holds (path -> nesting depth): claims are re-entrant
_HELD_GUARD = threading.Lock()


def remove_path(path: Path) -> None:
    """Remove a file, link or directory tree if it is there."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def process_started(pid: int) -> str:
    """Process ``pid``'s start time in clock ticks since boot (/proc), or "" where that is unknown.

    Kept beside the pid in temporaries' and locks' names so that a reused pid is told apart exactly,
    without comparing file times with a clock.
    """
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def this_host() -> str:
    """This machine's name as identities carry it (characters other than letters, digits and _ become _)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname()) or "localhost"


def writer_identity() -> str:
    """This process as temporaries and locks name it: ``<pid>[.<start ticks>]@<host>``."""
    started = process_started(os.getpid())
    return f"{os.getpid()}.{started}@{this_host()}" if started else f"{os.getpid()}@{this_host()}"


def _parse_identity(identity: str) -> tuple[int, str, str] | None:
    """(pid, start ticks or "", host or "") of ``<pid>[.<start>][@<host>]``; None when it is not one."""
    process, _, host = identity.partition("@")
    pid_text, _, started = process.partition(".")
    if not pid_text.isdigit() or (started and not started.isdigit()):
        return None
    return int(pid_text), started, host


def temporary_prefix(final: Path) -> str:
    """Name prefix of this process's temporaries for ``final``: hidden, and naming the writing process."""
    return f".{final.name}{TEMP_MARK}{writer_identity()}-"


def lock_path(final: Path) -> Path:
    return final.with_name(f".{final.name}{LOCK_SUFFIX}")


def held_by_live_process(identity: str) -> bool:
    """Whether the writer named ``<pid>[.<start ticks>][@<host>]`` may still run: always true for a writer on
    another host (a pid means nothing here); on this host, its pid alive and not reused."""
    pid, started, host = _parse_identity(identity) or (0, "", "")
    if host and host != this_host():
        return True
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by another user
    now = process_started(pid)
    return not (started and now) or now == started


def _writer_identity(name: str, prefix: str) -> str | None:
    """The ``<pid>[.<start ticks>][@<host>]`` in a temporary's name ``<prefix><identity>-...``, or None."""
    if not name.startswith(prefix):
        return None
    identity = name[len(prefix):].split("-", 1)[0]
    return identity if _parse_identity(identity) is not None else None


def _is_this_process(identity: str) -> bool:
    """Whether ``identity`` names this process (its pid on this host)."""
    pid, _, host = _parse_identity(identity) or (0, "", "")
    return pid == os.getpid() and host in ("", this_host())


def remove_stale_temporaries(final: str | Path, stale_lock: str | None = None) -> list[Path]:
    """Remove temporaries of ``final`` left by killed runs (their process is gone); say so in one line.

    A temporary is stale when the process named in it ran on this host and is dead, or its pid now belongs
    to a process that started at another time. Live writers' temporaries, and those of writers on other
    hosts, are never touched. ``stale_lock``: the writer named in a lock just taken over, said in the same line.
    """
    final = Path(final)
    if not final.parent.is_dir():
        return []
    prefix = f".{final.name}{TEMP_MARK}"
    stale = []
    for tmp in final.parent.glob(f"{glob.escape(prefix)}*"):
        identity = _writer_identity(tmp.name, prefix)
        if identity is None or _is_this_process(identity):
            continue
        if not held_by_live_process(identity):
            remove_path(tmp)
            stale.append(tmp)
    if stale or stale_lock:
        pid, _, host = _parse_identity(stale_lock or "") or (0, "", "")
        lock = f"the stale lock of process {pid}" + (f" on {host}" if host and host != this_host() else "")
        if stale:
            print(f"removed {len(stale)} stale temporary output(s) of {final} left by killed runs: "
                  f"{', '.join(t.name for t in stale)}" + (f"; and {lock}" if stale_lock else ""), file=sys.stderr)
        else:
            print(f"removed {lock} of {final} left by a killed run: {lock_path(final).name}", file=sys.stderr)
    return stale


def _describe(identity: str | None) -> str:
    """``process N`` (``on host H`` for another host) for a lock's writer; ``another process`` if unknown."""
    pid, _, host = _parse_identity(identity or "") or (0, "", "")
    if not pid:
        return "another process"
    return f"process {pid}" + (f" on host {host}" if host and host != this_host() else "")


def _read(handle: int) -> str:
    """The writer identity recorded in an open lock file ("" when empty)."""
    text = os.pread(handle, 4096, 0).decode("utf-8", "replace").split()
    return text[0] if text else ""


def _take(path: Path, final: Path) -> tuple[int, str]:
    """Open ``path`` and take its exclusive kernel lock: (descriptor, identity of a dead previous holder or "").

    The lock file is never judged by its contents and never unlinked by a contender: the kernel decides who
    holds it. A contender that locked a file its holder had just unlinked (released) sees that the path now
    names another file, and tries again.
    """
    for _ in range(50):
        handle = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                os.close(handle)
                raise
            holder = _read(handle)
            for _wait in range(20):  # a new holder writes its name just after taking the lock
                if holder:
                    break
                time.sleep(0.01)
                holder = _read(handle)
            os.close(handle)
            raise OutputError(f"{final} is being written by {_describe(holder)} (lock {path}); wait for it to "
                              "finish or choose another output") from None
        try:
            same = os.fstat(handle).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # released and unlinked by its holder between our open and our lock: take the new one
            os.close(handle)
            continue
        previous = _read(handle)
        os.ftruncate(handle, 0)
        os.pwrite(handle, f"{writer_identity()}\n".encode(), 0)
        return handle, previous
    raise OutputError(f"{final}: could not take its lock {path}; another process keeps changing it")


@contextlib.contextmanager
def claim_output(final: str | Path) -> Iterator[None]:
    """Hold ``final``'s lock file (an exclusive kernel lock) while the body writes it; a second live writer
    fails with one line.

    Re-entrant within one process. A lock left by a killed writer (the kernel released it) is taken over, and
    its leftovers removed, saying so in one line.
    """
    final = Path(final)
    path = lock_path(final)
    key = os.path.abspath(path)
    with _HELD_GUARD:
        if key in _HELD:
            _HELD[key] += 1
            nested = True
        else:
            nested = False
    if nested:  # this process already holds it (a nested writer of the same output)
        try:
            yield
        finally:
            with _HELD_GUARD:
                _HELD[key] -= 1
        return
    handle, previous = _take(path, final)
    with _HELD_GUARD:
        _HELD[key] = 1
    try:
        if previous and previous != writer_identity():
            remove_stale_temporaries(final, stale_lock=previous)
        yield
    finally:
        with _HELD_GUARD:
            del _HELD[key]
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # unlinked while still locked: a contender that opened it sees the path changed
        os.close(handle)
