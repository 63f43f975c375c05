#!/usr/bin/env bash
# Installs the Debian packages clustersim needs, if any are missing, and the one npm package the
# build embeds: Apache ECharts, the HTML report's charting library (sim/output/CMakeLists.txt).
# Works as root or with sudo. Extra package names given as arguments are installed too
# (scripts/fuzz.sh adds clang). `--cli` installs only what building the clustersim program needs
# (scripts/quickstart.sh); the full set adds the tests' packages, among them Debian's chromium,
# in which the HTML report's test opens the page (tests/html/report_browser_test.py).
set -euo pipefail
cli_packages=(g++ cmake make libboost-graph-dev libboost-program-options-dev nlohmann-json3-dev
              libspdlog-dev libfmt-dev libsqlite3-dev sqlite3 zlib1g-dev libglpk-dev libssl-dev
              mold)
if [[ ${1:-} == --cli ]]; then
  shift
  packages=("${cli_packages[@]}" "$@")
else
  packages=("${cli_packages[@]}" googletest libgtest-dev libgmock-dev libbenchmark-dev python3
            python3-matplotlib slurm-wlm munge pybind11-dev python3-dev python3-pandas
            python3-numpy python3-pytest chromium python3-websocket "$@")
fi
echarts_version=6.1.0
# npm (for echarts): Debian's nodejs ships it; a machine with another nodejs has its own npm.
command -v npm >/dev/null 2>&1 || packages+=(npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
echarts_installed() {
  local root
  root="$(npm root -g 2>/dev/null)" || return 1
  [ -f "$root/echarts/dist/echarts.min.js" ] &&
    grep -q "\"version\": \"$echarts_version\"" "$root/echarts/package.json"
}
if [ ${#missing[@]} -eq 0 ] && echarts_installed; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "error: missing packages (${missing[*]} echarts@$echarts_version) and neither root nor" \
    "sudo available" >&2
  exit 1
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! echarts_installed; then
  echo "installing: echarts@$echarts_version (npm)"
  "${sudo[@]}" npm install -g --no-audit --no-fund "echarts@$echarts_version"
fi
