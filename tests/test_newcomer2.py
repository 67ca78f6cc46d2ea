"""Issue 38 (newcomer round 2): foreign indexes, inputs checked first, eval's missing queries, search --query,
truncation and progress said, one name per option, quiet libraries, small things.

Commands run in-process (``lsr_lucene.cli.main``) on a two-document corpus; the model is splade-tiny where encoding
matters and a fake or none where it does not.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsr_lucene.cli import main as cli_main
from lsr_lucene.errors import InputError

CORPUS = [{"id": "d1", "text": "green tea leaves"}, {"id": "d2", "title": "Coffee", "text": "black coffee beans"},
          {"id": "d3", "text": "tea and coffee"}]
VECTORS = [{"id": "d1", "contents": "green tea leaves", "vector": {"tea": 50, "green": 20, "heat": 5}},
           {"id": "d2", "contents": "black coffee beans", "vector": {"coffee": 40, "black": 10}},
           {"id": "d3", "contents": "tea and coffee", "vector": {"coffee": 30, "tea": 30}}]


def jsonl(*rows) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def lines(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(prefix)]


@pytest.fixture(scope="module")
def foreign(tmp_path_factory) -> dict[str, Path]:
    """Indexes built elsewhere (no lsr_lucene.json): a BM25 index (Anserini's IndexCollection with positions,
    as Pyserini builds them) and an impact index built by Anserini's IndexCollection; plus topics."""
    from lsr_lucene.index.impact import build_impact_index
    from lsr_lucene.search.bm25 import build_bm25_index

    root = tmp_path_factory.mktemp("newcomer2")
    (root / "vectors.jsonl").write_text(jsonl(*VECTORS))
    (root / "corpus.jsonl").write_text(jsonl(*CORPUS))
    build_impact_index(root / "vectors.jsonl", root / "impact", threads=1, indexer="anserini")
    build_bm25_index(str(root / "corpus.jsonl"), root / "bm25", threads=1)
    for name in ("impact", "bm25"):
        (root / name / "lsr_lucene.json").unlink()
    (root / "topics.tsv").write_text("1\tgreen tea\n2\tcoffee\n")
    return {"root": root, "impact": root / "impact", "bm25": root / "bm25", "topics": root / "topics.tsv",
            "corpus": root / "corpus.jsonl"}


# ------------------------------------------------------------------------------------------ 2. foreign indexes
def test_search_and_compose_refuse_a_bm25_index_built_elsewhere(foreign, tmp_path, capsys):
    bm25 = str(foreign["bm25"])
    (tmp_path / "specs.jsonl").write_text(jsonl({"qid": "1", "terms": {"tea": 1}}))
    for argv in (["search", "--index", bm25, "--specs", str(tmp_path / "specs.jsonl")],
                 ["compose", "--index", bm25, "--query", "tea but not coffee"]):
        capsys.readouterr()
        assert cli_main(argv + ["--output", str(tmp_path / "x.run")]) == 2, argv[0]
        errors = lines(capsys.readouterr().err, "error:")
        assert len(errors) == 1 and f"{bm25} is a text (BM25) index" in errors[0], errors
        assert "lsr-lucene bm25" in errors[0] and "LuceneSearcher" in errors[0]
    assert not (tmp_path / "x.run").exists()
    # the same index is what `lsr-lucene bm25` searches
    assert cli_main(["bm25", "--index", bm25, "--topics", str(foreign["topics"]), "--output",
                     str(tmp_path / "bm25.run")]) == 0
    assert (tmp_path / "bm25.run").read_text().split()[2] == "d1"


def test_an_anserini_impact_index_is_searched_without_spurious_warnings(foreign, tmp_path, capsys):
    run = tmp_path / "a.run"
    assert cli_main(["search", "--index", str(foreign["impact"]), "--topics", str(foreign["topics"]),
                     "--output", str(run), "--threads", "1", "--encoder", "splade-tiny"]) == 0
    err = capsys.readouterr().err
    assert lines(err, "warning:") == [], err  # splade-tiny's expansion terms the collection lacks are normal
    assert {line.split()[0] for line in run.read_text().splitlines()} == {"1", "2"}
    # hand-written specs still name the terms the index lacks
    (tmp_path / "specs.jsonl").write_text(jsonl({"qid": "1", "terms": {"tea": 1, "teaa": 2}}))
    assert cli_main(["search", "--index", str(foreign["impact"]), "--specs", str(tmp_path / "specs.jsonl"),
                     "--output", str(tmp_path / "b.run")]) == 0
    assert any("teaa" in line for line in lines(capsys.readouterr().err, "warning:"))


