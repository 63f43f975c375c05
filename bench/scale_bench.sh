#!/usr/bin/env bash
# The scale cases of bench/README.md ("A year of a hyperscale cluster"), each a `clustersim run`
# end to end (parse, simulate, write SQLite) under /usr/bin/time -v: wall seconds, user seconds,
# peak RSS. One line per run goes to RESULTS_DIR/scale.tsv (appended) and to the screen.
#
#   bench/scale_bench.sh [--rounds N] CASE...
#
# Cases:
#   generate   `trace generate` of the 10,000,000-job trace (load 0.75 on 100,000 GPUs)
#   10m        fcfs and easy (first-fit) on it, 12,500 x 8 A100 = 100,000 GPUs
#   deep       the backfilling policies (easy, conservative, fair-share backfill=easy, priority
#              backfill=easy, and conservative with bf_max_job_test=100 and bf_interval=30;
#              first-fit) on deep queues: the CEA-Curie log on 1,024 x 64 (the log
#              is not in the repository: CURIE_LOG=path, from the Parallel Workloads Archive) and
#              500,000 synthetic jobs at load 1.1 with modal wall times on 1,024 x 8
#   openb20    every policy (`clustersim list policies`) x {first-fit, best-fit, frag-aware} on
#              openb's default pod list inflated to 20x (`--inflate 20`, seed 42: one arrival a
#              second, each pod for its own recorded duration) on its node list's 1,213 nodes
#              (`trace cluster-from`), CPUs and memory enforced
#   priority_philly  priority with every option on the Philly trace (82,247 jobs, given classes
#              0-3 with weights 50/30/15/5, Python random.seed(11)) on 56 x 8 A100: the ten
#              quotas of docs/priority.md with min_slice, max_wait, guaranteed, exclusive and node
#              failures with checkpoints, within=fcfs and within=las; and backfill=easy (which
#              excludes quota) with within=fair-share by=vc and the same other options; then the
#              within=fcfs quota run and the backfill=easy run with max_job_test 500, 100 and 50
# Environment: BUILD_DIR (default build), RESULTS_DIR (default $BUILD_DIR/bench-results/scale),
# DATA_DIR (traces, default $BUILD_DIR/bench-data), CURIE_LOG, TIMEOUT (seconds per run, default
# 600: a run still going then is ended and reported as over the limit), POLICIES (openb20's
# policies, space-separated; default every registered one).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
CLI="$BUILD_DIR/cli/clustersim"
RESULTS_DIR="${RESULTS_DIR:-$BUILD_DIR/bench-results/scale}"
DATA_DIR="${DATA_DIR:-$BUILD_DIR/bench-data}"
ROUNDS=1
CASES=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    generate|10m|deep|openb20|priority_philly) CASES+=("$1"); shift ;;
    *) echo "scale_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$RESULTS_DIR" "$DATA_DIR"
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
TSV="$RESULTS_DIR/scale.tsv"
[[ -f "$TSV" ]] || printf 'case\tround\twall_s\tuser_s\tpeak_rss_mb\tjobs\tgpus\tfingerprint\tdate\tcompleted\trejected\n' >"$TSV"

