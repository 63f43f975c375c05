#!/usr/bin/python3
"""Figures from a clustersim results database (README: Figures; schema in results/README.md).

usage: scripts/plot.py DB [--out DIR] [--run ID ...] [--label FORMAT] [--format png,pdf]
                          [--style screen|paper] [--smooth HOURS] [--dpi N]
                          [--allow-different-jobs]

Writes each figure as DIR/NAME.<format> (DIR defaults to a `figures` folder next to the
database), one line or bar per run (all runs, or the --run ids):

  jct_cdf            CDF of job completion time (jobs that ended), log time axis
  wait_cdf           two CDFs side by side: first-start wait (submission to first start, jobs that
                     started) and queued time (all time spent waiting, after preemptions too; jobs
                     that ended). Under preemptive policies the two differ: a job that starts at
                     once and is then preempted for hours has a first-start wait of 0.
                     Symmetric-log time axes (waits of 0 are common).
  timelines          utilization, queue length, stranded GPUs and I_frag over simulated time, from
                     the `timeseries` rows of scope 'all'; stranded GPUs and I_frag, which jump
                     between 0 and their maximum from one interval to the next, as a moving
                     average (--smooth, default 1/100 of the longest run's span)
  gpu_type_utilization  utilization per GPU type (summary gpu_utilization per scope), grouped bars
  headline           bar charts of headline figures from `summary`: mean and p95 JCT, mean
                     first-start wait and queued time (every job that arrived: killed ones to
                     their kill time, unfinished ones to their run's end), bounded slowdown,
                     jobs killed or unfinished, preemptions per job, utilization, makespan, cost
                     (utilization and cost over the runs' shared horizon, the first submission
                     to the last run's end; gpu_type_utilization too)
  placement_curve    only when runs have `placement_curve` rows (arrival-only runs,
                     docs/engine.md#arrival-only-placement): unallocated GPU capacity (% of the
                     cluster's GPUs) against arrived GPU capacity (%), as the FGD paper plots its
                     placements; one curve per group of runs that differ only in their seed: the
                     mean over the seeds, with the band from the lowest to the highest seed

The plotted runs must have seen the same jobs (the same trace and filters, the same jobs
rejected), as `clustersim compare` and `report` check: otherwise the script names the jobs that
differ and stops (exit 2) unless --allow-different-jobs.

Run labels name what differs between the plotted runs (policy, placement, seed, cluster, trace,
parameters, ...), or follow --label, a Python format string over the `runs` columns and `trace`
(the trace's file name), e.g. --label "{policy} seed {seed}". Runs that failed (status failed,
no jobs) are left out with a note on stderr. Beyond ten runs, line styles (and bar hatches)
change with every ten colours. Legends sit outside the axes. --style paper: no titles, figure
sizes for one column of a two-column paper (3.4 in wide, 8 pt text); --format: one or more of
png, pdf, svg.

and, for each run that has the rows (one file per run, suffix _run<ID>):

  occupancy          which job (or user) held which GPU (or node) when, from the `allocations`
                     table (`run --record-allocations`, `validate`); --occupancy-window START:END
                     (hours of simulated time), --occupancy-by gpus|nodes,
                     --occupancy-colour job|user
  validation_qq      QQ plot of simulated against recorded waits (`validate` runs: the jobs with
                     both a recorded and a simulated start)
  validation_series  utilization and queue length over time, simulated and recorded
                     (`validation_series`, scope 'all')

Only the standard library (sqlite3) and Debian's python3-matplotlib; no network. Exit code 2 for a
missing or unreadable database, an unknown run id or bad option values.
"""

import argparse
import json
import math
import os
import sqlite3
import sys

plt = None  # matplotlib.pyplot, imported once the arguments and database are known good (slow)

HOUR = 3600.0
DAY = 86400.0

# Headline figures: (summary metric, axis label, scale divisor). JCT and waits count every job
# that arrived (killed ones to their kill time, unfinished ones to their run's end), and the
# killed and unfinished jobs have their own panel; utilization and cost are over the runs'
# shared horizon (comparable_figures).
HEADLINE = [
    ("jct_seconds_mean", "mean JCT (h)", HOUR),
    ("jct_seconds_p95", "p95 JCT (h)", HOUR),
    ("wait_seconds_mean", "mean first-start wait (h)", HOUR),
    ("queued_seconds_mean", "mean queued time (h)", HOUR),
    ("bsld_mean", "mean bounded slowdown (jobs that ended)", 1.0),
    ("jobs_not_completed", "jobs killed (timeout) + unfinished", 1.0),
    ("preemptions_per_job", "preemptions per job", 1.0),
    ("gpu_utilization", "GPU utilization (shared horizon)", 1.0),
    ("makespan_seconds", "makespan (days)", DAY),
    ("cost_usd", "cluster cost over the shared horizon (k$)", 1000.0),
]

