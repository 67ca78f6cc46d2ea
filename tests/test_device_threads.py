"""The pieces of the 16-core thread-defaults measurement that run without a device: the slim jar keeps the packages
a class-load log names (and LSR_ANSERINI_JAR puts it on the classpath), and the thread table puts 2-core and 16-core
rows side by side with the default's ratio to the fastest setting."""
from __future__ import annotations

import zipfile

import pytest

from scripts.bench.thread_table import table
from lsr_lucene.errors import SetupError
from lsr_lucene.jvm import build
from scripts.bench import slim


def _fat_jar(path):
    with zipfile.ZipFile(path, "w") as jar:
        for name in ["org/a/A.class", "org/a/A$1.class", "org/a/B.class", "org/b/C.class",
                     "META-INF/versions/11/org/a/B.class", "META-INF/versions/11/org/b/C.class",
                     "META-INF/services/org.a.A", "org/b/words.txt", "native/lib/x.so"]:
            jar.writestr(name, b"x")
        jar.writestr("org/b/big.dict", b"x" * (slim.MAX_RESOURCE + 1))
    return path


def test_slim_keeps_the_packages_of_loaded_classes(tmp_path):
    fat = _fat_jar(tmp_path / "fat.jar")
    log = tmp_path / "classes.log"
    log.write_text(f"[0.1s][info][class,load] org.a.A source: file:{fat}\n"
                   "[0.1s][info][class,load] java.lang.Object source: shared objects file\n"
                   "[0.1s][info][class,load] org.b.C source: file:/elsewhere/other.jar\n")
    kept, named = slim.slim(fat, tmp_path / "slim.jar", [log])
    names = set(zipfile.ZipFile(tmp_path / "slim.jar").namelist())
    assert named == 1
    assert names == {"org/a/A.class", "org/a/A$1.class", "org/a/B.class", "META-INF/versions/11/org/a/B.class",
                     "META-INF/services/org.a.A", "org/b/words.txt"}
    assert kept == len(names)


def test_slim_refuses_a_log_without_the_jar(tmp_path):
    fat = _fat_jar(tmp_path / "fat.jar")
    log = tmp_path / "classes.log"
    log.write_text("[0.1s][info][class,load] java.lang.Object source: shared objects file\n")
    with pytest.raises(SystemExit, match="no class of fat.jar"):
        slim.slim(fat, tmp_path / "slim.jar", [log])


def test_anserini_jar_override(tmp_path, monkeypatch):
    jar = _fat_jar(tmp_path / "slim.jar")
    monkeypatch.setenv("LSR_ANSERINI_JAR", str(jar))
    assert build.anserini_jar() == jar
    monkeypatch.setenv("LSR_ANSERINI_JAR", str(tmp_path / "missing.jar"))
    with pytest.raises(SetupError, match="no such file"):
        build.anserini_jar()


def test_thread_table_rows_side_by_side(tmp_path):
    head = "verb,threads,resolved_threads,round,seconds,load_avg_1min,cpus,cpu_capability\n"
    two = tmp_path / "two.csv"
    two.write_text(head + "search,1,1,1,14.0,5.0,2,AVX512\nsearch,2,2,1,8.0,6.0,2,AVX512\n"
                   "search,default,2,1,9.0,5.5,2,AVX512\nsearch,default,2,2,8.8,5.5,2,AVX512\n")
    sixteen = tmp_path / "sixteen.csv"
    sixteen.write_text(head + "bm25,1,1,1,5.0,1.0,16,AVX512_AMX\nbm25,4,4,1,4.0,1.0,16,AVX512_AMX\n"
                       "bm25,default,16,1,6.0,1.2,16,AVX512_AMX\n")
    text = table([(str(two), "2-core"), (str(sixteen), "16-core")])
    assert "| search | 2-core | 2 | 14.00 | 2 | 8.00 | 2 | 8.80 | 1.10 | 5.0-6.0 |" in text
    assert "| bm25 | 16-core | 16 | 5.00 | 4 | 4.00 | 16 | 6.00 | 1.50 | 1.0-1.2 |" in text
    assert "2 interleaved rounds" in text and "16 CPUs, torch CPU capability AVX512_AMX" in text