# ------------------------------------------------------------------------------------- 5. search --query
def test_search_takes_queries_on_the_command_line(foreign, tmp_path, capsys):
    run = tmp_path / "q.run"
    assert cli_main(["search", "--index", str(foreign["impact"]), "--query", "green tea", "--query", "coffee",
                     "--output", str(run), "--threads", "1", "--encoder", "splade-tiny"]) == 0
    rows = [line.split() for line in run.read_text().splitlines()]
    assert [r[0] for r in rows if r[3] == "1"] == ["1", "2"]
    by_topics = tmp_path / "t.run"
    assert cli_main(["search", "--index", str(foreign["impact"]), "--topics", str(foreign["topics"]),
                     "--output", str(by_topics), "--threads", "1", "--encoder", "splade-tiny"]) == 0
    assert by_topics.read_text() == run.read_text()
    capsys.readouterr()
    assert cli_main(["search", "--index", str(foreign["impact"]), "--query", " ", "--output",
                     str(tmp_path / "e.run"), "--encoder", "splade-tiny"]) == 2
    assert lines(capsys.readouterr().err, "error:") == ["error: --query 1: empty query"]


# ------------------------------------------------------------------------------------- 6. truncation said
def test_truncated_queries_are_counted_with_the_option_that_sets_the_limit(foreign, tmp_path, capsys):
    long = " ".join(["coffee"] * 80)
    assert cli_main(["search", "--index", str(foreign["impact"]), "--query", "tea", "--query", long,
                     "--output", str(tmp_path / "a.run"), "--threads", "1", "--encoder", "splade-tiny"]) == 0
    warnings = lines(capsys.readouterr().err, "warning:")
    assert len(warnings) == 1 and "1 of 2 queries are longer than 64 tokens" in warnings[0]
    assert "--query-max-length" in warnings[0]
    assert cli_main(["search", "--index", str(foreign["impact"]), "--query", "tea", "--query", long,
                     "--query-max-length", "128", "--output", str(tmp_path / "b.run"), "--threads", "1", "--encoder", "splade-tiny"]) == 0
    assert lines(capsys.readouterr().err, "warning:") == []


# ----------------------------------------------------------------------------- 3. inputs checked before work
def test_bm25_checks_its_topics_before_building_the_index(foreign, tmp_path, capsys, monkeypatch):
    import lsr_lucene.search.bm25 as bm25

    monkeypatch.setattr(bm25, "run_index_collection", lambda *a, **k: pytest.fail("index built before the check"))
    (tmp_path / "bad.jsonl").write_text('{"id": "1", "text": "tea"}\n{"id": "2", \n')
    for topics, message in ((tmp_path / "none.tsv", "no such file"), (tmp_path / "bad.jsonl", "malformed JSON")):
        assert cli_main(["bm25", "--index", str(tmp_path / "idx"), "--corpus", str(foreign["corpus"]),
                         "--topics", str(topics), "--output", str(tmp_path / "r.run")]) == 2
        errors = lines(capsys.readouterr().err, "error:")
        assert len(errors) == 1 and message in errors[0], errors
    assert not (tmp_path / "idx").exists()


def test_longdocs_search_reads_its_topics_before_the_model(foreign, tmp_path, capsys, monkeypatch):
    import lsr_lucene.encode.encoder as encoder

    monkeypatch.setattr(encoder, "SparseEncoder", lambda *a, **k: pytest.fail("model loaded before the topics"))
    assert cli_main(["longdocs", "search", "--index", str(foreign["impact"]), "--method", "score-max",
                     "--topics", str(tmp_path / "none.tsv"), "--output", str(tmp_path / "r.run")]) == 2
    assert "no such file" in lines(capsys.readouterr().err, "error:")[0]


# ------------------------------------------------------------------------------- 4. eval: missing queries
def test_eval_counts_judged_queries_without_results_and_takes_a_subset(tmp_path, capsys):
    (tmp_path / "qrels").write_text("1 0 d1 1\n2 0 d2 1\n3 0 d3 1\n")
    (tmp_path / "run").write_text("1 Q0 d1 1 2.0 t\n")
    assert cli_main(["eval", "--qrels", str(tmp_path / "qrels"), "--run", f"a={tmp_path / 'run'}",
                     "--measures", "map"]) == 0
    captured = capsys.readouterr()
    warnings = lines(captured.err, "warning:")
    assert len(warnings) == 1 and "run a: 2 of 3 judged queries have no results" in warnings[0]
    assert "--qids" in warnings[0]
    assert "| 0.3333 |" in captured.out
    (tmp_path / "qids").write_text("1\n")
    assert cli_main(["eval", "--qrels", str(tmp_path / "qrels"), "--run", f"a={tmp_path / 'run'}",
                     "--measures", "map", "--qids", str(tmp_path / "qids")]) == 0
    captured = capsys.readouterr()
    assert lines(captured.err, "warning:") == [] and "| 1 " in captured.out.replace("1.0000", "1 ")
    (tmp_path / "other").write_text("9\n")
    assert cli_main(["eval", "--qrels", str(tmp_path / "qrels"), "--run", f"a={tmp_path / 'run'}",
                     "--qids", str(tmp_path / "other")]) == 2
    assert "none of its 1 query ids is judged" in capsys.readouterr().err


