"""Property test of exactness at the edges (issue 37): every entry point against a brute force in double.

Hypothesis generates small collections (ties, impacts at 16-bit, 24-bit and float limits, ``neg_`` terms, unusual
Unicode in terms and docids, per-position float32 payloads) and queries with adversarial values (weights that round to
zero or a subnormal in float32, subnormal doubles, float32/double boundaries, magnitudes near the query weight limit,
many terms, negative weights, boolean mode, CPT pairs, windows with and without ``rerank``). Each collection is
indexed three ways (one segment natural order, BP order, two segments), with the positional sidecar where it applies
and the dense-impacts sidecar (BP: every term whose impacts fit a byte; two segments: the terms in 30 % of a
segment's documents), and every query is checked on ``SpecSearcher.search_exact`` (scores to the bit) and ``search``
(run-file scores), ``ImpactSearcher.search_spec``/``batch_search_specs``, the compose backends (Lucene and the
in-memory ``ExactBackend``) and ``lsr-lucene search --specs`` with 1 and 2 threads. The reference sums in double in
the order Java does (terms in spec order, then pairs, then windows), so scores must match bit for bit; ranking is
score descending, ties by docid.

Profiles: the default (fast) checks a few collections in the suite; ``scripts/run_property.sh`` runs the long one
(``LSR_PROPERTY_COLLECTIONS``, ``LSR_PROPERTY_QUERIES``) and records the cases checked in ``runs/property/``.
Distributed search is in ``test_distributed_search_matches_brute_force`` (Ray; one collection in the fast profile).
"""
from __future__ import annotations

import json
import math
import os
import shutil
import struct
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from lsr_lucene.index.impact import build_impact_index
from lsr_lucene.io.runs import iter_run
from test_java_queries import window_score  # tests/ is on sys.path (rootdir conftest)

COLLECTIONS = int(os.environ.get("LSR_PROPERTY_COLLECTIONS", "4"))
QUERIES = int(os.environ.get("LSR_PROPERTY_QUERIES", "40"))
REPORT = os.environ.get("LSR_PROPERTY_REPORT")  # JSON file: cases checked so far (the long profile's script)
SETTINGS = dict(max_examples=COLLECTIONS, deadline=None, derandomize=os.environ.get("LSR_PROPERTY_SEED") is None,
                database=None, suppress_health_check=list(HealthCheck),
                # shrinking rebuilds the indexes at every step (minutes): a failure is reported as generated unless
                # LSR_PROPERTY_SHRINK=1
                phases=[Phase.explicit, Phase.generate] + ([Phase.shrink] if os.environ.get("LSR_PROPERTY_SHRINK")
                                                           else []))

# terms: plain, WordPiece, punctuation, precomposed and decomposed accents (two terms), astral (a UTF-16 pair in
# Java), U+FFFD, a zero-width space; "neg_a" as a query term reads the documents' negative "a" impacts
TERMS = ["a", "b", "c", "##d", "|", "\u00e9", "e\u0301", "\U0001f600", "\ufffd", "\u200b"]
QUERY_TERMS = TERMS + ["neg_a", "unknown"]
TOKENS = ["a", "b", "c", "\u00e9"]  # positional tokens (window terms)
DOCIDS = ["d1", "d2", "d10", "D3", "d\u00e9", "d\U0001f600", "d\ufffd", "d_4", "d5", "d6", "d7", "d8", "d9", "e"]
IMPACTS = [1, 1, 2, 2, 3, 5, 7, 255, 256, 65535, 65536, 65537, 2**24 - 1, 2**24 + 1]
F32_MIN_NORMAL = 2.0**-126
WEIGHTS = [1, 2, 3, 0.5, 0.1, 1 / 3, 1.0000001, 1.00000001, 16777217.0, 2.0**31, 1e-30, 1e-300, 5e-324, 1e-320,
           1.4e-45, 1.4013e-45 * 3, F32_MIN_NORMAL, math.nextafter(F32_MIN_NORMAL, 0), 2.0**-100,
           math.nextafter(2.0**-100, 0), 3e-39, 1e20, 1e26, 0.1 + 0.2]
