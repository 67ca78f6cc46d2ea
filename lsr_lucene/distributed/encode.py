"""Distributed document encoding: Ray Data ``map_batches`` over shards, a pool of encoder actors each holding the model.

The driver reads the corpus and cuts it into the shards ``lsr-lucene encode`` writes (``shard_size`` non-empty
documents each, empty documents counted in the shard they fall in); each shard is one Ray Data row, encoded
by a :class:`ShardEncoder` actor through the same code as one machine (``io.vectors.window_lines`` over the
windows of ``io.vectors.encode_window`` documents counted from the input's start: a shard's row carries the
neighbouring documents of the windows it shares with other shards, so every document is batched and padded with
the same neighbours) and written by the actor as ``part-NNNNN.jsonl`` (temporary name, renamed when complete). The
shards are therefore the same bytes as ``lsr-lucene encode``'s with the same settings, on any number of workers.

Work happens in a hidden ``.<name>.partial-distributed/`` beside the output: a rerun after a crash skips the
shards already written (same documents, checked by a digest) and the finished directory is renamed into place.
Output paths must be on a file system every node sees at the same path (or a one-node cluster).

Fault tolerance: Ray Data's actor pool restarts an encoder actor that dies and retries the row it held
(its defaults ``max_restarts=-1``, ``max_task_retries=-1``); a shard is complete only once renamed, so a
retried shard is simply written again.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from lsr_lucene.distributed.cluster import lsr_error_in, node_id
from lsr_lucene.errors import InputError, Interrupted
from lsr_lucene.io.output import write_text_atomic
from lsr_lucene.io.vectors import (ENCODE_WINDOW, SHARD_PATTERN, ResumeMismatch, doc_fields, encode_window,
                                   window_lines, write_metadata)

STATE = "distributed.state"  # progress record in the partial directory (not *.json: the indexer reads those)
WAVE_DOCUMENTS = 200_000  # documents handed to Ray Data at a time, so the driver never holds a whole corpus


@dataclass
class ShardPlan:
    """One output shard: its number, its non-empty (id, text, origin) documents and the input rows it covers."""

    number: int
    docs: list[tuple[str, str, str]] = field(default_factory=list)
    consumed: int = 0
    skipped_empty: int = 0

    def digest(self) -> str:
        """Fingerprint of the shard's ids and texts: a resumed run must replay the same documents."""
        sha = hashlib.sha1()
        for doc_id, text, _ in self.docs:
            sha.update(doc_id.encode("utf-8", "surrogatepass") + b"\0" + text.encode("utf-8", "surrogatepass") + b"\0")
        return sha.hexdigest()


def plan_shards(docs: Iterable[Any], shard_size: int) -> Iterator[ShardPlan]:
    """The shards ``io.vectors.write_vectors`` cuts from ``docs``: ``shard_size`` non-empty documents each, empty
    documents counted where they fall (trailing ones in the last shard); duplicate ids raise InputError."""
    if shard_size < 1:
        raise InputError(f"shard size must be at least 1, got {shard_size}")
    seen: dict[str, int] = {}
    current = ShardPlan(0)
    full: ShardPlan | None = None  # a complete shard held back until we know where the next empties belong
    for index, doc in enumerate(docs):
        doc_id, text, origin = doc_fields(doc, index)
        if doc_id in seen:
            raise InputError(f"{origin}: duplicate document id {doc_id!r} (first seen as document "
                             f"#{seen[doc_id]} of the input)")
        seen[doc_id] = index + 1
        current.consumed += 1
        if not text.strip():
            current.skipped_empty += 1
            continue
        if full is not None:
            yield full
            full = None
        current.docs.append((doc_id, text, origin))
        if len(current.docs) >= shard_size:
            full, current = current, ShardPlan(current.number + 1)
    if full is not None:
        full.consumed += current.consumed
        full.skipped_empty += current.skipped_empty
        yield full
    elif current.docs:
        yield current


def windows(docs: list, size: int = ENCODE_WINDOW) -> Iterator[list]:
    """Consecutive groups of ``size`` documents from the start of ``docs`` (the windows one machine encodes together,
    when ``docs`` starts at a window boundary of the input)."""
    for start in range(0, len(docs), size):
        yield docs[start:start + size]


