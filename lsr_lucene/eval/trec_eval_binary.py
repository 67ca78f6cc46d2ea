"""trec_eval itself for ``lsr-lucene eval QRELS RUN``: the binary that Pyserini's Anserini jar carries
(``trec_eval/trec_eval-<platform>``, what ``python -m pyserini.eval.trec_eval`` runs through Java), unpacked to a
temporary folder and run on the user's arguments, so the output is trec_eval's own, byte for byte (its default set,
``-m all_trec``, ``-q``, ``-c``, ``-J``, ``-M``, its rule for repeated ``-m``). No JVM is started.

A qrels or run that is not a regular file (``-`` for stdin, a pipe, a process substitution ``<(...)``) or is
compressed (``.gz``, ``.xz``) is copied to a temporary file first: trec_eval reads plain files.
"""
from __future__ import annotations

import contextlib
import platform
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import IO, Iterator, Sequence

from lsr_lucene.errors import InputError, LsrError

# (system, machine) -> the binary's name inside the jar's trec_eval/ folder
BINARIES = {
    ("Linux", "x86_64"): "trec_eval-linux-amd64", ("Linux", "amd64"): "trec_eval-linux-amd64",
    ("Linux", "i386"): "trec_eval-linux-i386", ("Linux", "i686"): "trec_eval-linux-i386",
    ("Darwin", "x86_64"): "trec_eval-macosx-x86_64", ("Darwin", "arm64"): "trec_eval-macosx-aarch64",
    ("Windows", "AMD64"): "trec_eval-win-x86", ("Windows", "x86"): "trec_eval-win-x86",
}


def binary_name() -> str | None:
    """The jar's trec_eval binary for this platform (None where the jar carries none, e.g. Linux on ARM)."""
    return BINARIES.get((platform.system(), platform.machine()))


def available() -> bool:
    """Whether trec_eval's binary can be run here (this platform has one, and Anserini's jar is installed)."""
    if binary_name() is None:
        return False
    from lsr_lucene.jvm.build import anserini_jar

    try:
        with zipfile.ZipFile(anserini_jar()) as jar:
            return f"trec_eval/{binary_name()}" in jar.namelist()
    except (LsrError, OSError, zipfile.BadZipFile):
        return False


@contextlib.contextmanager
def unpacked(folder: Path) -> Iterator[Path]:
    """trec_eval's binary, unpacked from Anserini's jar into ``folder`` and made executable."""
    from lsr_lucene.jvm.build import anserini_jar

    name = binary_name()
    if name is None:
        raise InputError(f"Anserini's jar carries no trec_eval binary for {platform.system()} {platform.machine()}")
    target = folder / name
    with zipfile.ZipFile(anserini_jar()) as jar, jar.open(f"trec_eval/{name}") as source, open(target, "wb") as out:
        shutil.copyfileobj(source, out)
    target.chmod(target.stat().st_mode | stat.S_IXUSR)
    yield target


def readable(spec: str, what: str, folder: Path, stdin: IO[bytes]) -> str:
    """A path trec_eval can open for ``spec``: the file itself when it is a plain regular file, else a copy."""
    if spec == "-":
        copy = folder / f"{what}-stdin"
        with open(copy, "wb") as out:
            shutil.copyfileobj(stdin, out)
        return str(copy)
    path = Path(spec)
    if not path.exists():
        from lsr_lucene.io.corpus import missing

        raise missing(path, f"{what} file")
    if path.is_dir():
        raise InputError(f"{path}: a directory, not a {what} file")
    if stat.S_ISREG(path.stat().st_mode) and path.suffix not in (".gz", ".xz"):
        return spec
    from lsr_lucene.io.corpus import open_text

    copy = folder / f"{what}-{path.name}"
    with open_text(path) as source, open(copy, "w", encoding="utf-8") as out:  # a pipe is read once, here
        shutil.copyfileobj(source, out)
    return str(copy)


def run(options: Sequence[str], qrels: str, results: str, stdin: IO[bytes] | None = None) -> str:
    """trec_eval's stdout for ``trec_eval OPTIONS QRELS RESULTS``; its complaint (exit status not 0) is one
    InputError line with trec_eval's own message."""
    if qrels == "-" and results == "-":
        raise InputError("QRELS and RUN cannot both be - (stdin): give one of them as a file")
    with tempfile.TemporaryDirectory(prefix="lsr-trec-eval-") as tmp:
        folder = Path(tmp)
        source = stdin if stdin is not None else sys.stdin.buffer
        files = [readable(qrels, "qrels", folder, source), readable(results, "run", folder, source)]
        with unpacked(folder) as binary:
            done = subprocess.run([str(binary), *options, *files], capture_output=True)
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit status {done.returncode}"]
        message = [line for line in message if line.strip()]
        raise InputError(f"trec_eval {' '.join(options)} {qrels} {results}: {message[0]}"
                         + (f" ({message[1].strip()})" if len(message) > 1 else ""))
    return done.stdout.decode("utf-8", "replace")
