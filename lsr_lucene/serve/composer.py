"""Composed (negation / set) queries for the server and PyTerrier: ``lsr-lucene compose`` as an object.

``Composer`` has ``ComposeSearcher``'s interface (``search(query, k)``, ``batch_search(queries, qids, k)``, hits
with ``.docid`` / ``.score``) over the compose stage's own code path (cue parser → plans → ``execute`` /
``run_one``), so its hits equal the ``lsr-lucene compose`` run. Encoding (``plan``) and searching (``run``) are
separate steps so that a server can encode under its encoder lock and search outside it.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from lsr_lucene.errors import InputError


@dataclass(frozen=True)
class ComposedHit:
    """One hit of a composed query: external ``docid`` and ``score`` (as the run file prints it)."""

    docid: str
    score: float


class Composer:
    """Search natural-language negations (``"tea without caffeine"``) or composition trees
    (``{"op": "not", "a": "tea", "b": "caffeine"}``) over an impact index, as ``lsr-lucene compose`` does."""

    def __init__(self, index_dir: str | Path, encoder=None, operation: str | None = None, not_op: str | None = None,
                 and_op: str | None = None, or_op: str | None = None, depth: int | None = None,
                 lam: float | None = None, gate: float | None = None, top_pairs: int = 5, pair_weight: float = 1.0,
                 threads: int = 1, encoder_lock: threading.Lock | None = None):
        """``encoder``: None (the index's model), a model name, or a loaded ``SparseEncoder`` (shared with an
        ``ImpactSearcher``: pass ``encoder_lock`` too when several threads use it)."""
        from lsr_lucene.compose.backends import LuceneBackend
        from lsr_lucene.compose.execute import DEFAULT_FUSION_DEPTH
        from lsr_lucene.compose.query_encoder import QueryEncoder
        from lsr_lucene.search.impact import index_settings

        info = index_settings(index_dir)
        self.index_dir = str(index_dir)
        self.scale = float(info.get("scale") or 100)
        self.depth = int(depth or DEFAULT_FUSION_DEPTH)
        self.settings = self.make_settings(operation, not_op, and_op, or_op, lam, gate, top_pairs, pair_weight)
        self._backend = LuceneBackend(self.index_dir, threads)
        if encoder is None or isinstance(encoder, (str, Path)):
            options = {k: info[k] for k in ("activation", "pooling", "epsilon") if info.get(k) is not None}
            model = str(encoder) if encoder is not None else info.get("model") or "splade-tiny"
            self._encoder = QueryEncoder(model, "full", threads=threads, **options)
        else:
            self._encoder = QueryEncoder(encoder=encoder)
        self._lock = encoder_lock or threading.Lock()

    @staticmethod
    def make_settings(operation: str | None = None, not_op: str | None = None, and_op: str | None = None,
                      or_op: str | None = None, lam: float | None = None, gate: float | None = None,
                      top_pairs: int = 5, pair_weight: float = 1.0):
        """Operation settings as ``lsr-lucene compose``'s options make them (unknown names: InputError)."""
        from lsr_lucene.compose.operations import DEFAULT_GATE, Settings

        per_type = {op: name for op, name in (("not", not_op), ("and", and_op), ("or", or_op)) if name}
        return Settings(operation, per_type, lam, top_pairs, pair_weight, DEFAULT_GATE if gate is None else gate)

    @staticmethod
    def composition(query: str | Mapping, qid: str = "q"):
        """A ``Composition`` of a natural-language query (cue parser) or a JSON tree (validated)."""
        from lsr_lucene.compose.compositions import Composition, parse_topics
        from lsr_lucene.compose.tree import tree_from_json

        if isinstance(query, str):
            if not query.strip():
                raise InputError(f"query {qid}: empty query")
            return parse_topics({qid: query})[0]
        return Composition(qid, tree_from_json(query, "composition"))

    def plan(self, compositions: Sequence, settings=None) -> list:
        """Encode the compositions' texts (under the encoder lock) and build their plans."""
        from lsr_lucene.compose.execute import compose

        with self._lock:
            return compose(list(compositions), settings or self.settings, self._encoder)

    def run(self, qid: str, plan, k: int = 10) -> list[ComposedHit]:
        """Hits of one plan, with single-query JVM calls (no files)."""
        from lsr_lucene.compose.execute import run_one

        return [ComposedHit(d, s) for d, s in run_one(qid, plan, self._backend, self.scale, k, self.depth)]

    def search(self, query: str | Mapping, k: int = 10, settings=None) -> list[ComposedHit]:
        """Top-k hits of one composed query, best first."""
        comp = self.composition(query)
        return self.run(comp.qid, self.plan([comp], settings)[0], k)

    def batch_search(self, queries: Sequence[str | Mapping], qids: Sequence[str], k: int = 10,
                     threads: int = 1, settings=None) -> dict[str, list[ComposedHit]]:
        """Top-k hits of many composed queries, searched as one batch in the JVM: a dict qid → hits."""
        from lsr_lucene.compose.execute import execute

        if len(queries) != len(qids):
            raise InputError(f"{len(queries)} queries but {len(qids)} qids")
        comps = [self.composition(q, str(qid)) for q, qid in zip(queries, qids)]
        plans = self.plan(comps, settings)
        self._backend.threads = max(1, int(threads))
        results = execute([c.qid for c in comps], plans, self._backend, self.scale, k, self.depth)
        return {qid: [ComposedHit(d, s) for d, s in hits] for qid, hits in results.items()}

    def close(self) -> None:
        self._backend.close()
