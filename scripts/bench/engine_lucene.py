"""Scale-benchmark adapters on Lucene: our SpecSearcher, Pyserini's LuceneImpactSearcher, Anserini's
SearchCollection, and the two index builds (ours: validation + IndexCollection + positional sidecar;
Anserini's own: IndexCollection with the same arguments).

Engines share one protocol (see ``bench.engine_native``): ``open(paths, threads)``; ``search(query, k)`` returns
the engine's own result object and ``hits(raw)`` converts it (untimed); ``prepare(queries)`` (untimed) and
``batch(prepared, k, threads)`` search all queries in one call, ``batch_hits(raw)`` converts.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from scripts.bench.engine_native import vm_peak
from lsr_lucene.index.impact import index_size
from lsr_lucene.io.runs import read_hits

Hits = list[tuple[str, float]]


def build_ours(paths: dict, index_dir: Path, threads: int) -> dict:
    """Our index (build_impact_index, with ``paths["reorder"]`` its docids reordered, e.g. by BP, in the build),
    then the dense-impacts sidecar of exact search (timed apart; share ``paths["dense_impacts"]``, default
    ``auto`` as ``lsr-lucene index``, 0: none) and the positional sidecar for window clauses (timed apart; it maps
    documents by id, so it follows)."""
    from lsr_lucene.index.dense_impacts import AUTO
    from lsr_lucene.index.impact import build_impact_index
    from lsr_lucene.index.positional import build_positional_field

    started = time.perf_counter()
    meta = build_impact_index(paths["vectors"], index_dir, threads=threads, overwrite=True, reorder=paths.get("reorder"))
    seconds, peak, size = time.perf_counter() - started, vm_peak(), index_size(index_dir)
    out: dict[str, Any] = {"build_s": seconds, "peak_rss_bytes": peak, "size_bytes": size, "extra": []}
    if "reorder" in meta:
        out["bp_s"] = meta["reorder"]["bp_seconds"]
        out["note"] = (f"BP in the build: {meta['reorder']['bp_seconds']:.1f} s, log-gap "
                       f"{meta['reorder']['log_gap_bits_before']:.2f} -> {meta['reorder']['log_gap_bits_after']:.2f} bits")
    share = paths.get("dense_impacts", AUTO)
    if share:
        out["extra"].append(build_dense_row(index_dir, share))
    if paths.get("positions"):
        started = time.perf_counter()
        build_positional_field(index_dir, paths["positions"])
        out["extra"].append({"engine": "ours-positions", "build_s": time.perf_counter() - started,
                             "size_bytes": index_size(index_dir / "positions"), "peak_rss_bytes": vm_peak(),
                             "note": "positional sidecar for window clauses"})
    return out


def build_dense_row(index_dir: Path, share: float | str) -> dict:
    """Build (or replace) an index's dense-impacts sidecar with ``share`` (or ``auto``), timed: its index row."""
    from lsr_lucene.index.dense_impacts import build_dense_impacts

    started = time.perf_counter()
    info = build_dense_impacts(index_dir, share)
    return {"engine": "ours-dense", "build_s": time.perf_counter() - started,
            "size_bytes": index_size(index_dir / "dense-impacts"), "peak_rss_bytes": vm_peak(),
            "note": f"dense-impacts sidecar of exact search ({share}): {info['terms']} terms in at least "
                    f"{info['min_df_share']:.4g} of the documents"}


def build_anserini(paths: dict, index_dir: Path, threads: int) -> dict:
    """Anserini's own IndexCollection on the same shards with the same arguments (no validation, no sidecar)."""
    from lsr_lucene.index.impact import index_vector_files
    from lsr_lucene.io.vectors import vector_files

    if index_dir.exists():
        shutil.rmtree(index_dir)
    index_vector_files(vector_files(paths["vectors"]), index_dir, threads)
    return {"size_bytes": index_size(index_dir)}


