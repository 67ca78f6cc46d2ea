"""Quantise sparse vectors and write/read them as Anserini JsonVectorCollection shards (resumable).

Output of :func:`write_vectors` is a directory of ``part-00000.jsonl`` ... files, one JSON object a line
``{"id", "contents", "vector": {term: int}}``; what was recorded (encoder settings, scale, counts) is the sibling file
``<directory>.metadata.json`` (:func:`metadata_path`), outside the directory: Anserini's JsonVectorCollection reads
every file inside it, hidden ones too, as documents (folders written before keep ``metadata.json`` inside: read too).
Work happens in a hidden sibling ``.<name>.partial/``: each shard is written to a temporary name and
renamed when complete, and the finished directory is renamed into place at the end. Re-running the
same command after an interruption resumes after the last complete shard.

Documents whose text is empty (after stripping) are skipped and counted (``skipped_empty``), because
an encoder would give them only the special tokens' expansion.

Query vectors (:func:`encode_topics_file`) are one JSONL file with signed integer weights.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import sys
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, cast

from lsr_lucene.errors import InputError, Interrupted
from lsr_lucene.io.output import AtomicFile, write_text_atomic

DEFAULT_SCALE = 100
DEFAULT_SHARD_SIZE = 10_000
METADATA = "metadata.json"  # inside the directory: where folders written before this release keep their record
METADATA_SUFFIX = ".metadata.json"  # beside the directory: <name>.metadata.json (where Anserini does not look)
PROGRESS = "progress.state"  # in the partial directory only (not *.json: the indexer reads *.json files)
NEG_PREFIX = "neg_"
SHARD_PATTERN = "part-{:05d}.jsonl"
# documents encoded together, counted from the input's start (never from a shard's or a resumed run's): the encoder
# pads length-sorted batches of them, and float results depend on a batch's shape, so the windows fix the output
# (``encode_window``: at least this many, in whole batches; lsr_lucene.distributed cuts the same windows)
ENCODE_WINDOW = 512
MIN_WINDOW_BATCHES = 8
POSITIONS_PATTERN = "positions-{:05d}.part"
# settings that must match for a resumed run to continue an interrupted one
RESUME_KEYS = ("model", "max_length", "activation", "pooling", "epsilon", "dtype", "scale", "shard_size",
               "positions", "batch_size", "encode_window")


class ResumeMismatch(InputError):
    """This input or these settings differ from the interrupted run's (whose complete shards are kept)."""


def _check_finite(term: str, weight: float, doc_id: str | None) -> float:
    try:
        value = float(weight)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value):
        who = f"document {doc_id!r}" if doc_id is not None else "vector"
        raise InputError(f"{who}: weight of term {term!r} is {weight!r}, not a finite number")
    return value


def quantise(weights: Mapping[str, float], scale: float = DEFAULT_SCALE, doc_id: str | None = None) -> dict[str, int]:
    """Document impacts: round(w × scale) (Python round, half to even), zeros dropped, negative w -> ``neg_<term>``.

    NaN or infinite weights raise InputError naming ``doc_id``.
    """
    out: dict[str, int] = {}
    for term, weight in weights.items():
        value = _check_finite(term, weight, doc_id)
        impact = round(abs(value) * scale)
        if impact == 0:
            continue
        key = f"{NEG_PREFIX}{term}" if value < 0 else term
        if key in out:
            raise InputError(f"document {doc_id!r}: term {key!r} occurs twice after splitting negative weights")
        out[key] = int(impact)
    return out


def quantise_query(weights: Mapping[str, float], scale: float = DEFAULT_SCALE,
                   query_id: str | None = None) -> dict[str, int]:
    """Query weights: round(w × scale) keeping signs (no ``neg_`` terms), zeros dropped; NaN/inf raise InputError."""
    out: dict[str, int] = {}
    for term, weight in weights.items():
        value = _check_finite(term, weight, query_id)
        quantised = round(value * scale)
        if quantised != 0:
            out[term] = int(quantised)
    return out


