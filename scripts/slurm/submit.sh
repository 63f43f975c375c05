#!/usr/bin/env bash
# Submits a clustersim sweep to Slurm: a job array of N tasks (default 4), each running one shard
# of SPEC (scripts/slurm/sweep.sbatch), then a merge job that starts only when every task has
# succeeded (--dependency=afterok) and writes OUTDIR/merged.sqlite.
#
#   scripts/slurm/submit.sh SPEC.json OUTDIR [N]
#
# Environment: CLUSTERSIM = the clustersim binary (default: this checkout's
# build/cli/clustersim); CPUS_PER_TASK = CPUs per array task, each task runs that many runs
# at once (default 1). sbatch's own SBATCH_* variables (SBATCH_PARTITION, SBATCH_TIMELIMIT,
# SBATCH_ACCOUNT, ...) apply to both jobs. SPEC, OUTDIR and the binary must be on a file system
# every node sees. Prints the two job ids, array first, on the last line.
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 SPEC.json OUTDIR [N]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
spec=$(realpath "$1")
outdir=$(realpath -m "$2")
tasks=${3:-4}
cpus=${CPUS_PER_TASK:-1}
clustersim=$(realpath -m "${CLUSTERSIM:-$here/../../build/cli/clustersim}")
if ! [[ "$tasks" =~ ^[1-9][0-9]*$ ]]; then
  echo "$0: N must be a positive number of array tasks, got \"$tasks\"" >&2
  exit 2
fi
if [ ! -x "$clustersim" ]; then
  echo "$0: $clustersim is not an executable (build clustersim or set CLUSTERSIM)" >&2
  exit 2
fi
if [ ! -f "$spec" ]; then
  echo "$0: $spec: no such spec file" >&2
  exit 2
fi
# Check the spec once here rather than in every task: a bad spec fails now, not N times later.
runs=$("$clustersim" sweep "$spec" --out "$outdir/runs" --dry-run | wc -l)
mkdir -p "$outdir/runs" "$outdir/logs"
array=$(sbatch --parsable --array="0-$((tasks - 1))" --cpus-per-task="$cpus" \
          --output="$outdir/logs/sweep-%A_%a.out" \
          "$here/sweep.sbatch" "$spec" "$outdir" "$clustersim")
array=${array%%;*}  # --parsable prints "id" or "id;cluster"
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes \
          --output="$outdir/logs/merge-%j.out" \
          "$here/merge.sbatch" "$outdir" "$clustersim")
merge=${merge%%;*}
echo "submitted sweep array job $array ($runs runs in $tasks tasks) and merge job $merge (after all succeed)"
echo "results: $outdir/merged.sqlite   logs: $outdir/logs/"
echo "$array $merge"
