#!/usr/bin/env bash
# How a run's cost grows (bench/README.md, "How cost grows with jobs and GPUs"): wall seconds,
# user seconds and peak RSS of `clustersim run` end to end (parse, simulate, write SQLite) under
# /usr/bin/time -v, for fcfs, easy and conservative (first-fit, runtime `trace`), along four axes:
#
#   jobs         10k .. 10M jobs on 128 x 8 = 1,024 GPUs: even 10k jobs (0.7 days of arrivals,
#                17 mean durations) load it as 10M do, so the load is the same at every point
#   jobs-scale   10k .. 10M jobs on 12,500 x 8 = 100,000 GPUs (the scale case of scale_bench.sh);
#                below 1M jobs the arrivals last less than a few mean durations, so the cluster
#                is never filled (see the utilization column)
#   gpus         1k .. 1M GPUs (nodes of 8) at 1,000,000 jobs
#   gpus-100k    the same at 100,000 jobs: the more GPUs, the shorter the arrivals (14 minutes
#                at 1M GPUs), so the larger clusters are never filled
#
#   bench/growth_bench.sh [--rounds N] [--policies fcfs,easy,conservative] [--min-jobs N]
#                         [--max-jobs N] [--max-gpus N] AXIS...
#
# Every trace is `trace generate --gpus G --load 0.75 --seed 42 --walltimes modal` with G the
# cluster's GPUs, so the offered load is 0.75 at every point of every axis (the generator scales
# the arrival rate to G); the modal wall times are what easy and conservative plan with (fcfs
# ignores them; they never end a job early: each is at least its run time).
# Points run from small to large; once a policy's run is over TIMEOUT, its larger points on that
# axis are recorded as not run ("skipped"), never dropped. One line per point goes to
# RESULTS_DIR/growth.tsv (appended; --rounds N: N lines per point) and to the screen: axis,
# policy, jobs, gpus, wall_s, user_s, sys_s (kernel CPU seconds, mostly page faults), peak_rss_mb,
# status (ok | over_limit | failed | skipped), fingerprint, load average (1, 5, 15 min, at the end
# of the run), date (UTC), and the run's utilization_pct and mean_queue_jobs (from its summary:
# how loaded the simulated cluster was), and jobs_completed (how far a run ended by the limit got).
# Environment: BUILD_DIR (default build), RESULTS_DIR (default $BUILD_DIR/bench-results/growth),
# DATA_DIR (traces, generated once, default $BUILD_DIR/bench-data), TIMEOUT (seconds per run,
# default 300), NICE (default 5).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
CLI="$BUILD_DIR/cli/clustersim"
RESULTS_DIR="${RESULTS_DIR:-$BUILD_DIR/bench-results/growth}"
DATA_DIR="${DATA_DIR:-$BUILD_DIR/bench-data}"
TIMEOUT="${TIMEOUT:-300}"
NICE="${NICE:-5}"
POLICIES=(fcfs easy conservative)
ROUNDS=1
MIN_JOBS=0
MAX_JOBS=10000000
MAX_GPUS=1048576
AXES=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    --policies) IFS=, read -r -a POLICIES <<<"$2"; shift 2 ;;
    --min-jobs) MIN_JOBS="$2"; shift 2 ;;
    --max-jobs) MAX_JOBS="$2"; shift 2 ;;
    --max-gpus) MAX_GPUS="$2"; shift 2 ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    jobs|jobs-scale|gpus|gpus-100k) AXES+=("$1"); shift ;;
    *) echo "growth_bench.sh: unknown argument $1 (axes: jobs, jobs-scale, gpus, gpus-100k)" >&2
      exit 2 ;;
  esac
