"""Impact indexes: validate JsonVectorCollection vectors, build them with Anserini's IndexCollection.

Anserini 1.7.1 turns each vector into text, repeating every term ``weight`` times (``JsonNode.asInt()``),
and indexes that text with a whitespace tokenizer; it silently drops negative weights, truncates floats,
wraps weights above 2^31 - 1 around (mod 2^32), splits terms longer than 255 characters, and fails with a
Java stack trace when a document's repeated text exceeds Java's largest array or the JVM heap. So every
vector file is validated first (:data:`MAX_WEIGHT`, :data:`MAX_TERM_CHARS`, :data:`MAX_TEXT_BYTES`). Our indexer
(Java ``index.ImpactIndexer``) then builds the same index without that text: each term once, its weight as the
term frequency; Anserini's IndexCollection remains available (``indexer="anserini"``). The index is written to a
temporary directory beside the target and renamed only when complete.
"""
from __future__ import annotations

import json
import math
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from lsr_lucene.progress import progress_bar

from lsr_lucene.errors import InputError
from lsr_lucene.index.kind import IMPACT, INDEX_METADATA, check_index_format, index_record, require_index_kind
from lsr_lucene.io.claims import temporary_prefix
from lsr_lucene.io.output import atomic_output, open_jsonl, refuse_existing
from lsr_lucene.io.vectors import read_metadata, vector_files

# Limits of Anserini 1.7.1's JsonVectorCollection -impact -pretokenized indexing (Lucene 9.9 underneath):
MAX_WEIGHT = 2**31 - 1  # JsonNode.asInt(): a larger weight wraps around to (weight mod 2^32) as a 32-bit int
MAX_TERM_CHARS = 255  # WhitespaceTokenizer (CharTokenizer.DEFAULT_MAX_WORD_LEN) splits longer tokens, in UTF-16 units
MAX_TEXT_BYTES = 2**31 - 9  # the repeated-term text Σ w·(len(t)+1) is one StringBuilder: Java's largest array
# (ArraysSupport.SOFT_MAX_ARRAY_LENGTH) bytes, 1 byte a character (Latin-1) or 2 (any other character).
# Each term repetition is >= 2 characters, so Lucene's own bound on the field length (sum of term frequencies
# <= 2^31 - 1, IndexingChain "too many tokens") can never be reached first.
HEAP_FACTOR = 3  # peak Java heap while Anserini builds that text: about 3x its bytes (growth copy, toString copy)


def _utf16_len(text: str) -> int:
    """Length of ``text`` in Java chars (UTF-16 code units)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


@dataclass
class _Largest:
    """The document whose repeated-term text is largest (for the heap check and error messages)."""

    text_bytes: int = 0
    chars: int = 0
    weight_sum: int = 0
    doc_id: str = ""
    where: str = ""
    vector: dict | None = None

    def describe(self) -> str:
        """"file:line: document 'd': weights sum to S (largest: 't' w)"."""
        vector = self.vector or {}
        top = max(vector, key=lambda t: vector[t], default="")
        return (f"{self.where}: document {self.doc_id!r}: weights sum to {self.weight_sum} "
                f"(largest: {top!r} {(self.vector or {}).get(top, 0)})")


def _check_weight(where: str, doc_id: str, term: str, weight) -> None:
    """Raise InputError unless ``weight`` is an integer in [0, MAX_WEIGHT]."""
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or \
            (isinstance(weight, float) and not math.isfinite(weight)):
        raise InputError(f"{where}: document {doc_id!r}: weight of {term!r} is {weight!r}, not a finite number")
    if weight < 0 or weight != int(weight):
        raise InputError(f"{where}: document {doc_id!r}: weight of {term!r} is {weight}; Anserini needs "
                         "non-negative integers (quantise first; negatives become neg_<term>)")
    if weight > MAX_WEIGHT:
        raise InputError(f"{where}: document {doc_id!r}: weight of {term!r} is {weight}, above {MAX_WEIGHT}, "
                         "the largest Anserini reads (a 32-bit int; larger weights wrap around); lower the scale")


def _check_term(where: str, doc_id: str, term: str) -> tuple[int, bool]:
    """Raise InputError unless Anserini indexes ``term`` as one token; returns (Java chars + 1 separator, Latin-1)."""
    if not term or any(ch.isspace() for ch in term):
        raise InputError(f"{where}: document {doc_id!r}: term {term!r} is empty or contains whitespace")
    length = _utf16_len(term)
    if length > MAX_TERM_CHARS:
        raise InputError(f"{where}: document {doc_id!r}: term {term[:20]!r}... is {length} characters "
                         f"long; Anserini's whitespace tokenizer splits terms over {MAX_TERM_CHARS}")
    return length + 1, all(ord(ch) < 256 for ch in term)


def _first_seen(files: list[Path], doc_id: str) -> str:
    """``file:line`` of ``doc_id``'s first occurrence, found by reading again (only when a duplicate is met, so
    validation keeps one id per document in memory, not a location string)."""
    for file in files:
        for line_no, obj in open_jsonl(file):
            if str(obj.get("id")) == doc_id:
                return f"{file}:{line_no}"
    return "?"


def _check_document(where: str, obj: dict, seen: set[str], files: list[Path]) -> tuple[str, dict]:
    """Validate one JsonVectorCollection line's id and vector object; returns (id, vector)."""
    doc_id = obj.get("id")
    if doc_id is None or isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or str(doc_id) == "":
        raise InputError(f"{where}: document has no id (a non-empty string)")
    doc_id = str(doc_id)
    if any(ch.isspace() for ch in doc_id):
        raise InputError(f"{where}: document id {doc_id!r} contains whitespace (TREC run files cannot hold it)")
    if doc_id in seen:
        raise InputError(f"{where}: duplicate document id {doc_id!r} (first seen at {_first_seen(files, doc_id)})")
    seen.add(doc_id)
    vector = obj.get("vector")
    if not isinstance(vector, dict):
        raise InputError(f"{where}: document {doc_id!r} has no 'vector' object")
    weights = vector.values()
    if not all(type(w) is int for w in weights) or (weights and not 0 <= min(weights) <= max(weights) <= MAX_WEIGHT):
        for term, weight in vector.items():  # the slow path names the offending term (or accepts 3.0)
            _check_weight(where, doc_id, term, weight)
    return doc_id, vector


