"""Distributed search: scatter a query batch to one searcher actor per node, gather each shard's top k, merge.

Each :class:`ShardSearcher` actor keeps the shards its node built open in one JVM (``SpecSearcher`` over our
``BatchSearcher``: plain, signed, CPT-pair and window specs; one JVM start and warm-up per node, not per shard),
searches a batch of specs on them in one call and returns each shard's hits with their exact scores, packed in one
bytes object per shard. Exact search carries each spec's queue from shard to shard, as one index carries it from
segment to segment (BatchSearcher.searchShards): a later shard starts with the k best scores of those searched
before, skips what cannot enter the collection's top k and returns only its hits of at least their k-th (ties
included), so the node does about one index's work, not one top k from scratch per shard. The driver merges the
shards' lists by score (descending), ties by docid (ascending), as Anserini and our one-index search order them,
and writes the run with the scores as the one-index run prints them (in Java, batch by batch: no hit becomes a
Python object).

Why the merged run equals the one-index run: impact scores are sums of query weight × stored impact and
use no collection statistics, so a document scores the same in its shard as in the whole collection, and
the global top k is contained in the union of the shards' top k. Two parts of our scoring do depend on the
index searched, and the shards are given the collection's view of them:

- Signed queries (and negative CPT pair weights) are scored by Lucene as shift + signed score, with shift =
  Σ |w| · max impact of each subtracted term. Each shard is told the collection's max impacts of those terms
  (the largest over the shards, gathered once per field), so it shifts by what one index would, computes the
  same float32 sum and reports the same signed score to the bit, irrational CPT pair scores included.
- Window clauses with ``rerank`` N rescore the first stage's top N, and a shard's top N is not the
  collection's. They run in two phases: every shard returns its first-stage top max(k, N), the driver merges
  them into the collection's first-stage top N, each shard adds the window scores of its documents among them,
  and the driver sorts the rescored lists together.
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple, Sequence

from lsr_lucene.cores import available_cores
from lsr_lucene.distributed.cluster import RESTARTS, near, node_id
from lsr_lucene.errors import InputError
from lsr_lucene.io.ranking import ordered
from lsr_lucene.io.runs import merge_hits as merge_run_hits, write_lines
from lsr_lucene.io.vectors import NEG_PREFIX
from lsr_lucene.search.spec_searcher import exact_hits, unpack_hits
from lsr_lucene.search.specs import validate_spec

# queries per call to each searcher actor: its threads share out a batch and wait for the batch's last query,
# about 6 ms a call on 2 threads (10 % of a search at k=10 in calls of 32; wiki2015 666k, NQ)
QUERY_BATCH = 256
IN_FLIGHT = 4  # query batches outstanding at a time (per replica)


Hit = tuple[str, str, float]  # (docid, score as the run file writes it, exact score)


class Job(NamedTuple):
    """One spec as its shards search it: its JSON, its depth k, the collection's max impacts of the terms it
    subtracts (DistributedSearcher.subtracted_max_impacts)."""

    spec: str
    k: int
    bounds: dict[str, int]


class ShardSearcher:
    """Ray actor: the shards of a distributed index held by one node, open in this process's one JVM (one start, one
    warm-up for them all); searches each batch of specs on every shard (exact: each spec's queue carried from shard
    to shard), and rescores."""

    def __init__(self, indexes: list[str], heap_factor: float = 1.0, threads: int | None = None):
        """``threads``: search threads (default: the cores of this searcher's machine)."""
        from lsr_lucene.search.spec_searcher import SpecSearcher

        # (a restarted actor opens them again)
        self.searchers = [SpecSearcher(index, heap_factor=heap_factor) for index in indexes]
        self.threads = threads or available_cores()

    def search(self, specs_jsonl: str, k: int, bounds: list[dict[str, int]]
               ) -> tuple[list[bytes], list[float], float]:
        """The top k of every spec of a batch (JSON lines) on each shard, ``bounds[i]`` the collection's max impacts
        of the terms spec i subtracts, in one JVM call: each shard's hits packed in one bytes object
        (spec_searcher.search_shards), the seconds each shard searched, and the seconds of the call here (the
        driver's timing breakdown: SearchTiming)."""
        from lsr_lucene.search.spec_searcher import search_shards

        started = time.perf_counter()
        packs, seconds = search_shards(self.searchers, specs_jsonl, k, bounds, threads=self.threads)
        return packs, seconds, time.perf_counter() - started

    def rescore(self, shard: int, batch: list[tuple[str, list[str], list[float]]]) -> list[tuple[str, str, str]]:
        """On this searcher's ``shard``-th index, per (spec JSON, docids, first-stage scores): the scores with the
        spec's windows added, in input order."""
        return [self.searchers[shard].rescore_columns(json.loads(spec), docids, scores)
                for spec, docids, scores in batch]

    def max_impacts(self, field: str, terms: list[str] | None = None) -> dict[str, int]:
        """The largest max impact of each term over this searcher's shards (those holding it)."""
        table: dict[str, int] = {}
        for searcher in self.searchers:
            for term, value in searcher.max_impacts(field, terms).items():
                table[term] = max(value, table.get(term, 0))
        return table

    def has_negatives(self, field: str) -> bool:
        """Whether ``field`` of one of these shards holds a ``neg_`` term (a document weight below zero)."""
        return any(searcher.has_term_with_prefix(field, NEG_PREFIX) for searcher in self.searchers)

    def num_docs(self) -> int:
        return sum(searcher.num_docs for searcher in self.searchers)

    def node(self) -> str:
        """The Ray node this searcher runs on."""
        return node_id()

    def pid(self) -> int:
        """The process this searcher runs in (a restarted actor runs in a new one)."""
        return os.getpid()


def node_groups(shards: Sequence[dict]) -> list[list[int]]:
    """Shard numbers grouped by the node that built them (manifest ``node``; unknown: one group), in shard order:
    one searcher process per group."""
    groups: dict[str | None, list[int]] = {}
    for number, shard in enumerate(shards):
        groups.setdefault(shard.get("node"), []).append(number)
    return list(groups.values())


@dataclass
class SearchTiming:
    """Where a distributed search's time goes: per query batch, its round trip (sent to every searcher -> every
    answer in) and the slowest searcher's own call; per searcher process and per shard, the seconds it searched; on
    the driver, preparing the specs (JSON, subtracted max impacts), gathering the collection's max impacts of the
    terms signed queries subtract (``bounds``: one call per searcher), fetching the answers (Ray transfer and
    deserialisation) and merging them into the run."""

    round_trips: list[float] = field(default_factory=list)
    slowest_searcher: list[float] = field(default_factory=list)
    searcher_busy: list[float] = field(default_factory=list)
    shard_busy: list[float] = field(default_factory=list)
    prepare: float = 0.0
    bounds: float = 0.0
    fetch: float = 0.0
    merge: float = 0.0

    def add_batch(self, sent: float, searcher_seconds: list[float], shard_seconds: list[float]) -> None:
        self.round_trips.append(time.perf_counter() - sent)
        self.slowest_searcher.append(max(searcher_seconds))
        self.searcher_busy = _added(self.searcher_busy, searcher_seconds)
        self.shard_busy = _added(self.shard_busy, shard_seconds)

    def summary(self, wall: float, start: float = 0.0, waited: float | None = None) -> dict:
        """The breakdown as numbers (seconds, ms per batch), ``wall`` the search's total seconds, ``start`` those
        of starting the searchers (their processes, JVMs and open shards) before it, ``waited`` the part of them
        the search waited for (default: all; the rest went by while the queries were read or encoded)."""
        trips = sorted(self.round_trips) or [0.0]
        slowest = sum(self.slowest_searcher) / max(len(self.slowest_searcher), 1)
        return {"batches": len(self.round_trips), "wall_s": round(wall, 3), "start_s": round(start, 3),
                "start_waited_s": round(start if waited is None else waited, 3),
                "round_trip_ms_mean": round(1e3 * sum(trips) / len(trips), 2),
                "round_trip_ms_p50": round(1e3 * trips[len(trips) // 2], 2),
                "round_trip_ms_max": round(1e3 * trips[-1], 2),
                "slowest_searcher_ms_mean": round(1e3 * slowest, 2),
                "searcher_busy_s": [round(b, 3) for b in self.searcher_busy],
                "shard_busy_s": [round(b, 3) for b in self.shard_busy], "prepare_s": round(self.prepare, 3),
                "bounds_s": round(self.bounds, 3),
                "fetch_s": round(self.fetch, 3), "merge_s": round(self.merge, 3)}


def _added(totals: list[float], seconds: list[float]) -> list[float]:
    return [a + b for a, b in zip(totals or [0.0] * len(seconds), seconds)]


def timing_line(timing: dict) -> str:
    """One line on a search's SearchTiming summary."""
    rest = timing["round_trip_ms_mean"] - timing["slowest_searcher_ms_mean"]
    searchers = ", ".join(f"{b:.2f}" for b in timing["searcher_busy_s"])
    shards = ", ".join(f"{b:.2f}" for b in timing["shard_busy_s"])
    beyond = timing["wall_s"] - max(timing["searcher_busy_s"], default=0.0)
    start, waited = timing.get("start_s", 0.0), timing.get("start_waited_s", timing.get("start_s", 0.0))
    return (f"time: searchers started in {start:.2f} s ({waited:.2f} s of it waited for); search "
            f"{timing['wall_s']:.2f} s, "
            f"{beyond:.2f} s of it beyond the busiest searcher's, for {timing['batches']} batches; per batch round "
            f"trip {timing['round_trip_ms_mean']:.1f} ms mean (p50 {timing['round_trip_ms_p50']:.1f}, max "
            f"{timing['round_trip_ms_max']:.1f}), the slowest searcher's call {timing['slowest_searcher_ms_mean']:.1f} "
            f"of it, {rest:.1f} queueing behind batches in flight, Ray transfer and (de)serialisation; searchers busy "
            f"[{searchers}] s, shards [{shards}] s; driver: prepare {timing['prepare_s']:.2f} s (of it max impacts "
            f"from the searchers {timing['bounds_s']:.2f} s), fetch {timing['fetch_s']:.2f} s, merge and write "
            f"{timing['merge_s']:.2f} s")


def merge_hits(lists: Sequence[Sequence[Hit]], k: int) -> list[Hit]:
    """The best ``k`` of several best-first hit lists: exact score descending, then docid ascending."""
    return merge_run_hits(lists, k, score_index=2)


def reranks(spec: dict) -> bool:
    """Whether a spec rescores its first stage's top N with window clauses (searched in two phases)."""
    return bool(spec.get("rerank")) and bool(spec.get("windows"))


def first_stage(spec: dict) -> dict:
    """A reranking spec without its windows: the first stage whose collection top N the windows rescore."""
    return {key: value for key, value in spec.items() if key not in ("windows", "rerank")}


def subtracted_terms(spec: dict) -> set[str]:
    """Terms whose max impact shifts a signed spec: neg_t of positive weights, t of negative weights, and both
    terms of negative CPT pairs (SignedImpactQuery.rewrite)."""
    if spec.get("mode") == "boolean":
        return set()
    terms = {NEG_PREFIX + term if weight > 0 else term for term, weight in spec.get("terms", {}).items()}
    for a, b, weight in spec.get("pairs", []):
        if weight < 0:
            terms.update((a, b))
    return terms


class DistributedSearcher:
    """Searcher actors over every shard of a distributed index, open until ``close``: one per node holding shards
    (the node that built them), with ``replicas`` copies, each holding that node's shards in one JVM."""

    def __init__(self, index: str | Path, replicas: int = 1, heap_factor: float = 1.0, threads: int | None = None,
                 wait: bool = True, actor: type | None = None):
        """``heap_factor`` H < 1: each shard's searcher prunes against threshold / H
        (SpecSearcher.heap_factor); the merged run keeps the promise, since the collection's exact k-th score is at
        least each shard's. ``threads``: search threads of each searcher actor (default: its machine's cores).
        ``wait`` False returns as soon as the searchers are asked to start, so that the caller can read or encode
        its queries meanwhile; the first search waits for them (``ready``). ``actor``: the searcher class (default
        :class:`ShardSearcher`; a subclass may add calls, e.g. distributed.compose's)."""
        from lsr_lucene.search.spec_searcher import check_heap_factor

        import ray

        from lsr_lucene.distributed.index import read_manifest

        if replicas < 1:
            raise InputError(f"replicas must be at least 1, got {replicas}")
        if threads is not None and threads < 1:
            raise InputError(f"threads must be at least 1, got {threads}")
        started = time.perf_counter()
        manifest = read_manifest(index)
        self.shards = [str((Path(index) / s["path"]).resolve()) for s in manifest["shards"]]
        self.groups = node_groups(manifest["shards"])  # the shard numbers of each searcher
        self.replicas = replicas
        self.heap_factor = check_heap_factor(heap_factor)  # a bad value fails here, not in every actor
        # no CPU reserved: a searcher waits for queries most of the time, and reserving CPUs would leave a second
        # searcher (another run, a restarted actor) waiting for them forever. A group's first searcher runs on the
        # node that built its shards (while alive); further replicas, and groups of unknown node, are SPREAD
        actor_class = ray.remote(num_cpus=0, max_restarts=RESTARTS, max_task_retries=RESTARTS)(actor or ShardSearcher)
        nodes = [manifest["shards"][group[0]].get("node") for group in self.groups]
        self.actors = [[actor_class.options(scheduling_strategy=near(node, "SPREAD") if r == 0 else "SPREAD").remote(
                            [self.shards[i] for i in group], self.heap_factor, threads)
                        for r in range(replicas)]
                       for node, group in zip(nodes, self.groups)]
        self._max_impacts: dict[str, dict[str, int]] = {}  # field -> the collection's max impact of each term
        self._asked: dict[str, set[str]] = {}  # field -> the terms whose max impacts were gathered
        self._negatives: dict[str, bool] = {}  # field -> whether some shard holds a neg_ term
        self._started = started
        self._opening: list | None = [actor.num_docs.remote() for row in self.actors for actor in row]
        self.num_docs = 0
        self.open_seconds = 0.0  # from asking the searchers to start to each one's JVM and shards open
        self.waited_seconds = 0.0  # of it, the part ``ready`` waited for (the rest went by while the caller worked)
        if wait:
            self.ready()

    def ready(self) -> None:
        """Waits until every searcher has its shards open (an index that fails to open fails here); at once after
        the first call. Every search calls it first."""
        if self._opening is None:
            return
        waiting = time.perf_counter()
        try:
            # this process's JVM (runs are merged and written in Java: ShardHits.RunMerger) starts while they start
            from lsr_lucene.jvm.classes import java_class

            java_class("search.ShardHits$RunMerger")
            counts = ray_get(self._opening)  # indexes open or fail
        except BaseException:
            self.close()
            raise
        self.num_docs = sum(counts[::self.replicas])  # each group's first replica
        self._opening = None
        done = time.perf_counter()
        self.open_seconds, self.waited_seconds = done - self._started, done - waiting

    def _jobs(self, specs: Sequence[dict], hits: int, timing: SearchTiming) -> list[Job]:
        """(spec JSON, k, the collection's max impacts of the terms it subtracts) of every spec, checked first: a bad
        spec is one error line before any shard is asked. A window ``rerank`` spec: its first stage, at depth
        max(k, N)."""
        started = time.perf_counter()
        if hits <= 0:
            raise InputError(f"hits must be positive, got {hits}")
        subtracted: dict[str, set[str]] = {}  # field -> every term the specs subtract: one call per shard for all
        for spec in specs:
            validate_spec(spec)
            subtracted.setdefault(spec.get("field", "contents"), set()).update(subtracted_terms(spec))
        gathering = time.perf_counter()
        for name, terms in subtracted.items():
            self.gather_max_impacts(name, terms)
        timing.bounds += time.perf_counter() - gathering
        jobs = [Job(json.dumps(first_stage(spec) if reranks(spec) else spec, allow_nan=False),
                    max(hits, spec["rerank"]) if reranks(spec) else hits, self.subtracted_max_impacts(spec))
                for spec in specs]
        timing.prepare += time.perf_counter() - started
        return jobs

    def search(self, specs: Sequence[dict], hits: int = 1000, batch_size: int = QUERY_BATCH,
               on_batch: Callable[[int, list], None] | None = None,
               timing: SearchTiming | None = None) -> list[list[Hit]]:
        """Merged top ``hits`` of every spec, in input order: [(docid, score as printed, exact score)].

        Batches of ``batch_size`` specs go to every searcher (replicas take turns); ``on_batch(done, actors)`` is
        called as each batch completes (``actors[searcher][replica]``, searcher i holding shards ``groups[i]``).
        Specs with window ``rerank`` then get their second phase (the windows added to the collection's first-stage
        top N). ``timing`` collects where the time goes (SearchTiming).
        """
        self.ready()
        timing = SearchTiming() if timing is None else timing
        jobs = self._jobs(specs, hits, timing)
        rerank_at = [i for i, spec in enumerate(specs) if reranks(spec)]
        tagged = set(rerank_at)
        results: list[list] = [[] for _ in jobs]

        def merge(numbers: list[int], packs: list[bytes]) -> None:
            per_shard = [unpack_hits(pack) for pack in packs]
            for row, job in enumerate(numbers):
                shard_hits = [lists[row] for lists in per_shard]
                if job in tagged:
                    shard_hits = [[(*hit, shard) for hit in hits]  # type: ignore[misc]  # Hit + shard number
                                  for shard, hits in enumerate(shard_hits)]
                results[job] = merge_hits(shard_hits, jobs[job].k)

        self._scatter(jobs, batch_size, on_batch, timing, merge)
        for start in range(0, len(rerank_at), batch_size):
            batch = rerank_at[start:start + batch_size]
            rescored = self._rescore([specs[i] for i in batch], [results[i] for i in batch], start // batch_size)
            for i, ranked in zip(batch, rescored):
                results[i] = ordered(ranked, score_index=2)[:hits]
        return [[hit[:3] for hit in ranked] for ranked in results]

    def _scatter(self, jobs: Sequence[Job], batch_size: int, on_batch: Callable[[int, list], None] | None,
                 timing: SearchTiming, merge: Callable[[list[int], list[bytes]], None]) -> None:
        """Every job searched on every shard, batch by batch (``IN_FLIGHT`` batches outstanding per replica, each
        sent as one object every searcher reads); ``merge(job numbers, every shard's packed hits, in shard order)``
        of each batch, in batch order."""
        import ray
        from lsr_lucene.progress import progress_bar

        batches = [list(range(i, min(i + batch_size, len(jobs)))) for i in range(0, len(jobs), batch_size)]
        progress = progress_bar(total=len(jobs), desc=f"searching {len(self.shards)} shards", unit=" queries",
                                file=sys.stderr, dynamic_ncols=True)
        pending: dict = {}  # searcher result ref -> batch number
        batch_refs: dict[int, list] = {}
        sent: dict[int, float] = {}  # batch number -> when it was sent
        answered: dict[int, list[bytes]] = {}  # batches in, not yet merged (merged in batch order)
        next_batch = done = 0
        try:
            while next_batch < len(batches) or pending:
                while next_batch < len(batches) and len(batch_refs) < IN_FLIGHT * self.replicas:
                    replica = next_batch % self.replicas
                    batch = [jobs[i] for i in batches[next_batch]]
                    sending = time.perf_counter()
                    text = ray.put("\n".join(job.spec for job in batch))
                    bounds = [job.bounds for job in batch]
                    k = max(job.k for job in batch)
                    timing.prepare += time.perf_counter() - sending
                    sent[next_batch] = sending
                    batch_refs[next_batch] = [row[replica].search.remote(text, k, bounds)
                                              for row in self.actors]
                    pending.update(dict.fromkeys(batch_refs[next_batch], next_batch))
                    next_batch += 1
                ready, _ = ray.wait(list(pending), num_returns=1)
                number = pending.pop(ready[0])
                if any(ref in pending for ref in batch_refs[number]):
                    continue  # other searchers of this batch still searching
                fetching = time.perf_counter()
                answers = ray_get(batch_refs.pop(number))
                timing.fetch += time.perf_counter() - fetching
                packs: list[bytes] = [b""] * len(self.shards)  # in shard order
                shard_seconds = [0.0] * len(self.shards)
                for group, (group_packs, group_seconds, _) in zip(self.groups, answers):
                    for shard, packed, seconds in zip(group, group_packs, group_seconds):
                        packs[shard], shard_seconds[shard] = packed, seconds
                timing.add_batch(sent.pop(number), [seconds for _, _, seconds in answers], shard_seconds)
                answered[number] = packs
                while done in answered:
                    merging = time.perf_counter()
                    merge(batches[done], answered.pop(done))
                    timing.merge += time.perf_counter() - merging
                    progress.update(len(batches[done]))
                    done += 1
                    if on_batch is not None:
                        on_batch(done, self.actors)
        finally:
            progress.close()

    def _rescore(self, specs: Sequence[dict], first_stages: Sequence[list], replica: int) -> list[list[Hit]]:
        """Second phase of window rerank: each shard adds the windows to its documents among each spec's
        collection first-stage top N (hits tagged with their shard); per spec, all shards' rescored hits."""
        calls, refs = [], []  # the spec numbers of each call, its result
        where = {shard: (row, position) for row, group in zip(self.actors, self.groups)
                 for position, shard in enumerate(group)}
        for shard in range(len(self.shards)):
            row, position = where[shard]
            items, numbers = [], []
            for number, (spec, ranked) in enumerate(zip(specs, first_stages)):
                held = [hit for hit in ranked if hit[3] == shard]
                if held:
                    items.append((json.dumps(spec, allow_nan=False), [h[0] for h in held], [h[2] for h in held]))
                    numbers.append(number)
            if items:
                calls.append(numbers)
                refs.append(row[replica % self.replicas].rescore.remote(position, items))
        rescored: list[list[Hit]] = [[] for _ in specs]
        for numbers, lists in zip(calls, ray_get(refs)):
            for number, columns in zip(numbers, lists):
                rescored[number].extend(exact_hits(columns))
        return rescored

    def subtracted_max_impacts(self, spec: dict) -> dict[str, int]:
        """The collection's max impact of each term a signed spec subtracts (what its shift is made of)."""
        terms = subtracted_terms(spec)
        if not terms:
            return {}
        field = spec.get("field", "contents")
        table = self.gather_max_impacts(field, terms)
        return {term: table[term] for term in terms if term in table}

    def gather_max_impacts(self, field: str, terms: set[str]) -> dict[str, int]:
        """The collection's max impact (largest over the shards) of each of ``terms`` of ``field`` the collection holds,
        asked of the shards for the terms not asked before (only those: a shard's whole vocabulary takes seconds)."""
        table = self._max_impacts.setdefault(field, {})
        asked = self._asked.setdefault(field, set())
        missing = sorted(terms - asked)
        if any(term.startswith(NEG_PREFIX) for term in missing) and not self._has_negatives(field):
            asked.update(term for term in missing if term.startswith(NEG_PREFIX))  # none held: none to ask for
            missing = [term for term in missing if not term.startswith(NEG_PREFIX)]
        if missing:
            for shard in ray_get([row[0].max_impacts.remote(field, missing) for row in self.actors]):
                for term, value in shard.items():
                    if value > table.get(term, 0):
                        table[term] = value
            asked.update(missing)
        return table

    def _has_negatives(self, field: str) -> bool:
        """Whether some shard holds a ``neg_`` term of ``field`` (asked once; without one, the ``neg_`` twins that
        positive weights subtract have no max impact to gather)."""
        if field not in self._negatives:
            self._negatives[field] = any(ray_get([row[0].has_negatives.remote(field) for row in self.actors]))
        return self._negatives[field]

    def search_to_run(self, specs: Sequence[dict], output: str | Path, hits: int = 1000, tag: str = "lsr_lucene",
                      overwrite: bool = False, batch_size: int = QUERY_BATCH,
                      on_batch: Callable[[int, list], None] | None = None) -> dict:
        """Search ``specs`` and write the merged TREC run (temporary file renamed when complete); returns counts:
        queries, answered, unanswered qids, shards, replicas, seconds and queries/s of the search itself, and where
        its time went (``timing``: SearchTiming.summary)."""
        from lsr_lucene.io.output import atomic_output, refuse_existing

        refuse_existing(output, overwrite)
        self.ready()
        searchable = [s for s in specs if s.get("terms") or s.get("pairs") or s.get("windows")]
        timing = SearchTiming()
        started = time.perf_counter()
        with atomic_output(output, overwrite=overwrite) as tmp:
            if any(reranks(spec) for spec in searchable):  # two phases, merged here (search)
                ranked_lists = self.search(searchable, hits, batch_size, on_batch, timing)
                with open(tmp, "w", encoding="utf-8") as out:
                    write_lines(out, {spec["qid"]: [(docid, shown) for docid, shown, _ in ranked]
                                      for spec, ranked in zip(searchable, ranked_lists)}, tag, sort=False)
                counts = [len(ranked) for ranked in ranked_lists]
            else:
                counts = self._search_into_run(searchable, hits, tmp, tag, batch_size, on_batch, timing)
        seconds = time.perf_counter() - started
        answered = {spec["qid"] for spec, count in zip(searchable, counts) if count}
        return {"queries": len(specs), "answered": len(answered), "shards": len(self.shards),
                "replicas": self.replicas, "seconds": round(seconds, 3),
                "timing": timing.summary(seconds, self.open_seconds, self.waited_seconds),
                "qps": round(len(searchable) / seconds, 2) if seconds else None,
                "unanswered": [spec["qid"] for spec in specs if spec["qid"] not in answered]}

    def _search_into_run(self, specs: Sequence[dict], hits: int, run: Path, tag: str, batch_size: int,
                         on_batch: Callable[[int, list], None] | None, timing: SearchTiming) -> list[int]:
        """Search ``specs`` (no window rerank) and write their merged run to ``run`` as the batches come in: the
        shards' packed hits merged and written by Java (ShardHits.RunMerger), no hit made a Python object; returns
        each spec's hit count."""
        from lsr_lucene.jvm.classes import java_class, java_errors

        jobs = self._jobs(specs, hits, timing)
        qids = [str(spec["qid"]) for spec in specs]
        counts: list[int] = []
        merger_class = java_class("search.ShardHits$RunMerger")  # (the JVM, which java_errors needs, is started)
        with java_errors(str(run)):
            merger = merger_class(str(run), tag)

        def merge(numbers: list[int], packs: list[bytes]) -> None:
            with java_errors(str(run)):
                for pack in packs:
                    merger.add(pack)
                counts.extend(merger.write([qids[i] for i in numbers], hits))

        try:
            self._scatter(jobs, batch_size, on_batch, timing, merge)
        finally:
            merger.close()
        return counts

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


def ray_get(refs: list):
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
                       batch_size: int = QUERY_BATCH, on_batch: Callable[[int, list], None] | None = None,
                       heap_factor: float = 1.0, threads: int | None = None) -> dict:
    """Search ``specs`` over every shard of a distributed index and write the merged TREC run (see
    ``DistributedSearcher.search_to_run``; ``threads`` per searcher actor); the searcher actors live for this
    call only."""
    from lsr_lucene.io.output import refuse_existing

    refuse_existing(output, overwrite)
    with DistributedSearcher(index, replicas, heap_factor, threads) as searcher:
        return searcher.search_to_run(specs, output, hits, tag, overwrite, batch_size, on_batch)
