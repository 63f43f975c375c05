#!/usr/bin/env bash
# Configures and builds clustersim (Release, with tests and benchmarks) in ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
"./scripts/install_deps.sh"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$(nproc)"