def signed(vector: Mapping[str, float]) -> dict[str, float]:
    """Merge ``neg_<t>`` impacts back into signed weights: {t: impact_t - impact_neg_t}."""
    out: dict[str, float] = {}
    for term, weight in vector.items():
        if term.startswith(NEG_PREFIX):
            base = term[len(NEG_PREFIX):]
            out[base] = out.get(base, 0) - weight
        else:
            out[term] = out.get(term, 0) + weight
    return {t: w for t, w in out.items() if w != 0}


# ---- reading --------------------------------------------------------------------------------------------
def vector_files(path: str | Path) -> list[Path]:
    """The JSONL files of a vectors file or directory (sorted; metadata.json excluded)."""
    path = Path(path)
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in (".jsonl", ".json")
                       and p.name != METADATA and not p.name.startswith("."))
        if not files:
            raise InputError(f"{path}: no .jsonl vector files in this directory")
        return files
    from lsr_lucene.io.corpus import missing

    raise missing(path, "file or directory")


def _iter_file(path: Path, with_contents: bool) -> Iterator[tuple]:
    from lsr_lucene.io.output import open_jsonl

    for line_no, obj in open_jsonl(path):
        doc_id = obj.get("id")
        vector = obj.get("vector")
        if doc_id is None or str(doc_id) == "":
            raise InputError(f"{path}:{line_no}: vector has no id")
        if not isinstance(vector, dict):
            raise InputError(f"{path}:{line_no}: {doc_id}: no \"vector\" object")
        for term, weight in vector.items():
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
                raise InputError(f"{path}:{line_no}: {doc_id}: weight of {term!r} is {weight!r}, not a finite number")
        if with_contents:
            yield str(doc_id), vector, obj.get("contents", "")
        else:
            yield str(doc_id), vector


def read_vectors(path: str | Path, with_contents: bool = False) -> Iterator[tuple]:
    """Yield (id, {term: weight}) (or (id, vector, contents)) from a vectors JSONL file or shard directory."""
    for file in vector_files(path):
        yield from _iter_file(file, with_contents)


def read_query_vectors(path: str | Path) -> dict[str, dict[str, float]]:
    """Query vectors ``{qid: {term: weight}}`` (signed) from a query-vector JSONL file, in file order."""
    from lsr_lucene.io.topics import read_query_vectors as _read

    return _read(path)


def metadata_path(folder: str | Path) -> Path:
    """Where a vectors directory's record is written: ``<folder>.metadata.json`` beside it (Anserini's indexers,
    given the folder, read every file in it: ``python -m pyserini.index.lucene --input FOLDER`` must see documents
    only)."""
    folder = Path(os.path.abspath(folder))
    return folder.with_name(folder.name + METADATA_SUFFIX)


def metadata_file(folder: str | Path) -> Path | None:
    """The record of a vectors directory: beside it, else ``metadata.json`` inside it (written before); None."""
    for candidate in (metadata_path(folder), Path(folder) / METADATA):
        if candidate.is_file():
            return candidate
    return None


def read_metadata(path: str | Path) -> dict:
    """What encoding recorded for a vectors directory (:func:`metadata_file`; {} when it has no record)."""
    meta = metadata_file(path) if Path(path).is_dir() else None
    return json.loads(meta.read_text()) if meta is not None else {}


def write_metadata(folder: str | Path, metadata: Mapping[str, Any]) -> Path:
    """Write a vectors directory's record beside it, atomically (:func:`metadata_path`); its path."""
    path = metadata_path(folder)
    write_text_atomic(path, json.dumps(metadata, indent=2) + "\n")
    return path


