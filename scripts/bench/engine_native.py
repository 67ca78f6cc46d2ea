"""Scale-benchmark adapters for the engines outside Lucene: PISA, BMP, Seismic and scipy brute force.

Each family has ``build_<family>(paths, index_dir, threads) -> dict`` (run in a child process, timed there)
and engine classes with ``open(paths, threads)``, ``search(query, k)`` (one query; the engine's own result,
converted by ``hits`` outside the timing) and, where the engine's Python API has one, ``prepare(queries)``
(untimed) + ``batch(prepared, k, threads)`` (all queries in one call) + ``batch_hits(raw)``. Queries are
``{"qid", "terms": {term: int}, "spec": query spec}``.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from scripts.bench.synthetic import DOC_ID, load_arrays
from lsr_lucene.index.impact import index_size

Hits = list[tuple[str, float]]
PISA_ALGORITHMS = {"pisa-maxscore": "maxscore", "pisa-bmw": "block_max_wand"}
BMP_BLOCK = 32  # documents per block (the pyterrier BmpIndexer default)
BMP_MAX_IMPACT = 255  # BMP keeps document impacts as u8 (larger values wrap around)
BMP_QUERY_LEVELS = 32  # BMP's Searcher rescales query weights to ceil(w * 32 / max w) (MAX_TERM_WEIGHT)
SEISMIC_QUERY_CUT, SEISMIC_HEAP_FACTOR = 20, 0.8  # as in our pipeline benchmark (bench.cli)


def vm_peak() -> int:
    """Peak resident memory of this process in bytes (VmHWM; ru_maxrss where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _docs(collection, weights=None, order=None):
    """(docid, {term: int}) of every document, from CSR arrays, in collection order or in ``order`` (row numbers)."""
    vocab = np.asarray(collection.vocab, dtype=object)
    values = collection.weights if weights is None else weights
    for i in (range(collection.num_docs) if order is None else order.tolist()):
        a, b = collection.indptr[i], collection.indptr[i + 1]
        yield DOC_ID.format(i), dict(zip(vocab[collection.terms[a:b]].tolist(), values[a:b].tolist()))


# ---- PISA (pyterrier-pisa) -------------------------------------------------------------------------------
def _quiet_pisa(module) -> None:
    """Turn PISA's progress logging off where this build of pyterrier-pisa can (0.4.9 wheels lack the switch)."""
    try:
        module.log_level(False)
    except AttributeError:
        pass


def stream_order(paths: dict) -> np.ndarray | None:
    """The document order a build is given (``paths["order"]``: a .npy of row numbers, e.g. a BP order), or None."""
    return np.load(paths["order"]) if paths.get("order") else None


def build_pisa(paths: dict, index_dir: Path, threads: int) -> dict:
    """PISA index from the vectors (impacts as given, no stemming or stopwords), compressed with block_simdbp
    and its block-max data prepared (both are part of the build); docids follow ``stream_order``."""
    import pyterrier_pisa
    from pyterrier_pisa import PisaIndex

    _quiet_pisa(pyterrier_pisa)
    collection = load_arrays(paths["arrays"])
    index = PisaIndex(str(index_dir), stemmer="none", stops="none", threads=threads)
    index.toks_indexer(scale=1.0).index({"docno": d, "toks": v} for d, v in _docs(collection, None, stream_order(paths)))
    index.quantized(toks_scale=1.0, threads=threads)  # builds the compressed index and block-max data
    return {"size_bytes": index_size(index_dir)}


class PisaEngine:
    """PISA's quantized (dot-product) scorer through pyterrier-pisa's compiled ``retrieve`` (no DataFrames)."""

    family, exact, kinds, batch_threads = "pisa", True, ("plain",), True

    def __init__(self, name: str):
        self.name = name
        self.algorithm = PISA_ALGORITHMS[name]

    def open(self, paths: dict, threads: int) -> None:
        import pyterrier_pisa
        from pyterrier_pisa import PisaIndex

        _quiet_pisa(pyterrier_pisa)
        self._retrieve = pyterrier_pisa._pisathon.retrieve
        index = PisaIndex(str(paths["index"]), stemmer="none", stops="none", threads=threads)
        self._ctxt = index.quantized(toks_scale=1.0, query_algorithm=self.algorithm, threads=threads)._ctxt

    def prepare(self, queries: list[dict]) -> tuple[list[str], list[tuple[int, dict]]]:
        return [q["qid"] for q in queries], [(i, {t: float(w) for t, w in q["terms"].items() if w > 0})
                                             for i, q in enumerate(queries)]

    def batch(self, prepared: tuple[list[str], list], k: int, threads: int) -> tuple:
        qids, inp = prepared
        n = len(inp) * k
        qidx, ranks = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32)
        docnos, scores = np.empty(n, dtype=object), np.empty(n, dtype=np.float32)
        size = self._retrieve(self._ctxt, self.algorithm, inp, k=k, threads=threads, query_weighted=1,
                              pretokenised=True, result_qidxs=qidx, result_docnos=docnos, result_ranks=ranks,
                              result_scores=scores)
        return qids, size, qidx, docnos, scores

    def batch_hits(self, raw: tuple) -> dict[str, Hits]:
        qids, size, qidx, docnos, scores = raw
        out: dict[str, Hits] = {q: [] for q in qids}
        for i in range(size):
            out[qids[qidx[i]]].append((docnos[i], float(scores[i])))
        return out

    def search(self, query: dict, k: int) -> tuple:
        return self.batch(self.prepare([query]), k, 1)

    def hits(self, raw: tuple) -> Hits:
        return next(iter(self.batch_hits(raw).values()))

    def close(self) -> None:
        self._ctxt = None


