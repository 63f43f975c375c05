#!/usr/bin/python3
"""The cosched ablation (docs/model-aware.md, docs/cosched-ablation.md): how much of cosched's gain over fcfs is batch tuning, how much
GPU-type choice and how much co-scheduling. Same trace and cluster for every run (the bundled
Philly window on the default mixed cluster, models and batches assigned with --assign-models),
each configuration over the same seeds 0..N-1 (--seeds N, default 5: the seed draws each job's
model and users' batch), at the trace's own arrival rate and at twice it:

  fcfs               users' batches, first-fit over GPU types in catalog order
  + optimal batch    every job at its goodput-optimal per-GPU batch on the GPUs it asked for
                     (--batch-choice optimal): batch tuning alone
  + fastest type     the GPU type with the highest predicted rate where the user's batch fits
                     (--placement fastest-type), users' batches: type choice alone
  + both             --batch-choice optimal --placement fastest-type: the model's gains without
                     co-scheduling
  cosched            joint choice of type, GPU count, batch and sharing

Each is run for the three rules of users' batches (--user-batches recipe, reference, uniform;
workloads/model_assignment.h) as the sensitivity study. Prints one Markdown table per arrival
rate and writes every run to one database. A cell is the mean over the seeds and the sample
standard deviation (mean ± sd); the change against fcfs is computed per seed (the same seed's fcfs
run) and shown as its mean and the range over the seeds [min, max].

Usage: scripts/cosched_ablation.py [--binary build/cli/clustersim]
                                   [--out results/cosched_ablation.sqlite] [--seeds 5]
"""
import argparse
import os
import sqlite3
import statistics
import subprocess
import sys

import model_results  # this folder: the shared columns and summary query

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = [
    # (name, run options)
    ("fcfs", ["--policy", "fcfs", "--placement", "first-fit"]),
    ("+ optimal batch", ["--policy", "fcfs", "--placement", "first-fit",
                         "--batch-choice", "optimal"]),
    ("+ fastest type", ["--policy", "fcfs", "--placement", "fastest-type"]),
    ("+ both", ["--policy", "fcfs", "--placement", "fastest-type", "--batch-choice", "optimal"]),
    ("cosched", ["--policy", "cosched", "--placement", "first-fit"]),
]
RULES = ["recipe", "reference", "uniform"]
LOADS = [("trace arrival rate", "1"), ("arrivals twice as fast (--load-factor 2)", "2")]
# The columns of the model-aware results (scripts/model_results.py) that the ablation shows.
COLUMNS = [c for c in model_results.COLUMNS
           if c[1] in ("jct_seconds_mean", "jct_seconds_p95", "wait_seconds_mean",
                       "makespan_seconds", "busy_gpu_hours", "oom_rate", "jobs_failed")]
metric = model_results.metric


def mean_sd(values, scale, fmt):
    values = [v * scale for v in values]
    mean = statistics.fmean(values)
    if len(values) < 2:
        return fmt.format(mean)
    return fmt.format(mean) + " ± " + fmt.format(statistics.stdev(values))


def change(values, base):
    ratios = [100 * (v / b - 1) for v, b in zip(values, base)]
    if len(ratios) < 2:
        return f"{ratios[0]:+.0f} %"
    return f"{statistics.fmean(ratios):+.0f} % [{min(ratios):+.0f}, {max(ratios):+.0f}]"


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build/cli/clustersim"))
    parser.add_argument("--out", default=os.path.join(ROOT, "results/cosched_ablation.sqlite"))
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 (default 5)")
    args = parser.parse_args()
    if args.seeds < 1:
        sys.exit("--seeds must be at least 1")
    if os.path.exists(args.out):
        os.remove(args.out)
    seeds = [str(s) for s in range(args.seeds)]
    seed_text = "seed 0" if args.seeds == 1 else f"seeds 0-{args.seeds - 1}, mean ± sd"
    for title, load in LOADS:
        print(f"**Bundled Philly window, default mixed cluster (144 GPUs), {seed_text}, "
              f"{title}**\n")
        print("| users' batches | configuration | " + " | ".join(c[0] for c in COLUMNS) +
              " | mean JCT vs fcfs | busy GPU-h vs fcfs |")
        print("|---|---|" + "---:|" * (len(COLUMNS) + 2))
        for rule in RULES:
            base = None
            for name, options in CONFIGS:
                per_seed = []  # per seed, the COLUMNS' values
                for seed in seeds:
                    command = [args.binary, "run", "--assign-models", "--seed", seed,
                               "--user-batches", rule, "--load-factor", load, "--no-progress",
                               "--out", args.out] + options
                    result = subprocess.run(command, capture_output=True, text=True)
                    if result.returncode != 0:
                        sys.exit(f"{' '.join(command)} failed:\n{result.stderr}")
                    with sqlite3.connect(args.out) as db:
                        run_id = db.execute("SELECT MAX(run_id) FROM runs").fetchone()[0]
                        per_seed.append([metric(db, run_id, m) for _, m, _, _ in COLUMNS])
                columns = list(zip(*per_seed))  # per column, the seeds' values
                cells = ["-" if None in values else mean_sd(values, scale, fmt)
                         for values, (_, _, scale, fmt) in zip(columns, COLUMNS)]
                if base is None:
                    base = columns
                    cells += ["", ""]
                else:
                    cells += [change(columns[i], base[i]) for i in (0, 4)]
                print(f"| {rule} | {name} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main()
