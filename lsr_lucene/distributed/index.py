"""Distributed indexing: one Lucene impact index per vector shard, built in a Ray worker's own JVM on the node that
wrote the shard (distributed encode records it), so a shard is read where it was written.

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

from lsr_lucene.dense.leg import DENSE_DIR  # a shard's dense leg, where one index keeps its own
from lsr_lucene.distributed.cluster import RESTARTS, node_id
from lsr_lucene.errors import InputError, OutputError
from lsr_lucene.index.kind import DISTRIBUTED, DISTRIBUTED_MANIFEST, index_record, require_index_kind
from lsr_lucene.io.output import write_text_atomic
from lsr_lucene.io.vectors import read_metadata, vector_files


MANIFEST = DISTRIBUTED_MANIFEST
SHARD_DIR = "shard-{:05d}"


def build_shard(vectors: str | list[str], index: str, threads: int, positions: str | None = None,
                dense_impacts: float | str = "auto", reorder: str | None = None, seed: int | None = None,
                dense: bool = False) -> dict:
    """Ray task: ``lsr-lucene index`` of one shard (a vector file, or consecutive files in order) in the worker's
    JVM (kept by the worker for its next shard); with ``positions``, the shard's positional field from its
    documents' lines of that file; ``dense_impacts``, ``reorder`` (BP order of the shard's docids) and ``seed`` as
    ``index``'s; ``dense``: also the shard's dense leg (``<shard>/dense``, as ``index --dense`` writes it, from the
    text its vectors keep), unless it has one."""
    from lsr_lucene.index.impact import build_impact_index, read_index_metadata

    started = time.perf_counter()
    if Path(index).is_dir():  # complete (renamed into place when done): built by an earlier run
        metadata, built = read_index_metadata(index), False
    else:
        metadata = build_impact_index(vectors, index, threads=threads, positions=positions,
                                      dense_impacts=dense_impacts, reorder=reorder, seed=seed)
        built = True
    leg = Path(index) / DENSE_DIR
    if dense and not (leg / "metadata.json").is_file():
        from lsr_lucene.dense.leg import encode_documents, leg_documents

        ids: list[str] = []
        texts: list[str] = []
        for file in [vectors] if isinstance(vectors, str) else vectors:
            more_ids, more_texts, _ = leg_documents(index, vectors=file)
            ids, texts = ids + more_ids, texts + more_texts
        encode_documents(ids, texts, str(vectors), leg, threads=threads)
    return {"dense": (leg / "metadata.json").is_file(),
            "documents": metadata.get("documents"), "indexed": metadata.get("indexed"),
            "max_impact": metadata.get("max_impact"),
            "postings": metadata.get("postings"), "built": built, "node": node_id(),
            "reorder": (metadata.get("reorder") or {}).get("method"),
            "dense_impacts_terms": (metadata.get("dense_impacts") or {}).get("terms", 0),
            "seconds": round(time.perf_counter() - started, 3)}


def shard_holders(vectors: str | Path, files: list[Path]) -> list[str | None]:
    """The node that wrote each shard file (``nodes`` in the metadata of distributed encode), else None."""
    metadata = read_metadata(vectors)
    written = dict(zip(metadata.get("files") or [], metadata.get("nodes") or []))
    return [written.get(f.name) for f in files]


def shard_groups(files: int, shards: int) -> list[list[int]]:
    """The file numbers of each shard: ``shards`` N > 0 groups of consecutive files, as even as whole files allow
    (at most one per file); 0: one shard per file."""
    if shards < 0:
        raise InputError(f"shards must be 0 (one per vector file) or positive, got {shards}")
    n = min(shards, files) if shards else files
    return [list(range(files * i // n, files * (i + 1) // n)) for i in range(n)]


def distributed_index(vectors: str | Path, index: str | Path, workers: int, threads: int = 1,
                      on_shard: Callable[[dict], None] | None = None, positions: str | Path | None = None,
                      retries: int = RESTARTS,
                      dense_impacts: float | str = "auto", reorder: str | None = None, seed: int | None = None,
                      shards: int = 0, dense: bool = False) -> dict:
    """Build one impact index per shard of ``vectors`` under ``index``, at most ``workers`` at a time, each on
    the node that wrote the shard while that node is alive; then ``shards.json``; returns the manifest.
    ``positions`` (per-position token weights of the whole collection, ``encode --positions``) adds each
    shard's positional field for window clauses: every shard reads the file and keeps its own documents.
    Every shard has the dense-impacts sidecar ``dense_impacts`` (a share, or ``auto`` as ``lsr-lucene index``; 0: none);
    ``reorder`` "bp" puts each shard's docids in BP order (seeded by ``seed``), as ``index --reorder bp`` does.
    ``shards`` N > 0: N shards, each of consecutive vector files (the collection's order kept; encode writes files
    of ``--shard-size`` documents); 0: one shard per file. ``dense``: every shard also gets its dense leg
    (``<shard>/dense``: all-MiniLM-L6-v2 embeddings and their HNSW graph, as ``index --dense`` writes it), which
    distributed search's negated queries read (lsr_lucene.distributed.compose).
    Shards already built (an interrupted run) are kept; a build whose worker dies is retried ``retries`` times
    (each build writes a temporary folder renamed when complete, so a killed one leaves no half-built shard; the
    next writer removes the dead one's temporaries), then the run stops with one error line: a rerun finishes it."""
    import ray
    from lsr_lucene.progress import progress_bar

    from lsr_lucene.distributed.cluster import lsr_error_in, near

    files = [f for f in vector_files(vectors) if f.suffix == ".jsonl"]
    if positions is not None and not Path(positions).is_file():
        raise InputError(f"{positions}: no such positions file")
    positions = str(Path(positions).resolve()) if positions is not None else None
    out = Path(index)
    if (out / MANIFEST).exists():
        raise InputError(f"{out / MANIFEST}: the distributed index already exists")
    out.mkdir(parents=True, exist_ok=True)
    build = ray.remote(num_cpus=threads, max_retries=retries)(build_shard)
    holders = shard_holders(vectors, files)
    groups = shard_groups(len(files), shards)
    jobs = [([str(files[j].resolve()) for j in group] if shards else str(files[group[0]].resolve()),
             str((out / SHARD_DIR.format(i)).resolve()), holders[group[0]])
            for i, group in enumerate(groups)]
    workers = max(1, min(workers, len(jobs)))
    started = time.perf_counter()
    results: dict[int, dict] = {}
    pending: dict = {}  # ref -> job number
    progress = progress_bar(total=len(jobs), desc=f"indexing shards ({workers} workers)", unit=" shards",
                    file=sys.stderr, dynamic_ncols=True)

    def collect_one() -> None:
        ready, _ = ray.wait(list(pending), num_returns=1)
        number = pending.pop(ready[0])
        file, path, holder = jobs[number]
        try:
            built = ray.get(ready[0])
        except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as exc:
            raise OutputError(f"{path}: the worker building this shard died {retries + 1} time(s) "
                              f"({type(exc).__name__}); the shards built so far are kept: rerun the same command "
                              "to build the rest") from None
        results[number] = {"path": Path(path).name, "vectors": file, "holder": holder, **built}
        progress.update(1)
        if on_shard is not None:
            on_shard(results[number])

    try:
        for number, (file, path, holder) in enumerate(jobs):
            if len(pending) == workers:
                collect_one()
            task = build.options(scheduling_strategy=near(holder))
            pending[task.remote(file, path, threads, positions, dense_impacts, reorder, seed, dense)] = number
        while pending:
            collect_one()
    except Exception as exc:
        error = lsr_error_in(exc)
        if error is not None:
            raise error from None
        raise
    finally:
        progress.close()
    records = [results[i] for i in range(len(jobs))]
    manifest = {
        **index_record(DISTRIBUTED), "shards": records,
        "documents": sum(s["indexed"] or 0 for s in records), "postings": sum(s["postings"] or 0 for s in records),
        "vectors": str(Path(vectors).resolve()), "encoder": read_metadata(vectors), "positions": positions,
        "seconds": round(time.perf_counter() - started, 2), "workers": workers, "reorder": reorder, "seed": seed,
        "files_per_shard": [len(group) for group in groups],
    }
    write_text_atomic(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return manifest


def read_manifest(index: str | Path) -> dict:
    """``shards.json`` of a distributed index, every shard checked to exist (one InputError naming a missing one)."""
    require_index_kind(index, DISTRIBUTED, "distributed search")
    path = Path(index) / MANIFEST
    if not path.is_file():
        raise InputError(f"{index}: no {MANIFEST} (not a distributed index, or its build did not finish)")
    manifest = json.loads(path.read_text())
    for shard in manifest["shards"]:
        shard_dir = Path(index) / shard["path"]
        if not shard_dir.is_dir():
            raise InputError(f"{index}: shard {shard['path']} listed in {MANIFEST} is missing ({shard_dir})")
    return manifest
