"""Who is writing an output: a lock file naming the writing process, and leftovers of writers that died.

Every output the project writes is claimed by a hidden ``.<name>.lock`` beside it for as long as the
writer runs, and built in hidden ``.<name>.tmp-<pid>-*`` temporaries. A writer killed outright (SIGKILL)
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

TEMP_MARK = ".tmp-"  # temporaries are .<name>.tmp-<pid>-<suffix>
LOCK_SUFFIX = ".lock"


def remove_path(path: Path) -> None:
    """Remove a file, link or directory tree if it is there."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def temporary_prefix(final: Path) -> str:
    """Name prefix of this process's temporaries for ``final``: hidden, and naming the writing process."""
    return f".{final.name}{TEMP_MARK}{os.getpid()}-"


def lock_path(final: Path) -> Path:
    return final.with_name(f".{final.name}{LOCK_SUFFIX}")


def process_start(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), from /proc; None where that is unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return time.time() - uptime + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def held_by_live_process(pid: int, created: float) -> bool:
    """Whether process ``pid`` is alive and is the one that made a file at ``created`` (not a reused pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by another user
    started = process_start(pid)
    return started is None or started <= created + 1.0


def _writer_pid(name: str, prefix: str) -> int | None:
    """The pid in a temporary's name ``<prefix><pid>-...``, or None for names of another form."""
    pid_text = name[len(prefix):].split("-", 1)[0]
    return int(pid_text) if name.startswith(prefix) and pid_text.isdigit() else None


def remove_stale_temporaries(final: str | Path) -> list[Path]:
    """Remove temporaries of ``final`` left by killed runs (their process is gone); say so in one line.

    A temporary is stale when it is older than this process and the process named in it is dead
    (or its pid now belongs to a younger process). Live writers' temporaries are never touched.
    """
    final = Path(final)
    if not final.parent.is_dir():
        return []
    prefix = f".{final.name}{TEMP_MARK}"
    ours = process_start(os.getpid()) or time.time()
    stale = []
    for tmp in final.parent.glob(f"{glob.escape(prefix)}*"):
        pid = _writer_pid(tmp.name, prefix)
        if pid is None or pid == os.getpid():
            continue
        try:
            created = tmp.lstat().st_mtime
        except FileNotFoundError:
            continue
        if created < ours and not held_by_live_process(pid, created):
            remove_path(tmp)
            stale.append(tmp)
    if stale:
        print(f"removed {len(stale)} stale temporary output(s) of {final} left by killed runs: "
              f"{', '.join(t.name for t in stale)}", file=sys.stderr)
    return stale


def _read_lock(path: Path) -> tuple[int, float] | None:
    """(pid, time) of a lock file, or None when it vanished or is unreadable."""
    try:
        pid_text = path.read_text().split()[0]
        return int(pid_text), path.stat().st_mtime
    except (OSError, IndexError, ValueError):
        return None


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
            pid, created = holder
            if pid == os.getpid():
                yield  # this process already holds it (a nested writer of the same output)
                return
            if held_by_live_process(pid, created):
                raise OutputError(f"{final} is being written by process {pid} (lock {path}); wait for it to "
                                  "finish or choose another output") from None
            with contextlib.suppress(FileNotFoundError):  # its writer is gone; the line about its
                path.unlink()                              # temporaries (remove_stale_temporaries) says so
            continue
        with os.fdopen(handle, "w") as out:
            out.write(f"{os.getpid()}\n")
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        return
    raise OutputError(f"{final}: could not take its lock {path}; another process keeps changing it")
