"""Issue 67, items 1-2: a vectors folder we write is read by Pyserini's own indexer without an exception (our record
lies beside the folder, where Anserini does not look; a folder written before, with metadata.json inside, is still
read), and an index that records no query encoder (built by Pyserini or Anserini) asks for one instead of guessing."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lsr_lucene.cli import run_main
from lsr_lucene.demo import demo_files
from lsr_lucene.io.vectors import METADATA, metadata_path, read_metadata, vector_files

TOPICS = demo_files()["topics"]


def _has_vector_module(home: Path) -> bool:
    done = subprocess.run([str(home / "bin" / "java"), "--list-modules"], capture_output=True, text=True)
    return "jdk.incubator.vector" in done.stdout


def _pyserini_index(vectors: Path, index: Path) -> subprocess.CompletedProcess:
    """``python -m pyserini.index.lucene --collection JsonVectorCollection --impact --pretokenized`` as docs/python.md
    runs Pyserini's command line (the runtime from ``lsr-lucene java-home --export``)."""
    command = (f'eval "$({shlex.quote(sys.executable)} -m lsr_lucene.jvm --export)" && '
               f"{shlex.quote(sys.executable)} -m pyserini.index.lucene --collection JsonVectorCollection "
               f"--input {shlex.quote(str(vectors))} --index {shlex.quote(str(index))} --impact --pretokenized "
               "--threads 1")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "JAVA_HOME")}
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env)


def _search(index: Path, queries: Path, out: Path, *extra: str) -> list[tuple[str, str, str]]:
    from lsr_lucene.search.cli import main

    assert run_main(main, ["--index", str(index), "--topics", str(TOPICS), "--encoder", str(queries), "--output",
                           str(out), "--hits", "10", "--threads", "1", *extra]) == 0
    return [(r[0], r[2], f"{float(r[4]):.3f}") for r in (line.split() for line in out.read_text().splitlines())]


@pytest.fixture(scope="module")
def queries(demo, tmp_path_factory) -> Path:
    from lsr_lucene.encode.cli import main

    path = tmp_path_factory.mktemp("interop") / "q.jsonl"
    assert run_main(main, ["--topics", str(TOPICS), "--output", str(path), "--threads", "1"]) == 0
    return path


def test_the_vectors_folder_holds_documents_only_and_its_record_lies_beside_it(demo):
    vectors = demo / "vectors"
    assert [p.name for p in vectors.iterdir()] == [p.name for p in vector_files(vectors)]  # nothing else inside
    assert metadata_path(vectors) == demo / "vectors.metadata.json" and metadata_path(vectors).is_file()
    assert read_metadata(vectors)["model"] == "splade-tiny"


def test_pyserini_indexes_our_vectors_folder_without_an_exception_and_searches_as_our_index(demo, queries, tmp_path):
    from lsr_lucene.jvm.runtime import java_home

    if not _has_vector_module(java_home()):
        pytest.skip("Pyserini's own JVM start needs jdk.incubator.vector, which this Java runtime lacks (README)")
    done = _pyserini_index(demo / "vectors", tmp_path / "pyserini-index")
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-3000:]
    assert "Exception" not in log and "vectorNode" not in log, log[-3000:]
    documents = sum(1 for _ in open(demo_files()["corpus"]))
    assert f"{documents} documents indexed" in log  # every demo document, and nothing else
    ours = _search(demo / "index", queries, tmp_path / "ours.run")
    theirs = _search(tmp_path / "pyserini-index", queries, tmp_path / "theirs.run")
    assert ours == theirs and ours


def test_a_folder_written_before_with_metadata_inside_is_still_read(demo, tmp_path):
    from lsr_lucene.index.impact import build_impact_index

    old = tmp_path / "vectors"
    old.mkdir()
    for part in vector_files(demo / "vectors"):
        shutil.copy(part, old / part.name)
    (old / METADATA).write_text(json.dumps(read_metadata(demo / "vectors")))
    assert read_metadata(old)["model"] == "splade-tiny" and METADATA not in [p.name for p in vector_files(old)]
    meta = build_impact_index(old, tmp_path / "index", threads=1)
    assert meta["encoder"]["model"] == "splade-tiny" and meta["documents"] == read_metadata(old)["documents"]


@pytest.fixture(scope="module")
def foreign_index(demo, tmp_path_factory) -> Path:
    """An impact index built as Pyserini builds one (Anserini's IndexCollection over the part files): no record of
    ours, so no model."""
    from lsr_lucene.index.impact import index_vector_files

    index = tmp_path_factory.mktemp("foreign") / "index"
    index_vector_files(vector_files(demo / "vectors"), index, threads=1)
    assert not (index / "lsr_lucene.json").exists()
    return index


def test_an_index_recording_no_model_asks_for_the_encoder_never_guesses(foreign_index, capsys):
    from lsr_lucene.search.cli import main

    assert run_main(main, ["--index", str(foreign_index), "--query", "tea without caffeine"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and str(foreign_index) in err, err
    assert "--encoder" in err and "records no query encoder" in err and captured.out == ""
    # named, it searches (Pyserini's option name, and our alias)
    for option in ("--encoder", "--model"):
        assert run_main(main, ["--index", str(foreign_index), "--query", "tea without caffeine", option,
                               "splade-tiny", "--hits", "3"]) == 0
        assert "query 1: tea without caffeine" in capsys.readouterr().out


def test_the_python_searchers_ask_for_the_encoder_too(foreign_index):
    from lsr_lucene.compose.searcher import ComposeSearcher
    from lsr_lucene.errors import InputError
    from lsr_lucene.search.impact_searcher import ImpactSearcher

    with pytest.raises(InputError, match="records no query encoder.*encoder="):
        ImpactSearcher(str(foreign_index)).search("tea", k=3)
    assert ImpactSearcher(str(foreign_index), encoder="splade-tiny").search("tea", k=3)
    with pytest.raises(InputError, match="records no query encoder"):
        ComposeSearcher(str(foreign_index)).search("tea but not green tea", k=3)
