"""What an index folder holds (an impact, BM25 or distributed index), so that every verb refuses the wrong kind.

Our indexes record their kind: ``lsr_lucene.json`` (``"kind": "impact"`` or ``"bm25"``) in a Lucene index folder,
``shards.json`` (``"kind": "distributed-impact"``) in a distributed one. A BM25 index searched as an impact index
(or the reverse) returns a run without any error, so each verb checks the kind first and fails with one line.
A Lucene index without either file (built by Anserini or Pyserini) is looked at: a ``contents`` field indexed with
positions or term vectors is a text (BM25) index, which an impact search refuses; one without (IndexCollection's
``-impact -pretokenized`` index) is searched as an impact index.

Each record also holds ``"format"`` (INDEX_FORMAT when written) and ``"lsr_lucene_version"``: an index of a newer
format than this code reads is refused in one line instead of being misread (a record without one is format 1).
"""
from __future__ import annotations

import json
from pathlib import Path

from lsr_lucene import __version__
from lsr_lucene.errors import InputError

INDEX_METADATA = "lsr_lucene.json"
DISTRIBUTED_MANIFEST = "shards.json"
IMPACT, BM25, DISTRIBUTED = "impact", "bm25", "distributed-impact"
# how each kind is built, for the error line
BUILT_BY = {IMPACT: "lsr-lucene index", BM25: "lsr-lucene bm25 --corpus ...",
            DISTRIBUTED: "lsr-lucene distributed index"}
# the layout of our index folders: raise it (and say so in CHANGELOG.md) when older code would misread a new index
INDEX_FORMAT = 1
# the sidecar of the retired approximate mode (top postings, issue 66) that older indexes may hold: never read
LEGACY_TOP_POSTINGS_DIR = "top-postings"
_noted_legacy: set[str] = set()  # indexes whose legacy sidecar this process has already named


def index_record(kind: str) -> dict:
    """The first entries of every index record we write: its kind, format, and the lsr_lucene version that built it."""
    return {"kind": kind, "format": INDEX_FORMAT, "lsr_lucene_version": __version__}


def check_index_format(path: Path, recorded: object) -> None:
    """InputError (one line naming the record) when ``recorded`` (the parsed record at ``path``) is of a newer
    index format than this code reads."""
    found = recorded.get("format", 1) if isinstance(recorded, dict) else 1
    if isinstance(found, int) and not isinstance(found, bool) and found <= INDEX_FORMAT:
        return
    built_by = recorded.get("lsr_lucene_version", "an unknown version") if isinstance(recorded, dict) else "?"
    raise InputError(f"{path}: index format {found!r} (built by lsr_lucene {built_by}), but this lsr_lucene "
                     f"{__version__} reads formats up to {INDEX_FORMAT}; upgrade lsr_lucene or rebuild the index")


def index_kind(index: str | Path) -> str | None:
    """The kind an index folder records ("impact", "bm25", "distributed-impact"), or None when it records none."""
    index = Path(index)
    for name, default in ((INDEX_METADATA, None), (DISTRIBUTED_MANIFEST, DISTRIBUTED)):
        path = index / name
        if path.is_file():
            try:
                recorded = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                raise InputError(f"{path}: unreadable index metadata (not JSON)") from None
            check_index_format(path, recorded)
            kind = recorded.get("kind", default) if isinstance(recorded, dict) else default
            return str(kind) if kind is not None else None
    return None


def require_index_kind(index: str | Path, kind: str, verb: str, must_exist: bool = True) -> None:
    """InputError (one line naming the index, its kind and what ``verb`` needs) unless ``index`` is a folder whose
    recorded kind is ``kind`` (or records none); a missing ``index`` passes when ``must_exist`` is false."""
    path = Path(index)
    if not path.exists():
        if not must_exist:
            return
        raise InputError(f"{index}: no such index directory")
    if not path.is_dir():
        raise InputError(f"{index}: not an index directory")
    found = index_kind(path)
    if found is None and kind == IMPACT and unrecorded_text_index(path):
        raise InputError(f"{index} is a text (BM25) index built elsewhere (no {INDEX_METADATA}; its contents field "
                         f"keeps positions or term vectors, which impact indexes do not); {verb} needs an impact "
                         f"index (built by `lsr-lucene index`): search this one with `lsr-lucene bm25 --index "
                         f"{index} --topics ... --output ...` or Pyserini's LuceneSearcher")
    if found is not None and found != kind:
        built = BUILT_BY.get(kind)
        hint = f" (built by `{built}`)" if built else ""
        raise InputError(f"{index} is {_a(found)} {found} index (its {_record(found)} says so); {verb} needs "
                         f"{_a(kind)} {kind} index{hint}")


def note_legacy_sidecars(index: str | Path) -> None:
    """One ``note:`` line on stderr (once per index and process) where ``index`` still holds the top-postings
    sidecar of the retired approximate mode: search ignores it and stays exact; the heap factor replaces it."""
    import sys

    path = Path(index) / LEGACY_TOP_POSTINGS_DIR
    if path.is_dir() and str(path.resolve()) not in _noted_legacy:
        _noted_legacy.add(str(path.resolve()))
        print(f"note: {path} (the top-postings sidecar of the retired approximate mode) is ignored: search is exact; "
              "for approximate search use --heap-factor H (heap_factor)", file=sys.stderr)


def unrecorded_text_index(index: Path, field: str = "contents") -> bool:
    """Whether a Lucene index that records no kind indexes ``field`` as text (positions or term vectors: Anserini's
    and Pyserini's BM25 indexes), not as impacts (IndexCollection ``-impact`` keeps term frequencies only)."""
    if not any(index.glob("segments_*")):
        return False  # not a Lucene index: the searcher says what is wrong
    from lsr_lucene.jvm import runtime as jvm

    paths = jvm.autoclass("java.nio.file.Paths")
    directory = jvm.autoclass("org.apache.lucene.store.FSDirectory").open(paths.get(str(index.resolve())))
    try:
        reader = jvm.autoclass("org.apache.lucene.index.DirectoryReader").open(directory)
        try:
            info = jvm.autoclass("org.apache.lucene.index.FieldInfos").getMergedFieldInfos(reader).fieldInfo(field)
        finally:
            reader.close()
    except Exception:  # unreadable: the searcher gives the Lucene error
        return False
    finally:
        directory.close()
    if info is None:
        return False
    options = str(info.getIndexOptions().toString())
    vectors = getattr(info, "hasTermVectors", None) or info.hasVectors  # Lucene 10's name, else Lucene 9's
    return "POSITIONS" in options or bool(vectors())


def _record(kind: str) -> str:
    return DISTRIBUTED_MANIFEST if kind == DISTRIBUTED else INDEX_METADATA


def _a(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"
