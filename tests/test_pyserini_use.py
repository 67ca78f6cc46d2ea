"""README "Use from Pyserini": Pyserini's LuceneImpactSearcher (Python, after ``runtime.start()``) and its command
line (with ``lsr-lucene java-home --export``) search our demo index and give our run; our commands print no
library noise."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from lsr_lucene.cli import run_main
from lsr_lucene.demo import demo_files

TOPICS = demo_files()["topics"]


@pytest.fixture(scope="module")
def runs(demo, tmp_path_factory):
    """Pre-encoded demo queries and our run for them (``--encoder FILE``, Pyserini's form)."""
    from lsr_lucene.search.cli import main as search_main

    root = tmp_path_factory.mktemp("pyserini-use")
    env = {k: v for k, v in os.environ.items() if k != "LSR_VERBOSE"}  # commands are quiet unless asked
    queries, ours = root / "q.jsonl", root / "ours.run"
    done = subprocess.run([sys.executable, "-m", "lsr_lucene.encode", "--topics", str(TOPICS), "--output",
                           str(queries), "--threads", "1"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", f"library noise on stderr: {done.stderr!r}"  # no model loading bar, no HF logs
    done = subprocess.run([sys.executable, "-m", "lsr_lucene.search", "--index", str(demo / "index"), "--topics",
                           str(TOPICS), "--encoder", str(queries), "--output", str(ours), "--hits", "10",
                           "--threads", "1"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", f"library noise on stderr: {done.stderr!r}"  # no JUL/SLF4J/bars by default
    assert run_main(search_main, ["--index", str(demo / "index"), "--topics", str(TOPICS), "--output",
                                  str(root / "encoded.run"), "--hits", "10", "--threads", "1"]) == 0
    return {"queries": queries, "ours": ours, "index": demo / "index", "root": root,
            "encoded": root / "encoded.run"}


def run_lines(path: Path) -> list[tuple[str, str, int, float]]:
    """(qid, docid, rank, score) of a TREC run; the tag is left out."""
    rows = [line.split() for line in path.read_text().splitlines()]
    return [(r[0], r[2], int(r[3]), round(float(r[4]), 3)) for r in rows]


def test_pre_encoded_queries_through_encoder_equal_encoding_on_the_fly(runs):
    assert run_lines(runs["ours"]) == run_lines(runs["encoded"]) and run_lines(runs["ours"])


def test_pyserini_impact_searcher_after_runtime_start(runs):
    """The README's Python snippet in a fresh interpreter: runtime.start(), then Pyserini's own searcher."""
    script = f"""
import json
from lsr_lucene.jvm import runtime
runtime.start()
from pyserini.search.lucene import LuceneImpactSearcher
s = LuceneImpactSearcher({str(runs['index'])!r}, {str(runs['queries'])!r})
for line in open({str(runs['queries'])!r}):
    q = json.loads(line)
    for rank, h in enumerate(s.search(q["contents"], k=10), 1):
        print(q["id"], "Q0", h.docid, rank, h.score, "pyserini")
"""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}  # the documented call sets it
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = runs["root"] / "pyserini-python.run"
    theirs.write_text(done.stdout)
    assert run_lines(theirs) == run_lines(runs["ours"])


def _has_vector_module(home: Path) -> bool:
    done = subprocess.run([str(home / "bin" / "java"), "--list-modules"], capture_output=True, text=True)
    return "jdk.incubator.vector" in done.stdout


def test_pyserini_command_line_with_java_home_export(runs):
    """The README's CLI form: eval "$(lsr-lucene java-home --export)", then python -m pyserini.search.lucene."""
    from lsr_lucene.jvm.runtime import java_home

    if not _has_vector_module(java_home()):
        pytest.skip("Pyserini's own JVM start needs jdk.incubator.vector, which this Java runtime lacks (README)")
    theirs = runs["root"] / "pyserini-cli.run"
    command = (f'eval "$({shlex.quote(sys.executable)} -m lsr_lucene.jvm --export)" && '
               f"{shlex.quote(sys.executable)} -m pyserini.search.lucene --impact --index {runs['index']} "
               f"--topics {TOPICS} --encoder {runs['queries']} --hits 10 --output {theirs}")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "JAVA_HOME")}
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert run_lines(theirs) == run_lines(runs["ours"])


def test_java_home_verb_prints_the_runtime_our_jvm_uses(capsys):
    from lsr_lucene.jvm.home import main
    from lsr_lucene.jvm.runtime import java_home

    assert run_main(main, []) == 0
    assert capsys.readouterr().out.strip() == str(java_home())
    assert run_main(main, ["--export"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"export JAVA_HOME={shlex.quote(str(java_home()))}" and "OPENAI_API_KEY" in lines[-1]


def test_lsr_java_home_is_used_or_refused_never_passed_over(monkeypatch, tmp_path, capsys):
    """$LSR_JAVA_HOME names the runtime: a Java 21+ home is used as it is; one without a Java 21+ runtime is one
    `error:` line naming it, not a silent fallback to another Java."""
    from lsr_lucene.jvm.home import main
    from lsr_lucene.jvm.runtime import java_home

    found = java_home()
    try:
        monkeypatch.setenv("LSR_JAVA_HOME", str(tmp_path))
        java_home.cache_clear()
        assert run_main(main, []) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: LSR_JAVA_HOME=") and str(tmp_path) in err and len(err.splitlines()) == 1
        monkeypatch.setenv("LSR_JAVA_HOME", str(found))
        java_home.cache_clear()
        assert java_home() == found
    finally:
        monkeypatch.delenv("LSR_JAVA_HOME")
        java_home.cache_clear()
