#!/usr/bin/python3
"""Figures from a clustersim results database (README: Figures; schema in results/README.md).

usage: scripts/plot.py DB [--out DIR] [--run ID ...] [--dpi N]

Writes each figure as DIR/NAME.png and DIR/NAME.pdf (DIR defaults to a `figures` folder next to
the database), one line or bar per run (all runs, or the --run ids):

  jct_cdf            CDF of job completion time (jobs that ended), log time axis
  wait_cdf           CDF of queueing delay (jobs that started), symmetric-log time axis (waits of 0
                     are common)
  timelines          utilization, queue length and fragmentation (stranded GPUs, I_frag) over
                     simulated time, from the `timeseries` rows of scope 'all'
  gpu_type_utilization  utilization per GPU type (summary gpu_utilization per scope), grouped bars
  headline           bar charts of headline figures from `summary`: mean and p95 JCT and wait,
                     utilization, makespan, throughput, stranded GPUs, cost

Only the standard library (sqlite3) and Debian's python3-matplotlib; no network. Exit code 2 for a
missing or unreadable database or an unknown run id.
"""

import argparse
import os
import sqlite3
import sys

plt = None  # matplotlib.pyplot, imported once the arguments and database are known good (slow)

HOUR = 3600.0
DAY = 86400.0

# Headline figures: (summary metric, axis label, scale divisor).
HEADLINE = [
    ("jct_seconds_mean", "mean JCT (h)", HOUR),
    ("jct_seconds_p95", "p95 JCT (h)", HOUR),
    ("wait_seconds_mean", "mean wait (h)", HOUR),
    ("wait_seconds_p95", "p95 wait (h)", HOUR),
    ("gpu_utilization", "GPU utilization", 1.0),
    ("makespan_seconds", "makespan (days)", DAY),
    ("throughput_jobs_per_hour", "throughput (jobs/h)", 1.0),
    ("stranded_gpus_mean", "stranded GPUs (mean)", 1.0),
    ("cost_usd", "cluster cost (k$)", 1000.0),
]


