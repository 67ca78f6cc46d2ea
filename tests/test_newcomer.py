"""What a first-time user trips over (issue 31): wrong index kinds, missing output folders, Java stack traces,
interrupt messages, query terms the index lacks, header rows, unjudged queries and late duplicate ids.

Each test runs the command in-process (``lsr_lucene.cli.main`` or ``run_main``) on tiny inputs: a two-document
impact index and BM25 index built once, a fake encoder where encoding itself is beside the point.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lsr_lucene.cli import main as cli_main, run_main
from lsr_lucene.errors import InputError, Interrupted

CORPUS = [{"id": "d1", "text": "green tea leaves"}, {"id": "d2", "title": "Coffee", "text": "black coffee beans"}]
VECTORS = [{"id": "d1", "contents": "", "vector": {"tea": 50, "green": 20, "heat": 5}},
           {"id": "d2", "contents": "", "vector": {"coffee": 40, "black": 10}}]


def jsonl(*rows) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def errors_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error:")]


@pytest.fixture(scope="module")
def indexes(tmp_path_factory) -> dict[str, Path]:
    """A tiny impact index and a BM25 index of the same two documents."""
    from lsr_lucene.index.impact import build_impact_index
    from lsr_lucene.search.bm25 import build_bm25_index

    root = tmp_path_factory.mktemp("newcomer")
    (root / "vectors.jsonl").write_text(jsonl(*VECTORS))
    build_impact_index(root / "vectors.jsonl", root / "impact", threads=1)
    (root / "corpus.jsonl").write_text(jsonl(*CORPUS))
    build_bm25_index(str(root / "corpus.jsonl"), root / "bm25", threads=1)
    (root / "topics.tsv").write_text("1\tgreen tea\n2\tcoffee\n")
    return {"root": root, "impact": root / "impact", "bm25": root / "bm25", "topics": root / "topics.tsv",
            "corpus": root / "corpus.jsonl"}


class FakeEncoder:
    """Stand-in encoder: each word weighs 0.5; ``interrupt_after`` raises KeyboardInterrupt on that encode call."""

    def __init__(self, interrupt_after: int | None = None):
        self.calls = 0
        self.interrupt_after = interrupt_after

    def settings(self) -> dict:
        return {"model": "fake", "max_length": 32, "activation": "splade", "pooling": "max", "epsilon": 1.0,
                "dtype": "fp32"}

    def encode_documents(self, texts, batch_size=16):
        self.calls += 1
        if self.interrupt_after is not None and self.calls > self.interrupt_after:
            raise KeyboardInterrupt
        return [{word: 0.5 for word in text.split()} for text in texts]


def _no_model(*_args, **_kwargs):
    raise AssertionError("the model was loaded before the input was checked")


# ---------------------------------------------------------------------------------- 1. index of the wrong kind
def test_every_verb_refuses_an_index_of_the_wrong_kind(indexes, tmp_path, capsys):
    (tmp_path / "specs.jsonl").write_text(jsonl({"qid": "1", "terms": {"tea": 1}}))
    (tmp_path / "comp.jsonl").write_text(jsonl({"id": "1", "query": {"op": "not", "a": "tea", "b": "coffee"}}))
    bm25, impact = str(indexes["bm25"]), str(indexes["impact"])
    commands = {
        "search": (["search", "--index", bm25, "--specs", str(tmp_path / "specs.jsonl"), "--output",
                    str(tmp_path / "a.run")], bm25, "bm25"),
        "compose": (["compose", "--index", bm25, "--queries", str(tmp_path / "comp.jsonl"), "--output",
                     str(tmp_path / "b.run")], bm25, "bm25"),
        "reorder": (["reorder", "--index", bm25, "--output", str(tmp_path / "reordered")], bm25, "bm25"),
        "bm25": (["bm25", "--index", impact, "--topics", str(indexes["topics"]), "--output", str(tmp_path / "c.run")],
                 impact, "impact"),
    }
    for name, (argv, index, kind) in commands.items():
        capsys.readouterr()
        assert cli_main(argv) == 2, name
        errors = errors_of(capsys.readouterr().err)
        assert len(errors) == 1 and f"{index} is a{'n' if kind == 'impact' else ''} {kind} index" in errors[0], name
    assert not list(tmp_path.glob("*.run")) and not (tmp_path / "reordered").exists()

    from lsr_lucene import ImpactSearcher
    from lsr_lucene.distributed.index import read_manifest

    with pytest.raises(InputError, match="is a bm25 index"):
        ImpactSearcher(bm25)
    with pytest.raises(InputError, match="is an impact index.*needs a distributed-impact index"):
        read_manifest(impact)


# ---------------------------------------------------------------------------------- 2. missing output folders
def test_encode_creates_the_output_folders_and_checks_them_before_the_model(indexes, tmp_path, capsys, monkeypatch):
    import lsr_lucene.encode.cli as encode_cli

    monkeypatch.setattr(encode_cli, "_encoder_from_args", lambda args: FakeEncoder())
    out = tmp_path / "work" / "cran" / "vectors"  # neither work/ nor cran/ exists (a fresh clone)
    assert cli_main(["encode", "--corpus", str(indexes["corpus"]), "--output", str(out)]) == 0
    assert (out / "part-00000.jsonl").is_file()

    monkeypatch.setattr(encode_cli, "_encoder_from_args", _no_model)
    (tmp_path / "file").write_text("not a folder\n")
    capsys.readouterr()
    assert cli_main(["encode", "--corpus", str(indexes["corpus"]), "--output", str(tmp_path / "file" / "v")]) == 2
    errors = errors_of(capsys.readouterr().err)
    assert len(errors) == 1 and "cannot create its folder" in errors[0]


def test_writers_that_claim_their_output_directly_create_its_folder(indexes, tmp_path):
    """Writers that take the output's lock themselves (not through atomic_output) need its folder first."""
    from lsr_lucene.io.output import update_json

    target = tmp_path / "results" / "deep" / "lambdas.json"
    assert update_json(target, lambda data: {**data, "a": 1}) == {"a": 1}
    run = tmp_path / "runs" / "deep" / "bm25.run"
    assert cli_main(["bm25", "--index", str(indexes["bm25"]), "--topics", str(indexes["topics"]),
                     "--output", str(run)]) == 0
    assert run.is_file() and json.loads(target.read_text()) == {"a": 1}


