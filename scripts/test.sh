#!/usr/bin/env bash
# Installs what is missing, builds (Release) and runs every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)"