def _text_size(where: str, doc_id: str, vector: dict, terms: dict[str, tuple[int, bool]]) -> _Largest:
    """Size of the text Anserini builds for a document (each term repeated weight times); InputError when a term
    is not one token or the text is over Java's limit. ``terms`` caches each checked term's (chars + 1, Latin-1)."""
    chars, latin1, weight_sum = 0, True, 0
    for term, weight in vector.items():
        info = terms.get(term)
        if info is None:
            info = terms[term] = _check_term(where, doc_id, term)
        if weight > 0:
            chars += int(weight) * info[0]
            weight_sum += int(weight)
            latin1 = latin1 and info[1]
    size = _Largest(chars * (1 if latin1 else 2), chars, weight_sum, doc_id, where, vector)
    if size.text_bytes > MAX_TEXT_BYTES:
        raise InputError(f"{size.describe()}; Anserini repeats each term weight times, {chars} characters "
                         f"({size.text_bytes} bytes), over Java's limit of {MAX_TEXT_BYTES} bytes; lower the scale")
    return size


def _validate(files: list[Path]) -> tuple[dict, _Largest]:
    seen: set[str] = set()  # ids only: a duplicate's first location is found by reading again
    terms: dict[str, tuple[int, bool]] = {}
    counts = {"documents": 0, "empty": 0, "postings": 0, "max_impact": 0}
    largest = _Largest()
    for file in files:
        name = str(file)
        for line_no, obj in progress_bar(open_jsonl(file), desc=f"checking {file.name}", unit=" docs", leave=False):
            where = f"{name}:{line_no}"
            doc_id, vector = _check_document(where, obj, seen, files)
            size = _text_size(where, doc_id, vector, terms)
            if size.text_bytes > largest.text_bytes:
                largest = size
            weights = vector.values()
            postings = len(weights) - sum(1 for w in weights if w <= 0)
            counts["documents"] += 1
            counts["postings"] += postings
            counts["max_impact"] = max(counts["max_impact"], int(max(weights, default=0)))
            if not postings:
                counts["empty"] += 1
    if counts["documents"] == 0:
        raise InputError(f"{files[0] if len(files) == 1 else files[0].parent}: no documents in the vector files")
    return counts, largest


def validate_vectors(files: list[Path]) -> dict:
    """Check every line is a valid JsonVectorCollection document that Anserini indexes as written; return counts.

    Errors name file:line and document: malformed JSON, missing, duplicate or spaced id, a weight that is not
    an integer in [0, MAX_WEIGHT], an empty, spaced or over-long term, or a document whose repeated-term text
    is over Java's limit. Documents with an empty vector are counted: Anserini skips them as empty.
    """
    return _validate(files)[0]