def fail(message):
    print(f"plot.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def open_db(path):
    if not os.path.isfile(path):
        fail(f"{path}: no such database")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.execute("SELECT run_id FROM runs LIMIT 1").fetchall()
    except sqlite3.Error as e:
        fail(f"{path}: not a clustersim database ({e})")
    return db


def run_labels(db, wanted):
    rows = db.execute(
        "SELECT run_id, policy, placement, cluster_spec, runtime_model FROM runs ORDER BY run_id"
    ).fetchall()
    known = {r[0]: r for r in rows}
    ids = wanted or sorted(known)
    for run_id in ids:
        if run_id not in known:
            fail(f"no run {run_id} in the database (runs: {', '.join(map(str, sorted(known)))})")
    if not ids:
        fail("the database holds no runs")
    labels = {}
    for run_id in ids:
        _, policy, placement, cluster, _ = known[run_id]
        cluster = cluster.replace("preset:", "")
        if len(cluster) > 24:
            cluster = "..." + cluster[-21:]
        labels[run_id] = f"{run_id}: {policy}/{placement} on {cluster}"
    return ids, labels


def save(fig, out_dir, name, dpi):
    paths = []
    for ext in ("png", "pdf"):
        path = os.path.join(out_dir, f"{name}.{ext}")
        fig.savefig(path, dpi=dpi, bbox_inches="tight")
        paths.append(path)
    plt.close(fig)
    return paths


def cdf_points(values):
    values = sorted(values)
    n = len(values)
    return values, [(i + 1) / n for i in range(n)]


def plot_cdf(db, ids, labels, column, where, title, xlabel, log_mode):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    plotted = False
    for run_id in ids:
        values = [
            v / HOUR
            for (v,) in db.execute(
                f"SELECT {column} FROM jobs WHERE run_id = ? AND {where}", (run_id,)
            )
        ]
        if not values:
            continue
        xs, ys = cdf_points(values)
        ax.step(xs, ys, where="post", label=labels[run_id], linewidth=1.4)
        plotted = True
    if log_mode == "log":
        ax.set_xscale("log")
    else:
        ax.set_xscale("symlog", linthresh=1 / 60)  # linear below one minute
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of jobs")
    ax.set_ylim(0, 1.01)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    if plotted:
        ax.legend(fontsize=8, loc="lower right")
    return fig


def plot_timelines(db, ids, labels):
    fig, axes = plt.subplots(4, 1, figsize=(8, 8.5), sharex=True)
    panels = [
        ("utilization", "GPU utilization"),
        ("queue_length", "queue length (jobs)"),
        ("stranded_gpus", "stranded GPUs"),
        ("i_frag", "I_frag"),
    ]
    for run_id in ids:
        rows = db.execute(
            "SELECT t_start, t_end, utilization, queue_length, stranded_gpus, i_frag "
            "FROM timeseries WHERE run_id = ? AND gpu_type = 'all' ORDER BY t_start",
            (run_id,),
        ).fetchall()
        if not rows:
            continue
        t = [(r[0] + r[1]) / 2 / DAY for r in rows]
        for i, (ax, (_, _)) in enumerate(zip(axes, panels)):
            ax.plot(t, [r[2 + i] if r[2 + i] is not None else 0 for r in rows],
                    label=labels[run_id], linewidth=0.9)
    for ax, (_, ylabel) in zip(axes, panels):
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylim(0, 1.02)
    axes[0].set_title("interval averages over simulated time")
    axes[0].legend(fontsize=8, loc="upper right")
    axes[-1].set_xlabel("simulated time (days)")
    fig.tight_layout()
    return fig


def summary_values(db, run_id, metric):
    return {
        scope: value
        for scope, value in db.execute(
            "SELECT scope, value FROM summary WHERE run_id = ? AND metric = ?", (run_id, metric)
        )
    }


def grouped_bars(ax, ids, labels, groups, values_of):
    """Bars for each group (x axis) and run (colour)."""
    width = 0.8 / max(1, len(ids))
    for i, run_id in enumerate(ids):
        xs = [g + (i - (len(ids) - 1) / 2) * width for g in range(len(groups))]
        ys = [values_of(run_id, group) for group in groups]
        ax.bar(xs, [y if y is not None else 0 for y in ys], width, label=labels[run_id])
    ax.set_xticks(range(len(groups)))


def plot_gpu_types(db, ids, labels):
    per_run = {run_id: summary_values(db, run_id, "gpu_utilization") for run_id in ids}
    types = sorted({s for v in per_run.values() for s in v if s != "all"})
    groups = types + ["all"]
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(groups) + 2), 4.2))
    grouped_bars(ax, ids, labels, groups, lambda run_id, g: per_run[run_id].get(g))
    ax.set_xticklabels(groups, rotation=15)
    ax.set_ylabel("GPU utilization (time average)")
    ax.set_ylim(0, 1.05)
    ax.set_title("utilization per GPU type")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def plot_headline(db, ids, labels):
    cols = 3
    rows_n = (len(HEADLINE) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(11, 3 * rows_n))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (metric, title, scale) in zip(axes.flat, HEADLINE):
        values = []
        for run_id in ids:
            v = summary_values(db, run_id, metric).get("all")
            values.append(v / scale if v is not None else 0)
        ax.bar(range(len(ids)), values, color=[colours[i % len(colours)] for i in range(len(ids))])
        ax.set_xticks(range(len(ids)))
        ax.set_xticklabels([str(r) for r in ids])
        ax.set_title(title, fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(HEADLINE):]:
        ax.axis("off")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[i % len(colours)]) for i in range(len(ids))]
    fig.legend(handles, [labels[r] for r in ids], loc="lower center", ncol=min(3, len(ids)),
               fontsize=8)
    fig.suptitle("headline figures by run (x axis: run id)")
    fig.tight_layout(rect=(0, 0.06 + 0.02 * ((len(ids) - 1) // 3), 1, 0.97))
    return fig


def main(argv):
    parser = argparse.ArgumentParser(description="Figures from a clustersim SQLite database.")
    parser.add_argument("db", help="results database (clustersim run --out)")
    parser.add_argument("--out", help="output folder (default: figures/ next to the database)")
    parser.add_argument("--run", type=int, nargs="+", action="extend", default=[],
                        help="run ids to plot (default: every run)")
    parser.add_argument("--dpi", type=int, default=120, help="PNG resolution (default 120)")
    args = parser.parse_args(argv)
    db = open_db(args.db)
    ids, labels = run_labels(db, args.run)
    global plt
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot

    plt = matplotlib.pyplot
    out_dir = args.out or os.path.join(os.path.dirname(os.path.abspath(args.db)), "figures")
    os.makedirs(out_dir, exist_ok=True)

    written = []
    written += save(plot_cdf(db, ids, labels, "jct", "jct IS NOT NULL",
                             "job completion time", "JCT (hours, log scale)", "log"),
                    out_dir, "jct_cdf", args.dpi)
    written += save(plot_cdf(db, ids, labels, "wait_time", "wait_time IS NOT NULL",
                             "queueing delay", "wait (hours; linear below 1 min)", "symlog"),
                    out_dir, "wait_cdf", args.dpi)
    written += save(plot_timelines(db, ids, labels), out_dir, "timelines", args.dpi)
    written += save(plot_gpu_types(db, ids, labels), out_dir, "gpu_type_utilization", args.dpi)
    written += save(plot_headline(db, ids, labels), out_dir, "headline", args.dpi)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
