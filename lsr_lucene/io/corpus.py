"""Read document collections (JSONL, BEIR folders, TSV, JSONL directories, ir_datasets) as a stream of Docs."""
from __future__ import annotations

import gzip
import io
import lzma
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable, Iterator

from lsr_lucene.errors import InputError
from lsr_lucene.io.output import open_jsonl as jsonl_objects

IRDS_PREFIX = "irds:"
JSONL_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".jsonl.xz", ".json.xz")
TSV_SUFFIXES = (".tsv", ".tsv.gz", ".txt", ".txt.gz", ".tsv.xz", ".txt.xz")
ID_KEYS = ("id", "_id", "docid")
# first columns that make a TSV file's first line a header row, not a document or query
HEADER_NAMES = frozenset({"id", "_id", "qid", "docid", "doc_id", "pid", "query_id", "query-id", "queryid", "topic",
                          "topic_id", "topicid", "corpus-id", "corpus_id", "num", "number"})
TEXT_KEYS = ("text", "contents")


@dataclass(frozen=True)
class Doc:
    """One document; ``contents`` is the text that gets encoded and indexed."""

    id: str
    text: str
    title: str = ""
    origin: str = field(default="", compare=False, repr=False)  # "file:line" for error messages

    @property
    def contents(self) -> str:
        """Indexing text: ``title + " " + text`` stripped (just the text when there is no title)."""
        return doc_contents(self.title, self.text)


def doc_contents(title: str, text: str) -> str:
    """Join title and text the way every encoder and indexer in this package does."""
    title = (title or "").strip()
    text = (text or "").strip()
    return f"{title} {text}".strip() if title else text


def missing(path: str | Path, what: str = "file") -> InputError:
    """The error for an input ``path`` that is not a regular file: a pipe (``<(...)`` process substitution, a FIFO)
    is named as one, since inputs are checked before the work starts and read again; else ``no such WHAT``."""
    path = Path(path)
    if path.is_dir():
        return InputError(f"{path}: is a directory, not a {what}")
    if path.exists():
        return InputError(f"{path}: not a regular file (a pipe or <(...) process substitution?); inputs are read "
                          "more than once: save it to a file and pass that")
    return InputError(f"{path}: no such {what}")


def open_text(path: Path) -> IO[str]:
    """Open a UTF-8 text file, transparently decompressing ``*.gz`` and ``*.xz``; a byte order mark (Windows editors
    write one) is dropped, never read as part of the first id."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig")
    if path.suffix == ".xz":
        return lzma.open(path, "rt", encoding="utf-8-sig")
    return path.open(encoding="utf-8-sig")


def _name(path: Path) -> str:
    return path.name.lower()


def _is_jsonl(path: Path) -> bool:
    return _name(path).endswith(JSONL_SUFFIXES)


def _is_tsv(path: Path) -> bool:
    return _name(path).endswith(TSV_SUFFIXES)


def _beir_corpus(folder: Path) -> Path | None:
    for name in ("corpus.jsonl", "corpus.jsonl.gz"):
        if (folder / name).is_file():
            return folder / name
    return None


def _dir_files(folder: Path) -> list[Path]:
    """Collection files in a directory (recursively, sorted by path), as Anserini's JsonCollection walks them."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")
                   and (_is_jsonl(p) or _is_tsv(p)))
    return files


