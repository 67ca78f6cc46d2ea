# Sourced by the distributed scripts: timed STEP WORKERS COUNT UNIT CHECK_CMD -- command...
# runs the command, then appends "COLLECTION,DOCS,step,workers,seconds,rate,unit,identical,load,cpus" to $CSV
# (COLLECTION, NDOCS and CSV set by the caller; CHECK_CMD, evaluated after the run, says whether the outputs are
# identical to one machine's).
CSV_HEADER="collection,docs,step,workers,seconds,rate,unit,identical_to_single,load_avg_1min,cpus"

timed() {
  local step=$1 workers=$2 count=$3 unit=$4 check=$5; shift 6
  local t0 t1 secs same
  t0=$(date +%s.%N); "$@"; t1=$(date +%s.%N)
  secs=$(python -c "print(round($t1 - $t0, 2))")
  same=$(eval "$check" && echo yes || echo NO)
  echo "$COLLECTION,$NDOCS,$step,$workers,$secs,$(python -c "print(round($count / ($t1 - $t0), 2))"),$unit,$same,$(cut -d' ' -f1 /proc/loadavg),$(nproc)" | tee -a "$CSV"
}
