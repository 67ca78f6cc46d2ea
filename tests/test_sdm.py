"""ExactSDM: query n-grams, Lucene WindowQuery potentials = brute force, pooling, λ fitting, metrics."""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from lsr_lucene.errors import InputError
from lsr_lucene.io.ranking import ranking as rank_by_score
from lsr_lucene.longdocs import collections as longdoc_collections
from lsr_lucene.longdocs import sdm
from lsr_lucene.longdocs import store as segment_store
from lsr_lucene.longdocs.indexes import build_segment_index
from lsr_lucene.longdocs.queries import Query, encode_queries
from lsr_lucene.io.runs import write_run
from lsr_lucene.longdocs.sdm import Clause
from lsr_lucene.longdocs.sdm_features import SdmSettings, exact_features

VOCAB = ["court", "appeal", "section", "##s", "act", "held", "the"]


# ---- query side --------------------------------------------------------------------------------------------
def test_query_clauses_adjacency_dedup_and_limits():
    seqs = [[("the", 0.0), ("court", 1.0), ("held", 2.0), ("the", 0.0), ("appeal", 1.5), ("court", 0.5),
             ("held", 3.0)],
            [("court", 2.0), ("held", 1.0)]]
    clauses = sdm.query_clauses(seqs)
    # zero-weight tokens break adjacency; the repeated bigram keeps the largest weight per position
    assert clauses == [Clause(("court", "held"), (2.0, 3.0)), Clause(("appeal", "court"), (1.5, 0.5))]
    assert sdm.query_clauses(seqs, ngram=3) == [Clause(("appeal", "court", "held"), (1.5, 0.5, 3.0))]
    assert sdm.query_clauses(seqs, max_clauses=1) == [Clause(("court", "held"), (2.0, 3.0))]
    # queries of one term (or none) have no pair: O = U = 0
    assert sdm.query_clauses([[("court", 1.0)]]) == []
    assert sdm.query_clauses([]) == []
    with pytest.raises(InputError):
        sdm.query_clauses(seqs, ngram=1)


def test_window_dicts_skip_repeated_tokens_when_unordered():
    clauses = [Clause(("a", "b"), (1.0, 2.0)), Clause(("a", "a"), (1.0, 1.0))]
    assert len(sdm.window_dicts(clauses, ordered=True)) == 2
    unordered = sdm.window_dicts(clauses, ordered=False, width=8)
    assert unordered == [{"terms": [["a", 1.0], ["b", 2.0]], "ordered": False, "width": 8}]
    with pytest.raises(InputError):
        sdm.window_dicts([Clause(("a", "b", "c"), (1, 1, 1))], ordered=False, width=2)


def test_brute_force_potentials_by_hand():
    doc = [("court", 1.0), ("held", 2.0), ("", 0.0), ("held", 0.5), ("court", 3.0)]
    clause = Clause(("court", "held"), (1.0, 2.0))
    assert sdm.ordered_potential(doc, clause) == 1.0 * 1.0 + 2.0 * 2.0
    assert sdm.unordered_potential(doc, clause, width=2) == max(1 + 4, 0.5 * 2 + 3.0 * 1)
    assert sdm.unordered_potential(doc, clause, width=8) == 3.0 + 4.0
    assert sdm.ordered_potential(doc, Clause(("held", "court"), (1.0, 1.0))) == 0.5 + 3.0
    assert sdm.ordered_potential([], clause) is None
    assert sdm.unordered_potential([("court", 1.0)], clause) is None


# ---- Lucene = brute force ----------------------------------------------------------------------------------
def make_encoded(root: Path, segments: dict[str, list[tuple[str, float]]]) -> Path:
    """A fake `longdocs encode` directory (vectors + per-position tokens) for hand-made segments."""
    encoded = root / "encoded"
    for sub in ("vectors", "tokens", "soft"):
        (encoded / sub).mkdir(parents=True)
    vec_lines, tok_lines = [], []
    for seg_id, tokens in segments.items():
        vector = {}
        for t, w in tokens:
            if t and w > 0:
                vector[t] = max(vector.get(t, 0), round(w * 100))
        vec_lines.append(json.dumps({"id": seg_id, "contents": "", "vector": vector or {"filler": 1}}))
        tok_lines.append(json.dumps({"id": seg_id, "tokens": [[t, w] for t, w in tokens]}))
    (encoded / "vectors" / "part-00000.jsonl").write_text("\n".join(vec_lines) + "\n")
    (encoded / "vectors" / "metadata.json").write_text(json.dumps({"scale": 100, "model": "test"}))
    (encoded / "tokens" / "part-00000.jsonl").write_text("\n".join(tok_lines) + "\n")
    (encoded / segment_store.STATE).write_text(json.dumps({"settings": {}, "complete": True}))
    return encoded