def looks_like_irds_id(spec: str) -> bool:
    """True for strings shaped like an ir_datasets id (``name`` or ``name/sub/split``) and no file extension."""
    return bool(re.fullmatch(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)*", spec)) and not _is_jsonl(Path(spec)) \
        and not _is_tsv(Path(spec))


def irds_id(spec: str | Path) -> str | None:
    """The ir_datasets id a spec names (``irds:<id>``, or an id-shaped spec that is not an existing path)."""
    spec = str(spec)
    if spec.startswith(IRDS_PREFIX):
        return spec[len(IRDS_PREFIX):]
    if not Path(spec).exists() and looks_like_irds_id(spec):
        return spec
    return None


def load_irds(dataset_id: str, need: str):
    """Load an ir_datasets dataset that provides ``need`` ("docs" or "queries"), with one-line errors."""
    try:
        import ir_datasets
    except ImportError:
        raise InputError(f"irds:{dataset_id}: ir_datasets is not installed (pip install ir_datasets)") from None
    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(f"{dataset_id}: no such file, and not a known ir_datasets id") from None
    provides = getattr(dataset, f"has_{need}", None)
    if provides is not None and not provides():
        raise InputError(f"irds:{dataset_id}: this ir_datasets dataset provides no {need}")
    return dataset


def irds_iter(dataset_id: str, iterator: Iterator) -> Iterator:
    """Wrap an ir_datasets iterator so a failed download becomes one InputError line."""
    try:
        yield from iterator
    except InputError:
        raise
    except Exception as exc:  # ir_datasets raises RuntimeError/IOError/requests errors on a failed download
        reason = str(exc.args[0]) if exc.args else type(exc).__name__
        reason = reason.splitlines()[0][:200] if reason else type(exc).__name__
        raise InputError(f"irds:{dataset_id}: ir_datasets could not provide the data ({reason}); "
                         "download it where there is internet access (it is cached under $IR_DATASETS_HOME, "
                         "default ~/.ir_datasets) or pass a local file") from None


def _irds_docs(dataset_id: str) -> Iterator[Doc]:
    dataset = load_irds(dataset_id, "docs")  # unknown ids fail here, before iteration starts
    return _irds_doc_stream(dataset_id, dataset)


def _irds_doc_stream(dataset_id: str, dataset) -> Iterator[Doc]:
    for doc in irds_iter(dataset_id, dataset.docs_iter()):
        text = getattr(doc, "text", None)
        if text is None:
            text = doc.default_text() if hasattr(doc, "default_text") else ""
            title = ""
        else:
            title = getattr(doc, "title", "") or ""
        yield Doc(str(doc.doc_id), text or "", title, f"irds:{dataset_id}:{doc.doc_id}")


def _first(obj: dict, keys: Iterable[str]):
    for key in keys:
        if key in obj and obj[key] is not None:
            return obj[key]
    return None


def _jsonl_docs(path: Path) -> Iterator[Doc]:
    for line_no, obj in jsonl_objects(path):
        doc_id = _first(obj, ID_KEYS)
        if doc_id is None or str(doc_id).strip() == "":
            raise InputError(f"{path}:{line_no}: document has no id (expected an \"id\" or \"_id\" field)")
        text = _first(obj, TEXT_KEYS)
        if text is None:
            raise InputError(f"{path}:{line_no}: document {doc_id} has no \"text\" or \"contents\" field")
        title = obj.get("title") or ""
        if not isinstance(text, str) or not isinstance(title, str):
            raise InputError(f"{path}:{line_no}: document {doc_id}: title and text must be strings")
        check_id(str(doc_id).strip(), f"{path}:{line_no}", "document")
        yield Doc(str(doc_id), text, title, f"{path}:{line_no}")


def header_row(path: Path, line_no: int, line: str, what: str) -> bool:
    """Whether a TSV file's first non-blank line is a header row (its first column a known column name such as
    ``qid``, ``id`` or ``query-id``, not an id); says so in one warning line, since it is skipped."""
    if line.split("\t", 1)[0].strip().lower() not in HEADER_NAMES:
        return False
    shown = line if len(line) <= 60 else line[:57] + "..."
    print(f"warning: {path}:{line_no}: skipped a header row {shown!r} (not {what})", file=sys.stderr)
    return True


def tsv_rows(path: Path, what: str) -> Iterator[tuple[int, str, list[str]]]:
    """(line number, line, tab-separated columns) of a TSV file's non-blank lines; a header row first is skipped
    with a warning (``what`` names what a row should be, e.g. "a query")."""
    with open_text(path) as handle:
        first = True
        for line_no, line in enumerate(handle, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            if first:
                first = False
                if header_row(path, line_no, line, what):
                    continue
            yield line_no, line, line.split("\t")


def check_id(doc_id: str, where: str, what: str) -> None:
    """InputError when a document or query id holds whitespace: run files and qrels are whitespace-separated, so
    such an id would write lines with a column too many (Anserini's runs too) that no evaluation reads."""
    if any(ch.isspace() for ch in doc_id):
        raise InputError(f"{where}: {what} id {doc_id!r} contains whitespace (run files and qrels are "
                         "whitespace-separated)")


def _tsv_docs(path: Path) -> Iterator[Doc]:
    for line_no, _line, cols in tsv_rows(path, "a document"):
        if len(cols) == 2:
            doc_id, title, text = cols[0], "", cols[1]
        elif len(cols) == 3:
            doc_id, title, text = cols
        else:
            raise InputError(f"{path}:{line_no}: expected 'id<TAB>text' or 'id<TAB>title<TAB>text', "
                             f"got {len(cols)} tab-separated column(s)")
        if not doc_id.strip():
            raise InputError(f"{path}:{line_no}: document has no id (empty first column)")
        check_id(doc_id.strip(), f"{path}:{line_no}", "document")
        yield Doc(doc_id.strip(), text, title, f"{path}:{line_no}")


def _file_docs(path: Path) -> Iterator[Doc]:
    """Documents of one file: TSV or JSONL by extension, else by whether the first line opens a JSON object."""
    if _is_tsv(path):
        return _tsv_docs(path)
    if _is_jsonl(path):
        return _jsonl_docs(path)
    with open_text(path) as handle:
        first = next((line for line in handle if line.strip()), "")
    return _jsonl_docs(path) if first.lstrip().startswith("{") else _tsv_docs(path)


def corpus_files(spec: str | Path) -> list[Path]:
    """The files a local corpus spec stands for (one file, a BEIR folder's corpus.jsonl, or a directory's files)."""
    path = Path(spec)
    if path.is_dir():
        beir = _beir_corpus(path)
        if beir is not None:
            return [beir]
        files = _dir_files(path)
        if not files:
            raise InputError(f"{path}: directory holds no corpus.jsonl and no *.jsonl/*.json/*.tsv files")
        return files
    if path.is_file():
        return [path]
    raise missing(path, "file or directory")


def read_corpus(spec: str | Path) -> Iterator[Doc]:
    """Stream the documents of a JSONL/TSV file, BEIR folder, JSONL directory or ir_datasets id (``irds:<id>``)."""
    dataset_id = irds_id(spec)
    if dataset_id is not None:
        return _irds_docs(dataset_id)
    files = corpus_files(spec)  # raise missing-path errors now, not at first next()
    return _not_empty((doc for path in files for doc in _file_docs(path)), spec)


def _not_empty(docs: Iterator[Doc], spec: str | Path) -> Iterator[Doc]:
    """Pass documents through; InputError naming ``spec`` when there were none (an empty file)."""
    count = 0
    for doc in docs:
        count += 1
        yield doc
    if count == 0:
        raise InputError(f"{spec}: no documents (empty file?)")


def check_unique(docs: Iterable[Doc]) -> Iterator[Doc]:
    """Pass documents through, raising InputError at the first repeated id (naming both places)."""
    seen: dict[str, str] = {}
    for doc in docs:
        if doc.id in seen:
            raise InputError(f"{doc.origin or 'corpus'}: duplicate document id {doc.id!r} "
                             f"(first seen at {seen[doc.id] or 'an earlier line'})")
        seen[doc.id] = doc.origin
        yield doc


def check_corpus(spec: str | Path) -> int | None:
    """A first pass over a local corpus before any model is loaded: every line parsed and every id checked unique
    (InputError naming both places of a repeated id), so that bad input fails at once and not after hours of
    encoding; returns the number of documents. ir_datasets ids (None) are checked while they stream."""
    if irds_id(spec) is not None:
        return None
    seen: dict[str, int] = {}  # id -> document number (not its origin: a corpus can have millions of ids)
    count = 0
    for doc in read_corpus(spec):
        count += 1
        first = seen.setdefault(doc.id, count)
        if first != count:
            where = next((d.origin for n, d in enumerate(read_corpus(spec), 1) if n == first), "")
            raise InputError(f"{doc.origin or spec}: duplicate document id {doc.id!r} "
                             f"(first seen at {where or f'document #{first}'})")
    return count


def _count_lines(path: Path) -> int:
    """Number of lines (a final line without newline counts) — cheap: counts bytes, parses nothing."""
    opener: io.BufferedIOBase
    if path.suffix == ".gz":
        opener = gzip.open(path, "rb")
    elif path.suffix == ".xz":
        opener = lzma.open(path, "rb")
    else:
        opener = path.open("rb")
    count, last = 0, b"\n"
    with opener as handle:
        while chunk := handle.read(1 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


def count_docs(spec: str | Path) -> int | None:
    """Approximate document count for progress bars (line count; None when unknown)."""
    dataset_id = irds_id(spec)
    if dataset_id is not None:
        try:
            return int(load_irds(dataset_id, "docs").docs_count())
        except Exception:  # count needs metadata that may not be downloaded; a bar without total is fine
            return None
    try:
        return sum(_count_lines(path) for path in corpus_files(spec))
    except OSError:
        return None
