#!/usr/bin/python3
"""docs/deadlines.md's table: SLA violations and utilization of the deadline-aware policies and
their controls on the bundled Philly window.

Setup (every run alike): traces/philly_default.csv (11,160 jobs, two weeks) on the default mixed
cluster (144 GPUs), runtime model `trace` (each job runs its trace duration: offered load 0.89),
first-fit placement, deadlines by `--deadlines factor=1.5:4,share=0.5` (half of the jobs, drawn
by the seed, get a deadline lambda x duration after their submission, lambda uniform in
[1.5, 4]; the other half are best effort), seeds 0..N-1 (--seeds, default 3; a seed draws the
deadlines). A cell is the mean over the seeds ± the sample standard deviation.

Configurations:
  fcfs, easy                        no deadline information
  edf                               earliest deadline first, EASY backfilling
  edf order=duration                control: the same backfilling, shortest job first
  deadline-elastic                  admission control + fewest GPUs (ElasticFlow-like)
  deadline-elastic declined=best-effort   control: nothing declined
  deadline-elastic shares=whole     control: admission control on whole requests
  weighted (balanced)               w_wait 0.4, w_util 0.3, w_throughput 0.3
  weighted (SLA)                    w_sla 0.6, w_wait 0.2, w_util 0.2

Usage: scripts/deadline_table.py [--binary build/cli/clustersim] [--out DB] [--seeds 3]
"""
import argparse
import os
import sqlite3
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULE = "factor=1.5:4,share=0.5"
CONFIGS = [
    ("fcfs", ["--policy", "fcfs"]),
    ("easy", ["--policy", "easy"]),
    ("edf", ["--policy", "edf"]),
    ("edf order=duration (control)", ["--policy", "edf", "--param", "order=duration"]),
    ("deadline-elastic", ["--policy", "deadline-elastic"]),
    ("deadline-elastic declined=best-effort (control)",
     ["--policy", "deadline-elastic", "--param", "declined=best-effort"]),
    ("deadline-elastic shares=whole (control)",
     ["--policy", "deadline-elastic", "--param", "shares=whole"]),
    ("weighted, balanced", ["--policy", "weighted", "--param", "w_wait=0.4", "--param",
                            "w_util=0.3", "--param", "w_throughput=0.3", "--param", "w_fair=0",
                            "--param", "w_sla=0"]),
    ("weighted, SLA", ["--policy", "weighted", "--param", "w_sla=0.6", "--param", "w_wait=0.2",
                       "--param", "w_util=0.2", "--param", "w_throughput=0", "--param",
                       "w_fair=0"]),
]
# (header, summary metric, scale, format)
COLUMNS = [
    ("SLA violated %", "sla_violation_rate", 100, "{:.1f}"),
    ("declined", "sla_rejected", 1, "{:.0f}"),
    ("late", "sla_late", 1, "{:.0f}"),
    ("lateness of SLA jobs, mean (h)", "sla_lateness_seconds_mean", 1 / 3600, "{:.2f}"),
    ("utilization %", "gpu_utilization", 100, "{:.1f}"),
    ("wait, mean (h)", "wait_seconds_mean", 1 / 3600, "{:.2f}"),
    ("JCT, mean (h)", "jct_seconds_mean", 1 / 3600, "{:.2f}"),
]


def metric(db, run_id, name):
    row = db.execute("SELECT value FROM summary WHERE run_id = ? AND metric = ? AND scope = 'all'",
                     (run_id, name)).fetchone()
    return None if row is None else row[0]


def cell(values, scale, fmt):
    values = [v * scale for v in values]
    mean = statistics.fmean(values)
    if len(values) < 2:
        return fmt.format(mean)
    return fmt.format(mean) + " ± " + fmt.format(statistics.stdev(values))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build/cli/clustersim"))
    parser.add_argument("--out", default=os.path.join(ROOT, "results/deadline_table.sqlite"))
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    if args.seeds < 1:
        sys.exit("--seeds must be at least 1")
    if os.path.exists(args.out):
        os.remove(args.out)
    seeds = [str(s) for s in range(args.seeds)]
    print(f"**Bundled Philly window, default cluster (144 GPUs), runtime `trace`, `--deadlines "
          f"{RULE}`, seeds 0-{args.seeds - 1} (mean ± sd)**\n")
    print("| policy | " + " | ".join(c[0] for c in COLUMNS) + " |")
    print("|---|" + "---:|" * len(COLUMNS))
    for name, options in CONFIGS:
        per_seed = []
        for seed in seeds:
            command = [args.binary, "run", "--runtime-model", "trace", "--deadlines", RULE,
                       "--seed", seed, "--no-progress", "--out", args.out] + options
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode != 0:
                sys.exit(f"{' '.join(command)} failed:\n{result.stderr}")
            with sqlite3.connect(args.out) as db:
                run_id = db.execute("SELECT MAX(run_id) FROM runs").fetchone()[0]
                per_seed.append([metric(db, run_id, m) for _, m, _, _ in COLUMNS])
        columns = list(zip(*per_seed))
        cells = ["-" if None in values else cell(values, scale, fmt)
                 for values, (_, _, scale, fmt) in zip(columns, COLUMNS)]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
