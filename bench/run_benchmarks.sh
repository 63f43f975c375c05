#!/usr/bin/env bash
# Builds clustersim and the benchmarks (Release) and measures the targets of bench/README.md:
#   1. every end_to_end_bench case, one process per case so each peak RSS is the case's own;
#   2. `clustersim run` end to end under /usr/bin/time -v (wall seconds, max RSS), on the same
#      synthetic traces and clusters.
# Then prints a results table (Markdown) and the machine it ran on. Run it on an idle machine:
# the cases run one after another, never in parallel. Each case runs --repeats times (default 5),
# round after round (every case once, then again), so that a slow spell of the machine touches
# every case alike; the table gives the median wall time, the range and the largest peak RSS.
#
# Usage: bench/run_benchmarks.sh [--jobs N] [--repeats N] [--skip-build]
# Environment: BUILD_DIR (default <repo>/build), CMAKE_ARGS (extra configure flags, e.g.
# -DCLUSTERSIM_BUILD_TESTS=OFF for a separate build folder), RESULTS_DIR (default
# $BUILD_DIR/bench-results).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
RESULTS_DIR="${RESULTS_DIR:-$BUILD_DIR/bench-results}"
DATA_DIR="$BUILD_DIR/bench-data"  # shared with end_to_end_bench's trace cache
JOBS=1000000
REPEATS=5
SKIP_BUILD=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --jobs) JOBS="$2"; shift 2 ;;
    --repeats) REPEATS="$2"; shift 2 ;;
    --skip-build) SKIP_BUILD=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "run_benchmarks.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if ! [[ "$REPEATS" =~ ^[1-9][0-9]*$ ]]; then
  echo "run_benchmarks.sh: --repeats: expected a whole number >= 1, got '$REPEATS'" >&2
  exit 2
fi

if [[ $SKIP_BUILD == 0 ]]; then
  # shellcheck disable=SC2086
  cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target clustersim end_to_end_bench
fi

BENCH="$BUILD_DIR/bench/end_to_end_bench"
GENERATOR=("$BUILD_DIR/cli/clustersim" trace generate)
CLI="$BUILD_DIR/cli/clustersim"
mkdir -p "$RESULTS_DIR" "$DATA_DIR"
# This run's results only (a run with more repeats before would leave files behind).
rm -f "$RESULTS_DIR"/{EndToEnd,EngineOnly,Phases}_*.json "$RESULTS_DIR"/{cli,read,philly}_*
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT

# The traces the benchmark would generate (same generator, same names), made up front so no
# case pays for generation.
trace_for() {  # GPUS -> path
  local path="$DATA_DIR/synthetic_${JOBS}jobs_$1gpus_load0.9_seed42.csv"
  [[ -f "$path" ]] || "${GENERATOR[@]}" --jobs "$JOBS" --gpus "$1" --load 0.9 --seed 42 --out "$path" >&2
  echo "$path"
}
cluster_for() {  # NODES -> path
  local path="$SCRATCH/cluster_$1x8.json"
  echo "{\"nodes\":[{\"count\":$1,\"gpu_type\":\"A100-80GB\",\"gpus_per_node\":8}]}" >"$path"
  echo "$path"
}
TRACE_8K="$(trace_for 8192)"
TRACE_100K="$(trace_for 100000)"
CLUSTER_1024="$(cluster_for 1024)"
CLUSTER_12500="$(cluster_for 12500)"
CLUSTER_4="$(cluster_for 4)"
# The long queue: 100,000 jobs at offered load 5 on a 32-GPU pool (4 x 8), mean queue about
# 40,800 jobs: the heavily loaded case compared with other simulators (bench/README.md).
TRACE_QUEUE="$DATA_DIR/synthetic_100000jobs_32gpus_load5_seed42.csv"
[[ -f "$TRACE_QUEUE" ]] ||
  "${GENERATOR[@]}" --jobs 100000 --gpus 32 --load 5 --seed 42 --out "$TRACE_QUEUE" >&2
# A year under LLM-scale failures (docs/reliability.md): 850,000 jobs of 30-day mean length at
# load 0.9 on 100,000 GPUs (a span of 369 days), on 12,500 H100 nodes plus 64 hot spares.
TRACE_YEAR="$DATA_DIR/synthetic_850000jobs_100000gpus_load0.9_mean30d_seed42.csv"
[[ -f "$TRACE_YEAR" ]] || "${GENERATOR[@]}" --jobs 850000 --gpus 100000 --load 0.9 \
  --mean-duration 30d --seed 42 --out "$TRACE_YEAR" >&2
CLUSTER_YEAR="$SCRATCH/cluster_12500x8_h100_spares.json"
echo '{"nodes":[{"count":12500,"gpu_type":"H100-80GB","gpus_per_node":8,"spares":64,
  "swap_seconds":300}],"network":{"nodes_per_rack":2}}' >"$CLUSTER_YEAR"

