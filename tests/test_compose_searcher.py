"""ComposeSearcher (the Python API of ``lsr-lucene compose``) on the demo collection: hits equal the command's run."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lsr_lucene.compose.cli import main
from lsr_lucene.compose.tree import Node
from lsr_lucene.errors import InputError
from lsr_lucene.io.runs import read_hits
from lsr_lucene.io.topics import read_topics

DEMO = Path(__file__).resolve().parents[1] / "lsr_lucene" / "data" / "demo"


@pytest.fixture(scope="module")
def searcher(demo):
    from lsr_lucene.compose import ComposeSearcher

    with ComposeSearcher(demo / "index") as s:
        yield s


def as_rows(hits) -> list[tuple[str, float]]:
    return [(h.docid, h.score) for h in hits]


def test_import_starts_neither_jvm_nor_torch():
    code = ("import sys; from lsr_lucene.compose import ComposeSearcher; "
            "print('torch' in sys.modules, 'jnius' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_trees_equal_the_compose_run(demo, searcher, tmp_path):
    run = tmp_path / "run"
    assert main(["--index", str(demo / "index"), "--queries", str(DEMO / "compositions.jsonl"), "--hits", "10",
                 "--output", str(run)]) == 0
    expected = read_hits(run)
    lines = [json.loads(line) for line in (DEMO / "compositions.jsonl").read_text().splitlines()]
    got = searcher.batch_search([row["query"] for row in lines], [row["id"] for row in lines], k=10)
    assert set(got) == set(expected)
    for qid, rows in expected.items():
        assert as_rows(got[qid]) == rows, qid  # docids, order and the run's six-decimal scores
    assert all(h.lucene_docid >= 0 for hits in got.values() for h in hits)
    hit = got["1"][0]
    assert hit.raw is not None and json.loads(hit.raw)  # the stored document, as ImpactSearcher's hits have it


def test_texts_equal_the_compose_run_and_search_equals_batch_search(demo, searcher, tmp_path):
    run = tmp_path / "run"
    assert main(["--index", str(demo / "index"), "--topics", str(DEMO / "topics.tsv"), "--hits", "5",
                 "--threads", "2", "--output", str(run)]) == 0
    expected = read_hits(run)
    topics = read_topics(DEMO / "topics.tsv")
    batch = searcher.batch_search(list(topics.values()), list(topics), k=5, threads=2)
    for qid in topics:
        assert as_rows(batch[qid]) == expected.get(qid, []), qid
    for qid in ("1", "2", "6", "17", "27"):  # negated, and-cued, uncued
        assert as_rows(searcher.search(topics[qid], k=5)) == as_rows(batch[qid]), qid


def test_other_operations_through_the_same_options(demo, tmp_path):
    from lsr_lucene.compose import ComposeSearcher

    run = tmp_path / "run"
    assert main(["--index", str(demo / "index"), "--query", "tea without caffeine", "--query", "rice and beans",
                 "--not-op", "nrf", "--lam", "0.7", "--and-op", "add", "--hits", "8", "--output", str(run)]) == 0
    expected = read_hits(run)
    with ComposeSearcher(demo / "index", not_op="nrf", lam=0.7, and_op="add") as s:
        assert as_rows(s.search("tea without caffeine", k=8)) == expected["1"]
        assert as_rows(s.search({"query": "rice and beans"}, k=8)) == expected["2"]


def test_parse_reports_the_tree_and_the_cue(searcher):
    report = searcher.parse("films about dogs but not cartoons")
    assert report.tree == Node("not", "films about dogs", "cartoons")
    assert [d.cue for d in report.fired] == ["but not"] and report.fired[0].text == "but not"
    assert any("cartoons" in line for line in report.lines())
    assert searcher.parse("how do hurricanes form").fired == []


def test_explain_shows_both_legs_gate_and_fused_score(searcher):
    from lsr_lucene.compose.penalty import GATED_FLOOR, penalty
    from lsr_lucene.compose.operations import gated_not

    tree = {"op": "not", "a": "tea", "b": "caffeine"}
    docs = searcher.explain(tree, k=10)
    hits = searcher.search(tree, k=10)
    assert [d.docid for d in docs] == [h.docid for h in hits]
    assert [round(d.score, 6) for d in docs] == [h.score for h in hits]
    for d in docs:
        root = d.nodes[0]
        assert root.path == "" and root.op == "not" and root.gate == 0.9 and d.gate == 0.9
        assert root.term_scale is not None and root.contains is not None  # "caffeine" is a short term
        assert root.penalty == pytest.approx(penalty(root.b_scaled, root.lam, 0.9, root.absent, root.contains,
                                                     root.term_scale))
        assert root.fused == pytest.approx(gated_not(root.a_scaled, root.b_scaled, root.lam, 0.9, absent=root.absent,
                                                     contains=root.contains, term_scale=root.term_scale))
        assert root.fused == pytest.approx(d.score)
        assert root.fused == pytest.approx(max(root.a_scaled - root.penalty, GATED_FLOOR * root.a_scaled))
        assert root.fused <= root.a_scaled + 1e-12  # stated absence waives, never lifts (issue 65)
    assert 0 <= root.a_scaled <= 1 and 0 <= root.b_scaled <= 1 and root.a >= 0 and root.b >= 0
    assert any(d.nodes[0].absent for d in docs) and any("stated absent" in line for d in docs for line in d.lines())
    deeper = searcher.explain(tree, k=1000)  # penalised documents fall to the floor, below every A-match
    penalised = [d for d in deeper if d.penalty > 0]  # documents about caffeine pay, those that deny it do not
    assert penalised and all(d.nodes[0].absent < 1 for d in penalised)
    assert all(d.penalty == 0 for d in deeper if d.nodes[0].absent == 1)
    assert "gate 0.9" in "\n".join(docs[0].lines())
    text = "\n".join(line for d in deeper for line in d.lines())
    assert "penalised:" in text and "text contains B" in text and "waived" in text
    vector = searcher.explain("tea", k=3)  # one vector: term contributions instead
    assert vector[0].nodes == () and vector[0].terms and vector[0].a is None


def test_bad_queries_are_input_errors(searcher):
    with pytest.raises(InputError, match="empty query"):
        searcher.search("  ")
    with pytest.raises(InputError, match="unknown op"):
        searcher.search({"op": "xor", "a": "x", "b": "y"})
    with pytest.raises(InputError, match="k must be >= 1"):
        searcher.search("tea", k=0)
    with pytest.raises(InputError, match="2 queries but 1 qids"):
        searcher.batch_search(["a", "b"], ["1"])
    with pytest.raises(InputError, match="duplicate qid '7' in the qids"):
        searcher.batch_search(["tea", "coffee"], ["7", 7])
    with pytest.raises(InputError, match="does not apply"):
        from lsr_lucene.compose import ComposeSearcher

        ComposeSearcher(searcher.index_dir, not_op="cpt")


def test_explain_cli_shows_legs_and_gate(demo, tmp_path, capsys):
    assert main(["--index", str(demo / "index"), "--query", "tea without caffeine", "--explain", "--hits", "5",
                 "--output", str(tmp_path / "run")]) == 0
    text = capsys.readouterr().out
    assert "cue 'without'" in text and "root: A " in text and "(scaled " in text and "gate 0.9: " in text
    assert "penalised" in text or "waived" in text
    assert "-> fused " in text


def test_write_specs_refuses_fusion_in_one_line_before_any_work(demo, tmp_path, monkeypatch):
    from lsr_lucene.compose.searcher import ComposeSearcher

    run, specs = tmp_path / "run", tmp_path / "specs.jsonl"
    base = ["--index", str(demo / "index"), "--query", "tea without caffeine", "--output", str(run),
            "--write-specs", str(specs)]
    with monkeypatch.context() as patch, pytest.raises(InputError) as err:
        patch.setattr(ComposeSearcher, "plans", lambda *a: pytest.fail("encoded before refusing"))
        main(base)
    message = str(err.value)
    assert "\n" not in message and "fusion-gated" in message and "--not-op disentangled" in message
    assert not run.exists() and not specs.exists()
    assert main([*base, "--not-op", "disentangled"]) == 0  # a vector operation: specs and the run
    assert run.is_file() and len(specs.read_text().splitlines()) == 1
    uncued = tmp_path / "uncued.run"  # the default writes specs for topics the parser leaves atomic
    assert main(["--index", str(demo / "index"), "--query", "green tea", "--output", str(uncued),
                 "--write-specs", str(tmp_path / "uncued.jsonl")]) == 0


def test_one_searcher_shared_by_threads_equals_sequential(demo):
    """One fresh ComposeSearcher (loaded by whichever thread comes first) searched from four threads at once, texts,
    trees and two-thread batches interleaved: every hit list equals the sequential one exactly."""
    from lsr_lucene.compose import ComposeSearcher
    from lsr_lucene.serve.pool import JvmWorkerPool

    topics = read_topics(DEMO / "topics.tsv")
    trees = [json.loads(line)["query"] for line in (DEMO / "compositions.jsonl").read_text().splitlines()]
    queries = list(topics.values()) + trees
    with ComposeSearcher(demo / "index") as alone:
        expected = [as_rows(alone.search(q, k=10)) for q in queries]
    jobs = [i % len(queries) for i in range(3 * len(queries))]  # every query three times, interleaved
    pool = JvmWorkerPool(4, name="compose-test")  # workers attached to the JVM once, detached when closed
    try:
        with ComposeSearcher(demo / "index") as shared:
            singles = [pool.submit(shared.search, queries[i], 10) for i in jobs]
            batches = [pool.submit(shared.batch_search, queries[j:j + 5], [str(n) for n in range(5)], 10, 2)
                       for j in range(0, len(queries) - 5, 5)]
            got = [as_rows(f.result(timeout=600)) for f in singles]
            got_batches = [{q: as_rows(h) for q, h in f.result(timeout=600).items()} for f in batches]
    finally:
        pool.close()
    assert got == [expected[i] for i in jobs]
    assert got_batches == [{str(n): expected[j + n] for n in range(5)} for j in range(0, len(queries) - 5, 5)]


def test_stored_texts_read_from_many_threads_at_once_equal_the_sequential_read(demo):
    """Candidates' texts (the absence rule's reads) from six threads at once on one index: each equals the
    sequential read (they went through a static Java method, which pyjnius cannot call from several threads at once:
    NullPointerException, or a JVM crash in GetStaticMethodID)."""
    from lsr_lucene.compose.backends import LuceneBackend
    from lsr_lucene.serve.pool import JvmWorkerPool

    docs = [json.loads(line)["id"] for line in (DEMO / "corpus.jsonl").read_text().splitlines()]
    backend = LuceneBackend(demo / "index", threads=1)
    pool = JvmWorkerPool(6, name="texts-test")
    try:
        expected = backend.texts(docs)
        parts = [docs[i % 50:i % 50 + 60] for i in range(600)]
        got = [f.result(timeout=600) for f in [pool.submit(backend.texts, part) for part in parts]]
    finally:
        pool.close()
        backend.close()
    assert got == [{d: expected[d] for d in part} for part in parts]


def test_one_thread_searches_in_memory_and_equals_the_batch_run(demo, searcher, monkeypatch):
    """threads=1 (search, the server's requests) writes no file; its hits equal the two-thread batch's, which
    goes through a run file."""
    import tempfile

    trees = [json.loads(line)["query"] for line in (DEMO / "compositions.jsonl").read_text().splitlines()]
    qids = [str(i) for i in range(len(trees))]
    batch = searcher.batch_search(trees, qids, k=10, threads=2)
    with monkeypatch.context() as patch:
        for name in ("TemporaryDirectory", "NamedTemporaryFile", "TemporaryFile", "mkstemp", "mkdtemp"):
            patch.setattr(tempfile, name, lambda *a, **k: pytest.fail("a temporary file was made"))
        single = searcher.batch_search(trees, qids, k=10, threads=1)
    assert {q: as_rows(h) for q, h in single.items()} == {q: as_rows(h) for q, h in batch.items()}
