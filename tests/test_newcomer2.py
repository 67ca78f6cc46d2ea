"""Issue 38 (newcomer round 2): foreign indexes, inputs checked first, eval's missing queries, search --query,
truncation and progress said, one name per option, quiet libraries, small things.

Commands run in-process (``lsr_lucene.cli.main``) on a two-document corpus; the model is splade-tiny where encoding
matters and a fake or none where it does not.
"""
from __future__ import annotations

import json
import shutil
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
                     "--output", str(run), "--threads", "1"]) == 0
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
                     "--output", str(run), "--threads", "1"]) == 0
    rows = [line.split() for line in run.read_text().splitlines()]
    assert [r[0] for r in rows if r[3] == "1"] == ["1", "2"]
    by_topics = tmp_path / "t.run"
    assert cli_main(["search", "--index", str(foreign["impact"]), "--topics", str(foreign["topics"]),
                     "--output", str(by_topics), "--threads", "1"]) == 0
    assert by_topics.read_text() == run.read_text()
    capsys.readouterr()
    assert cli_main(["search", "--index", str(foreign["impact"]), "--query", " ", "--output",
                     str(tmp_path / "e.run")]) == 2
    assert lines(capsys.readouterr().err, "error:") == ["error: --query 1: empty query"]


# ------------------------------------------------------------------------------------- 6. truncation said
def test_truncated_queries_are_counted_with_the_option_that_sets_the_limit(foreign, tmp_path, capsys):
    long = " ".join(["coffee"] * 80)
    assert cli_main(["search", "--index", str(foreign["impact"]), "--query", "tea", "--query", long,
                     "--output", str(tmp_path / "a.run"), "--threads", "1"]) == 0
    warnings = lines(capsys.readouterr().err, "warning:")
    assert len(warnings) == 1 and "1 of 2 queries are longer than 64 tokens" in warnings[0]
    assert "--query-max-length" in warnings[0]
    assert cli_main(["search", "--index", str(foreign["impact"]), "--query", "tea", "--query", long,
                     "--query-max-length", "128", "--output", str(tmp_path / "b.run"), "--threads", "1"]) == 0
    assert lines(capsys.readouterr().err, "warning:") == []
