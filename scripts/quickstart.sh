#!/usr/bin/env bash
# Installs what is missing, builds, and replays the bundled Philly window on the default cluster
# with fcfs, writing results/clustersim.sqlite and printing the summary table.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
./build/sim/cli/clustersim run "$@"
