"""Search over a segment index: impact scores of the matching segments, then score-max, ExactSDM or SoftSDM
features of the top documents, or ExactSDM as one Lucene query over all segments."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from lsr_lucene.errors import InputError
from lsr_lucene.longdocs.queries import Query, quantised_query
from lsr_lucene.io.runs import read_hits, write_run
from lsr_lucene.longdocs.runs import collapse
from lsr_lucene.longdocs.sdm_features import (SdmSettings, exact_features, feature_table, read_own_arrays,
                                              soft_features_for)
from lsr_lucene.longdocs.segment import parse_segment_id, within_first


def segment_hits(index: str | Path, queries: Mapping[str, Mapping[str, float]], hits: int, threads: int = 2
                 ) -> dict[str, dict[str, float]]:
    """Impact scores of every matching segment (up to ``hits``) per query, as {qid: {segment id: score}}."""
    import tempfile

    from lsr_lucene.search.spec_searcher import SpecSearcher

    specs = [{"qid": q, "terms": dict(v)} for q, v in queries.items() if v]
    with tempfile.TemporaryDirectory() as tmp, SpecSearcher(index) as searcher:
        run = Path(tmp) / "segments.run"
        searcher.search_to_run(specs, run, k=hits, threads=threads, tag="segments")
        return {q: dict(lines) for q, lines in read_hits(run).items()}


def index_encoder_settings(index: str | Path) -> dict:
    """The encoder settings recorded in an index's metadata ({} when none); InputError for an index of another kind."""
    from lsr_lucene.index.impact import read_index_metadata
    from lsr_lucene.index.kind import IMPACT, require_index_kind

    require_index_kind(index, IMPACT, "longdocs search", must_exist=False)
    return read_index_metadata(index).get("encoder", {})


class SegmentSearch:
    """Score-max, ExactSDM and SoftSDM over a segment index for one set of queries."""

    def __init__(self, index: str | Path, queries: Mapping[str, Query], combine: str, k: int | None,
                 settings: SdmSettings, threads: int = 2):
        from lsr_lucene.index.impact import read_index_metadata

        self.index = Path(index)
        if not self.index.is_dir():
            raise InputError(f"{index}: no such index directory")
        meta = read_index_metadata(index)
        if not meta.get("positions"):
            raise InputError(f"{index}: not a segment index with the positional field (build it with longdocs index)")
        self.scale = float(meta.get("encoder", {}).get("scale") or 100)
        self.queries, self.combine, self.k, self.settings, self.threads = queries, combine, k, settings, threads
        q_int = {q: quantised_query(v, self.scale, combine) for q, v in queries.items()}
        self.t_scores = segment_hits(index, q_int, hits=int(meta.get("indexed", 100000)), threads=threads)

    def score_max(self) -> dict[str, dict[str, float]]:
        return {q: collapse(self.t_scores.get(q, {}), self.k) for q in self.queries}

    def candidates(self, depth: int) -> dict[str, list[str]]:
        """Segment ids (numbers < k) of each query's top-``depth`` score-max documents."""
        from lsr_lucene.io.ranking import ranking as rank

        out = {}
        for q, docs in self.score_max().items():
            top = set(rank(docs)[:depth])
            out[q] = [s for s in self.t_scores.get(q, {}) if parse_segment_id(s)[0] in top
                      and within_first(s, self.k)]
        return out

    def features(self, kind: str, depth: int, encoded: str | Path | None = None) -> dict[str, dict]:
        """qid -> docid -> segment number -> (T, O, U)."""
        from lsr_lucene.search.spec_searcher import SpecSearcher

        cands = self.candidates(depth)
        norm = self.scale * self.scale
        out = {}
        if kind == "exact":
            with SpecSearcher(self.index) as searcher:
                for q, seg_ids in cands.items():
                    extra = exact_features(searcher, self.queries[q], seg_ids, self.settings)
                    out[q] = feature_table({s: self.t_scores[q][s] for s in seg_ids}, extra, norm)
            return out
        from transformers import AutoTokenizer

        from lsr_lucene.encode.models import resolve
        from lsr_lucene.longdocs.softsdm import TopKStore

        if encoded is None:
            raise InputError("soft-sdm needs --encoded (the directory with the SoftSDM top-k store)")
        store = TopKStore(Path(encoded) / "soft")
        from lsr_lucene.search.impact import query_model_name

        model = query_model_name(self.index, index_encoder_settings(self.index))
        vocab = AutoTokenizer.from_pretrained(resolve(model)).get_vocab()
        tokens = read_own_arrays(encoded, {s for ids in cands.values() for s in ids}, vocab)
        for q, seg_ids in cands.items():
            extra = soft_features_for(store, tokens, self.queries[q], seg_ids, self.settings, vocab)
            out[q] = feature_table({s: self.t_scores[q][s] for s in seg_ids}, extra, norm)
        return out

    def full_exact_sdm(self, lambdas: Sequence[float], output: str | Path, hits: int = 1000,
                       java_rerank: int = 0, overwrite: bool = False) -> None:
        """ExactSDM as one Lucene query per query over segments (segment pooling): λ_T·terms + windows, then
        collapsed to documents; ``java_rerank`` N applies the windows to the top-N segments only (BatchSearcher)."""
        from lsr_lucene.longdocs.sdm import query_clauses, window_dicts

        lt, lo, lu = lambdas
        specs = []
        for q, query in self.queries.items():
            vec = quantised_query(query, self.scale, self.combine)
            clauses = query_clauses(query.sequences, self.settings.ngram, self.settings.min_weight,
                                    self.settings.max_clauses)
            windows = (window_dicts(clauses, True, weight=lo) if lo > 0 else []) + \
                (window_dicts(clauses, False, self.settings.width, weight=lu) if lu > 0 else [])
            spec: dict[str, Any] = {"qid": q, "terms": {t: w * lt / (self.scale * self.scale) for t, w in vec.items()}}
            if windows:
                spec["windows"] = windows
            if java_rerank:
                spec["rerank"] = java_rerank
            if spec["terms"] or (windows and not java_rerank):
                specs.append(spec)
        import tempfile

        from lsr_lucene.search.spec_searcher import SpecSearcher

        segs: dict[str, list[tuple[str, float]]] = {}
        depth = max(hits * (self.k or 8), java_rerank)
        with tempfile.TemporaryDirectory() as tmp, SpecSearcher(self.index) as searcher:
            run = Path(tmp) / "segments.run"
            while specs:
                searcher.search_to_run(specs, run, k=depth, threads=self.threads, tag="exact-sdm")
                segs.update(read_hits(run))
                # a query whose top documents are not settled yet by its top segments is searched deeper (java_rerank
                # N: the windows' pool is the first stage's top max(depth, N), so its depth stays as asked)
                specs = [] if java_rerank else [s for s in specs if not _settled(segs.get(s["qid"], []), depth, hits,
                                                                                    self.k)]
                depth *= 4
        write_run({q: collapse(dict(segs.get(q, [])), self.k) for q in self.queries}, output, "exact-sdm-full",
                  overwrite=overwrite, hits=hits)


def _settled(segments: Sequence[tuple[str, float]], depth: int, hits: int, k: int | None) -> bool:
    """Whether a query's top ``depth`` segments (best first) fix its top ``hits`` documents by score-max over
    segments numbered < k: the list is complete, or ``hits`` documents score above its last segment, which every
    segment left out scores at most (a document tied with it could still enter by docid)."""
    if len(segments) < depth:
        return True
    floor = segments[-1][1]
    return sum(1 for score in collapse(dict(segments), k).values() if score > floor) >= hits
