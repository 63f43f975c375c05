#!/usr/bin/python3
"""The README's GPU-sharing comparison on openb: GPU shares (two placements), MIG instances,
memory over-commit and defragmentation, on one cluster and one arrival sequence.

Setup (every run alike): the openb default pod list (traces/alibaba_gpu_v2023) on the cluster of
its node list (`trace cluster-from --keep-order`) with every GPU an A100-80GB, so that MIG is
possible at all (the list's own GPUs, P100 to A10, have no MIG); pods' CPUs and memory enforced;
the FGD paper's arrival-only protocol (docs/fgd-openb.md): `--inflate 1.3` shuffled by the seed,
one pod a second, `--on-no-fit skip`, `--no-departures`, fcfs; seed 42.

Configurations:
  shares, share-best-fit        GPU shares placed best-fit (the paper's BestFit)
  shares, frag-aware            GPU shares placed by FGD (score=sigmoid, fgd_classes=paper)
  MIG, --mig-from-shares        every GPU in MIG mode, each share as the smallest profile holding it
  over-commit 1.5, frag-aware   shares admitted up to 1.5 x a GPU (default memory peaks)
  first-fit (control)           whole-GPU packing without defragmentation
  first-fit --defrag            the same with defragmentation by migration

Columns: pods turned away (of those arrived), the GPU demand placed as the pods asked for it
(a share at its thousandths, whatever MIG profile or over-committed reservation it got) as a
share of the cluster's GPUs, out-of-memory kills and migrations.

Usage: scripts/openb_sharing.py [--binary build/cli/clustersim] [--work DIR]
"""
import argparse
import csv
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PODS = os.path.join(ROOT, "traces/alibaba_gpu_v2023/openb_pod_list_default.csv")
NODES = os.path.join(ROOT, "traces/alibaba_gpu_v2023/openb_node_list_gpu_node.csv")
PROTOCOL = ["--trace", PODS, "--policy", "fcfs", "--runtime-model", "trace", "--inflate", "1.3",
            "--on-no-fit", "skip", "--no-departures", "--seed", "42", "--no-progress"]
FGD = ["--placement", "frag-aware", "--param", "score=sigmoid", "--param", "fgd_classes=paper"]
CONFIGS = [
    ("shares, share-best-fit", False, ["--placement", "share-best-fit"]),
    ("shares, frag-aware (FGD)", False, FGD),
    ("MIG, --mig-from-shares", True, ["--placement", "first-fit", "--mig-from-shares"]),
    ("over-commit 1.5, frag-aware", False, FGD + ["--param", "overcommit=1.5"]),
    ("first-fit (control for --defrag)", False, ["--placement", "first-fit"]),
    ("first-fit --defrag", False, ["--placement", "first-fit", "--defrag"]),
]


def run(args):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{result.stderr}")


def pod_demand():
    """Thousandths of a GPU each pod asks for (num_gpu x 1000, or its share)."""
    demand = {}
    with open(PODS, newline="") as f:
        for pod in csv.DictReader(f):
            gpus, milli = int(pod["num_gpu"]), int(pod["gpu_milli"])
            demand[pod["name"]] = milli if gpus == 1 and milli < 1000 else 1000 * gpus
    return demand


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build/cli/clustersim"))
    parser.add_argument("--work", default=None)
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="openb_sharing_")
    os.makedirs(work, exist_ok=True)
    base = os.path.join(work, "openb_nodes.json")
    # G2 and G3 (unnamed models) mapped as docs/fgd-openb.md maps them; every type becomes an
    # A100-80GB below anyway.
    run([args.binary, "trace", "cluster-from", NODES, "--map-gpu", "G2=A100-40GB,G3=V100-32GB",
         "--keep-order", "--out", base])
    with open(base) as f:
        spec = json.load(f)
    gpus = 0
    for group in spec["nodes"]:
        group["gpu_type"] = "A100-80GB"
        gpus += group["count"] * group["gpus_per_node"]
    plain = os.path.join(work, "a100.json")
    with open(plain, "w") as f:
        json.dump(spec, f)
    for group in spec["nodes"]:
        group["mig"] = True
    mig = os.path.join(work, "a100_mig.json")
    with open(mig, "w") as f:
        json.dump(spec, f)
    demand = pod_demand()
    print(f"openb default pod list, inflated to 130 %, seed 42, on {gpus} A100-80GB GPUs "
          f"({len(spec['nodes'])} node groups of the openb node list); CPUs and memory enforced")
    print()
    print("| configuration | pods arrived | turned away | GPU demand placed (% of the GPUs) | "
          "OOM kills | migrations |")
    print("|---|---:|---:|---:|---:|---:|")
    for i, (name, uses_mig, extra) in enumerate(CONFIGS):
        db = os.path.join(work, f"run{i}.sqlite")
        if os.path.exists(db):
            os.remove(db)
        run([args.binary, "run", "--cluster", mig if uses_mig else plain, "--out", db] +
            PROTOCOL + extra)
        with sqlite3.connect(db) as con:
            jobs = con.execute("SELECT job_id, status, start_time FROM jobs").fetchall()
            summary = dict(con.execute(
                "SELECT metric, value FROM summary WHERE scope = 'all'").fetchall())
        placed = 0
        turned_away = 0
        for job_id, status, start in jobs:
            if status == "rejected":
                turned_away += 1
            elif start is not None:
                placed += demand[job_id.split("-inflated-")[0]]
        print(f"| {name} | {len(jobs):,} | {turned_away:,} | {100 * placed / (1000 * gpus):.1f} | "
              f"{summary.get('oom_kills', 0):,.0f} | {summary.get('migrations', 0):,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