PAYLOADS = [0.0, 0.25, 1.0, 7.0, 100000.0, 0.1, 3e-5, 1.5]  # rounded to float32 as the index stores them
WINDOW_Q = [0, 1, 1, 0.1, 3, 1e-30, 1e-300, 2.0**-100, 0.5]


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


# --------------------------------------------------------------------------------------------- strategies

@st.composite
def collections(draw, min_docs: int = 1, max_docs: int = 10):
    """(docs [(id, vector)] in index order, tokens {id: [[token, payload]]}); many ties, no term with its neg_ twin."""
    n = draw(st.integers(min_docs, max_docs))
    ids = draw(st.permutations(DOCIDS))[:n]
    docs = []
    for docid in ids:
        if docs and draw(st.integers(0, 3)) == 0:  # a copy of an earlier vector: ties
            vec = dict(draw(st.sampled_from(docs))[1])
        else:
            terms = draw(st.lists(st.sampled_from(TERMS), min_size=1, max_size=5, unique=True))
            vec = {}
            for t in terms:
                big = draw(st.integers(0, 5)) == 0
                impact = draw(st.sampled_from(IMPACTS if big else IMPACTS[:7]))
                vec[("neg_" if draw(st.integers(0, 3)) == 0 else "") + t] = impact
            if sum(vec.values()) > 2**25:  # keep a document's repeated-term text within the JVM heap check
                vec = {t: min(w, 65537) for t, w in vec.items()}
        docs.append((docid, vec))
    tokens = {}
    for docid in ids:
        toks = draw(st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(PAYLOADS)), max_size=8))
        tokens[docid] = [[t, f32(p)] for t, p in toks]
    return docs, tokens


weights = st.one_of(st.sampled_from(WEIGHTS), st.floats(1e-3, 1e3), st.integers(1, 300))
signed_weights = st.tuples(weights, st.booleans()).map(lambda x: -x[0] if x[1] else x[0])


@st.composite
def window_clauses(draw):
    ordered = draw(st.booleans())
    n = draw(st.integers(1, 3))
    terms = draw(st.lists(st.sampled_from(TOKENS), min_size=n, max_size=n, unique=not ordered))
    clause = {"terms": [[t, draw(st.sampled_from(WINDOW_Q))] for t in terms], "ordered": ordered,
              "weight": draw(st.sampled_from([1.0, 0.5, 0.1, 2.0]))}
    if not ordered:
        clause["width"] = draw(st.integers(n, n + 3))
    return clause


@st.composite
def specs(draw, qid: str, windows: bool):
    """A valid spec: signed or boolean terms (sometimes many), pairs, windows (with or without rerank)."""
    boolean = draw(st.integers(0, 4)) == 0
    many = draw(st.integers(0, 7)) == 0
    pool = QUERY_TERMS + [f"x{i}" for i in range(40)] if many else QUERY_TERMS
    terms = draw(st.dictionaries(st.sampled_from(pool), weights if boolean else signed_weights,
                                 max_size=45 if many else 5))
    spec: dict = {"qid": qid, "terms": terms}
    if draw(st.integers(0, 3)) == 0:
        spec["pairs"] = [[a, b, w] for a, b, w in draw(st.lists(
            st.tuples(st.sampled_from(TERMS[:5]), st.sampled_from(TERMS[:5]), weights if boolean else signed_weights),
            max_size=3))]
    if windows and draw(st.integers(0, 3)) == 0:
        spec["windows"] = draw(st.lists(window_clauses(), min_size=1, max_size=2))
        if draw(st.booleans()):
            spec["rerank"] = draw(st.integers(1, 5))
    if boolean:
        spec["mode"] = "boolean"
    if not any(w != 0 for w in terms.values()) and not any(p[2] != 0 for p in spec.get("pairs", [])) \
            and (not spec.get("windows") or spec.get("rerank")):
        spec["terms"]["a"] = 1
    return spec