# ---- BMP ----------------------------------------------------------------------------------------------------
def bmp_doc_weights(weights: np.ndarray) -> np.ndarray:
    """Document impacts as BMP gets them: unchanged up to 255, else rescaled linearly into 1..255."""
    top = int(weights.max()) if len(weights) else 0
    if top <= BMP_MAX_IMPACT:
        return weights
    return np.maximum(1, np.rint(weights.astype(np.float64) * BMP_MAX_IMPACT / top)).astype(np.int32)


def bmp_query(terms: dict[str, float]) -> dict[str, int]:
    """The query weights BMP's Searcher scores with: ceil(w · 32 / max w) in float32 (positive terms only)."""
    positive = {t: np.float32(w) for t, w in terms.items() if w > 0}
    if not positive:
        return {}
    scale = np.float32(BMP_QUERY_LEVELS) / max(positive.values())
    return {t: int(math.ceil(np.float32(w * scale))) for t, w in positive.items()}


def build_bmp(paths: dict, index_dir: Path, threads: int) -> dict:
    """BMP index (block size 32, no range compression) from the vectors, impacts fitted into 8 bits; docids (and
    so blocks) follow ``stream_order``."""
    import bmp

    collection = load_arrays(paths["arrays"])
    weights = bmp_doc_weights(collection.weights)
    index_dir.mkdir(parents=True, exist_ok=True)
    indexer = bmp.Indexer(str(index_dir / "index.bmp"), bsize=BMP_BLOCK, compress_range=False)
    for doc, vector in _docs(collection, weights, stream_order(paths)):
        indexer.add_document(doc, vector)
    indexer.finish()
    rescaled = bool(weights is not collection.weights)
    (index_dir / "lsr_scale.json").write_text(json.dumps({"rescaled_impacts": rescaled}))
    return {"size_bytes": index_size(index_dir / "index.bmp"),
            "note": "impacts rescaled into 1..255" if rescaled else "impacts as given (all <= 255)"}


class BmpEngine:
    """BMP exact search (alpha = beta = 1) on its own quantisation: u8 impacts, queries in 32 levels."""

    name, family, exact, kinds, batch_threads = "bmp", "bmp", True, ("plain",), False
    own_quantisation = True

    def open(self, paths: dict, threads: int) -> None:
        import bmp

        self._searcher = bmp.Searcher(str(paths["index"] / "index.bmp"))

    def search(self, query: dict, k: int) -> Hits:
        terms = {t: float(w) for t, w in query["terms"].items() if w > 0}
        if not terms:
            return []
        return self._searcher.search(terms, k=k, alpha=1.0, beta=1.0)

    def hits(self, raw) -> Hits:
        return list(zip(raw[0], map(float, raw[1]))) if raw else []

    def close(self) -> None:
        self._searcher = None


