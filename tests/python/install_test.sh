#!/usr/bin/env bash
# `cmake --install` installs the Python module (python/CMakeLists.txt): installed into a scratch
# prefix, `import clustersim` works from there alone (not from the build tree), the installed
# module runs a simulation through the installed clustersim program's library and writes the HTML
# report with clustersim.open(db).report_html(...).
# Usage: install_test.sh BUILD_DIR PYTHON
set -euo pipefail
build="$1"
python="$2"
prefix="$(mktemp -d)"
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
version="$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
site="$prefix/lib/python$version/site-packages"
test -f "$site/clustersim/__init__.py" || { echo "FAIL: no package in $site"; exit 1; }
test -x "$prefix/bin/clustersim" || { echo "FAIL: no program in $prefix/bin"; exit 1; }
cd "$prefix"
PYTHONPATH="$site" PYTHONNOUSERSITE=1 "$python" - "$prefix" "$site" <<'PY'
import os
import sys

prefix, site = sys.argv[1], sys.argv[2]
import clustersim

assert clustersim.__file__.startswith(site), clustersim.__file__
from clustersim import _paths

assert _paths.CLUSTERSIM_PROGRAM == os.path.join(prefix, "bin", "clustersim"), _paths.CLUSTERSIM_PROGRAM
trace = clustersim.Trace([{"job_id": "a", "submit_time": 0, "gpus": 2, "duration": 60},
                          {"job_id": "b", "submit_time": 1, "gpus": 8, "duration": 30}])
cluster = {"nodes": [{"count": 1, "gpu_type": "A100-80GB", "gpus_per_node": 8}]}
result = clustersim.run(trace, cluster=cluster, out=os.path.join(prefix, "r.sqlite"))
assert result.status == "complete", result.status
page = clustersim.open(os.path.join(prefix, "r.sqlite")).report_html(os.path.join(prefix, "r.html"))
text = open(page, encoding="utf-8").read()
assert "clustersim-data" in text and "echarts" in text, "not the report page"
print("installed module imported from", site, "and wrote", page)
PY
