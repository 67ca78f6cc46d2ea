"""Encoded long-document segments on disk: vectors, per-position own-token weights and the optional SoftSDM
top-k store, written shard by shard so an interrupted encoding resumes (and a larger cap reuses a smaller one)."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Mapping

import numpy as np

if TYPE_CHECKING:
    from lsr_lucene.longdocs.softsdm import TopKStore

from lsr_lucene.errors import InputError, Interrupted
from lsr_lucene.io.claims import claim_output
from lsr_lucene.io.output import atomic_output, make_parent, open_jsonl, write_text_atomic
from lsr_lucene.io.vectors import write_metadata
from lsr_lucene.longdocs.segment import parse_segment_id, within_first

DEFAULT_SHARD = 500
STATE = "state.json"
# documents whose segments are encoded together, counted from the input's start; within them, a segment is batched
# only with the segments of the same number: the batches (and so the float results) of a segment then depend neither
# on the shards, nor on where an interrupted run resumes, nor on the segment cap (``limit``)
DOC_WINDOW = 64


def read_segments(path: str | Path) -> Iterator[tuple[str, str]]:
    """(segment id, text) of a segments JSONL, with a file:line error for a malformed line."""
    seen: set[str] = set()
    for line_no, obj in open_jsonl(path):
        seg_id, text = obj.get("id"), obj.get("text")
        if not isinstance(seg_id, str) or not isinstance(text, str):
            raise InputError(f"{path}:{line_no}: expected {{\"id\": str, \"text\": str}}")
        if seg_id in seen:
            raise InputError(f"{path}:{line_no}: duplicate segment id {seg_id!r}")
        seen.add(seg_id)
        yield seg_id, text


def _shards(items: Iterable, size: int) -> Iterator[list]:
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class _ReusedEncoding:
    """Lines and top-k entries of segments already encoded elsewhere with the same settings (raising a cap
    from 8 to 16 segments then encodes only segments 8..15)."""

    def __init__(self, directory: str | Path, settings: Mapping, top_k: int):
        old = check_encoded(directory)
        changed = [k for k in settings if k != "limit" and old.get(k) != settings[k]]
        if changed:
            raise InputError(f"{directory}: cannot reuse, encoded with other settings "
                             f"({', '.join(f'{k}={old.get(k)!r}' for k in changed)})")
        self.vectors = self._lines(Path(directory) / "vectors")
        self.tokens = self._lines(Path(directory) / "tokens")
        self.store: TopKStore | None = None
        if top_k and any((Path(directory) / "soft").glob("soft-*.npz")):
            from lsr_lucene.longdocs.softsdm import TopKStore

            self.store = TopKStore(Path(directory) / "soft")

    @staticmethod
    def _lines(folder: Path) -> dict[str, str]:
        return {json.loads(line)["id"]: line for part in sorted(folder.glob("part-*.jsonl"))
                for line in part.open(encoding="utf-8")}

    def __contains__(self, seg_id: str) -> bool:
        return seg_id in self.vectors and seg_id in self.tokens and (self.store is None or seg_id in self.store)

    def top(self, seg_id: str, top_k: int) -> tuple[np.ndarray, np.ndarray]:
        """The stored entries back as (term ids [L, k], weights [L, k]) as ``SparseEncoder.position_topk`` gives them."""
        assert self.store is not None  # __contains__ said so
        length, pos, term, weight = self.store.get(seg_id)
        ids = np.zeros((length, top_k), dtype=np.int32)
        weights = np.zeros((length, top_k), dtype=np.float16)
        slot = np.zeros(length, dtype=np.int64)
        for p, t, w in zip(pos.tolist(), term.tolist(), weight.tolist()):
            ids[p, slot[p]], weights[p, slot[p]] = t, w
            slot[p] += 1
        return ids, weights


def encode_segments_dir(segments: str | Path, output: str | Path, encoder, scale: float = 100, top_k: int = 0,
                        shard_size: int = DEFAULT_SHARD, batch_size: int = 16, limit: int | None = None,
                        reuse: str | Path | None = None) -> dict:
    """Encode a segments JSONL into ``output``/{vectors,tokens,soft}, shard by shard; rerunning resumes.

    ``vectors/`` is a JsonVectorCollection (×scale integer impacts), ``vectors.metadata.json`` beside it; ``tokens/``
    holds per-position own-token weights (``{"id", "tokens": [[tok, w], ...]}``); ``soft/`` the SoftSDM top-k store.
    ``limit`` encodes only the first ``limit`` segments of each document (segment number < limit).
    ``reuse`` names a complete encoded directory with the same settings (another limit) whose segments are
    copied instead of encoded again.
    """
    out = Path(output)
    total = sum(1 for s, _ in read_segments(segments) if within_first(s, limit))  # also checks every line
    if total == 0:
        raise InputError(f"{segments}: no segments (empty file?)")
    make_parent(out)
    with claim_output(out):  # one writer per encoded directory (it is the resumable state)
        try:
            return _encode_into(out, segments, encoder, scale, top_k, shard_size, batch_size, limit, reuse, total)
        except KeyboardInterrupt:
            kept = len(list((out / "vectors").glob("part-*.jsonl")))
            raise Interrupted(f"kept {kept} complete shard(s) in {out}: run the same command again to resume, "
                              "or delete it to start over") from None


def _document_windows(items: Iterable[tuple[str, str]], size: int) -> Iterator[list[tuple[str, str, int]]]:
    """The segments of ``size`` consecutive documents at a time: (segment id, text, input position)."""
    window: list[tuple[str, str, int]] = []
    documents, last = 0, None
    for position, (seg_id, text) in enumerate(items):
        doc = parse_segment_id(seg_id)[0]
        if doc != last:
            if documents == size:
                yield window
                window, documents = [], 0
            documents += 1
            last = doc
        window.append((seg_id, text, position))
    if window:
        yield window


def _write_shard(out: Path, number: int, chunk: list[str], results: dict, reused, scale: float, top_k: int) -> int:
    """Write shard ``number`` (vectors last: their file marks it complete); returns how many were encoded now."""
    from lsr_lucene.io.vectors import quantise
    from lsr_lucene.longdocs.softsdm import write_store

    token_lines: list[str] = []
    vector_lines: list[str] = []
    tops: list = []  # (term ids, weights) per segment; None when top_k is 0
    fresh = 0
    for s in chunk:
        if results[s] is None:
            token_lines.append(reused.tokens[s])
            vector_lines.append(reused.vectors[s])
            tops.append(reused.top(s, top_k) if top_k > 0 else None)
            continue
        fresh += 1
        vec, tokens, top = results[s]
        token_lines.append(json.dumps({"id": s, "tokens": [[t, round(w, 4)] for t, w in tokens]},
                                      ensure_ascii=False) + "\n")
        vector_lines.append(json.dumps({"id": s, "contents": "", "vector": quantise(vec, scale, s)},
                                       ensure_ascii=False) + "\n")
        tops.append(top)
    write_text_atomic(out / "tokens" / f"part-{number:05d}.jsonl", "".join(token_lines))
    if top_k > 0:
        write_store(out / "soft" / f"soft-{number:05d}.npz", chunk, tops)
    write_text_atomic(out / "vectors" / f"part-{number:05d}.jsonl", "".join(vector_lines))
    return fresh


def _encode_into(out: Path, segments: str | Path, encoder, scale: float, top_k: int, shard_size: int,
                 batch_size: int, limit: int | None, reuse: str | Path | None, total: int) -> dict:
    """The body of encode_segments_dir, run while its output is claimed."""
    from lsr_lucene.progress import progress_bar

    for sub in ("vectors", "tokens", "soft"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    state_file = out / STATE
    recorded = json.loads(state_file.read_text())["settings"] if state_file.exists() else \
        (check_encoded(reuse) if reuse else {})
    if hasattr(encoder, "adopt_dtype"):  # under dtype "auto", a resumed or reused encoding keeps its precision
        encoder.adopt_dtype(recorded.get("dtype"))
    settings = {**encoder.settings(), "scale": scale, "shard_size": shard_size,
                "segments": str(Path(segments).resolve()), "limit": limit,
                "batch_size": batch_size, "doc_window": DOC_WINDOW}  # these two fix the batches
    if state_file.exists():
        old = recorded
        changed = [k for k in settings if old.get(k) != settings[k]]
        if changed:
            raise InputError(f"{out}: encoded with other settings ({', '.join(f'{k}={old.get(k)!r}' for k in changed)}); "
                             "use the same settings to resume, or another --output")
    else:
        write_text_atomic(state_file, json.dumps({"settings": settings, "complete": False}, indent=2))
    reused = _ReusedEncoding(reuse, settings, top_k) if reuse else None
    items = ((s, t) for s, t in read_segments(segments) if within_first(s, limit))
    progress = progress_bar(total=total, desc="encoding segments", unit=" seg", file=sys.stderr, dynamic_ncols=True)
    started, encoded = time.perf_counter(), 0
    done = {n for n in range(-(-total // shard_size)) if (out / "vectors" / f"part-{n:05d}.jsonl").exists()}
    results: dict[str, tuple | None] = {}  # segment id -> fresh (vector, tokens, top), or None: reused
    pending: list[str] = []  # segment ids of the shard being filled
    for window in _document_windows(items, DOC_WINDOW):
        wanted = [s for s, _, p in window if p // shard_size not in done]
        missing = {parse_segment_id(s)[1] for s in wanted if reused is None or s not in reused}
        group = [(s, t) for s, t, _ in window if parse_segment_id(s)[1] in missing]  # whole groups, done or not
        if group:
            fresh = encoder.encode_segments([t for _, t in group], top_k=top_k, batch_size=batch_size,
                                            groups=[parse_segment_id(s)[1] for s, _ in group])
            results.update(zip((s for s, _ in group), fresh))
        for s, _, p in window:
            number = p // shard_size
            if number in done:
                progress.update(1)
                continue
            pending.append(s)
            if s not in results:
                results[s] = None
            if p == min((number + 1) * shard_size, total) - 1:  # the shard's last segment
                encoded += _write_shard(out, number, pending, results, reused, scale, top_k)
                progress.update(len(pending))
                pending = []
        results = {s: results[s] for s in pending}  # nothing else is needed any more
    progress.close()
    precision = getattr(encoder, "precision", None)
    meta = {**encoder.settings(), **(precision.metadata() if precision is not None else {}), "scale": scale,
            "segments": total, "limit": limit}
    write_metadata(out / "vectors", meta)  # beside the folder: Anserini reads every file in it
    write_text_atomic(state_file, json.dumps({"settings": settings, "complete": True, "segments": total}, indent=2))
    elapsed = time.perf_counter() - started
    return {"segments": total, "encoded_now": encoded, "seconds": round(elapsed, 1),
            "segments_per_second": round(encoded / elapsed, 2) if encoded and elapsed else None}


def encode_topk(segments: str | Path, encoded: str | Path, encoder, wanted: set[str] | None = None, top_k: int = 8,
                shard_size: int = DEFAULT_SHARD, batch_size: int = 16) -> dict:
    """Add the SoftSDM top-k store for the ``wanted`` segments (all encoded ones when None) to ``encoded``/soft,
    skipping segments already stored; resumable (one ``soft-extra-*.npz`` per finished chunk)."""
    from lsr_lucene.progress import progress_bar

    from lsr_lucene.longdocs.softsdm import TopKStore, write_store

    settings = check_encoded(encoded)
    if hasattr(encoder, "adopt_dtype"):  # under dtype "auto", added entries keep the encoding's precision
        encoder.adopt_dtype(settings.get("dtype"))
    dtype = getattr(encoder, "dtype", None)
    if dtype is not None and settings.get("dtype") is not None and dtype != settings["dtype"]:
        raise InputError(f"{encoded}: encoded with other settings (dtype={settings['dtype']!r}); add its top-k "
                         "entries in the same precision (--dtype), or encode again with --overwrite")
    soft = Path(encoded) / "soft"
    soft.mkdir(exist_ok=True)
    stored: set[str] = set()
    if any(soft.glob("soft-*.npz")):
        store = TopKStore(soft)
        stored = set(store._where)
        if store.top_k not in (0, top_k):
            raise InputError(f"{soft}: holds top-{store.top_k} entries, not top-{top_k}; use another directory")
    limit = settings.get("limit")
    todo = [(s, t) for s, t in read_segments(segments)
            if within_first(s, limit) and s not in stored and (wanted is None or s in wanted)]
    start = len(list(soft.glob("soft-extra-*.npz")))
    progress = progress_bar(total=len(todo), desc="SoftSDM top-k", unit=" seg", file=sys.stderr, dynamic_ncols=True)
    started = time.perf_counter()
    for number, chunk in enumerate(_shards(todo, shard_size), start):
        tops = encoder.position_topk([t for _, t in chunk], top_k, batch_size)
        write_store(soft / f"soft-extra-{number:05d}.npz", [s for s, _ in chunk], tops)
        progress.update(len(chunk))
    progress.close()
    return {"segments": len(todo), "already_stored": len(stored), "seconds": round(time.perf_counter() - started, 1)}


def check_encoded(encoded: str | Path) -> dict:
    """Settings of a complete encoded directory (InputError when missing or unfinished)."""
    state_file = Path(encoded) / STATE
    if not state_file.exists():
        raise InputError(f"{encoded}: not an encoded segments directory (no {STATE}); run longdocs encode")
    state = json.loads(state_file.read_text())
    if not state.get("complete"):
        raise InputError(f"{encoded}: encoding is unfinished; rerun longdocs encode to resume it")
    return state["settings"]


def write_positions_file(encoded: str | Path, output: str | Path) -> int:
    """All token shards as one positional token file for the index (the indexer keeps tokens without positive
    weight as gaps that never match, like the paper's exact-match mask); returns the number of segments."""
    count = 0
    with atomic_output(output, overwrite=True) as tmp, open(tmp, "w", encoding="utf-8") as out:
        for part in sorted((Path(encoded) / "tokens").glob("part-*.jsonl")):
            for line in part.open(encoding="utf-8"):
                out.write(line)
                count += 1
    return count


def read_tokens(encoded: str | Path, wanted: set[str] | None = None) -> dict[str, list[tuple[str, float]]]:
    """Per-position own-token weights of the encoded segments (only ``wanted`` ids when given)."""
    out = {}
    for part in sorted((Path(encoded) / "tokens").glob("part-*.jsonl")):
        for line in part.open(encoding="utf-8"):
            obj = json.loads(line)
            if wanted is None or obj["id"] in wanted:
                out[obj["id"]] = [(t, float(w)) for t, w in obj["tokens"]]
    return out


def read_segment_vectors(encoded: str | Path) -> Iterator[tuple[str, dict[str, int]]]:
    """(segment id, integer impact vector) of every encoded segment, in corpus order."""
    from lsr_lucene.io.vectors import read_vectors

    yield from read_vectors(Path(encoded) / "vectors")