# ------------------------------------------------------------------------- 8. one name, one default, order
def test_bm25_writes_its_run_in_the_topics_order(foreign, tmp_path):
    (tmp_path / "topics.tsv").write_text("10\ttea\n9\tcoffee\n100\tgreen\n")
    run = tmp_path / "r.run"
    assert cli_main(["bm25", "--index", str(foreign["bm25"]), "--topics", str(tmp_path / "topics.tsv"),
                     "--output", str(run)]) == 0
    qids = list(dict.fromkeys(line.split()[0] for line in run.read_text().splitlines()))
    assert qids == ["10", "9", "100"]


def test_longdocs_fit_metric_takes_evals_names():
    from lsr_lucene.longdocs.cli import fit_metric

    assert fit_metric("map") == fit_metric("MAP") == "map"
    assert fit_metric("ndcg_cut_10") == fit_metric("ndcg_cut.10") == fit_metric("nDCG@10") == "ndcg@10"
    with pytest.raises(InputError, match="--metric must be map or ndcg_cut_10"):
        fit_metric("recall_100")


def test_longdocs_encode_refuses_a_complete_encoding_without_overwrite(tmp_path, capsys, monkeypatch):
    import lsr_lucene.encode.encoder as encoder

    out = tmp_path / "encoded"
    out.mkdir()
    from lsr_lucene.longdocs.store import STATE

    (out / STATE).write_text(json.dumps({"settings": {}, "complete": True}))
    (tmp_path / "segments.jsonl").write_text(jsonl({"id": "d1@@0", "contents": "tea"}))
    monkeypatch.setattr(encoder, "SparseEncoder", lambda *a, **k: pytest.fail("model loaded"))
    assert cli_main(["longdocs", "encode", "--segments", str(tmp_path / "segments.jsonl"), "--output",
                     str(out)]) == 2
    errors = lines(capsys.readouterr().err, "error:")
    assert len(errors) == 1 and "holds a complete encoding; pass --overwrite" in errors[0]


# ---------------------------------------------------------------------------------------------- 9. noise
def test_the_python_api_loads_models_without_the_loading_bar(foreign, capfd):
    from transformers.utils import logging

    from lsr_lucene import ImpactSearcher
    from lsr_lucene.verbosity import is_verbose

    assert not is_verbose()
    import warnings

    with warnings.catch_warnings():  # as in a fresh Python session (commands run earlier in this process hid it)
        warnings.simplefilter("ignore")
        logging.enable_progress_bar()
    logging.set_verbosity_warning()
    try:
        with ImpactSearcher(foreign["impact"], encoder="splade-tiny") as searcher:  # the index records none
            assert searcher.search("green tea", k=1)[0].docid == "d1"
        assert logging.is_progress_bar_enabled()  # the user's setting is given back
    finally:
        logging.disable_progress_bar()
        logging.set_verbosity_error()
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "UnknownTermsWarning" not in err


