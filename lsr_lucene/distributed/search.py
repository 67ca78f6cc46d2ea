"""Distributed search: scatter a query batch to one searcher actor per shard, gather each shard's top k, merge.

Each :class:`ShardSearcher` actor keeps its shard's index open in its own JVM (``SpecSearcher`` over our
``BatchSearcher``: plain, signed, CPT-pair and window specs) and returns every hit with its exact score.
The driver merges the shards' lists by score (descending), ties by docid (ascending), as Anserini and our
one-index search order them, and writes the run with the scores as the one-index run prints them.

Why the merged run equals the one-index run: impact scores are sums of query weight × stored impact and
use no collection statistics, so a document scores the same in its shard as in the whole collection, and
the global top k is contained in the union of the shards' top k. Our signed queries are scored by Lucene
as shift + signed score, with shift computed from the index searched (max impact of the negative terms),
and the reported score has the shift taken off again; it is the true signed score exactly when shift +
score is exact in float32, which holds for integer query weights (what our quantisers write for plain,
signed and composed queries) while |score| + shift < 2^24. CPT pairs (w·sqrt(a·b)) are irrational: the
shards agree with one index when the pair weights are positive (no shift), and may differ in the last
float32 bit with negative pair weights. Window clauses with ``rerank`` (rescoring the first stage's top N)
are refused: the union of per-shard top N is not the collection's top N.
"""
from __future__ import annotations

import heapq
import itertools
import json
import sys
from pathlib import Path
from typing import Callable, Sequence

from lsr_lucene.distributed.cluster import RESTARTS, near, node_id
from lsr_lucene.errors import InputError

QUERY_BATCH = 32  # queries per call to each shard actor
IN_FLIGHT = 4  # query batches outstanding at a time (per replica)


class ShardSearcher:
    """Ray actor: one shard's index open in this process's JVM; searches batches of specs for their top k."""

    def __init__(self, index: str):
        from lsr_lucene.search.spec_searcher import SpecSearcher

        self.searcher = SpecSearcher(index)

    def search(self, specs: list[str], k: int) -> list[list[tuple[str, str, float]]]:
        """Per spec (JSON text): [(docid, score as printed, exact score)], best first."""
        return [self.searcher.search_exact(json.loads(spec), k) for spec in specs]

    def num_docs(self) -> int:
        return self.searcher.num_docs

    def node(self) -> str:
        """The Ray node this searcher runs on."""
        return node_id()


def merge_hits(lists: Sequence[Sequence[tuple[str, str, float]]], k: int) -> list[tuple[str, str, float]]:
    """The best ``k`` of several best-first hit lists: exact score descending, then docid ascending."""
    merged = heapq.merge(*lists, key=lambda hit: (-hit[2], hit[0]))
    return list(itertools.islice(merged, k))


def check_specs(specs: Sequence[dict]) -> None:
    """Refuse what a scatter-gather cannot reproduce exactly: window clauses rescoring only a first-stage top N."""
    for spec in specs:
        if spec.get("rerank") and spec.get("windows"):
            raise InputError(f"query {spec['qid']}: window clauses with rerank {spec['rerank']} rescore each shard's "
                             f"top {spec['rerank']}, not the collection's; drop rerank to add the windows to the "
                             f"whole search")