# --------------------------------------------------------------------------------------------- brute force

def first_stage(vec: dict, spec: dict) -> tuple[float, bool]:
    """(score, matched) of the terms and pairs in double, in spec order: Σ w·(impact − neg impact) (boolean mode:
    w·impact), then w·sqrt(a·b) per pair; matched when a clause contributes positively."""
    score, matched = 0.0, False
    boolean = spec.get("mode") == "boolean"
    for t, w in spec["terms"].items():
        f, fn = vec.get(t, 0), 0 if boolean else vec.get("neg_" + t, 0)
        score += w * (f - fn)
        matched |= (w > 0 and f > 0) or (w < 0 and fn > 0)
    for a, b, w in spec.get("pairs", []):
        if w != 0 and vec.get(a, 0) > 0 and vec.get(b, 0) > 0:
            score += w * math.sqrt(vec[a] * vec[b])
            matched |= w > 0
    return score, matched


def brute_force(docs: list, tokens: dict, spec: dict, k: int) -> list[tuple[str, float]]:
    """The exact top k: windows join the full search, or with ``rerank`` N rescore the first stage's top max(k, N)."""
    windows, rerank = spec.get("windows", []), spec.get("rerank", 0)
    scored = []
    for docid, vec in docs:
        s, matched = first_stage(vec, spec)
        if windows and not rerank:
            for clause in windows:
                ws = window_score(tokens[docid], clause)
                if ws is not None:
                    s += ws
                    matched = True
        if matched:
            scored.append((docid, s))
    scored.sort(key=lambda h: (-h[1], h[0]))
    if windows and rerank:
        rescored = []
        for docid, s in scored[:max(k, rerank)]:
            for clause in windows:
                ws = window_score(tokens[docid], clause)
                if ws is not None:
                    s += ws
            rescored.append((docid, s))
        scored = sorted(rescored, key=lambda h: (-h[1], h[0]))
    return scored[:k]


