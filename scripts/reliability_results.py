#!/usr/bin/python3
"""docs/reliability.md's reproductions and figure, with the default failure model (`fleet`).

1. Llama 3's interruption count: one 16,384-GPU job on a 24,576-GPU cluster of 8-GPU H100 nodes
   (Meta's RoCE cluster: 3,072 servers, two per top-of-rack switch; Dubey et al. 2024, section
   3.3.1), run for 54 days (--stop-time 54d), one `clustersim run` per seed. Prints the job's
   interruptions and ETTR, mean, sample standard deviation and range over the seeds.
2. The job-size trend of the mean time to failure: `clustersim reliability` for jobs of 8 to
   131,072 GPUs with ample spares (no waits), the simulated MTTF (hours holding GPUs between
   interruptions) over the seeds beside the model's.
3. ETTR against job size (1,024 to 16,384 GPUs): Daly checkpoints without spares, with spares
   (1 per 64 nodes), and fixed hourly checkpoints with spares; model and simulation. Writes
   docs/figures/reliability_ettr.png (Debian's python3-matplotlib) and prints the rows.

Every simulation checkpoints Llama 3 405B's state (5.67 TB: sim/models/memory_model.h
CheckpointBytes) at 2 TB/s, Tectonic's sustained throughput (Dubey et al. 2024, section 3.3.1):
2.8 s per save and per restore. Repairs take 4 h (the run's default --mttr).

Usage: scripts/reliability_results.py [--binary build/cli/clustersim] [--seeds 10]
       [--figure docs/figures/reliability_ettr.png] [--jobs 2]
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAVE_SECONDS = 405e9 * 14 / 2e12  # Llama-3-405B's checkpoint at 2 TB/s


def stats(values):
    mean = statistics.mean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return mean, sd, min(values), max(values)


def llama_count(binary, seeds, work):
    cluster = os.path.join(work, "meta_24k.json")
    with open(cluster, "w") as f:
        f.write('{"nodes":[{"count":3072,"gpu_type":"H100-80GB","gpus_per_node":8}],'
                '"network":{"nodes_per_rack":2}}')
    trace = os.path.join(work, "llama.csv")
    with open(trace, "w") as f:
        f.write("job_id,submit_time,gpus,duration\nllama3-405b,0,16384,%d\n" % (90 * 86400))
    counts, ettrs = [], []
    for seed in range(seeds):
        out = os.path.join(work, "llama_%d.sqlite" % seed)
        subprocess.run([binary, "run", "--trace", trace, "--cluster", cluster, "--runtime-model",
                        "trace", "--failure-model", "fleet", "--checkpoint-policy", "daly",
                        "--checkpoint-cost", str(SAVE_SECONDS), "--restore-cost",
                        str(SAVE_SECONDS), "--stop-time", "54d", "--seed", str(seed), "--out",
                        out, "--no-progress"], check=True, stdout=subprocess.DEVNULL)
        import sqlite3
        db = sqlite3.connect(out)
        value = lambda m: db.execute("SELECT value FROM summary WHERE metric = ? AND scope = 'all'",
                                     (m,)).fetchone()[0]
        counts.append(value("interruptions"))
        ettrs.append(value("ettr"))
        db.close()
    print("1. Llama 3 405B's job, 16,384 GPUs for 54 days on 24,576 (Table 5: 419 unexpected)")
    print("   interruptions per seed:", ", ".join("%d" % c for c in counts))
    print("   interruptions: mean %.1f, sd %.1f, range [%d, %d]" % stats(counts))
    print("   ETTR: mean %.3f, sd %.3f, range [%.3f, %.3f]" % stats(ettrs))


def reliability(binary, args, csv_path):
    subprocess.run([binary, "reliability", "--no-progress", "--model", "Llama-3-405B",
                    "--storage-gbps", "2000", "--csv", csv_path] + args, check=True,
                   stdout=subprocess.DEVNULL)
    with open(csv_path) as f:
        return list(csv.DictReader(f))


def mttf_trend(binary, seeds, jobs, work):
    print("\n2. Mean time to failure against job size (fleet rates; ample spares)")
    print("   %7s  %10s  %18s  %s" % ("GPUs", "model h", "simulated h (sd)", "simulated range"))
    # Enough days of work for about 100 interruptions per seed.
    sizes = [(8, 20000), (64, 3000), (1024, 200), (4096, 60), (16384, 15), (131072, 2)]
    for gpus, days in sizes:
        spares = max(2, gpus // 8 // 32)
        rows = reliability(binary, ["--gpus", str(gpus), "--spares", str(spares), "--days",
                                    str(days), "--seeds", str(seeds), "-j", str(jobs)],
                           os.path.join(work, "mttf_%d.csv" % gpus))
        sim = [float(r["sim_mtbf_hours"]) for r in rows]
        mean, sd, low, high = stats(sim)
        print("   %7d  %10.2f  %10.2f (%5.2f)  [%.2f, %.2f]" %
              (gpus, float(rows[0]["model_mtbf_hours"]), mean, sd, low, high))


def ettr_figure(binary, seeds, jobs, work, figure):
    print("\n3. ETTR against job size")
    sizes = [1024, 2048, 4096, 8192, 16384]
    configs = [
        ("Daly, no spares", ["--checkpoint-policy", "daly"], lambda nodes: 0),
        ("Daly, 1 spare per 64 nodes", ["--checkpoint-policy", "daly"], lambda nodes: nodes // 64),
        ("hourly checkpoints, 1 spare per 64 nodes",
         ["--checkpoint-policy", "fixed", "--checkpoint-interval", "1h"], lambda nodes: nodes // 64),
    ]
    results = []
    print("   %-42s %6s %6s %8s %8s %7s %15s" % ("configuration", "GPUs", "spares", "model",
                                                "sim mean", "sim sd", "sim range"))
    for label, options, spares_of in configs:
        points = []
        for gpus in sizes:
            spares = spares_of(gpus // 8)
            rows = reliability(binary, ["--gpus", str(gpus), "--spares", str(spares), "--days",
                                        "30", "--seeds", str(seeds), "-j", str(jobs)] + options,
                               os.path.join(work, "ettr_%d_%d_%s.csv" % (gpus, spares,
                                                                          options[1])))
            sim = [float(r["sim_ettr"]) for r in rows]
            mean, sd, low, high = stats(sim)
            model = float(rows[0]["model_ettr"])
            points.append((gpus, model, mean, low, high))
            print("   %-42s %6d %6d %8.3f %8.3f %7.3f  [%.3f, %.3f]" %
                  (label, gpus, spares, model, mean, sd, low, high))
        results.append((label, points))
    if not figure:
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    colors = ["#c0392b", "#2471a3", "#7d3c98"]
    for (label, points), color in zip(results, colors):
        x = [p[0] for p in points]
        ax.plot(x, [p[1] for p in points], "--", color=color, linewidth=1)
        ax.errorbar(x, [p[2] for p in points],
                    yerr=[[p[2] - p[3] for p in points], [p[4] - p[2] for p in points]],
                    fmt="o-", color=color, capsize=3, label=label)
    ax.plot([], [], "--", color="gray", label="closed-form model")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels(["%d" % s for s in sizes])
    ax.set_xlabel("job size (GPUs, H100, 8 per node)")
    ax.set_ylabel("effective training time ratio")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    ax.set_title("ETTR under Llama 3's failure rates (simulated: mean and range of %d seeds)" %
                 seeds, fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(figure, dpi=150)
    print("   wrote", figure)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "cli", "clustersim"))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--figure", default=os.path.join(ROOT, "docs", "figures",
                                                    "reliability_ettr.png"))
    args = ap.parse_args()
    if not os.path.exists(args.binary):
        sys.exit("no binary at %s (build first)" % args.binary)
    with tempfile.TemporaryDirectory() as work:
        llama_count(args.binary, args.seeds, work)
        mttf_trend(args.binary, args.seeds, args.jobs, work)
        ettr_figure(args.binary, args.seeds, args.jobs, work, args.figure)


if __name__ == "__main__":
    main()
