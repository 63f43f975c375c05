#!/usr/bin/env bash
# Installs what is missing, builds the clustersim program only (scripts/test.sh builds the tests,
# benchmarks and Python module), and replays the bundled Philly window on the default cluster
# with fcfs, writing results/quickstart.sqlite (unless --out is given) and printing the summary
# table. Not results/clustersim.sqlite: the README tour's first `clustersim run` makes this same
# run there, and clustersim refuses to append a run a database already holds.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install_deps.sh --cli
# Tests, benchmarks and the Python module off: their packages are not needed for the program
# (scripts/test.sh and scripts/build.sh turn them back on in the same build directory).
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCLUSTERSIM_BUILD_TESTS=OFF \
  -DCLUSTERSIM_BUILD_BENCH=OFF -DCLUSTERSIM_BUILD_PYTHON=OFF >/dev/null
cmake --build build -j"$(nproc)" --target clustersim
out=(--out results/quickstart.sqlite)
for arg in "$@"; do
  [[ $arg == --out || $arg == --out=* ]] && out=()
done
# The default database is quickstart's own: a second quickstart replaces it rather than being
# refused as a duplicate run.
[[ ${#out[@]} -gt 0 ]] && rm -f results/quickstart.sqlite
./build/cli/clustersim run "${out[@]}" "$@"
