"""setup.cfg holds the metadata; this file adds the one build step it cannot say: a wheel carries the jar.

``python -m build`` (or ``pip wheel .``) compiles ``java/`` into ``lsr_lucene/java_build/lsr-lucene.jar`` before the
package files are collected, with the same code as ``lsr-lucene build-java`` (lsr_lucene/jvm/build.py): javac and
Pyserini's Anserini fat jar are needed at build time only, and not even those when the jar is already built from the
same sources (its .sha256 stamp matches, as in an sdist made from a built checkout). Editable installs skip the step
(``lsr-lucene build-java``, or the first run, builds the jar there).
"""
from __future__ import annotations

import glob
import importlib.util
import os
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def _java_build_module() -> ModuleType:
    """lsr_lucene/jvm/build.py of this source tree, loaded by path (an installed lsr_lucene is not this one)."""
    sys.path.insert(0, str(ROOT))  # its one package import, lsr_lucene.errors
    spec = importlib.util.spec_from_file_location("lsr_lucene_java_build", ROOT / "lsr_lucene" / "jvm" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _outside_anserini_jar() -> str | None:
    """Pyserini's fat jar in the environment that started an isolated build (its venv or its base interpreter),
    which the build's own environment lacks."""
    for base in (os.environ.get("VIRTUAL_ENV"), sys.base_prefix):
        if base:
            purelib = sysconfig.get_paths(vars={"base": base, "platbase": base})["purelib"]
            jars = sorted(glob.glob(os.path.join(purelib, "pyserini", "resources", "jars", "anserini-*-fatjar.jar")))
            if jars:
                return jars[-1]
    return None


class BuildPyWithJar(build_py):
    """build_py that first makes sure the jar exists and matches java/ (package_data then carries it)."""

    def run(self) -> None:
        if not self.editable_mode:
            self._build_jar()
            if self.packages is not None and "lsr_lucene.java_build" not in self.packages:
                self.packages.append("lsr_lucene.java_build")  # made just now: a data folder, not a missed package
        super().run()

    def _build_jar(self) -> None:
        java = _java_build_module()
        if not os.environ.get("LSR_ANSERINI_JAR") and importlib.util.find_spec("pyserini") is None:
            found = _outside_anserini_jar()
            if found:
                os.environ["LSR_ANSERINI_JAR"] = found
        try:
            java.build()
        except Exception as exc:  # SetupError: no javac, no Anserini jar, or javac failed
            raise SystemExit(f"error: cannot build {java.JAR_PATH} for the wheel: {exc}\n(a JDK >= 11 and "
                             "Pyserini's Anserini jar are needed: run `lsr-lucene build-java` in the project's "
                             "environment first, or `python -m build --no-isolation` there, or set "
                             "LSR_ANSERINI_JAR)") from None


setup(cmdclass={"build_py": BuildPyWithJar})