class DistributedSearcher:
    """Searcher actors over every shard of a distributed index (``replicas`` per shard), open until ``close``."""

    def __init__(self, index: str | Path, replicas: int = 1):
        import ray

        from lsr_lucene.distributed.index import read_manifest

        if replicas < 1:
            raise InputError(f"replicas must be at least 1, got {replicas}")
        manifest = read_manifest(index)
        self.shards = [str((Path(index) / s["path"]).resolve()) for s in manifest["shards"]]
        self.replicas = replicas
        # no CPU reserved: a searcher waits for queries most of the time, and reserving CPUs would leave a second
        # searcher (another run, a restarted actor) waiting for them forever. A shard's first searcher runs on the
        # node that built its index (while alive); further replicas, and shards of unknown node, are SPREAD
        actor_class = ray.remote(num_cpus=0, max_restarts=RESTARTS, max_task_retries=RESTARTS)(ShardSearcher)
        self.actors = [[actor_class.options(scheduling_strategy=near(shard.get("node"), "SPREAD") if r == 0
                                            else "SPREAD").remote(path) for r in range(replicas)]
                       for shard, path in zip(manifest["shards"], self.shards)]
        try:
            self.num_docs = sum(_ray_get([row[0].num_docs.remote() for row in self.actors]))  # indexes open or fail
            _ray_get([actor.num_docs.remote() for row in self.actors for actor in row[1:]])
        except BaseException:
            self.close()
            raise

    def search(self, specs: Sequence[dict], hits: int = 1000, batch_size: int = QUERY_BATCH,
               on_batch: Callable[[int, list], None] | None = None) -> list[list[tuple[str, str, float]]]:
        """Merged top ``hits`` of every spec, in input order: [(docid, score as printed, exact score)].

        Batches of ``batch_size`` specs go to every shard (replicas take turns); ``on_batch(done, actors)`` is
        called as each batch completes (``actors[shard][replica]``).
        """
        import ray
        from tqdm import tqdm

        if hits <= 0:
            raise InputError(f"hits must be positive, got {hits}")
        check_specs(specs)
        batches = [list(range(i, min(i + batch_size, len(specs)))) for i in range(0, len(specs), batch_size)]
        texts = [[json.dumps(specs[i], allow_nan=False) for i in batch] for batch in batches]
        results: list[list] = [[] for _ in specs]
        progress = tqdm(total=len(specs), desc=f"searching {len(self.shards)} shards", unit=" queries",
                        file=sys.stderr, dynamic_ncols=True)
        pending: dict = {}  # shard result ref -> batch number
        batch_refs: dict[int, list] = {}
        next_batch = done = 0
        try:
            while next_batch < len(batches) or pending:
                while next_batch < len(batches) and len(batch_refs) < IN_FLIGHT * self.replicas:
                    replica = next_batch % self.replicas
                    batch_refs[next_batch] = [row[replica].search.remote(texts[next_batch], hits)
                                              for row in self.actors]
                    pending.update(dict.fromkeys(batch_refs[next_batch], next_batch))
                    next_batch += 1
                ready, _ = ray.wait(list(pending), num_returns=1)
                number = pending.pop(ready[0])
                if any(ref in pending for ref in batch_refs[number]):
                    continue  # other shards of this batch still searching
                per_shard = _ray_get(batch_refs.pop(number))
                for row, spec_index in enumerate(batches[number]):
                    results[spec_index] = merge_hits([shard[row] for shard in per_shard], hits)
                done += 1
                progress.update(len(batches[number]))
                if on_batch is not None:
                    on_batch(done, self.actors)
        finally:
            progress.close()
        return results

    def search_to_run(self, specs: Sequence[dict], output: str | Path, hits: int = 1000, tag: str = "lsr_lucene",
                      overwrite: bool = False, batch_size: int = QUERY_BATCH,
                      on_batch: Callable[[int, list], None] | None = None) -> dict:
        """Search ``specs`` and write the merged TREC run (temporary file renamed when complete); returns counts:
        queries, answered, unanswered qids, shards, replicas, seconds and queries/s of the search itself."""
        import time

        from lsr_lucene.io.output import atomic_output, refuse_existing

        refuse_existing(output, overwrite)
        searchable = [s for s in specs if s.get("terms") or s.get("pairs") or s.get("windows")]
        started = time.perf_counter()
        ranked_lists = self.search(searchable, hits, batch_size, on_batch)
        seconds = time.perf_counter() - started
        with atomic_output(output, overwrite=overwrite) as tmp:
            with open(tmp, "w", encoding="utf-8") as out:
                for spec, ranked in zip(searchable, ranked_lists):
                    out.writelines(f"{spec['qid']} Q0 {docid} {rank} {shown} {tag}\n"
                                   for rank, (docid, shown, _) in enumerate(ranked, 1))
        answered = {spec["qid"] for spec, ranked in zip(searchable, ranked_lists) if ranked}
        return {"queries": len(specs), "answered": len(answered), "shards": len(self.shards),
                "replicas": self.replicas, "seconds": round(seconds, 3),
                "qps": round(len(searchable) / seconds, 2) if seconds else None,
                "unanswered": [spec["qid"] for spec in specs if spec["qid"] not in answered]}

    def close(self) -> None:
        import ray

        if ray.is_initialized():  # (a cluster already shut down took its actors with it)
            for row in getattr(self, "actors", []):
                for actor in row:
                    ray.kill(actor)
        self.actors = []

    def __enter__(self) -> "DistributedSearcher":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _ray_get(refs: list):
    """ray.get, with a user error (InputError, ...) raised by an actor re-raised as itself."""
    import ray

    from lsr_lucene.distributed.cluster import lsr_error_in

    try:
        return ray.get(refs)
    except Exception as exc:
        error = lsr_error_in(exc)
        if error is not None:
            raise error from None
        raise


def distributed_search(index: str | Path, specs: Sequence[dict], output: str | Path, hits: int = 1000,
                       replicas: int = 1, tag: str = "lsr_lucene", overwrite: bool = False,
                       batch_size: int = QUERY_BATCH, on_batch: Callable[[int, list], None] | None = None) -> dict:
    """Search ``specs`` over every shard of a distributed index and write the merged TREC run (see
    ``DistributedSearcher.search_to_run``); the searcher actors live for this call only."""
    from lsr_lucene.io.output import refuse_existing

    refuse_existing(output, overwrite)
    check_specs(specs)
    with DistributedSearcher(index, replicas) as searcher:
        return searcher.search_to_run(specs, output, hits, tag, overwrite, batch_size, on_batch)
