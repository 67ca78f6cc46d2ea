"""One version everywhere (issue 53): the package, the command line and setup.cfg agree; every index records the
version and format that built it, and an index of a newer format is refused in one line; a source install without
the jar says to run ``lsr-lucene build-java``."""
from __future__ import annotations

import configparser
import json
import re
from pathlib import Path

import pytest

import lsr_lucene
from lsr_lucene.cli import main as cli_main
from lsr_lucene.errors import InputError, SetupError
from lsr_lucene.index.kind import INDEX_FORMAT, INDEX_METADATA, IMPACT, index_kind

ROOT = Path(__file__).resolve().parents[1]


def test_one_version_source(capsys):
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    assert config["metadata"]["version"] == "attr: lsr_lucene.__version__"  # the wheel's metadata reads it
    assert re.fullmatch(r"\d+\.\d+\.\d+([ab]|rc)?\d*", lsr_lucene.__version__)
    assert cli_main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == lsr_lucene.__version__
    assert f"## {lsr_lucene.__version__}" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def test_a_new_index_records_its_version_and_format(tmp_path):
    from lsr_lucene.index.impact import build_impact_index, read_index_metadata

    (tmp_path / "vectors.jsonl").write_text(json.dumps({"id": "d1", "contents": "", "vector": {"tea": 5}}) + "\n")
    build_impact_index(tmp_path / "vectors.jsonl", tmp_path / "index", threads=1)
    recorded = read_index_metadata(tmp_path / "index")
    assert (recorded["kind"], recorded["format"], recorded["lsr_lucene_version"]) == \
        (IMPACT, INDEX_FORMAT, lsr_lucene.__version__)


def _index_of_format(folder: Path, fmt: object, record: str = INDEX_METADATA) -> Path:
    folder.mkdir()
    (folder / record).write_text(json.dumps({"kind": "impact", "format": fmt, "lsr_lucene_version": "99.0.0"}))
    return folder


def test_an_index_of_a_newer_format_is_refused_in_one_line(tmp_path, capsys):
    index = _index_of_format(tmp_path / "future", INDEX_FORMAT + 1)
    (tmp_path / "specs.jsonl").write_text(json.dumps({"qid": "1", "terms": {"tea": 1}}) + "\n")
    argv = ["search", "--index", str(index), "--specs", str(tmp_path / "specs.jsonl"),
            "--output", str(tmp_path / "a.run")]
    assert cli_main(argv) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert f"index format {INDEX_FORMAT + 1}" in errors[0] and "99.0.0" in errors[0] and str(index) in errors[0]
    assert not (tmp_path / "a.run").exists()

    from lsr_lucene.index.impact import read_index_metadata

    with pytest.raises(InputError, match=f"reads formats up to {INDEX_FORMAT}"):
        read_index_metadata(index)
    with pytest.raises(InputError, match="index format 'x'"):
        index_kind(_index_of_format(tmp_path / "odd", "x"))
    with pytest.raises(InputError, match="index format 7"):
        index_kind(_index_of_format(tmp_path / "shards", 7, record="shards.json"))


def test_an_index_without_a_format_reads_as_format_1(tmp_path):
    (tmp_path / INDEX_METADATA).write_text(json.dumps({"kind": "impact"}))  # built before formats were recorded
    assert index_kind(tmp_path) == IMPACT
    assert index_kind(_index_of_format(tmp_path / "current", INDEX_FORMAT)) == IMPACT


def test_a_missing_jar_that_cannot_be_built_names_build_java(tmp_path, monkeypatch):
    from lsr_lucene.jvm import build

    def no_javac() -> str:
        raise SetupError("no javac found")

    monkeypatch.setattr(build, "JAR_PATH", tmp_path / "java_build" / "lsr-lucene.jar")
    monkeypatch.setattr(build, "JAR_DIR", tmp_path / "java_build")
    monkeypatch.setattr(build, "_find_javac", no_javac)
    with pytest.raises(SetupError) as caught:
        build.ensure_jar()
    message = str(caught.value)
    assert "\n" not in message and "`lsr-lucene build-java`" in message and "no javac found" in message