done
[[ ${#AXES[@]} -gt 0 ]] || { echo "growth_bench.sh: name an axis: jobs, jobs-scale, gpus, gpus-100k" >&2; exit 2; }
[[ -x "$CLI" ]] || { echo "growth_bench.sh: $CLI not built" >&2; exit 2; }
mkdir -p "$RESULTS_DIR" "$DATA_DIR"
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
TSV="$RESULTS_DIR/growth.tsv"
[[ -f "$TSV" ]] || printf 'axis\tpolicy\tjobs\tgpus\twall_s\tuser_s\tsys_s\tpeak_rss_mb\tstatus\tfingerprint\tloadavg\tdate\tutilization_pct\tmean_queue_jobs\tjobs_completed\n' >"$TSV"

cluster() {  # GPUS -> path (nodes of 8 A100)
  local path="$SCRATCH/cluster_$1.json"
  echo "{\"nodes\":[{\"count\":$(($1 / 8)),\"gpu_type\":\"A100-80GB\",\"gpus_per_node\":8}]}" >"$path"
  echo "$path"
}
trace() {  # JOBS GPUS -> path (generated once)
  local path="$DATA_DIR/synthetic_${1}jobs_${2}gpus_load0.75_seed42_walltimes_modal.csv"
  [[ -f "$path" ]] || nice -n "$NICE" "$CLI" trace generate --jobs "$1" --gpus "$2" --load 0.75 \
    --seed 42 --walltimes modal --no-progress --out "$path" >&2
  echo "$path"
}
row() {  # AXIS POLICY JOBS GPUS WALL USER SYS RSS STATUS FINGERPRINT UTILIZATION QUEUE COMPLETED
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${@:1:10}" \
    "$(cut -d' ' -f1-3 /proc/loadavg)" "$(date -u '+%Y-%m-%d %H:%M')" "${@:11:3}" | tee -a "$TSV"
}
# One timed run; returns 1 if it was over the limit or failed.
timed() {  # AXIS POLICY JOBS GPUS
  local axis=$1 policy=$2 jobs=$3 gpus=$4
  local t c db log rc=0
  t=$(trace "$jobs" "$gpus")
  c=$(cluster "$gpus")
  db="$SCRATCH/out.sqlite"
  log="$RESULTS_DIR/${axis}_${policy}_${jobs}jobs_${gpus}gpus"
  rm -f "$db"
  local start="${EPOCHREALTIME/[.,]/}"
  /usr/bin/time -v -o "$log.time" timeout "$TIMEOUT" nice -n "$NICE" "$CLI" run --trace "$t" \
    --cluster "$c" --placement first-fit --runtime-model trace --policy "$policy" --out "$db" \
    --no-progress >"$log.log" 2>&1 || rc=$?
  local end="${EPOCHREALTIME/[.,]/}"
  rm -f "$db"
  local wall user sys rss fp util queue completed status=ok
  wall=$(python3 -c "print(f'{($end - $start) / 1e6:.2f}')")
  user=$(awk -F': ' '/User time/ {print $2}' "$log.time")
  sys=$(awk -F': ' '/System time/ {print $2}' "$log.time")
  rss=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$log.time")
  fp=$(awk '/fingerprint/ {print $2}' "$log.log")
  util=$(awk '/^  utilization / {print $2}' "$log.log")
  queue=$(awk '/^  utilization / {print $5}' "$log.log")
  completed=$(awk '/^  jobs / {print $3}' "$log.log")
  if [[ $rc -eq 124 ]]; then
    status=over_limit
  elif [[ $rc -ne 0 ]]; then
    status=failed
    echo "growth_bench.sh: $policy $jobs jobs $gpus GPUs exited $rc (see $log.log)" >&2
  fi
  row "$axis" "$policy" "$jobs" "$gpus" "$wall" "$user" "$sys" "$rss" "$status" "$fp" "$util" "$queue" "$completed"
  [[ $status == ok ]]
}
# Runs POLICY over the points of one axis, small to large: AXIS POLICY then "JOBS GPUS" pairs.
sweep() {
  local axis=$1 policy=$2 over=""
  shift 2
  local point
  for point in "$@"; do
    read -r jobs gpus <<<"$point"
    (( jobs >= MIN_JOBS && jobs <= MAX_JOBS && gpus <= MAX_GPUS )) || continue
    if [[ -n $over ]]; then
      row "$axis" "$policy" "$jobs" "$gpus" "" "" "" "" skipped "" "" "" ""
      continue
    fi
    local round
    for ((round = 1; round <= ROUNDS; round++)); do
      timed "$axis" "$policy" "$jobs" "$gpus" || { over=1; break; }
    done
  done
}

JOBS=(10000 30000 100000 300000 1000000 3000000 10000000)
GPUS=(1024 4096 16384 65536 262144 1048576)
for axis in "${AXES[@]}"; do
  points=()
  case "$axis" in
    jobs) for j in "${JOBS[@]}"; do points+=("$j 1024"); done ;;
    jobs-scale) for j in "${JOBS[@]}"; do points+=("$j 100000"); done ;;
    gpus) for g in "${GPUS[@]}"; do points+=("1000000 $g"); done ;;
    gpus-100k) for g in "${GPUS[@]}"; do points+=("100000 $g"); done ;;
  esac
  for policy in "${POLICIES[@]}"; do
    sweep "$axis" "$policy" "${points[@]}"
  done
done
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')"
