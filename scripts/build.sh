#!/usr/bin/env bash
# Configures and builds clustersim (Release, with tests, benchmarks and the Python module) in ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
"./scripts/install_deps.sh"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCLUSTERSIM_BUILD_TESTS=ON \
  -DCLUSTERSIM_BUILD_BENCH=ON -DCLUSTERSIM_BUILD_PYTHON=ON "$@" >/dev/null
cmake --build build -j"$(nproc)"
