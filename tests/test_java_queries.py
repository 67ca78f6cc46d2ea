"""Exactness of the Java queries (SignedImpactQuery, CombinedTermQuery, WindowQuery) against brute force.

Random small sparse collections (mixed-sign weights as ``neg_`` terms, ties, absent terms) are indexed with
Anserini's own IndexCollection in-process; every search must return exactly the brute-force top k: same
docids in the same order (ties by docid ascending) and the same scores. A larger random collection
checks block-max pruning and equality with Pyserini's LuceneImpactSearcher.
"""
from __future__ import annotations

import itertools
import json
import math
import random
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsr_lucene.errors import InputError
from lsr_lucene.index.pair_terms import add_pair_terms
from lsr_lucene.index.positional import build_positional_field
from lsr_lucene.search.spec_searcher import SpecSearcher
from lsr_lucene.search.specs import make_spec, pairs_to_terms

VOCAB = ["a", "b", "c", "d", "e", "##f", "|"]
SETTINGS = dict(max_examples=10, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def java():
    """One JVM (started our way) for the whole module; yields the IndexCollection class."""
    from lsr_lucene.jvm import runtime as jvm

    jvm.start()
    return jvm.autoclass("io.anserini.index.IndexCollection")


@pytest.fixture(scope="module")
def workdir():
    path = Path(tempfile.mkdtemp(prefix="lsr-java-test-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


_counter = itertools.count()


def build_index(java, workdir: Path, docs: list[tuple[str, dict]], tokens: dict | None = None) -> Path:
    """Index (id, vector) pairs in the given order with Anserini; optionally add the positional sidecar."""
    n = next(_counter)
    src = workdir / f"in{n}"
    src.mkdir()
    with open(src / "docs.jsonl", "w") as out:
        for docid, vec in docs:
            out.write(json.dumps({"id": docid, "contents": "", "vector": vec}) + "\n")
    index = workdir / f"idx{n}"
    java.main(["-collection", "JsonVectorCollection", "-input", str(src), "-index", str(index),
               "-generator", "DefaultLuceneDocumentGenerator", "-threads", "1", "-impact", "-pretokenized",
               "-storeRaw", "-quiet"])
    if tokens is not None:
        tok_file = workdir / f"tok{n}.jsonl"
        with open(tok_file, "w") as out:
            for docid, toks in tokens.items():
                out.write(json.dumps({"id": docid, "tokens": toks}) + "\n")
        build_positional_field(index, tok_file)
    return index


# --------------------------------------------------------------------------------------------- brute force

def brute_terms(vec: dict, spec: dict) -> tuple[float, bool]:
    """(score, is candidate) of one document vector for the term and pair part of a spec, in double.

    Signed mode subtracts ``neg_`` impacts; boolean mode (Anserini's BooleanQuery) scores a term's own impacts only.
    """
    score, candidate = 0.0, False
    boolean = spec.get("mode") == "boolean"
    for t, w in spec.get("terms", {}).items():
        f, fn = vec.get(t, 0), 0 if boolean else vec.get("neg_" + t, 0)
        score += w * (f - fn)
        candidate |= (w > 0 and f > 0) or (w < 0 and fn > 0)
    for a, b, w in spec.get("pairs", []):
        if vec.get(a, 0) > 0 and vec.get(b, 0) > 0:
            score += w * math.sqrt(vec[a] * vec[b])
            candidate |= w > 0
    return score, candidate


def window_score(toks: list, clause: dict) -> float | None:
    """Max over matches of Σ q_i·payload_i (None without a match), by enumerating placements."""
    terms = [(t, q * clause.get("weight", 1.0)) for t, q in clause["terms"]]
    toks = [(t if w > 0 else "", w) for t, w in toks]  # a token without positive weight is a gap (not indexed)
    n = len(terms)
    best = None
    if clause.get("ordered", True):
        for p in range(len(toks) - n + 1):
            if all(toks[p + i][0] == terms[i][0] for i in range(n)):
                s = sum(terms[i][1] * toks[p + i][1] for i in range(n))
                best = s if best is None else max(best, s)
    else:
        width = clause.get("width", n)
        occ = [[p for p, (tok, _) in enumerate(toks) if tok == t] for t, _ in terms]
        for combo in itertools.product(*occ):
            if max(combo) - min(combo) < width:
                s = sum(terms[i][1] * toks[p][1] for i, p in enumerate(combo))
                best = s if best is None else max(best, s)
    return best


def brute_topk(docs: list[tuple[str, dict]], spec: dict, k: int, tokens: dict | None = None) -> list[tuple[str, float]]:
    """Exact top k of a spec: candidates by positive contribution (or window match), ties by docid."""
    windows = spec.get("windows", [])
    rerank = spec.get("rerank", 0)
    scored = []
    for docid, vec in docs:
        s, cand = brute_terms(vec, spec)
        if windows and not rerank:
            for clause in windows:
                ws = window_score(tokens[docid], clause)
                if ws is not None:
                    s += ws
                    cand = True
        if cand:
            scored.append((docid, s))
    scored.sort(key=lambda x: (-x[1], x[0]))
    if windows and rerank:
        first = scored[:max(k, rerank)]
        rescored = []
        for docid, s in first:
            for clause in windows:
                s += window_score(tokens[docid], clause) or 0.0
            rescored.append((docid, s))
        rescored.sort(key=lambda x: (-x[1], x[0]))
        return rescored[:k]
    return scored[:k]


def assert_same(got: list[tuple[str, float]], expected: list[tuple[str, float]], spec: dict) -> None:
    """Same docids in the same order and the same double scores (summed in the same order: to the last bits)."""
    assert [d for d, _ in got] == [d for d, _ in expected], (spec, got, expected)
    for (_, g), (_, e) in zip(got, expected):
        assert g == pytest.approx(e, rel=1e-12, abs=1e-12), (spec, got, expected)


def exact_search(searcher: SpecSearcher, spec: dict, k: int) -> list[tuple[str, float]]:
    """Top k with exact (double) scores; the run-file hits are the same documents, scores printed ``%.6f``."""
    hits = searcher.search_exact(spec, k)
    assert searcher.search(spec, k) == [(d, float(f"{s:.6f}")) for d, _, s in hits]
    return [(d, s) for d, _, s in hits]


# --------------------------------------------------------------------------------------------- strategies

@st.composite
def collections(draw, squares=False, neg_share=0.3, max_docs=25):
    """(docs in index order, ids shuffled) with random sparse vectors; some terms negative (neg_ terms).

    Impacts come from a small pool (many ties), a perfect-square pool (exact pair scores w·sqrt(a·b) and ties),
    or a wide one (large impacts: negative clauses then shift scores by up to ~10^5, where float32 would round).
    """
    n = draw(st.integers(1, max_docs))
    ids = draw(st.permutations([f"doc{i:02d}" for i in range(n)]))
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    pools = {"small": [1, 2, 3, 4, 5], "squares": [1, 4, 9, 16, 25], "wide": [1, 2, 3, 7, 100, 999, 5000]}
    pool = pools[draw(st.sampled_from(["squares", "wide"] if squares else ["small", "wide"]))]
    docs = []
    for docid in ids:
        vec = {}
        for t in VOCAB:
            if rng.random() < 0.45:
                vec["neg_" + t if rng.random() < neg_share else t] = rng.choice(pool)
        docs.append((docid, vec or {"a": 1}))
    return docs


# integers, halves, and arbitrary doubles (1.0001, 0.1: not float32 numbers), of either sign
float_weights = st.floats(0.01, 8.0, allow_nan=False, allow_infinity=False)
query_weights = st.one_of(st.integers(-6, 6), st.sampled_from([-1.5, -0.5, 0.5, 2.5, 1.0001, -100.0]),
                          float_weights, float_weights.map(lambda w: -w))


@st.composite
def term_specs(draw, qid="q"):
    """A signed spec, or (one in four) a boolean one: Anserini's BooleanQuery of the terms (weights > 0)."""
    terms = draw(st.dictionaries(st.sampled_from(VOCAB + ["unknown"]), query_weights, min_size=1, max_size=6))
    terms = {t: w for t, w in terms.items() if w != 0} or {"a": 1}
    if draw(st.integers(0, 3)) == 0:
        return {"qid": qid, "terms": {t: abs(w) for t, w in terms.items()}, "mode": "boolean"}
    return {"qid": qid, "terms": terms}


# --------------------------------------------------------------------------------------------- property tests

@settings(**SETTINGS)
@given(docs=collections(), data=st.data())
def test_signed_impact_query_matches_brute_force(java, workdir, docs, data):
    index = build_index(java, workdir, docs)
    with SpecSearcher(index) as searcher:
        for i in range(6):
            spec = data.draw(term_specs(qid=f"q{i}"))
            k = data.draw(st.integers(1, len(docs) + 2))
            assert_same(exact_search(searcher, spec, k), brute_topk(docs, spec, k), spec)
            # exact scores of arbitrary documents (candidates or not, in any order, repeated)
            some = [d for d, _ in docs[:5]][::-1] + [docs[0][0]]
            exact = [brute_terms(dict(docs)[d], spec)[0] for d in some]
            assert searcher.score(spec, some) == pytest.approx(exact)


@settings(**SETTINGS)
@given(docs=collections(squares=True), data=st.data())
def test_combined_term_query_matches_brute_force(java, workdir, docs, data):
    index = build_index(java, workdir, docs)
    with SpecSearcher(index) as searcher:
        for i in range(6):
            spec = data.draw(term_specs(qid=f"q{i}"))
            if data.draw(st.booleans()):
                spec["terms"] = {}
            pairs = data.draw(st.lists(st.tuples(st.sampled_from(VOCAB + ["unknown"]), st.sampled_from(VOCAB),
                                                 st.one_of(st.sampled_from([-2, -1, 1, 2, 3, 0.5]), float_weights)),
                                       min_size=1, max_size=4))
            spec["pairs"] = [list(p) for p in pairs]
            if not spec["terms"] and not any(w > 0 for *_, w in pairs):
                spec["pairs"].append(["a", "b", 1])
            if spec.get("mode") == "boolean" and not all(p[2] > 0 for p in spec["pairs"]):
                del spec["mode"]
            if all(w > 0 for w in spec["terms"].values()) and all(p[2] > 0 for p in spec["pairs"]) \
                    and data.draw(st.booleans()):
                spec["mode"] = "boolean"  # plain BooleanQuery of TermQuery and CombinedTermQuery clauses
            k = data.draw(st.integers(1, len(docs) + 2))
            assert_same(exact_search(searcher, spec, k), brute_topk(docs, spec, k), spec)


@st.composite
def token_docs(draw):
    """Documents as token sequences with float payloads; the impact vector is each token's max payload ×4."""
    n = draw(st.integers(1, 15))
    ids = draw(st.permutations([f"t{i:02d}" for i in range(n)]))
    tokens, docs = {}, []
    for docid in ids:
        toks = draw(st.lists(st.tuples(st.sampled_from(VOCAB[:4]), st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, 2.0])),
                             max_size=12))
        tokens[docid] = [list(t) for t in toks]
        vec = {}
        for tok, w in toks:
            if w > 0:
                vec[tok] = max(vec.get(tok, 0), int(w * 4))
        docs.append((docid, vec or {"e": 1}))
    return docs, tokens


@st.composite
def window_clauses(draw):
    ordered = draw(st.booleans())
    n = draw(st.integers(1, 3))
    if ordered:
        terms = draw(st.lists(st.sampled_from(VOCAB[:4]), min_size=n, max_size=n))
    else:
        terms = draw(st.lists(st.sampled_from(VOCAB[:4]), min_size=n, max_size=n, unique=True))
    qs = draw(st.lists(st.sampled_from([0, 1, 2, 3]), min_size=n, max_size=n))
    clause = {"terms": [[t, q] for t, q in zip(terms, qs)], "ordered": ordered,
              "weight": draw(st.sampled_from([1.0, 0.5, 2.0]))}
    if not ordered:
        clause["width"] = draw(st.integers(n, n + 4))
    return clause


@settings(**SETTINGS)
@given(collection=token_docs(), data=st.data())
def test_window_query_matches_brute_force(java, workdir, collection, data):
    docs, tokens = collection
    index = build_index(java, workdir, docs, tokens)
    with SpecSearcher(index) as searcher:
        assert searcher.has_positions
        for i in range(6):
            windows = data.draw(st.lists(window_clauses(), min_size=1, max_size=2))
            k = data.draw(st.integers(1, len(docs) + 2))
            if data.draw(st.booleans()):
                spec = {"qid": f"w{i}", "terms": {}, "windows": windows}  # full search by windows alone
            else:
                spec = data.draw(term_specs(qid=f"r{i}"))
                spec.update(windows=windows, rerank=data.draw(st.integers(1, len(docs) + 1)))
            assert_same(exact_search(searcher, spec, k), brute_topk(docs, spec, k, tokens), spec)


# --------------------------------------------------------------------------------------------- larger collection

def zipf_collection(n_docs=3000, vocab=400, seed=7):
    rng = random.Random(seed)
    terms = [f"w{i}" for i in range(vocab)]
    weights = [1.0 / (i + 3) for i in range(vocab)]
    docs = []
    ids = [f"D{i:05d}" for i in range(n_docs)]
    rng.shuffle(ids)
    for docid in ids:
        vec = {}
        for t in rng.choices(terms, weights, k=rng.randint(5, 60)):
            name = "neg_" + t if rng.random() < 0.05 else t
            vec[name] = rng.randint(1, 300) if rng.random() < 0.9 else 50  # many equal impacts: ties
        docs.append((docid, vec))
    return docs


@pytest.fixture(scope="module")
def big(java, workdir):
    docs = zipf_collection()
    return docs, build_index(java, workdir, docs)


def test_large_collection_pruned_search_is_exact(big):
    """Block-max pruning (long postings, k ≪ n) keeps the exact top k, signed and pairs included."""
    docs, index = big
    rng = random.Random(3)
    specs = []
    for i in range(25):
        terms = {f"w{rng.randint(0, 399)}": rng.randint(1, 200) for _ in range(rng.randint(3, 25))}
        if i % 2:
            for t in rng.sample(sorted(terms), k=min(3, len(terms))):
                terms[t] = -rng.randint(1, 200)
        spec = {"qid": f"z{i}", "terms": terms}
        if i % 3 == 0:
            a, b = rng.sample(sorted(terms), 2) if len(terms) > 1 else ("w0", "w1")
            spec["pairs"] = [[a, b, float(rng.choice([-3, 2, 5]))]]
        specs.append(spec)
    with SpecSearcher(index) as searcher:
        for spec in specs:
            for k in (10, 100):
                assert_same(exact_search(searcher, spec, k), brute_topk(docs, spec, k), spec)


def test_batch_run_equals_pyserini_impact_searcher(big, workdir):
    """Plain non-negative queries: same docids, order and scores as Pyserini's LuceneImpactSearcher."""
    docs, index = big
    from pyserini.search.lucene import LuceneImpactSearcher

    # Pyserini knows no neg_ terms: use query terms that never hold a negative document weight
    negated = {t[4:] for _, vec in docs for t in vec if t.startswith("neg_")}
    usable = sorted({t for _, vec in docs for t in vec} - negated - {t for t in negated})
    rng = random.Random(11)
    vectors = {}
    for i in range(15):
        vectors[f"p{i}"] = {rng.choice(usable): rng.randint(1, 250) for _ in range(rng.randint(2, 30))}

    class Encoder:
        def encode(self, text):
            return vectors[text]

    run = workdir / "batch.run"
    with SpecSearcher(index) as searcher:
        n = searcher.search_to_run([{"qid": q, "terms": v} for q, v in vectors.items()], run, k=1000, threads=2,
                                   tag="t")
    assert n == len(vectors)
    ours: dict[str, list] = {}
    for line in run.read_text().splitlines():
        qid, _, docid, rank, score, tag = line.split()
        ours.setdefault(qid, []).append((docid, float(score)))
        assert int(rank) == len(ours[qid]) and tag == "t"
    assert list(ours) == list(vectors)  # input order
    pyserini = LuceneImpactSearcher(str(index), Encoder())
    for qid in vectors:
        hits = pyserini.search(qid, k=1000)
        assert [h.docid for h in hits] == [d for d, _ in ours[qid]], qid
        for h, (_, s) in zip(hits, ours[qid]):
            assert s == pytest.approx(h.score, abs=1e-2)  # Pyserini nudges tied scores by 1e-6 steps
        assert ours[qid] == brute_topk(docs, {"terms": vectors[qid]}, 1000)


# --------------------------------------------------------------------------------------------- errors

@pytest.fixture(scope="module")
def small(java, workdir):
    docs = [("x1", {"a": 2, "b": 1}), ("x2", {"a": 1, "neg_b": 3}), ("x3", {"c": 4})]
    return build_index(java, workdir, docs)


def test_errors_are_input_errors_naming_the_query(small, workdir):
    with SpecSearcher(small) as searcher:
        assert searcher.search({"qid": "none", "terms": {"zzz": 3}}, 10) == []
        assert searcher.search({"qid": "neg-only", "terms": {"a": -1}}, 10) == []
        assert searcher.search({"qid": "p", "terms": {"a": 1}, "pairs": [["a", "zzz", 2]]}, 10) == \
            [("x1", 2.0), ("x2", 1.0)]
        with pytest.raises(InputError, match="query f1.*field 'nope'"):
            searcher.search({"qid": "f1", "terms": {"a": 1}, "field": "nope"}, 10)
        with pytest.raises(InputError, match="query n1"):
            searcher.search({"qid": "n1", "terms": {"a": float("nan")}}, 10)
        with pytest.raises(InputError, match="query i1"):
            make_spec("i1", {"a": float("inf")})
        with pytest.raises(InputError, match="query w1.*positional"):
            searcher.search({"qid": "w1", "terms": {"a": 1}, "windows": [{"terms": [["a", 1]]}]}, 10)
        with pytest.raises(InputError, match="query e1"):
            searcher.search({"qid": "e1", "terms": {}}, 10)
        # the Java parser itself rejects NaN/Infinity written by a careless writer, naming the query and line
        raw = workdir / "bad.jsonl"
        raw.write_text('{"qid": "ok", "terms": {"a": 1}}\n{"qid": "bad7", "terms": {"a": NaN}}\n')
        with pytest.raises(InputError, match=r"query bad7 \(.*bad.jsonl:2\).*finite"):
            searcher.search_file(raw, workdir / "bad.run")
        raw.write_text('{"qid": "ok", "terms": {"a": 1}}\n{"qid": "x", "terms": {"a": -Infinity}}\n')
        with pytest.raises(InputError, match="query x"):
            searcher.search_file(raw, workdir / "bad.run")
        raw.write_text('{"qid": "ok", "terms": {"a": 1}\n')
        with pytest.raises(InputError, match="bad.jsonl:1: malformed JSON"):
            searcher.search_file(raw, workdir / "bad.run")
        raw.write_text('{"qid": "ok", "terms": {"a": 1}}\n{"qid": "ok", "terms": {"b": 1}}\n')
        with pytest.raises(InputError, match="query ok.*duplicate"):
            searcher.search_file(raw, workdir / "bad.run")
        with pytest.raises(InputError, match="query s: docid .x9. is not in the index"):
            searcher.score({"qid": "s", "terms": {"a": 1}}, ["x9"])
        # neg_ document weights: w·(impact_t − impact_neg_t), negative totals written as such
        run = workdir / "signed.run"
        searcher.search_to_run([{"qid": "s1", "terms": {"a": 1, "b": -3}}], run, k=10, threads=1, tag="tg")
        assert run.read_text() == "s1 Q0 x2 1 10.000000 tg\ns1 Q0 x1 2 -1.000000 tg\n"
        # the searcher still works after errors
        assert searcher.search({"qid": "again", "terms": {"b": 2}}, 10) == [("x1", 2.0)]
    with pytest.raises(InputError, match="no such index"):
        SpecSearcher(workdir / "missing-index")


def test_positional_sidecar_keeps_main_index_usable_and_is_checked(java, workdir):
    from pyserini.search.lucene import LuceneImpactSearcher

    docs = [("k1", {"a": 4}), ("k0", {"a": 8, "b": 4}), ("k2", {"b": 4})]
    tokens = {"k1": [["a", 1.0]], "k0": [["a", 2.0], ["b", 1.0]], "k2": [["b", 1.0]]}
    index = build_index(java, workdir, docs, tokens)
    assert (index / "positions").is_dir()

    class Encoder:
        def encode(self, text):
            return {"a": 1}

    hits = LuceneImpactSearcher(str(index), Encoder()).search("q", k=10)
    assert [(h.docid, round(h.score)) for h in hits] == [("k0", 8), ("k1", 4)]
    with SpecSearcher(index) as searcher:
        spec = {"qid": "q", "terms": {"a": 1}, "windows": [{"terms": [["a", 1], ["b", 2]]}], "rerank": 10}
        assert searcher.search(spec, 5) == [("k0", 12.0), ("k1", 4.0)]
        assert searcher.score(spec, ["k2", "k0"]) == [0.0, 12.0]
    # a sidecar of another index (other docid order) is refused with a clear message
    other = build_index(java, workdir, list(reversed(docs)))
    shutil.copytree(index / "positions", other / "positions")
    with pytest.raises(InputError, match="positional field"):
        SpecSearcher(other)


def test_index_time_pair_terms_equal_on_the_fly_pairs(java, workdir):
    """With every term in a document's top n and square impacts, a||b pseudo-terms score like CombinedTermQuery."""
    docs = [("c1", {"a": 4, "b": 9, "c": 1}), ("c2", {"a": 16, "c": 4}), ("c3", {"b": 25, "c": 9, "neg_d": 4})]
    src = workdir / "cpt-in.jsonl"
    src.write_text("".join(json.dumps({"id": d, "contents": "", "vector": v}) + "\n" for d, v in docs))
    out = workdir / "cpt-out"
    counts = add_pair_terms(src, out, top_n=5)
    assert counts["documents"] == 3
    with_pairs = [(json.loads(line)["id"], json.loads(line)["vector"]) for line in (out / src.name).read_text().splitlines()]
    assert with_pairs[0][1]["a||b"] == 6 and "neg_d||b" not in with_pairs[2][1]
    plain, expanded = build_index(java, workdir, docs), build_index(java, workdir, with_pairs)
    spec = {"qid": "c", "terms": {"c": 1}, "pairs": [["b", "a", 2], ["c", "b", 1], ["a", "c", -1]]}
    with SpecSearcher(plain) as s1, SpecSearcher(expanded) as s2:
        assert s1.search(spec, 10) == s2.search(pairs_to_terms(spec), 10)
