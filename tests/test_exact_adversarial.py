"""Adversarial exactness: what the property tests (test_exact_property, test_edges) leave out, against two brute
forces computed independently from the JSONL (a dict loop in double, in spec order, and a numpy matrix product).

Seeded numpy generators make collections with a term beside its ``neg_`` twin in one document, ``neg_neg_`` terms,
empty vectors, impacts up to 2^24 + 1, all-tied scores and Unicode ids and terms, indexed in natural order, BP order
with the dense-impacts sidecar, and as two segments; queries with absent terms, only negative weights, zero weights,
``neg_`` query terms, many tied documents, k = 1 up to 2^31 - 1; and heap factors at the edges (1, just below 1,
0.5, a value a float32 rounds down, one below the smallest float32). Exact search must give the brute-force top k
(ties by docid); a heap factor H < 1 must keep its promise (hits with exact scores, every document scoring at least
the exact k-th / H found). The heap factor's two defects found here (H rounded down to a float32 pruned documents it
promises; H below the smallest float32 became 0 and an error) have their minimal cases first.
"""
from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from lsr_lucene.cli import main as cli
from lsr_lucene.index.impact import build_impact_index
from lsr_lucene.io.runs import iter_run
from lsr_lucene.search.spec_searcher import SpecSearcher, java_heap_factor
from test_exact_property import first_stage, two_segments, write_collection  # tests/ is on sys.path (rootdir conftest)


def build(root: Path, docs: list[tuple[str, dict]], **options) -> Path:
    vectors, _ = write_collection(root, docs, {})
    build_impact_index(vectors, root / "index", threads=1, **options)
    return root / "index"


# --------------------------------------------------------------------------------------------- two brute forces

def as_spec(query: dict) -> dict:
    """A spec, or a terms dict as a spec of terms only."""
    return query if "qid" in query else {"qid": "q", "terms": query}


def brute_dict(docs: list[tuple[str, dict]], query: dict, k: int) -> list[tuple[str, float]]:
    """Σ w·(impact − neg_ impact) (mode boolean: w·impact) in double, terms in spec order, then w·sqrt(a·b) per pair
    holding both terms, over the documents a positive clause matches (a positive weight's term, a negative weight's
    neg_ term in signed mode, a positive pair); score descending, ties by docid."""
    spec = as_spec(query)
    hits = [(docid, score) for docid, (score, matched) in ((d, first_stage(vec, spec)) for d, vec in docs) if matched]
    return sorted(hits, key=lambda h: (-h[1], h[0]))[:k]


def brute_matrix(docs: list[tuple[str, dict]], query: dict, k: int) -> list[tuple[str, float]]:
    """The same top k from a document-term matrix D: scores D·q + Σ w·sqrt(D_a ∘ D_b), matches
    (D > 0)·[positive clause columns] + [positive pairs held] > 0."""
    spec = as_spec(query)
    boolean = spec.get("mode") == "boolean"
    terms, pairs = spec["terms"], spec.get("pairs", [])
    vocab = sorted({t for _, v in docs for t in v} | set(terms) | {"neg_" + t for t in terms}
                   | {t for p in pairs for t in p[:2]})
    col = {t: j for j, t in enumerate(vocab)}
    matrix = np.zeros((len(docs), len(vocab)))
    for i, (_, vec) in enumerate(docs):
        for t, f in vec.items():
            matrix[i, col[t]] = f
    q = np.zeros(len(vocab))
    clause = np.zeros(len(vocab))
    for t, w in terms.items():
        q[col[t]] += w
        if not boolean:
            q[col["neg_" + t]] -= w
        clause[col[t] if w > 0 or boolean else col["neg_" + t]] += w != 0
    scores = matrix @ q
    hits = (matrix > 0) @ clause
    for a, b, w in pairs:
        both = np.sqrt(matrix[:, col[a]] * matrix[:, col[b]])
        scores = scores + w * both
        hits = hits + ((both > 0) & (w > 0))
    matched = np.flatnonzero(hits > 0)
    ids = np.array([d for d, _ in docs], dtype=object)
    order = sorted(matched.tolist(), key=lambda i: (-scores[i], ids[i]))
    return [(ids[i], float(scores[i])) for i in order[:k]]