# ---------------------------------------------------------------------------------- 3. Java exceptions
def test_java_failures_printed_by_anserini_become_one_error_line(indexes, tmp_path, capfd):
    """SearchCollection prints a stack trace per failing query and carries on; we raise one line instead."""
    from lsr_lucene.jvm import runtime as jvm
    from lsr_lucene.jvm.classes import java_printed_errors
    from lsr_lucene.search.bm25 import write_topics_tsv

    write_topics_tsv({"1": "green tea", "2": "coffee"}, tmp_path / "t.tsv")
    capfd.readouterr()
    with pytest.raises(InputError, match=r"BM25 search: IllegalArgumentException: numHits must be > 0"):
        with java_printed_errors("BM25 search"):
            jvm.autoclass("io.anserini.search.SearchCollection").main(
                ["-index", str(indexes["bm25"]), "-topics", str(tmp_path / "t.tsv"), "-topicReader", "TsvString",
                 "-output", str(tmp_path / "x.run"), "-bm25", "-hits", "0", "-threads", "1"])
    assert "\tat " not in capfd.readouterr().err  # no stack trace reached the terminal


def test_bm25_hits_zero_is_refused_before_searching(indexes, tmp_path, capfd):
    from lsr_lucene.search.bm25 import bm25_run

    with pytest.raises(InputError, match="--hits"):
        bm25_run(indexes["bm25"], {"1": "tea"}, tmp_path / "r.run", hits=0)
    assert not (tmp_path / "r.run").exists() and "\tat " not in capfd.readouterr().err


def test_an_escaping_java_exception_is_one_error_line(capsys):
    from lsr_lucene.jvm import runtime as jvm

    def main(argv):
        jvm.autoclass("java.lang.Integer").parseInt("twelve")

    assert run_main(main, []) == 2
    errors = errors_of(capsys.readouterr().err)
    assert len(errors) == 1 and "NumberFormatException" in errors[0] and "twelve" in errors[0]


