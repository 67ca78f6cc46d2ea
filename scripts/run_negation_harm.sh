#!/usr/bin/env bash
# Negation users can trust (issue 36). (1) Do no harm: on ordinary topic sets (SciFact train claims, CACM, CISI,
# Cranfield, NPL, MED) plain `search` and `compose --topics` (cue parser, default operations) on the same
# splade-tiny index, nDCG@10 over all topics and over the topics where a cue fired, each set also cut into a seeded
# tuning part and a held-out third -> runs/negation/harm.{md,csv}. compose runs the shipped default: where a topic of
# the set fires, the index gets its dense leg (<index>/dense, lsr-lucene dense encode); a set where no topic fires is
# searched identically with or without one (the dense leg is only read for fired topics), so none is encoded there.
# (2) Fire where it should: the default setting on ExcluIR dev and BoolQuestions NOT dev, with its dense leg and
# without (the sparse fallback), all rows and the seeded tuning / held-out parts -> runs/negation/exclusion.{md,csv}.
# Vectors and indexes are cached in work/<collection>/ (as scripts/run_collection.sh makes them) and reused; run
# files go to work/negation_harm/.
# Usage: nice scripts/run_negation_harm.sh   (about 10 minutes on 2 busy cores once the collections are encoded;
#        encoding them takes about 6 minutes more the first time, SciFact the longest)
# Environment: MODEL (default splade-tiny), THREADS (default 2), DATA (default ../shared/data),
#              SETS (default "scifact cacm cisi cranfield npl med").
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
data=${DATA:-$here/../shared/data}
model=${MODEL:-splade-tiny}
name=${model##*/}
threads=${THREADS:-2}
out=runs/negation
runs=work/negation_harm
mkdir -p "$out" "$runs"
sets=()
. "$here/scripts/collection_inputs.sh"
for c in ${SETS:-scifact cacm cisi cranfield npl med}; do
  collection_inputs "$data/$c"   # sets $topics and $qrels
  work=work/$c
  [ -f "$work/vectors-$name.metadata.json" ] ||
    python -m lsr_lucene.encode --corpus "$data/$c/corpus.jsonl" --output "$work/vectors-$name" --model "$model" \
      --max-length 256 --threads "$threads"
  [ -d "$work/index-$name" ] ||
    python -m lsr_lucene.index --input "$work/vectors-$name" --index "$work/index-$name" --threads "$threads"
  fires=$(python -c 'import sys; from lsr_lucene.io.topics import read_topics; from lsr_lucene.compose.negation_parser import parse
print(sum(parse(t).composed for t in read_topics(sys.argv[1]).values()))' "$topics")
  if [ "$fires" -gt 0 ] && [ ! -f "$work/index-$name/dense/metadata.json" ]; then
    python -m lsr_lucene.dense encode --corpus "$data/$c/corpus.jsonl" --output "$work/index-$name/dense" \
      --threads "$threads"
  fi
  echo "== $c" >&2
  python -m lsr_lucene.search --index "$work/index-$name" --topics "$topics" --output "$runs/$c.plain.run" \
    --hits 1000 --threads "$threads" --run-tag plain --overwrite
  python -m lsr_lucene.compose --index "$work/index-$name" --topics "$topics" --output "$runs/$c.compose.run" \
    --hits 1000 --threads "$threads" --run-tag compose --overwrite
  sets+=(--set "$c=$topics,$qrels,$runs/$c.plain.run,$runs/$c.compose.run,split")
done
nq=()  # NQ test questions: no judgments against these collections, only how many fire
[ -f "$data/wiki2015/topics.nq-test.tsv" ] && nq=(--fired "nq-test=$data/wiki2015/topics.nq-test.tsv")
python -m scripts.negation.negation_harm harm "${sets[@]}" "${nq[@]}" --output "$out/harm" --overwrite
for f in "$data/excluir/dev.jsonl" "$data/boolquestions_not/dev.jsonl"; do
  [ -f "$f" ] || { echo "error: $f not found" >&2; exit 2; }
done
python -m scripts.negation.negation_harm exclusion --data "$data/excluir" --data "$data/boolquestions_not" \
  --work work --model "$model" --threads "$threads" --output "$out/exclusion" --overwrite
echo "done: tables in $out" >&2
