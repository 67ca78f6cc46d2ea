"""Impact indexes: validate JsonVectorCollection vectors, build them with Anserini's IndexCollection.

Anserini silently drops negative weights and truncates floats, so every vector file is
validated first (integer, non-negative weights; unique ids). The index is written to a
temporary directory beside the target and renamed only when complete.
"""
from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

from tqdm import tqdm

from lsr_lucene.errors import InputError
from lsr_lucene.io.output import atomic_output, open_jsonl, refuse_existing
from lsr_lucene.io.vectors import METADATA as VECTOR_METADATA, vector_files

INDEX_METADATA = "lsr_lucene.json"


def validate_vectors(files: list[Path]) -> dict:
    """Check every line is a valid JsonVectorCollection document; return counts.

    Errors name the file and line: malformed JSON, missing id, duplicate id, or a weight that is
    not a finite non-negative integer (Anserini would silently truncate or drop it). Documents with
    an empty vector are counted: Anserini skips them as empty.
    """
    seen: dict[str, str] = {}
    counts = {"documents": 0, "empty": 0, "postings": 0, "max_impact": 0}
    for file in files:
        for line_no, obj in tqdm(open_jsonl(file), desc=f"checking {file.name}", unit=" docs", leave=False):
            where = f"{file}:{line_no}"
            doc_id = obj.get("id")
            if doc_id is None or str(doc_id) == "":
                raise InputError(f"{where}: document has no id")
            doc_id = str(doc_id)
            if doc_id in seen:
                raise InputError(f"{where}: duplicate document id {doc_id!r} (first seen at {seen[doc_id]})")
            seen[doc_id] = where
            vector = obj.get("vector")
            if not isinstance(vector, dict):
                raise InputError(f"{where}: document {doc_id!r} has no 'vector' object")
            for term, weight in vector.items():
                if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
                    raise InputError(f"{where}: document {doc_id!r}: weight of {term!r} is {weight!r}, not a finite number")
                if weight < 0 or weight != int(weight):
                    raise InputError(f"{where}: document {doc_id!r}: weight of {term!r} is {weight}; Anserini needs "
                                     "non-negative integers (quantise first; negatives become neg_<term>)")
                if not term or any(ch.isspace() for ch in term):
                    raise InputError(f"{where}: document {doc_id!r}: term {term!r} is empty or contains whitespace")
            nonzero = [w for w in vector.values() if w > 0]
            counts["documents"] += 1
            counts["postings"] += len(nonzero)
            counts["max_impact"] = max(counts["max_impact"], int(max(nonzero, default=0)))
            if not nonzero:
                counts["empty"] += 1
    if counts["documents"] == 0:
        raise InputError(f"{files[0].parent}: no documents in the vector files")
    return counts


def _vector_metadata(files: list[Path]) -> dict:
    meta_file = files[0].parent / VECTOR_METADATA
    return json.loads(meta_file.read_text()) if meta_file.exists() else {}


def index_size(index_dir: str | Path) -> int:
    """Bytes on disk of an index directory (including any sidecar)."""
    return sum(p.stat().st_size for p in Path(index_dir).rglob("*") if p.is_file())


def run_index_collection(args: list[str]) -> None:
    """Run Anserini's IndexCollection in-process (the JVM is started our way first)."""
    from lsr_lucene.jvm import runtime as jvm

    jvm.autoclass("io.anserini.index.IndexCollection").main(args)


def build_impact_index(vectors: str | Path, index: str | Path, threads: int = 2, overwrite: bool = False,
                       optimize: bool = True, positions: str | Path | None = None) -> dict:
    """Validate vectors and index them as an impact index at ``index``; returns the index metadata.

    With ``positions`` (per-position token weights JSONL) the positional weight field used by
    WindowQuery/SDM is added too; it needs a single-segment index, so ``optimize`` is forced.
    """
    files = vector_files(vectors)
    refuse_existing(index, overwrite)
    counts = validate_vectors(files)
    with atomic_output(index, overwrite=overwrite, directory=True) as tmp:
        # IndexCollection reads every file of its input directory (metadata.json too): give it only the vectors
        staging = tmp.with_name(tmp.name + "-input")
        staging.mkdir()
        try:
            for i, file in enumerate(files):
                (staging / f"{i:05d}-{file.name}").symlink_to(file.resolve())
            args = ["-collection", "JsonVectorCollection", "-input", str(staging),
                    "-index", str(tmp), "-generator", "DefaultLuceneDocumentGenerator",
                    "-threads", str(threads), "-impact", "-pretokenized", "-storeRaw", "-quiet"]
            if optimize or positions:
                args.append("-optimize")
            print(f"indexing {counts['documents']} documents from {vectors}", file=sys.stderr)
            run_index_collection(args)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        indexed = _num_docs(tmp)
        expected = counts["documents"] - counts["empty"]
        if indexed != expected:
            raise InputError(f"{vectors}: Anserini indexed {indexed} documents, expected {expected}")
        if positions:
            from lsr_lucene.index.positional import build_positional_field

            build_positional_field(tmp, positions)
        metadata = {"kind": "impact", "positions": bool(positions), "vectors": str(Path(vectors).resolve()),
                    **counts, "indexed": indexed, "encoder": _vector_metadata(files)}
        (tmp / INDEX_METADATA).write_text(json.dumps(metadata, indent=2) + "\n")
    metadata["size_bytes"] = index_size(index)
    return metadata


def _num_docs(index_dir: Path) -> int:
    from lsr_lucene.jvm import runtime as jvm

    FSDirectory = jvm.autoclass("org.apache.lucene.store.FSDirectory")
    Paths = jvm.autoclass("java.nio.file.Paths")
    reader = jvm.autoclass("org.apache.lucene.index.DirectoryReader").open(FSDirectory.open(Paths.get(str(index_dir))))
    try:
        return reader.numDocs()
    finally:
        reader.close()


def read_index_metadata(index: str | Path) -> dict:
    """The metadata we store in an index (scale, model, counts); {} for indexes built elsewhere."""
    path = Path(index) / INDEX_METADATA
    return json.loads(path.read_text()) if path.exists() else {}