def _check_heap(largest: _Largest) -> None:
    """Refuse a document whose repeated-term text needs more Java heap than the JVM has (else a Java error)."""
    from lsr_lucene.jvm import runtime as jvm

    heap = int(jvm.autoclass("java.lang.Runtime").getRuntime().maxMemory())
    need = HEAP_FACTOR * largest.text_bytes
    if need > heap:
        raise InputError(f"{largest.describe()}; Anserini repeats each term weight times, {largest.chars} "
                         "characters, which needs about "
                         f"{need / 2**30:.1f} GiB of Java heap, more than the {heap / 2**30:.1f} GiB available: "
                         "lower the scale or raise LSR_JVM_HEAP")


def _vector_metadata(files: list[Path]) -> dict:
    return read_metadata(files[0].parent)


def index_size(index: str | Path) -> int:
    """Bytes on disk of an index: a directory (including any sidecar), or a single-file index."""
    index = Path(index)
    return index.stat().st_size if index.is_file() else sum(p.stat().st_size for p in index.rglob("*") if p.is_file())


def run_index_collection(args: list[str], source: str | Path | None = None, hint: str = "") -> None:
    """Run Anserini's IndexCollection in-process (the JVM is started our way first); a Java failure becomes one
    InputError line naming ``source`` (default: the -input argument) and ``hint``."""
    from lsr_lucene.jvm import runtime as jvm

    cls = jvm.autoclass("io.anserini.index.IndexCollection")  # starts the JVM our way before jnius is imported
    from jnius import JavaException

    try:
        cls.main(args)
    except JavaException as exc:
        if source is None:
            source = args[args.index("-input") + 1] if "-input" in args else "IndexCollection input"
        message = str(getattr(exc, "innermessage", None) or exc).strip().splitlines()
        raise InputError(f"{source}: Anserini's IndexCollection failed ({message[0] if message else 'Java error'})"
                         f"{hint}") from None


