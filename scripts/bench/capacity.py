"""Capacity plan arithmetic (issue 52, item 4): measured points per collection size gathered into one table, growth
curves fitted to them, and the plan for a larger collection cut into shards.

Fits: ``power`` a·N^b by least squares on log value against log N (latencies, times, sizes), ``linear`` c + d·N
(the heap and the process's own memory: a fixed part plus a part per document, which a power law would bend). A
prediction beyond the largest measured N is an extrapolation and is flagged as one. The plan's model: a shard of
``s`` passages needs its index and sidecar on disk and in the page cache, its JVM's heap and own memory; a query's
latency with S shards is the per-shard latency at ``s`` (shards search side by side, one core each) plus the
driver's overhead (merging S lists of k hits, measured; round trips, given); a build of S shards on W workers
takes ceil(S / W) shard builds one after the other.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Fit:
    """A growth curve of one quantity over collection size N."""

    quantity: str
    model: str  # power: a·N^b; linear: a + b·N
    a: float
    b: float
    sizes: tuple[int, ...]  # the measured N it was fitted on
    r2: float  # on log values for power, on values for linear
    source: str

    def __call__(self, docs: float) -> float:
        return self.a * docs ** self.b if self.model == "power" else self.a + self.b * docs

    def extrapolates(self, docs: float) -> bool:
        return docs > max(self.sizes) or docs < min(self.sizes)


def fit(quantity: str, docs: Sequence[float], values: Sequence[float], model: str = "power",
        source: str = "") -> Fit:
    """Least-squares growth curve through (docs, value) points: power in log space, or linear."""
    x, y = np.asarray(docs, dtype=float), np.asarray(values, dtype=float)
    if len(np.unique(x)) < 2:
        raise ValueError(f"{quantity}: a fit needs two sizes or more, got {sorted(set(x))}")
    if model == "power":
        if (y <= 0).any():
            raise ValueError(f"{quantity}: a power law needs positive values")
        lx, ly = np.log(x), np.log(y)
        b, log_a = np.polyfit(lx, ly, 1)
        a, predicted, observed = math.exp(log_a), log_a + b * lx, ly
    elif model == "linear":
        b, a = np.polyfit(x, y, 1)
        predicted, observed = a + b * x, y
    else:
        raise ValueError(f"unknown model {model!r}")
    total = float(((observed - observed.mean()) ** 2).sum())
    r2 = 1.0 - float(((observed - predicted) ** 2).sum()) / total if total > 0 else 1.0
    return Fit(quantity, model, float(a), float(b), tuple(sorted(int(v) for v in set(x))), r2, source)


@dataclass(frozen=True)
class Node:
    """The machine a plan places shards on (an assumption of the plan, not a measurement)."""

    cores: int = 16
    memory_gib: float = 64.0
    usable: float = 0.85  # share of its memory given to shards (the rest: OS, driver)


def shard_plan(fits: dict[str, Fit], collection: int, shard_docs: int, node: Node,
               overhead_ms: dict[int, float], workers: Sequence[int]) -> dict:
    """The plan for ``collection`` passages in shards of at most ``shard_docs``: per shard sizes and memory, shards
    per node, nodes, latency per query at k=10 and 1000 (mean and p99 of a shard, plus the driver's overhead at
    that k, ``overhead_ms``), build time on each number of ``workers``; each figure with whether it extrapolates."""
    shards = math.ceil(collection / shard_docs)
    per_shard = collection / shards
    out: dict = {"collection": collection, "shards": shards, "shard_docs": round(per_shard)}
    extrapolated = set()

    def at(quantity: str, docs: float = per_shard) -> float:
        if fits[quantity].extrapolates(docs):
            extrapolated.add(quantity)
        return fits[quantity](docs)

    disk = at("index_bytes") + at("sidecar_bytes")
    heap = at("heap_bytes")
    own = max(at("rss_anon_bytes"), heap)
    memory = disk + own
    per_node = max(1, min(node.cores, int(node.memory_gib * 2**30 * node.usable // memory)))
    out.update({"disk_gib": disk / 2**30, "page_cache_gib": disk / 2**30, "heap_mib": heap / 2**20,
                "xmx": f"{max(1, math.ceil(2 * heap / 2**30))}g", "process_mib": own / 2**20,
                "memory_per_shard_gib": memory / 2**30, "shards_per_node": per_node,
                "nodes": math.ceil(shards / per_node), "collection_disk_gib": shards * disk / 2**30})
    for k in (10, 1000):
        for stat in ("mean", "p99"):
            out[f"exact_k{k}_{stat}_ms"] = at(f"exact_k{k}_{stat}_ms") + overhead_ms[k]
            out[f"approx_k{k}_{stat}_ms"] = at(f"approx_k{k}_{stat}_ms") + overhead_ms[k]
        out[f"overhead_k{k}_ms"] = overhead_ms[k]
    shard_build = at("build_bp_s")
    out["shard_build_s"] = shard_build
    out["shard_build_peak_rss_gib"] = at("build_peak_rss_bytes") / 2**30
    for w in workers:
        out[f"build_{w}_workers_s"] = math.ceil(shards / w) * shard_build
    out["one_index_build_s"] = fits["build_bp_s"](collection)  # to compare: one index of the whole collection
    out["one_index_extrapolated"] = fits["build_bp_s"].extrapolates(collection)
    out["extrapolated"] = ",".join(sorted(extrapolated))
    return out


def _packed_hits(shard: int, queries: int, k: int, rng: np.random.Generator) -> bytes:
    """Synthetic hits of one shard for a batch of ``queries`` in Java's ShardHits layout (int32 q; int32 count[q];
    float64 score[n]; int32 idLength[n]; the ids), what a shard searcher sends the driver."""
    scores = -np.sort(-(rng.random((queries, k)) * 100), axis=1).ravel()
    ids = [f"s{shard}-d{i}".encode() for i in range(k)] * queries
    return (np.array([queries] + [k] * queries, dtype="<i4").tobytes() + scores.astype("<f8").tobytes()
            + np.array([len(i) for i in ids], dtype="<i4").tobytes() + b"".join(ids))


def merge_overhead_ms(shards: int, k: int, repeats: int = 3, seed: int = 0, queries: int = 32) -> float:
    """Driver milliseconds per query to merge ``shards`` answers of ``k`` hits and write the merged top ``k`` as run
    lines: distributed search's own code (Java's ShardHits.RunMerger, fed one batch of ``queries`` packed as the
    shards send it), on synthetic hits; the best of ``repeats``."""
    import tempfile

    from lsr_lucene.jvm.classes import java_class

    rng = np.random.default_rng(seed)
    packs = [_packed_hits(shard, queries, k, rng) for shard in range(shards)]
    qids = [f"q{i}" for i in range(queries)]
    merger_class = java_class("search.ShardHits$RunMerger")
    best = math.inf
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(repeats):
            merger = merger_class(str(Path(folder) / f"run{repeat}"), "capacity")
            started = time.perf_counter()
            for pack in packs:
                merger.add(pack)
            counts = list(merger.write(qids, k))
            merger.close()
            best = min(best, time.perf_counter() - started)
            assert counts == [k] * queries
    return best * 1e3 / queries


def fits_table(fits: dict[str, Fit], at: Sequence[int]) -> pd.DataFrame:
    """One row per fit: its curve, the sizes it stands on, its value at each of ``at`` and whether that extrapolates."""
    rows = []
    for f in fits.values():
        row = {"quantity": f.quantity, "model": f.model, "a": f.a, "b": f.b, "r2": round(f.r2, 4),
               "sizes": " ".join(map(str, f.sizes)), "source": f.source}
        for n in at:
            row[f"at_{n}"] = f(n)
            row[f"extrapolated_{n}"] = f.extrapolates(n)
        rows.append(row)
    return pd.DataFrame(rows)
