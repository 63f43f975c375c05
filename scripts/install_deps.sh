#!/usr/bin/env bash
# Installs the Debian packages clustersim needs, if any are missing. Works as root or with sudo.
# Extra package names given as arguments are installed too (scripts/fuzz.sh adds clang).
# `--cli` installs only what building the clustersim program needs (scripts/quickstart.sh).
set -euo pipefail
cli_packages=(g++ cmake make libboost-graph-dev libboost-program-options-dev nlohmann-json3-dev
              libspdlog-dev libfmt-dev libsqlite3-dev sqlite3 zlib1g-dev libglpk-dev mold)
if [[ ${1:-} == --cli ]]; then
  shift
  packages=("${cli_packages[@]}" "$@")
else
  packages=("${cli_packages[@]}" googletest libgtest-dev libgmock-dev libbenchmark-dev python3
            python3-matplotlib slurm-wlm munge pybind11-dev python3-dev python3-pandas
            python3-numpy python3-pytest "$@")
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "error: missing packages (${missing[*]}) and neither root nor sudo available" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
