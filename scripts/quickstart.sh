#!/usr/bin/env bash
# Installs what is missing, builds the clustersim program only (scripts/test.sh builds the tests
# and benchmarks), and replays the bundled Philly window on the default cluster with fcfs,
# writing results/clustersim.sqlite and printing the summary table.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target clustersim
./build/sim/cli/clustersim run "$@"
