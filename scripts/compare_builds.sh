#!/usr/bin/env bash
# Runs one fixed set of simulations with two clustersim binaries and compares what they wrote:
# every `jobs`, `timeseries` and `summary` row (the columns the old binary writes: a new one may
# add columns) and each run's fingerprint, events and passes.
# For refactors that must not change behaviour (a moved file, a faster path): exit 0 and
# "identical" when the outputs agree, 1 with the first differences otherwise.
#
# Usage: scripts/compare_builds.sh OLD_CLUSTERSIM NEW_CLUSTERSIM [WORK_DIR]
# The set: the runs of docs/replay.md, failures.md and model-aware.md (fcfs, best-fit, easy,
# faults, model-aware cosched), fcfs, fair-share, easy, conservative, sjf, srtf and las on the
# first 20,000 jobs of the Philly file with first-fit, pool and best-fit, priority with every
# option on the first 10,000 (given classes), deadline-elastic with deadlines on the first 20,000
# (best-fit, and pool with half the jobs given one), and the bench's synthetic 1,024 x 8 cluster
# at 100,000 jobs.
set -euo pipefail
old="$1"
new="$2"
work="${3:-$(mktemp -d)}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mkdir -p "$work"

philly=traces/philly/pollux_philly.csv
synthetic="$work/synthetic_100k.csv"
cluster_1024="$work/cluster_1024x8.json"
echo '{"nodes":[{"count":1024,"gpu_type":"A100-80GB","gpus_per_node":8}]}' >"$cluster_1024"
"$old" trace generate --jobs 100000 --gpus 8192 --load 0.9 --seed 42 --out "$synthetic" >/dev/null
# priority's options act on classes: the Philly file with levels 0-3 drawn as bench/scale_bench.sh's
# priority_philly case draws them (weights 50/30/15/5, Python's random.seed(11)), on 56 x 8 GPUs.
philly_classes="$work/philly_classes.csv"
"$old" trace convert "$philly" --to native --out "$work/philly_native.csv" >/dev/null
/usr/bin/python3 "$root/scripts/philly_classes.py" "$work/philly_native.csv" "$philly_classes"
cluster_56="$work/cluster_56x8.json"
echo '{"nodes":[{"count":56,"gpu_type":"A100-80GB","gpus_per_node":8}]}' >"$cluster_56"
# openb's pods on their own nodes, CPUs and memory enforced (bench/scale_bench.sh's openb20 case,
# uninflated): the policies that allocate on their own under host limits.
pods=traces/alibaba_gpu_v2023/openb_pod_list_default.csv
openb="$work/openb.json"
"$old" trace cluster-from traces/alibaba_gpu_v2023/openb_node_list_gpu_node.csv \
  --map-gpu G2=A100-40GB,G3=V100-32GB --out "$openb" >/dev/null

