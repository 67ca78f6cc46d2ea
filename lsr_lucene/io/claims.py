"""Who is writing an output: a lock file naming the writing process, and leftovers of writers that died.

Every output the project writes is claimed by a hidden ``.<name>.lock`` beside it for as long as the
writer runs, and built in hidden ``.<name>.tmp-<pid>.<start>-*`` temporaries, where ``<start>`` is the
writer's start time in clock ticks (so a reused pid is told apart). A writer killed outright (SIGKILL)
leaves both behind; the next writer of the same output sees that the process named in them is gone and
removes them, saying so in one line.
"""
from __future__ import annotations

import contextlib
import glob
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Iterator

from lsr_lucene.errors import OutputError

TEMP_MARK = ".tmp-"  # temporaries are .<name>.tmp-<pid>[.<start>]-<suffix>
LOCK_SUFFIX = ".lock"


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


def writer_identity() -> str:
    """This process as temporaries and locks name it: ``<pid>`` or ``<pid>.<start ticks>``."""
    started = process_started(os.getpid())
    return f"{os.getpid()}.{started}" if started else str(os.getpid())


def temporary_prefix(final: Path) -> str:
    """Name prefix of this process's temporaries for ``final``: hidden, and naming the writing process."""
    return f".{final.name}{TEMP_MARK}{writer_identity()}-"


def lock_path(final: Path) -> Path:
    return final.with_name(f".{final.name}{LOCK_SUFFIX}")


def held_by_live_process(identity: str) -> bool:
    """Whether the writer named ``<pid>[.<start ticks>]`` still runs (its pid alive, and not reused)."""
    pid_text, _, started = identity.partition(".")
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by another user
    now = process_started(pid)
    return not (started and now) or now == started


def _writer_identity(name: str, prefix: str) -> str | None:
    """The ``<pid>[.<start ticks>]`` in a temporary's name ``<prefix><identity>-...``, or None for others."""
    if not name.startswith(prefix):
        return None
    identity = name[len(prefix):].split("-", 1)[0]
    pid_text, _, started = identity.partition(".")
    return identity if pid_text.isdigit() and (not started or started.isdigit()) else None


def remove_stale_temporaries(final: str | Path) -> list[Path]:
    """Remove temporaries of ``final`` left by killed runs (their process is gone); say so in one line.

    A temporary is stale when the process named in it is dead, or its pid now belongs to a process
    that started at another time. Live writers' temporaries are never touched.
    """
    final = Path(final)
    if not final.parent.is_dir():
        return []
    prefix = f".{final.name}{TEMP_MARK}"
    stale = []
    for tmp in final.parent.glob(f"{glob.escape(prefix)}*"):
        identity = _writer_identity(tmp.name, prefix)
        if identity is None or identity.partition(".")[0] == str(os.getpid()):
            continue
        if not held_by_live_process(identity):
            remove_path(tmp)
            stale.append(tmp)
    if stale:
        print(f"removed {len(stale)} stale temporary output(s) of {final} left by killed runs: "
              f"{', '.join(t.name for t in stale)}", file=sys.stderr)
    return stale


def _read_lock(path: Path) -> str | None:
    """The writer identity in a lock file, or None when it vanished or is unreadable."""
    try:
        identity = path.read_text().split()[0]
    except (OSError, IndexError):
        return None
    return identity if identity.partition(".")[0].isdigit() else None


@contextlib.contextmanager
def claim_output(final: str | Path) -> Iterator[None]:
    """Hold ``final``'s lock file while the body writes it; a second live writer fails with one line.

    Re-entrant within one process. A lock left by a dead process is removed.
    """
    final = Path(final)
    path = lock_path(final)
    for _ in range(3):
        try:
            handle = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = _read_lock(path)
            if holder is None:
                time.sleep(0.05)  # being created or removed right now
                continue
            pid = int(holder.partition(".")[0])
            if pid == os.getpid():
                yield  # this process already holds it (a nested writer of the same output)
                return
            if held_by_live_process(holder):
                raise OutputError(f"{final} is being written by process {pid} (lock {path}); wait for it to "
                                  "finish or choose another output") from None
            with contextlib.suppress(FileNotFoundError):  # its writer is gone; the line about its
                path.unlink()                              # temporaries (remove_stale_temporaries) says so
            continue
        with os.fdopen(handle, "w") as out:
            out.write(f"{writer_identity()}\n")
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        return
    raise OutputError(f"{final}: could not take its lock {path}; another process keeps changing it")