export CLUSTERSIM_BENCH_DATA="$DATA_DIR" CLUSTERSIM_BENCH_JOBS="$JOBS"
bench_run() {  # CASE ROUND
  local out="$RESULTS_DIR/${1//\//_}.r$2.json"
  "$BENCH" --benchmark_filter="^$1/" --benchmark_out="$out" --benchmark_out_format=json \
    2>&1 | grep -E "^(EndToEnd|EngineOnly|Phases)/" || true
}

cli_run() {  # NAME ROUND TRACE CLUSTER PLACEMENT [RUN OPTIONS...]
  local name="$1" round="$2" trace="$3" cluster="$4" placement="$5"
  shift 5
  local db="$SCRATCH/$name.sqlite" stem="$RESULTS_DIR/cli_$name.r$round"
  rm -f "$db"
  # Wall time in microseconds around /usr/bin/time (whose own clock shows hundredths);
  # EPOCHREALTIME without its decimal separator (a comma in some locales).
  local start="${EPOCHREALTIME/[.,]/}"
  /usr/bin/time -v -o "$stem.time" "$CLI" run --trace "$trace" --cluster "$cluster" \
    --placement "$placement" --runtime-model trace --out "$db" --no-progress "$@" >"$stem.log"
  local end="${EPOCHREALTIME/[.,]/}"
  echo "$((end - start))" >"$stem.wall_us"
  rm -f "$db"
  echo "cli $name (round $round): $(((end - start) / 1000)) ms," \
    "$(grep -E 'Maximum resident' "$stem.time" | tr -s ' \t' ' ')"
}

for ((round = 1; round <= REPEATS; round++)); do
  # The _no_wait_reasons cases beside their twins: the cost of wait reasons.
  for case in EndToEnd/fcfs_first_fit_1024x8 EndToEnd/fcfs_first_fit_100k \
              EndToEnd/fcfs_pool_1024x8 EngineOnly/fcfs_first_fit_1024x8 \
              EngineOnly/fcfs_first_fit_1024x8_no_wait_reasons \
              EngineOnly/fcfs_first_fit_1024x8_overload \
              EngineOnly/fcfs_first_fit_1024x8_overload_no_wait_reasons \
              EngineOnly/easy_first_fit_1024x8_overload \
              EngineOnly/easy_first_fit_1024x8_overload_no_wait_reasons \
              Phases/fcfs_first_fit_1024x8 Phases/fcfs_first_fit_100k; do
    bench_run "$case" "$round"
  done
  cli_run fcfs_first_fit_1024x8 "$round" "$TRACE_8K" "$CLUSTER_1024" first-fit
  cli_run fcfs_first_fit_100k "$round" "$TRACE_100K" "$CLUSTER_12500" first-fit
  cli_run fcfs_pool_1024x8 "$round" "$TRACE_8K" "$CLUSTER_1024" pool
  cli_run fcfs_pool_long_queue_32 "$round" "$TRACE_QUEUE" "$CLUSTER_4" pool
  # Failures at scale (issue 7): node and GPU failures with checkpoints on 100,000 GPUs.
  cli_run fcfs_failures_100k "$round" "$TRACE_100K" "$CLUSTER_12500" first-fit --node-mtbf 200 \
    --gpu-mtbf 2000 --mttr 4 --checkpoint-interval 3600 --checkpoint-cost 30 --restore-cost 60
  # A year of Llama 3's failure rates on 100,000 GPUs (issue 38: under a minute).
  cli_run fleet_year_100k "$round" "$TRACE_YEAR" "$CLUSTER_YEAR" first-fit --failure-model fleet \
    --checkpoint-policy daly --checkpoint-cost 30 --restore-cost 60 --stop-time 365d
done

# Reading with filters applied while reading (job_sink.h): the whole file, then the first 1,000
# jobs and a one-hour window; peak RSS should follow the kept jobs, not the file.
stats_run() {  # NAME ARGS...
  local name="$1"; shift
  /usr/bin/time -v -o "$RESULTS_DIR/read_$name.time" "$CLI" trace stats "$TRACE_8K" "$@" >/dev/null
  echo "read $name: $(grep -E 'Elapsed|Maximum resident' "$RESULTS_DIR/read_$name.time" | tr -s ' \t' ' ')"
}
stats_run all
stats_run first_1000 --first 1000
stats_run window_1h --window 0:3600

# Model-aware runs on the 82,248-job Philly trace (issue 5; bench/README.md#targets: cosched end to
# end within 60 s): models assigned, the default mixed cluster, each policy with the SQLite output.
philly_run() {  # POLICY
  local policy="$1" db="$SCRATCH/philly_$1.sqlite"
  /usr/bin/time -v -o "$RESULTS_DIR/philly_$policy.time" "$CLI" run \
    --trace "$ROOT/traces/philly/pollux_philly.csv" --policy "$policy" --assign-models \
    --out "$db" --no-progress >"$RESULTS_DIR/philly_$policy.log"
  rm -f "$db"
  echo "philly $policy (82,248 jobs, --assign-models, default cluster):" \
    "$(grep -E 'Elapsed|Maximum resident' "$RESULTS_DIR/philly_$policy.time" | tr -s ' \t' ' ')"
}
for policy in fcfs easy cosched; do philly_run "$policy"; done