cluster() {  # NODES GPUS_PER_NODE -> path
  local path="$SCRATCH/cluster_$1x$2.json"
  echo "{\"nodes\":[{\"count\":$1,\"gpu_type\":\"A100-80GB\",\"gpus_per_node\":$2}]}" >"$path"
  echo "$path"
}
trace() {  # JOBS GPUS LOAD [EXTRA...] -> path (generated once)
  local jobs=$1 gpus=$2 load=$3
  shift 3
  local suffix=""
  [[ $# -gt 0 ]] && suffix="_$(echo "$*" | tr -c 'a-z0-9' '_')"
  local path="$DATA_DIR/synthetic_${jobs}jobs_${gpus}gpus_load${load}_seed42${suffix}.csv"
  [[ -f "$path" ]] || "$CLI" trace generate --jobs "$jobs" --gpus "$gpus" --load "$load" \
    --seed 42 "$@" --out "$path" >&2
  echo "$path"
}
# One timed run: NAME GPUS RUN-ARGS...
timed() {
  local name=$1 gpus=$2
  shift 2
  local round db log
  for ((round = 1; round <= ROUNDS; round++)); do
    db="$SCRATCH/out.sqlite"
    log="$RESULTS_DIR/${name//[^A-Za-z0-9_.-]/_}.r$round"
    rm -f "$db"
    local start="${EPOCHREALTIME/[.,]/}"
    /usr/bin/time -v -o "$log.time" timeout "${TIMEOUT:-600}" "$CLI" run "$@" --out "$db" \
      --no-progress >"$log.log" 2>&1 ||
      { echo "$name: failed or over ${TIMEOUT:-600} s (see $log.log)" >&2; continue; }
    local end="${EPOCHREALTIME/[.,]/}"
    rm -f "$db"
    local wall user rss jobs fp completed rejected
    wall=$(python3 -c "print(f'{($end - $start) / 1e6:.2f}')")
    user=$(awk -F': ' '/User time/ {print $2}' "$log.time")
    rss=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$log.time")
    jobs=$(awk '/^  jobs / {print $3 + $5 + $7 + $9}' "$log.log")
    fp=$(awk '/fingerprint/ {print $2}' "$log.log")
    completed=$(awk '/^  jobs / {print $3}' "$log.log")
    rejected=$(awk '/^  jobs / {print $5}' "$log.log")
    printf '%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$round" "$wall" "$user" "$rss" \
      "$jobs" "$gpus" "$fp" "$(date -u '+%Y-%m-%d %H:%M')" "$completed" "$rejected" | tee -a "$TSV"
  done
}

for case in "${CASES[@]}"; do
  case "$case" in
    generate)
      for ((round = 1; round <= ROUNDS; round++)); do
        out="$SCRATCH/generated.csv"
        start="${EPOCHREALTIME/[.,]/}"
        "$CLI" trace generate --jobs 10000000 --gpus 100000 --load 0.75 --seed 42 --out "$out" >/dev/null
        end="${EPOCHREALTIME/[.,]/}"
        rm -f "$out"
        printf 'generate_10m\t%d\t%s\t\t\t10000000\t100000\t\t%s\n' "$round" \
          "$(python3 -c "print(f'{($end - $start) / 1e6:.2f}')")" "$(date -u '+%Y-%m-%d %H:%M')" |
          tee -a "$TSV"
      done
      ;;
    10m)
      t=$(trace 10000000 100000 0.75)
      c=$(cluster 12500 8)
      for policy in fcfs easy; do
        timed "10m_$policy" 100000 --trace "$t" --cluster "$c" --placement first-fit \
          --runtime-model trace --policy "$policy"
      done
      ;;
    deep)
      synthetic=$(trace 500000 8192 1.1 --walltimes modal)
      c8=$(cluster 1024 8)
      c64=$(cluster 1024 64)
      for policy in easy conservative fair-share:backfill=easy priority:backfill=easy; do
        name=${policy%%:*}
        args=(--policy "$name")
        [[ $policy == *:* ]] && { args+=(--param "${policy#*:}"); name+="_backfill"; }
        timed "deep_synthetic_$name" 8192 --trace "$synthetic" --cluster "$c8" \
          --placement first-fit --runtime-model trace "${args[@]}"
        if [[ -n "${CURIE_LOG:-}" ]]; then
          timed "deep_curie_$name" 65536 --trace "$CURIE_LOG" --cluster "$c64" \
            --placement first-fit --runtime-model trace "${args[@]}"
        fi
      done
      # conservative with Slurm's caps (docs/backfilling.md#deep-queues-bf_max_job_test): a
      # different schedule from the reference rule's, which is quadratic in the queue's depth.
      capped=(--policy conservative --param bf_max_job_test=100 --param bf_interval=30)
      timed deep_synthetic_conservative_capped 8192 --trace "$synthetic" --cluster "$c8" \
        --placement first-fit --runtime-model trace "${capped[@]}"
      if [[ -n "${CURIE_LOG:-}" ]]; then
        timed deep_curie_conservative_capped 65536 --trace "$CURIE_LOG" --cluster "$c64" \
          --placement first-fit --runtime-model trace "${capped[@]}"
      fi
      ;;
    openb20)
      pods="$ROOT/traces/alibaba_gpu_v2023/openb_pod_list_default.csv"
      openb="$SCRATCH/openb.json"
      "$CLI" trace cluster-from "$ROOT/traces/alibaba_gpu_v2023/openb_node_list_gpu_node.csv" \
        --map-gpu G2=A100-40GB,G3=V100-32GB --out "$openb" >/dev/null
      for policy in ${POLICIES:-$("$CLI" list policies | awk '{print $1}')}; do
        for placement in first-fit best-fit frag-aware; do
          timed "openb20_${policy}_$placement" 6212 --trace "$pods" --cluster "$openb" \
            --inflate 20 --seed 42 --placement "$placement" --runtime-model trace --policy "$policy"
        done
      done
      ;;
    priority_philly)
      classed="$DATA_DIR/pollux_philly_classes_seed11.csv"
      if [[ ! -f "$classed" ]]; then
        "$CLI" trace convert "$ROOT/traces/philly/pollux_philly.csv" --to native \
          --out "$SCRATCH/philly.csv" >/dev/null
        /usr/bin/python3 "$ROOT/scripts/philly_classes.py" "$SCRATCH/philly.csv" "$classed"
      fi
      c=$(cluster 56 8)
      quota=ee9e8c:120,7f04ca:72,b436b2:56,6214e9:48,6c71a0:40,2869ce:40,0e4a51:32,103959:16,11cb48:16,e13805:8
      common=(--trace "$classed" --cluster "$c" --placement first-fit --runtime-model trace
        --policy priority --preemption-cost 60 --node-mtbf 500h --mttr 4h --checkpoint-interval 1h
        --param min_slice=3600 --param max_wait=86400 --param guaranteed=3 --param exclusive=3)
      timed priority_philly_quota 448 "${common[@]}" --param "quota=$quota"
      timed priority_philly_quota_las 448 "${common[@]}" --param "quota=$quota" --param within=las
      timed priority_philly_backfill_fair_share 448 "${common[@]}" --param backfill=easy \
        --param within=fair-share --param by=vc
      for cap in 500 100 50; do
        timed "priority_philly_quota_max_job_test_$cap" 448 "${common[@]}" --param "quota=$quota" \
          --param "max_job_test=$cap"
        timed "priority_philly_backfill_fair_share_max_job_test_$cap" 448 "${common[@]}" \
          --param backfill=easy --param within=fair-share --param by=vc --param "max_job_test=$cap"
      done
      ;;
  esac
done
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')"
