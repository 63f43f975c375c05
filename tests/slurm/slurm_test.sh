#!/usr/bin/env bash
# A real Slurm end to end (scripts/slurm/README.md): a private single-host Slurm cluster on loopback
# (Debian's slurm-wlm and munge, installed by scripts/install_deps.sh), a 2-task job array
# sweep plus its dependent merge submitted with scripts/slurm/submit.sh, and the merged database
# checked against a local single-process sweep of the same spec.
#
#   tests/slurm/slurm_test.sh CLUSTERSIM_BINARY SOURCE_DIR      (ctest runs it as slurm_sweep)
#
# Everything lives in a fresh temporary directory: the munge key, socket, pid and log files,
# slurm.conf, the controller's state, slurmd's spool, the jobs' output. Ports are free ones picked
# on 127.0.0.1. The daemons (munged, slurmctld, slurmd) run in the foreground as children of this
# script and are stopped by their process ids on exit, whatever happens. Slurm client commands
# find the private cluster through SLURM_CONF. If the cluster does not come up, the test fails
# and prints the daemons' logs. It installs nothing.
set -euo pipefail

clustersim=$(realpath "${1:?usage: slurm_test.sh CLUSTERSIM_BINARY SOURCE_DIR}")
source_dir=$(realpath "${2:?usage: slurm_test.sh CLUSTERSIM_BINARY SOURCE_DIR}")
timeout_seconds=${SLURM_TEST_TIMEOUT:-90}
start_seconds=$SECONDS

for tool in munged slurmctld slurmd sbatch squeue sinfo scancel sqlite3 python3; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "FAIL: $tool not found; install Debian's slurm-wlm, munge and sqlite3" \
         "(scripts/install_deps.sh does)" >&2
    exit 1
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/clustersim_slurm_XXXXXX")
mkdir -p "$work/slurm"
failed=1
# shellcheck source=tests/slurm/private_slurm.sh
source "$source_dir/tests/slurm/private_slurm.sh"

