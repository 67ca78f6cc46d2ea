"""Safe output (claimed, built in a temporary, installed only when complete) and line-numbered JSONL reading
(run files: lsr_lucene.io.runs)."""
from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import gzip
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import orjson

from lsr_lucene.errors import InputError, OutputError, json_problem
from lsr_lucene.io.claims import claim_output, remove_path, remove_stale_temporaries, temporary_prefix


def refuse_existing(path: str | Path, overwrite: bool, directory: bool | None = None) -> None:
    """Raise InputError when ``path`` exists and ``overwrite`` is false; create its missing parent folders.

    Every writer calls this before its work starts, so an output's folder is made (or found impossible to make,
    one InputError line) before a model is loaded or anything is computed, and its lock and temporaries have
    somewhere to go. ``directory`` (when known: whether the output is a folder) keeps ``--overwrite`` from
    replacing a folder by a file or a file by a folder (``--output runs/ --overwrite`` removed the whole folder).
    """
    if str(path) == "-":
        raise InputError("output '-': writing to standard output is not supported (outputs are written to a "
                         "temporary file renamed when complete); give a file path")
    if Path(path).exists() and not overwrite:
        raise InputError(f"{path} already exists; pass --overwrite to replace it")
    if overwrite and directory is not None and Path(path).exists() and Path(path).is_dir() != directory:
        found, written = ("a folder", "a file") if Path(path).is_dir() else ("a file", "a folder")
        raise InputError(f"{path} is {found} and this command writes {written} there; --overwrite replaces an "
                         f"output of the same kind only (remove it yourself if you mean to)")
    make_parent(path)


def make_parent(path: str | Path) -> None:
    """Create the missing parent folders of an output ``path``; InputError (one line) when that is impossible."""
    parent = Path(path).parent
    if parent.is_dir():
        return
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{path}: cannot create its folder {parent} ({exc.strerror or exc})") from None


_AT_FDCWD, _RENAME_NOREPLACE = -100, 1
_UMASK = os.umask(0o022)  # read once at import (setting it back at once): outputs get the usual permissions,
os.umask(_UMASK)          # not tempfile's private 0600/0700


@functools.lru_cache(maxsize=1)
def _renameat2():
    """glibc's renameat2 (Linux 3.15+), or None where the C library lacks it."""
    try:
        return ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None


def rename_no_replace(src: Path, dst: Path) -> None:
    """Rename ``src`` to ``dst``, raising FileExistsError when ``dst`` exists (atomically where the OS can)."""
    renameat2 = _renameat2()
    if renameat2 is not None:
        if renameat2(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), _RENAME_NOREPLACE) == 0:
            return
        err = ctypes.get_errno()
        if err == errno.EEXIST:
            raise FileExistsError(err, os.strerror(err), str(dst))
        if err not in (errno.EINVAL, errno.ENOSYS):  # other errors are real; those two: file system can't
            raise OSError(err, os.strerror(err), str(src))
    if dst.exists() or dst.is_symlink():
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(dst))
    if src.is_dir():
        os.rename(src, dst)  # fails on a non-empty directory that appeared meanwhile
    else:
        os.link(src, dst)  # fails if dst appeared meanwhile
        os.unlink(src)


def install(tmp: Path, final: Path, overwrite: bool) -> None:
    """Put a finished temporary in place of ``final``.

    Without ``overwrite`` nothing is ever replaced: if ``final`` appeared while this run worked (another
    writer), this run's result is kept beside it under a ``.conflict-<pid>`` name and OutputError says so.
    With ``overwrite`` a file is replaced atomically; a directory is renamed aside, the new one renamed in,
    then the old one removed.
    """
    if overwrite and (final.exists() or final.is_symlink()):
        if not final.is_dir() and not tmp.is_dir():
            os.replace(tmp, final)
            return
        aside = final.with_name(f"{temporary_prefix(final)}replaced")
        os.rename(final, aside)
        try:
            rename_no_replace(tmp, final)
        finally:
            remove_path(aside)
        return
    try:
        rename_no_replace(tmp, final)
    except FileExistsError:
        kept = final.with_name(f"{final.name}.conflict-{os.getpid()}")
        os.rename(tmp, kept)
        raise OutputError(f"{final} was created by another process while this one ran; this run's result is "
                          f"kept at {kept}") from None


