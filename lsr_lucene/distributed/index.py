"""Distributed indexing: one Lucene impact index per vector shard, each built by an actor in its own JVM.

``index/shard-NNNNN/`` is ``lsr-lucene index`` of ``part-NNNNN.jsonl`` (index.impact.build_impact_index:
validated, written to a temporary directory and renamed when complete, so a rerun skips finished shards);
``index/shards.json`` (the manifest, written last) lists every shard's path, document and posting counts and
the collection's totals. Searching it needs every shard listed there (lsr_lucene.distributed.search).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Callable

from lsr_lucene.distributed.cluster import RESTARTS, node_id
from lsr_lucene.errors import InputError
from lsr_lucene.io.output import write_text_atomic
from lsr_lucene.io.vectors import read_metadata, vector_files

MANIFEST = "shards.json"
SHARD_DIR = "shard-{:05d}"


class IndexBuilder:
    """Ray actor: its own JVM (started on first use) that builds shard indexes one after another."""

    def build(self, vectors: str, index: str, threads: int) -> dict:
        from lsr_lucene.index.impact import build_impact_index, read_index_metadata

        started = time.perf_counter()
        if Path(index).is_dir():  # complete (renamed into place when done): built by an earlier run
            metadata, built = read_index_metadata(index), False
        else:
            metadata, built = build_impact_index(vectors, index, threads=threads), True
        return {"documents": metadata.get("documents"), "indexed": metadata.get("indexed"),
                "max_impact": metadata.get("max_impact"),
                "postings": metadata.get("postings"), "built": built, "node": node_id(),
                "seconds": round(time.perf_counter() - started, 3)}


def distributed_index(vectors: str | Path, index: str | Path, workers: int, threads: int = 1,
                      on_shard: Callable[[dict], None] | None = None) -> dict:
    """Build one impact index per shard of ``vectors`` under ``index`` with ``workers`` builder actors, then
    ``shards.json``; returns the manifest. Shards already built (an interrupted run) are kept."""
    import ray
    from ray.util import ActorPool
    from tqdm import tqdm

    from lsr_lucene.distributed.cluster import lsr_error_in

    files = [f for f in vector_files(vectors) if f.suffix == ".jsonl"]
    out = Path(index)
    if (out / MANIFEST).exists():
        raise InputError(f"{out / MANIFEST}: the distributed index already exists")
    out.mkdir(parents=True, exist_ok=True)
    builder = ray.remote(IndexBuilder).options(num_cpus=threads, max_restarts=RESTARTS, max_task_retries=RESTARTS)
    actors = [builder.remote() for _ in range(max(1, min(workers, len(files))))]
    jobs = [(str(f.resolve()), str((out / SHARD_DIR.format(i)).resolve())) for i, f in enumerate(files)]
    started = time.perf_counter()
    shards = []
    progress = tqdm(total=len(jobs), desc=f"indexing shards ({len(actors)} workers)", unit=" shards",
                    file=sys.stderr, dynamic_ncols=True)
    try:
        pool = ActorPool(actors)
        results = pool.map(lambda actor, job: actor.build.remote(job[0], job[1], threads), jobs)
        for (file, path), result in zip(jobs, results):
            shard = {"path": Path(path).name, "vectors": file, **result}
            shards.append(shard)
            progress.update(1)
            if on_shard is not None:
                on_shard(shard)
    except Exception as exc:
        error = lsr_error_in(exc)
        if error is not None:
            raise error from None
        raise
    finally:
        progress.close()
        for actor in actors:
            ray.kill(actor)
    manifest = {
        "kind": "distributed-impact", "shards": shards,
        "documents": sum(s["indexed"] or 0 for s in shards), "postings": sum(s["postings"] or 0 for s in shards),
        "vectors": str(Path(vectors).resolve()), "encoder": read_metadata(vectors),
        "seconds": round(time.perf_counter() - started, 2), "workers": len(actors),
    }
    write_text_atomic(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return manifest


def read_manifest(index: str | Path) -> dict:
    """``shards.json`` of a distributed index, every shard checked to exist (one InputError naming a missing one)."""
    path = Path(index) / MANIFEST
    if not path.is_file():
        raise InputError(f"{index}: no {MANIFEST} (not a distributed index, or its build did not finish)")
    manifest = json.loads(path.read_text())
    for shard in manifest["shards"]:
        shard_dir = Path(index) / shard["path"]
        if not shard_dir.is_dir():
            raise InputError(f"{index}: shard {shard['path']} listed in {MANIFEST} is missing ({shard_dir})")
    return manifest
