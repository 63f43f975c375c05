#!/usr/bin/env bash
# Installs what is missing, builds the clustersim program only (scripts/test.sh builds the tests
# and benchmarks), and replays the bundled Philly window on the default cluster with fcfs,
# writing results/quickstart.sqlite (unless --out is given) and printing the summary table. Not
# results/clustersim.sqlite: the README tour's first `clustersim run` makes this same run there,
# and clustersim refuses to append a run a database already holds.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target clustersim
out=(--out results/quickstart.sqlite)
for arg in "$@"; do
  [[ $arg == --out || $arg == --out=* ]] && out=()
done
# The default database is quickstart's own: a second quickstart replaces it rather than being
# refused as a duplicate run.
[[ ${#out[@]} -gt 0 ]] && rm -f results/quickstart.sqlite
./build/sim/cli/clustersim run "${out[@]}" "$@"