# ---- Seismic ------------------------------------------------------------------------------------------------
def build_seismic(paths: dict, index_dir: Path, threads: int, n_postings: int | None = None) -> dict:
    """Seismic index from the vectors, components numbered by term id: its default build parameters, or
    ``n_postings`` per inverted list."""
    from seismic import SeismicDataset, SeismicIndex

    collection = load_arrays(paths["arrays"])
    dataset = SeismicDataset()
    ids = [DOC_ID.format(i) for i in range(collection.num_docs)]
    dataset.add_documents_by_id(ids, collection.terms.astype(np.int64), collection.weights.astype(np.float32),
                                collection.indptr.astype(np.int64))
    extra = {} if n_postings is None else {"n_postings": int(n_postings)}
    index = SeismicIndex.build_from_dataset(dataset, num_threads=threads, **extra)
    index_dir.mkdir(parents=True, exist_ok=True)
    index.save(str(index_dir / "index"))
    return {"size_bytes": index_size(index_dir)}


class SeismicEngine:
    """Seismic (approximate), query_cut 20 and heap_factor 0.8."""

    name, family, exact, kinds, batch_threads = "seismic", "seismic", False, ("plain",), True

    def open(self, paths: dict, threads: int) -> None:
        from seismic import SeismicIndex, get_seismic_string

        file = next(paths["index"].glob("index*.seismic"), None) or paths["index"] / "index.index.seismic"
        self._index = SeismicIndex.load(str(file))
        self._ids = {t: str(i) for i, t in enumerate(json.loads(paths["vocab"].read_text()))}
        self._string = get_seismic_string()

    def _query(self, query: dict) -> tuple[np.ndarray, np.ndarray]:
        items = [(self._ids[t], w) for t, w in query["terms"].items() if w > 0 and t in self._ids]
        return (np.array([t for t, _ in items], dtype=self._string),
                np.array([w for _, w in items], dtype=np.float32))

    def search(self, query: dict, k: int, query_cut: int = SEISMIC_QUERY_CUT,
               heap_factor: float = SEISMIC_HEAP_FACTOR) -> Hits:
        """Seismic's raw hits (``hits`` names them); the bench settings unless given other query settings."""
        components, values = self._query(query)
        if not len(components):
            return []
        return self._index.search(query["qid"], components, values, k=k, query_cut=query_cut,
                                  heap_factor=heap_factor)

    def hits(self, raw) -> Hits:
        return [(str(doc), float(score)) for _, score, doc in raw]

    def prepare(self, queries: list[dict]) -> tuple:
        built = [self._query(q) for q in queries]
        keep = [i for i, (c, _) in enumerate(built) if len(c)]
        return ([q["qid"] for q in queries], np.array([queries[i]["qid"] for i in keep], dtype=self._string),
                [built[i][0] for i in keep], [built[i][1] for i in keep])

    def batch(self, prepared: tuple, k: int, threads: int) -> tuple:
        qids, ids, components, values = prepared
        results = self._index.batch_search(ids, components, values, k=k, query_cut=SEISMIC_QUERY_CUT,
                                           heap_factor=SEISMIC_HEAP_FACTOR, num_threads=threads) if len(ids) else []
        return qids, ids, results

    def batch_hits(self, raw: tuple) -> dict[str, Hits]:
        qids, _, results = raw
        out: dict[str, Hits] = {q: [] for q in qids}
        for hits in results:  # each hit names its query: results of several threads need not keep input order
            for qid, score, doc in hits:
                out[str(qid)].append((str(doc), float(score)))
        return out

    def close(self) -> None:
        self._index = None


# ---- scipy brute force ----------------------------------------------------------------------------------------
def build_scipy(paths: dict, index_dir: Path, threads: int) -> dict:
    """The term-major CSR matrix brute force scores with (kept in memory; its size is its bytes)."""
    from scripts.bench.brute_force import BruteForce

    brute = BruteForce(load_arrays(paths["arrays"]))
    return {"size_bytes": brute.nbytes, "note": "in memory (term-major CSR, float64 weights)"}


class ScipyEngine:
    """Exact brute force: one sparse matrix-vector product per query (scipy is single-threaded)."""

    name, family, exact, kinds, batch_threads = "scipy", "scipy", True, ("plain",), False

    def open(self, paths: dict, threads: int) -> None:
        from scripts.bench.brute_force import BruteForce

        self._brute = BruteForce(load_arrays(paths["arrays"]))

    def search(self, query: dict, k: int) -> Hits:
        return self._brute.search(query["terms"], k)

    def hits(self, raw: Hits) -> Hits:
        return raw

    def close(self) -> None:
        self._brute = None  # type: ignore[assignment]  # closed
