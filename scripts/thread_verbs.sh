# Sourced by scripts/run_thread_defaults.sh and scripts/device_thread_defaults.sh: the command line of each timed
# verb (without --threads), over the inputs under $work, and one timed run of it, so that both machines time the same
# commands and write the same rows.
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

# One timed run of a verb as a user runs it (fresh process), with PYTHON (python or python3): prints its times.csv
# row (verb,threads,resolved_threads,round,seconds,load_avg_1min,cpus,cpu_capability); fails when the verb fails.
# Needs $default_threads and $capability. Its stderr is appended to STDERR.
time_verb() {  # PYTHON VERB SETTING ROUND OUTPUT STDERR
  local extra=() resolved load t0 t1
  [ "$3" = default ] || extra=(--threads "$3")
  resolved=$([ "$3" = default ] && echo "$default_threads" || echo "$3")
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(date +%s.%N)
  # shellcheck disable=SC2046
  "$1" -m lsr_lucene.cli $(verb_cmd "$2" "$5") "${extra[@]}" > /dev/null 2>> "$6" || return 1
  t1=$(date +%s.%N)
  echo "$2,$3,$resolved,$4,$("$1" -c "print(round($t1 - $t0, 2))"),$load,$(nproc),$capability"
}