class OursEngine:
    """Our Java BatchSearcher: one JNI call per query (search) or a spec file searched with threads (batch)."""

    name, family, exact, batch_threads = "ours", "ours", True, True
    kinds: tuple[str, ...] = ("plain", "signed", "union", "cpt", "window")
    dense_impacts = True  # use the index's dense-impacts sidecar

    def open(self, paths: dict, threads: int) -> None:
        from lsr_lucene.search.spec_searcher import SpecSearcher

        self._searcher = SpecSearcher(paths["index"], dense_impacts=self.dense_impacts)
        if not self._searcher.has_positions:
            self.kinds = tuple(k for k in self.kinds if k != "window")
        self._work = Path(tempfile.mkdtemp(prefix="ours-", dir=paths["work"]))

    def search(self, query: dict, k: int) -> Hits:
        return self._searcher.search(query["spec"], k=k)

    def hits(self, raw: Hits) -> Hits:
        return raw

    def prepare(self, queries: list[dict]) -> Path:
        from lsr_lucene.search.specs import write_query_specs

        path = self._work / f"specs-{len(list(self._work.iterdir()))}.jsonl"
        write_query_specs([q["spec"] for q in queries], path)
        return path

    def batch(self, prepared: Path, k: int, threads: int) -> Path:
        run = prepared.with_suffix(".run")
        self._searcher.search_file(prepared, run, k=k, threads=threads, tag="ours")
        return run

    def batch_hits(self, raw: Path) -> dict[str, Hits]:
        return read_hits(raw)

    def close(self) -> None:
        self._searcher.close()
        shutil.rmtree(self._work, ignore_errors=True)


class OursPostingsEngine(OursEngine):
    """Ours on the same index with its dense-impacts sidecar left unused: exact search on postings alone (the
    baseline the sidecar is measured against, in the same run)."""

    name, dense_impacts = "ours-postings", False
    kinds: tuple[str, ...] = ("plain",)


class _PreEncoded:
    """Pyserini 'query encoder' that returns the pre-encoded vector of a qid."""

    def __init__(self):
        self.vectors: dict[str, dict[str, int]] = {}

    def encode(self, qid: str) -> dict[str, int]:
        return self.vectors[qid]


class PyseriniEngine:
    """Pyserini's LuceneImpactSearcher on our index, one ``search`` per query. Its ``batch_search`` is not timed:
    Anserini 1.7.1's ``SimpleImpactSearcher.batch_search`` fails on these queries ("queryCount = 500 is not equal
    to completedTaskCount = 288", with one thread or two), so Anserini's SearchCollection stands for batch search."""

    name, family, exact, kinds, batch_threads = "pyserini", "ours", True, ("plain",), False

    def open(self, paths: dict, threads: int) -> None:
        from lsr_lucene.jvm import runtime as jvm

        jvm.start()
        from pyserini.search.lucene import LuceneImpactSearcher

        self._encoder = _PreEncoded()
        self._searcher = LuceneImpactSearcher(str(paths["index"]), self._encoder)

    def search(self, query: dict, k: int):
        self._encoder.vectors[query["qid"]] = {t: int(w) for t, w in query["terms"].items() if w > 0}
        return self._searcher.search(query["qid"], k=k)

    def hits(self, raw) -> Hits:
        return [(h.docid, float(h.score)) for h in raw]

    def close(self) -> None:
        self._searcher.close()


class AnseriniEngine:
    """Anserini's SearchCollection (the command line's main, in-process after a warm-up: no JVM start timed),
    reading a TSV of pre-tokenized queries (each term repeated weight times) and writing a TREC run."""

    name, family, exact, kinds, batch_threads = "anserini", "ours", True, ("plain",), True
    per_query = False

    def open(self, paths: dict, threads: int) -> None:
        from lsr_lucene.jvm import runtime as jvm

        self._main = jvm.autoclass("io.anserini.search.SearchCollection").main
        self._index = str(paths["index"])
        self._work = Path(tempfile.mkdtemp(prefix="anserini-", dir=paths["work"]))

    def prepare(self, queries: list[dict]) -> Path:
        path = self._work / f"topics-{len(list(self._work.iterdir()))}.tsv"
        with open(path, "w", encoding="utf-8") as out:
            for q in queries:
                tokens = " ".join(" ".join([t] * int(w)) for t, w in q["terms"].items() if w > 0)
                out.write(f"{q['qid']}\t{tokens}\n")
        return path

    def batch(self, prepared: Path, k: int, threads: int) -> Path:
        run = prepared.with_name(f"{prepared.stem}-k{k}-t{threads}.run")
        run.unlink(missing_ok=True)
        self._main(["-index", self._index, "-topics", str(prepared), "-topicReader", "TsvString", "-output", str(run),
                    "-impact", "-pretokenized", "-hits", str(k), "-threads", str(threads), "-runtag", "anserini", "-quiet"])
        if not run.is_file():
            raise RuntimeError(f"Anserini SearchCollection wrote no run for {prepared}")
        return run

    def batch_hits(self, raw: Path) -> dict[str, Hits]:
        return read_hits(raw)

    def close(self) -> None:
        shutil.rmtree(self._work, ignore_errors=True)
