#!/usr/bin/python3
"""The site-model results of docs/validation.md#four-archive-logs: four logs of the Parallel
Workloads Archive (https://www.cs.huji.ac.il/labs/parallel/workload/logs.html), each calibrated
with `clustersim validate --calibrate` on the jobs submitted in its first half and compared on the
second half, twice: with the site model (`clustersim site-from --split 0.5`, which reads only the
first half's record, plus the edits below, each from the archive's description of the log) and
without it (the control: the machine's size from the log's header and nothing else). Both
searches also choose the policy (easy or multifactor).

The logs are not part of the repository. Download the cleaned versions from the archive into one
folder (gzip as downloaded is fine):
  KTH-SP2-1996-2.1-cln.swf.gz, SDSC-BLUE-2000-4.2-cln.swf.gz, HPC2N-2002-2.2-cln.swf.gz,
  CEA-Curie-2011-2.1-cln.swf.gz
A file whose name starts with the log's name (KTH-SP2, SDSC-BLUE, HPC2N, CEA-Curie) is taken.

Usage: scripts/pwa_site_results.py --logs DIR [--work DIR] [--binary build/cli/clustersim]
Prints a Markdown table of the held-out figures and the chosen settings; the databases (every
search run, the evaluation last) and the specs stay in --work.
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def kth_edit(spec):
    # The archive's description of KTH-SP2: weekdays 07:00-16:00 jobs of at most 4 h, nights
    # 15 h, weekends (Friday 16:00 to Monday 07:00) 60 h; until 1997-06-06 no job could run
    # across a weekday 07:00 or 16:00. The scheduler's clock is the trace clock read as UTC.
    site = spec["site"]
    site["clock"] = {"utc_offset_hours": 0}
    part = site["partitions"][0]
    part["run_windows"] = [
        {"days": "Fri", "start": "16:00", "end": "00:00", "max_time": "60h"},
        {"days": "Sat,Sun", "max_time": "60h"},
        {"days": "Mon", "start": "00:00", "end": "07:00", "max_time": "60h"},
        {"days": "Mon-Fri", "start": "07:00", "end": "16:00", "max_time": "4h"},
        {"days": "Mon-Thu", "start": "16:00", "end": "07:00", "max_time": "15h"},
    ]
    part["drains"] = [{"days": "Mon-Fri", "at": ["07:00", "16:00"], "until": "1997-06-06"}]


def sdsc_edit(spec):
    # The interactive queue (0) ran beside the 144 batch nodes: with it the recorded use exceeds
    # the header's 1,152 processors 2.6-fold. site-from takes the queue "normal" for the one
    # apart instead; the batch queues share the batch nodes (whole nodes of 8 processors).
    spec["nodes"] = [
        {"name": "batch", "count": 144, "gpu_type": "V100-16GB", "gpus_per_node": 1},
        {"name": "interactive", "count": 256, "gpu_type": "V100-16GB", "gpus_per_node": 1},
    ]
    spec["site"]["partitions"] = [
        {"name": "batch", "nodes": ["batch"], "processors_per_gpu": 8, "default": True},
        {"name": "interactive", "queues": ["interactive"], "nodes": ["interactive"],
         "processors_per_gpu": 8},
    ]


def curie_edit(spec):
    # Slurm (the header: converted from sacct): a per-user running-job limit. Users of the log
    # reach 128 running jobs and none more; site-from's rule (several users at one maximum in a
    # quarter) misses it.
    spec["site"]["user_limits"] = [{"max_running_jobs": 128}]


LOGS = [
    # (name, control cluster (the header's size), site edit, site search axes)
    ("KTH-SP2", [{"name": "n", "count": 100, "gpu_type": "V100-16GB", "gpus_per_node": 1}],
     kth_edit, ["site.scheduler.cycle=0,120,300", "site.scheduler.on_end=false,true"]),
    ("SDSC-BLUE", [{"name": "n", "count": 144, "gpu_type": "V100-16GB", "gpus_per_node": 8}],
     sdsc_edit, ["nodes[0].count=144,142,136,128"]),
    ("HPC2N", [{"name": "n", "count": 240, "gpu_type": "V100-16GB", "gpus_per_node": 1}],
     None, ["site.user_limits[0].max_running_jobs=60,30,15"]),
    ("CEA-Curie", [{"name": "n", "count": 5832, "gpu_type": "V100-16GB", "gpus_per_node": 16}],
     curie_edit, ["site.user_limits[0].max_running_jobs=128,64,32"]),
]
POLICY_AXIS = "policy=easy,multifactor"
SPLIT = 0.5  # share of each log's jobs, by submission, that site-from and the search see


def find_log(folder, name):
    for f in sorted(os.listdir(folder)):
        if f.startswith(name + "-") or f.startswith(name + "."):
            return os.path.join(folder, f)
    sys.exit(f"no log named {name}* in {folder}")


def calibrate(binary, log, spec_path, axes, out):
    if os.path.exists(out):
        os.remove(out)
    cmd = [binary, "validate", "--calibrate", "--split", str(SPLIT), "--trace", log,
           "--cluster", spec_path, "--policy", "easy", "--interval", "1d", "-j", "2", "--out", out,
           "--search", POLICY_AXIS]
    for axis in axes:
        cmd += ["--search", axis]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    db = sqlite3.connect(out)
    run, policy, cluster = db.execute(
        "SELECT run_id, policy, cluster_json FROM runs ORDER BY run_id DESC LIMIT 1").fetchone()
    rows = {m: (s, r, v) for m, s, r, v in db.execute(
        "SELECT metric, simulated, recorded, value FROM validation WHERE run_id = ? AND "
        "scope = 'all'", (run,))}
    return policy, json.loads(cluster), rows


def chosen_site(axes, cluster):
    parts = []
    for axis in axes:
        key = axis.split("=")[0]
        value = cluster
        for step in key.replace("]", "").replace("[", ".").split("."):
            value = value[int(step)] if isinstance(value, list) else value.get(step)
            if value is None:
                break
        parts.append(f"{key}={value}")
    return ", ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", required=True)
    ap.add_argument("--work", default="results/pwa-site")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "cli", "clustersim"))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    print("| log | model | chosen | KS | mean wait h (rec) | median wait h (rec) "
          "| daily util. corr |")
    print("|---|---|---|---|---|---|---|")
    for name, plain_nodes, edit, axes in LOGS:
        log = find_log(a.logs, name)
        plain = os.path.join(a.work, name + ".plain.json")
        with open(plain, "w") as f:
            json.dump({"nodes": plain_nodes}, f, indent=1)
        site = os.path.join(a.work, name + ".site.json")
        # Inferred from the calibration half only (the record of the held-out half is not read).
        subprocess.run([a.binary, "site-from", log, "--split", str(SPLIT), "--out", site],
                       check=True, stdout=subprocess.DEVNULL)
        if edit:
            with open(site) as f:
                spec = json.load(f)
            edit(spec)
            with open(site, "w") as f:
                json.dump(spec, f, indent=1)
        for label, spec_path, spec_axes in (("control", plain, []), ("site", site, axes)):
            out = os.path.join(a.work, f"{name}.{label}.sqlite")
            policy, cluster, rows = calibrate(a.binary, log, spec_path, spec_axes, out)
            chosen = policy + (", " + chosen_site(spec_axes, cluster) if spec_axes else "")
            mean, median = rows["wait_mean_hours"], rows["wait_p50_hours"]
            print(f"| {name} | {label} | {chosen} | {rows['wait_ks'][2]:.3f} "
                  f"| {mean[0]:.2f} ({mean[1]:.2f}) | {median[0]:.3f} ({median[1]:.3f}) "
                  f"| {rows['utilization_correlation'][2]:.3f} |", flush=True)


if __name__ == "__main__":
    main()
