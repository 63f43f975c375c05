#!/usr/bin/env python3
"""Measures what a policy written in Python costs per scheduling pass (bench/README.md, "Python
policies"): the C++ fcfs and sjf against their Python ports (clustersim.policies.Fcfs, Sjf, which
give the same schedules and fingerprints) on a seeded synthetic trace.

For each policy, the run's `wall_seconds` (ExecuteRun: parse + simulate + summary, before the
SQLite write) is taken as the best of --repeat runs; the overhead per pass is
(Python - C++) / passes, with passes from the runs table. The whole clustersim.run call (which
also writes and reads back the jobs and timeseries tables) is reported beside it.

Usage: PYTHONPATH=build/python python3 bench/python_policy_bench.py [--jobs 100000] [--load 0.9]
"""

import argparse
import os
import platform
import time

import clustersim
from clustersim.policies import Fcfs, Sjf


def measure(trace, cluster, policy, repeat):
    best = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = clustersim.run(trace=trace, cluster=cluster, policy=policy)
        call = time.perf_counter() - started
        if best is None or result.wall_seconds < best[0].wall_seconds:
            best = (result, call)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--nodes", type=int, default=128, help="nodes of 8 A100-80GB GPUs")
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", default=os.environ.get("CLUSTERSIM_BENCH_DATA",
                                                          "build/bench-data"))
    args = parser.parse_args()
    gpus = args.nodes * 8
    os.makedirs(args.data, exist_ok=True)
    trace = os.path.join(args.data, f"python_bench_{args.jobs}_{gpus}_{args.load}.csv")
    if not os.path.exists(trace):
        clustersim.generate_trace(trace, jobs=args.jobs, gpus=gpus, load=args.load, seed=42)
    cluster = {"nodes": [{"count": args.nodes, "gpu_type": "A100-80GB", "gpus_per_node": 8}]}
    now = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"{platform.node()} {os.cpu_count()} cores, {now}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"trace: {args.jobs} jobs, load {args.load} on {gpus} GPUs (seed 42); best of "
          f"{args.repeat}")
    print("| policy | passes | C++ wall s | Python wall s | ratio | overhead per pass | "
          "clustersim.run call s (C++ / Python) | same fingerprint |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, python_policy in (("fcfs", Fcfs), ("sjf", Sjf)):
        native, native_call = measure(trace, cluster, name, args.repeat)
        ported, ported_call = measure(trace, cluster, python_policy(), args.repeat)
        passes = int(native.run["passes"])
        overhead_us = (ported.wall_seconds - native.wall_seconds) / passes * 1e6
        print(f"| {name} | {passes:,} | {native.wall_seconds:.3f} | {ported.wall_seconds:.3f} | "
              f"{ported.wall_seconds / native.wall_seconds:.2f}x | {overhead_us:.2f} µs | "
              f"{native_call:.2f} / {ported_call:.2f} | "
              f"{'yes' if native.fingerprint == ported.fingerprint else 'NO'} |")


if __name__ == "__main__":
    main()