echo
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
  "$(awk '/MemTotal/ {printf "%.1f GiB RAM", $2 / 1048576}' /proc/meminfo)," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
python3 - "$RESULTS_DIR" "$JOBS" <<'PY'
import json, os, re, sys

results, jobs = sys.argv[1], int(sys.argv[2])
# Targets of bench/README.md (1,000,000 jobs): (max wall s, max RSS MB, min events/s).
targets = {
    "EndToEnd/fcfs_first_fit_1024x8": (2, 400, None),
    "EndToEnd/fcfs_first_fit_100k": (3, 400, None),
    "EngineOnly/fcfs_first_fit_1024x8": (None, None, 5e6),
    "cli fcfs_first_fit_1024x8": (2, 400, None),
    "cli fcfs_first_fit_100k": (3, 400, None),
    "cli fcfs_pool_long_queue_32": (0.22, None, None),
    "cli fleet_year_100k": (60, None, None),
}
gpus = {"1024x8": 8192, "100k": 100000, "overload": 8192, "32": 32}

def gpus_of(name):  # the cluster named at the end of the case (without wait reasons: the same)
    return gpus[name.replace("_no_wait_reasons", "").rsplit("_", 1)[1]]
job_counts = {"cli fcfs_pool_long_queue_32": 100000,  # the other cases: --jobs
              "cli fleet_year_100k": 850000}

def verdict(name, wall, rss, events_per_s):
    t = targets.get(name)
    if t is None or (jobs != 1000000 and name not in job_counts):
        return "-", "-"
    parts, ok = [], True
    if t[0] is not None:
        parts.append(f"<= {t[0]} s"); ok &= wall <= t[0]
    if t[1] is not None:
        parts.append(f"<= {t[1]} MB"); ok &= rss <= t[1]
    if t[2] is not None:
        parts.append(f">= {t[2] / 1e6:g}M events/s"); ok &= events_per_s >= t[2]
    return ", ".join(parts), "pass" if ok else "FAIL"

# Every run of every case: name -> [(wall s, jobs, GPUs, events, peak RSS MB, benchmark or None)].
runs = {}
for file in sorted(os.listdir(results)):
    path = os.path.join(results, file)
    if file.endswith(".json"):
        for b in json.load(open(path))["benchmarks"]:
            name = "/".join(b["name"].split("/")[:2])
            runs.setdefault(name, []).append(
                (b["wall_s"], b["jobs"], gpus_of(name), b["events"],
                 b["peak_rss_mb"], b))
    elif file.startswith("cli_") and file.endswith(".time"):
        stem = path[:-5]
        case = re.sub(r"\.r\d+$", "", file[4:-5])
        wall = int(open(stem + ".wall_us").read()) / 1e6
        text = open(path).read()
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024
        m = re.search(r"events (\d+)\s+wall", open(stem + ".log").read())
        events = int(m.group(1)) if m else float("nan")
        n = job_counts.get(f"cli {case}", jobs)
        runs.setdefault(f"cli {case}", []).append(
            (wall, n, gpus_of(case), events, rss, None))

def median_run(case_runs):  # the run of the median wall time (the lower middle one if even)
    ordered = sorted(case_runs, key=lambda r: r[0])
    return ordered[(len(ordered) - 1) // 2]

order = ["EndToEnd", "cli", "EngineOnly", "Phases"]
names = sorted(runs, key=lambda n: (order.index(n.split("/")[0].split(" ")[0]), n))
print("| case | jobs | GPUs | runs | wall s, median | wall s, range | jobs/s | events/s | "
      "peak RSS MB, largest | target | result |")
print("|---|---:|---:|---:|---:|---|---:|---:|---:|---|---|")
for name in names:
    case_runs = runs[name]
    wall, n, g, events, _, _ = median_run(case_runs)
    walls = [r[0] for r in case_runs]
    rss = max(r[4] for r in case_runs)
    target, ok = verdict(name, wall, rss, events / wall)
    print(f"| {name} | {n:,.0f} | {g:,} | {len(case_runs)} | {wall:.3f} | "
          f"{min(walls):.3f}-{max(walls):.3f} | {n / wall:,.0f} | {events / wall:,.0f} | "
          f"{rss:,.0f} | {target} | {ok} |")
# Wait reasons (docs/metrics.md#wait-reasons): each case against its twin without them.
for name in names:
    twin = name + "_no_wait_reasons"
    if twin in runs:
        on, off = median_run(runs[name])[0], median_run(runs[twin])[0]
        print(f"\nwait reasons on {name.split('/', 1)[1]}: {on:.3f} s against {off:.3f} s "
              f"without ({100 * (on / off - 1):+.1f} %, medians of {len(runs[name])} runs)")
for name in names:
    if name.startswith("Phases/"):
        b = median_run(runs[name])[5]
        phases = ["setup_s", "parse_s", "construct_s", "run_s", "summary_s", "sqlite_s",
                  "teardown_s", "cpu_s", "main_cpu_s"]
        print("\nphases of " + name.split("/")[1] + ", its median run (s): " +
              ", ".join(f"{p[:-2]} {b[p]:.3f}" for p in phases) + f"; total {b['wall_s']:.3f}")
PY