def random_segments(seed: int = 7, docs: int = 12) -> dict[str, list[tuple[str, float]]]:
    rng = random.Random(seed)
    out = {}
    for d in range(docs):
        for k in range(rng.randint(1, 3)):
            length = rng.choice([0, 1, 2, 5, 12, 30])
            out[f"doc{d}@@{k}"] = [(rng.choice(VOCAB), rng.choice([0.0, 0.25, 1.0, 1.5, 2.75]))
                                   for _ in range(length)]
    return out


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    root = tmp_path_factory.mktemp("sdm")
    segments = random_segments()
    encoded = make_encoded(root, segments)
    index = root / "index"
    build_segment_index(encoded, index, threads=1)
    # what the index holds: zero-weight tokens are blanked (never match), positions kept
    indexed = {s: [(t if w > 0 else "", w) for t, w in toks] for s, toks in segments.items()}
    return index, indexed


def test_lucene_window_scores_equal_brute_force(synthetic):
    from lsr_lucene.search.spec_searcher import SpecSearcher

    index, indexed = synthetic
    rng = random.Random(3)
    seg_ids = sorted(indexed)
    checked = matched = 0
    with SpecSearcher(index) as searcher:
        for trial in range(40):
            n = rng.choice([2, 2, 3])
            ordered = trial % 2 == 0
            terms = rng.sample(VOCAB[:-1], n) if not ordered else [rng.choice(VOCAB) for _ in range(n)]
            clause = Clause(tuple(terms), tuple(rng.choice([0.5, 1.0, 2.0]) for _ in range(n)))
            width = rng.choice([n, 3, 8])
            windows = sdm.window_dicts([clause], ordered, width)
            if not windows:
                continue
            scores = searcher.score({"qid": "q", "terms": {}, "windows": windows}, seg_ids)
            for seg_id, got in zip(seg_ids, scores):
                want = (sdm.ordered_potential(indexed[seg_id], clause) if ordered
                        else sdm.unordered_potential(indexed[seg_id], clause, width)) or 0.0
                assert got == pytest.approx(want, rel=1e-5, abs=1e-5), (seg_id, clause, ordered, width)
                checked += 1
                matched += want > 0
    assert checked > 500 and matched > 20


def test_exact_features_and_one_term_queries(synthetic):
    from lsr_lucene.search.spec_searcher import SpecSearcher

    index, indexed = synthetic
    query = Query("q", [], [[("court", 1.0), ("appeal", 2.0), ("held", 0.5), ("court", 1.5)]])
    settings = SdmSettings(ngram=2, width=4)
    seg_ids = sorted(indexed)
    clauses = sdm.query_clauses(query.sequences, 2)
    with SpecSearcher(index) as searcher:
        features = exact_features(searcher, query, seg_ids, settings)
        for seg_id in seg_ids:
            want = sdm.brute_force_features(indexed[seg_id], clauses, width=4)
            assert features[seg_id] == pytest.approx(want, rel=1e-5, abs=1e-5)
        one = Query("q1", [], [[("court", 1.0)]])
        assert set(exact_features(searcher, one, seg_ids, settings).values()) == {(0.0, 0.0)}


def test_exact_features_on_fire_sample(tmp_path):
    """Real segments and query (FIRE 2017 sample, splade-tiny weights): Lucene potentials = brute force."""
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.search.spec_searcher import SpecSearcher
    from lsr_lucene.longdocs.segment import Segmenter

    data = Path(__file__).resolve().parents[2] / "shared" / "data" / "fire2017"
    if not (data / "corpus.jsonl").exists():
        pytest.skip("FIRE 2017 data not available")
    encoder = SparseEncoder("splade-tiny", threads=2)
    segmenter = Segmenter(encoder.tokenizer, max_tokens=120, max_segments=2)
    docs = []
    with open(data / "corpus.jsonl") as handle:
        for line in handle:
            doc = json.loads(line)
            if doc["text"].strip():
                docs.append(doc)
            if len(docs) == 4:
                break
    rows = [json.dumps({"id": s.id, "text": s.text}) for d in docs for s in segmenter.segment(d["id"], d["text"])]
    (tmp_path / "segments.jsonl").write_text("\n".join(rows) + "\n")
    segment_store.encode_segments_dir(tmp_path / "segments.jsonl", tmp_path / "encoded", encoder)
    build_segment_index(tmp_path / "encoded", tmp_path / "index", threads=1)
    tokens = segment_store.read_tokens(tmp_path / "encoded")
    indexed = {s: [(t if w > 0 else "", w) for t, w in toks] for s, toks in tokens.items()}
    with open(data / "queries.jsonl") as handle:
        text = json.loads(handle.readline())["text"]
    # the query: the documents' own text as citation context guarantees matches, plus a real citation window
    passages = [longdoc_collections.citation_contexts(text)[0], " ".join(docs[0]["text"].split()[40:80])]
    query = encode_queries({"q": passages}, encoder)["q"]
    settings = SdmSettings(ngram=2, width=8)
    clauses = sdm.query_clauses(query.sequences, 2)
    assert clauses
    with SpecSearcher(tmp_path / "index") as searcher:
        features = exact_features(searcher, query, sorted(indexed), settings)
    nonzero = 0
    for seg_id, toks in indexed.items():
        want = sdm.brute_force_features(toks, clauses, width=8)
        assert features[seg_id] == pytest.approx(want, rel=1e-4, abs=1e-4)
        nonzero += want[0] > 0
    assert nonzero >= 1