def as_run(hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Hits as a run file holds them: scores printed with six decimals."""
    return [(d, float(f"{s:.6f}")) for d, s in hits]


# --------------------------------------------------------------------------------------------- indexes

def write_collection(root: Path, docs: list, tokens: dict) -> tuple[Path, Path]:
    (root / "vectors").mkdir(parents=True)
    (root / "vectors" / "part-00000.jsonl").write_text(
        "".join(json.dumps({"id": d, "contents": "", "vector": v}) + "\n" for d, v in docs), encoding="utf-8")
    (root / "tokens.jsonl").write_text("".join(json.dumps({"id": d, "tokens": t}) + "\n" for d, t in tokens.items()),
                                       encoding="utf-8")
    return root / "vectors", root / "tokens.jsonl"


def two_segments(root: Path, docs: list) -> Path:
    """The collection as one index of two segments (each half indexed alone, the segments added side by side)."""
    from jnius import cast

    from lsr_lucene.jvm import runtime as jvm

    def directory(path: Path):
        return cast("org.apache.lucene.store.Directory", jvm.autoclass("org.apache.lucene.store.FSDirectory").open(
            jvm.autoclass("java.nio.file.Paths").get(str(path))))

    half = (len(docs) + 1) // 2
    parts = []
    for i, part in enumerate((docs[:half], docs[half:])):
        vectors, _ = write_collection(root / f"half{i}", part, {})
        build_impact_index(vectors, root / f"half{i}" / "index", threads=1)
        parts.append(directory(root / f"half{i}" / "index"))
    writer = jvm.autoclass("org.apache.lucene.index.IndexWriter")(
        directory(root / "several"), jvm.autoclass("org.apache.lucene.index.IndexWriterConfig")())
    writer.addIndexes(*parts)
    writer.close()
    (root / "several" / "lsr_lucene.json").write_text((root / "half0" / "index" / "lsr_lucene.json").read_text())
    return root / "several"


def build_variants(root: Path, docs: list, tokens: dict) -> dict[str, tuple[Path, bool]]:
    """name -> (index, whether it has positions)."""
    vectors, positions = write_collection(root, docs, tokens)
    variants = {}
    # bp: every term whose impacts fit a byte on the dense-impacts sidecar (exact search's array sums)
    for name, options in (("natural", {}), ("bp", {"reorder": "bp", "seed": 1, "dense_impacts": 1e-9})):
        build_impact_index(vectors, root / name, threads=1, positions=positions, **options)
        variants[name] = (root / name, True)
    if len(docs) > 1:
        from lsr_lucene.index.dense_impacts import build_dense_impacts

        several = two_segments(root, docs)
        build_dense_impacts(several, 0.3)  # per segment: its frequent terms dense, the others on postings
        variants["several"] = (several, False)
    return variants


# --------------------------------------------------------------------------------------------- the property

class Cases:
    """Cases checked (a query on every entry point of one index variant), written to REPORT as they accumulate."""

    def __init__(self):
        self.queries = self.cases = self.collections = 0
        self.started = time.time()

    def add(self, queries: int, cases: int) -> None:
        self.collections += 1
        self.queries += queries
        self.cases += cases
        if REPORT:
            Path(REPORT).write_text(json.dumps({"collections": self.collections, "queries": self.queries,
                                                "cases": self.cases, "seconds": round(time.time() - self.started)}))


CASES = Cases()


def check_query(searcher, docs, tokens, spec, k) -> None:
    expected = brute_force(docs, tokens, spec, k)
    got = [(d, s) for d, _, s in searcher.search_exact(spec, k)]
    assert got == expected, ("search_exact", spec, k)
    assert searcher.search(spec, k) == [(d, s if s.is_integer() else float(f"{s:.6f}")) for d, s in expected], \
        ("search", spec, k)


def check_batches(index: Path, docs, tokens, batch: list[dict], k: int, tmp: Path, signed_only_exact) -> None:
    """The batch entry points: the CLI with 1 and 2 threads, ImpactSearcher, the compose backends."""
    import warnings

    from lsr_lucene import ImpactSearcher
    from lsr_lucene.cli import main as cli
    from lsr_lucene.compose.backends import LuceneBackend

    expected = {s["qid"]: as_run(brute_force(docs, tokens, s, k)) for s in batch}
    specs_file = tmp / "specs.jsonl"
    specs_file.write_text("".join(json.dumps(s) + "\n" for s in batch), encoding="utf-8")
    for threads in (1, 2):
        run = tmp / f"run{threads}"
        assert cli(["search", "--index", str(index), "--specs", str(specs_file), "--output", str(run), "--hits", str(k),
                    "--threads", str(threads), "--overwrite"]) == 0
        got = {s["qid"]: [] for s in batch}
        for row in iter_run(run):
            got[row.qid].append((row.docid, row.score))
        assert got == expected, ("cli", threads)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unknown terms are warned about
        with ImpactSearcher(str(index)) as searcher:
            found = searcher.batch_search_specs(batch, k=k, threads=2)
            assert {q: [(h.docid, h.score) for h in hits] for q, hits in found.items()} == expected, "batch_search_specs"
            for spec in batch[:5]:
                assert [(h.docid, h.score) for h in searcher.search_spec(spec, k=k)] == expected[spec["qid"]], \
                    ("search_spec", spec)
    backend = LuceneBackend(index, threads=2)
    try:
        assert backend.search_many(batch, k) == expected, "LuceneBackend.search_many"
        assert backend.search_many(batch, k, threads=1) == expected, "LuceneBackend.search_many in memory"
    finally:
        backend.close()
    exact = signed_only_exact()
    for spec in batch:
        if spec.get("mode") != "boolean" and not spec.get("windows"):
            assert exact.search(spec, k) == brute_force(docs, tokens, spec, k), ("ExactBackend", spec)


@settings(**SETTINGS)
@given(collection=collections(), data=st.data())
def test_every_entry_point_matches_brute_force(tmp_path_factory, collection, data):
    from lsr_lucene.compose.backends import ExactBackend
    from lsr_lucene.search.spec_searcher import SpecSearcher

    docs, tokens = collection
    # queries first: an example whose draws overrun Hypothesis's buffer (about 150 queries) is dropped before it builds
    batch = [data.draw(specs(f"q{i}", windows=True)) for i in range(QUERIES)]
    ks = [data.draw(st.integers(1, len(docs) + 2)) for _ in batch]
    root = tmp_path_factory.mktemp("property")
    variants = build_variants(root, docs, tokens)
    cases = 0
    for name, (index, positions) in variants.items():
        queries = batch if positions else [s for s in batch if not s.get("windows")]
        with SpecSearcher(index) as searcher:
            for spec, k in zip(queries, ks):
                check_query(searcher, docs, tokens, spec, k)
                cases += 1
        if queries:
            check_batches(index, docs, tokens, queries, max(ks), root, lambda: ExactBackend(docs))
    CASES.add(len(batch), cases)
    shutil.rmtree(root, ignore_errors=True)  # the long profile builds thousands (a failing example's stay)


@pytest.fixture(scope="module")
def ray_cluster():
    """One local Ray instance for every example (started here unless one runs already)."""
    ray = pytest.importorskip("ray")
    from test_distributed import RAY_OPTIONS

    started = not ray.is_initialized()
    if started:  # a new local instance, not a cluster another process on this machine started
        ray.init(address="local", num_cpus=2, **RAY_OPTIONS)
    yield ray
    if started:
        ray.shutdown()


@pytest.mark.slow  # starts a Ray instance
@pytest.mark.skipif(os.environ.get("LSR_PROPERTY_DISTRIBUTED", "1") == "0", reason="LSR_PROPERTY_DISTRIBUTED=0")
@settings(**{**SETTINGS, "max_examples": max(2, COLLECTIONS // 10)})
@given(collection=collections(min_docs=2), data=st.data())
def test_distributed_search_matches_brute_force(ray_cluster, tmp_path_factory, collection, data):
    """Scatter-gather over two shard indexes (Ray actors), exact, windows with and without rerank: the same hits and
    run-file scores as the brute force over the whole collection."""
    from lsr_lucene.cli import main as cli

    docs, tokens = collection
    root = tmp_path_factory.mktemp("property-distributed")
    vectors, positions = write_collection(root, docs[: (len(docs) + 1) // 2], tokens)
    (vectors / "part-00001.jsonl").write_text(  # a second shard: the other half
        "".join(json.dumps({"id": d, "contents": "", "vector": v}) + "\n" for d, v in docs[(len(docs) + 1) // 2:]),
        encoding="utf-8")
    batch = [data.draw(specs(f"q{i}", windows=True)) for i in range(QUERIES)]
    k = data.draw(st.integers(1, len(docs) + 2))
    (root / "specs.jsonl").write_text("".join(json.dumps(s) + "\n" for s in batch), encoding="utf-8")
    assert cli(["distributed", "index", "--input", str(vectors), "--index", str(root / "dindex"),
                "--num-workers", "2", "--positions", str(positions)]) == 0
    expected = {s["qid"]: as_run(brute_force(docs, tokens, s, k)) for s in batch}
    for name, extra, queries in (("exact", [], batch),):
        if not queries:
            continue
        (root / "specs.jsonl").write_text("".join(json.dumps(s) + "\n" for s in queries), encoding="utf-8")
        assert cli(["distributed", "search", "--index", str(root / "dindex"), "--specs", str(root / "specs.jsonl"),
                    "--output", str(root / name), "--hits", str(k), *extra]) == 0
        got = {s["qid"]: [] for s in queries}
        for row in iter_run(root / name):
            got[row.qid].append((row.docid, row.score))
        assert got == {s["qid"]: expected[s["qid"]] for s in queries}, name
    CASES.add(0, len(batch))
    shutil.rmtree(root, ignore_errors=True)
