"""Safe output (temporary path, rename when complete) and line-numbered JSONL reading."""
from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from .errors import InputError


def refuse_existing(path: str | Path, overwrite: bool) -> None:
    """Raise InputError when ``path`` exists and ``overwrite`` is false."""
    if Path(path).exists() and not overwrite:
        raise InputError(f"{path} already exists; pass --overwrite to replace it")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


@contextlib.contextmanager
def atomic_output(path: str | Path, overwrite: bool = False, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling of ``path``; on success it replaces ``path``, on error it is removed.

    Nothing already at ``path`` is touched unless the body completes and ``overwrite`` is true.
    """
    final = Path(path)
    refuse_existing(final, overwrite)
    final.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{final.name}.tmp-"
    tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=final.parent)) if directory else \
        Path(tempfile.mkstemp(prefix=prefix, dir=final.parent)[1])
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
    tmp = path.with_name(f".{path.name}.tmp")
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
