#!/usr/bin/env bash
# A sweep of 1,000 runs through Slurm job arrays (bench/README.md, "1,000 runs through Slurm"):
# 10 policies x 10 load factors x 10 cluster sizes on the bundled Philly window, on a private
# single-host Slurm cluster (tests/slurm/private_slurm.sh: Debian's slurm-wlm and munge).
#
#   1. locally, in one process: `clustersim sweep SPEC --jobs $(nproc)`, then merge (reference);
#   2. through Slurm, uninterrupted: scripts/slurm/submit.sh SPEC OUT_A TASKS (array + merge);
#   3. through Slurm, cancelled: the same into OUT_B, `scancel` of the array once a third of the
#      runs are done (the merge job is cancelled with it), then submit.sh again (complete runs are
#      skipped);
# then checks that both merged databases hold the rows of the local sweep (every jobs,
# timeseries and summary row, keyed by the run's identity) and prints the wall times and the
# overhead per run of going through Slurm.
#
# Usage: bench/slurm_sweep_bench.sh [--tasks N] [--policies "p1 p2 ..."]
# Environment: CLUSTERSIM (default build/cli/clustersim). Run it on an otherwise idle machine.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLUSTERSIM="$(realpath "${CLUSTERSIM:-$ROOT/build/cli/clustersim}")"
TASKS=10
POLICIES="fcfs easy conservative sjf srtf las fair-share priority least-loaded gavel"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tasks) TASKS="$2"; shift 2 ;;
    --policies) POLICIES="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "slurm_sweep_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for tool in munged slurmctld slurmd sbatch squeue scancel sqlite3 python3; do
  command -v "$tool" >/dev/null || { echo "slurm_sweep_bench.sh: $tool not found" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/clustersim_sweep_bench_XXXXXX")
mkdir -p "$work/slurm"
# shellcheck source=tests/slurm/private_slurm.sh
source "$ROOT/tests/slurm/private_slurm.sh"
cleanup() {
  private_slurm_stop
  rm -rf "$work"
}
trap cleanup EXIT
now() { echo "${EPOCHREALTIME/[.,]/}"; }  # microseconds
seconds_since() { python3 -c "print(f'{($(now) - $1) / 1e6:.1f}')"; }

# The grid: clusters of 4 to 40 nodes x 8 A100-80GB, load factors 0.5 to 2.75.
cp "$ROOT/traces/philly_default.csv" "$work/"
clusters=""
for nodes in 4 8 12 16 20 24 28 32 36 40; do
  echo "{\"nodes\":[{\"count\":$nodes,\"gpu_type\":\"A100-80GB\",\"gpus_per_node\":8}]}" \
    >"$work/cluster_$nodes.json"
  clusters+="${clusters:+, }\"cluster_$nodes.json\""
done
policies=""
for p in $POLICIES; do policies+="${policies:+, }\"$p\""; done
cat >"$work/spec.json" <<EOF
{"traces": ["philly_default.csv"], "clusters": [$clusters], "policies": [$policies],
 "load_factor": [0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75],
 "runtime_model": "trace"}
EOF
runs=$("$CLUSTERSIM" sweep "$work/spec.json" --out "$work/dry" --dry-run | wc -l)
echo "spec: $runs runs ($(wc -w <<<"$POLICIES") policies x 10 load factors x 10 clusters)"

# 1. Locally, one process.
start=$(now)
"$CLUSTERSIM" sweep "$work/spec.json" --out "$work/local/runs" --jobs "$(nproc)" >"$work/local.log"
local_seconds=$(seconds_since "$start")
start=$(now)
"$CLUSTERSIM" merge "$work/local.sqlite" "$work/local/runs" >/dev/null
local_merge_seconds=$(seconds_since "$start")
echo "local sweep: ${local_seconds} s, merge ${local_merge_seconds} s"

private_slurm_start "$work/slurm" || { private_slurm_logs >&2; exit 1; }
wait_gone() {
  while [ -n "$(squeue -h -j "$1" 2>/dev/null)" ]; do sleep 0.5; done
}
submit() {  # OUT -> "array merge"
  CLUSTERSIM="$CLUSTERSIM" "$ROOT/scripts/slurm/submit.sh" "$work/spec.json" "$1" "$TASKS" |
    tail -n 1
}

# 2. Through Slurm, uninterrupted.
start=$(now)
read -r array merge < <(submit "$work/out_a")
wait_gone "$array,$merge"
slurm_seconds=$(seconds_since "$start")
[ -f "$work/out_a/merged.sqlite" ] || { echo "no merged database" >&2; exit 1; }
echo "Slurm sweep ($TASKS tasks + merge): ${slurm_seconds} s"

# 3. Cancelled after a third, submitted again.
start=$(now)
read -r array merge < <(submit "$work/out_b")
done_runs() { find "$work/out_b/runs" -name 'run-*.sqlite' 2>/dev/null | wc -l; }
until [ "$(done_runs)" -ge $((runs / 3)) ]; do sleep 0.2; done
scancel "$array"
wait_gone "$array,$merge"
cancelled_at=$(done_runs)
[ ! -f "$work/out_b/merged.sqlite" ] || { echo "the merge ran after scancel" >&2; exit 1; }
read -r array merge < <(submit "$work/out_b")
wait_gone "$array,$merge"
resumed_seconds=$(seconds_since "$start")
skipped=$(cat "$work"/out_b/logs/sweep-"$array"_*.out | grep -o "[0-9]* already complete" |
          awk '{s += $1} END {print s + 0}')
echo "Slurm sweep cancelled at $cancelled_at runs done, resubmitted ($skipped skipped):" \
     "${resumed_seconds} s in all"

# Same rows as the local sweep, run by run.
q() { sqlite3 -batch -noheader "$1" "$2"; }
for merged in "$work/out_a/merged.sqlite" "$work/out_b/merged.sqlite"; do
  [ "$(q "$merged" "SELECT count(*) FROM runs WHERE status = 'complete'")" = "$runs" ] ||
    { echo "$merged: not $runs complete runs" >&2; exit 1; }
  for table in jobs timeseries summary; do
    cols=$(q "$merged" "SELECT group_concat('t.' || name) FROM pragma_table_info('$table')
                        WHERE name != 'run_id'")
    dump="SELECT r.cluster_sha256, r.policy, r.trace_filter, $cols
          FROM $table t JOIN runs r USING (run_id)"
    if ! cmp -s <(q "$merged" "$dump" | sort) <(q "$work/local.sqlite" "$dump" | sort); then
      echo "$merged: $table rows differ from the local sweep" >&2
      exit 1
    fi
  done
  echo "$merged: $runs runs, every jobs, timeseries and summary row equal to the local sweep"
done

python3 - "$runs" "$local_seconds" "$local_merge_seconds" "$slurm_seconds" <<'PY'
import sys
runs, local, merge, slurm = int(sys.argv[1]), *map(float, sys.argv[2:])
print(f"overhead of Slurm: {slurm - local - merge:.1f} s for {runs} runs, "
      f"{(slurm - local - merge) / runs * 1000:.0f} ms per run "
      f"(local sweep + merge {local + merge:.1f} s, Slurm {slurm:.1f} s)")
PY
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')"
