"""Safe output (temporary path, rename when complete) and line-numbered JSONL reading."""
from __future__ import annotations

import contextlib
import glob
import gzip
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from lsr_lucene.errors import InputError

TEMP_MARK = ".tmp-"  # temporaries are .<name>.tmp-<pid>-<random>


def refuse_existing(path: str | Path, overwrite: bool) -> None:
    """Raise InputError when ``path`` exists and ``overwrite`` is false."""
    if Path(path).exists() and not overwrite:
        raise InputError(f"{path} already exists; pass --overwrite to replace it")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def temporary_prefix(final: Path) -> str:
    """Name prefix of this process's temporaries for ``final``: hidden, and naming the writing process."""
    return f".{final.name}{TEMP_MARK}{os.getpid()}-"


def _process_start(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), from /proc; None where that is unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return time.time() - uptime + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _held_by_live_process(pid: int, created: float) -> bool:
    """Whether process ``pid`` is alive and is the one that made a temporary at ``created`` (not a reused pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by another user
    started = _process_start(pid)
    return started is None or started <= created + 1.0


def remove_stale_temporaries(final: str | Path) -> list[Path]:
    """Remove temporaries of ``final`` left by killed runs (their process is gone); say so in one line.

    A temporary is stale when it is older than this process and the process named in it is dead
    (or its pid now belongs to a younger process). Live writers' temporaries are never touched.
    """
    final = Path(final)
    if not final.parent.is_dir():
        return []
    ours = _process_start(os.getpid()) or time.time()
    stale = []
    for tmp in final.parent.glob(f"{glob.escape('.' + final.name + TEMP_MARK)}*"):
        pid_text = tmp.name[len(final.name) + 1 + len(TEMP_MARK):].split("-", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        try:
            created = tmp.lstat().st_mtime
        except FileNotFoundError:
            continue
        if created < ours and not _held_by_live_process(int(pid_text), created):
            _remove(tmp)
            stale.append(tmp)
    if stale:
        print(f"removed {len(stale)} stale temporary output(s) of {final} left by killed runs: "
              f"{', '.join(t.name for t in stale)}", file=sys.stderr)
    return stale


@contextlib.contextmanager
def atomic_output(path: str | Path, overwrite: bool = False, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling of ``path``; on success it replaces ``path``, on error it is removed.

    Nothing already at ``path`` is touched unless the body completes and ``overwrite`` is true.
    Temporaries of earlier runs that were killed (SIGKILL leaves them behind) are removed first.
    """
    final = Path(path)
    refuse_existing(final, overwrite)
    final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(final)
    prefix = temporary_prefix(final)
    if directory:
        tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=final.parent))
    else:
        handle, name = tempfile.mkstemp(prefix=prefix, dir=final.parent)
        os.close(handle)
        tmp = Path(name)
    try:
        yield tmp
    except BaseException:
        _remove(tmp)
        raise
    if final.exists():
        _remove(final)
    os.replace(tmp, final)


def open_jsonl(path: str | Path) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line of a (possibly gzipped) JSONL file.

    A bad line raises InputError naming file:line.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    opened = gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")
    with opened as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{line_no}: malformed JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise InputError(f"{path}:{line_no}: expected a JSON object")
            yield line_no, obj


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write a small text file through a temporary name and rename it (readers never see half a file)."""
    path = Path(path)
    tmp = path.with_name(f"{temporary_prefix(path)}text")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_run(results: Mapping[str, Sequence[tuple[str, float]]], output: str | Path, tag: str,
              overwrite: bool = False) -> None:
    """TREC run file (score desc, ties by docid asc), written to a temp file and renamed."""
    with atomic_output(output, overwrite=overwrite) as tmp:
        with open(tmp, "w", encoding="utf-8") as out:
            for qid, ranked in results.items():
                ordered = sorted(ranked, key=lambda ds: (-ds[1], ds[0]))
                for rank, (doc, score) in enumerate(ordered, 1):
                    out.write(f"{qid} Q0 {doc} {rank} {score:.6f} {tag}\n")
