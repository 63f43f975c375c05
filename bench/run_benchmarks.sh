#!/usr/bin/env bash
# Builds clustersim and the benchmarks (Release) and measures the targets of bench/README.md:
#   1. every end_to_end_bench case, one process per case so each peak RSS is the case's own;
#   2. `clustersim run` end to end under /usr/bin/time -v (wall seconds, max RSS), on the same
#      synthetic traces and clusters.
# Then prints a results table (Markdown) and the machine it ran on. Run it on an idle machine:
# the cases run one after another, never in parallel.
#
# Usage: bench/run_benchmarks.sh [--jobs N] [--skip-build]
# Environment: BUILD_DIR (default <repo>/build), CMAKE_ARGS (extra configure flags, e.g.
# -DCLUSTERSIM_BUILD_TESTS=OFF for a separate build folder), RESULTS_DIR (default
# $BUILD_DIR/bench-results).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
RESULTS_DIR="${RESULTS_DIR:-$BUILD_DIR/bench-results}"
DATA_DIR="$BUILD_DIR/bench-data"  # shared with end_to_end_bench's trace cache
JOBS=1000000
SKIP_BUILD=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --jobs) JOBS="$2"; shift 2 ;;
    --skip-build) SKIP_BUILD=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "run_benchmarks.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [[ $SKIP_BUILD == 0 ]]; then
  # shellcheck disable=SC2086
  cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target clustersim end_to_end_bench
fi

BENCH="$BUILD_DIR/bench/end_to_end_bench"
GENERATOR=("$BUILD_DIR/sim/cli/clustersim" trace generate)
CLI="$BUILD_DIR/sim/cli/clustersim"
mkdir -p "$RESULTS_DIR" "$DATA_DIR"
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

export CLUSTERSIM_BENCH_DATA="$DATA_DIR" CLUSTERSIM_BENCH_JOBS="$JOBS"
for case in EndToEnd/fcfs_first_fit_1024x8 EndToEnd/fcfs_first_fit_100k EndToEnd/fcfs_pool_1024x8 \
            EngineOnly/fcfs_first_fit_1024x8 EngineOnly/fcfs_first_fit_1024x8_overload \
            Phases/fcfs_first_fit_1024x8 Phases/fcfs_first_fit_100k; do
  out="$RESULTS_DIR/${case//\//_}.json"
  "$BENCH" --benchmark_filter="^$case/" --benchmark_out="$out" --benchmark_out_format=json \
    2>&1 | grep -E "^(EndToEnd|EngineOnly|Phases)/" || true
done

cli_run() {  # NAME TRACE CLUSTER PLACEMENT [RUN OPTIONS...]
  local name="$1" trace="$2" cluster="$3" placement="$4"
  shift 4
  local db="$SCRATCH/$name.sqlite"
  rm -f "$db"
  /usr/bin/time -v -o "$RESULTS_DIR/cli_$name.time" "$CLI" run --trace "$trace" --cluster "$cluster" \
    --placement "$placement" --runtime-model trace --out "$db" --no-progress "$@" \
    >"$RESULTS_DIR/cli_$name.log"
  rm -f "$db"
  echo "cli $name: $(grep -E 'Elapsed|Maximum resident' "$RESULTS_DIR/cli_$name.time" | tr -s ' \t' ' ')"
}
cli_run fcfs_first_fit_1024x8 "$TRACE_8K" "$CLUSTER_1024" first-fit
cli_run fcfs_first_fit_100k "$TRACE_100K" "$CLUSTER_12500" first-fit
cli_run fcfs_pool_1024x8 "$TRACE_8K" "$CLUSTER_1024" pool
cli_run fcfs_pool_long_queue_32 "$TRACE_QUEUE" "$CLUSTER_4" pool
# Failures at scale (issue 7): node and GPU failures with checkpoints on 100,000 GPUs.
cli_run fcfs_failures_100k "$TRACE_100K" "$CLUSTER_12500" first-fit --node-mtbf 200 \
  --gpu-mtbf 2000 --mttr 4 --checkpoint-interval 3600 --checkpoint-cost 30 --restore-cost 60

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
}
gpus = {"1024x8": 8192, "100k": 100000, "overload": 8192, "32": 32}
job_counts = {"cli fcfs_pool_long_queue_32": 100000}  # the other cases: --jobs

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

rows = []
for file in sorted(os.listdir(results)):
    path = os.path.join(results, file)
    if file.endswith(".json"):
        for b in json.load(open(path))["benchmarks"]:
            name = "/".join(b["name"].split("/")[:2])
            rows.append((name, b["jobs"], gpus[name.rsplit("_", 1)[1]], b["wall_s"],
                         b["jobs_per_s"], b["events_per_s"], b["peak_rss_mb"]))
    elif file.startswith("cli_") and file.endswith(".time"):
        case = file[4:-5]
        text = open(path).read()
        clock = re.search(r"Elapsed \(wall clock\) time.*: (.*)", text).group(1).split(":")
        wall = sum(float(x) * 60 ** i for i, x in enumerate(reversed(clock)))
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024
        log = open(os.path.join(results, f"cli_{case}.log")).read()
        m = re.search(r"events (\d+)\s+wall", log)
        events = int(m.group(1)) if m else float("nan")
        n = job_counts.get(f"cli {case}", jobs)
        rows.append((f"cli {case}", n, gpus[case.rsplit("_", 1)[1]], wall, n / wall,
                     events / wall, rss))
order = ["EndToEnd", "cli", "EngineOnly", "Phases"]
rows.sort(key=lambda r: (order.index(r[0].split("/")[0].split(" ")[0]), r[0]))
print("| case | jobs | GPUs | wall s | jobs/s | events/s | peak RSS MB | target | result |")
print("|---|---:|---:|---:|---:|---:|---:|---|---|")
for name, n, g, wall, jps, eps, rss in rows:
    target, ok = verdict(name, wall, rss, eps)
    print(f"| {name} | {n:,.0f} | {g:,} | {wall:.2f} | {jps:,.0f} | {eps:,.0f} | {rss:,.0f} | "
          f"{target} | {ok} |")
for file in sorted(os.listdir(results)):
    if file.startswith("Phases") and file.endswith(".json"):
        for b in json.load(open(os.path.join(results, file)))["benchmarks"]:
            phases = ["setup_s", "parse_s", "construct_s", "run_s", "summary_s", "sqlite_s",
                      "teardown_s", "cpu_s", "main_cpu_s"]
            print("\nphases of " + b["name"].split("/")[1] + " (s): " +
                  ", ".join(f"{p[:-2]} {b[p]:.3f}" for p in phases) + f"; total {b['wall_s']:.3f}")
PY