# ----------------------------------------------------------------------------------------- 10. small things
def test_parse_negation_is_a_verb(capsys):
    assert cli_main(["parse-negation", "tea but not coffee"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["query"] == {"op": "not", "a": "tea", "b": "coffee"}
    import lsr_lucene.compose.parse_negation as module

    assert module.main is not None


def test_malformed_json_errors_say_where_in_the_line(tmp_path, capsys):
    (tmp_path / "bad.jsonl").write_text('{"qid": "1", "text": "tea"}\n{"qid": "2", "text": "a\tb\n')
    assert cli_main(["parse-negation", "--topics", str(tmp_path / "bad.jsonl")]) == 2
    errors = lines(capsys.readouterr().err, "error:")
    assert errors == [f"error: {tmp_path / 'bad.jsonl'}:2: malformed JSON (Invalid control character at column 24)"]


def test_searcher_doc_and_hit_contents_as_in_pyserini(foreign):
    from lsr_lucene import ImpactSearcher

    with ImpactSearcher(foreign["impact"]) as searcher:
        hit = searcher.search_spec({"qid": "1", "terms": {"coffee": 1}}, k=1)[0]
        assert hit.docid == "d2" and hit.contents == "black coffee beans"
        doc = searcher.doc("d2")
        assert doc.docid() == doc.id() == "d2" and doc.contents() == "black coffee beans"
        assert json.loads(doc.raw())["id"] == "d2"
        assert searcher.doc(hit.lucene_docid).docid() == "d2"
        assert searcher.doc("nope") is None and searcher.doc(99) is None
        with pytest.raises(InputError, match="duplicate qid '7' in the query specs"):
            searcher.batch_search_specs([{"qid": "7", "terms": {"tea": 1}}, {"qid": "7", "terms": {"tea": 2}}])


def test_the_readme_example_run_is_ignored():
    import subprocess

    root = Path(__file__).resolve().parents[1]
    result = subprocess.run(["git", "check-ignore", "-q", "runs/cran.run"], cwd=root)
    assert result.returncode == 0


# -------------------------------------------------------------------------------------------- 7. progress
def test_progress_in_logs_is_a_line_every_few_seconds_with_rate_and_eta(monkeypatch):
    import io

    import lsr_lucene.progress as progress

    clock = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    monkeypatch.setenv("LSR_PROGRESS_SECONDS", "5")
    log = io.StringIO()  # not a terminal
    bar = progress.progress_bar(total=100, desc="encoding x", unit=" docs", file=log)
    assert isinstance(bar, progress.LogProgress)
    for _ in range(10):
        clock[0] += 1
        bar.update(5)
    bar.close()
    rows = log.getvalue().splitlines()
    assert rows == ["encoding x: 25/100 docs (25%), 5 docs/s, ETA 0:15",
                    "encoding x: 50/100 docs (50%), 5 docs/s, ETA 0:10",
                    "encoding x: 50/100 docs (50%), 5 docs/s, done in 0:10"]
    quick = io.StringIO()
    with progress.progress_bar(total=3, desc="fast", file=quick) as bar:
        bar.update(3)
    assert quick.getvalue() == ""  # work done within the interval prints nothing


def test_an_inner_bar_feeds_the_outer_one(monkeypatch):
    import io

    import lsr_lucene.progress as progress

    outer = progress.progress_bar(total=10, desc="outer", file=io.StringIO())
    with progress.feeding(outer) as fed:
        inner = progress.progress_bar(total=4, desc="inner", leave=False)
        inner.update(2)
        inner.update(2)
        inner.close()
    assert outer.n == 4 and fed == [4]
    assert not progress.is_feeding() and isinstance(progress.progress_bar(file=io.StringIO()), progress.LogProgress)


def test_the_encode_bar_moves_per_batch(tmp_path, monkeypatch):
    import io

    import lsr_lucene.io.vectors as vectors
    import lsr_lucene.progress as progress

    steps = []

    class Encoder:
        def settings(self):
            return {"model": "fake", "dtype": "fp32"}

        def encode_documents(self, texts, batch_size=16, progress=False):
            out = []
            bar = vectors_progress(total=len(texts), leave=False) if progress else None
            for start in range(0, len(texts), batch_size):
                out += [{"tea": 1.0} for _ in texts[start:start + batch_size]]
                if bar is not None:
                    bar.update(len(texts[start:start + batch_size]))
            return out

    vectors_progress = progress.progress_bar
    real = progress.LogProgress.update

    def record(self, n=1):
        steps.append(n)
        real(self, n)

    monkeypatch.setattr(progress.LogProgress, "update", record)
    monkeypatch.setattr(progress.sys, "stderr", io.StringIO())
    docs = [(f"d{i}", "tea") for i in range(40)]
    vectors.write_vectors(docs, Encoder(), tmp_path / "v", batch_size=8)
    assert steps[:5] == [8, 8, 8, 8, 8] and sum(steps) == 40


def test_ray_is_started_quiet_unless_verbose(monkeypatch, capfd):
    import logging
    import os

    from lsr_lucene.distributed import cluster
    from lsr_lucene.verbosity import set_verbose

    monkeypatch.delenv("RAY_BACKEND_LOG_LEVEL", raising=False)
    monkeypatch.setenv("LSR_VERBOSE", "0")  # set_verbose(True) below sets it; restored after the test
    options = cluster.quiet_ray_options()
    assert options["log_to_driver"] is False and options["logging_level"] == logging.ERROR
    assert os.environ["RAY_BACKEND_LOG_LEVEL"] == "fatal"  # the core worker's error-level notes
    with cluster._stderr_quiet():  # what Ray's core worker prints on fd 2 while it starts
        os.write(2, b"[I logging.cc] Set ray log level\n")
    assert "logging.cc" not in capfd.readouterr().err
    monkeypatch.delenv("RAY_BACKEND_LOG_LEVEL")
    set_verbose(True)
    try:
        assert cluster.quiet_ray_options()["log_to_driver"] is True
        assert "RAY_BACKEND_LOG_LEVEL" not in os.environ
        with cluster._stderr_quiet():
            os.write(2, b"shown\n")
        assert "shown" in capfd.readouterr().err
    finally:
        set_verbose(False)
