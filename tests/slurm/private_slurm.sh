# A private single-host Slurm cluster on loopback, for tests/slurm/slurm_test.sh and
# bench/slurm_sweep_bench.sh (sourced, not run). Debian's slurm-wlm and munge (installed by
# scripts/install_deps.sh); nothing is installed here.
#
#   source tests/slurm/private_slurm.sh
#   private_slurm_start WORK_DIR     # munged, slurmctld, slurmd under WORK_DIR; exports SLURM_CONF
#   ...sbatch, squeue, scancel...
#   private_slurm_stop               # cancels this cluster's jobs, stops the daemons by process id
#
# Everything lives in WORK_DIR (which must exist and be private: munged refuses keys and sockets
# in folders others can write to): the munge key, socket, pid and log files, slurm.conf, the
# controller's state, slurmd's spool. Ports are free ones picked on 127.0.0.1. The daemons run in
# the foreground as children of the calling shell; PRIVATE_SLURM_PIDS holds their process ids.
# private_slurm_start returns 1 (logs in WORK_DIR/log) if the node is not idle within 30 s.

PRIVATE_SLURM_PIDS=()

private_slurm_logs() {  # prints the daemons' logs
  local log
  for log in "$PRIVATE_SLURM_WORK"/log/*; do
    [ -f "$log" ] || continue
    echo "----- $log (last 60 lines)"
    tail -n 60 "$log"
  done
}

private_slurm_start() {
  PRIVATE_SLURM_WORK=$1
  local work=$1
  chmod 700 "$work"
  mkdir -p "$work/munge" "$work/state" "$work/spool" "$work/log"
  dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
  chmod 600 "$work/munge/munge.key"
  munged --foreground --force --key-file="$work/munge/munge.key" \
    --socket="$work/munge/munge.socket" --pid-file="$work/munge/munged.pid" \
    --seed-file="$work/munge/munged.seed" --log-file="$work/log/munged.log" \
    >"$work/log/munged.stdout" 2>&1 &
  PRIVATE_SLURM_PIDS+=($!)
  local i
  for i in $(seq 100); do [ -S "$work/munge/munge.socket" ] && break; sleep 0.1; done
  if [ ! -S "$work/munge/munge.socket" ]; then
    echo "munged did not create its socket" >&2
    return 1
  fi
  local ctld_port slurmd_port
  read -r ctld_port slurmd_port < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in sockets])')
  local host user cpus
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
  PRIVATE_SLURM_PIDS+=($!)
  slurmd -D -f "$SLURM_CONF" -N "$host" >"$work/log/slurmd.stdout" 2>&1 &
  PRIVATE_SLURM_PIDS+=($!)
  local state="" pid
  for i in $(seq 150); do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
    [ "$state" = idle ] && return 0
    for pid in "${PRIVATE_SLURM_PIDS[@]}"; do
      if ! kill -0 "$pid" 2>/dev/null; then
        echo "a Slurm daemon exited" >&2
        return 1
      fi
    done
    sleep 0.2
  done
  echo "node $host is not idle after 30 s (sinfo says \"$state\")" >&2
  return 1
}

private_slurm_stop() {
  if [ -n "${SLURM_CONF:-}" ] && [ ${#PRIVATE_SLURM_PIDS[@]} -ge 2 ]; then
    scancel --quiet --user="$(id -un)" 2>/dev/null || true  # jobs of this private cluster only
  fi
  # Stop the daemons started here, newest first, by process id; then wait for them.
  local i pid
  for ((i = ${#PRIVATE_SLURM_PIDS[@]} - 1; i >= 0; i--)); do
    kill -TERM "${PRIVATE_SLURM_PIDS[i]}" 2>/dev/null || true
  done
  for pid in "${PRIVATE_SLURM_PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  PRIVATE_SLURM_PIDS=()
}