# One line per run: a name and the run options (the trace and cluster default to the bundled ones).
runs() {
  echo "tour_fcfs|"
  echo "tour_best_fit|--cluster dgx-a100 --placement best-fit --runtime-model trace"
  echo "tour_easy|--cluster dgx-a100 --policy easy --runtime-model trace --param walltime=exact"
  echo "tour_faults|--policy easy --node-mtbf 500 --gpu-mtbf A100-80GB=5000 --mttr 4 --checkpoint-interval 3600"
  echo "tour_cosched|--assign-models --policy cosched"
  echo "frag_aware_models|--assign-models --placement frag-aware"
  for policy in fcfs fair-share easy conservative sjf srtf las; do
    for placement in first-fit pool best-fit; do
      echo "philly_${policy}_${placement}|--trace $philly --first 20000 --cluster dgx-a100 --runtime-model trace --policy $policy --placement $placement"
    done
  done
  # priority with every option (docs/policies.md#priority), quotas or EASY backfilling.
  local quota=ee9e8c:120,7f04ca:72,b436b2:56,6214e9:48,6c71a0:40,2869ce:40,0e4a51:32,103959:16,11cb48:16,e13805:8
  local every="--trace $philly_classes --first 10000 --cluster $cluster_56 --runtime-model trace --policy priority --preemption-cost 60 --node-mtbf 500h --mttr 4h --checkpoint-interval 1h --param min_slice=3600 --param max_wait=86400 --param guaranteed=3 --param exclusive=3"
  echo "philly_priority_quota|$every --param quota=$quota"
  echo "philly_priority_quota_las|$every --param quota=$quota --param within=las"
  echo "philly_priority_backfill|$every --param backfill=easy --param within=fair-share --param by=vc"
  # deadline-elastic plans with the running jobs' estimated ends (docs/deadlines.md).
  echo "philly_deadline_elastic_best_fit|--trace $philly --first 20000 --cluster dgx-a100 --runtime-model trace --policy deadline-elastic --placement best-fit --deadlines factor=1:3"
  echo "philly_deadline_elastic_pool_half|--trace $philly --first 20000 --cluster dgx-a100 --runtime-model trace --policy deadline-elastic --placement pool --deadlines factor=1.5:4,share=0.5"
  # gavel's LP and rounds (the hardware model on the default mixed cluster; under trace, where
  # every type has the same rate), weighted's batch allocator with and without host limits.
  echo "tour_gavel|--policy gavel"
  echo "openb_gavel|--trace $pods --cluster $openb --runtime-model trace --policy gavel"
  echo "tour_weighted|--policy weighted"
  echo "openb_weighted_best_fit|--trace $pods --cluster $openb --runtime-model trace --policy weighted --placement best-fit"
  echo "synthetic_fcfs|--trace $synthetic --cluster $cluster_1024 --runtime-model trace"
  echo "synthetic_easy|--trace $synthetic --cluster $cluster_1024 --runtime-model trace --policy easy"
}

# Columns and summary metrics are those the OLD binary writes: a newer binary may add columns and
# metrics (results/README.md), and what both write must agree.
columns() {  # DB TABLE
  sqlite3 "$1" "SELECT group_concat(name, ', ') FROM pragma_table_info('$2')"
}
dump() {  # DB OUT REFERENCE_DB
  sqlite3 -csv "$1" "SELECT run_id, fingerprint, events, passes, status FROM runs ORDER BY run_id" >"$2"
  sqlite3 -csv "$1" "SELECT $(columns "$3" jobs) FROM jobs ORDER BY run_id, job_index" >>"$2"
  sqlite3 -csv "$1" "SELECT $(columns "$3" timeseries) FROM timeseries ORDER BY 1, 2, 3" >>"$2"
  local metrics
  metrics=$(sqlite3 "$3" "SELECT group_concat(DISTINCT quote(metric)) FROM summary")
  sqlite3 -csv "$1" "SELECT * FROM summary WHERE metric IN (${metrics:-''}) ORDER BY 1, 2, 3" >>"$2"
}

status=0
while IFS='|' read -r name options; do
  # Backfilling policies plan with exact wall times: the trace has none.
  case "$name" in philly_easy_* | philly_conservative_*) options+=" --param walltime=exact" ;; esac
  for side in old new; do
    bin="$old"
    [[ $side == new ]] && bin="$new"
    db="$work/$name.$side.sqlite"
    rm -f "$db"
    # shellcheck disable=SC2086
    "$bin" run $options --out "$db" --no-progress >"$work/$name.$side.log" 2>&1 || {
      echo "$name: $side failed: $(tail -1 "$work/$name.$side.log")"
      status=1
      continue 2
    }
  done
  for side in old new; do
    dump "$work/$name.$side.sqlite" "$work/$name.$side.csv" "$work/$name.old.sqlite"
  done
  if cmp -s "$work/$name.old.csv" "$work/$name.new.csv"; then
    echo "$name: identical ($(head -1 "$work/$name.new.csv"))"
  else
    echo "$name: DIFFERENT"
    diff "$work/$name.old.csv" "$work/$name.new.csv" | head -5 || true  # head closes the pipe
    status=1
  fi
done < <(runs)
exit $status