# ---- pooling, fitting, metrics -----------------------------------------------------------------------------
def test_pooling_feature_vs_segment():
    segments = {0: (1.0, 0.0, 0.0), 1: (0.0, 2.0, 1.0), 3: (5.0, 0.0, 0.0)}
    assert list(sdm.pool_features(segments, None)) == [5.0, 2.0, 1.0]
    assert list(sdm.pool_features(segments, 2)) == [1.0, 2.0, 1.0]
    docs = {"d": segments}
    assert sdm.score_documents(docs, (1, 1, 1), 2, "feature") == {"d": 4.0}
    assert sdm.score_documents(docs, (1, 1, 1), 2, "segment") == {"d": 3.0}
    assert sdm.score_documents(docs, (1, 0, 0), None, "segment") == {"d": 5.0}  # = score-max


def test_fit_prefers_informative_proximity_and_saves(tmp_path):
    rng = np.random.default_rng(0)
    features, qrels = {}, {}
    for q in range(20):
        qid = f"q{q}"
        docs = {}
        for d in range(30):
            relevant = d < 3
            t = rng.uniform(0, 1)
            o = rng.uniform(0.5, 1.0) if relevant else rng.uniform(0, 0.4)
            docs[f"d{d:02d}"] = {0: (t, o, 0.0)}
        features[qid] = docs
        qrels[qid] = {f"d{d:02d}": 1 for d in range(3)}
    fitted = sdm.fit_lambdas(features, qrels, k=None, metric="map")
    assert fitted["lambda_O"] > 0
    assert fitted["train_map"] > fitted["train_map_unigram_only"]
    path = sdm.save_lambdas(tmp_path, "exact-sdm/feature/k=1", fitted)
    assert path.name == sdm.LAMBDAS_FILE
    assert sdm.load_lambdas(tmp_path, "exact-sdm/feature/k=1") == (1.0, fitted["lambda_O"], fitted["lambda_U"])
    with pytest.raises(InputError):
        sdm.load_lambdas(tmp_path, "soft-sdm/feature/k=1")


def test_fit_fast_metric_matches_reference_metrics():
    rng = np.random.default_rng(1)
    features = {"q": {f"d{i}": {n: tuple(rng.integers(0, 3, 3).astype(float)) for n in range(1 + i % 3)}
                      for i in range(25)}}
    qrels = {"q": {"d1": 1, "d4": 2, "d9": 1, "missing": 1}}
    for metric in ("map", "ndcg@10"):
        for pooling in ("feature", "segment"):
            for lam in ((1, 0, 0), (1, 0.5, 2), (0.2, 1, 0)):
                scores = sdm.score_documents(features["q"], lam, None, pooling)
                reference = sdm.METRICS[metric](rank_by_score(scores), qrels["q"])
                assert sdm.evaluate_lambdas(features, qrels, lam, None, pooling, metric) == pytest.approx(reference)


def test_metrics_match_trec_eval(tmp_path):
    from lsr_lucene.eval.trec import evaluate

    qrels = {"q1": {"a": 1, "c": 2, "z": 1}, "q2": {"b": 1}}
    # no tied scores: trec_eval breaks ties by docid descending, run files by docid ascending
    run = {"q1": {"a": 3.0, "b": 2.5, "c": 2.0, "d": 1.0}, "q2": {"a": 1.0, "b": 0.5}}
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, ds in qrels.items() for d, g in ds.items()))
    write_run(run, tmp_path / "run", "t", hits=1000)
    table = evaluate(tmp_path / "qrels", {"r": tmp_path / "run"}, measures=("map", "ndcg_cut_10"), per_query=True)
    for q in qrels:
        ranking = rank_by_score(run[q])
        assert table.loc[("r", q), "MAP"] == pytest.approx(sdm.average_precision(ranking, qrels[q]), abs=1e-4)
        assert table.loc[("r", q), "nDCG@10"] == pytest.approx(sdm.ndcg(ranking, qrels[q]), abs=1e-4)
