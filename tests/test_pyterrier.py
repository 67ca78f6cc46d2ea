"""``lsr_lucene.pyterrier``: the retriever's rows are the ``lsr-lucene search`` run's, the scorer's scores are
brute-force dot products, the composer's rows the ``compose`` run's, and pt.Experiment's nDCG@10 is trec_eval's."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pt = pytest.importorskip("pyterrier")

from lsr_lucene.io.runs import read_hits  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "lsr_lucene" / "data" / "demo"


@pytest.fixture(scope="module")
def setup(demo, tmp_path_factory):
    from lsr_lucene.compose.cli import main as compose_main
    from lsr_lucene.io.topics import read_topics
    from lsr_lucene.pyterrier import ImpactIndex
    from lsr_lucene.search.cli import main as search_main

    root = tmp_path_factory.mktemp("pyterrier")
    common = ["--index", str(demo / "index"), "--topics", str(DEMO / "topics.tsv"), "--hits", "10"]
    assert search_main([*common, "--output", str(root / "search.run")]) == 0
    assert compose_main([*common, "--output", str(root / "compose.run")]) == 0
    topics = pd.DataFrame([{"qid": q, "query": t} for q, t in read_topics(DEMO / "topics.tsv").items()])
    return {"index": ImpactIndex(demo / "index"), "topics": topics, "root": root, "demo": demo,
            "search": read_hits(root / "search.run"), "compose": read_hits(root / "compose.run")}


def rows(frame: pd.DataFrame) -> dict[str, list[tuple[str, float]]]:
    out: dict[str, list[tuple[str, float]]] = {}
    for qid, group in frame.groupby("qid", sort=False):
        assert list(group["rank"]) == list(range(len(group)))  # 0-based, in order
        out[qid] = list(zip(group["docno"], group["score"]))
    return out


def run_rows(run) -> dict[str, list[tuple[str, float]]]:
    return {q: [(d, float(s)) for d, s in hits] for q, hits in run.items()}


def test_import_starts_no_jvm():
    code = ("import sys, jnius_config, lsr_lucene.pyterrier; "
            "assert not jnius_config.vm_running and 'jnius' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)


def test_retriever_rows_equal_the_search_run(setup):
    ours = setup["index"].retriever(num_results=10)
    got = ours(setup["topics"])
    assert list(got.columns) == ["qid", "query", "docno", "score", "rank"]
    assert got["score"].dtype == "float64" and got["rank"].dtype == "int64"
    assert rows(got) == run_rows(setup["search"])
    by_vectors = (setup["index"].query_encoder() >> ours)(setup["topics"])
    assert rows(by_vectors) == rows(got)
    one = ours.search("tea without caffeine")
    assert list(one["docno"]) == [d for d, _ in setup["search"]["1"]]


def test_retriever_heap_factor(setup, zipf):
    """``retriever(heap_factor=H)`` on the synthetic collection where 0.5 prunes: the rows keep the heap factor's
    promise and miss some of the exact top k; 1 (and the retriever beside it on the same searcher) is exact; the
    rank cutoff keeps it; text queries on the demo at 1 are the search run; a bad value is an InputError."""
    from lsr_lucene.errors import InputError
    from lsr_lucene.pyterrier import ImpactIndex

    index = ImpactIndex(zipf.plain)
    specs = zipf.queries(20, 5)
    frame = pd.DataFrame([{"qid": s["qid"], "query_toks": s["terms"]} for s in specs])
    approximate, exact = index.retriever(100, heap_factor=0.5), index.retriever(100)
    got, expected = rows(approximate(frame)), rows(exact(frame))
    assert sum(zipf.check_heap_factor(got[s["qid"]], s["terms"], 100, 0.5) for s in specs) > 0
    assert all(zipf.check_heap_factor(expected[s["qid"]], s["terms"], 100, 1) == 0 for s in specs)
    assert (approximate % 10).compile().heap_factor == 0.5
    assert rows(setup["index"].retriever(num_results=10, heap_factor=1)(setup["topics"])) == run_rows(setup["search"])
    for bad in (0, 1.5, "x"):
        with pytest.raises(InputError, match="heap_factor must be"):
            index.retriever(heap_factor=bad)


def test_rank_cutoff_fuses_into_the_retriever(setup):
    ours = setup["index"].retriever()
    fused = (ours % 3).compile()
    assert getattr(fused, "num_results", None) == 3
    got = (ours % 3)(setup["topics"].head(2))
    assert got.groupby("qid").size().tolist() == [3, 3]


def test_a_result_frame_is_refused_naming_the_scorer(setup):
    ours = setup["index"].retriever(num_results=5)
    with pytest.raises(Exception, match=r"scorer\(\)"):
        ours(ours(setup["topics"].head(1)))


def test_scorer_gives_brute_force_dot_products(setup):
    """BM25-like candidates (the retriever's top 20, shuffled and rescored by score 0) re-ranked by the scorer:
    each score is the dot product of the quantised query and the document's vector."""
    from lsr_lucene.io.vectors import read_vectors, signed

    idx = setup["index"]
    topics = setup["topics"].head(4)
    candidates = idx.retriever(num_results=20)(topics).sample(frac=1.0, random_state=0).assign(score=0.0)
    got = idx.scorer()(candidates)
    docs = {doc_id: signed(vector) for doc_id, vector in read_vectors(setup["demo"] / "vectors")}
    queries = dict(zip(topics["qid"], idx.query_encoder()(topics)["query_toks"]))
    for row in got.itertuples():
        expected = sum(w * docs[row.docno].get(t, 0) for t, w in queries[row.qid].items())
        assert row.score == expected
    for qid, group in got.groupby("qid"):
        assert list(group["score"]) == sorted(group["score"], reverse=True)
        assert list(group["rank"]) == list(range(len(group)))


def test_composer_rows_equal_the_compose_run(setup):
    got = setup["index"].composer(num_results=10)(setup["topics"])
    assert rows(got) == run_rows(setup["compose"])
    index = setup["index"]  # the composer searches the retriever's open index (opened once), exactly
    assert index.compose_searcher().backend.searcher is index.searcher().spec_searcher


def test_experiment_ndcg_equals_trec_eval(setup, tmp_path):
    """pt.Experiment of BM25 (pyterrier_pisa), ours, BM25 >> ours' scorer and the composer; ours' nDCG@10 equals
    trec_eval's (lsr_lucene.eval) on the ``lsr-lucene search`` run."""
    pytest.importorskip("pyterrier_pisa")
    from lsr_lucene.eval.trec import evaluate
    from scripts.pyterrier.pyterrier_demo import experiment
    from lsr_lucene.search.cli import main as search_main

    table = experiment(setup["demo"] / "index", tmp_path / "pisa").set_index("name")
    run = tmp_path / "full.run"
    assert search_main(["--index", str(setup["demo"] / "index"), "--topics", str(DEMO / "topics.tsv"),
                        "--output", str(run)]) == 0
    reference = evaluate(DEMO / "qrels.txt", {"ours": run}, ["nDCG@10"]).loc["ours", "nDCG@10"]
    assert table.loc["SPLADE", "nDCG@10"] == pytest.approx(reference, abs=1e-9)
    assert list(table.index) == ["BM25", "SPLADE", "BM25>>SPLADE", "compose"]
    assert table["nDCG@10"].between(0, 1).all()
    assert not pt.java.started()  # pt.Experiment and pyterrier_pisa ran without Terrier's Java


def test_another_jvm_first_is_a_clear_error(setup, tmp_path):
    """A JVM started without our jar (as Terrier's would be) → one error naming the order to create objects in."""
    code = ("import jnius_config; jnius_config.set_classpath('.'); import jnius\n"
            "from lsr_lucene.pyterrier import ImpactIndex\n"
            "try:\n"
            f"    ImpactIndex({str(setup['demo'] / 'index')!r}).retriever().search('tea')\n"
            "except Exception as exc:\n"
            "    print(type(exc).__name__, exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.stdout.startswith("SetupError") and "lsr_lucene objects first" in done.stdout, done.stdout + done.stderr


def test_retriever_by_path_keeps_input_order_and_duplicate_qids(setup):
    """``ImpactRetriever(path, num_results=..)`` works without a factory; queries come back in input order (not
    sorted by qid), each with its own hits, also when two rows share a qid; other input columns are kept."""
    from lsr_lucene.pyterrier import ImpactRetriever

    topics = setup["topics"]
    frame = pd.concat([topics.iloc[::-1], topics.head(1)], ignore_index=True).assign(extra=7)
    got = ImpactRetriever(setup["demo"] / "index", num_results=4)(frame)
    assert list(got.columns) == ["qid", "query", "extra", "docno", "score", "rank"] and (got["extra"] == 7).all()
    blocks, start = [], 0
    for qid in frame["qid"]:
        blocks.append(got.iloc[start:start + 4])
        start += 4
    assert start == len(got)
    for qid, block in zip(frame["qid"], blocks):
        assert (block["qid"] == qid).all() and list(block["rank"]) == [0, 1, 2, 3]
        assert list(zip(block["docno"], block["score"])) == run_rows(setup["search"])[qid][:4]


def test_one_batch_call_per_frame(setup, monkeypatch):
    """A frame of every demo topic is one ``batch_search`` (text) or ``batch_search_specs`` (query_toks) call, with
    the index's threads, not one JVM call per row."""
    idx = setup["index"]
    searcher = idx.searcher()
    vectors = idx.query_encoder()(setup["topics"])
    calls = []
    for name in ("batch_search", "batch_search_specs", "search", "search_spec"):
        original = getattr(searcher, name)
        monkeypatch.setattr(searcher, name, lambda *a, _f=original, _n=name, **k: calls.append((_n, k)) or _f(*a, **k))
    idx.retriever(num_results=10)(setup["topics"])
    idx.retriever(num_results=10)(vectors)
    assert [(n, k["threads"]) for n, k in calls] == [("batch_search", 2), ("batch_search_specs", 2)]


def test_blank_and_empty_inputs(setup):
    """A blank query is refused naming its qid (as ``search --topics`` refuses it; the encoder would otherwise search
    the expansion of the empty string), by the retriever, the query encoder and the scorer; an empty frame gives an
    empty result frame with the result columns and types; a scored docno the index lacks names its query."""
    from lsr_lucene.errors import InputError

    idx = setup["index"]
    blank = pd.DataFrame([{"qid": "a", "query": "tea"}, {"qid": "b", "query": "  "}])
    for transformer in (idx.retriever(num_results=3), idx.query_encoder()):
        with pytest.raises(InputError, match="query b has no text"):
            transformer(blank)
    with pytest.raises(InputError, match="query b has no text"):
        idx.scorer()(blank.assign(docno="tea-01", score=0.0, rank=0))
    empty = idx.retriever(num_results=3)(setup["topics"].head(0))
    assert list(empty.columns) == ["qid", "query", "docno", "score", "rank"] and len(empty) == 0
    assert empty["docno"].dtype == pd.Series(["x"]).dtype and empty["score"].dtype == "float64"
    assert empty["rank"].dtype == "int64"
    missing = pd.DataFrame([{"qid": "q7", "query": "tea", "docno": "no-such-doc", "score": 0.0, "rank": 0}])
    with pytest.raises(InputError, match="query q7: docid 'no-such-doc'"):
        idx.scorer()(missing)


def test_composer_trees_and_options_equal_the_compose_run(setup, tmp_path):
    """A ``composition`` column of JSON trees, with ``not_op="subtract"``: the rows of ``lsr-lucene compose
    --queries compositions.jsonl --not-op subtract``; ``composer % 3`` keeps the options and cuts to 3."""
    import json

    from lsr_lucene.compose.cli import main as compose_main

    run = tmp_path / "trees.run"
    assert compose_main(["--index", str(setup["demo"] / "index"), "--queries", str(DEMO / "compositions.jsonl"),
                         "--not-op", "subtract", "--hits", "10", "--output", str(run)]) == 0
    lines = [json.loads(line) for line in (DEMO / "compositions.jsonl").read_text().splitlines() if line.strip()]
    frame = pd.DataFrame([{"qid": str(o["id"]), "composition": o["query"]} for o in lines])
    composer = setup["index"].composer(num_results=10, not_op="subtract")
    assert rows(composer(frame)) == run_rows(read_hits(run))
    cut = (composer % 3).compile()
    assert cut.num_results == 3 and cut.options == {"not_op": "subtract"}
    assert rows(cut(frame)) == {q: hits[:3] for q, hits in run_rows(read_hits(run)).items()}
    default = setup["index"].retriever()
    assert (default.num_results, default.encoder, default.heap_factor) == (1000, None, 1.0)
    assert not hasattr(default, "approximate")  # the retired top-postings mode


def test_composer_reads_the_explicit_syntax(setup):
    """Issues 50 and 65: ``tea -caffeine -milk`` in the query column gives ComposeSearcher's hits of it: no document
    whose text contains caffeine or milk (removed inside the search: still 5 rows)."""
    from lsr_lucene.search.text_filter import text_contains

    index = setup["index"]
    syntax = index.composer(num_results=5)(pd.DataFrame([{"qid": "1", "query": "tea -caffeine -milk"}]))
    searcher = index.compose_searcher()
    want = [(h.docid, h.score) for h in searcher.search("tea -caffeine -milk", k=5)]
    texts = searcher.backend.texts([d for d, _ in want])
    assert not any(text_contains(texts[d], b) for d, _ in want for b in ("caffeine", "milk"))
    assert rows(syntax)["1"] == want and len(want) == 5