def reference(docs, query: dict, k) -> list[tuple[str, float]]:
    """The dict brute force's top k, after checking it against the matrix one over the whole collection: the same
    matching documents, scores equal to rounding (they sum in different orders, so near ties may swap)."""
    spec = as_spec(query)
    a, b = dict(brute_dict(docs, spec, len(docs))), dict(brute_matrix(docs, spec, len(docs)))
    assert a.keys() == b.keys(), (spec, a, b)
    largest = max((f for _, v in docs for f in v.values()), default=0) * \
        (sum(map(abs, spec["terms"].values())) + sum(abs(p[2]) for p in spec.get("pairs", [])))
    assert [a[d] for d in a] == pytest.approx([b[d] for d in a], rel=1e-12, abs=1e-15 * largest), (spec, a, b)
    return brute_dict(docs, spec, k)


def written(hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Scores as a run file (and SpecSearcher.search) gives them: six decimals unless integral."""
    return [(d, s if float(s).is_integer() else float(f"{s:.6f}")) for d, s in hits]


def check_heap_promise(got: list[tuple[str, float]], docs, query: dict, k: int, h: float) -> None:
    """Heap factor h's promise: hits in run order with exact scores, every document scoring >= exact k-th / h
    found; h = 1 (and queries it leaves exact: weights not all positive integers, pairs): the exact top k itself."""
    spec = as_spec(query)
    exact = reference(docs, spec, k)
    plain = all(w > 0 and float(w).is_integer() for w in spec["terms"].values() if w != 0) and \
        not any(p[2] for p in spec.get("pairs", []))  # zero weights drop
    if h == 1 or not plain:
        assert got == written(exact), (spec, k, h)
        return
    every = dict(reference(docs, spec, len(docs)))
    assert all(every[d] == s for d, s in got), (spec, k, h, got)
    assert got == sorted(got, key=lambda x: (-x[1], x[0]))
    if exact:
        kth = exact[-1][1]
        assert {d for d, s in exact if s >= kth / h} <= {d for d, _ in got}, (spec, k, h, got, exact)


# --------------------------------------------------------------------------------------------- heap factor defects

def test_heap_factor_is_never_rounded_down_on_block_max_search(tmp_path):
    """Dense-impacts block-max search (DenseBlockMaxScorer) with H = 0.70000001: a float32 rounds it down to
    0.69999999, so blocks were pruned against ceil(7 / 0.69999999) = 11 and x (score 10 >= 7 / H, promised) was
    missed once a0 and a1 filled the top 2. Python now hands Java the float32 at or above H."""
    h = 0.70000001
    assert 7 / h <= 10 and float(np.float32(h)) < h  # x is promised; float32 rounds H down
    docs = [("a0", {"a": 7}), ("a1", {"a": 7})] + [(f"f{i:02d}", {"z": 1}) for i in range(70)] + [("x", {"a": 10})]
    index = build(tmp_path, docs, dense_impacts=1e-9)  # x in block 2, a0 and a1 in block 0 (blocks of 32)
    spec = {"qid": "q", "terms": {"a": 1}}
    with SpecSearcher(index) as searcher:
        assert searcher._java.denseImpactsProblem() == ""  # the block-max scorer is the one searched
        got = searcher.search(spec, 2, heap_factor=h)
        check_heap_promise(got, docs, spec["terms"], 2, h)
        assert got == [("x", 10.0), ("a0", 7.0)]
        searcher.heap_factor = h  # the searcher's own heap factor crosses the same way
        assert searcher.search(spec, 2) == got and searcher.heap_factor == h
    from lsr_lucene import ImpactSearcher

    with ImpactSearcher(str(index), encoder=object(), heap_factor=h) as searcher:
        assert [(x.docid, x.score) for x in searcher.search_spec(spec, 2)] == got
        assert {q: [(x.docid, x.score) for x in hits] for q, hits in searcher.batch_search_specs([spec], 2).items()} \
            == {"q": got}
    (tmp_path / "specs.jsonl").write_text(json.dumps(spec) + "\n")
    assert cli(["search", "--index", str(index), "--specs", str(tmp_path / "specs.jsonl"), "--output",
                str(tmp_path / "run"), "--hits", "2", "--heap-factor", repr(h)]) == 0
    assert [(r.docid, r.score) for r in iter_run(tmp_path / "run")] == got


def test_heap_factor_is_never_rounded_down_on_window_search(tmp_path):
    """The windowed MaxScore scorer (no sidecar) with H = 8338244 / 14931375: x scores exactly 8338244 / H, but
    8338244 / float32(H) rounds to 14931376 in float, so x's window (bound 14931375) was skipped."""
    kth, s = 8_338_244, 14_931_375
    h = kth / s
    assert kth / h <= s and float(np.float32(kth) / np.float32(h)) > s  # x is promised; the float cut was above it
    docs = [("a0", {"a": kth}), ("a1", {"a": kth})] + [(f"f{i:04d}", {"z": 1}) for i in range(4100)] + \
        [("x", {"a": s})]  # x in the second window of 4,096 docids
    index = build(tmp_path, docs)
    with SpecSearcher(index) as searcher:
        got = searcher.search({"qid": "q", "terms": {"a": 1}}, 2, heap_factor=h)
    check_heap_promise(got, docs, {"a": 1}, 2, h)
    assert got == [("x", float(s)), ("a0", float(kth))]


@pytest.mark.parametrize("h", [1e-50, 5e-324, 1e-45, float(np.finfo(np.float32).tiny)])
def test_heap_factor_below_the_smallest_float32_is_searched(tmp_path, h):
    """A heap factor in (0, 1) that float32 rounds to 0 was refused by Java ("must be in (0, 1], got 0.0") although
    every entry point accepts it: it now prunes as the smallest float32 does, and keeps its (vacuous) promise."""
    docs = [("d1", {"a": 3}), ("d2", {"a": 5, "b": 1}), ("d3", {"a": 5})]
    index = build(tmp_path, docs, dense_impacts=1e-9)
    assert 0 < java_heap_factor(h) and java_heap_factor(h) >= h
    for dense in (True, False):
        with SpecSearcher(index, dense_impacts=dense) as searcher:
            for terms in ({"a": 1}, {"a": 1, "b": 2}, {"a": -1, "b": 1}):
                for k in (1, 2, 5):
                    check_heap_promise(searcher.search({"qid": "q", "terms": terms}, k, heap_factor=h), docs,
                                       terms, k, h)


def test_java_heap_factor_rounds_up_to_float32():
    for h in (1.0, 0.5, 0.7, 0.70000001, math.nextafter(1.0, 0), 1e-50, 5e-324, 1 / 3, 0.1):
        f = java_heap_factor(h)
        assert f >= h and f <= 1 and np.float32(f) == f  # a float32, never below H
        assert f == h or float(np.nextafter(np.float32(f), np.float32(0))) < h  # the nearest float32 at or above H
    assert java_heap_factor(math.nextafter(1.0, 0)) == 1.0


@pytest.mark.parametrize("k", [2**31 - 1, 2**31, 2**63])
def test_k_past_java_int_returns_every_match(tmp_path, k):
    """k past 2^31 - 1 means every match, as any k beyond the collection does: it was an
    OverflowError (SpecSearcher.search, ImpactSearcher.search_spec) or a garbled "No methods called search ... matching
    your arguments" (search_exact, batch_search_specs, lsr-lucene search --hits)."""
    from lsr_lucene import ImpactSearcher

    docs = [("d1", {"a": 1}), ("d2", {"a": 2, "neg_b": 1}), ("d3", {"b": 4})]
    index = build(tmp_path, docs)
    for terms in ({"a": 1}, {"a": 1, "b": -1}, {"b": 0.5}):
        spec = {"qid": "q", "terms": terms}
        expected = reference(docs, terms, 10)
        with SpecSearcher(index) as searcher:
            assert searcher.search(spec, k) == written(expected)
            assert [(d, s) for d, _, s in searcher.search_exact(spec, k)] == expected
        with ImpactSearcher(str(index), encoder=object()) as searcher:
            assert [(x.docid, x.score) for x in searcher.search_spec(spec, k)] == written(expected)
            assert [(x.docid, x.score) for x in searcher.batch_search_specs([spec], k)["q"]] == written(expected)
        (tmp_path / "specs.jsonl").write_text(json.dumps(spec) + "\n")
        assert cli(["search", "--index", str(index), "--specs", str(tmp_path / "specs.jsonl"), "--output",
                    str(tmp_path / "run"), "--hits", str(k), "--overwrite"]) == 0
        assert [(r.docid, r.score) for r in iter_run(tmp_path / "run")] == written(expected)


def test_an_index_of_no_documents_gives_no_hits(tmp_path, capsys):
    """``lsr-lucene index`` builds an index from vectors that are all empty (0 documents): every search of it failed
    with "field 'contents' is not in the index (fields: [])" (exit 2), and ``docids`` held one empty id."""
    from lsr_lucene import ImpactSearcher

    index = build(tmp_path, [("d1", {}), ("d2", {})])
    specs = [{"qid": "q1", "terms": {"a": 1}}, {"qid": "q2", "terms": {"a": -0.5, "b": 2}, "pairs": [["a", "b", 1]]}]
    with SpecSearcher(index) as searcher:
        assert searcher.num_docs == 0 and searcher.docids == []
        for spec in specs:
            assert searcher.search(spec, 5) == [] and searcher.search_exact(spec, 5) == []
            assert searcher.search(spec, 5, heap_factor=0.5) == []
    # BP order was refused ("no postings"): skipped, and recorded
    pruned = build(tmp_path / "pruned", [("d1", {})], reorder="bp")
    assert json.loads((pruned / "lsr_lucene.json").read_text())["skipped"]["why"] == "no documents"
    with SpecSearcher(pruned) as searcher:
        assert searcher.search(specs[0], 5) == []
    # with the positional field (a longdocs or --positions index): opening it failed ("the main index has 0
    # segments, so its docids no longer match the positional field")
    (tmp_path / "p").mkdir()
    vectors, tokens = write_collection(tmp_path / "p", [("d1", {})], {"d1": [["a", 1.0]]})
    build_impact_index(vectors, tmp_path / "p" / "index", threads=1, positions=tokens)
    window = {"terms": [["a", 1.0], ["b", 1.0]], "ordered": True}
    with SpecSearcher(tmp_path / "p" / "index") as searcher:
        assert searcher.has_positions
        for spec in specs + [{"qid": "w", "terms": {"a": 1}, "windows": [window]},
                             {"qid": "r", "terms": {"a": 1}, "windows": [window], "rerank": 3}]:
            assert searcher.search(spec, 5) == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the terms are not in the index
        with ImpactSearcher(str(index), encoder=object()) as searcher:
            assert searcher.batch_search_specs(specs, 5) == {"q1": [], "q2": []}
    (tmp_path / "specs.jsonl").write_text("".join(json.dumps(s) + "\n" for s in specs))
    assert cli(["search", "--index", str(index), "--specs", str(tmp_path / "specs.jsonl"), "--output",
                str(tmp_path / "run")]) == 0
    assert (tmp_path / "run").read_text() == ""
    assert "a positive score): q1, q2" in capsys.readouterr().err


@pytest.mark.slow  # starts a Ray instance
@pytest.mark.skipif(os.environ.get("LSR_PROPERTY_DISTRIBUTED", "1") == "0", reason="LSR_PROPERTY_DISTRIBUTED=0")
def test_a_distributed_index_with_a_shard_of_no_documents(tmp_path):
    """A shard whose vectors are all empty made every ``distributed search`` fail (its searcher refused the field,
    or with the positional field could not open); it now answers no hits and the run is the brute force over the
    collection."""
    from lsr_lucene.distributed.cluster import prevent_signal_handler_takeover
    from lsr_lucene.jvm.signals import restore_jvm_handlers

    prevent_signal_handler_takeover()  # before Ray is imported: this process runs a JVM (test_distributed)
    ray = pytest.importorskip("ray")
    from test_distributed import RAY_OPTIONS

    docs = [("d1", {"a": 3, "b": 1}), ("d2", {"a": 5, "neg_b": 2}), ("d3", {"b": 4})]
    vectors, _ = write_collection(tmp_path, docs, {})
    (vectors / "part-00001.jsonl").write_text("".join(json.dumps({"id": f"e{i}", "contents": "", "vector": {}}) + "\n"
                                                      for i in range(3)))
    specs = [{"qid": "q1", "terms": {"a": 1}}, {"qid": "q2", "terms": {"a": 1, "b": -1}},
             {"qid": "q3", "terms": {"b": 0.5}, "pairs": [["a", "b", 2]]}]
    (tmp_path / "specs.jsonl").write_text("".join(json.dumps(s) + "\n" for s in specs))
    tokens = tmp_path / "tokens.jsonl"  # the positional field too: the empty shard's failed to open
    tokens.write_text("".join(json.dumps({"id": d, "tokens": [["a", 1.0]]}) + "\n" for d, _ in docs))
    started = not ray.is_initialized()
    if started:
        ray.init(address="local", num_cpus=2, **RAY_OPTIONS)
        restore_jvm_handlers()  # ray.init may reset the JVM's signal handlers (conftest)
    try:
        assert cli(["distributed", "index", "--input", str(vectors), "--index", str(tmp_path / "dindex"),
                    "--num-workers", "2", "--positions", str(tokens)]) == 0
        # heap factor 1: shard after shard (queues carried); 0.5: side by side, which a queue of 10 never full
        # here leaves exact
        for run, heap in (("run", "1"), ("heap.run", "0.5")):
            assert cli(["distributed", "search", "--index", str(tmp_path / "dindex"), "--specs",
                        str(tmp_path / "specs.jsonl"), "--output", str(tmp_path / run), "--hits", "10",
                        "--heap-factor", heap]) == 0
    finally:
        if started:
            ray.shutdown()
    for run in ("run", "heap.run"):
        got = {s["qid"]: [] for s in specs}
        for row in iter_run(tmp_path / run):
            got[row.qid].append((row.docid, row.score))
        assert got == {s["qid"]: written(reference(docs, s, 10)) for s in specs}, run


# --------------------------------------------------------------------------------------------- generated cases

TERMS = ["a", "b", "c", "neg_b", "\u00e9", "\U0001f600", "##x"]  # "neg_b" is also a real term
DOC_IDS = ["d1", "d10", "d2", "D3", "d\u00e9", "d\U0001f600", "d\ufffd", "e", "f", "g", "h", "i", "j", "k"]
BIG = [1, 2, 3, 255, 256, 65535, 65536, 2**24 - 1, 2**24 + 1]


def collection(rng: np.random.Generator) -> list[tuple[str, dict]]:
    """Documents in index order: a term beside its neg_ twin, neg_neg_ terms, empty vectors, big impacts, ties."""
    n = int(rng.integers(1, 12))
    ids = list(rng.permutation(DOC_IDS)[:n])
    tied = rng.random() < 0.25  # every document the same vector: all scores tie
    shared = {"a": 2, "neg_a": 1}
    docs = []
    for docid in ids:
        if tied:
            docs.append((str(docid), dict(shared)))
            continue
        if rng.random() < 0.1:
            docs.append((str(docid), {}))  # not indexed: can match nothing
            continue
        vec = {}
        for t in rng.choice(TERMS, size=int(rng.integers(1, 5)), replace=False):
            big = rng.random() < 0.15
            impact = int(rng.choice(BIG)) if big else int(rng.integers(1, 8))
            prefix = rng.choice(["", "", "neg_", "neg_neg_"])
            vec[prefix + str(t)] = impact
            if rng.random() < 0.2:
                vec[("" if prefix else "neg_") + str(t)] = int(rng.integers(1, 8))  # the twin too
        if sum(vec.values()) > 2**25:  # a document's repeated-term text stays within the JVM heap check
            vec = {t: min(f, 65536) for t, f in vec.items()}
        docs.append((str(docid), vec))
    return docs


def query(rng: np.random.Generator, qid: str) -> dict:
    """A spec: terms of the collection and absent ones, integral (plain search) or fractional, positive, negative or
    zero; sometimes CPT pairs (a term with itself, neg_ terms) or boolean mode; at least one non-zero weight."""
    pool = TERMS + ["neg_a", "neg_neg_a", "absent", "\u00e9absent"]
    boolean = rng.random() < 0.15
    kind = rng.choice(["plain", "fractional"] if boolean else ["plain", "negative", "mixed", "fractional"])
    weight = {"plain": lambda: int(rng.choice([1, 1, 2, 3, 300])), "negative": lambda: -int(rng.integers(1, 4)),
              "mixed": lambda: int(rng.integers(-3, 4)),  # zero weights too
              "fractional": lambda: float(rng.choice([0.5, 1 / 3, 2.25, 1e-3] + ([] if boolean else [-0.1])))}[kind]
    spec: dict = {"qid": qid, "terms": {str(t): weight() for t in rng.choice(pool, size=int(rng.integers(1, 6)),
                                                                              replace=False)}}
    if rng.random() < 0.3:
        spec["pairs"] = [[str(rng.choice(TERMS)), str(rng.choice(TERMS + ["neg_a"])), weight()]
                         for _ in range(int(rng.integers(1, 3)))]
    if boolean:
        spec["mode"] = "boolean"
    if not any(spec["terms"].values()) and not any(p[2] for p in spec.get("pairs", [])):
        spec["terms"][next(iter(spec["terms"]))] = 1
    return spec


HEAP_FACTORS = [1.0, math.nextafter(1.0, 0), 0.5, 0.70000001, 1e-50]


def variants(root: Path, docs: list) -> dict[str, Path]:
    vectors, _ = write_collection(root, docs, {})
    out = {}
    bp = {"reorder": "bp", "seed": 3, "dense_impacts": 1e-9}  # every term whose impacts fit a byte on the sidecar
    # an index of no documents gets no BP order (it is refused)
    empty = not any(v for _, v in docs)
    plans = {"natural": {}} if empty else {"natural": {}, "bp": bp}
    for name, options in plans.items():
        build_impact_index(vectors, root / name, threads=1, **options)
        out[name] = root / name
    if sum(1 for _, v in docs if v) > 1:
        from lsr_lucene.index.dense_impacts import build_dense_impacts

        out["several"] = two_segments(root, [(d, v) for d, v in docs if v])
        build_dense_impacts(out["several"], 0.3)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_generated_collections_match_both_brute_forces(tmp_path, seed):
    """SpecSearcher (search, search_exact, search_hits, every heap factor), ImpactSearcher, the CLI
    (--hits beyond the collection, --heap-factor) and compose's backends on each index variant of a generated
    collection."""
    from lsr_lucene import ImpactSearcher
    from lsr_lucene.compose.backends import ExactBackend, LuceneBackend

    rng = np.random.default_rng(1000 + seed)
    docs = collection(rng)
    n = len(docs)
    specs = [query(rng, f"q{i}") for i in range(20)]
    ks = [int(rng.choice([1, 2, n, n + 3, 2**31 - 1])) for _ in specs]
    for name, index in variants(tmp_path, docs).items():
        with SpecSearcher(index) as searcher:
            for spec, k in zip(specs, ks):
                expected = reference(docs, spec, k)
                assert [(d, s) for d, _, s in searcher.search_exact(spec, k)] == expected, (name, spec, k)
                assert searcher.search(spec, k) == written(expected), (name, spec, k)
                assert [d for d, _, _ in searcher.search_hits(spec, k)] == [d for d, _ in expected]
                for h in HEAP_FACTORS:
                    check_heap_promise(searcher.search(spec, k, heap_factor=h), docs, spec, k, h)
        (tmp_path / "specs.jsonl").write_text("".join(json.dumps(s) + "\n" for s in specs), encoding="utf-8")
        k = n + 3
        for h in (1.0, 0.5):
            run = tmp_path / f"{name}-{h}.run"
            assert cli(["search", "--index", str(index), "--specs", str(tmp_path / "specs.jsonl"), "--output",
                        str(run), "--hits", str(k), "--threads", "2", "--heap-factor", str(h)]) == 0
            got = {s["qid"]: [] for s in specs}
            for row in iter_run(run):
                got[row.qid].append((row.docid, row.score))
            for s in specs:
                check_heap_promise(got[s["qid"]], docs, s, k, h)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # absent terms are warned about
            with ImpactSearcher(str(index), encoder=object()) as searcher:
                found = searcher.batch_search_specs(specs, k=1, threads=2, heap_factor=0.70000001)
                for s in specs:
                    check_heap_promise([(x.docid, x.score) for x in found[s["qid"]]], docs, s, 1, 0.70000001)
                    assert [(x.docid, x.score) for x in searcher.search_spec(s, k=n)] == \
                        written(reference(docs, s, n))
        backend = LuceneBackend(index, threads=2)  # compose's backends: the Lucene one, batch and in memory
        try:
            for threads in (1, 2):
                assert backend.search_many(specs, k, threads=threads) == \
                    {s["qid"]: written(reference(docs, s, k)) for s in specs}
        finally:
            backend.close()
    exact = ExactBackend(docs)  # the in-memory brute force of compose, to the bit
    for spec, k in zip(specs, ks):
        assert exact.search(spec, k) == reference(docs, spec, k), spec


def test_duplicate_query_terms_in_a_spec_file_keep_the_last_weight(tmp_path):
    """JSON with a repeated term: Java (spec files) and Python (json.loads: ImpactSearcher, the brute force) both
    keep the last weight, at the first one's position."""
    from lsr_lucene import ImpactSearcher

    docs = [("d1", {"a": 5}), ("d2", {"b": 3, "neg_a": 1}), ("d3", {"a": 1, "b": 1})]
    index = build(tmp_path, docs)
    line = '{"qid": "q", "terms": {"a": 1, "b": 1, "a": -1}}'
    expected = written(reference(docs, json.loads(line)["terms"], 10))
    assert expected == [("d2", 4.0), ("d3", 0.0)]
    (tmp_path / "specs.jsonl").write_text(line + "\n")
    assert cli(["search", "--index", str(index), "--specs", str(tmp_path / "specs.jsonl"), "--output",
                str(tmp_path / "run")]) == 0
    assert [(r.docid, r.score) for r in iter_run(tmp_path / "run")] == expected
    with ImpactSearcher(str(index), encoder=object()) as searcher:
        assert [(x.docid, x.score) for x in searcher.search_spec(line, 10)] == expected


def test_brute_forces_can_fail():
    """The references and the promise check reject wrong answers: a swapped tie, a wrong score, a promised miss."""
    docs = [("b", {"a": 2}), ("a", {"a": 2}), ("c", {"neg_a": 1}), ("x", {"a": 4})]
    assert reference(docs, {"a": 1}, 5) == [("x", 4.0), ("a", 2.0), ("b", 2.0)]
    assert reference(docs, {"a": -1}, 5) == [("c", 1.0)]  # a negative weight matches neg_ twins only
    check_heap_promise([("x", 4.0), ("a", 2.0)], docs, {"a": 1}, 2, 1.0)
    check_heap_promise([("x", 4.0), ("b", 2.0)], docs, {"a": 1}, 2, 0.5)  # a missed: allowed at H = 0.5
    for wrong, h in ((([("x", 4.0), ("b", 2.0)]), 1.0), ([("x", 4.0), ("a", 2.5)], 0.5),
                     ([("a", 2.0), ("b", 2.0)], 0.5), ([("a", 2.0), ("x", 4.0)], 0.5)):
        with pytest.raises(AssertionError):
            check_heap_promise(wrong, docs, {"a": 1}, 2, h)


# --------------------------------------------------------------------------------------------- longdocs ExactSDM

@pytest.mark.parametrize("k", [None, 1])
def test_full_exact_sdm_finds_documents_behind_many_segments_of_another(tmp_path, k):
    """``longdocs search --method exact-sdm --full`` searched the top hits x (k or 8) segments only: with 17
    segments of A above B's best, --hits 2 gave A alone (and with --segments 1 A's later segments, which score-max
    leaves out, filled the depth too). A query is now searched deeper until its top documents are settled."""
    from lsr_lucene.io.runs import read_hits
    from lsr_lucene.longdocs import sdm
    from lsr_lucene.longdocs.queries import Query
    from lsr_lucene.longdocs.sdm_features import SdmSettings
    from lsr_lucene.longdocs.segment_search import SegmentSearch

    segments = [(f"A@@{i}", {"a": 10}) for i in range(17)] + [("B@@0", {"a": 9}), ("B@@1", {"b": 3}),
                                                              ("C@@0", {"a": 2, "b": 1})]
    vectors, _ = write_collection(tmp_path, segments, {})
    tokens = tmp_path / "tokens.jsonl"
    tokens.write_text("".join(json.dumps({"id": s, "tokens": [["a", 1.0], ["b", 2.0]] if s != "A@@3" else
                                          [["b", 1.0], ["a", 1.0]]}) + "\n" for s, _ in segments))
    build_impact_index(vectors, tmp_path / "index", threads=1, positions=tokens)
    queries = {"q": Query("q", [{"a": 1.0, "b": 0.5}], [[("a", 1.0), ("b", 0.5)]])}
    search = SegmentSearch(tmp_path / "index", queries, "sum", k, SdmSettings(), threads=1)
    features = search.features("exact", depth=1000)["q"]
    for lambdas in ((1.0, 0.0, 0.0), (1.0, 0.5, 0.25)):
        expected = sorted(sdm.score_documents(features, lambdas, k, "segment").items(), key=lambda x: (-x[1], x[0]))
        assert [d for d, _ in expected] == ["A", "B", "C"]
        for hits in (1, 2, 3):
            run = tmp_path / f"full-{hits}.run"
            search.full_exact_sdm(lambdas, run, hits=hits, overwrite=True)
            got = read_hits(run)["q"]
            assert [d for d, _ in got] == [d for d, _ in expected[:hits]], (lambdas, hits)
            assert [s for _, s in got] == pytest.approx([s for _, s in expected[:hits]], abs=1e-6)


def test_run_scores_round_exact_ties_as_python_does(tmp_path):
    """Scores exactly halfway between two six-decimal values (0.0078125 = 2^-7, ...) are written as Python's
    '%.6f' writes them (half to even), by the CLI's run, SpecSearcher.search and search_exact's shown column."""
    from lsr_lucene.io.runs import format_score

    index = build(tmp_path, [("d1", {"a": 1}), ("d2", {"a": 3}), ("d3", {"a": 5})])
    weights = [2.0**-7, 2.0**-21, 3 * 2.0**-20, 1 + 2.0**-7, 0.0000005, 1.0000005, 0.1234565]
    specs = [{"qid": f"q{i}", "terms": {"a": w}} for i, w in enumerate(weights)]
    (tmp_path / "specs.jsonl").write_text("".join(json.dumps(s) + "\n" for s in specs))
    assert cli(["search", "--index", str(index), "--specs", str(tmp_path / "specs.jsonl"), "--output",
                str(tmp_path / "run")]) == 0
    lines = [line.split() for line in (tmp_path / "run").read_text().splitlines()]
    assert f"{5 * 2.0**-7:.6f}" == "0.039062"  # a tie, to even
    with SpecSearcher(index) as searcher:
        for spec in specs:
            hits = searcher.search_exact(spec, 5)
            expected = [f"{s:.6f}" for _, _, s in hits]
            assert [row[4] for row in lines if row[0] == spec["qid"]] == expected == [format_score(s) for _, _, s in
                                                                                      hits]
            assert [shown for _, shown, _ in hits] == expected
            assert searcher.search(spec, 5) == [(d, float(x)) for (d, _, _), x in zip(hits, expected)]
