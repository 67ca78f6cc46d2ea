"""A slim copy of Anserini's fat jar: the classes a JVM class-load log shows were loaded from it, for carrying our
Java verbs to a machine without Pyserini (scripts/prepare_device_threads.sh; the fat jar is 170 MB).

Kept: every class of each *package* a loaded class came from (so a code path the logged run did not take, an error
path say, still finds its neighbours), the multi-release variants of those classes, META-INF (SPI service files,
Log4j's plugin cache, manifests) and small resource files; dropped: native libraries, dictionaries and the rest.
The log is the JVM's ``-Xlog:class+load`` output (``JAVA_TOOL_OPTIONS=-Xlog:class+load:file=LOG``).
Usage: ``python -m scripts.bench.slim FAT_JAR OUTPUT_JAR LOG [LOG ...]``.
"""
from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

LOADED = re.compile(r"\] (\S+) source: (?:jar:)?file:(\S+)")
VERSIONED = re.compile(r"^META-INF/versions/\d+/")
NATIVE = re.compile(r"\.(so|dll|dylib|jnilib|pdb|a|lib)$")
MAX_RESOURCE = 64 * 1024  # resources larger than this (dictionaries, models) are left out


def loaded_classes(logs: list[Path], jar: Path) -> set[str]:
    """Names (``a.b.C$D``) of the classes the logs say were loaded from ``jar`` (matched by file name)."""
    names: set[str] = set()
    for log in logs:
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            match = LOADED.search(line)
            if match and Path(match.group(2).rstrip("!/")).name == jar.name:
                names.add(match.group(1))
    return names


def _package(entry: str) -> str:
    return VERSIONED.sub("", entry).rpartition("/")[0]


def keep(entry: zipfile.ZipInfo, packages: set[str]) -> bool:
    """Whether a fat-jar entry goes into the slim jar."""
    name = entry.filename
    if entry.is_dir():
        return False
    if name.endswith(".class"):
        return _package(name) in packages
    if NATIVE.search(name) or ".dSYM/" in name:
        return False
    return name.startswith("META-INF/") or entry.file_size <= MAX_RESOURCE


def slim(fat: Path, output: Path, logs: list[Path]) -> tuple[int, int]:
    """Write the slim jar (entries stored uncompressed, so an xz of the carried folder packs them well); returns
    (entries kept, classes named by the logs)."""
    classes = loaded_classes(logs, fat)
    if not classes:
        raise SystemExit(f"error: no class of {fat.name} in {', '.join(map(str, logs))}")
    packages = {c.rpartition(".")[0].replace(".", "/") for c in classes}
    tmp = output.with_name(output.name + ".tmp")
    kept = 0
    with zipfile.ZipFile(fat) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as dst:
        for entry in src.infolist():
            if keep(entry, packages):
                dst.writestr(entry, src.read(entry), compress_type=zipfile.ZIP_STORED)
                kept += 1
    tmp.replace(output)
    return kept, len(classes)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 3:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    fat, output, logs = Path(args[0]), Path(args[1]), [Path(a) for a in args[2:]]
    kept, named = slim(fat, output, logs)
    print(f"{output}: {kept} entries ({named} classes loaded), {output.stat().st_size / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
