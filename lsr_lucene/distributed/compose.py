"""Negated queries over a distributed index, ranked as ``lsr-lucene compose``'s default ranks them on one index.

``compose`` (lsr_lucene.compose.execute) ranks a not node by fusing separate searches: A's and B's sparse hits and the
dense leg's own nearest documents to A's text form the candidates; every leg is scored exactly on every candidate
(sparse scores, dense cosines, each candidate's cosine with the best A match); stored texts are read for B stated
absent or contained; then min-max scaling, the gated penalty and the top k. Here the same code runs in the driver
on a backend and a dense leg that answer from the shards:

- :class:`DistributedBackend` has ``compose.backends.LuceneBackend``'s calls. Searches scatter to the shards and
  merge by score, then docid (DistributedSearcher: impact scores use no collection statistics, so a document scores
  the same in its shard as in one index, and the merged top k is one index's); exact scores, texts, containment and
  strict-filter judgements of given documents come from the shard holding each document.
- :class:`DistributedDenseLeg` has ``compose.dense_leg.DenseLeg``'s calls over the shards' dense sidecars
  (``<shard>/dense``, written by ``distributed index --dense`` or ``lsr-lucene index --index SHARD --dense``). The
  query is encoded once, here, as one index's leg encodes it; cosines are per document, computed by the shard
  holding it; a query's dense candidates are the merge of each shard's top N by (rounded cosine, docid), which is
  the collection's top N when the shards are scanned exactly, and approximate (as one index's HNSW graph is) when
  they have their HNSW graphs (``ann.faiss``): then one index's graph and the shards' graphs can miss different
  documents.

Fusion runs in the driver on the merged leg scores, so min-max scaling is over the merged candidates, as on one
index. The cost: per query batch, one sparse search round of the fused legs (at ``--fusion-depth``, default 1,000)
and of the dense leg, then a few calls per shard scoring the candidates a leg's own hits lack.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from lsr_lucene.dense.leg import DENSE_DIR  # a shard's dense sidecar, where one index keeps its own
from lsr_lucene.distributed.search import DistributedSearcher, ShardSearcher, ray_get
from lsr_lucene.errors import InputError

WHERE_MEMO = 1 << 20  # docids whose shard a searcher remembers (then it starts afresh)


class ComposeShardSearcher(ShardSearcher):
    """Ray actor: a :class:`ShardSearcher` that also answers what compose's backend and dense leg ask of given
    documents, each from the shard holding it (``compose.backends.LuceneBackend`` and
    ``compose.dense_leg.DenseLeg`` over each of this node's shards, opened on first use)."""

    def __init__(self, indexes: list[str], heap_factor: float = 1.0, threads: int | None = None):
        super().__init__(indexes, heap_factor, threads)
        self._backends: list = []
        self._dense: list | None = None
        self._where: dict[str, int] = {}  # docid -> the position of the shard here holding it, -1: none

    def _shard_backends(self) -> list:
        if not self._backends:
            from lsr_lucene.compose.backends import LuceneBackend

            self._backends = [LuceneBackend(s.index_dir, 1, searcher=s) for s in self.searchers]
        return self._backends

    def _held(self, docids: Sequence[str]) -> list[tuple[object, list[str]]]:
        """(backend, the given docids its shard holds, in the order given) per shard; each docid looked up in the
        shards once (a fused query's candidates are asked about several times)."""
        backends = self._shard_backends()
        unknown = [d for d in dict.fromkeys(docids) if d not in self._where]
        if unknown:
            if len(self._where) + len(unknown) > WHERE_MEMO:
                self._where.clear()
            self._where.update(dict.fromkeys(unknown, -1))
            for position, searcher in enumerate(self.searchers):
                for doc, lucene in zip(unknown, searcher.lucene_docids(unknown)):
                    if lucene >= 0 and self._where[doc] < 0:
                        self._where[doc] = position
        held: list[list[str]] = [[] for _ in backends]
        for doc in docids:
            if self._where.get(doc, -1) >= 0:
                held[self._where[doc]].append(doc)
        return list(zip(backends, held))

    def known(self, docids: list[str]) -> list[str]:
        return [d for _, held in self._held(docids) for d in held]

    def score(self, spec: dict, docids: list[str]) -> dict[str, float]:
        """Exact scores (as LuceneBackend.score writes them) of the given documents these shards hold."""
        out: dict[str, float] = {}
        for backend, held in self._held(docids):
            out.update(zip(held, backend.score(spec, held)))  # type: ignore[attr-defined]
        return out

    def texts(self, docids: list[str]) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for backend, held in self._held(docids):
            out.update(backend.texts(held) if held else {})  # type: ignore[attr-defined]
        return out

    def containing(self, items: list[str], docids: list[str]) -> dict[str, bool]:
        out: dict[str, bool] = {}
        for backend, held in self._held(docids):
            out.update(zip(held, backend.containing(items, held)))  # type: ignore[attr-defined]
        return out

    def excluded(self, expression: dict, docids: list[str]) -> dict[str, bool]:
        out: dict[str, bool] = {}
        for backend, held in self._held(docids):
            out.update(zip(held, backend.excluded(expression, held) if held else []))  # type: ignore[attr-defined]
        return out

    def excluded_count(self, expression: dict) -> int:
        return sum(backend.excluded_count(expression) for backend in self._shard_backends())

    # ------------------------------------------------------------------------------------------ the dense leg

    def dense_legs(self) -> list:
        """Each shard's DenseLeg (None where the shard has no dense sidecar), opened once."""
        if self._dense is None:
            from lsr_lucene.compose.dense_leg import DenseLeg
            from lsr_lucene.index.impact import read_index_metadata

            self._dense = [DenseLeg(Path(s.index_dir) / DENSE_DIR, read_index_metadata(s.index_dir).get("documents"), 1)
                           if (Path(s.index_dir) / DENSE_DIR).is_dir() else None for s in self.searchers]
        return self._dense

    def dense_info(self) -> list[dict | None]:
        """Per shard: its dense sidecar's metadata, dimension and whether it has the HNSW graph (None: no sidecar)."""
        from lsr_lucene.dense.ann import ann_path

        return [None if leg is None else {"metadata": leg.embeddings.metadata, "dim": leg.embeddings.vectors.shape[1],
                                          "ann": ann_path(leg.path).is_file(), "path": str(leg.path)}
                for leg in self.dense_legs()]

    def dense_nearest(self, queries, k: int) -> list[list[list[tuple[str, float]]]]:
        """Per shard, per query row, its top ``k`` (docid, rounded cosine) (DenseLeg.nearest)."""
        return [leg.nearest(queries, k) for leg in self.dense_legs()]

    def dense_cosines(self, queries, docids: list[str]) -> list[dict[str, float]]:
        """Per query row, the cosines of the given documents these shards' sidecars hold."""
        out: list[dict[str, float]] = [{} for _ in range(len(queries))]
        for leg in self.dense_legs():
            for row, cosines in zip(out, leg.cosines(queries, docids)):
                row.update(cosines)
        return out

    def dense_vector(self, doc: str):
        """The stored unit vector of ``doc`` (None when no shard here holds it)."""
        return next((v for v in (leg.vector(doc) for leg in self.dense_legs()) if v is not None), None)

    def dense_similar(self, target, docids: list[str]) -> dict[str, float]:
        out: dict[str, float] = {}
        for leg in self.dense_legs():
            out.update(leg.similar_to(target, docids))
        return out


def _first_replicas(searcher: DistributedSearcher) -> list:
    return [row[0] for row in searcher.actors]


def _gathered(searcher: DistributedSearcher, method: str, *args) -> list:
    """Every searcher's (first replica's) answer to ``method(*args)``, in searcher order."""
    import ray

    actors = _first_replicas(searcher)
    # an argument for several searchers is put in the object store once; for one, it goes with the call
    shared = [ray.put(a) if len(actors) > 1 and not isinstance(a, (str, int, float)) else a for a in args]
    return ray_get([getattr(actor, method).remote(*shared) for actor in actors])


class DistributedBackend:
    """``compose.backends.LuceneBackend``'s calls over a distributed index's shards (a DistributedSearcher opened
    with ``actor=ComposeShardSearcher``, left open by :meth:`close`): searches merged as one index ranks them,
    exact; every other call answered by the shard holding each document."""

    def __init__(self, searcher: DistributedSearcher):
        self.searcher = searcher

    def search_many(self, specs: Sequence[Mapping], k: int,
                    threads: int | None = None) -> dict[str, list[tuple[str, float]]]:
        """Top-k hits of every spec, scores as the run file writes them (as LuceneBackend's); ``threads`` is the
        searcher actors' own."""
        from lsr_lucene.search.spec_searcher import as_written

        out: dict[str, list[tuple[str, float]]] = {str(s["qid"]): [] for s in specs}
        if specs:
            ranked = self.searcher.search([dict(s) for s in specs], k)
            for spec, hits in zip(specs, ranked):
                out[str(spec["qid"])] = list(zip([h[0] for h in hits], as_written([h[2] for h in hits])))
        return out

    def search(self, spec: Mapping, k: int) -> list[tuple[str, float]]:
        return self.search_many([spec], k)[str(spec["qid"])]

    def score(self, spec: Mapping, docids: Sequence[str]) -> list[float]:
        """Exact scores of ``spec`` for ``docids`` (0 for a document no shard holds, as one index's)."""
        if not docids:
            return []
        table: dict[str, float] = {}
        for part in _gathered(self.searcher, "score", dict(spec), list(docids)):
            table.update(part)
        return [table.get(d, 0.0) for d in docids]

    def known(self, docids: Sequence[str]) -> list[str]:
        held = {d for part in _gathered(self.searcher, "known", list(docids)) for d in part}
        return [d for d in docids if d in held]

    def texts(self, docids: Sequence[str]) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for part in _gathered(self.searcher, "texts", list(docids)) if docids else []:
            out.update(part)
        return {d: out[d] for d in docids if d in out}

    def _judged(self, method: str, first, docids: Sequence[str]) -> list[bool]:
        if not docids:
            return []
        table: dict[str, bool] = {}
        for part in _gathered(self.searcher, method, first, list(docids)):
            table.update(part)
        return [table.get(d, False) for d in docids]

    def containing(self, items: Sequence[str], docids: Sequence[str]) -> list[bool]:
        """Whether each docid's text contains one of ``items``, as its shard's LuceneBackend judges it."""
        return self._judged("containing", list(items), docids)

    def excluded(self, expression: Mapping, docids: Sequence[str]) -> list[bool]:
        return self._judged("excluded", dict(expression), docids)

    def excluded_count(self, expression: Mapping) -> int:
        return sum(_gathered(self.searcher, "excluded_count", dict(expression)))

    def close(self) -> None:
        """The searcher is its opener's to close."""


class DistributedDenseLeg:
    """``compose.dense_leg.DenseLeg``'s calls (``scores``, ``search``, ``similar``, ``describe``) over the shards'
    dense sidecars: queries encoded here, cosines and nearest documents from the shards, merged."""

    def __init__(self, searcher: DistributedSearcher, info: dict):
        self.searcher, self.info = searcher, info
        self._encoder: Any = None
        self._memo: dict[str, Any] = {}

    @classmethod
    def open(cls, searcher: DistributedSearcher) -> "DistributedDenseLeg | None":
        """The shards' dense leg; None when no shard has one (compose's sparse-only default, as on one index without
        ``dense/``); InputError naming the command when only some shards have one."""
        per_shard = [info for part in _gathered(searcher, "dense_info") for info in part]
        shards = [shard for group in searcher.groups for shard in group]
        lacking = [searcher.shards[s] for s, info in zip(shards, per_shard) if info is None]
        if len(lacking) == len(per_shard):
            return None
        if lacking:
            raise InputError(f"{len(lacking)} of {len(per_shard)} shards have no dense leg ({lacking[0]}/"
                             f"{DENSE_DIR} missing): add it to each with: lsr-lucene index --index SHARD --dense "
                             "(or build the index with lsr-lucene distributed index --dense)")
        models = {(i["metadata"].get("model"), i["metadata"].get("dtype"), i["dim"]) for i in per_shard}
        if len(models) > 1:
            raise InputError(f"the shards' dense legs were encoded differently ({sorted(map(str, models))}); "
                             "encode them all alike")
        return cls(searcher, {**per_shard[0], "shards": len(per_shard), "ann": sum(i["ann"] for i in per_shard)})

    def _queries(self, texts: Sequence[str]):
        from lsr_lucene.compose.dense_leg import leg_query_encoder, memo_encode

        if self._encoder is None:
            self._encoder = leg_query_encoder(self.info["path"], self.info["metadata"], self.info["dim"], 1)
        return memo_encode(self._encoder, self._memo, texts)  # the latest kept, as DenseLeg's

    def scores(self, texts: Sequence[str], candidates: Sequence[str]) -> list[dict[str, float]]:
        """Per text, ``{docid: cosine}`` over ``candidates`` (InputError naming a candidate no shard holds)."""
        if not texts:
            return []
        merged: list[dict[str, float]] = [{} for _ in texts]
        for part in _gathered(self.searcher, "dense_cosines", self._queries(texts), list(candidates)):
            for row, cosines in zip(merged, part):
                row.update(cosines)
        for doc in candidates:
            if doc not in merged[0]:
                raise InputError(f"no shard's dense leg has an embedding for document {doc}; the dense folders were "
                                 "made from another corpus than the shards")
        return [{d: row[d] for d in candidates} for row in merged]

    def search(self, texts: Sequence[str], k: int) -> list[list[str]]:
        """Per text, the ``k`` documents of highest cosine over every shard: each shard's top k merged by (rounded
        cosine, docid), as one folder's search orders them."""
        from lsr_lucene.io.runs import merge_hits

        if not texts or k <= 0:
            return [[] for _ in texts]
        lists: list[list[list[tuple[str, float]]]] = [[] for _ in texts]
        for part in _gathered(self.searcher, "dense_nearest", self._queries(texts), int(k)):
            for shard in part:
                for row, hits in zip(lists, shard):
                    row.append(hits)
        return [[doc for doc, _ in merge_hits(row, k)] for row in lists]

    def similar(self, doc: str, candidates: Sequence[str]) -> dict[str, float]:
        """``{candidate: cosine with document doc}`` (doc's vector from its shard, each candidate's from its own)."""
        target = next((v for v in _gathered(self.searcher, "dense_vector", doc) if v is not None), None)
        if target is None:
            raise InputError(f"no shard's dense leg has an embedding for document {doc}")
        table: dict[str, float] = {}
        for part in _gathered(self.searcher, "dense_similar", target, list(candidates)):
            table.update(part)
        missing = [d for d in candidates if d not in table]
        if missing:
            raise InputError(f"no shard's dense leg has an embedding for document {missing[0]}")
        return {d: table[d] for d in candidates}

    def describe(self) -> str:
        approximate = f"{self.info['ann']} with their HNSW graphs" if self.info["ann"] else "scanned exactly"
        return (f"dense leg {self.info['metadata'].get('model')} from the {self.info['shards']} shards' "
                f"{DENSE_DIR}/ folders ({approximate})")


def negated(topics: Mapping[str, str]) -> dict[str, object]:
    """The compositions (``compose.compositions.Composition``) of the topics whose parse has a not node, as
    ``compose --topics`` reads them (the explicit syntax where a topic opts in, else the cue parser)."""
    from lsr_lucene.compose.compositions import parse_topics
    from lsr_lucene.compose.tree import has_not

    return {c.qid: c for c in parse_topics(topics) if has_not(c.tree)}


class DistributedComposer:
    """Negated queries ranked over a distributed index as ``lsr-lucene compose --not-op not_op`` ranks them on one
    index of the same documents (its other options at their defaults): the shards' dense leg when every shard has
    one, else the sparse-only default. Opened once for many :meth:`rank` calls (the dense query encoder is loaded on
    first use and kept)."""

    def __init__(self, searcher: DistributedSearcher, sparse_encoder, scale: float, not_op: str | None = None,
                 fusion_depth: int | None = None, dense_depth: int | None = None):
        from lsr_lucene.compose.execute import DEFAULT_FUSION_DEPTH
        from lsr_lucene.compose.operations import Settings
        from lsr_lucene.compose.query_encoder import QueryEncoder

        self.searcher, self.scale, self.dense_depth = searcher, scale, dense_depth
        self.depth = DEFAULT_FUSION_DEPTH if fusion_depth is None else int(fusion_depth)
        if self.depth < 1:
            raise InputError(f"--fusion-depth must be >= 1, got {self.depth}")
        self.dense = DistributedDenseLeg.open(searcher)
        self.settings = Settings.of(None, not_op, dense=self.dense is not None)
        self.encoder = QueryEncoder(mode="full", encoder=sparse_encoder)
        self.backend = DistributedBackend(searcher)

    def rank(self, compositions: Sequence, hits: int, warn=None, notes=None) -> dict[str, list[tuple[str, float]]]:
        """Ranked (docid, unrounded score) lists of ``compositions``, what compose writes; ``warn(qid, why)`` hears
        of queries that match nothing, ``notes(line)`` which dense leg is used, or that none is."""
        from lsr_lucene.compose.dense_leg import missing_note
        from lsr_lucene.compose.execute import compose, execute
        from lsr_lucene.compose.operations import plan_inputs

        plans = compose(compositions, self.settings, self.encoder)
        needs_dense = any(kind == "dense" for plan in plans for kind, _ in plan_inputs(plan))
        if notes is not None:
            if needs_dense and self.dense is not None:
                notes(f"  {self.dense.describe()}")
            elif self.dense is None and self.settings.not_is_default():
                notes(missing_note("SHARD").replace("lsr-lucene index --index SHARD --dense",
                                                    "lsr-lucene index --index SHARD --dense for each shard"))
        return execute([c.qid for c in compositions], plans, self.backend, self.scale, int(hits), self.depth, warn,
                       None, self.dense if needs_dense else None, dense_depth=self.dense_depth,
                       exclude={c.qid: c.exclude for c in compositions if c.exclude})


def rank_compositions(searcher: DistributedSearcher, compositions: Sequence, sparse_encoder, scale: float,
                      hits: int, not_op: str | None = None, fusion_depth: int | None = None,
                      dense_depth: int | None = None, warn=None, notes=None) -> dict[str, list[tuple[str, float]]]:
    """:meth:`DistributedComposer.rank` of a composer made for this call."""
    return DistributedComposer(searcher, sparse_encoder, scale, not_op, fusion_depth, dense_depth).rank(
        compositions, hits, warn, notes)
