#!/usr/bin/env bash
# A 1,000-run sweep through Slurm job arrays (bench/README.md, "A 1,000-run sweep through
# Slurm"): 10 policies x 10 load factors x 10 cluster sizes on the bundled Philly window
# (traces/philly_default.csv, 11,160 jobs), run on a private single-host Slurm on loopback
# (tests/slurm/private_slurm.sh, the one the slurm_sweep test starts). Three cases:
#
#   slurm    scripts/slurm/submit.sh with TASKS array tasks of CPUS_PER_TASK CPUs: wall seconds
#            from the submission until the merge job has written merged.sqlite
#   local    the same spec without Slurm: `clustersim sweep SPEC --jobs JOBS` plus
#            `clustersim merge`; overhead per run = (slurm wall - local wall) / runs
#   resume   submitted into a fresh OUTDIR, the array scancel'ed once CANCEL_AT of the runs are
#            complete, submit.sh again with the same OUTDIR (complete runs are skipped); its
#            merged.sqlite compared with the slurm case's, every table, row by row, every column
#            but the wall-clock ones (runs.created_at, runs.wall_seconds)
#
#   bench/slurm_sweep_bench.sh [--keep]
#
# One summary line per case goes to the screen and to RESULTS_DIR/slurm_sweep.tsv (appended).
# User CPU seconds: /usr/bin/time around each clustersim process (the Slurm cases' binary is a
# wrapper that records its own time; the cancelled array runs the plain binary).
# Environment: BUILD_DIR (default build), RESULTS_DIR (default
# $BUILD_DIR/bench-results/slurm_sweep), TASKS (array tasks, default 2), CPUS_PER_TASK (default 1),
# JOBS (local threads, default TASKS x CPUS_PER_TASK), CANCEL_AT (fraction of the runs complete at
# the scancel, default 0.33), POLICIES, LOADS, NODES (the grid: space-separated policies, load
# factors, nodes per GPU type; a smaller grid for a quick try), TIMEOUT (seconds per wait, default
# 1800), TMPDIR (the work folder, about 5 GB at its fullest: each run's database is about
# 2.2 MB). --keep leaves it in place.
# Needs Debian's slurm-wlm, munge and sqlite3 (scripts/install_deps.sh). Exit 1 if a sweep fails
# or the resumed sweep's rows differ from the uninterrupted one's.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="$(realpath -m "${BUILD_DIR:-$ROOT/build}")"
CLI="$BUILD_DIR/cli/clustersim"
RESULTS_DIR="${RESULTS_DIR:-$BUILD_DIR/bench-results/slurm_sweep}"
TASKS="${TASKS:-2}"
CPUS_PER_TASK="${CPUS_PER_TASK:-1}"
JOBS="${JOBS:-$((TASKS * CPUS_PER_TASK))}"
CANCEL_AT="${CANCEL_AT:-0.33}"
TIMEOUT="${TIMEOUT:-1800}"
KEEP=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "slurm_sweep_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for tool in munged slurmctld slurmd sbatch squeue sinfo scancel sqlite3 python3 /usr/bin/time; do
  command -v "$tool" >/dev/null 2>&1 ||
    { echo "slurm_sweep_bench.sh: $tool not found (scripts/install_deps.sh installs it)" >&2; exit 2; }
