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
chmod 700 "$work"  # munged refuses keys and sockets in folders others can write to
mkdir -p "$work/munge" "$work/state" "$work/spool" "$work/log"
daemon_pids=()
failed=1

print_logs() {
  for log in "$work"/log/*; do
    [ -f "$log" ] || continue
    echo "----- $log (last 60 lines)"
    tail -n 60 "$log"
  done
  for log in "$work"/out/logs/*; do
    [ -f "$log" ] || continue
    echo "----- $log"
    cat "$log"
  done
}

cleanup() {
  local status=$?
  if [ -n "${SLURM_CONF:-}" ] && [ ${#daemon_pids[@]} -ge 2 ]; then
    scancel --quiet --user="$(id -un)" 2>/dev/null || true  # jobs of this private cluster only
  fi
  # Stop the daemons this script started, newest first, by process id; then wait for them.
  for ((i = ${#daemon_pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${daemon_pids[i]}" 2>/dev/null || true
  done
  for pid in "${daemon_pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
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

# --- munge: a private key, socket, pid file, seed and log ---------------------------------------
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$work/munge/munge.key"
munged --foreground --force --key-file="$work/munge/munge.key" \
  --socket="$work/munge/munge.socket" --pid-file="$work/munge/munged.pid" \
  --seed-file="$work/munge/munged.seed" --log-file="$work/log/munged.log" \
  >"$work/log/munged.stdout" 2>&1 &
daemon_pids+=($!)
for _ in $(seq 100); do [ -S "$work/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$work/munge/munge.socket" ] || fail "munged did not create its socket"

# --- slurm.conf: one node (this host) on loopback, everything under $work -----------------------
read -r ctld_port slurmd_port < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in sockets])')
host=$(hostname -s)
user=$(id -un)
cpus=$(nproc)
cat >"$work/slurm.conf" <<EOF
ClusterName=clustersimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1
MpiDefault=none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$work/slurm.conf
# No SBATCH_*/SLURM_* settings from a surrounding allocation may leak into the private cluster.
unset SBATCH_PARTITION SBATCH_ACCOUNT SBATCH_TIMELIMIT SLURM_JOB_ID SLURM_ARRAY_TASK_ID || true

slurmctld -D -i -f "$SLURM_CONF" >"$work/log/slurmctld.stdout" 2>&1 &
daemon_pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$work/log/slurmd.stdout" 2>&1 &
daemon_pids+=($!)

state=""
for _ in $(seq 150); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  for pid in "${daemon_pids[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a Slurm daemon exited"; done
  sleep 0.2
done
[ "$state" = idle ] || fail "node $host is not idle after 30 s (sinfo says \"$state\")"
echo "private Slurm cluster up after $((SECONDS - start_seconds)) s (node $host, $cpus CPUs)"

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
"$clustersim" sweep "$work/spec.json" --out "$work/local/runs" --jobs 2 >/dev/null
"$clustersim" merge "$work/local.sqlite" "$work/local/runs" >/dev/null

q() { sqlite3 -batch -noheader "$1" "$2"; }
[ "$(q "$merged" "SELECT count(*) FROM runs")" = 8 ] || fail "merged database: expected 8 runs"
[ "$(q "$merged" "SELECT count(*) FROM runs WHERE status = 'complete'")" = 8 ] ||
  fail "merged database: not every run is complete"
# Each run's rows, keyed by the run's identity instead of its run id: equal to the local sweep.
for table in jobs timeseries summary; do
  cols=$(q "$merged" "SELECT group_concat('t.' || name) FROM pragma_table_info('$table')
                      WHERE name != 'run_id'")
  dump="SELECT r.policy, r.seed, r.trace_filter, $cols FROM $table t JOIN runs r USING (run_id)"
  n_slurm=$(q "$merged" "SELECT count(*) FROM $table")
  n_local=$(q "$work/local.sqlite" "SELECT count(*) FROM $table")
  [ "$n_slurm" = "$n_local" ] || fail "$table: $n_slurm rows from Slurm, $n_local locally"
  [ "$n_slurm" -gt 0 ] || fail "$table: no rows"
  q "$merged" "$dump" | sort >"$work/slurm_$table.txt"
  q "$work/local.sqlite" "$dump" | sort >"$work/local_$table.txt"
  [ "$(wc -l <"$work/slurm_$table.txt")" = "$n_slurm" ] || fail "$table: dump has the wrong size"
  cmp -s "$work/slurm_$table.txt" "$work/local_$table.txt" ||
    fail "$table: rows differ between the Slurm merge and the local sweep"
  echo "$table: $n_slurm rows, equal to the local sweep"
done
[ "$(q "$merged" "SELECT count(*) FROM jobs")" = 48 ] || fail "jobs: expected 8 runs x 6 jobs"

failed=0
echo "PASS: Slurm sweep (2-task array + afterok merge) in $((SECONDS - start_seconds)) s"