# ---------------------------------------------------------------------------------- 5. interrupts and failures
def test_interrupted_encode_says_what_was_kept_and_resumes(tmp_path, capsys, monkeypatch):
    import lsr_lucene.encode.cli as encode_cli

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(jsonl(*({"id": f"d{i}", "text": f"word{i} tea"} for i in range(10))))
    out = tmp_path / "vectors"
    argv = ["encode", "--corpus", str(corpus), "--output", str(out), "--shard-size", "2", "--batch-size", "2"]
    monkeypatch.setattr("lsr_lucene.io.vectors.ENCODE_WINDOW", 2)  # windows of 2 documents, so shards complete early
    monkeypatch.setattr("lsr_lucene.io.vectors.MIN_WINDOW_BATCHES", 1)
    monkeypatch.setattr(encode_cli, "_encoder_from_args", lambda args: FakeEncoder(interrupt_after=2))
    assert cli_main(argv) == 130
    err = capsys.readouterr().err
    assert "removed" not in err
    assert re.search(r"interrupted; kept 2 complete shard\(s\) \(4 documents\) in .*\.vectors\.partial: run the same "
                     r"command again to resume", err), err
    assert len(list((tmp_path / ".vectors.partial").glob("part-*.jsonl"))) == 2
    resumed = FakeEncoder()
    monkeypatch.setattr(encode_cli, "_encoder_from_args", lambda args: resumed)
    assert cli_main(argv) == 0
    assert resumed.calls == 3 and len(list(out.glob("part-*.jsonl"))) == 5  # only the 6 unfinished documents


