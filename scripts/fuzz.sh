#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan, build-fuzz/) and fuzzes each for a while.
#   ./scripts/fuzz.sh                       every target, 60 s each
#   ./scripts/fuzz.sh --seconds 20 swf acme two targets, 20 s each
#   ./scripts/fuzz.sh --runs 40000         every target for exactly 40,000 inputs from a fixed
#                                           seed: the same inputs on every machine (what CI runs)
#   ./scripts/fuzz.sh --list                the target names
#   ./scripts/fuzz.sh --build build-sanitize --runs 40000
#                                           the fuzz targets of the sanitizer build
#                                           (./scripts/test.sh --sanitize), not build-fuzz/ (CI)
# Each target starts from its seed corpus fuzz/corpus/<target>/ plus the inputs that once found
# a bug (fuzz/regressions/<target>/), with a dictionary of its syntax and keys (fuzz/dict/); new
# interesting inputs go to build-fuzz/corpus/<target>/ (or under the --build folder; not
# committed). Prints the executions per target (libFuzzer's stat::number_of_executed_units)
# and exits non-zero if any target found a crash, a sanitizer report or an unexpected exception;
# the input is then in build-fuzz/findings/<target>/: fix the bug and copy the input to
# fuzz/regressions/<target>/ so the normal test suite replays it (tests/fuzz/fuzz_replay_test.cc).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
runs=""
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seconds=*) seconds="${1#*=}"; shift ;;
    --runs) runs="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --build=*) build="${1#*=}"; shift ;;
    --list) list=1; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=$(sed -n '/^set(CLUSTERSIM_FUZZ_TARGETS/,/)/p' fuzz/CMakeLists.txt | tr -d '()' |
      sed 's/set\s*CLUSTERSIM_FUZZ_TARGETS//' | xargs)
if [ -n "${list:-}" ]; then echo "$all"; exit 0; fi
[ ${#targets[@]} -gt 0 ] || read -r -a targets <<< "$all"
for t in "${targets[@]}"; do
  case " $all " in *" $t "*) ;; *) echo "fuzz.sh: unknown target $t (valid: $all)" >&2; exit 2 ;; esac
done

# clang with libFuzzer and the sanitizer runtimes (Debian 12: clang-14, libclang-rt-14-dev).
./scripts/install_deps.sh clang libclang-rt-14-dev
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ is required" >&2; exit 2; }
jobs=$(nproc); [ "$jobs" -gt 2 ] && jobs=2
if [ -n "${build:-}" ]; then
  # An existing build configured with -DCLUSTERSIM_FUZZ=ON (the sanitizer build is): its target
  # is brought up to date, and its corpus, findings and logs go under it.
  grep -qs '^CLUSTERSIM_FUZZ:BOOL=ON' "$build/CMakeCache.txt" ||
    { echo "fuzz.sh: $build is not a build configured with -DCLUSTERSIM_FUZZ=ON" >&2; exit 2; }
  out=$build
else
  out=build-fuzz
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S . -B "$out" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DCLUSTERSIM_FUZZ=ON -DCLUSTERSIM_BUILD_TESTS=OFF -DCLUSTERSIM_BUILD_BENCH=OFF \
    "${launcher[@]}" >/dev/null
fi
cmake --build "$out" -j"$jobs" --target clustersim_fuzz

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
failed=()
printf '%-18s %12s  %s\n' target executions result
for t in "${targets[@]}"; do
  work=$out/corpus/$t
  findings=$out/findings/$t
  log=$out/logs/$t.log
  mkdir -p "$work" "$findings" "$out/logs"
  seeds=()
  for d in fuzz/corpus/$t fuzz/regressions/$t; do [ -d "$d" ] && seeds+=("$d"); done
  case "$t" in
    native-json|philly-json|cluster-spec|hardware-catalog|run-config) dict=fuzz/dict/json.dict ;;
    autodetect) cat fuzz/dict/csv.dict fuzz/dict/json.dict > "$out/all.dict"
                dict=$out/all.dict ;;
    *) dict=fuzz/dict/csv.dict ;;
  esac
  # A time limit explores as far as the machine's speed allows; a run count from a fixed seed is
  # reproducible (CI verifies exactly what was verified before).
  if [ -n "$runs" ]; then
    limit=(-runs="$runs" -seed=1)
    rm -rf "$work" && mkdir -p "$work"  # start from the committed seeds only
  else
    limit=(-max_total_time="$seconds")
  fi
  status=0
  CLUSTERSIM_FUZZ_TARGET=$t "$out/fuzz/clustersim_fuzz" "$work" "${seeds[@]}" -dict="$dict" \
    "${limit[@]}" -print_final_stats=1 -max_len=16384 -timeout=10 \
    -rss_limit_mb=2048 -artifact_prefix="$findings/" >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units:[[:space:]]*//p' "$log" | tail -1)
  if [ "$status" -eq 0 ]; then
    printf '%-18s %12s  ok\n' "$t" "${execs:-?}"
  else
    printf '%-18s %12s  FAILED (exit %s; log %s, input in %s/)\n' "$t" "${execs:-?}" "$status" \
      "$log" "$findings"
    grep -m5 -E 'ERROR: |runtime error|clustersim fuzz finding|SUMMARY' "$log" | sed 's/^/    /' || true
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: findings in: ${failed[*]}" >&2
  exit 1
fi
