#!/usr/bin/env bash
# Installs what is missing, builds (Release) and runs every test with ctest.
#   ./scripts/test.sh              Release build in build/
#   ./scripts/test.sh --sanitize   AddressSanitizer + UBSan build with clang in build-sanitize/
#                                  (slower); it also builds the fuzz targets, which
#                                  `./scripts/fuzz.sh --build build-sanitize` then runs
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--sanitize" ]; then
  # clang: the same build then serves libFuzzer (scripts/fuzz.sh), so CI compiles the
  # instrumented simulator once, not once for the suite and once for the fuzz targets.
  ./scripts/install_deps.sh clang libclang-rt-14-dev
  dir=build-sanitize
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DCLUSTERSIM_SANITIZE=ON -DCLUSTERSIM_FUZZ=ON -DCLUSTERSIM_BUILD_BENCH=OFF >/dev/null
else
  ./scripts/install_deps.sh
  dir=build
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCLUSTERSIM_BUILD_TESTS=ON \
    -DCLUSTERSIM_BUILD_BENCH=ON -DCLUSTERSIM_BUILD_PYTHON=ON >/dev/null
fi
cmake --build "$dir" -j"$(nproc)"
# The tests' temporary files go to a folder of the build, not /tmp: emptied before the run and
# removed when every test passes (kept for a look when one fails).
tmp="$PWD/$dir/test-tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
cd "$dir"
TMPDIR="$tmp" TEST_TMPDIR="$tmp" \
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --output-on-failure -j"$(nproc)" --timeout 1200
rm -rf "$tmp"