# ---- writing --------------------------------------------------------------------------------------------
def doc_fields(doc: Any, index: int) -> tuple[str, str, str]:
    """(id, text to encode, origin) of a corpus.Doc, a dict or an (id, text) pair."""
    if isinstance(doc, tuple):
        doc_id, text = doc[0], doc[1]
        origin = f"document #{index + 1}"
    elif isinstance(doc, Mapping):
        doc_id = doc.get("id")
        from lsr_lucene.io.corpus import doc_contents

        text = doc_contents(doc.get("title") or "", doc.get("text") or doc.get("contents") or "")
        origin = f"document #{index + 1}"
    else:
        doc_id = doc.id
        text = doc.contents if hasattr(doc, "contents") else doc.text
        origin = getattr(doc, "origin", "") or f"document #{index + 1}"
    if doc_id is None or str(doc_id) == "":
        raise InputError(f"{origin}: document has no id")
    return str(doc_id), text or "", origin


class _Partial:
    """The hidden work directory of an unfinished run and its progress record."""

    def __init__(self, final: Path, settings: dict):
        self.final = final
        self.dir = final.parent / f".{final.name}.partial"
        self.settings = settings
        self.shards: list[dict] = []
        progress = self.dir / PROGRESS
        state = json.loads(progress.read_text()) if progress.is_file() else {}
        if state.get("shards"):  # an interrupted run with complete shards: resume it if the settings match
            old = state.get("settings", {})
            for key in RESUME_KEYS:
                if old.get(key) != settings.get(key):
                    raise InputError(f"{self.dir}: an interrupted run used {key}={old.get(key)!r}, this run "
                                     f"{settings.get(key)!r}; use the same settings to resume, or delete it")
            self.shards = state.get("shards", [])
        else:
            if self.dir.exists():
                shutil.rmtree(self.dir)
            self.dir.mkdir(parents=True)
            self.save()
        listed = {s["file"] for s in self.shards} | {s.get("positions") for s in self.shards} | {PROGRESS}
        for leftover in self.dir.iterdir():  # shards renamed after the last progress save, temp files
            if leftover.name not in listed:
                leftover.unlink()

    def kept(self) -> str:
        """What an interrupted run leaves for the next to resume, and how."""
        documents = sum(s["documents"] for s in self.shards)
        return (f"kept {len(self.shards)} complete shard(s) ({documents} documents) in {self.dir}: run the same "
                f"command again to resume, or delete it to start over")

    def save(self) -> None:
        write_text_atomic(self.dir / PROGRESS, json.dumps({"settings": self.settings, "shards": self.shards}))

    def add_shard(self, shard: "_OpenShard", info: dict) -> None:
        """Put one complete shard in place and record it."""
        self.shards.append(shard.commit(info))
        self.save()


class _OpenShard:
    """The shard being written: rows appended as windows come back and renamed into place when complete, so a shard
    is never held whole in memory and writing it overlaps encoding."""

    def __init__(self, folder: Path, number: int, positions: bool):
        self.name = SHARD_PATTERN.format(number)
        self.lines = AtomicFile(folder / self.name)
        self.positions_name = POSITIONS_PATTERN.format(number) if positions else None
        self.positions = AtomicFile(folder / self.positions_name) if self.positions_name else None
        self.documents = self.empty_vectors = self.postings = 0

    def add(self, rows: list[tuple[str | bytes, str | None, int]]) -> None:
        """Append ``window_lines`` rows: (line as str, or UTF-8 bytes from encode.pipeline; position line; postings)."""
        lines = [row[0] for row in rows]
        if lines and isinstance(lines[0], bytes):
            self.lines.write(b"".join(cast(list[bytes], lines)))
        else:
            self.lines.write("".join(cast(list[str], lines)).encode("utf-8"))
        if self.positions is not None:
            self.positions.write("".join(cast(list[str], [row[1] for row in rows])).encode("utf-8"))
        self.documents += len(rows)
        self.empty_vectors += sum(1 for row in rows if row[2] == 0)
        self.postings += sum(row[2] for row in rows)

    def commit(self, info: dict) -> dict:
        """Rename the files into place; the shard's progress record."""
        self.lines.commit()
        record = {"file": self.name, "documents": self.documents, **info, "empty_vectors": self.empty_vectors,
                  "postings": self.postings}
        if self.positions is not None:
            self.positions.commit()
            record["positions"] = self.positions_name
        return record

    def discard(self) -> None:
        self.lines.discard()
        if self.positions is not None:
            self.positions.discard()


