"""The release a user installs (issue 53): ``python -m build`` makes an sdist with the Java sources and a wheel with
the jar; that wheel, installed in a throwaway venv over this environment (``--no-deps``), runs ``lsr-lucene demo``
from outside the source tree with no javac on PATH, whether this environment is the system Python or a virtual
environment (issue 67: ``--system-site-packages`` alone sees the base interpreter's packages, not a venv's). About
a minute: the build reuses the jar when it is current."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import lsr_lucene

pytestmark = pytest.mark.slow  # builds the sdist and the wheel, installs it in a venv (-m 'not slow' skips it)

ROOT = Path(__file__).resolve().parents[1]


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kwargs)
    assert result.returncode == 0, f"{cmd} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def see_this_environment(venv: Path, env: dict[str, str]) -> None:
    """Let ``venv`` see the packages of the environment running the tests. ``--system-site-packages`` gives the
    base interpreter's; from inside a virtual environment (where most users install) that is not this one, whose
    torch, Pyserini... the demo needs: a ``.pth`` file in ``venv`` lists the package folders this interpreter
    imports from (its site-packages and what their .pth files add; no source tree of lsr_lucene), after venv's own,
    so the wheel installed there is still the ``lsr_lucene`` imported."""
    import sysconfig

    if sys.prefix == sys.base_prefix:  # the system interpreter: --system-site-packages is this environment
        return
    purelib = _run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                   env=env).stdout.strip()
    stdlib = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib")}
    outer = [path for path in sys.path if path and Path(path).is_dir() and path not in stdlib
             and Path(path).name != "lib-dynload" and not (Path(path) / "setup.cfg").is_file()]  # no source tree
    (Path(purelib) / "_outer_environment.pth").write_text("\n".join(outer) + "\n")


def test_the_wheel_carries_the_jar_and_runs_the_demo_without_javac(tmp_path):
    dist = tmp_path / "dist"
    # --no-isolation: this environment's setuptools and Pyserini (no download); the wheel is built from the sdist
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)])
    version = lsr_lucene.__version__
    (wheel,) = dist.glob(f"lsr_lucene-{version}-*.whl")
    (sdist,) = dist.glob(f"lsr_lucene-{version}.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert "lsr_lucene/java_build/lsr-lucene.jar" in names and "lsr_lucene/data/demo/corpus.jsonl" in names
        # the product only: studies and benchmarks stay in the repository's scripts/ (issue 66)
        research = ("scripts/", "lsr_lucene/bench/", "lsr_lucene/experiments/", "lsr_lucene/studies/")
        assert [n for n in names if n.startswith(research)] == []
        metadata = archive.read(f"lsr_lucene-{version}.dist-info/METADATA").decode()
    assert f"\nVersion: {version}\n" in metadata
    with tarfile.open(sdist) as archive:
        sources = [n for n in archive.getnames() if n.endswith(".java")]
    assert any("/java/src/" in n for n in sources) and any("/java/stubs/" in n for n in sources)

    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JAVA_HOME", "JAVAC", "LSR_JAR_DIR")}
    env["PATH"] = str(venv / "bin")  # nothing else: no javac (nor any other JDK tool) on PATH
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], env=env)
    see_this_environment(venv, env)
    # no PYTHONPATH: pip would take a source tree on it for an installed lsr_lucene and skip the wheel
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
          "--ignore-installed", str(wheel)], env=env)
    assert shutil.which("javac", path=env["PATH"]) is None
    outside = tmp_path / "outside"  # not the source tree, whose lsr_lucene/ would be imported instead
    outside.mkdir()
    found = _run([str(venv / "bin" / "python"), "-c", "import lsr_lucene; print(lsr_lucene.__file__)"],
                 env=env, cwd=outside).stdout.strip()
    assert Path(found).is_relative_to(venv), found
    assert _run([str(venv / "bin" / "lsr-lucene"), "--version"], env=env, cwd=outside).stdout.strip() == version
    demo = _run([str(venv / "bin" / "lsr-lucene"), "demo"], env=env, cwd=outside)
    assert "splade-tiny" in demo.stdout and (outside / "work" / "demo" / "splade-tiny.run").stat().st_size > 0
