#!/usr/bin/python3
"""The openb results with CPUs and host memory of docs/fgd-openb.md (docs/resources.md): the openb pod list
on the cluster of its own node list (`trace cluster-from`, G2 -> A100-40GB, G3 -> V100-32GB),
fcfs + frag-aware, with the pods' CPU and memory demands and without them (--no-host-demands),
placed arrival only as the FGD paper (Weng et al., USENIX ATC'23) places pods: the pods shuffled
(seeds 42..51, as the paper's runs), one a second, none departing. fcfs stops at the first pod
that fits nowhere; the table gives the share of the cluster's GPU capacity that had arrived (and
was allocated) then, and the GPUs stranded by CPUs or memory at that moment. With --paper-csv the
paper's own curves (its artifact's experiments/analysis/expected_results/
analysis_allo_discrete.csv) are summarized beside them.

Usage: scripts/openb_cpu_results.py [--binary build/cli/clustersim] [--work DIR]
           [--paper-csv analysis_allo_discrete.csv]
"""
import argparse
import csv
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PODS = os.path.join(ROOT, "traces/alibaba_gpu_v2023/openb_pod_list_default.csv")
NODES = os.path.join(ROOT, "traces/alibaba_gpu_v2023/openb_node_list_gpu_node.csv")
SEEDS = range(42, 52)
NO_DEPARTURE = 1e9  # seconds: longer than any run here


def run(binary, args):
    result = subprocess.run([binary] + args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{binary} {' '.join(args)} failed:\n{result.stderr}")
    return result


def shuffled_trace(seed, path):
    """The pod list shuffled, pod i arriving at i seconds and never leaving; returns the GPU
    demand (thousandths) of each pod in arrival order."""
    with open(PODS, newline="") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames
        pods = list(reader)
    random.Random(seed).shuffle(pods)
    demand = []
    for i, pod in enumerate(pods):
        pod["creation_time"] = pod["scheduled_time"] = str(i)
        pod["deletion_time"] = str(i + NO_DEPARTURE)
        gpus = int(pod["num_gpu"])
        demand.append(int(pod["gpu_milli"]) if gpus == 1 else 1000 * gpus)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(pods)
    return demand


def arrival_only(binary, cluster, work, total_gpus):
    results = {}  # label -> list of (arrived %, allocated %, cpu-stranded GPUs)
    for seed in SEEDS:
        trace = os.path.join(work, f"openb_shuffled_{seed}.csv")
        demand = shuffled_trace(seed, trace)
        for label, extra in (("with CPUs and memory", []),
                             ("GPUs only", ["--no-host-demands"])):
            out = os.path.join(work, f"arrival_{seed}_{len(extra)}.sqlite")
            if os.path.exists(out):
                os.remove(out)
            run(binary, ["run", "--trace", trace, "--cluster", cluster, "--placement",
                         "frag-aware", "--runtime-model", "trace", "--interval", "1",
                         "--stop-time", str(len(demand) + 1), "--out", out, "--no-progress"] + extra)
            with sqlite3.connect(out) as db:
                first = db.execute(
                    "SELECT MIN(submit_time) FROM jobs WHERE status != 'rejected' AND "
                    "start_time IS NULL").fetchone()[0]
                if first is None:
                    continue  # every pod placed
                t = int(first)
                arrived = 100 * sum(demand[:t]) / (1000 * total_gpus)
                row = db.execute(
                    "SELECT busy_gpus, cpu_stranded_gpus FROM timeseries WHERE gpu_type = 'all' "
                    "AND t_start <= ? AND t_end > ?", (t, t)).fetchone()
                allocated = 100 * row[0] / total_gpus
                results.setdefault(label, []).append((arrived, allocated, row[1] or 0.0))
    print("| arrival only, fcfs + frag-aware, 10 shuffles | arrived GPU % at the first failure "
          "| allocated GPU % then | CPU-stranded GPUs then |")
    print("|---|---:|---:|---:|")
    for label, values in results.items():
        cols = list(zip(*values))
        cells = [f"{statistics.mean(c):.1f} ({min(c):.1f}-{max(c):.1f})" for c in cols]
        print(f"| {label} | " + " | ".join(cells) + " |")


def paper(paper_csv):
    rows = [r for r in csv.DictReader(open(paper_csv))
            if r["workload"] == "openb_pod_list_default"]
    print("| the paper's runs (openb_pod_list_default, 10 seeds) | allocated GPU % at 100 % "
          "arrived | first arrived % where allocation lags 1 point |")
    print("|---|---:|---:|")
    for policy in sorted({r["sc_policy"] for r in rows}):
        at100, lag = [], []
        for r in rows:
            if r["sc_policy"] != policy:
                continue
            values = [float(r[str(i)]) for i in range(131) if r.get(str(i))]
            at100.append(values[100])
            lag.append(next(i for i, v in enumerate(values) if v < i - 1))
        print(f"| {policy} | {statistics.mean(at100):.2f} | {statistics.mean(lag):.1f} |")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build/cli/clustersim"))
    parser.add_argument("--work", default=None)
    parser.add_argument("--paper-csv", default=None,
                        help="analysis_allo_discrete.csv of hkust-adsl/kubernetes-scheduler-"
                             "simulator (experiments/analysis/expected_results/)")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="openb_cpu_")
    os.makedirs(work, exist_ok=True)
    cluster = os.path.join(work, "openb.json")
    run(args.binary, ["trace", "cluster-from", NODES, "--map-gpu", "G2=A100-40GB,G3=V100-32GB",
                      "--out", cluster])
    arrival_only(args.binary, cluster, work, total_gpus=6212)
    if args.paper_csv:
        print()
        paper(args.paper_csv)


if __name__ == "__main__":
    main()
