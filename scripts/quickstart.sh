#!/usr/bin/env bash
# Installs what is missing, builds, and replays the bundled Philly window on the default cluster
# with fcfs, writing results/quickstart.sqlite (unless --out is given) and printing the summary
# table. Not results/clustersim.sqlite: the README tour's first `clustersim run` makes this same
# run there, and clustersim refuses to append a run a database already holds.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
out=(--out results/quickstart.sqlite)
for arg in "$@"; do
  [[ $arg == --out || $arg == --out=* ]] && out=()
done
./build/sim/cli/clustersim run "${out[@]}" "$@"
