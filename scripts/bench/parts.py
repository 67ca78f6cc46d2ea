"""The first N passages of an encoding as its whole part files, and a folder of links to them that ``lsr-lucene
index`` reads: how every benchmark indexes a prefix of an encoding (finished, or still being written) without
copying it.

An encoding is a vectors folder of ``lsr-lucene encode``: finished (``metadata.json`` beside its part files), or
still being written (its ``.<name>.partial`` sibling, or that folder itself, whose progress record lists the whole
parts so far). Passages are never cut out of a part: a count must end on a part's boundary.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from lsr_lucene.errors import InputError
from lsr_lucene.io.output import write_text_atomic
from lsr_lucene.io.vectors import METADATA, PROGRESS, metadata_file, read_metadata

PARTS = "part-*.jsonl"


@dataclass(frozen=True)
class Encoding:
    """The whole part files of an encoding so far, in order, and the encoder's settings (a finished encoding's
    metadata.json, else the running encoder's progress record)."""

    source: Path  # the vectors folder as given (named in messages)
    files: list[Path]
    settings: dict
    finished: bool  # metadata.json or no progress record: no more parts will come
    sizes: list[int] | None = None  # passages per file from the progress record; None: lines counted when needed

    def counted(self) -> Iterator[tuple[Path, int]]:
        """(file, passages) in order, a file's lines counted only when the walk reaches it."""
        for i, file in enumerate(self.files):
            if self.sizes is not None:
                yield file, self.sizes[i]
            else:
                with open(file, "rb") as lines:
                    yield file, sum(1 for _ in lines)

    @property
    def documents(self) -> int:
        """Passages in every whole part (a finished encoding's recorded count, else counted)."""
        if self.sizes is None and "documents" in self.settings:
            return int(self.settings["documents"])
        return sum(size for _, size in self.counted())


def encoding(vectors: str | Path) -> Encoding:
    """The encoding of ``vectors``: finished, its ``.<name>.partial`` sibling being written, or that ``.partial``
    folder itself; no files when there is none yet."""
    vectors = Path(vectors)
    if metadata_file(vectors) is None:
        for folder in (vectors, vectors.parent / f".{vectors.name}.partial"):
            if (folder / PROGRESS).is_file():
                state = json.loads((folder / PROGRESS).read_text())
                shards = state.get("shards", [])
                return Encoding(vectors, [folder / s["file"] for s in shards], state.get("settings", {}), False,
                                [int(s["documents"]) for s in shards])
    files = sorted(vectors.glob(PARTS))
    return Encoding(vectors, files, read_metadata(vectors), bool(files))


@dataclass(frozen=True)
class Parts:
    """The first whole part files of an encoding, the passages they hold, the encoder's settings."""

    source: Path
    files: list[Path]
    documents: int
    settings: dict


def first_parts(vectors: str | Path, docs: int = 0) -> Parts:
    """The first whole part files of ``vectors`` holding exactly ``docs`` passages (0: every whole part so far); an
    InputError naming the folder when ``docs`` is not encoded yet or does not end on a part's boundary."""
    found = encoding(vectors)
    if not found.files:
        raise InputError(f"{found.source}: no {PARTS} files (an lsr-lucene encode output folder, or its .partial "
                         "folder, with a whole part written)")
    if not docs:
        return Parts(found.source, found.files, found.documents, found.settings)
    chosen: list[Path] = []
    before = have = 0
    for file, size in found.counted():
        if have >= docs:
            break
        chosen.append(file)
        before, have = have, have + size
    if have < docs:
        raise InputError(f"{found.source}: {docs:,} passages asked for, {have:,} encoded in whole part files so far")
    if have > docs:
        raise InputError(f"{found.source}: {docs:,} passages do not end on a part's boundary (the first parts hold "
                         f"{before:,}, then {have:,}): give a count that does")
    return Parts(found.source, chosen, docs, found.settings)


def link_parts(parts: Parts, folder: Path) -> Path:
    """``folder`` holding links to ``parts``' files and a metadata.json of the encoder's settings with their count
    (what ``lsr-lucene index`` reads), nothing else; relinked in place when it held another selection."""
    folder.mkdir(parents=True, exist_ok=True)
    targets = {file.name: file.resolve() for file in parts.files}
    metadata = {**parts.settings, "documents": parts.documents, "files": list(targets), "shards": len(targets),
                "source_vectors": str(parts.source.resolve())}
    text = json.dumps(metadata, indent=2) + "\n"
    meta = folder / METADATA
    if meta.is_symlink() or (meta.is_file() and meta.read_text() != text):
        meta.unlink()  # first: a folder whose links are being changed has no metadata.json
    for entry in folder.iterdir():
        if entry.name != METADATA and not (entry.is_symlink() and targets.get(entry.name) == entry.resolve()):
            entry.unlink()
    for name, target in targets.items():
        if not (folder / name).is_symlink():
            (folder / name).symlink_to(target)
    if not meta.is_file():
        write_text_atomic(meta, text)
    return folder
