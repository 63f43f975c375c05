#!/usr/bin/env bash
# Every policy on the bundled 82,247-job Philly trace (traces/philly/pollux_philly.csv), an
# overloaded real trace, on 56 x 8 and 128 x 8 V100-32GB nodes (hybrid cube mesh), first-fit and
# best-fit, runtime model `trace` (the default on one GPU type), cosched with --assign-models;
# then easy and conservative with pool and first-fit on the first 30,000 jobs on 56 x 8. One run
# at a time, each under /usr/bin/time. Prints Markdown tables: wall seconds (end to end, SQLite
# write included), user CPU seconds, events, mean wait, peak RSS.
#
# Usage: bench/philly_policies.sh [CLUSTERSIM]   (default build/cli/clustersim)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLI="${1:-$ROOT/build/cli/clustersim}"
TRACE="$ROOT/traces/philly/pollux_philly.csv"
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
for nodes in 56 128; do
  echo "{\"nodes\":[{\"count\":$nodes,\"gpu_type\":\"V100-32GB\",\"gpus_per_node\":8,\"topology\":\"hybrid-cube-mesh\"}]}" \
    >"$SCRATCH/c$nodes.json"
done

# One run: prints "| label | wall | user | events | mean wait | RSS |".
measure() {  # LABEL ARGS...
  local label="$1"
  shift
  rm -f "$SCRATCH/out.sqlite"
  /usr/bin/time -f "%e %U %M" -o "$SCRATCH/time" "$CLI" run --trace "$TRACE" "$@" \
    --out "$SCRATCH/out.sqlite" --no-progress >"$SCRATCH/log" 2>&1
  read -r wall user rss <"$SCRATCH/time"
  local events wait
  events=$(sed -n 's/.*events *\([0-9]*\).*/\1/p' "$SCRATCH/log")
  wait=$(sed -n 's/.*wait (h) *mean *\([0-9.]*\).*/\1/p' "$SCRATCH/log")
  printf '| %s | %s | %s | %s | %s | %d MB |\n' "$label" "$wall" "$user" "$events" "$wait" \
    $((rss / 1024))
}

echo "| policy, cluster, placement | wall s | user s | events | mean wait (h) | peak RSS |"
echo "|---|---:|---:|---:|---:|---:|"
for nodes in 56 128; do
  for placement in first-fit best-fit; do
    for policy in fcfs fair-share easy conservative sjf srtf las cosched; do
      extra=()
      [[ $policy == cosched ]] && extra=(--assign-models)
      measure "$policy, ${nodes}x8, $placement" --cluster "$SCRATCH/c$nodes.json" \
        --policy "$policy" --placement "$placement" "${extra[@]}"
    done
    measure "fair-share backfill=easy, ${nodes}x8, $placement" --cluster "$SCRATCH/c$nodes.json" \
      --policy fair-share --param backfill=easy --placement "$placement"
  done
done
echo
echo "| --first 30000, 56x8 | wall s | user s | events | mean wait (h) | peak RSS |"
echo "|---|---:|---:|---:|---:|---:|"
for policy in easy conservative; do
  for placement in pool first-fit; do
    measure "$policy / $placement" --first 30000 --cluster "$SCRATCH/c56.json" --policy "$policy" \
      --placement "$placement"
  done
done
