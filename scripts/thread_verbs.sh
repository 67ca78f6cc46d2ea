# Sourced by scripts/run_thread_defaults.sh and scripts/device_thread_defaults.sh: the command line of each timed
# verb (without --threads), over the inputs under $work, so that both machines time the same commands.
verb_cmd() {  # VERB OUTPUT
  case $1 in
    encode) echo "encode --corpus $work/encode-corpus.jsonl --output $2 --encoder splade-tiny" ;;
    search) echo "search --index $work/index --topics $work/topics.tsv --output $2" ;;
    dense-search) echo "dense search --index $work/dense --topics $work/topics.tsv --output $2" ;;
    bm25) echo "bm25 --index $work/bm25 --topics $work/topics.tsv --output $2" ;;
    longdocs-search) echo "longdocs search --index $work/segindex --method score-max --topics $work/topics.tsv \
--output $2" ;;
  esac
}