def index_vector_files(files: list[Path], index_dir: Path, threads: int, optimize: bool = True,
                       source: str | Path | None = None, hint: str = "") -> None:
    """Anserini's IndexCollection (``-impact -pretokenized``) over these JsonVectorCollection shards, unvalidated."""
    # IndexCollection reads every file of its input directory (a folder's metadata.json of before too): give it
    # only the vectors
    # a fresh name: a staging folder left by a killed run never blocks the next one
    staging = Path(tempfile.mkdtemp(dir=index_dir.parent, prefix=f".{index_dir.name}-input-"))
    try:
        for i, file in enumerate(files):
            (staging / f"{i:05d}-{file.name}").symlink_to(file.resolve())
        args = ["-collection", "JsonVectorCollection", "-input", str(staging),
                "-index", str(index_dir), "-generator", "DefaultLuceneDocumentGenerator",
                "-threads", str(threads), "-impact", "-pretokenized", "-storeRaw", "-quiet"]
        if optimize:
            args.append("-optimize")
        run_index_collection(args, source, hint)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def index_weighted_terms(files: list[Path], index_dir: Path, threads: int, documents: int, optimize: bool = True,
                         source: str | Path | None = None, hint: str = "") -> tuple[int, int]:
    """Our indexer (Java ``index.ImpactIndexer``) over validated shards: the index IndexCollection builds, each term
    given once with its weight as term frequency; returns (indexed, empty) and shows progress over ``documents``."""
    from jnius import JavaException

    from lsr_lucene.jvm import runtime as jvm
    from lsr_lucene.jvm.classes import java_class

    heap_mb = int(jvm.autoclass("java.lang.Runtime").getRuntime().maxMemory()) // 2**20
    job = java_class("index.ImpactIndexer").start([str(f) for f in files], str(index_dir), threads, optimize,
                                                  float(min(4096, max(64, heap_mb // 2))))
    try:
        with progress_bar(total=documents, desc="indexing", unit=" docs", leave=False) as bar:
            while not job.isDone():
                time.sleep(0.2)
                bar.update(job.indexed() + job.empty() - bar.n)
        indexed, empty = job.finish()
    except JavaException as exc:
        message = str(getattr(exc, "innermessage", None) or exc).strip().splitlines()
        raise InputError(f"{source or files[0]}: indexing failed ({message[0] if message else 'Java error'}){hint}") \
            from None
    return int(indexed), int(empty)


def in_input_order(files: list[Path], index_dir: Path, out_dir: Path, scratch: Path) -> None:
    """Write the index at ``index_dir`` into ``out_dir`` with its docids in the order of the documents in ``files``
    (empty vectors are not indexed), so that the same input always gives the same index; one segment."""
    import numpy as np

    from lsr_lucene.jvm.classes import java_class

    order: dict[str, int] = {}
    for file in files:
        for _, obj in open_jsonl(file):
            if any(w > 0 for w in obj["vector"].values()):
                order[str(obj["id"])] = len(order)
    searcher = java_class("search.BatchSearcher")(str(index_dir))
    try:
        indexed = str(searcher.docidsText()).split("\n")
    finally:
        searcher.close()
    reorderer = java_class("index.Reorderer")
    src = index_dir
    if len(list(index_dir.glob("*.si"))) > 1:  # one docid space first
        src = scratch / "anserini-merged"
        reorderer.mergeInto(str(index_dir), str(src))
    perm_file = scratch / "input_order.i32"
    np.argsort(np.array([order[d] for d in indexed], dtype=np.int64), kind="stable").astype("<i4").tofile(perm_file)
    out_dir.mkdir(parents=True, exist_ok=True)
    reorderer.apply(str(src), str(perm_file), str(out_dir))


INDEXERS = ("lsr", "anserini")  # ours (index.ImpactIndexer), or Anserini's IndexCollection: the same index


def build_impact_index(vectors: str | Path | list[str], index: str | Path, threads: int = 2, overwrite: bool = False,
                       optimize: bool = True, positions: str | Path | None = None, indexer: str = "lsr",
                       reorder: str | None = None, seed: int | None = None,
                       dense_impacts: float | str = 0.0, text: bool = True) -> dict:
    """Validate vectors (a file, a folder, or a list of files indexed in that order, e.g. a distributed index's
    shard of several parts) and index them as an impact index at ``index``; returns the index metadata.

    ``indexer`` "lsr" (ours, about 4x faster) or "anserini" (IndexCollection) build the same index. With
    ``positions`` (per-position token weights JSONL) the positional weight field used by WindowQuery/SDM is
    added too; it needs a single-segment index, so ``optimize`` is forced. With ``reorder="bp"`` the docids are
    then reordered by recursive graph bisection (seeded by ``seed``), inside the same temporary output. With
    ``dense_impacts`` S > 0 the dense-impacts sidecar (written last, in the final docid order: the terms in at
    least a share S of the documents as a byte per document, for faster exact search) too, and with ``"auto"`` the
    sidecar at the share chosen from the collection (``lsr-lucene index``'s default; dense_impacts.auto_share).
    ``text`` (default): the analysed text field of explicit exclusions (:mod:`lsr_lucene.index.text_field`), from
    the stored text, where the vectors keep any.
    """
    if indexer not in INDEXERS:
        raise InputError(f"unknown indexer {indexer!r}; known: {', '.join(INDEXERS)}")
    if isinstance(vectors, list):
        files = [Path(f) for f in vectors]
        vectors = files[0] if len(files) == 1 else f"{files[0]} .. {files[-1].name} ({len(files)} files)"
        resolved: str | list[str] = [str(f.resolve()) for f in files]
    else:
        files = vector_files(vectors)
        resolved = str(Path(vectors).resolve())
    refuse_existing(index, overwrite)
    counts, largest = _validate(files)
    _check_heap(largest)
    skipped = None
    if counts["documents"] == counts["empty"] and reorder:  # e.g. a distributed shard
        print("no documents (every vector is empty): nothing to reorder; the index is written without BP order",
              file=sys.stderr)
        skipped = {"reorder": reorder, "why": "no documents"}
        reorder = None
    with atomic_output(index, overwrite=overwrite, directory=True) as tmp, \
            tempfile.TemporaryDirectory(dir=tmp.parent, prefix=temporary_prefix(Path(index))) as scratch:
        print(f"indexing {counts['documents']} documents from {vectors}", file=sys.stderr)
        hint = (f"; its largest document ({largest.describe()}) expands to {largest.chars} characters, "
                "each term repeated weight times: if that is large, lower the scale or raise LSR_JVM_HEAP")
        built = Path(scratch) / "natural" if reorder else tmp
        merge = optimize or bool(positions) or bool(reorder)
        if indexer == "lsr":
            index_weighted_terms(files, built, threads, counts["documents"], merge, vectors)
        elif len(files) == 1:
            index_vector_files(files, built, threads, merge, vectors, hint)
        else:  # IndexCollection's threads take the files in any order: docids put back in input order
            index_vector_files(files, Path(scratch) / "anserini", threads, merge, vectors, hint)
            in_input_order(files, Path(scratch) / "anserini", built, Path(scratch))
        indexed = _num_docs(built)
        expected = counts["documents"] - counts["empty"]
        if indexed != expected:
            raise InputError(f"{vectors}: {indexer} indexed {indexed} documents, expected {expected}")
        if positions:
            from lsr_lucene.index.positional import build_positional_field

            build_positional_field(built, positions)
        metadata = {**index_record(IMPACT), "positions": bool(positions), "vectors": resolved,
                    **counts, "indexed": indexed, "indexer": indexer, "encoder": _vector_metadata(files)}
        if skipped:
            metadata["skipped"] = skipped
        if reorder:
            from lsr_lucene.index.reorder import reorder_into

            print(f"reordering the docids ({reorder})", file=sys.stderr)
            metadata["reorder"] = reorder_into(built, tmp, Path(scratch), reorder, seed,
                                               threads=threads)
            metadata["reorder"]["natural_size_bytes"] = index_size(built)
        if dense_impacts:
            from lsr_lucene.index.dense_impacts import build_dense_impacts

            metadata["dense_impacts"] = build_dense_impacts(tmp, dense_impacts)
        if text and indexed and _stores_text(files):
            from lsr_lucene.index.text_field import build_text_field

            metadata["text"] = build_text_field(tmp)
        elif text and indexed:
            print("note: the vectors keep no \"contents\", so the index has no text field: explicit exclusions "
                  "(-word, NOT word) cannot be searched on it", file=sys.stderr)
        (tmp / INDEX_METADATA).write_text(json.dumps(metadata, indent=2) + "\n")
    metadata["size_bytes"] = index_size(index)
    return metadata


def _stores_text(files: list[Path]) -> bool:
    """Whether the first document of the vectors keeps its text (``contents``), as encode writes it."""
    for file in files:
        for _, obj in open_jsonl(file):
            return bool(obj.get("contents"))
    return False


def reorder_impact_index(index: str | Path, output: str | Path, method: str = "bp", seed: int | None = None,
                         overwrite: bool = False, depth: int | None = None, threads: int | None = None,
                         dense_impacts: float | str | None = None) -> dict:
    """Write ``index`` reordered (docids by recursive graph bisection) to ``output``; returns its metadata, whose
    ``reorder`` entry records method, seed, times and log-gap costs before and after. The source's sidecars are
    rebuilt in the new order; ``dense_impacts`` (a share, ``"auto"`` or 0) sets the dense-impacts sidecar instead:
    ``"auto"`` keeps the source's share, or chooses one where the source has none."""
    from lsr_lucene.index.dense_impacts import AUTO, DENSE_IMPACTS_DIR, build_dense_impacts, dense_impacts_share
    from lsr_lucene.index.reorder import reorder_into

    require_index_kind(index, IMPACT, "reorder")
    refuse_existing(output, overwrite)
    with atomic_output(output, overwrite=overwrite, directory=True) as tmp, \
            tempfile.TemporaryDirectory(dir=tmp.parent, prefix=temporary_prefix(Path(output))) as scratch:
        info = reorder_into(index, tmp, scratch, method, seed, depth, threads=threads)
        metadata = {**read_index_metadata(index), **index_record(IMPACT)}  # the reordered index is this version's
        metadata["reorder"] = {**info, "source": str(Path(index).resolve()), "natural_size_bytes": index_size(index)}
        kept = dense_impacts_share(tmp)
        if dense_impacts == 0:
            shutil.rmtree(tmp / DENSE_IMPACTS_DIR, ignore_errors=True)
            metadata.pop("dense_impacts", None)
        elif dense_impacts is not None and not (dense_impacts == AUTO and kept) and dense_impacts != kept:
            metadata["dense_impacts"] = build_dense_impacts(tmp, dense_impacts)
        (tmp / INDEX_METADATA).write_text(json.dumps(metadata, indent=2) + "\n")
    metadata["size_bytes"] = index_size(output)
    return metadata


def _num_docs(index_dir: Path) -> int:
    from lsr_lucene.jvm import runtime as jvm

    FSDirectory = jvm.autoclass("org.apache.lucene.store.FSDirectory")
    Paths = jvm.autoclass("java.nio.file.Paths")
    directory = FSDirectory.open(Paths.get(str(index_dir)))
    try:
        reader = jvm.autoclass("org.apache.lucene.index.DirectoryReader").open(directory)
        try:
            return reader.numDocs()
        finally:
            reader.close()
    finally:
        directory.close()  # a reader does not close the Directory it was opened on


def read_index_metadata(index: str | Path) -> dict:
    """The metadata we store in an index (scale, model, counts); {} for indexes built elsewhere."""
    path = Path(index) / INDEX_METADATA
    if not path.exists():
        return {}
    metadata = json.loads(path.read_text())
    check_index_format(path, metadata)
    return metadata