print_logs() {
  private_slurm_logs
  for log in "$work"/out*/logs/*; do
    [ -f "$log" ] || continue
    echo "----- $log"
    cat "$log"
  done
}

cleanup() {
  local status=$?
  private_slurm_stop
  if [ "$failed" -ne 0 ]; then
    print_logs >&2
    echo "FAIL: slurm test (exit status $status), after $((SECONDS - start_seconds)) s" >&2
  fi
  rm -rf "$work"
  if [ "$failed" -ne 0 ] && [ "$status" -eq 0 ]; then exit 1; fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

private_slurm_start "$work/slurm" || fail "the private Slurm cluster did not come up"
echo "private Slurm cluster up after $((SECONDS - start_seconds)) s (node $(hostname -s)," \
     "$(nproc) CPUs)"

# --- the sweep: 2 policies x 2 load factors x 2 seeds = 8 runs, as a 2-task array + merge ----------
cp "$source_dir/tests/data/tiny_trace.csv" "$source_dir/tests/data/tiny_cluster.json" "$work/"
cat >"$work/spec.json" <<'EOF'
{"traces": ["tiny_trace.csv"], "clusters": ["tiny_cluster.json"], "policies": ["fcfs", "easy"],
 "load_factor": [1, 0.5], "seeds": [0, 1]}
EOF
submitted=$(CLUSTERSIM="$clustersim" "$source_dir/scripts/slurm/submit.sh" \
              "$work/spec.json" "$work/out" 2)
echo "$submitted"
read -r array_job merge_job < <(tail -n 1 <<<"$submitted")
[[ "$array_job" =~ ^[0-9]+$ && "$merge_job" =~ ^[0-9]+$ ]] || fail "submit.sh printed no job ids"

while [ -n "$(squeue -h -j "$array_job,$merge_job" 2>/dev/null)" ]; do
  if [ $((SECONDS - start_seconds)) -gt "$timeout_seconds" ]; then
    squeue >&2 || true
    fail "jobs not finished after ${timeout_seconds} s"
  fi
  sleep 0.5
done
echo "array job and merge job finished after $((SECONDS - start_seconds)) s"

merged=$work/out/merged.sqlite
[ -f "$merged" ] || fail "the merge job wrote no $merged"
for task in 0 1; do
  log=$(ls "$work"/out/logs/sweep-"${array_job}"_"$task".out 2>/dev/null) ||
    fail "no log of array task $task"
  grep -q "shard $task/2: 4 runs: 4 complete now" "$log" || fail "task $task did not run its 4 runs"
done

# --- the same spec locally, in one process ------------------------------------------------------
"$clustersim" sweep "$work/spec.json" --out "$work/local/runs" --mkdir --jobs 2 >/dev/null
"$clustersim" merge "$work/local.sqlite" "$work/local/runs" >/dev/null

q() { sqlite3 -batch -noheader "$1" "$2"; }
# Each run's rows, keyed by the run's identity instead of its run id: equal in both databases.
same_rows() {  # MERGED LOCAL RUNS
  [ "$(q "$1" "SELECT count(*) FROM runs")" = "$3" ] || fail "$1: expected $3 runs"
  [ "$(q "$1" "SELECT count(*) FROM runs WHERE status = 'complete'")" = "$3" ] ||
    fail "$1: not every run is complete"
  local table cols dump n_slurm n_local
  for table in jobs timeseries summary; do
    cols=$(q "$1" "SELECT group_concat('t.' || name) FROM pragma_table_info('$table')
                   WHERE name != 'run_id'")
    dump="SELECT r.policy, r.seed, r.trace_filter, $cols FROM $table t JOIN runs r USING (run_id)"
    n_slurm=$(q "$1" "SELECT count(*) FROM $table")
    n_local=$(q "$2" "SELECT count(*) FROM $table")
    [ "$n_slurm" = "$n_local" ] || fail "$table: $n_slurm rows from Slurm, $n_local locally"
    [ "$n_slurm" -gt 0 ] || fail "$table: no rows"
    q "$1" "$dump" | sort >"$work/slurm_$table.txt"
    q "$2" "$dump" | sort >"$work/local_$table.txt"
    [ "$(wc -l <"$work/slurm_$table.txt")" = "$n_slurm" ] || fail "$table: dump has the wrong size"
    cmp -s "$work/slurm_$table.txt" "$work/local_$table.txt" ||
      fail "$table: rows differ between the Slurm merge and the local sweep"
    echo "$table: $n_slurm rows, equal to the local sweep"
  done
}
same_rows "$merged" "$work/local.sqlite" 8
[ "$(q "$merged" "SELECT count(*) FROM jobs")" = 48 ] || fail "jobs: expected 8 runs x 6 jobs"
echo "PASS: Slurm sweep (2-task array + afterok merge) in $((SECONDS - start_seconds)) s"

# --- cancelled mid-sweep (scancel), submitted again: the rows of an uninterrupted sweep ------------
# 16 runs of the bundled Philly window, long enough (a second or more each) that the array is
# cancelled while its tasks still have runs to do; the merge job is cancelled with it (its
# afterok dependency can no longer be met). Submitting again skips the complete runs.
cp "$source_dir/traces/philly_default.csv" "$work/"
cat >"$work/spec2.json" <<'EOF'
{"traces": ["philly_default.csv"], "clusters": ["default"], "policies": ["fcfs", "easy", "sjf", "las"],
 "load_factor": [1, 2], "seeds": [0, 1], "runtime_model": "trace"}
EOF
runs_done() { find "$work/out2/runs" -name 'run-*.sqlite' 2>/dev/null | wc -l; }
wait_gone() {  # JOB_IDS
  local since=$SECONDS
  while [ -n "$(squeue -h -j "$1" 2>/dev/null)" ]; do
    [ $((SECONDS - since)) -le "$timeout_seconds" ] || fail "jobs $1 not gone after ${timeout_seconds} s"
    sleep 0.5
  done
}
submitted=$(CLUSTERSIM="$clustersim" "$source_dir/scripts/slurm/submit.sh" \
              "$work/spec2.json" "$work/out2" 2)
read -r array_job merge_job < <(tail -n 1 <<<"$submitted")
since=$SECONDS
until [ "$(runs_done)" -ge 2 ]; do
  [ $((SECONDS - since)) -le "$timeout_seconds" ] || fail "no run of the second sweep finished"
  [ -n "$(squeue -h -j "$array_job" 2>/dev/null)" ] || break
  sleep 0.2
done
scancel "$array_job"
wait_gone "$array_job,$merge_job"
done_at_cancel=$(runs_done)
echo "cancelled array job $array_job with $done_at_cancel of 16 runs done"
[ "$done_at_cancel" -lt 16 ] || fail "the sweep ended before it was cancelled (runs too short)"
[ ! -f "$work/out2/merged.sqlite" ] || fail "the merge ran although the array was cancelled"
submitted=$(CLUSTERSIM="$clustersim" "$source_dir/scripts/slurm/submit.sh" \
              "$work/spec2.json" "$work/out2" 2)
read -r array_job merge_job < <(tail -n 1 <<<"$submitted")
wait_gone "$array_job,$merge_job"
[ -f "$work/out2/merged.sqlite" ] || fail "the resumed sweep's merge wrote nothing"
# Each task's closing line only ("sweep: shard K/2: R runs: A complete now, B already complete, ..."):
# its opening line repeats the already-complete count.
closing=$(cat "$work"/out2/logs/sweep-"${array_job}"_*.out | grep "^sweep: shard ")
[ "$(wc -l <<<"$closing")" = 2 ] || fail "not both resumed tasks printed their closing line"
resumed=$(grep -o "[0-9]* already complete" <<<"$closing" | awk '{s += $1} END {print s + 0}')
redone=$(grep -o "[0-9]* complete now" <<<"$closing" | awk '{s += $1} END {print s + 0}')
[ "$resumed" = "$done_at_cancel" ] ||
  fail "the resumed tasks skipped $resumed runs, $done_at_cancel were complete"
[ $((resumed + redone)) = 16 ] || fail "the resumed tasks ran $redone runs and skipped $resumed of 16"
"$clustersim" sweep "$work/spec2.json" --out "$work/local2/runs" --mkdir --jobs 2 >/dev/null
"$clustersim" merge "$work/local2.sqlite" "$work/local2/runs" >/dev/null
same_rows "$work/out2/merged.sqlite" "$work/local2.sqlite" 16
echo "PASS: cancelled after $done_at_cancel of 16 runs, resumed ($resumed skipped) to the same rows"

failed=0
echo "PASS: Slurm sweeps in $((SECONDS - start_seconds)) s"