def _adopt_resumed_dtype(final: Path, encoder) -> None:
    """An interrupted run keeps its recorded precision when this one asked for ``auto`` (encoder.adopt_dtype)."""
    progress = final.parent / f".{final.name}.partial" / PROGRESS
    if not progress.is_file() or not hasattr(encoder, "adopt_dtype"):
        return
    try:
        state = json.loads(progress.read_text())
    except json.JSONDecodeError:
        return
    if state.get("shards"):
        encoder.adopt_dtype(state.get("settings", {}).get("dtype"))


def _finish(partial: _Partial, metadata: dict, positions: Path | None, overwrite: bool) -> None:
    """Concatenate position shards, move the directory into place and write its record beside it."""
    from lsr_lucene.io.output import atomic_output, install

    if positions is not None:
        with atomic_output(positions, overwrite=overwrite) as tmp:
            with open(tmp, "wb") as out:
                for shard in partial.shards:
                    with open(partial.dir / shard["positions"], "rb") as part:
                        shutil.copyfileobj(part, out)
        for shard in partial.shards:
            (partial.dir / shard["positions"]).unlink()
    (partial.dir / PROGRESS).unlink()
    install(partial.dir, partial.final, overwrite)
    write_metadata(partial.final, metadata)  # last: a record beside a folder says the folder is complete


def _takes_progress(encoder) -> bool:
    """Whether ``encoder.encode_documents`` takes ``progress`` (SparseEncoder: a bar advanced per batch)."""
    import inspect

    try:
        return "progress" in inspect.signature(encoder.encode_documents).parameters
    except (TypeError, ValueError):
        return False


