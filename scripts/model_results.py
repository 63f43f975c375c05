#!/usr/bin/python3
"""The model-aware results of docs/model-aware.md: fcfs, fair-share, easy and cosched on the bundled Philly
window and on the openb pod list, on the default mixed cluster, with models and batches assigned
(--assign-models, seed 0). Runs `clustersim compare` once per trace into one database and prints
a Markdown table per trace from its summary table.

Usage: scripts/model_results.py [--binary build/cli/clustersim] [--out results/models.sqlite]
"""
import argparse
import os
import sqlite3
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POLICIES = "fcfs,fair-share,easy,cosched"
SETUPS = [
    # (title, extra compare options)
    ("Bundled Philly window (traces/philly_default.csv, 11,160 jobs; no users in the trace, so "
     "fair-share accounts are virtual clusters), first-fit placement",
     ["--placements", "first-fit", "--param", "fair-share:by=vc"]),
    ("openb pod list (traces/alibaba_gpu_v2023/openb_pod_list_default.csv, 8,152 pods), "
     "arrivals 33x faster (--load-factor 33), frag-aware placement",
     ["--trace", os.path.join(ROOT, "traces/alibaba_gpu_v2023/openb_pod_list_default.csv"),
      "--load-factor", "33", "--placements", "frag-aware"]),
]
COLUMNS = [
    # (header, summary metric, scale, format)
    ("mean JCT h", "jct_seconds_mean", 1 / 3600, "{:.2f}"),
    ("p95 JCT h", "jct_seconds_p95", 1 / 3600, "{:.2f}"),
    ("mean wait h", "wait_seconds_mean", 1 / 3600, "{:.2f}"),
    ("makespan h", "makespan_seconds", 1 / 3600, "{:.0f}"),
    ("busy GPU-h", "busy_gpu_hours", 1, "{:,.0f}"),
    ("GPU util %", "gpu_utilization", 100, "{:.1f}"),
    ("memory util %", "memory_utilization", 100, "{:.1f}"),
    ("OOM rate %", "oom_rate", 100, "{:.2f}"),
    ("oom-failed", "jobs_failed", 1, "{:.0f}"),
    ("I_frag", "i_frag_mean", 1, "{:.3f}"),
    ("FGD frag.", "fgd_fragmentation", 1, "{:.3f}"),
    ("F_mem", "f_mem", 1, "{:.4f}"),
]


def metric(db, run_id, name):
    """The run's summary value of `name` over the whole cluster (scope 'all'), None if absent."""
    row = db.execute("SELECT value FROM summary WHERE run_id = ? AND metric = ? AND scope = 'all'",
                     (run_id, name)).fetchone()
    return None if row is None else row[0]


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build/cli/clustersim"))
    parser.add_argument("--out", default=os.path.join(ROOT, "results/models.sqlite"))
    args = parser.parse_args()
    if os.path.exists(args.out):
        os.remove(args.out)
    for title, options in SETUPS:
        before = 0
        if os.path.exists(args.out):
            with sqlite3.connect(args.out) as db:
                before = db.execute("SELECT COALESCE(MAX(run_id), 0) FROM runs").fetchone()[0]
        command = [args.binary, "compare", "--policies", POLICIES, "--assign-models", "--out",
                   args.out, "--jobs", "2"] + options
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"{' '.join(command)} failed:\n{result.stderr}")
        with sqlite3.connect(args.out) as db:
            runs = db.execute("SELECT run_id, policy FROM runs WHERE run_id > ? ORDER BY run_id",
                              (before,)).fetchall()
            print(f"**{title}**\n")
            print("| policy | " + " | ".join(c[0] for c in COLUMNS) + " |")
            print("|---|" + "---:|" * len(COLUMNS))
            for run_id, policy in runs:
                cells = []
                for _, name, scale, fmt in COLUMNS:
                    value = metric(db, run_id, name)
                    cells.append("-" if value is None else fmt.format(value * scale))
                print(f"| {policy} | " + " | ".join(cells) + " |")
            print()


if __name__ == "__main__":
    main()
