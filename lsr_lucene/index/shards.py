"""Give each of IndexCollection's threads a file of its own.

Anserini's IndexCollection hands whole input files to its threads, so a collection in one vector file is indexed
on one core whatever ``-threads`` says (100k synthetic documents on 2 cores: 153 s from one file, 114 s from the
same lines in two). Files fewer than the threads are dealt out, in blocks of lines, to one file per thread.
"""
from __future__ import annotations

import contextlib
import gzip
from pathlib import Path

from tqdm import tqdm

BLOCK_LINES = 10_000  # lines dealt to a shard at a time: a collection of one block stays one file


def split_for_threads(files: list[Path], threads: int, into: Path) -> list[Path]:
    """``files`` themselves when there are at least ``threads`` of them; else their non-blank lines dealt in blocks
    of :data:`BLOCK_LINES` to ``threads`` files under ``into`` (the non-empty ones are returned)."""
    if threads <= 1 or len(files) >= threads:
        return files
    parts = [into / f"part-{i:05d}.jsonl" for i in range(threads)]
    dealt = 0
    with contextlib.ExitStack() as stack:
        outs = [stack.enter_context(p.open("wb")) for p in parts]
        for file in files:
            with (gzip.open(file, "rb") if file.suffix == ".gz" else file.open("rb")) as lines:
                for line in tqdm(lines, desc=f"splitting {file.name} for {threads} threads", unit=" docs",
                                 leave=False):
                    if line.strip():
                        outs[(dealt // BLOCK_LINES) % threads].write(line if line.endswith(b"\n") else line + b"\n")
                        dealt += 1
    return [p for p in parts if p.stat().st_size]