def encode_window(batch_size: int, base: int | None = None) -> int:
    """Documents encoded together (length-sorted into batches) for ``batch_size``: ``base`` (ENCODE_WINDOW) rounded up
    to whole batches, and at least MIN_WINDOW_BATCHES batches so that sorting by length keeps padding low for large
    (GPU) batches."""
    batch_size = max(1, int(batch_size))
    base = ENCODE_WINDOW if base is None else int(base)
    return batch_size * max(-(-base // batch_size), MIN_WINDOW_BATCHES)


def window_lines(encoder, pending: list[tuple[str, str, str]], scale: float, batch_size: int,
                 positions: bool = False) -> list[tuple[str, str | None, int]]:
    """Per document of one window of (id, text, origin) documents, encoded together in one encoder call (the encoder
    sorts them by length into batches): (JSONL line, position line or None, postings)."""
    from lsr_lucene.progress import is_feeding

    texts = [text for _, text, _ in pending]
    if getattr(encoder, "quantises_on_device", False) and not positions:  # GPU: pooled, rounded, selected there
        vectors = encoder.encode_documents_quantised(texts, scale, batch_size=batch_size)
        tokens = None
        quantised_already = True
    else:
        quantised_already = False
        if not positions:
            per_batch = {"progress": True} if is_feeding() and _takes_progress(encoder) else {}  # a per-batch bar
            vectors, tokens = encoder.encode_documents(texts, batch_size=batch_size, **per_batch), None
        elif hasattr(encoder, "encode_with_token_weights"):
            vectors, tokens = encoder.encode_with_token_weights(texts, batch_size=batch_size)
        else:
            vectors = encoder.encode_documents(texts, batch_size=batch_size)
            tokens = encoder.token_weights(texts, batch_size=batch_size)
    out: list[tuple[str, str | None, int]] = []
    dumps = json.dumps
    for row, ((doc_id, text, origin), vector) in enumerate(zip(pending, vectors)):
        if quantised_already:
            if vector is None:
                raise InputError(f"{origin}: document {doc_id!r}: a weight is not a finite number")
            quantised = vector
        else:
            try:
                quantised = quantise(vector, scale, doc_id)
            except InputError as exc:
                raise InputError(f"{origin}: {exc}") from None
        line = dumps({"id": doc_id, "contents": text, "vector": quantised}, ensure_ascii=False) + "\n"
        pos_line = None
        if tokens is not None:
            pos_line = dumps({"id": doc_id, "tokens": [[t, round(w, 5)] for t, w in tokens[row]]},
                             ensure_ascii=False) + "\n"
        out.append((line, pos_line, len(quantised)))
    return out


def vector_lines(encoder, pending: list[tuple[str, str, str]], scale: float, batch_size: int,
                 positions: bool = False) -> tuple[list[str], list[str] | None, int, int]:
    """JsonVectorCollection lines of one window of documents encoded together (``window_lines``): (lines, position
    lines or None, postings, documents with an empty vector)."""
    rows = window_lines(encoder, pending, scale, batch_size, positions)
    pos_lines = cast(list[str], [r[1] for r in rows]) if positions else None  # positions: one line per row
    return [r[0] for r in rows], pos_lines, sum(r[2] for r in rows), sum(1 for r in rows if r[2] == 0)


def write_vectors(docs: Iterable[Any], encoder, out_dir: str | Path, scale: float = DEFAULT_SCALE,
                  shard_size: int = DEFAULT_SHARD_SIZE, overwrite: bool = False, batch_size: int = 16,
                  positions: str | Path | None = None, total: int | None = None, source: str | None = None,
                  window: int | None = None) -> dict:
    """Encode ``docs`` (corpus.Doc, dicts or (id, text) pairs) into JsonVectorCollection shards in ``out_dir``.

    Documents are encoded in windows of ``window`` (default ``encode_window(batch_size)``) consecutive non-empty
    documents of the input, counted from its start: a document's batch depends on the input order and batch size
    alone, never on shard or resume boundaries (a resumed run encodes again the part of the window that precedes
    its first new document), so the same input and options give the same vectors.
    Resumes an interrupted run with the same settings; duplicate ids and non-finite weights raise
    InputError naming the id and where it came from; empty documents are skipped and counted.
    ``positions`` also writes per-position token weights JSONL ``{"id", "tokens": [[tok, w], ...]}``.
    Returns the metadata written beside the directory (:func:`write_metadata`).
    """
    from lsr_lucene.progress import feeding, progress_bar

    from lsr_lucene.io.claims import claim_output, remove_path
    from lsr_lucene.io.output import refuse_existing

    final = Path(out_dir)
    refuse_existing(final, overwrite)
    if positions is not None:
        positions = Path(positions)
        refuse_existing(positions, overwrite)
    if shard_size < 1:
        raise InputError(f"shard size must be at least 1, got {shard_size}")
    window = int(window) if window else encode_window(batch_size)
    _adopt_resumed_dtype(final, encoder)
    # batch size and window fix the batches (and so the float results): a resumed run must use the same
    settings = {**encoder.settings(), "scale": scale, "shard_size": shard_size, "positions": positions is not None,
                "batch_size": batch_size, "encode_window": window}
    with claim_output(final):  # one writer per output: the .partial work directory is shared state
        partial = _Partial(final, settings)
        done_docs = sum(s["documents"] for s in partial.shards)
        done_consumed = sum(s["consumed"] for s in partial.shards)
        context_from = done_docs - done_docs % window  # the resumed window's documents already in complete shards
        # documents of the complete shards, read back lazily to check the input replays them unchanged
        done_iter = (row for s in partial.shards for row in read_vectors(partial.dir / s["file"], with_contents=True))
        seen: dict[str, int] = {}  # id -> 1-based input position (ints: corpora can have millions of ids)
        started = time.perf_counter()
        progress = progress_bar(total=total, desc=f"encoding {final.name}", unit=" docs")
        if done_consumed:
            progress.write(f"resuming {final}: {len(partial.shards)} complete shard(s), {done_docs} documents",
                           file=sys.stderr)
        with_positions = positions is not None
        pending: list[tuple[str, str, str]] = []  # the window being filled: (id, text, origin)
        context = 0  # documents at the head of ``pending`` already in complete shards (encoded, not written)
        shard: list[_OpenShard] = []  # the shard being written, once its first document is back
        rows_of: dict[int, list[int]] = {}  # shard number -> [input rows consumed, empty ones skipped]
        consumed = nonempty = 0
        # windows in flight: a GPU encoder tokenises, computes and formats several windows at once, so the device
        # never waits for the host: in worker processes (``encoder.window_pipeline()``, encode.pipeline; lines come
        # back as UTF-8 bytes) or, where it has none, each window in a worker thread; on CPU one window at a time
        # (its batches use the cores)
        engine = encoder.window_pipeline() if hasattr(encoder, "window_pipeline") and not with_positions else None
        depth = max(1, int(engine.depth if engine is not None else getattr(encoder, "pipeline_depth", 1)))
        pool = (ThreadPoolExecutor(max_workers=depth, thread_name_prefix="lsr-window")
                if depth > 1 and engine is None else None)
        switch = sys.getswitchinterval()
        if pool is not None or engine is not None:  # the thread launching GPU kernels must not wait 5 ms for the GIL
            sys.setswitchinterval(getattr(encoder, "switch_interval", None) or switch)
        in_flight: deque = deque()  # (future or rows, context, window size, documents the bar counted)

        def collect(entry) -> None:
            result, skip, size, fed = entry  # fed: documents the encoder's per-batch bar has counted already
            # (a bar over the whole input, whose count never passes it: tqdm drops a total it passes)
            rows = result if isinstance(result, list) else result.result()
            start = skip
            while start < len(rows):  # into the open shard, up to its size; a full shard is put in place
                if not shard:
                    shard.append(_OpenShard(partial.dir, len(partial.shards), with_positions))
                end = min(len(rows), start + shard_size - shard[0].documents)
                shard[0].add(rows[start:end])
                start = end
                if shard[0].documents == shard_size:
                    finish_shard()
            progress.update(max(0, size - fed))  # every document of the window once (context ones too)

        def encode_window_now() -> None:
            nonlocal context
            if context == len(pending):  # nothing new (none, or a resumed run whose shards were all complete)
                pending.clear()
                context = 0
                return
            window_docs = list(pending)
            if engine is not None:
                in_flight.append((engine.submit(window_docs, scale, batch_size), context, len(window_docs), 0))
            elif pool is not None:
                in_flight.append((pool.submit(window_lines, encoder, window_docs, scale, batch_size, with_positions),
                                  context, len(window_docs), 0))
            else:
                with feeding(progress) as fed:  # the encoder's per-batch bar moves this one
                    rows = window_lines(encoder, window_docs, scale, batch_size, with_positions)
                in_flight.append((rows, context, len(window_docs), fed[0]))
            pending.clear()
            context = 0
            while len(in_flight) >= depth:
                collect(in_flight.popleft())

        def finish_shard() -> None:
            consumed_rows, skipped = rows_of.pop(len(partial.shards), [0, 0])
            partial.add_shard(shard.pop(), {"consumed": consumed_rows, "skipped_empty": skipped})

        try:
            for index, doc in enumerate(docs):
                doc_id, text, origin = doc_fields(doc, index)
                if doc_id in seen:
                    raise InputError(f"{origin}: duplicate document id {doc_id!r} (first seen as document "
                                     f"#{seen[doc_id]} of the input)")
                consumed += 1
                seen[doc_id] = consumed
                empty = not text.strip()
                if consumed <= done_consumed:  # already in a complete shard: check the input is the same, skip
                    if not empty:
                        previous = next(done_iter, None)
                        if previous is None or previous[0] != doc_id or previous[2] != text:
                            raise ResumeMismatch(f"{origin}: input differs from the interrupted run in {partial.dir} "
                                                 f"(document {doc_id!r} is not as it was); delete it to start again")
                        if nonempty >= context_from:  # in the window the run resumes in: encoded with it again
                            pending.append((doc_id, text, origin))  # (counted once, when that window is back)
                            context += 1
                            nonempty += 1
                            continue
                        nonempty += 1
                    progress.update(1)
                    continue
                counts = rows_of.setdefault(nonempty // shard_size, [0, 0])
                counts[0] += 1
                if empty:
                    counts[1] += 1
                    progress.update(1)
                    continue
                pending.append((doc_id, text, origin))
                nonempty += 1
                if len(pending) >= window:
                    encode_window_now()
            if consumed < done_consumed:
                raise ResumeMismatch(f"{source or 'input'}: has {consumed} documents, fewer than the {done_consumed} "
                                     f"already encoded in {partial.dir}; delete it to start again")
            encode_window_now()
            while in_flight:
                collect(in_flight.popleft())
            if shard:
                finish_shard()
            for counts in rows_of.values():  # empty documents after the last shard's: counted in that shard
                if partial.shards:
                    partial.shards[-1]["consumed"] += counts[0]
                    partial.shards[-1]["skipped_empty"] += counts[1]
            if rows_of and partial.shards:
                partial.save()
        except KeyboardInterrupt:
            if not partial.shards:
                remove_path(partial.dir)
                raise Interrupted(f"nothing kept: no shard was complete (a shard is kept once its {shard_size:,} "
                                  "documents are encoded; a smaller --shard-size keeps more of a small encoding); the "
                                  "same command starts over") from None
            raise Interrupted(partial.kept()) from None
        except BaseException as exc:
            # bad input leaves nothing; other failures keep complete shards to resume (an input that differs from
            # the interrupted run's is not this input's fault: its shards stay, as the message says)
            if not partial.shards or (isinstance(exc, InputError) and not isinstance(exc, ResumeMismatch)):
                remove_path(partial.dir)
            raise
        finally:
            for unfinished in shard:  # an interrupted run's incomplete shard: encoded again on resuming
                unfinished.discard()
            if engine is not None:  # an interrupted run's windows: drop what has not started
                for entry in in_flight:
                    entry[0].cancel()
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
            sys.setswitchinterval(switch)
            progress.close()
        documents = sum(s["documents"] for s in partial.shards)
        if documents == 0:
            remove_path(partial.dir)
            raise InputError(f"{source or 'input'}: no non-empty documents to encode")
        precision = getattr(encoder, "precision", None)  # the resolved dtype is in settings; how it was chosen here
        metadata = {
            **settings,
            **(precision.metadata() if precision is not None else {}),
            "positions": str(positions) if positions is not None else None,
            "source": source,
            "documents": documents,
            "skipped_empty": sum(s["skipped_empty"] for s in partial.shards),
            "empty_vectors": sum(s["empty_vectors"] for s in partial.shards),
            "postings": sum(s["postings"] for s in partial.shards),
            "shards": len(partial.shards),
            "files": [s["file"] for s in partial.shards],
            "resumed_after_documents": done_docs,
            "seconds_this_run": round(time.perf_counter() - started, 2),
        }
        _finish(partial, metadata, positions, overwrite)
        return metadata


def encode_topics_file(topics: dict[str, str], encoder, output: str | Path, scale: float,
                       overwrite: bool = False, batch_size: int = 64) -> int:
    """Write query vectors JSONL ``{"id", "contents", "vector"}`` (signed integer weights); returns the count."""
    from lsr_lucene.io.output import atomic_output

    qids = list(topics)
    vectors = encoder.encode_queries([topics[q] for q in qids], batch_size=batch_size)
    with atomic_output(output, overwrite=overwrite) as tmp:
        with open(tmp, "w", encoding="utf-8") as handle:
            for qid, vector in zip(qids, vectors):
                quantised = quantise_query(vector, scale, qid)
                handle.write(json.dumps({"id": qid, "contents": topics[qid], "vector": quantised},
                                        ensure_ascii=False) + "\n")
    return len(qids)