@contextlib.contextmanager
def atomic_output(path: str | Path, overwrite: bool = False, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling of ``path``; on success it is installed at ``path``, on error removed.

    The output is claimed for the whole run (a second writer fails at once with one line), nothing at
    ``path`` is replaced unless ``overwrite`` is true, and temporaries of killed runs are removed first.
    """
    final = Path(path)
    refuse_existing(final, overwrite, directory)  # creates the parent folders
    with claim_output(final):
        refuse_existing(final, overwrite, directory)
        remove_stale_temporaries(final)
        prefix = temporary_prefix(final)
        if directory:
            tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=final.parent))
        else:
            handle, name = tempfile.mkstemp(prefix=prefix, dir=final.parent)
            os.close(handle)
            tmp = Path(name)
        tmp.chmod((0o777 if directory else 0o666) & ~_UMASK)
        try:
            yield tmp
        except BaseException:
            remove_path(tmp)
            raise
        install(tmp, final, overwrite)


def lone_surrogate(value) -> str | None:
    """What is wrong when a (JSON) value holds a string with a lone UTF-16 surrogate (``"\\ud800"``, which has no
    UTF-8 form and would reach Lucene as U+FFFD), else None."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        found = exc.object[exc.start:exc.end]
        return f"a string holds a lone surrogate ({found.encode('unicode_escape').decode()}): not Unicode text"
    return None


def open_jsonl(path: str | Path) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line of a (possibly gzipped or xz) JSONL file.

    Parsed with orjson (2-3x faster than json on vector files), falling back to json for what orjson refuses
    (NaN, integers of 64 bits and more) so that later checks can name them. A bad line raises InputError naming
    file:line.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, expected a JSONL file")
    if path.suffix == ".xz":
        import lzma

        opened = lzma.open(path, "rt", encoding="utf-8")
    else:  # utf-8, not -sig: the Java indexer reads vector files itself and refuses a byte order mark too
        opened = gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")
    with opened as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError:  # NaN, 2^64 and above: json reads them, and the checks name them
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path}:{line_no}: malformed JSON ({json_problem(exc)})") from None
                surrogate = lone_surrogate(obj)  # orjson refuses them, json keeps them: never U+FFFD later
                if surrogate is not None:
                    raise InputError(f"{path}:{line_no}: {surrogate}") from None
            if not isinstance(obj, dict):
                raise InputError(f"{path}:{line_no}: expected a JSON object")
            yield line_no, obj


class AtomicFile:
    """A file written piece by piece under a temporary name beside ``path``: ``commit`` renames it to ``path``
    (readers never see half a file), ``discard`` removes it. Binary: write UTF-8 bytes."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        handle, self.tmp = tempfile.mkstemp(prefix=temporary_prefix(self.path), dir=self.path.parent)
        self.handle = os.fdopen(handle, "wb")

    def write(self, data: bytes) -> None:
        self.handle.write(data)

    def commit(self) -> None:
        self.handle.close()
        os.chmod(self.tmp, 0o666 & ~_UMASK)
        os.replace(self.tmp, self.path)

    def discard(self) -> None:
        self.handle.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.tmp)


def write_text_atomic(path: str | Path, text: str | bytes) -> None:
    """Write a small text file (str, or bytes already UTF-8) through a temporary name and rename it (readers never
    see half a file)."""
    out = AtomicFile(path)
    try:
        out.write(text if isinstance(text, bytes) else text.encode("utf-8"))
    except BaseException:
        out.discard()
        raise
    out.commit()


def write_csv_rows(path: str | Path, rows: Sequence[Mapping], overwrite: bool = False) -> None:
    """Rows (dicts with the first row's keys) as a CSV with a header, through a temporary file renamed when
    complete; an existing ``path`` is refused unless ``overwrite``."""
    import csv

    with atomic_output(path, overwrite) as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def update_json(path: str | Path, change: Callable[[dict], dict]) -> dict:
    """Read a small JSON object file, change it and write it back under its lock (concurrent updaters keep
    each other's keys); a missing file reads as {}. Returns what was written."""
    path = Path(path)
    make_parent(path)
    with claim_output(path):
        data = change(json.loads(path.read_text(encoding="utf-8")) if path.exists() else {})
        write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
    return data


def save_png(fig: Any, path: str | Path, dpi: int, overwrite: bool = True) -> None:
    """Lay out a matplotlib figure, write it as a PNG through :func:`atomic_output` and close it (the plots under
    ``runs/``)."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    with atomic_output(path, overwrite=overwrite) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi)
    plt.close(fig)
