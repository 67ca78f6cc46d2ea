"""scripts/run_collection.sh (issue 51): results go to the git-ignored work/COLLECTION/runs unless OUTPUT names a
folder, and a given folder's files are replaced only with OVERWRITE=1. ``lsr-lucene`` is a stand-in recording its
arguments, so the script's own choices are checked in a second."""
from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def fake(tmp_path):
    """A stand-in lsr-lucene on PATH, a collection folder, and the script's work folder removed afterwards."""
    bin_dir, data = tmp_path / "bin", tmp_path / "data"
    bin_dir.mkdir()
    name = f"test-{uuid.uuid4().hex[:8]}"
    (data / name).mkdir(parents=True)
    for file in ("corpus.jsonl", "topics.tsv", "qrels.txt"):
        (data / name / file).write_text("x\n")
    log = tmp_path / "calls.log"
    (bin_dir / "lsr-lucene").write_text(f'#!/usr/bin/env bash\necho "$*" >> {log}\n')
    (bin_dir / "lsr-lucene").chmod(0o755)
    yield name, {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "DATA": str(data)}, log
    shutil.rmtree(ROOT / "work" / name, ignore_errors=True)


def calls(name, env, log, **extra) -> list[str]:
    log.unlink(missing_ok=True)
    subprocess.run(["bash", str(ROOT / "scripts" / "run_collection.sh"), name], env={**env, **extra}, check=True,
                   capture_output=True, text=True, timeout=60)
    return [line for line in log.read_text().splitlines() if line.split()[0] in ("search", "bm25", "eval")]


def test_results_go_to_work_unless_asked_and_are_replaced_only_when_asked(fake, tmp_path):
    name, env, log = fake
    scratch = calls(name, env, log)
    assert len(scratch) == 4 and all(f"work/{name}/runs/" in line and "--overwrite" in line for line in scratch)
    assert not any("/runs/" + name in line for line in scratch)  # never the tracked runs/COLLECTION
    tracked = calls(name, env, log, OUTPUT=str(tmp_path / "out"))
    assert all(str(tmp_path / "out") in line and "--overwrite" not in line for line in tracked)
    asked = calls(name, env, log, OUTPUT=str(tmp_path / "out"), OVERWRITE="1")
    assert all("--overwrite" in line for line in asked)
