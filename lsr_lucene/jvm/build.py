"""Compile ``java/`` against the Lucene classes of Anserini's fat jar into our jar.

The fat jar's Lucene classes are Java 11 bytecode, so ``javac --release 17`` (any
JDK >= 11 works) compiles our Query classes without Maven or network access. Anserini's
own classes are Java 21 bytecode, which javac 17 cannot read: our Anserini hooks
(``io.anserini.search.query.QuerySpecQueryGenerator``, ``...topicreader.QuerySpecTopicReader``)
compile against source stubs of the two Anserini types they extend (``java/stubs``), found
through ``-sourcepath`` and left out of the jar (``-implicit:none``), so Anserini's real
classes are the ones loaded at run time. The
jar is rebuilt whenever a source file is newer than it (a hash of the sources is
stored beside it), and written to a temporary name first so a failed build never
leaves a broken jar behind.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from lsr_lucene.errors import SetupError

PACKAGE_DIR = Path(__file__).resolve().parents[1]
JAVA_SOURCES = PACKAGE_DIR.parent / "java" / "src"
JAVA_STUBS = PACKAGE_DIR.parent / "java" / "stubs"  # Anserini signatures to compile against, never packaged
JAR_DIR = Path(os.environ.get("LSR_JAR_DIR", PACKAGE_DIR / "java_build"))
JAR_PATH = JAR_DIR / "lsr-lucene.jar"
RELEASE = "17"


def _sources() -> list[Path]:
    return sorted(JAVA_SOURCES.rglob("*.java")) if JAVA_SOURCES.is_dir() else []


def _stubs() -> list[Path]:
    return sorted(JAVA_STUBS.rglob("*.java")) if JAVA_STUBS.is_dir() else []


def _sources_digest(sources: list[Path]) -> str:
    digest = hashlib.sha256()
    for root, files in ((JAVA_SOURCES, sources), (JAVA_STUBS, _stubs())):
        for src in files:
            digest.update(str(src.relative_to(root.parent)).encode())
            digest.update(src.read_bytes())
    return digest.hexdigest()


def anserini_jar() -> Path:
    """The Anserini fat jar that Pyserini ships (Lucene 9.9.1 plus Anserini 1.7.1), or ``$LSR_ANSERINI_JAR``
    where set (a jar of the same classes, e.g. the slim one scripts/prepare_device_threads.sh carries to a machine
    without Pyserini)."""
    import importlib.util

    if os.environ.get("LSR_ANSERINI_JAR"):
        override = Path(os.environ["LSR_ANSERINI_JAR"])
        if not override.is_file():
            raise SetupError(f"LSR_ANSERINI_JAR={override}: no such file")
        return override
    spec = importlib.util.find_spec("pyserini")
    if spec is None or not spec.submodule_search_locations:
        raise SetupError("Anserini's jar not found: pyserini is not installed; `pip install --no-deps pyserini==1.6.0` "
                         "brings its jar alone (the user install), the `pyserini` extra Pyserini itself, or "
                         "LSR_ANSERINI_JAR=JAR names a jar")
    jars = sorted(Path(spec.submodule_search_locations[0], "resources", "jars").glob("anserini-*-fatjar.jar"))
    if not jars:
        raise SetupError("pyserini has no Anserini fat jar under pyserini/resources/jars")
    return jars[-1]


def _find_javac() -> str:
    candidates = [os.environ.get("JAVAC"), shutil.which("javac")]
    for home_var in ("LSR_JAVA_HOME", "JAVA_HOME"):
        if os.environ.get(home_var):
            candidates.append(str(Path(os.environ[home_var]) / "bin" / "javac"))
    candidates.extend(str(p) for p in sorted(Path("/usr/lib/jvm").glob("*/bin/javac")) if Path("/usr/lib/jvm").is_dir())
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return candidate
    raise SetupError("no javac found (a JDK >= 11 is needed to build java/; "
                     "on Debian: apt-get install openjdk-17-jdk-headless), or set JAVAC")


def _find_jar_tool(javac: str) -> str | None:
    jar = Path(javac).with_name("jar")
    return str(jar) if jar.exists() else shutil.which("jar")


def build(force: bool = False, quiet: bool = False) -> Path:
    """Compile ``java/src`` into ``JAR_PATH`` if the sources changed; returns the jar path."""
    sources = _sources()
    if not sources:
        if JAR_PATH.exists():
            return JAR_PATH  # installed without the java/ tree: use the jar that was built at install time
        raise SetupError(f"no Java sources at {JAVA_SOURCES} and no built jar at {JAR_PATH}; "
                         "install from a checkout with pip install -e")
    digest = _sources_digest(sources)
    stamp = JAR_PATH.with_suffix(".sha256")
    if not force and JAR_PATH.exists() and stamp.exists() and stamp.read_text().strip() == digest:
        return JAR_PATH
    JAR_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=JAR_DIR, prefix=".build-") as tmp:
        classes = Path(tmp, "classes")
        classes.mkdir()
        javac = _find_javac()
        # stubs by -sourcepath, preferred to the fat jar's Java 21 classes and never written out
        cmd = [javac, "--release", RELEASE, "-nowarn", "-encoding", "UTF-8", "-implicit:none", "-Xprefer:source",
               "-sourcepath", str(JAVA_STUBS), "-cp", str(anserini_jar()), "-d", str(classes), *map(str, sources)]
        if not quiet:
            print(f"building {len(sources)} Java sources into {JAR_PATH}", file=sys.stderr)
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise SetupError(f"javac failed on java/src:\n{result.stderr.strip()}")
        tmp_jar = Path(tmp, "out.jar")
        jar_tool = _find_jar_tool(javac)
        if jar_tool:
            subprocess.run([jar_tool, "cf", str(tmp_jar), "-C", str(classes), "."], check=True)
        else:
            shutil.make_archive(str(tmp_jar.with_suffix("")), "zip", classes)
            tmp_jar.with_suffix(".zip").rename(tmp_jar)
        os.replace(tmp_jar, JAR_PATH)
    stamp.write_text(digest + "\n")
    return JAR_PATH


def ensure_jar() -> Path:
    """The jar, built first when missing or stale (only possible when a javac exists); missing and not buildable:
    one line naming ``lsr-lucene build-java`` (a wheel install carries the jar and never gets here)."""
    try:
        return build(quiet=True)
    except SetupError as exc:
        if JAR_PATH.exists():
            print(f"warning: could not rebuild {JAR_PATH}; using the existing jar", file=sys.stderr)
            return JAR_PATH
        if "\n" in str(exc):
            raise  # javac's own messages: the sources do not compile
        raise SetupError(f"the lsr_lucene jar {JAR_PATH} is missing and could not be built ({exc}); run "
                         "`lsr-lucene build-java` in an environment with a JDK, or install the lsr_lucene wheel, "
                         "which carries the jar") from None