def with_context(plans: Iterable[ShardPlan], window: int) -> Iterator[tuple[ShardPlan, list, list]]:
    """Each shard with the documents before and after it that share its first and last windows (windows of
    ``window`` non-empty documents counted from the input's start): (plan, before, after)."""
    kept: list = []  # documents from input position ``base`` on
    base = seen = 0
    waiting: list[tuple[ShardPlan, int]] = []  # shards (and their first position) whose last window is incomplete

    def ready(final: bool) -> Iterator[tuple[ShardPlan, list, list]]:
        while waiting:
            plan, start = waiting[0]
            end = start + len(plan.docs)
            stop = min(-(-end // window) * window, seen)
            if stop < -(-end // window) * window and not final:
                return
            waiting.pop(0)
            yield plan, kept[start - start % window - base:start - base], kept[end - base:stop - base]

    for plan in plans:
        waiting.append((plan, seen))
        kept.extend(plan.docs)
        seen += len(plan.docs)
        yield from ready(False)
        first = waiting[0][1] if waiting else seen
        first -= first % window
        del kept[:first - base]
        base = first
    yield from ready(True)


class ShardEncoder:
    """Ray Data callable class: holds a SparseEncoder and turns shard rows into ``part-NNNNN.jsonl`` files."""

    def __init__(self, out_dir: str, encoder_options: dict, scale: float, batch_size: int, window: int):
        from lsr_lucene.encode.encoder import SparseEncoder

        self.out_dir = Path(out_dir)
        self.encoder = SparseEncoder(**encoder_options)
        self.scale, self.batch_size, self.window = scale, batch_size, window
        precision = getattr(self.encoder, "precision", None)
        self.settings = json.dumps({**self.encoder.settings(), **(precision.metadata() if precision else {})},
                                   sort_keys=True)

    def __call__(self, batch: dict) -> dict:
        out: dict[str, list] = {key: [] for key in ("shard", "documents", "postings", "empty_vectors", "settings",
                                                    "seconds", "pid", "node")}
        for number, payload in zip(batch["shard"], batch["payload"]):
            started = time.perf_counter()
            data = json.loads(payload)
            docs = list(zip(data["ids"], data["texts"], data["origins"]))
            rows: list = []
            for group in windows(docs, self.window):  # docs start at a window boundary of the input
                rows.extend(window_lines(self.encoder, group, self.scale, self.batch_size))
            rows = rows[data["skip"]:data["skip"] + data["keep"]]  # the shard's own documents
            lines = [r[0] for r in rows]
            postings = sum(r[2] for r in rows)
            empties = sum(1 for r in rows if r[2] == 0)
            write_text_atomic(self.out_dir / SHARD_PATTERN.format(int(number)), "".join(lines))
            for key, value in (("shard", int(number)), ("documents", len(lines)), ("postings", postings),
                               ("empty_vectors", empties), ("settings", self.settings),
                               ("seconds", time.perf_counter() - started), ("pid", os.getpid()),
                               ("node", node_id())):
                out[key].append(value)
        return out


class _State:
    """The partial directory of a distributed encode and its progress record (shard number -> result)."""

    def __init__(self, final: Path, requested: dict):
        self.dir = final.parent / f".{final.name}.partial-distributed"
        self.path = self.dir / STATE
        self.shards: dict[str, dict] = {}
        if self.path.is_file():
            state = json.loads(self.path.read_text())
            for key, value in requested.items():
                if state["requested"].get(key) != value:
                    raise InputError(f"{self.dir}: an interrupted run used {key}={state['requested'].get(key)!r}, "
                                     f"this run {value!r}; use the same settings to resume, or delete it")
            self.shards = {k: v for k, v in state["shards"].items() if (self.dir / v["file"]).is_file()}
        else:
            if self.dir.exists():
                shutil.rmtree(self.dir)
            self.dir.mkdir(parents=True)
        self.requested = requested
        self.save()

    def save(self) -> None:
        write_text_atomic(self.path, json.dumps({"requested": self.requested, "shards": self.shards}))


def _requested_settings(model: str, encoder_options: dict, scale: float, shard_size: int) -> dict:
    """What a resumed run must share with the interrupted one (the actors resolve auto settings themselves)."""
    from lsr_lucene.encode.models import REGISTRY

    if model not in REGISTRY and Path(model).is_dir():
        model = str(Path(model).resolve())
    keys = ("max_length", "activation", "pooling", "epsilon", "dtype")
    return {"model": model, **{k: encoder_options.get(k) for k in keys}, "scale": scale, "shard_size": shard_size}


def _payload(plan: ShardPlan, before: list, after: list) -> bytes:
    """A shard's row: its documents with the neighbours of its first and last windows (``skip``, ``keep``)."""
    docs = before + plan.docs + after
    return json.dumps({"ids": [d[0] for d in docs], "texts": [d[1] for d in docs], "origins": [d[2] for d in docs],
                       "skip": len(before), "keep": len(plan.docs)}).encode("utf-8")


def _encode_wave(wave: list[tuple[ShardPlan, list, list]], state: _State, actor_args: dict, resources: dict,
                 progress, on_shard: Callable[[dict], None] | None) -> None:
    """Encode one group of shards with Ray Data (one row per shard, ``num_workers`` encoder actors)."""
    import ray.data

    from lsr_lucene.distributed.cluster import quiet_ray_data

    quiet_ray_data()

    rows = [{"shard": p.number, "payload": _payload(p, before, after)} for p, before, after in wave]
    plans = [p for p, _, _ in wave]
    by_number = {p.number: p for p in plans}
    dataset = ray.data.from_items(rows, override_num_blocks=len(rows))
    encoded = dataset.map_batches(  # Ray Data restarts dead pool actors and retries their rows
        ShardEncoder, fn_constructor_kwargs=actor_args, batch_size=1, batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=max(1, min(resources["workers"], len(rows)))),
        num_cpus=resources["cpus"], num_gpus=resources["gpus"] or None)
    try:
        for row in encoded.iter_rows():
            plan = by_number[int(row["shard"])]
            record = {"file": SHARD_PATTERN.format(plan.number), "documents": int(row["documents"]),
                      "consumed": plan.consumed, "skipped_empty": plan.skipped_empty,
                      "empty_vectors": int(row["empty_vectors"]), "postings": int(row["postings"]),
                      "digest": plan.digest(), "settings": json.loads(row["settings"]), "node": str(row["node"]),
                      "seconds": round(float(row["seconds"]), 3)}
            state.shards[str(plan.number)] = record
            state.save()
            progress.update(plan.consumed)
            if on_shard is not None:
                on_shard({**record, "shard": plan.number, "pid": int(row["pid"])})
    except Exception as exc:
        error = lsr_error_in(exc)
        if error is not None:
            raise error from None
        raise


def _check_settings(state: _State) -> dict:
    """Every shard's encoder settings, which must agree (e.g. no mix of fp32 and bf16 workers)."""
    first_number, first = None, None
    for number, record in sorted(state.shards.items(), key=lambda kv: int(kv[0])):
        settings = {k: v for k, v in record["settings"].items() if k not in ("cpu_capability", "precision_reason")}
        if first is None:
            first_number, first = number, settings
        elif settings != first:
            differ = sorted(k for k in set(first) | set(settings) if first.get(k) != settings.get(k))
            raise InputError(f"shards {first_number} and {number} were encoded with different settings "
                             f"({', '.join(differ)}): workers resolved them differently; pass them explicitly "
                             f"(e.g. --dtype fp32)")
    return dict(state.shards[first_number]["settings"]) if first_number is not None else {}


def distributed_encode(corpus: str, output: str | Path, resources: dict, encoder_options: dict,
                       scale: float, shard_size: int, batch_size: int, overwrite: bool = False,
                       window: int | None = None, wave_documents: int = WAVE_DOCUMENTS,
                       on_shard: Callable[[dict], None] | None = None) -> dict:
    """Encode ``corpus`` into JsonVectorCollection shards at ``output`` on the connected Ray cluster.

    ``resources``: {"workers": encoder actors, "cpus": CPUs per actor, "gpus": GPUs per actor}. ``on_shard``
    is called with each finished shard's record (its ``pid`` says which actor wrote it). Returns the metadata.
    """
    from lsr_lucene.progress import progress_bar

    from lsr_lucene.io.claims import claim_output
    from lsr_lucene.io.corpus import count_docs, read_corpus
    from lsr_lucene.io.output import install, refuse_existing

    final = Path(output)
    refuse_existing(final, overwrite)
    window = int(window) if window else encode_window(batch_size)
    model = encoder_options.get("model", "splade-tiny")
    requested = _requested_settings(model, encoder_options, scale, shard_size)
    started = time.perf_counter()
    with claim_output(final):
        state = _State(final, requested)
        done_before = sum(r["documents"] for r in state.shards.values())
        actor_args = {"out_dir": str(state.dir), "encoder_options": encoder_options, "scale": scale,
                      "batch_size": batch_size, "window": window}
        progress = progress_bar(total=count_docs(corpus),
                                desc=f"encoding {final.name} ({resources['workers']} workers)",
                                unit=" docs", file=sys.stderr, dynamic_ncols=True)
        if state.shards:
            progress.write(f"resuming {final}: {len(state.shards)} complete shard(s), {done_before} documents",
                           file=sys.stderr)
        numbers: list[int] = []
        wave: list[tuple[ShardPlan, list, list]] = []
        try:
            for plan, before, after in with_context(plan_shards(read_corpus(corpus), shard_size), window):
                numbers.append(plan.number)
                record = state.shards.get(str(plan.number))
                if record is not None:
                    if record["digest"] != plan.digest():
                        raise ResumeMismatch(f"{corpus}: input differs from the interrupted run in {state.dir} "
                                             f"(shard {plan.number} has other documents); delete it to start again")
                    progress.update(plan.consumed)
                    continue
                wave.append((plan, before, after))
                if sum(len(p.docs) for p, _, _ in wave) >= wave_documents:
                    _encode_wave(wave, state, actor_args, resources, progress, on_shard)
                    wave = []
            if wave:
                _encode_wave(wave, state, actor_args, resources, progress, on_shard)
        except KeyboardInterrupt:
            if not state.shards:  # nothing finished: no run to resume, so leave nothing behind
                shutil.rmtree(state.dir, ignore_errors=True)
                raise
            kept = sum(r["documents"] for r in state.shards.values())
            raise Interrupted(f"kept {len(state.shards)} complete shard(s) ({kept} documents) in {state.dir}: run "
                              "the same command again to resume, or delete it to start over") from None
        except BaseException as exc:
            # bad input leaves nothing; other failures (and input that differs from an interrupted run's) keep them
            if not state.shards or (isinstance(exc, InputError) and not isinstance(exc, ResumeMismatch)):
                shutil.rmtree(state.dir, ignore_errors=True)
            raise
        finally:
            progress.close()
        if not numbers:
            raise InputError(f"{corpus}: no non-empty documents to encode")
        extra = sorted(set(state.shards) - {str(n) for n in numbers}, key=int)
        if extra:
            raise InputError(f"{corpus}: has fewer shards than the interrupted run in {state.dir} (shard {extra[0]} "
                             f"is beyond its end); delete it to start again")
        settings = _check_settings(state)
        records = [state.shards[str(n)] for n in numbers]
        metadata = {
            **settings, "scale": scale, "shard_size": shard_size, "positions": None, "batch_size": batch_size,
            "encode_window": window, "source": str(corpus),
            "documents": sum(r["documents"] for r in records),
            "skipped_empty": sum(r["skipped_empty"] for r in records),
            "empty_vectors": sum(r["empty_vectors"] for r in records),
            "postings": sum(r["postings"] for r in records),
            "shards": len(records), "files": [r["file"] for r in records],
            "nodes": [r["node"] for r in records],
            "resumed_after_documents": done_before,
            "seconds_this_run": round(time.perf_counter() - started, 2),
            "distributed": {"workers": resources["workers"], "cpus_per_worker": resources["cpus"],
                            "gpus_per_worker": resources["gpus"]},
        }
        state.path.unlink()
        install(state.dir, final, overwrite)
        write_metadata(final, metadata)  # beside the folder (io.vectors.metadata_path), once it is complete
    return metadata
