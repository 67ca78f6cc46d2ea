"""Long documents: loaders, aggregations and score-max through Lucene = brute force, ExactSDM end to end, CLI."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lsr_lucene.errors import InputError
from lsr_lucene.io.ranking import ranking as rank_by_score
from lsr_lucene.longdocs import collections as longdoc_collections
from lsr_lucene.longdocs import sdm
from lsr_lucene.longdocs import store as segment_store
from lsr_lucene.longdocs.cli import main
from lsr_lucene.longdocs.indexes import aggregate_vectors, build_aggregate_index, build_segment_index
from lsr_lucene.longdocs.queries import Query, encode_queries
from lsr_lucene.io.runs import read_hits
from lsr_lucene.longdocs.runs import collapse, with_tail
from lsr_lucene.longdocs.sdm_features import SdmSettings
from lsr_lucene.longdocs.segment import parse_segment_id
from lsr_lucene.longdocs.segment_search import SegmentSearch, segment_hits

FIRE = Path(__file__).resolve().parents[2] / "shared" / "data" / "fire2017"


# ---- loaders -----------------------------------------------------------------------------------------------
def test_citation_contexts():
    text = "[?CITATION?] a b c d e [?CITATION?] f g h [?CITATION?]"
    assert longdoc_collections.citation_contexts(text, words=2) == ["a b", "d e f g", "g h"]
    assert longdoc_collections.citation_contexts("no markers here", words=2) == []
    assert longdoc_collections.citation_contexts("x[?CITATION?]y", words=1) == ["x y"]


def test_fire2017_loader_modes():
    if not FIRE.is_dir():
        pytest.skip("FIRE 2017 data not available")
    from transformers import AutoTokenizer

    from lsr_lucene.encode.models import resolve
    from lsr_lucene.longdocs.segment import wordpiece_counter

    tokenizer = AutoTokenizer.from_pretrained(resolve("splade-tiny"))
    coll = longdoc_collections.load_fire2017(FIRE, "citations")
    assert len(coll.queries) == 100 and len(coll.qrels) == 100
    first = json.loads((FIRE / "queries.jsonl").open().readline())
    assert len(coll.queries[first["id"]]) == first["text"].count("[?CITATION?]")
    assert all(len(p.split()) <= 80 for p in coll.queries[first["id"]])
    assert "80-word windows" in coll.note
    head = longdoc_collections.load_fire2017(FIRE, "head", tokenizer=tokenizer)
    count = wordpiece_counter(tokenizer)
    passage = head.queries[first["id"]]
    assert len(passage) == 1 and 480 <= count(passage)[0] <= 512 and "CITATION" not in passage[0]
    words = " ".join(first["text"].replace("[?CITATION?]", " ").split()).split()
    assert count([" ".join(words[:len(passage[0].split()) + 1])])[0] > 512  # the longest run of words that fits
    both = longdoc_collections.load_fire2017(FIRE, "both", tokenizer=tokenizer)
    assert both.queries[first["id"]] == coll.queries[first["id"]] + passage
    with pytest.raises(InputError):
        longdoc_collections.load_fire2017(FIRE, "everything")


def test_collection_errors_and_irds_field(monkeypatch, tmp_path):
    with pytest.raises(InputError):
        longdoc_collections.load_collection("no-such-collection", data_root=tmp_path)
    with pytest.raises(InputError):
        longdoc_collections.load_fire2017(tmp_path)  # missing files

    class Query:
        def __init__(self, qid, title, description):
            self.query_id, self.title, self.description = qid, title, description

    class Qrel:
        def __init__(self, qid, doc, rel):
            self.query_id, self.doc_id, self.relevance = qid, doc, rel

    class Dataset:
        def has_queries(self):
            return True

        def queries_iter(self):
            return iter([Query("301", "foreign minorities", "Identify documents about minorities.")])

        def qrels_iter(self):
            return iter([Qrel("301", "FBIS3-1", 1), Qrel("301", "FBIS3-2", 0)])

    import ir_datasets

    monkeypatch.setattr(ir_datasets, "load", lambda dataset_id: Dataset())
    coll = longdoc_collections.load_collection("robust04")
    assert coll.corpus == "irds:disks45/nocr/trec-robust-2004"
    assert coll.queries == {"301": ["Identify documents about minorities."]}  # description field
    assert coll.qrels == {"301": {"FBIS3-1": 1, "FBIS3-2": 0}}


def test_jsonl_collection(tmp_path):
    (tmp_path / "corpus.jsonl").write_text(json.dumps({"id": "d", "text": "long text"}) + "\n")
    (tmp_path / "topics.tsv").write_text("q1\tlong\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d 1\n")
    coll = longdoc_collections.load_collection(str(tmp_path / "corpus.jsonl"), topics=str(tmp_path / "topics.tsv"),
                                               qrels=str(tmp_path / "qrels.txt"))
    assert coll.queries == {"q1": ["long"]} and coll.qrels == {"q1": {"d": 1}}


# ---- pure helpers --------------------------------------------------------------------------------------------
SEGMENT_VECTORS = [("a@@0", {"x": 10, "y": 4}), ("a@@1", {"x": 2, "z": 6}), ("a@@2", {"z": 1}),
                   ("b@@0", {"y": 3}), ("c@@1", {"x": 5})]  # c's segment 0 was empty (not encoded)


def test_aggregations():
    agg = lambda m, k: dict(aggregate_vectors(SEGMENT_VECTORS, m, k))  # noqa: E731
    assert agg("first", None) == {"a": {"x": 10, "y": 4}, "b": {"y": 3}}
    assert agg("rep-max", 2) == {"a": {"x": 10, "y": 4, "z": 6}, "b": {"y": 3}, "c": {"x": 5}}
    assert agg("rep-sum", None) == {"a": {"x": 12, "y": 4, "z": 7}, "b": {"y": 3}, "c": {"x": 5}}
    assert agg("rep-mean", None) == {"a": {"x": 4, "y": 1, "z": 2}, "b": {"y": 3}, "c": {"x": 5}}
    with pytest.raises(InputError):
        agg("rep-median", None)


def test_collapse_and_tail():
    scores = {"a@@0": 1.0, "a@@1": 5.0, "b@@0": 2.0, "c@@3": 9.0}
    assert collapse(scores, 1) == {"a": 1.0, "b": 2.0}
    assert collapse(scores, None) == {"a": 5.0, "b": 2.0, "c": 9.0}
    tail = with_tail({"b": 10.0}, {"a": 3.0, "b": 2.0, "c": 1.0}, hits=3)
    assert rank_by_score(tail) == ["b", "a", "c"]


def test_query_vector_combination():
    q = Query("q", [{"x": 1.0, "y": 2.0}, {"x": 3.0}], [])
    assert q.vector("sum") == {"x": 4.0, "y": 2.0}
    assert q.vector("max") == {"x": 3.0, "y": 2.0}
    with pytest.raises(InputError):
        q.vector("mean")


# ---- end to end on a tiny collection ---------------------------------------------------------------------------
TEXT = {
    "d1": "The appeal was dismissed by the High Court. The inherent powers of the court under section 151 "
          "were used to restore the execution case. " * 3,
    "d2": "Income tax assessment of capital gains. The assessee appealed against the revenue. " * 4,
    "d3": "",  # empty document: no segment
    "d4": ("Pension of retired medical officers and the non practising allowance treated as pay "
           + "word " * 600 + ". The court held the circular discriminatory."),  # a sentence over 512 tokens
}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from lsr_lucene.io.corpus import Doc
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.longdocs.segment import Segmenter, write_segments

    root = tmp_path_factory.mktemp("tiny")
    encoder = SparseEncoder("splade-tiny", threads=2, dtype="fp32")
    counts = write_segments([Doc(i, t) for i, t in TEXT.items()], Segmenter(encoder.tokenizer, max_tokens=40),
                            root / "segments.jsonl")
    assert counts["empty_documents"] == 1 and counts["long_segments"] >= 1
    segment_store.encode_segments_dir(root / "segments.jsonl", root / "encoded", encoder, top_k=4, shard_size=3)
    build_segment_index(root / "encoded", root / "index-segments", threads=1)
    return root, encoder


def dot(q, d):
    return sum(w * d.get(t, 0) for t, w in q.items())


def test_encode_is_resumable_and_checks_settings(tiny):
    root, encoder = tiny
    again = segment_store.encode_segments_dir(root / "segments.jsonl", root / "encoded", encoder, top_k=4, shard_size=3)
    assert again["encoded_now"] == 0
    with pytest.raises(InputError):
        segment_store.encode_segments_dir(root / "segments.jsonl", root / "encoded", encoder, scale=1000, shard_size=3)
    ids = [s for s, _ in segment_store.read_segment_vectors(root / "encoded")]
    assert not any(i.startswith("d3@@") for i in ids) and "d4@@0" in ids
    # the over-long sentence is one segment, truncated by the encoder at 512 tokens (510 without [CLS]/[SEP])
    tokens = segment_store.read_tokens(root / "encoded")
    assert max(len(t) for s, t in tokens.items() if s.startswith("d4@@")) == 510


def test_raising_the_cap_reuses_encoded_segments(tiny, tmp_path):
    from lsr_lucene.longdocs.softsdm import TopKStore

    root, encoder = tiny
    segments = root / "segments.jsonl"
    segment_store.encode_segments_dir(segments, tmp_path / "first1", encoder, top_k=4, shard_size=3, limit=1)
    info = segment_store.encode_segments_dir(segments, tmp_path / "all", encoder, top_k=4, shard_size=3,
                                        reuse=tmp_path / "first1")
    reused = sum(1 for s, _ in segment_store.read_segment_vectors(tmp_path / "first1"))
    assert info["segments"] > reused > 0 and info["encoded_now"] == info["segments"] - reused
    # identical to encoding everything afresh (root/encoded), vectors, position weights and top-k store alike
    assert list(segment_store.read_segment_vectors(tmp_path / "all")) == list(segment_store.read_segment_vectors(root / "encoded"))
    assert segment_store.read_tokens(tmp_path / "all") == segment_store.read_tokens(root / "encoded")
    fresh, copied = TopKStore(root / "encoded" / "soft"), TopKStore(tmp_path / "all" / "soft")
    for seg_id in fresh._where:
        for a, b in zip(fresh.get(seg_id), copied.get(seg_id)):
            assert np.array_equal(a, b)
    with pytest.raises(InputError, match="cannot reuse"):
        segment_store.encode_segments_dir(segments, tmp_path / "other", encoder, scale=1000, reuse=tmp_path / "first1")


def _record_batches(encoder, monkeypatch) -> list:
    """The padded batches fed to the model from now on, each as a sorted tuple of its token-id rows."""
    batches = []
    original = encoder._pad

    def pad(ids):
        batches.append(tuple(sorted(tuple(x) for x in ids)))
        return original(ids)

    monkeypatch.setattr(encoder, "_pad", pad)
    return batches


def test_batches_do_not_depend_on_the_cap_shards_or_resumption(tiny, tmp_path, monkeypatch):
    """A segment is batched with the same segments whatever the cap, the shard size or where a run resumes (fp32
    matrix kernels sum in an order that depends on a batch's shape: on AMX a segment moved to another batch gets
    other weights), so the reused and resumed encodings equal a fresh one on any CPU."""
    root, encoder = tiny
    segments = root / "segments.jsonl"
    batches = _record_batches(encoder, monkeypatch)
    segment_store.encode_segments_dir(segments, tmp_path / "fresh", encoder, top_k=4, shard_size=3)
    fresh = sorted(batches)
    batches.clear()
    segment_store.encode_segments_dir(segments, tmp_path / "other-shards", encoder, top_k=4, shard_size=5)
    assert sorted(batches) == fresh
    batches.clear()
    segment_store.encode_segments_dir(segments, tmp_path / "first1", encoder, top_k=4, shard_size=3, limit=1)
    segment_store.encode_segments_dir(segments, tmp_path / "all", encoder, top_k=4, shard_size=3,
                                      reuse=tmp_path / "first1")
    assert sorted(batches) == fresh  # the cap-1 run's batches and the rest's: those of the fresh run
    # a resumed run (shard 1 lost) encodes again whole batches of the fresh run, and gives the same output
    for folder in ("vectors", "tokens"):
        (tmp_path / "fresh" / folder / "part-00001.jsonl").unlink()
    (tmp_path / "fresh" / "soft" / "soft-00001.npz").unlink()
    batches.clear()
    segment_store.encode_segments_dir(segments, tmp_path / "fresh", encoder, top_k=4, shard_size=3)
    assert batches and set(batches) <= set(fresh)
    for other in ("other-shards", "all", "fresh"):
        assert list(segment_store.read_segment_vectors(tmp_path / other)) == \
            list(segment_store.read_segment_vectors(root / "encoded"))
        assert segment_store.read_tokens(tmp_path / other) == segment_store.read_tokens(root / "encoded")


def test_aggregations_and_score_max_through_lucene_equal_brute_force(tiny, tmp_path):
    from lsr_lucene.search.impact import plain_specs, run_specs

    root, encoder = tiny
    segs = dict(segment_store.read_segment_vectors(root / "encoded"))
    query = {"court": 120, "appeal": 80, "pension": 50, "tax": 30}
    for method, k in (("rep-sum", None), ("rep-max", 2), ("rep-mean", 3), ("first", None)):
        index = tmp_path / f"index-{method}"
        build_aggregate_index(root / "encoded", method, k, index, threads=1)
        run_specs(index, plain_specs({"q": query}), tmp_path / f"{method}.run", hits=10, threads=1)
        got = {d: s for d, s in read_hits(tmp_path / f"{method}.run")["q"]}
        docs = dict(aggregate_vectors(segs.items(), method, k))
        want = {d: dot(query, v) for d, v in docs.items() if dot(query, v) > 0}
        assert got == pytest.approx(want)
        if method == "rep-sum":  # Rep(score)-sum: the sum of the segment scores
            for d in want:
                assert want[d] == sum(dot(query, v) for s, v in segs.items() if s.startswith(d + "@@"))
    hits = segment_hits(root / "index-segments", {"q": query}, hits=100)["q"]
    assert hits == pytest.approx({s: dot(query, v) for s, v in segs.items() if dot(query, v) > 0})
    for k in (1, 2, None):
        brute = {}
        for s, v in segs.items():
            d, n = parse_segment_id(s)
            if (k is None or n < k) and dot(query, v) > 0:
                brute[d] = max(brute.get(d, 0), dot(query, v))
        assert collapse(hits, k) == pytest.approx(brute)


def test_exact_sdm_rerank_full_search_and_one_term_queries(tiny, tmp_path):
    root, encoder = tiny
    queries = encode_queries({"q": ["the inherent powers of the court under section 151"],
                                       "one": ["pension"]}, encoder)
    settings = SdmSettings(ngram=2, width=8)
    search = SegmentSearch(root / "index-segments", queries, "sum", None, settings, threads=1)
    feats = search.features("exact", depth=1000)
    lam = (1.0, 0.5, 0.25)
    # segment pooling computed in Python from the Lucene features = one Lucene query with the windows inside
    search.full_exact_sdm(lam, tmp_path / "full.run")
    full = {d: s for d, s in read_hits(tmp_path / "full.run")["q"]}
    python = sdm.score_documents(feats["q"], lam, None, "segment")
    assert set(full) == set(python)
    assert full == pytest.approx(python, rel=1e-4)
    # BatchSearcher's own rerank of the top segments gives the same scores when every segment is reranked
    search.full_exact_sdm(lam, tmp_path / "rerank.run", java_rerank=1000)
    rerank = {d: s for d, s in read_hits(tmp_path / "rerank.run")["q"]}
    assert rerank == pytest.approx(python, rel=1e-4)
    # proximity features are present for the phrase-matching document
    assert max(v[1] for v in feats["q"]["d1"].values()) > 0
    # a one-term query has no pair: ExactSDM = λ_T × score-max
    one = sdm.score_documents(feats["one"], lam, None, "feature")
    score_max = search.score_max()["one"]
    assert one == pytest.approx({d: s / 1e4 for d, s in score_max.items()})


def test_soft_sdm_features_from_store(tiny):
    root, encoder = tiny
    queries = encode_queries({"q": ["inherent powers of the court"]}, encoder)
    search = SegmentSearch(root / "index-segments", queries, "sum", None, SdmSettings())
    soft = search.features("soft", depth=10, encoded=root / "encoded")
    exact = search.features("exact", depth=10)
    for d, segments in exact["q"].items():
        for n, (t, o, u) in segments.items():
            st, so, su = soft["q"][d][n]
            assert st == t
            # soft matching can only add (own-token weights are part of W; no exact-match mask)
            assert so >= o - 1e-3 and su >= u - 1e-3


def test_cli_search_and_fit(tiny, tmp_path):
    root, _ = tiny
    (tmp_path / "topics.tsv").write_text("q1\tinherent powers of the court\nq2\tcapital gains tax\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    base = ["--index", str(root / "index-segments"), "--topics", str(tmp_path / "topics.tsv"), "--threads", "1"]
    assert main(["search", *base, "--method", "score-max", "--segments", "2",
                          "--output", str(tmp_path / "sm.run")]) == 0
    run = read_hits(tmp_path / "sm.run")
    assert run["q1"][0][0] == "d1" and all("@@" not in d for d, _ in run["q1"])  # one hit per document
    assert main(["fit", *base, "--method", "exact-sdm", "--qrels", str(tmp_path / "qrels.txt"),
                          "--train", "all"]) == 0
    saved = json.loads((root / "index-segments" / sdm.LAMBDAS_FILE).read_text())
    assert "exact-sdm/feature/k=all" in saved
    assert main(["search", *base, "--method", "exact-sdm", "--output", str(tmp_path / "sdm.run")]) == 0
    assert read_hits(tmp_path / "sdm.run")["q1"][0][0] == "d1"
    with pytest.raises(InputError):
        main(["search", *base, "--method", "exact-sdm", "--segments", "0", "--output", str(tmp_path / "x")])
    with pytest.raises(InputError):
        main(["nonsense"])


def test_bench_runs_on_tiny_index(tiny):
    from scripts.bench import longdocs as bench_longdocs

    root, encoder = tiny
    queries = encode_queries({"q": ["inherent powers of the court"], "one": ["pension"]}, encoder)
    result = bench_longdocs.run_bench(root / "index-segments", queries, "sum", (1.0, 0.1, 0.1),
                                      SdmSettings(), hits=10, rerank=10)
    assert set(result) >= {"impact", "exact-rerank", "exact-full", "exact-features"}
    assert result["impact"]["ratio_to_impact"] == 1.0
    size = bench_longdocs.index_sizes(root / "index-segments")
    assert 0 < size["positions_bytes"] < size["with_positions_bytes"]


def test_experiment_sweep_capped_then_uncapped(tmp_path):
    """The sweep end to end on a tiny JSONL collection: capped outputs carry the cap in their names, and the
    uncapped run reuses the capped encoding and keeps its own caches."""
    from scripts.longdocs.experiment import Experiment, ExperimentConfig

    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in TEXT.items()))
    (tmp_path / "topics.tsv").write_text("q1\tinherent powers of the court\nq2\tincome tax capital gains\n"
                                         "q3\tpension of retired medical officers\nq4\tappeal dismissed by the court\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d4 1\nq4 0 d1 1\n")
    common = dict(collection=str(tmp_path / "corpus.jsonl"), topics=str(tmp_path / "topics.tsv"),
                  qrels=str(tmp_path / "qrels.txt"), work=str(tmp_path / "work"), output=str(tmp_path / "out"),
                  max_tokens=40, threads=1, soft=False, baselines=False, methods=("aggregations", "exact"))
    Experiment(ExperimentConfig(max_segments=2, **common)).run()
    capped = (tmp_path / "out" / "corpus-first2-results.md").read_text()
    assert "all(2)" in capped and "| exact-sdm |" in capped and "| rep-sum |" in capped
    assert (tmp_path / "out" / "corpus-first2-ndcg_cut_10.png").stat().st_size > 0
    Experiment(ExperimentConfig(max_segments=None, **common)).run()
    uncapped = (tmp_path / "out" / "corpus-results.md").read_text()
    assert "| method | 1 | 2 | 3 | 4 | 5 | 8 | all |" in uncapped and "- all segments" in uncapped
    state = json.loads((tmp_path / "work" / "encoded-all" / "state.json").read_text())
    first2 = sum(1 for _ in segment_store.read_segment_vectors(tmp_path / "work" / "encoded-first2"))
    assert state["complete"] and state["segments"] > first2
    assert (tmp_path / "work" / "runs-first2").is_dir() and (tmp_path / "work" / "runs-all").is_dir()


@pytest.mark.parametrize("text", ["nan,0,0", "1,inf,0", "1,2", "1,x,0"])
def test_lambdas_must_be_three_finite_numbers(text):
    """--lambdas nan,0,0 wrote a run whose every score was nan."""
    from lsr_lucene.longdocs.sdm import parse_lambdas

    with pytest.raises(InputError, match=r"^--lambdas must be three finite numbers"):
        parse_lambdas(text)
    assert parse_lambdas("0.8,0.1,0.1") == (0.8, 0.1, 0.1)
