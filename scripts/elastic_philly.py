#!/usr/bin/python3
"""docs/autoscaling.md's comparison on the bundled Philly window: a fixed cluster against an
elastic one, on-demand and spot, with cost and waits side by side, and its figure.

Every run: traces/philly_default.csv (11,160 jobs, two weeks), fcfs, first-fit, A100-80GB nodes
of 8 GPUs at the catalog's on-demand price ($5.12 per GPU-hour), checkpoints every 30 minutes
(30 s to save, 60 s to restore: what a job loses when its node is taken back), seed 0.

Configurations:
  fixed 32                 32 fixed nodes
  fixed 16 + on-demand     16 fixed nodes + a pool of 0-16 on-demand nodes, cluster-autoscaler
  fixed 16 + spot          the pool as spot nodes: $1.54 per GPU-hour (70 % off on-demand, inside
                           the published 60-91 % discounts), 0.44 interruptions per node-hour (the
                           median zone of the public V100 spot preemption traces of Wu et al.,
                           NSDI'24), 30 s notice
  fixed 16 + spot, 0.06/h  the same at the calmest zone of those traces
  spot, no interruptions   control: the spot price without interruptions (what the price alone
                           changes; the difference to "fixed 16 + spot" is what interruptions cost)

Usage: scripts/elastic_philly.py [--binary build/cli/clustersim] [--work DIR] [--figure PNG]
Prints a Markdown table; with --figure draws cost against waits.
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXED = {"name": "fixed", "gpu_type": "A100-80GB", "gpus_per_node": 8}
POOL = {"name": "pool", "count": 0, "gpu_type": "A100-80GB", "gpus_per_node": 8,
        "autoscale": {"min": 0, "max": 16}}
SPOT_PRICE = round(5.12 * 0.3, 2)


def spot(rate):
    group = dict(POOL)
    group["spot"] = {"price_per_gpu_hour": SPOT_PRICE, "interruptions_per_hour": rate,
                     "notice_seconds": 30}
    return group


CONFIGS = [
    ("fixed 32", [dict(FIXED, count=32)]),
    ("fixed 16 + on-demand pool", [dict(FIXED, count=16), POOL]),
    ("fixed 16 + spot pool, 0.44/h", [dict(FIXED, count=16), spot(0.44)]),
    ("fixed 16 + spot pool, 0.06/h", [dict(FIXED, count=16), spot(0.06)]),
    ("spot pool, no interruptions (control)", [dict(FIXED, count=16), spot(0)]),
]
RUN = ["--trace", os.path.join(ROOT, "traces/philly_default.csv"), "--policy", "fcfs",
       "--runtime-model", "trace",
       "--placement", "first-fit", "--checkpoint-interval", "1800", "--checkpoint-cost", "30",
       "--restore-cost", "60", "--seed", "0", "--no-progress"]


def summary(db, run_id):
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT metric, value FROM summary WHERE run_id = ? AND scope = 'all'",
                           (run_id,)).fetchall()
    return dict(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build/cli/clustersim"))
    parser.add_argument("--work", default=None)
    parser.add_argument("--figure", default=None)
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="elastic_philly_")
    os.makedirs(work, exist_ok=True)
    db = os.path.join(work, "elastic.sqlite")
    if os.path.exists(db):
        os.remove(db)
    results = []
    for i, (name, groups) in enumerate(CONFIGS):
        spec = os.path.join(work, f"cluster{i}.json")
        with open(spec, "w") as f:
            json.dump({"nodes": groups}, f)
        pooled = any("autoscale" in g for g in groups)
        command = [args.binary, "run", "--cluster", spec, "--out", db] + RUN
        if pooled:
            command += ["--autoscaler", "cluster-autoscaler"]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        s = summary(db, i + 1)
        results.append((name, s))
    print("| configuration | billed GPU-h | billed cost $ | busy share of billed % | wait mean h | "
          "wait p95 h | JCT mean h | spot interruptions | GPU-h lost to them |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, s in results:
        billed_hours = s.get("billed_gpu_hours")
        # A cluster without pools or spot has no billed rows: it is billed for all of its GPUs.
        if billed_hours is None:
            billed_hours = s["busy_gpu_hours"] / s["gpu_utilization"]
        cost = s.get("billed_cost_usd", s.get("cost_usd", float("nan")))
        busy = s.get("billed_gpu_utilization", s.get("gpu_utilization", float("nan")))
        print(f"| {name} | {billed_hours:,.0f} | {cost:,.0f} | {100 * busy:.1f} | "
              f"{s['wait_seconds_mean'] / 3600:.2f} | {s['wait_seconds_p95'] / 3600:.2f} | "
              f"{s['jct_seconds_mean'] / 3600:.2f} | "
              f"{s.get('failures', 0):.0f} | {s.get('lost_gpu_hours', 0):.1f} |")
    if args.figure:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        names = ["fixed 32", "16 fixed\n+ on-demand\npool", "16 fixed\n+ spot pool\n0.44/h",
                 "16 fixed\n+ spot pool\n0.06/h", "16 fixed\n+ spot pool,\nno interruptions\n(control)"]
        cost = [s.get("billed_cost_usd", s.get("cost_usd")) / 1000 for _, s in results]
        mean = [s["wait_seconds_mean"] / 60 for _, s in results]
        p95 = [s["wait_seconds_p95"] / 60 for _, s in results]
        fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.6))
        a.bar(range(len(names)), cost, color="#4c72b0")
        a.set_ylabel("cost billed, thousand USD (14 days)")
        a.set_xticks(range(len(names)), names, fontsize=7.5)
        width = 0.38
        b.bar([x - width / 2 for x in range(len(names))], mean, width, label="mean")
        b.bar([x + width / 2 for x in range(len(names))], p95, width, label="p95")
        b.set_ylabel("first-start wait, minutes")
        b.set_xticks(range(len(names)), names, fontsize=7.5)
        b.legend()
        fig.suptitle("Philly window (11,160 jobs), fcfs on A100-80GB nodes: fixed against elastic")
        fig.tight_layout()
        fig.savefig(args.figure, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
