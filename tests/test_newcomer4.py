"""Issue 67, item 5: the small things a newcomer tripped on, each checked (each fails on the code before)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lsr_lucene.cli import SUBCOMMANDS, run_main
from lsr_lucene.demo import demo_files
from lsr_lucene.errors import InputError


class BatchBarEncoder:
    """An encoder whose per-batch bar feeds the caller's (as SparseEncoder's does with ``progress``)."""

    def settings(self) -> dict:
        return {"model": "fake", "max_length": 32, "activation": "splade", "pooling": "max", "epsilon": 1.0,
                "dtype": "fp32"}

    def encode_documents(self, texts, batch_size=16, progress=False):
        from lsr_lucene.progress import progress_bar

        bar = progress_bar(total=len(texts), disable=not progress)
        out = []
        for start in range(0, len(texts), batch_size):
            out += [{word: 0.5 for word in text.split()} for text in texts[start:start + batch_size]]
            bar.update(min(batch_size, len(texts) - start))
        bar.close()
        return out


class Stop(Exception):
    pass


def test_a_resumed_encode_counts_each_document_once_up_to_the_corpus(tmp_path, monkeypatch):
    """The bar of a resumed run covers the whole corpus (kept documents first) and never passes it: the window the
    run resumes in was counted twice (tqdm then drops its total: "11845 docs", no total)."""
    from lsr_lucene import progress
    from lsr_lucene.io.vectors import write_vectors

    bars: list = []
    made = progress.progress_bar

    def recording(*args, **kwargs):
        bar = made(*args, **kwargs)
        if kwargs.get("total") == 30 and str(kwargs.get("desc", "")).startswith("encoding"):
            bars.append(bar)
        return bar

    monkeypatch.setattr(progress, "progress_bar", recording)
    docs = [(f"d{i:02d}", f"word{i % 4} other{i % 3}") for i in range(30)]

    def interrupted():
        for i, doc in enumerate(docs):
            if i == 17:
                raise Stop()
            yield doc

    with pytest.raises(Stop):
        write_vectors(interrupted(), BatchBarEncoder(), tmp_path / "v", shard_size=5, window=4, batch_size=2,
                      total=30)
    write_vectors(iter(docs), BatchBarEncoder(), tmp_path / "v", shard_size=5, window=4, batch_size=2, total=30)
    assert [bar.n for bar in bars] == [16, 30]  # the interrupted run: 4 windows; then exactly the corpus, not 33


def test_a_misspelled_option_names_itself_and_the_nearest_one(capsys):
    from lsr_lucene.cli import main

    for argv, wrong, right in ((["search", "--index", "x", "--toppics", "t.tsv"], "--toppics", "--topics"),
                               (["dense", "encode", "--corpus", "c", "--outptu", "o"], "--outptu", "--output"),
                               (["eval", "--qrles", "q", "r"], "--qrles", "--qrels")):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert last.endswith(f"error: unknown option {wrong}; did you mean {right}?"), last


def _help(verb: str) -> str:
    done = subprocess.run([sys.executable, "-m", "lsr_lucene.cli", verb, "--help"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("verb", ["java-home", "build-java", "longdocs", "train", "eval", "bm25"])
def test_help_reads_as_text(verb):
    """--help: whole sentences, no reST markup, no module docstring, no backwards default."""
    text = _help(verb)
    assert "``" not in text and "(default: True)" not in text
    assert text.startswith("usage: lsr-lucene ")
    description = text.split("\n\n")[1]
    assert description.rstrip().endswith((".", ")", ":")), description
    if verb == "longdocs":
        assert "Pipeline (each step" not in text and "  search " in text and "  aggregate " in text


def test_no_verb_help_shows_rest_markup():
    for verb in SUBCOMMANDS:
        assert "``" not in _help(verb), verb


def test_bm25_takes_query_like_search_and_compose(tmp_path, capsys):
    from lsr_lucene.search.cli_bm25 import main

    corpus = demo_files()["corpus"]
    assert run_main(main, ["--corpus", str(corpus), "--index", str(tmp_path / "bm25"), "--query", "tea without caffeine",
                           "--query", "python", "--hits", "2", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "query 1: tea without caffeine" in out and "query 2: python" in out
    run = tmp_path / "bm25.run"
    assert run_main(main, ["--index", str(tmp_path / "bm25"), "--query", "tea", "--output", str(run)]) == 0
    assert {line.split()[0] for line in run.read_text().splitlines()} == {"1"}


def test_parse_lines_give_the_tree_then_the_cue_decisions():
    """ComposeSearcher.parse(q).lines(): "tree, fired and rejected cues", as its docstring and docs/python.md say."""
    from lsr_lucene.compose.query_syntax import read_query

    lines = read_query("films about dogs but not cartoons").lines()
    assert lines[0] == 'tree: {"op": "not", "a": "films about dogs", "b": "cartoons"}' and "fired" in lines[1]
    plain = read_query("why is it not raining").lines()
    assert plain[0] == 'tree: "why is it not raining" (one atomic query)' and "rejected" in plain[1]


def test_a_jsonl_line_without_its_closing_quote_says_unterminated(tmp_path):
    from lsr_lucene.io.corpus import read_corpus

    path = tmp_path / "corpus.jsonl"
    path.write_text('{"id": "d1", "contents": "fine"}\n{"id": "d2", "contents": "cut off\n{"id": "d3"}\n')
    with pytest.raises(InputError) as error:
        list(read_corpus(path))
    message = str(error.value)
    assert message.startswith(f"{path}:2: ") and "unterminated string starting at column 26" in message
    assert "control character" not in message


def test_the_servers_compose_error_names_the_field_once(demo):
    from lsr_lucene.serve.engine import SearchEngine

    engine = SearchEngine(demo / "index")
    for query, expected in (("   ", "query: empty query"), ({"op": "xor", "a": "tea", "b": "milk"}, "composition")):
        with pytest.raises(InputError) as error:
            engine.compose(query, 3)
        assert str(error.value).startswith(expected) and "query query" not in str(error.value), str(error.value)
    tree, found = engine.compose("tea without caffeine", 3)
    assert json.dumps(tree) and len(found) == 3


def test_the_server_docs_subtract_example_returns_what_it_promises(demo):
    """docs/server.md: programming languages minus Python by plain subtraction: languages, no Python document."""
    import re
    from pathlib import Path

    from lsr_lucene.serve.engine import SearchEngine

    page = (Path(__file__).resolve().parents[1] / "docs" / "server.md").read_text()
    body = json.loads(re.search(r"compose \\\n  -d '(\{.*\"operation\": \"subtract\".*\})'", page).group(1))
    promised = re.findall(r'"docid":"([\w-]+)","score":[\d.]+,"rank":\d', page.split("subtract", 1)[1])
    engine = SearchEngine(demo / "index")
    tree, found = engine.compose(body["composition"], body["hits"], {"operation": body["operation"]})
    assert [row["docid"] for row in found] == promised[:body["hits"]] == ["tech-07", "tech-15", "tech-11", "tech-08"]
    python = {"tech-06", "tech-10", "tech-16"}  # the demo's Python documents
    assert not python & {row["docid"] for row in engine.compose(body["composition"], 10, {"operation": "subtract"})[1]}


def test_the_pisa_bm25_of_the_pyterrier_example_builds_without_progress_lines(tmp_path, capfd):
    """docs/python.md's PyTerrier block builds its PISA index itself, and PISA's C++ progress stays off screen."""
    pytest.importorskip("pyterrier_pisa")
    from lsr_lucene.pyterrier import pisa_bm25

    bm25 = pisa_bm25(tmp_path / "pisa", demo_files()["corpus"])
    printed = capfd.readouterr()
    assert printed.out == "" and printed.err == "", printed.err[:300]
    assert bm25.search("green tea").iloc[0]["docno"] == "tea-01"
    pisa_bm25(tmp_path / "pisa", demo_files()["corpus"])  # built: reused
    assert capfd.readouterr().err == ""


def test_the_pyterrier_experiment_replaces_a_tracked_table_only_when_asked(tmp_path, capsys):
    from scripts.pyterrier.pyterrier_demo import main

    table = tmp_path / "pyterrier.md"
    table.write_text("kept\n")
    assert run_main(main, ["--output", str(table)]) == 2  # refused before any work
    assert "already exists" in capsys.readouterr().err and table.read_text() == "kept\n"
    script = (__import__("pathlib").Path(__file__).resolve().parents[1] / "scripts" / "run_pyterrier_demo.sh")
    assert "--output runs/serve/pyterrier.md --overwrite" in script.read_text()  # the tracked table: --overwrite
