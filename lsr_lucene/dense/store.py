"""Document embeddings on disk: ``embeddings.npy`` (float32, one row per document), ``docids.txt`` and
``metadata.json`` (model, max length, precision, dimension), written as one directory installed when complete."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from lsr_lucene.errors import InputError, json_problem
from lsr_lucene.io.output import atomic_output

EMBEDDINGS, DOCIDS, METADATA = "embeddings.npy", "docids.txt", "metadata.json"


@dataclass(frozen=True)
class Embeddings:
    """Unit-length document vectors with their ids and the encoder settings that made them."""

    docids: list[str]
    vectors: np.ndarray
    metadata: dict


def write_embeddings(path: str | Path, docids: Sequence[str], vectors: np.ndarray, metadata: dict,
                     overwrite: bool = False) -> None:
    """Write an embeddings directory (refused if it exists, unless ``overwrite``)."""
    if len(docids) != len(vectors):
        raise ValueError("one vector per document id")
    with atomic_output(path, overwrite, directory=True) as tmp:
        np.save(tmp / EMBEDDINGS, np.ascontiguousarray(vectors, dtype=np.float32))
        (tmp / DOCIDS).write_text("".join(f"{d}\n" for d in docids), encoding="utf-8")
        (tmp / METADATA).write_text(json.dumps(dict(metadata, count=len(docids)), indent=2) + "\n", encoding="utf-8")


def read_embeddings(path: str | Path) -> Embeddings:
    """Read an embeddings directory written by ``lsr-lucene dense encode``."""
    path = Path(path)
    missing = [name for name in (EMBEDDINGS, DOCIDS, METADATA) if not (path / name).is_file()]
    if missing:
        raise InputError(f"{path}: not a dense embeddings directory (missing {', '.join(missing)}); "
                         f"make one with lsr-lucene dense encode")
    try:
        metadata = json.loads((path / METADATA).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path / METADATA}:{exc.lineno}: malformed JSON ({json_problem(exc)})") from None
    vectors = np.load(path / EMBEDDINGS, mmap_mode="r")  # memory-mapped: searched block by block, never whole
    docids = (path / DOCIDS).read_text(encoding="utf-8").splitlines()
    if vectors.ndim != 2 or len(docids) != vectors.shape[0]:
        raise InputError(f"{path}: {len(docids)} document ids for an embeddings array of shape {vectors.shape}")
    if vectors.dtype != np.float32:
        raise InputError(f"{path / EMBEDDINGS}: embeddings of type {vectors.dtype}, not float32")
    return Embeddings(docids, vectors, metadata)
