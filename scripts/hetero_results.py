#!/usr/bin/python3
"""The heterogeneity results of docs/heterogeneity.md: gavel against fcfs, las and cosched (and
least-loaded), with the controls that isolate where a gain comes from (fcfs and las with
type_order=fastest: the GPU-type choice alone; gavel with free and with dearer preemption), on the bundled Philly window,
on the default mixed cluster (V100, A100, H100) with the hardware runtime model and models
assigned (--assign-models, seed 0, as cosched needs them). One `clustersim run` per row into one
database; prints a Markdown table from its summary table.

Usage: scripts/hetero_results.py [--binary build/cli/clustersim] [--out results/hetero.sqlite]
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS = [
    # (label, run options)
    ("fcfs", ["--policy", "fcfs"]),
    ("fcfs, type_order=fastest", ["--policy", "fcfs", "--param", "type_order=fastest"]),
    ("las", ["--policy", "las"]),
    ("las, type_order=fastest", ["--policy", "las", "--param", "type_order=fastest"]),
    ("cosched", ["--policy", "cosched"]),
    ("least-loaded", ["--policy", "least-loaded"]),
    ("gavel (max-min)", ["--policy", "gavel"]),
    ("gavel (max-min), preemption free", ["--policy", "gavel", "--preemption-cost", "0"]),
    ("gavel (max-min), preemption 60 s", ["--policy", "gavel", "--preemption-cost", "60"]),
    ("gavel (throughput)", ["--policy", "gavel", "--param", "objective=throughput"]),
]
COMMON = ["--assign-models", "--runtime-model", "hardware", "--no-progress"]
COLUMNS = [
    # (header, summary metric, scope, scale, format); scope "busy:TYPE" = busy GPU-hours of a type
    ("mean JCT h", "jct_seconds_mean", "all", 1 / 3600, "{:.2f}"),
    ("p95 JCT h", "jct_seconds_p95", "all", 1 / 3600, "{:.2f}"),
    ("mean wait h", "wait_seconds_mean", "all", 1 / 3600, "{:.2f}"),
    ("makespan h", "makespan_seconds", "all", 1 / 3600, "{:.0f}"),
    ("busy GPU-h", "busy_gpu_hours", "all", 1, "{:,.0f}"),
    ("on H100", "gpu_utilization", "busy:H100-80GB", 1, "{:,.0f}"),
    ("on A100", "gpu_utilization", "busy:A100-80GB", 1, "{:,.0f}"),
    ("on V100 (SXM2 + PCIe)", "gpu_utilization", "busy:V100-32GB|V100-PCIe-32GB", 1, "{:,.0f}"),
    ("preemptions", "preemptions", "all", 1, "{:,.0f}"),
    ("preempt GPU-h", "preemption_gpu_hours", "all", 1, "{:,.1f}"),
]


def busy_hours(db, run_id, types):
    """Busy GPU-hours on the GPU types `types` ('|'-separated): utilization x GPUs x span."""
    span = db.execute("SELECT value FROM summary WHERE run_id = ? AND metric = "
                      "'simulated_seconds'", (run_id,)).fetchone()[0]
    cluster = json.loads(db.execute("SELECT cluster_json FROM runs WHERE run_id = ?",
                                    (run_id,)).fetchone()[0])
    total = 0.0
    for name in types.split("|"):
        gpus = sum(g["count"] * g["gpus_per_node"] for g in cluster["nodes"]
                   if g["gpu_type"] == name)
        util = db.execute("SELECT value FROM summary WHERE run_id = ? AND metric = "
                          "'gpu_utilization' AND scope = ?", (run_id, name)).fetchone()[0]
        total += util * gpus * span / 3600
    return total


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build/cli/clustersim"))
    parser.add_argument("--out", default=os.path.join(ROOT, "results/hetero.sqlite"))
    args = parser.parse_args()
    if os.path.exists(args.out):
        os.remove(args.out)
    for label, options in ROWS:
        command = [args.binary, "run", "--out", args.out] + COMMON + options
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"{' '.join(command)} failed:\n{result.stderr}")
    print("| policy | " + " | ".join(c[0] for c in COLUMNS) + " |")
    print("|---|" + "---:|" * len(COLUMNS))
    with sqlite3.connect(args.out) as db:
        for run_id, (label, _) in enumerate(ROWS, start=1):
            cells = []
            for _, metric, scope, scale, fmt in COLUMNS:
                if scope.startswith("busy:"):
                    cells.append(fmt.format(busy_hours(db, run_id, scope[5:])))
                    continue
                row = db.execute(
                    "SELECT value FROM summary WHERE run_id = ? AND metric = ? AND scope = ?",
                    (run_id, metric, scope)).fetchone()
                cells.append("" if row is None or row[0] is None else fmt.format(row[0] * scale))
            print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