done
[[ -x "$CLI" ]] || { echo "slurm_sweep_bench.sh: build clustersim first ($CLI)" >&2; exit 2; }
mkdir -p "$RESULTS_DIR"
TSV="$RESULTS_DIR/slurm_sweep.tsv"
[[ -f "$TSV" ]] || printf 'case\truns\ttasks\twall_s\tuser_s\tsum_run_wall_s\toverhead_per_run_s\tdone_at_cancel\tredone\trows\tload1\tdate\tcommit\n' >"$TSV"
COMMIT="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/clustersim_sweep_bench_XXXXXX")"
mkdir -p "$WORK/slurm"
# shellcheck source=tests/slurm/private_slurm.sh
source "$ROOT/tests/slurm/private_slurm.sh"
cleanup() {
  private_slurm_stop
  if [[ $KEEP -eq 1 ]]; then echo "work folder kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
now() { echo "${EPOCHREALTIME/[.,]/}"; }  # microseconds
seconds_since() { python3 -c "print(f'{($(now) - $1) / 1e6:.2f}')"; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# --- the spec: 10 policies x 10 load factors x 10 cluster sizes = 1,000 runs ---------------------
# Policies that replay the 11,160-job window in well under a second at every load and size
# (conservative, gavel, multifactor and weighted take 2-110 s at load 2 on 80 GPUs: deep queues);
# sizes from 64 to 208 GPUs, half V100-32GB, half A100-80GB nodes of 8 GPUs; runtime model `trace`
# (durations as recorded); timeseries every hour (the databases' size: 2.2 MB a run).
SPEC_DIR="$WORK/spec"
mkdir -p "$SPEC_DIR"
POLICIES="${POLICIES:-fcfs easy sjf srtf las fair-share priority least-loaded edf cosched}"
LOADS="${LOADS:-0.5 0.75 1 1.25 1.5 1.75 2 2.25 2.5 2.75}"
NODES="${NODES:-4 5 6 7 8 9 10 11 12 13}"
clusters=()
for nodes in $NODES; do
  echo "{\"nodes\":[{\"count\":$nodes,\"gpu_type\":\"V100-32GB\",\"gpus_per_node\":8}," \
       "{\"count\":$nodes,\"gpu_type\":\"A100-80GB\",\"gpus_per_node\":8}]}" \
       >"$SPEC_DIR/cluster_${nodes}x2x8.json"
  clusters+=("\"cluster_${nodes}x2x8.json\"")
done
SPEC="$SPEC_DIR/sweep1000.json"
cat >"$SPEC" <<EOF
{"traces": ["$ROOT/traces/philly_default.csv"],
 "clusters": [$(IFS=,; echo "${clusters[*]}")],
 "policies": [$(read -ra p <<<"$POLICIES"; printf '"%s",' "${p[@]}" | sed 's/,$//')],
 "load_factor": [$(read -ra l <<<"$LOADS"; IFS=,; echo "${l[*]}")],
 "seeds": [0], "runtime_model": "trace", "interval": "1h"}
EOF
RUNS=$("$CLI" sweep "$SPEC" --out "$WORK/dry" --dry-run | wc -l)
expected=$(($(wc -w <<<"$POLICIES") * $(wc -w <<<"$LOADS") * $(wc -w <<<"$NODES")))
[[ $RUNS -eq $expected ]] || fail "the spec has $RUNS runs, not $expected"
rm -rf "$WORK/dry"

# The Slurm cases' binary: clustersim under /usr/bin/time, one line "wall user system" per process.
WRAPPER="$WORK/timed_clustersim"
printf '#!/bin/sh\nexec /usr/bin/time -a -o "%s/cpu_times.txt" -f "%%e %%U %%S" "%s" "$@"\n' \
  "$WORK" "$CLI" >"$WRAPPER"
chmod +x "$WRAPPER"
user_seconds() {  # sum of the user seconds the wrapper recorded since the last reset
  awk '{s += $2} END {printf "%.2f", s}' "$WORK/cpu_times.txt" 2>/dev/null || echo 0
}
sum_run_wall() {  # DB: the runs' own wall_seconds, summed
  sqlite3 "$1" "SELECT printf('%.2f', sum(wall_seconds)) FROM runs"
}
record() {  # CASE WALL USER SUM_RUN_WALL OVERHEAD DONE_AT_CANCEL REDONE ROWS
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$RUNS" "$TASKS" "$2" "$3" "$4" \
    "$5" "$6" "$7" "$8" "$(load1)" "$(date -u '+%Y-%m-%d %H:%M')" "$COMMIT" >>"$TSV"
}
check_ids() {  # ARRAY MERGE
  [[ "$1" =~ ^[0-9]+$ && "$2" =~ ^[0-9]+$ ]] || fail "submit.sh printed no job ids"
}
wait_gone() {  # JOB_IDS
  local since=$SECONDS
  while [[ -n "$(squeue -h -j "$1" 2>/dev/null)" ]]; do
    [[ $((SECONDS - since)) -le $TIMEOUT ]] || fail "jobs $1 not done after $TIMEOUT s"
    sleep 0.5
  done
}
submit() {  # BINARY OUTDIR -> "ARRAY MERGE"
  local out
  out=$(CLUSTERSIM="$1" CPUS_PER_TASK="$CPUS_PER_TASK" "$ROOT/scripts/slurm/submit.sh" "$SPEC" "$2" \
          "$TASKS") || fail "submit.sh failed: $out"
  tail -n 1 <<<"$out"
}
runs_done() { find "$1/runs" -name 'run-*.sqlite' 2>/dev/null | wc -l; }
# Every table of A and B row by row (in rowid order, so run ids and the order of rows count too),
# every column but the wall-clock ones; prints "identical (N rows)" or the tables that differ.
compare_dbs() {  # A B
  local a=$1 b=$2 table cols na nb total=0 differ=""
  local tables
  tables=$( (sqlite3 "$a" "SELECT name FROM sqlite_master WHERE type = 'table'"
             sqlite3 "$b" "SELECT name FROM sqlite_master WHERE type = 'table'") | sort -u)
  for table in $tables; do
    cols=$(sqlite3 "$a" "SELECT group_concat(name, ', ') FROM pragma_table_info('$table')
                         WHERE NOT ('$table' = 'runs' AND name IN ('created_at', 'wall_seconds'))")
    [[ -n "$cols" ]] || { differ+=" $table(missing)"; continue; }
    na=$(sqlite3 "$a" "SELECT count(*) FROM $table" 2>/dev/null || echo missing)
    nb=$(sqlite3 "$b" "SELECT count(*) FROM $table" 2>/dev/null || echo missing)
    if [[ "$na" != "$nb" ]]; then differ+=" $table($na/$nb rows)"; continue; fi
    # Both sides at once (the jobs table of 1,000 runs takes minutes).
    sqlite3 -csv "$a" "SELECT $cols FROM $table ORDER BY rowid" | sha256sum >"$WORK/hash_a" &
    sqlite3 -csv "$b" "SELECT $cols FROM $table ORDER BY rowid" | sha256sum >"$WORK/hash_b"
    wait $!
    cmp -s "$WORK/hash_a" "$WORK/hash_b" || differ+=" $table"
    total=$((total + na))
  done
  if [[ -z "$differ" ]]; then echo "identical ($total rows)"; else echo "DIFFERENT:$differ"; fi
}

# Submits the sweep into OUTDIR through the wrapper and waits for the array and the merge; sets
# ARRAY_ID, ARRAY_WALL (submit to the array's end), MERGED_WALL (submit to the merge's end) and
# SWEEP_USER (the user seconds the wrapper recorded).
sweep_to_merge() {  # OUTDIR
  local start merge
  rm -f "$WORK/cpu_times.txt"
  start=$(now)
  read -r ARRAY_ID merge <<<"$(submit "$WRAPPER" "$1")"
  check_ids "$ARRAY_ID" "$merge"
  wait_gone "$ARRAY_ID"
  ARRAY_WALL=$(seconds_since "$start")
  wait_gone "$merge"
  MERGED_WALL=$(seconds_since "$start")
  SWEEP_USER=$(user_seconds)
}

private_slurm_start "$WORK/slurm" || { private_slurm_logs >&2; fail "the private Slurm did not come up"; }
echo "private Slurm up: $(hostname -s), $(nproc) CPUs; $RUNS runs, $TASKS tasks x $CPUS_PER_TASK CPUs;" \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"

# --- slurm: uninterrupted ----------------------------------------------------------------------
sweep_to_merge "$WORK/full"
array_wall=$ARRAY_WALL slurm_wall=$MERGED_WALL slurm_user=$SWEEP_USER
[[ -f "$WORK/full/merged.sqlite" ]] || fail "the merge wrote no merged.sqlite (logs: $WORK/full/logs)"
complete=$(sqlite3 "$WORK/full/merged.sqlite" "SELECT count(*) FROM runs WHERE status = 'complete'")
[[ $complete -eq $RUNS ]] || fail "$complete of $RUNS runs complete in the merge"
slurm_runs=$(sum_run_wall "$WORK/full/merged.sqlite")
echo "slurm: $RUNS runs in $TASKS array tasks + merge: wall $slurm_wall s (submit to merged.sqlite;" \
     "array done after $array_wall s)," \
     "user $slurm_user s, runs' own wall $slurm_runs s; load $(load1)"
record slurm "$slurm_wall" "$slurm_user" "$slurm_runs" "" "" "" ""
rm -rf "$WORK/full/runs"  # the merge holds every row; the run databases are 2 GB

# --- local: the same spec without Slurm ---------------------------------------------------------
rm -f "$WORK/cpu_times.txt"
start=$(now)
"$WRAPPER" sweep "$SPEC" --out "$WORK/local/runs" --mkdir --jobs "$JOBS" --progress never \
  >"$WORK/local_sweep.log" 2>&1 || fail "the local sweep failed (see $WORK/local_sweep.log)"
sweep_wall=$(seconds_since "$start")
"$WRAPPER" merge "$WORK/local/merged.sqlite" "$WORK/local/runs" >/dev/null ||
  fail "the local merge failed"
local_wall=$(seconds_since "$start")
local_user=$(user_seconds)
local_runs=$(sum_run_wall "$WORK/local/merged.sqlite")
overhead=$(python3 -c "print(f'{($slurm_wall - $local_wall) / $RUNS:.4f}')")
local_same=$(compare_dbs "$WORK/full/merged.sqlite" "$WORK/local/merged.sqlite")
echo "local: $RUNS runs on $JOBS threads + merge: wall $local_wall s (sweep $sweep_wall s)," \
     "user $local_user s, runs' own wall $local_runs s; Slurm overhead per run $overhead s;" \
     "rows vs the Slurm merge: $local_same; load $(load1)"
record local "$local_wall" "$local_user" "$local_runs" "$overhead" "" "" "$local_same"
rm -rf "$WORK/local"

# --- resume: scancel'ed after CANCEL_AT of the runs, submitted again -----------------------------
cancel_at=$(python3 -c "print(int($RUNS * $CANCEL_AT))")
start=$(now)
read -r array merge <<<"$(submit "$CLI" "$WORK/resumed")"
check_ids "$array" "$merge"
since=$SECONDS
until [[ $(runs_done "$WORK/resumed") -ge $cancel_at ]]; do
  [[ $((SECONDS - since)) -le $TIMEOUT ]] || fail "$cancel_at runs not done after $TIMEOUT s"
  [[ -n "$(squeue -h -j "$array" 2>/dev/null)" ]] || fail "the array ended before the scancel"
  sleep 0.2
done
scancel "$array"
wait_gone "$array,$merge"
cancel_wall=$(seconds_since "$start")
done_at_cancel=$(runs_done "$WORK/resumed")
leftovers=$(find "$WORK/resumed/runs" -name '*.tmp-*' -o -name '*-journal' | wc -l)
incomplete=0
for db in "$WORK"/resumed/runs/run-*.sqlite; do
  [[ "$(sqlite3 "$db" "SELECT status FROM runs")" == complete ]] || incomplete=$((incomplete + 1))
done
[[ ! -f "$WORK/resumed/merged.sqlite" ]] || fail "the merge ran although the array was cancelled"
echo "resume: scancel after $cancel_wall s: $done_at_cancel run databases ($incomplete not complete)," \
     "$leftovers temporary files left"
sweep_to_merge "$WORK/resumed"
array=$ARRAY_ID resume_array_wall=$ARRAY_WALL resume_wall=$MERGED_WALL resume_user=$SWEEP_USER
[[ -f "$WORK/resumed/merged.sqlite" ]] || fail "the resumed sweep's merge wrote nothing"
# Each task's closing line: "sweep: shard K/N: R runs: A complete now, B already complete, ...".
closing=$(cat "$WORK"/resumed/logs/sweep-"${array}"_*.out | grep "^sweep: shard ")
[[ $(wc -l <<<"$closing") -eq $TASKS ]] || fail "not every resumed task printed its closing line"
skipped=$(grep -o "[0-9]* already complete" <<<"$closing" | awk '{s += $1} END {print s + 0}')
redone=$(grep -o "[0-9]* complete now" <<<"$closing" | awk '{s += $1} END {print s + 0}')
same=$(compare_dbs "$WORK/full/merged.sqlite" "$WORK/resumed/merged.sqlite")
echo "resume: resubmitted: $skipped runs skipped, $redone run, wall $resume_wall s (array $resume_array_wall s; user" \
     "$resume_user s) to merged.sqlite; rows vs the uninterrupted sweep: $same; load $(load1)"
record resume "$cancel_wall+$resume_wall" "$resume_user" "" "" "$done_at_cancel" "$redone" "$same"
[[ $skipped -eq $done_at_cancel && $((skipped + redone)) -eq $RUNS ]] ||
  fail "the resumed sweep skipped $skipped and ran $redone runs, $done_at_cancel were complete"
[[ "$same" == identical* ]] || fail "the resumed sweep's rows differ from the uninterrupted one's"
echo "PASS: $RUNS runs through Slurm; cancelled after $done_at_cancel, resumed to identical rows"
