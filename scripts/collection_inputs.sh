# Sourced by the collection and exclusion scripts: collection_inputs DIR sets $topics and $qrels for the collection folder DIR
# (topics.tsv/qrels.txt, or SciFact's train split where that is all it ships) and stops with one error line
# when its corpus, topics or qrels are missing.
collection_inputs() {  # DIR
  topics=$1/topics.tsv; qrels=$1/qrels.txt
  if [ ! -f "$topics" ] && [ -f "$1/topics.train.tsv" ]; then   # SciFact ships its train split only
    topics=$1/topics.train.tsv; qrels=$1/qrels.train.txt
  fi
  for f in "$1/corpus.jsonl" "$topics" "$qrels"; do
    [ -f "$f" ] || { echo "error: $f not found" >&2; exit 2; }
  done
}

# exclusion_inputs DATA stops with one error line when the ExcluIR or BoolQuestions corpus or dev rows under the
# data folder DATA are missing (the exclusion experiments read both benchmarks).
exclusion_inputs() {  # DATA
  for f in "$1/excluir/corpus.jsonl" "$1/excluir/dev.jsonl" "$1/boolquestions_not/corpus.jsonl" \
           "$1/boolquestions_not/dev.jsonl"; do
    [ -f "$f" ] || { echo "error: $f not found" >&2; exit 2; }
  done
}