# What may tell runs apart, in label order: (runs column or "trace", how it is shown).
LABEL_FIELDS = [
    ("policy", "{}"),
    ("placement", "{}"),
    ("cluster_spec", "on {}"),
    ("trace", "{}"),
    ("runtime_model", "runtime {}"),
    ("params", "{}"),
    ("trace_filter", "filter {}"),
    ("preemption_cost_seconds", "preemption cost {:g} s"),
    ("faults", "faults {}"),
    ("models", "models {}"),
    ("seed", "seed {}"),
]

# Figure sizes in inches: (screen, paper). Paper: one column of a two-column layout (3.4 in).
SIZES = {
    "cdf": ((7, 4.2), (3.4, 2.3)),
    "wait": ((11, 4.2), (3.4, 2.3)),
    "timelines": ((9, 8.5), (3.4, 5.2)),
    "bars": ((7, 4.2), (3.4, 2.4)),
    "headline": ((11, 9), (7.0, 6.0)),
    "curve": ((12, 4.8), (3.4, 2.5)),
}

LINESTYLES = ["-", "--", ":", "-."]
HATCHES = ["", "//", "..", "xx", "\\\\"]


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


def short(text, limit=28):
    text = str(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shown_value(run, field, shown):
    """A run's value of `field` for its label; "" for parameters or settings left at none."""
    value = run.get(field)
    if field == "preemption_cost_seconds":
        return shown.format(value or 0)
    if field in ("params", "trace_filter", "faults", "models"):
        try:
            items = json.loads(value or "{}")
        except ValueError:
            return shown.format(short(value))
        if not items:
            return ""
        if field == "params":  # key=value, as given on the command line
            return " ".join(f"{k}={v}" for k, v in items.items())
        return shown.format(short(json.dumps(items, separators=(",", ":")), 40))
    return shown.format(short(value))


def run_labels(db, wanted, label_format):
    db.row_factory = sqlite3.Row
    rows = {r["run_id"]: dict(r) for r in db.execute("SELECT * FROM runs ORDER BY run_id")}
    db.row_factory = None
    ids = wanted or sorted(rows)
    for run_id in ids:
        if run_id not in rows:
            fail(f"no run {run_id} in the database (runs: {', '.join(map(str, sorted(rows)))})")
    if not ids:
        fail("the database holds no runs")
    kept = []
    for run_id in ids:
        status = rows[run_id]["status"]
        jobs = db.execute("SELECT COUNT(*) FROM jobs WHERE run_id = ?", (run_id,)).fetchone()[0]
        if status == "failed" or jobs == 0:
            print(f"plot.py: note: run {run_id} left out (status {status}, {jobs} jobs)",
                  file=sys.stderr)
            continue
        kept.append(run_id)
    if not kept:
        fail("no run to plot: every selected run failed")
    for run in rows.values():
        run["trace"] = os.path.basename(run.get("trace_path") or "")
        run["cluster_spec"] = (run.get("cluster_spec") or "").replace("preset:", "")
    labels = {}
    if label_format:
        for run_id in kept:
            try:
                labels[run_id] = label_format.format(**rows[run_id])
            except (KeyError, IndexError, ValueError) as e:
                fail(f"--label {label_format!r}: {e!r}; fields: {', '.join(sorted(rows[run_id]))}")
    else:
        varying = [
            (field, shown)
            for field, shown in LABEL_FIELDS
            if len({str(rows[r].get(field)) for r in kept}) > 1
        ]
        for run_id in kept:
            parts = [shown_value(rows[run_id], f, shown) for f, shown in varying]
            parts = [p for p in parts if p]
            text = " ".join(parts) if parts else f"{rows[run_id]['policy']}/{rows[run_id]['placement']}"
            labels[run_id] = f"{run_id}: {text}"
    for run_id in kept:
        if rows[run_id]["status"] != "complete":
            labels[run_id] += f" ({rows[run_id]['status']})"
    return kept, labels


def number_kind(reason):
    """A rejection reason with its numbers blanked: the jobs' kind (sim/output/comparison.cc)."""
    out, previous = [], False
    for ch in reason or "":
        digit = ch.isdigit() or (previous and ch == ".")
        if not digit:
            out.append(ch)
        elif not previous:
            out.append("#")
        previous = digit
    return "".join(out)


def job_set_differences(db, ids):
    """How the jobs the runs saw differ (as `clustersim compare` and `report` check them,
    sim/output/comparison.h): each run against the first of its seed (trace, filters, rejected
    jobs), and the first of each seed against the very first (trace and filters, without what
    the seed draws: the jobs --inflate makes)."""
    runs = {}
    for run_id in ids:
        path, sha, filters, policy, placement, seed = db.execute(
            "SELECT trace_path, trace_sha256, trace_filter, policy, placement, seed FROM runs "
            "WHERE run_id = ?", (run_id,)).fetchone()
        rejected = {index: (job_id, reason) for index, job_id, reason in db.execute(
            "SELECT job_index, job_id, reason FROM jobs WHERE run_id = ? AND status = 'rejected'",
            (run_id,))}
        runs[run_id] = (f"run {run_id} ({policy}/{placement})", path, sha, filters, rejected,
                        seed)
    differences = []

    def same_input(run, first, across_seeds):
        if run[2] != first[2]:
            differences.append(f"{run[0]} replayed {run[1]}, {first[0]} {first[1]}: different "
                               "traces")
            return False
        a, b = run[3], first[3]
        if across_seeds:
            try:
                a, b = (json.dumps({k: v for k, v in json.loads(t or "{}").items()
                                    if k != "jobs_inflated"}, sort_keys=True) for t in (a, b))
            except ValueError:
                pass
        if a != b:
            differences.append(f"{run[0]} read the trace with the filters {run[3]}, {first[0]} "
                               f"with {first[3]}")
            return False
        return True

    first_of_seed = {}
    for run_id in ids:
        run = runs[run_id]
        if run[5] not in first_of_seed:
            first_of_seed[run[5]] = run
            if run_id != ids[0]:
                same_input(run, runs[ids[0]], True)
            continue
        first = first_of_seed[run[5]]
        if not same_input(run, first, False):
            continue
        for rejecter, accepter in ((run, first), (first, run)):
            only = sorted(set(rejecter[4]) - set(accepter[4]))
            if not only:
                continue
            kinds = {}
            for index in only:
                kinds.setdefault(number_kind(rejecter[4][index][1]), []).append(index)
            parts = []
            for indices in sorted(kinds.values(), key=lambda v: (-len(v), v[0]))[:3]:
                ids_text = ", ".join(rejecter[4][i][0] for i in indices[:3])
                parts.append(f'{len(indices):,} like "{rejecter[4][indices[0]][1]}" '
                             f'(job{"s" if len(indices) > 1 else ""} '
                             f'{ids_text}{", ..." if len(indices) > 3 else ""})')
            differences.append(f"{rejecter[0]} rejected {len(only):,} "
                               f"job{'s' if len(only) > 1 else ''} that {accepter[0]} "
                               f"accepted: " + "; ".join(parts))
    return differences


def comparable_figures(db, ids):
    """Per run: the summary figures (scope 'all') with gpu_utilization, per-type utilization
    and cost_usd over the runs' shared horizon (first submission to the last run's end), and
    jobs_not_completed = jobs killed at their wall time + unfinished."""
    spans = {}
    for run_id in ids:
        values = summary_all(db, run_id)
        first = db.execute("SELECT MIN(submit_time) FROM jobs WHERE run_id = ?",
                           (run_id,)).fetchone()[0] or 0.0
        span = values.get("simulated_seconds") or 0.0
        end = values.get("end_seconds", first + span)
        spans[run_id] = (first, span, end, values)
    start = min(first for first, _, _, _ in spans.values())
    horizon = max(end for _, _, end, _ in spans.values()) - start
    figures = {}
    for run_id, (_, span, _, values) in spans.items():
        values = dict(values)
        if horizon > 0:
            if values.get("gpu_utilization") is not None:
                values["gpu_utilization"] *= span / horizon
            if values.get("cost_usd") is not None and span > 0:
                values["cost_usd"] *= horizon / span
        values["jobs_not_completed"] = (values.get("jobs_timeout") or 0) + (
            values.get("jobs_unfinished") or 0)
        figures[run_id] = (values, span / horizon if horizon > 0 else 1.0)
    return figures


def summary_all(db, run_id):
    return {m: v for m, v in db.execute(
        "SELECT metric, value FROM summary WHERE run_id = ? AND scope = 'all'", (run_id,))}


def style_of(index):
    """Colour and line style of the index-th run: ten colours, then the next line style."""
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {
        "color": colours[index % len(colours)],
        "linestyle": LINESTYLES[(index // len(colours)) % len(LINESTYLES)],
    }


def hatch_of(index):
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return HATCHES[(index // len(colours)) % len(HATCHES)]


class Figures:
    def __init__(self, args):
        self.paper = args.style == "paper"
        self.formats = args.format
        self.dpi = args.dpi
        self.out_dir = args.out
        self.smooth_hours = args.smooth
        if self.paper:
            plt.rcParams.update({
                "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "legend.fontsize": 6.5,
                "xtick.labelsize": 7, "ytick.labelsize": 7, "lines.linewidth": 1.0,
            })

    def size(self, kind):
        return SIZES[kind][1 if self.paper else 0]

    def title(self, ax, text):
        if not self.paper:
            ax.set_title(text)

    def legend(self, ax, n):
        """Outside the data: right of the axes on screen, below them in paper style."""
        kwargs = {"fontsize": 6.5 if self.paper else 8, "frameon": False}
        if self.paper:
            kwargs.update(loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=min(2, n))
        else:
            kwargs.update(loc="upper left", bbox_to_anchor=(1.02, 1.0), ncol=1 if n <= 20 else 2)
        return ax.legend(**kwargs)

    def figure_legend(self, fig, handles, labels, n):
        """Outside every panel: right of the figure on screen, above it in paper style."""
        kwargs = {"fontsize": 6.5 if self.paper else 8, "frameon": False}
        if self.paper:
            kwargs.update(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(2, n))
        else:
            kwargs.update(loc="upper left", bbox_to_anchor=(1.0, 0.95), ncol=1 if n <= 20 else 2)
        return fig.legend(handles, labels, **kwargs)

    def save(self, fig, name):
        paths = []
        for ext in self.formats:
            path = os.path.join(self.out_dir, f"{name}.{ext}")
            fig.savefig(path, dpi=self.dpi, bbox_inches="tight")
            paths.append(path)
        plt.close(fig)
        return paths


def cdf_points(values):
    values = sorted(values)
    n = len(values)
    return values, [(i + 1) / n for i in range(n)]


def draw_cdf(ax, db, ids, labels, column, where, log_mode, paper=False):
    plotted = False
    for i, run_id in enumerate(ids):
        values = [
            v / HOUR
            for (v,) in db.execute(
                f"SELECT {column} FROM jobs WHERE run_id = ? AND {where}", (run_id,)
            )
        ]
        if not values:
            continue
        xs, ys = cdf_points(values)
        ax.step(xs, ys, where="post", label=labels[run_id], **style_of(i))
        plotted = True
    if log_mode == "log":
        ax.set_xscale("log")
    else:
        ax.set_xscale("symlog", linthresh=1 / 60)  # linear below one minute
        if paper:  # fewer ticks on a narrow axis: 0, then every second decade
            top = max(ax.get_xlim()[1], 1.0)
            ticks = [0.0] + [10.0 ** k for k in range(-2, int(math.ceil(math.log10(top))) + 1, 2)]
            ax.set_xticks(ticks)
    ax.set_ylim(0, 1.01)
    ax.grid(True, which="both", alpha=0.3)
    return plotted


def has_column(db, table, column):
    return any(r[1] == column for r in db.execute(f"PRAGMA table_info({table})"))


def plot_jct(figs, db, ids, labels):
    fig, ax = plt.subplots(figsize=figs.size("cdf"))
    plotted = draw_cdf(ax, db, ids, labels, "jct", "jct IS NOT NULL", "log")
    ax.set_xlabel("JCT (hours, log scale)")
    ax.set_ylabel("fraction of jobs")
    figs.title(ax, "job completion time")
    if plotted:
        figs.legend(ax, n=len(ids))
    return fig


def plot_waits(figs, db, ids, labels):
    fig, axes = plt.subplots(1, 2, figsize=figs.size("wait"), sharey=True)
    plotted = draw_cdf(axes[0], db, ids, labels, "wait_time", "wait_time IS NOT NULL", "symlog",
                       figs.paper)
    axes[0].set_xlabel("first-start wait (h)")
    axes[0].set_ylabel("fraction of jobs")
    figs.title(axes[0], "first-start wait (jobs that started)")
    if has_column(db, "jobs", "queued_time"):
        draw_cdf(axes[1], db, ids, labels, "queued_time",
                 "queued_time IS NOT NULL AND jct IS NOT NULL", "symlog", figs.paper)
    else:
        axes[1].text(0.5, 0.5, "no queued_time column\n(database of an older clustersim)",
                     ha="center", va="center", transform=axes[1].transAxes)
    axes[1].set_xlabel("queued time (h)")
    figs.title(axes[1], "queued time: all waiting, after preemptions too")
    if not figs.paper:
        fig.text(0.5, -0.02, "time axes linear below 1 min, logarithmic above", ha="center",
                 fontsize=8)
    fig.tight_layout()
    if plotted:
        h, l = axes[0].get_legend_handles_labels()
        figs.figure_legend(fig, h, l, len(ids))
    return fig


def moving_average(values, window):
    """Centred mean over `window` points (shorter at the ends)."""
    if window <= 1:
        return values
    half = window // 2
    prefix = [0.0]
    for v in values:
        prefix.append(prefix[-1] + v)
    out = []
    for i in range(len(values)):
        lo, hi = max(0, i - half), min(len(values), i + half + 1)
        out.append((prefix[hi] - prefix[lo]) / (hi - lo))
    return out


def plot_timelines(figs, db, ids, labels):
    fig, axes = plt.subplots(4, 1, figsize=figs.size("timelines"), sharex=True)
    panels = ["GPU utilization", "queue length (jobs)", "stranded GPUs", "I_frag"]
    smoothed = {2, 3}
    series = {}
    for run_id in ids:
        rows = db.execute(
            "SELECT t_start, t_end, utilization, queue_length, stranded_gpus, i_frag "
            "FROM timeseries WHERE run_id = ? AND gpu_type = 'all' ORDER BY t_start",
            (run_id,),
        ).fetchall()
        if rows:
            series[run_id] = rows
    # One averaging window for every run: 1/100 of the longest span unless --smooth says.
    span = max((rows[-1][1] - rows[0][0] for rows in series.values()), default=0)
    hours = figs.smooth_hours if figs.smooth_hours is not None else span / 100 / HOUR
    averaged = False
    for i, run_id in enumerate(ids):
        rows = series.get(run_id)
        if not rows:
            continue
        t = [(r[0] + r[1]) / 2 / DAY for r in rows]
        interval = max(1e-9, rows[0][1] - rows[0][0])
        window = max(1, int(round(hours * HOUR / interval)))
        style = style_of(i)
        for p, ax in enumerate(axes):
            values = [r[2 + p] if r[2 + p] is not None else 0 for r in rows]
            if p in smoothed and window > 1:
                averaged = True
                values = moving_average(values, window)
            ax.plot(t, values, label=labels[run_id], linewidth=0.9 if not figs.paper else 0.7,
                    **style)
    for p, (ax, ylabel) in enumerate(zip(axes, panels)):
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        if p in smoothed and averaged:
            ax.text(0.99, 0.95, f"moving average over {hours:.3g} h", transform=ax.transAxes,
                    va="top", ha="right", fontsize=6 if figs.paper else 8, alpha=0.8)
    axes[0].set_ylim(0, 1.02)
    axes[3].set_ylim(-0.02, 1.02)
    figs.title(axes[0], "interval averages over simulated time")
    axes[-1].set_xlabel("simulated time (days)")
    fig.tight_layout()
    h, l = axes[0].get_legend_handles_labels()
    figs.figure_legend(fig, h, l, len(ids))
    return fig


def summary_values(db, run_id, metric):
    return {
        scope: value
        for scope, value in db.execute(
            "SELECT scope, value FROM summary WHERE run_id = ? AND metric = ?", (run_id, metric)
        )
    }


def plot_gpu_types(figs, db, ids, labels):
    # Over the runs' shared horizon: each run's own-span utilization x its span / the horizon.
    scale = {run_id: share for run_id, (_, share) in comparable_figures(db, ids).items()}
    per_run = {run_id: {scope: value * scale[run_id] for scope, value in
                        summary_values(db, run_id, "gpu_utilization").items()} for run_id in ids}
    types = sorted({s for v in per_run.values() for s in v if s != "all"})
    groups = types + ["all"]
    size = figs.size("bars")
    fig, ax = plt.subplots(figsize=(max(size[0], (1.4 if not figs.paper else 0.7) * len(groups)
                                        + 1), size[1]))
    width = 0.8 / max(1, len(ids))
    for i, run_id in enumerate(ids):
        xs = [g + (i - (len(ids) - 1) / 2) * width for g in range(len(groups))]
        ys = [per_run[run_id].get(group) for group in groups]
        ax.bar(xs, [y if y is not None else 0 for y in ys], width, label=labels[run_id],
               color=style_of(i)["color"], hatch=hatch_of(i), edgecolor="white", linewidth=0)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=15)
    ax.set_ylabel("GPU utilization (shared horizon)")
    ax.set_ylim(0, 1.05)
    figs.title(ax, "utilization per GPU type")
    ax.grid(True, axis="y", alpha=0.3)
    figs.legend(ax, n=len(ids))
    return fig


def plot_headline(figs, db, ids, labels):
    cols = 3
    rows_n = (len(HEADLINE) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=figs.size("headline"))
    colours = [style_of(i)["color"] for i in range(len(ids))]
    hatches = [hatch_of(i) for i in range(len(ids))]
    figures = comparable_figures(db, ids)
    for ax, (metric, title, scale) in zip(axes.flat, HEADLINE):
        values = []
        for run_id in ids:
            v = figures[run_id][0].get(metric)
            values.append(v / scale if v is not None else 0)
        ax.bar(range(len(ids)), values, color=colours, hatch=hatches, edgecolor="white",
               linewidth=0)
        ax.set_xticks(range(len(ids)))
        ax.set_xticklabels([str(r) for r in ids], fontsize=7 if len(ids) > 12 else None)
        ax.set_title(title, fontsize=8 if figs.paper else 10)  # a panel name, kept in paper style
        ax.grid(True, axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(HEADLINE):]:
        ax.axis("off")
    handles = [plt.Rectangle((0, 0), 1, 1, facecolor=colours[i], hatch=hatches[i],
                             edgecolor="white") for i in range(len(ids))]
    if not figs.paper:
        fig.suptitle("headline figures by run (x axis: run id)")
    fig.tight_layout()
    figs.figure_legend(fig, handles, [labels[r] for r in ids], len(ids))
    return fig


def plot_placement_curve(figs, db, ids):
    """Unallocated against arrived GPU capacity, one curve per group of runs differing only in
    their seed (mean, and the band between the lowest and highest seed); None without rows."""
    if not table_exists(db, "placement_curve"):
        return None
    db.row_factory = sqlite3.Row
    runs = {r["run_id"]: dict(r) for r in db.execute("SELECT * FROM runs")}
    db.row_factory = None
    fields = [(f, shown) for f, shown in LABEL_FIELDS if f != "seed"]
    for run in runs.values():
        run["trace"] = os.path.basename(run.get("trace_path") or "")
        # Job counts after the filters and inflation differ from seed to seed: not a setting.
        try:
            kept = {k: v for k, v in json.loads(run.get("trace_filter") or "{}").items()
                    if k not in ("jobs_before", "jobs_kept", "jobs_inflated")}
            run["trace_filter"] = json.dumps(kept, sort_keys=True)
        except ValueError:
            pass
    groups = {}  # key -> run ids
    for run_id in ids:
        if not db.execute("SELECT 1 FROM placement_curve WHERE run_id = ? LIMIT 1",
                          (run_id,)).fetchone():
            continue
        key = tuple(str(runs[run_id].get(f)) for f, _ in fields)
        groups.setdefault(key, []).append(run_id)
    if not groups:
        return None
    varying = [i for i in range(len(fields)) if len({k[i] for k in groups}) > 1]
    # Labels: the varying settings, without the words every label shares.
    words = {}
    for key, members in groups.items():
        first = runs[members[0]]
        parts = [shown_value(first, fields[i][0], fields[i][1]) for i in varying]
        words[key] = " ".join(p for p in parts if p).split()
    common = set.intersection(*(set(w) for w in words.values())) if len(words) > 1 else set()
    fig, (ax, zoom) = plt.subplots(1, 2, figsize=figs.size("curve"),
                                   gridspec_kw={"width_ratios": [3, 2]})
    for index, (key, members) in enumerate(groups.items()):
        first = runs[members[0]]
        label = " ".join(w for w in words[key] if w not in common)
        label = label or f"{first['policy']}/{first['placement']}"
        label += f" ({len(members)} seed{'s' if len(members) > 1 else ''})"
        by_percent = {}
        for run_id in members:
            for percent, unallocated in db.execute(
                    "SELECT percent, unallocated_share FROM placement_curve WHERE run_id = ? "
                    "ORDER BY percent", (run_id,)):
                by_percent.setdefault(percent, []).append(100 * unallocated)
        # Percents every seed reached, so the mean is over the same runs everywhere.
        xs = [p for p in sorted(by_percent) if len(by_percent[p]) == len(members)]
        mean = [sum(by_percent[p]) / len(by_percent[p]) for p in xs]
        style = style_of(index)
        for panel in (ax, zoom):
            panel.plot(xs, mean, label=label, **style)
            if len(members) > 1:
                panel.fill_between(xs, [min(by_percent[p]) for p in xs],
                                   [max(by_percent[p]) for p in xs], color=style["color"],
                                   alpha=0.2, linewidth=0)
    # The right panel: around 100 % arrived, where the placements part.
    zoom.set_xlim(85, 105)
    tops = [v for line in zoom.get_lines() for x, v in zip(*line.get_data()) if 85 <= x <= 105]
    zoom.set_ylim(0, max(tops + [1]) * 1.05)
    for panel in (ax, zoom):
        panel.set_xlabel("arrived GPU capacity (% of the GPUs)")
        panel.grid(True, alpha=0.3)
    ax.set_ylabel("unallocated GPU capacity (%)")
    figs.title(ax, "all arrivals")
    figs.title(zoom, "85-105 % arrived")
    if not figs.paper:
        fig.suptitle("unallocated against arrived GPU capacity (mean over seeds; band: min-max)")
    figs.legend(zoom, len(groups))
    fig.tight_layout()
    return fig


def parse_formats(text):
    formats = [f.strip().lower() for f in text.split(",") if f.strip()]
    for f in formats:
        if f not in ("png", "pdf", "svg"):
            fail(f"--format {text}: expected png, pdf or svg (or a comma-separated list)")
    if not formats:
        fail("--format: expected png, pdf or svg")
    return list(dict.fromkeys(formats))
# ---------------------------------------------------------------------------------------------
# The allocation log and validation (`allocations`, `validation_series`, jobs.recorded_start)


def add_allocation_arguments(parser):
    parser.add_argument("--occupancy-window", default="",
                        help="occupancy chart window START:END in hours of simulated time "
                             "(either may be empty; default: the whole run)")
    parser.add_argument("--occupancy-by", choices=("gpus", "nodes"), default="gpus",
                        help="occupancy chart rows: one per GPU, or one per node (default gpus)")
    parser.add_argument("--occupancy-colour", choices=("job", "user"), default="job",
                        help="occupancy chart colours: by job or by user (default job)")


def check_allocation_arguments(args):
    window = args.occupancy_window
    if not window:
        args.window = (None, None)
        return
    if window.count(":") != 1:
        fail(f"--occupancy-window {window}: expected START:END in hours")
    try:
        start, end = (float(x) * HOUR if x else None for x in window.split(":"))
    except ValueError:
        fail(f"--occupancy-window {window}: expected START:END in hours")
    if start is not None and end is not None and end <= start:
        fail(f"--occupancy-window {window}: END must be after START")
    args.window = (start, end)


def table_exists(db, name):
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                      (name,)).fetchone() is not None


def parse_ranges(text):
    """ "0-3,8" -> [(0, 3), (8, 8)] (inclusive)."""
    out = []
    for part in (text or "").split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        out.append((int(first), int(last or first)))
    return out


def node_layout(db, run_id):
    """First GPU and GPU count of every node, from the run's cluster JSON."""
    (text,) = db.execute("SELECT cluster_json FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    import json

    first, layout = 0, []
    for group in json.loads(text).get("nodes", []):
        for _ in range(int(group.get("count", 1))):
            n = int(group["gpus_per_node"])
            layout.append((first, n))
            first += n
    return layout


def plot_occupancy(db, run_id, label, args):
    from matplotlib.collections import PolyCollection

    start, end = args.window
    query = ("SELECT a.job_index, a.start_time, a.end_time, a.gpu_milli, a.gpu_indexes, j.user "
             "FROM allocations a JOIN jobs j ON j.run_id = a.run_id AND j.job_index = a.job_index "
             "WHERE a.run_id = ?")
    params = [run_id]
    if start is not None:
        query += " AND a.end_time > ?"
        params.append(start)
    if end is not None:
        query += " AND a.start_time < ?"
        params.append(end)
    rows = db.execute(query, params).fetchall()
    layout = node_layout(db, run_id)
    total = sum(n for _, n in layout)
    if args.occupancy_by == "nodes":
        node_of, row_of = [], []
        for node, (first, n) in enumerate(layout):
            for local in range(n):
                node_of.append(node)
                row_of.append(node + local / n)
        height_of = [1.0 / layout[node_of[g]][1] for g in range(total)]
    else:
        row_of = list(range(total))
        height_of = [1.0] * total
    colours = plt.get_cmap("tab20").colors
    users = {}
    if args.occupancy_colour == "user":
        counts = {}
        for r in rows:
            counts[r[5] or ""] = counts.get(r[5] or "", 0) + 1
        for i, (user, _) in enumerate(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))):
            users[user] = i
    polygons, faces = [], []
    lo = min((r[1] for r in rows), default=0) if start is None else start
    hi = max((r[2] for r in rows), default=1) if end is None else end
    for job, t0, t1, milli, gpus, user in rows:
        t0, t1 = max(t0, lo) / HOUR, min(t1, hi) / HOUR
        share = (milli or 1000) / 1000.0
        if args.occupancy_colour == "user":
            k = users[user or ""]
            colour = colours[k] if k < len(colours) else (0.6, 0.6, 0.6)
        else:
            colour = colours[job % len(colours)]
        for a, b in parse_ranges(gpus):
            g = a
            while g <= b:
                # Contiguous GPUs of one row band become one rectangle.
                h = g
                while h < b and row_of[h + 1] == row_of[h] + height_of[h]:
                    h += 1
                y0 = row_of[g]
                y1 = row_of[h] + height_of[h] * share
                polygons.append([(t0, y0), (t1, y0), (t1, y1), (t0, y1)])
                faces.append(colour)
                g = h + 1
    fig, ax = plt.subplots(figsize=(10, 5.5))
    ax.add_collection(PolyCollection(polygons, facecolors=faces, edgecolors="none",
                                     alpha=0.9 if args.occupancy_colour == "job" else 0.8))
    ax.set_xlim(lo / HOUR, hi / HOUR)
    rows_total = len(layout) if args.occupancy_by == "nodes" else total
    ax.set_ylim(0, rows_total)
    ax.invert_yaxis()
    ax.set_xlabel("simulated time (hours)")
    ax.set_ylabel("node" if args.occupancy_by == "nodes" else "GPU index")
    what = "user (the 20 with most intervals; others grey)" if args.occupancy_colour == "user" \
        else "job"
    ax.set_title(f"cluster occupancy, run {label}: {len(rows)} running intervals, coloured by "
                 f"{what}", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def plot_validation_qq(db, run_id, label):
    rows = db.execute(
        "SELECT wait_time, recorded_start - submit_time FROM jobs WHERE run_id = ? AND "
        "wait_time IS NOT NULL AND recorded_start IS NOT NULL AND status != 'rejected'",
        (run_id,)).fetchall()
    simulated = sorted(r[0] / HOUR for r in rows)
    recorded = sorted(r[1] / HOUR for r in rows)
    fig, ax = plt.subplots(figsize=(5.6, 5.2))
    ax.plot(recorded, simulated, ".", markersize=3, alpha=0.6, label=f"{len(rows)} jobs")
    top = max(simulated[-1] if simulated else 1, recorded[-1] if recorded else 1, 1 / 60)
    ax.plot([0, top], [0, top], "k--", linewidth=0.8, label="simulated = recorded")
    for q in (0.5, 0.95, 0.99):
        if rows:
            i = min(len(rows) - 1, int(q * (len(rows) - 1)))
            ax.annotate(f"p{int(q * 100)}", (recorded[i], simulated[i]), fontsize=7,
                        xytext=(4, -10), textcoords="offset points")
    ax.set_xscale("symlog", linthresh=1 / 60)
    ax.set_yscale("symlog", linthresh=1 / 60)
    ax.set_xlabel("recorded wait quantile (hours; linear below 1 min)")
    ax.set_ylabel("simulated wait quantile (hours)")
    ax.set_title(f"QQ plot of waits, run {label}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def plot_validation_series(db, run_id, label):
    rows = db.execute(
        "SELECT t_start, t_end, simulated_utilization, recorded_utilization, "
        "simulated_queue_length, recorded_queue_length FROM validation_series "
        "WHERE run_id = ? AND scope = 'all' ORDER BY t_start", (run_id,)).fetchall()
    t = [(r[0] + r[1]) / 2 / DAY for r in rows]
    fig, axes = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for ax, (sim, rec, ylabel) in zip(axes, [(2, 3, "GPU utilization"),
                                             (4, 5, "queue length (jobs)")]):
        ax.plot(t, [r[rec] for r in rows], label="recorded", linewidth=0.9, color="black",
                alpha=0.7)
        ax.plot(t, [r[sim] for r in rows], label="simulated", linewidth=0.9, color="tab:orange",
                alpha=0.85)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
    interval = rows[0][1] - rows[0][0] if rows else 0
    axes[0].set_title(f"simulated and recorded schedule, run {label} ({interval:g} s averages)",
                      fontsize=10)
    axes[-1].set_xlabel("time (days)")
    fig.tight_layout()
    return fig


def allocation_and_validation_figures(figs, db, ids, labels, args):
    written = []
    has_allocations = table_exists(db, "allocations")
    has_validation = table_exists(db, "validation_series")
    for run_id in ids:
        suffix = f"_run{run_id}"
        if has_allocations and db.execute(
                "SELECT 1 FROM allocations WHERE run_id = ? LIMIT 1", (run_id,)).fetchone():
            written += figs.save(plot_occupancy(db, run_id, labels[run_id], args),
                                 "occupancy" + suffix)
        if has_validation and db.execute(
                "SELECT 1 FROM validation_series WHERE run_id = ? LIMIT 1", (run_id,)).fetchone():
            written += figs.save(plot_validation_qq(db, run_id, labels[run_id]),
                                 "validation_qq" + suffix)
            written += figs.save(plot_validation_series(db, run_id, labels[run_id]),
                                 "validation_series" + suffix)
    return written


def main(argv):
    parser = argparse.ArgumentParser(description="Figures from a clustersim SQLite database.")
    parser.add_argument("db", help="results database (clustersim run --out)")
    parser.add_argument("--out", help="output folder (default: figures/ next to the database)")
    parser.add_argument("--run", type=int, nargs="+", action="extend", default=[],
                        help="run ids to plot (default: every run)")
    parser.add_argument("--label", help="run labels: a format string over the runs columns, "
                        "e.g. '{policy} seed {seed}' (default: what differs between the runs)")
    parser.add_argument("--format", default="png,pdf",
                        help="png, pdf, svg or a comma-separated list (default png,pdf)")
    parser.add_argument("--style", choices=["screen", "paper"], default="screen",
                        help="paper: no titles, one column of a two-column paper (default screen)")
    parser.add_argument("--smooth", type=float, default=None,
                        help="hours of the moving average of stranded GPUs and I_frag (default: "
                        "1/100 of the simulated span; 0 = raw)")
    parser.add_argument("--dpi", type=int, default=120, help="PNG resolution (default 120)")
    parser.add_argument("--allow-different-jobs", action="store_true",
                        help="plot runs side by side that did not see the same jobs (a different "
                        "trace or filters, or jobs some rejected and others accepted); by "
                        "default refused, naming the jobs")
    add_allocation_arguments(parser)
    args = parser.parse_args(argv)
    args.format = parse_formats(args.format)
    if args.smooth is not None and args.smooth < 0:
        fail("--smooth: expected hours >= 0")
    check_allocation_arguments(args)
    db = open_db(args.db)
    ids, labels = run_labels(db, args.run, args.label)
    differences = job_set_differences(db, ids)
    if differences:
        text = "; ".join(differences)
        if not args.allow_different_jobs:
            fail(f"the plotted runs did not see the same jobs, so their figures are not "
                 f"comparable: {text}. --allow-different-jobs plots them anyway; --run picks "
                 "runs that saw the same jobs")
        print(f"plot.py: warning: the runs saw different jobs: {text}", file=sys.stderr)
    global plt
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot

    plt = matplotlib.pyplot
    args.out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.db)), "figures")
    os.makedirs(args.out, exist_ok=True)
    figs = Figures(args)
    for run_id in ids:
        print(f"run {labels[run_id]}" if labels[run_id].startswith(f"{run_id}:")
              else f"run {run_id}: {labels[run_id]}", file=sys.stderr)

    written = []
    written += figs.save(plot_jct(figs, db, ids, labels), "jct_cdf")
    written += figs.save(plot_waits(figs, db, ids, labels), "wait_cdf")
    written += figs.save(plot_timelines(figs, db, ids, labels), "timelines")
    written += figs.save(plot_gpu_types(figs, db, ids, labels), "gpu_type_utilization")
    written += figs.save(plot_headline(figs, db, ids, labels), "headline")
    curve = plot_placement_curve(figs, db, ids)
    if curve is not None:
        written += figs.save(curve, "placement_curve")
    written += allocation_and_validation_figures(figs, db, ids, labels, args)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
