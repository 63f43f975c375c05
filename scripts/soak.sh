#!/usr/bin/env bash
# Soak at scale (issue 7): every registered policy replays a 200,000-job synthetic trace on a
# 256-GPU cluster whose nodes and GPUs fail and get repaired, with checkpoints, restore and
# preemption costs, under the invariant checker (--check). Prints one line per policy and fails
# on the first error. The CI suite runs a 10,000-job version of the same (tests/sim/engine/soak_test.cc).
#
# Usage: scripts/soak.sh [--jobs N]   (BUILD_DIR defaults to build/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
JOBS=200000
[[ "${1:-}" == "--jobs" ]] && JOBS="$2"
CLI="$BUILD_DIR/cli/clustersim"
[[ -x "$CLI" ]] || { echo "soak.sh: build first (scripts/test.sh)" >&2; exit 2; }
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
"$CLI" trace generate --jobs "$JOBS" --gpus 256 --load 0.9 --durations philly --seed 3 \
  --out "$SCRATCH/trace.csv" >/dev/null
echo '{"nodes":[{"count":32,"gpu_type":"A100-80GB","gpus_per_node":8}]}' >"$SCRATCH/cluster.json"
for policy in $("$CLI" list policies | awk '{print $1}'); do
  start=$(date +%s%N)
  "$CLI" run --trace "$SCRATCH/trace.csv" --cluster "$SCRATCH/cluster.json" --policy "$policy" \
    --runtime-model trace --node-mtbf 168 --gpu-mtbf 720 --mttr 2 --checkpoint-interval 1800 \
    --checkpoint-cost 20 --restore-cost 60 --preemption-cost 30 --seed 11 --check \
    --out "" --no-progress >"$SCRATCH/$policy.log" 2>&1 || {
      echo "soak.sh: $policy FAILED"; cat "$SCRATCH/$policy.log"; exit 1; }
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  printf '%-14s %4d.%d s  %s\n' "$policy" $((ms / 1000)) $((ms % 1000 / 100)) \
    "$(grep -E '^  (jobs|failures) ' "$SCRATCH/$policy.log" | tr -s ' ' | tr '\n' ' ')"
done