def test_bad_input_mid_stream_leaves_no_shards_but_an_interrupt_keeps_them(tmp_path):
    from lsr_lucene.io.corpus import read_corpus
    from lsr_lucene.io.vectors import write_vectors

    rows = [{"id": f"d{i}", "text": f"word{i}"} for i in range(8)] + [{"id": "d1", "text": "again"}]
    (tmp_path / "dup.jsonl").write_text(jsonl(*rows))
    with pytest.raises(InputError, match="duplicate document id 'd1'"):
        write_vectors(read_corpus(tmp_path / "dup.jsonl"), FakeEncoder(), tmp_path / "v", shard_size=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dup.jsonl"]  # no .v.partial with 4 shards

    with pytest.raises(Interrupted, match="kept 1 complete shard"):
        write_vectors(read_corpus(tmp_path / "dup.jsonl"), FakeEncoder(interrupt_after=1), tmp_path / "v",
                      shard_size=2, window=2)
    assert len(list((tmp_path / ".v.partial").glob("part-*.jsonl"))) == 1
    # a small encoding interrupted before its first shard keeps nothing, and says so (issue 51)
    with pytest.raises(Interrupted, match="nothing kept: no shard was complete .*smaller --shard-size"):
        write_vectors(read_corpus(tmp_path / "dup.jsonl"), FakeEncoder(interrupt_after=1), tmp_path / "w",
                      shard_size=100, window=2)
    assert not (tmp_path / ".w.partial").exists() and not (tmp_path / "w").exists()


def test_interrupt_message_of_a_command_that_keeps_nothing(capsys):
    def main(argv):
        raise KeyboardInterrupt

    assert run_main(main, []) == 130
    assert "were not installed" in capsys.readouterr().err


# ---------------------------------------------------------------------------------- 6. terms the index lacks
def test_search_names_the_query_terms_the_index_lacks(indexes, tmp_path, capsys):
    specs = [{"qid": "1", "terms": {"tea": 100, "conduction": -80}}, {"qid": "2", "terms": {"Heat": 100}},
             {"qid": "3", "terms": {"coffee": 10}}]
    (tmp_path / "specs.jsonl").write_text(jsonl(*specs))
    assert cli_main(["search", "--index", str(indexes["impact"]), "--specs", str(tmp_path / "specs.jsonl"),
                     "--output", str(tmp_path / "run")]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "not in the index" in line]
    assert warnings == ["warning: query 1: 1 term(s) not in the index, so without effect: conduction",
                        "warning: query 2: 1 term(s) not in the index, so without effect: Heat (the index has 'heat')"]


def test_many_queries_with_unknown_terms_end_in_one_count(indexes, tmp_path, capsys):
    specs = [{"qid": str(i), "terms": {"tea": 1, f"zz{i}": 1}} for i in range(12)]
    (tmp_path / "specs.jsonl").write_text(jsonl(*specs))
    assert cli_main(["search", "--index", str(indexes["impact"]), "--specs", str(tmp_path / "specs.jsonl"),
                     "--output", str(tmp_path / "run")]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "not in the index" in line]
    assert len(warnings) == 6 and warnings[-1].startswith("warning: 7 more of 12 queries have terms not in the index")


def test_impact_searcher_warns_about_unknown_terms(indexes):
    from lsr_lucene import ImpactSearcher
    from lsr_lucene.search.unknown_terms import UnknownTermsWarning

    with ImpactSearcher(str(indexes["impact"])) as searcher:
        with pytest.warns(UnknownTermsWarning, match="query x: .*conduction"):
            hits = searcher.search_spec({"qid": "x", "terms": {"tea": 100, "conduction": -80}})
        assert [h.docid for h in hits] == ["d1"]
        with pytest.warns(UnknownTermsWarning, match="query y: .*Heat"):
            assert searcher.batch_search_specs([{"qid": "y", "terms": {"Heat": 100}}]) == {"y": []}


# ---------------------------------------------------------------------------------- 10. silent quirks
def test_a_header_row_is_skipped_with_a_warning(tmp_path, capsys):
    from lsr_lucene.io.corpus import read_corpus
    from lsr_lucene.io.topics import read_topics

    (tmp_path / "topics.tsv").write_text("qid\ttext\n1\tgreen tea\n")
    assert read_topics(tmp_path / "topics.tsv") == {"1": "green tea"}
    (tmp_path / "corpus.tsv").write_text("id\ttitle\ttext\nd1\tTea\tgreen tea\n")
    assert [d.id for d in read_corpus(tmp_path / "corpus.tsv")] == ["d1"]
    err = capsys.readouterr().err
    assert f"warning: {tmp_path / 'topics.tsv'}:1: skipped a header row" in err
    assert f"warning: {tmp_path / 'corpus.tsv'}:1: skipped a header row" in err


def test_eval_says_how_many_queries_are_judged(tmp_path, capsys):
    (tmp_path / "run").write_text("1 Q0 d1 1 2.0 t\n2 Q0 d2 1 1.0 t\n3 Q0 d3 1 1.0 t\n")
    (tmp_path / "qrels").write_text("1 0 x9 1\n")  # another collection's qrels: query 1 only, other documents
    assert cli_main(["eval", "--qrels", str(tmp_path / "qrels"), "--run", f"a={tmp_path / 'run'}"]) == 0
    err = capsys.readouterr().err
    assert f"warning: run a: 1 of 3 queries are judged in {tmp_path / 'qrels'}; the other 2 are not evaluated" in err
    assert "none of its documents is judged" in err


def test_encode_refuses_a_duplicate_id_before_loading_the_model(tmp_path, capsys, monkeypatch):
    import lsr_lucene.encode.cli as encode_cli

    monkeypatch.setattr(encode_cli, "_encoder_from_args", _no_model)
    rows = [{"id": f"d{i}", "text": "tea"} for i in range(50)] + [{"id": "d3", "text": "again"}]
    (tmp_path / "c.jsonl").write_text(jsonl(*rows))
    assert cli_main(["encode", "--corpus", str(tmp_path / "c.jsonl"), "--output", str(tmp_path / "v")]) == 2
    errors = errors_of(capsys.readouterr().err)
    assert len(errors) == 1 and re.search(r"c\.jsonl:51: duplicate document id 'd3' \(first seen at .*c\.jsonl:4\)",
                                          errors[0])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]


def test_queries_without_hits_are_not_said_to_lack_index_terms(indexes, tmp_path, capsys):
    """An empty query vector and one whose only term (in the index) weighs below zero were said to "have no term in
    the index"."""
    (tmp_path / "q.jsonl").write_text(jsonl({"id": "1", "vector": {}}, {"id": "2", "vector": {"tea": -5}},
                                            {"id": "3", "vector": {"tea": 5}}))
    assert cli_main(["search", "--index", str(indexes["impact"]), "--query-vectors", str(tmp_path / "q.jsonl"),
                     "--output", str(tmp_path / "run")]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: 2 of 3 queries got no hits (empty, or no term of theirs gives a document of this "
                        "index a positive score): 1, 2"]
