#!/usr/bin/python3
"""Figures from a clustersim results database (README: Figures; schema in results/README.md).

usage: scripts/plot.py DB [--out DIR] [--run ID ...] [--label FORMAT] [--format png,pdf]
                          [--style screen|paper] [--smooth HOURS] [--dpi N] [--no-pool]
                          [--include-interrupted] [--allow-different-jobs] [--mkdir]

Writes each figure as DIR/NAME.<format> (DIR defaults to a `figures` folder next to the
database; a DIR you name is made, but the folder it is in must exist unless --mkdir).

Runs that differ only in their seed are one configuration: its curves and bars are the mean over
the seeds with a 95 % confidence band (Student t over the seeds, as `clustersim report`), and
its label says how many seeds it pools (--no-pool: one line per run). A configuration is named by
the settings that differ between the plotted configurations, in words (policy, placement,
cluster, trace, key=value for each parameter, filter, fault or model setting), never as raw
JSON; --label FORMAT replaces that with a Python format string over the `runs` columns and
`trace` (the trace's file name) of the configuration's first run, e.g. --label "{policy}".

Which runs: all, or the --run ids. Runs that failed (status failed, no jobs) are left out with a
note on stderr, and so are interrupted runs, as `clustersim report` leaves them out (a partial
schedule beside complete ones misleads); --include-interrupted plots them, marked. Naming an
interrupted run with --run is an error unless --include-interrupted.

The plotted runs must have seen the same jobs (the same trace and filters, the same jobs
rejected), as `clustersim compare` and `report` check: otherwise the script names the jobs that
differ and stops (exit 2) unless --allow-different-jobs.

Figures, each only when some plotted run has data for it (a figure or panel with nothing to show
is left out with a note, e.g. the JCT CDF of arrival-only runs, whose jobs never end):

  jct_cdf            CDF of job completion time (jobs that ended), log time axis
  wait_cdf           two CDFs side by side: first-start wait (submission to first start, jobs that
                     started) and queued time (all time spent waiting, after preemptions too; jobs
                     that ended). Under preemptive policies the two differ: a job that starts at
                     once and is then preempted for hours has a first-start wait of 0.
                     Symmetric-log time axes (waits of 0 are common).
  timelines          utilization, queue length, stranded GPUs and I_frag over simulated time, from
                     the `timeseries` rows of scope 'all' (panels that are zero throughout are left
                     out); stranded GPUs and I_frag, which jump between 0 and their maximum from one
                     interval to the next, as a moving average (--smooth, default 1/100 of the
                     longest run's span); queue length and stranded GPUs on a symmetric-log axis
                     when their values span more than two decades
  gpu_type_utilization  utilization per GPU type (summary gpu_utilization per scope), grouped
                     bars; only when the runs have more than one GPU type
  headline           bar charts of headline figures from `summary`: mean and p95 JCT, mean
                     first-start wait and queued time (every job that arrived: killed ones to
                     their kill time, unfinished ones to their run's end), bounded slowdown,
                     jobs killed or unfinished, preemptions per job, utilization, makespan, cost
                     (utilization and cost over the runs' shared horizon, the first submission
                     to the last run's end; gpu_type_utilization too); a panel is left out when
                     no configuration has a value other than 0, and its axis is logarithmic when
                     the values span more than 1.5 decades (a bounded slowdown of 7 beside one
                     of 8,660)
  placement_curve    only when runs have `placement_curve` rows (arrival-only runs,
                     docs/engine.md#arrival-only-placement): unallocated GPU capacity (% of the
                     cluster's GPUs) against arrived GPU capacity (%), as the FGD paper plots its
                     placements; one curve per configuration: the mean over its seeds, with the
                     band from the lowest to the highest seed

and, for each run that has the rows (one file per run, suffix _run<ID>):

  occupancy          which job (or user, or size class) held which GPU (or node) when, from the
                     `allocations` table (`run --record-allocations`, `validate`);
                     --occupancy-window START:END (hours of simulated time), --occupancy-by
                     gpus|nodes, --occupancy-colour auto|job|user|size (auto: by job up to 200
                     jobs in the window, beyond that by user when the trace names several, else
                     by size class)
  validation_qq      QQ plot of simulated against recorded waits (`validate` runs: the jobs with
                     both a recorded and a simulated start)
  validation_series  utilization and queue length over time, simulated and recorded
                     (`validation_series`, scope 'all')

Beyond ten configurations, line styles (and bar hatches) change with every ten colours. Legends
sit outside the axes. --style paper: no titles, figure sizes for one column of a two-column paper
(3.4 in wide, 8 pt text); --format: one or more of png, pdf, svg. Each file is written under a
temporary name and renamed when complete; Ctrl-C or SIGTERM removes the temporary file.

Only the standard library (sqlite3) and Debian's python3-matplotlib; no network. Exit code 2 for a
missing or unreadable database, an unknown run id or bad option values; 130 when interrupted.
"""

import argparse
import bisect
import json
import math
import os
import signal
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

# Beyond this many jobs in its window an occupancy chart coloured by job is a blur of colours.
OCCUPANCY_JOBS_BY_JOB = 200
# An axis is logarithmic when its positive values span more than this many decades.
LOG_DECADES_BARS = 1.5
LOG_DECADES_LINES = 2.0

# Two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom (as clustersim report).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060,
        2.056, 2.052, 2.048, 2.045, 2.042]


def fail(message):
    print(f"plot.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def note(message):
    print(f"plot.py: note: {message}", file=sys.stderr)


def t975(df):
    return T975[df - 1] if df <= len(T975) else 1.96 + 2.4 / df


def mean_and_half_width(values):
    """Mean and 95 % confidence half-width over seeds (NaN half-width for one value)."""
    values = [v for v in values if v is not None and not math.isnan(v)]
    if not values:
        return float("nan"), float("nan")
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, float("nan")
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, t975(n - 1) * math.sqrt(variance / n)


def spans_decades(values, decades):
    positive = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    return len(positive) >= 2 and max(positive) / min(positive) > 10 ** decades


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


# ---------------------------------------------------------------------------------------------
# Runs, configurations and their labels


def number_text(value):
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def flat_items(value, prefix=""):
    """key=value pairs of a JSON settings object, nested keys joined by '.'."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from flat_items(inner, f"{prefix}{key}.")
    elif isinstance(value, list):
        yield prefix[:-1], ",".join(number_text(v) for v in value)
    else:
        yield prefix[:-1], number_text(value)


def json_object(text):
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {"value": text}
    return value if isinstance(value, dict) else {"value": value}


# Keys of the settings columns that are results or follow the seed, not settings.
NOT_SETTINGS = {"jobs_before", "jobs_kept", "jobs_inflated", "assign_seed", "seed"}


def settings(run):
    """A run's settings apart from its seed, as (name, text) pairs in label order."""
    items = [("policy", run.get("policy") or ""), ("placement", run.get("placement") or "")]
    cluster = (run.get("cluster_spec") or "").replace("preset:", "")
    items.append(("cluster", "on " + short(os.path.splitext(os.path.basename(cluster))[0]
                                           or cluster, 32)))
    items.append(("trace", short(os.path.basename(run.get("trace_path") or ""), 32)))
    items.append(("runtime", f"runtime {run.get('runtime_model')}"))
    for column, word in (("params", ""), ("trace_filter", "filter "), ("faults", "faults "),
                         ("models", "models ")):
        for key, text in flat_items(json_object(run.get(column))):
            if key.split(".")[-1] in NOT_SETTINGS:
                continue
            items.append((f"{column}.{key}", f"{word}{key}={short(text, 24)}"))
    cost = run.get("preemption_cost_seconds") or 0
    items.append(("preemption_cost", f"preemption cost {cost:g} s" if cost else ""))
    return items


class Config:
    """Runs that differ only in their seed."""

    def __init__(self, index, runs):
        self.index = index
        self.runs = runs  # run rows (dicts), by run id
        self.ids = [r["run_id"] for r in runs]
        self.label = ""

    @property
    def seeds(self):
        return len(self.runs)


def select_runs(db, wanted, include_interrupted):
    db.row_factory = sqlite3.Row
    rows = {r["run_id"]: dict(r) for r in db.execute("SELECT * FROM runs ORDER BY run_id")}
    db.row_factory = None
    if not rows:
        fail("the database holds no runs")
    for run_id in wanted:
        if run_id not in rows:
            fail(f"no run {run_id} in the database (runs: {', '.join(map(str, sorted(rows)))})")
    kept = []
    for run_id in wanted or sorted(rows):
        status = rows[run_id]["status"]
        jobs = db.execute("SELECT COUNT(*) FROM jobs WHERE run_id = ?", (run_id,)).fetchone()[0]
        if status == "failed" or jobs == 0:
            note(f"run {run_id} left out (status {status}, {jobs} jobs)")
            continue
        if status != "complete" and not include_interrupted:
            if wanted:
                fail(f"run {run_id} has status {status}: its partial schedule would stand beside "
                     "complete ones (clustersim report leaves such runs out too); "
                     "--include-interrupted plots it, marked")
            note(f"run {run_id} left out (status {status}; clustersim report leaves such runs out "
                 "too; --include-interrupted plots them)")
            continue
        kept.append(rows[run_id])
    if not kept:
        fail("no run to plot: every selected run failed or was interrupted")
    return kept


def make_configs(runs, pool, label_format):
    groups = {}
    for run in runs:
        key = tuple(settings(run)) if pool else (run["run_id"],)
        groups.setdefault(key, []).append(run)
    configs = [Config(i, members) for i, members in enumerate(groups.values())]
    if label_format:
        for config in configs:
            first = dict(config.runs[0])
            first["trace"] = os.path.basename(first.get("trace_path") or "")
            first["cluster_spec"] = (first.get("cluster_spec") or "").replace("preset:", "")
            try:
                config.label = label_format.format(**first)
            except (KeyError, IndexError, ValueError) as e:
                fail(f"--label {label_format!r}: {e!r}; fields: {', '.join(sorted(first))}")
    else:
        described = [dict(settings(c.runs[0])) for c in configs]
        names = []
        for config_settings in described:
            for name in config_settings:
                if name not in names:
                    names.append(name)
        varying = [n for n in names if len({d.get(n, "") for d in described}) > 1]
        seeds_vary = not pool and len({r["seed"] for c in configs for r in c.runs}) > 1
        for config, config_settings in zip(configs, described):
            parts = [config_settings.get(n, "") for n in varying]
            if seeds_vary:
                parts.append(f"seed {config.runs[0]['seed']}")
            text = " ".join(p for p in parts if p)
            config.label = text or f"{config_settings['policy']}/{config_settings['placement']}"
            config.label = short(config.label, 70)
    for config in configs:
        if config.seeds > 1:
            config.label += f" ({config.seeds} seeds)"
        statuses = {r["status"] for r in config.runs} - {"complete"}
        if statuses:
            config.label += f" ({', '.join(sorted(statuses))})"
    return configs


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
    """Colour and line style of the index-th configuration: ten colours, then the next style."""
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
        """Writes every format through a temporary file renamed into place (removed if the
        process is interrupted meanwhile)."""
        paths = []
        for ext in self.formats:
            path = os.path.join(self.out_dir, f"{name}.{ext}")
            temporary = f"{path}.tmp-{os.getpid()}"
            try:
                fig.savefig(temporary, dpi=self.dpi, bbox_inches="tight", format=ext)
                os.replace(temporary, path)
            finally:
                if os.path.exists(temporary):
                    os.remove(temporary)
            paths.append(path)
        plt.close(fig)
        return paths


# ---------------------------------------------------------------------------------------------
# CDFs pooled over seeds


def cdf_points(values):
    values = sorted(values)
    n = len(values)
    return values, [(i + 1) / n for i in range(n)]


def ecdf_on_grid(sorted_values, grid):
    n = len(sorted_values)
    return [bisect.bisect_right(sorted_values, x) / n for x in grid]


def grid_for(samples, log_mode):
    """x values where pooled CDFs are evaluated: every distinct value if few, else log-spaced."""
    values = sorted({v for s in samples for v in s})
    if len(values) <= 600:
        return values
    positive = [v for v in values if v > 0]
    lo, hi = positive[0], positive[-1]
    count = 500
    grid = [lo * (hi / lo) ** (i / (count - 1)) for i in range(count)] if hi > lo else [lo]
    if log_mode != "log" and values[0] <= 0:
        grid = [0.0] + grid
    return grid


def draw_cdf(ax, db, configs, column, where, log_mode, paper=False):
    """One curve per configuration: a run's empirical CDF, or the mean of its seeds' CDFs with
    the 95 % band. Returns whether anything was drawn."""
    plotted = False
    for config in configs:
        samples = []
        for run_id in config.ids:
            values = sorted(v / HOUR for (v,) in db.execute(
                f"SELECT {column} FROM jobs WHERE run_id = ? AND {where}", (run_id,)))
            if values:
                samples.append(values)
        if not samples:
            continue
        style = style_of(config.index)
        if len(samples) == 1:
            xs, ys = cdf_points(samples[0])
            ax.step(xs, ys, where="post", label=config.label, **style)
        else:
            grid = grid_for(samples, log_mode)
            curves = [ecdf_on_grid(s, grid) for s in samples]
            stats = [mean_and_half_width([c[i] for c in curves]) for i in range(len(grid))]
            mean = [m for m, _ in stats]
            ax.step(grid, mean, where="post", label=config.label, **style)
            ax.fill_between(grid, [max(0.0, m - h) for m, h in stats],
                            [min(1.0, m + h) for m, h in stats], step="post",
                            color=style["color"], alpha=0.2, linewidth=0)
        plotted = True
    if not plotted:
        return False
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
    return True


def has_column(db, table, column):
    return any(r[1] == column for r in db.execute(f"PRAGMA table_info({table})"))


def pooled_note(configs):
    return any(c.seeds > 1 for c in configs)


def plot_jct(figs, db, configs):
    fig, ax = plt.subplots(figsize=figs.size("cdf"))
    if not draw_cdf(ax, db, configs, "jct", "jct IS NOT NULL", "log"):
        plt.close(fig)
        return None, "no job ended in the plotted runs (arrival-only runs never end their jobs)"
    ax.set_xlabel("JCT (hours, log scale)")
    ax.set_ylabel("fraction of jobs")
    figs.title(ax, "job completion time" +
               (" (mean over seeds; band: 95 % CI)" if pooled_note(configs) else ""))
    figs.legend(ax, n=len(configs))
    return fig, ""


def plot_waits(figs, db, configs):
    panels = [("wait_time", "wait_time IS NOT NULL", "first-start wait (h)",
               "first-start wait (jobs that started)")]
    if has_column(db, "jobs", "queued_time"):
        panels.append(("queued_time", "queued_time IS NOT NULL AND jct IS NOT NULL",
                       "queued time (h)", "queued time: all waiting, after preemptions too"))
    fig, axes = plt.subplots(1, len(panels), figsize=figs.size("wait"), sharey=True,
                             squeeze=False)
    drawn = []
    for ax, (column, where, xlabel, title) in zip(axes[0], panels):
        if draw_cdf(ax, db, configs, column, where, "symlog", figs.paper):
            ax.set_xlabel(xlabel)
            figs.title(ax, title)
            drawn.append(ax)
        else:
            ax.axis("off")
    if not drawn:
        plt.close(fig)
        return None, "no job started in the plotted runs"
    drawn[0].set_ylabel("fraction of jobs")
    if not figs.paper:
        fig.text(0.5, -0.02, "time axes linear below 1 min, logarithmic above" +
                 ("; mean over seeds, band: 95 % CI" if pooled_note(configs) else ""),
                 ha="center", fontsize=8)
    fig.tight_layout()
    h, l = drawn[0].get_legend_handles_labels()
    figs.figure_legend(fig, h, l, len(configs))
    return fig, ""


# ---------------------------------------------------------------------------------------------
# Timelines pooled over seeds


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


TIMELINE_PANELS = [("utilization", "GPU utilization", False),
                   ("queue_length", "queue length (jobs)", False),
                   ("stranded_gpus", "stranded GPUs", True),
                   ("i_frag", "I_frag", True)]


def plot_timelines(figs, db, configs):
    series = {}  # run id -> rows
    for config in configs:
        for run_id in config.ids:
            rows = db.execute(
                "SELECT t_start, t_end, utilization, queue_length, stranded_gpus, i_frag "
                "FROM timeseries WHERE run_id = ? AND gpu_type = 'all' ORDER BY t_start",
                (run_id,)).fetchall()
            if rows:
                series[run_id] = rows
    if not series:
        return None, "no timeseries rows"
    # One averaging window for every run: 1/100 of the longest span unless --smooth says.
    span = max(rows[-1][1] - rows[0][0] for rows in series.values())
    hours = figs.smooth_hours if figs.smooth_hours is not None else span / 100 / HOUR
    # Per configuration and panel: t (days) -> values over its seeds. A seed whose run ended
    # earlier counts 0 after its end (nothing runs or waits any more), so the mean does not jump
    # when the shortest seed ends.
    curves = {}
    for config in configs:
        for p, (_, _, smoothed) in enumerate(TIMELINE_PANELS):
            per_run = []
            for run_id in config.ids:
                rows = series.get(run_id)
                if not rows:
                    continue
                interval = max(1e-9, rows[0][1] - rows[0][0])
                window = max(1, int(round(hours * HOUR / interval)))
                values = [r[2 + p] if r[2 + p] is not None else 0.0 for r in rows]
                if smoothed and window > 1:
                    values = moving_average(values, window)
                per_run.append(({(r[0] + r[1]) / 2 / DAY: v for r, v in zip(rows, values)},
                                rows[-1][1] / DAY))
            if not per_run:
                continue
            times = sorted({t for values, _ in per_run for t in values})
            by_t = []
            for t in times:
                values = [v[t] if t in v else 0.0 for v, end in per_run if t in v or t > end]
                by_t.append((t, values))
            curves[(config.index, p)] = by_t
    shown = [p for p in range(len(TIMELINE_PANELS))
             if any(v != 0 for (_, q), points in curves.items() if q == p
                    for _, values in points for v in values)]
    left_out = [TIMELINE_PANELS[p][1] for p in range(len(TIMELINE_PANELS)) if p not in shown]
    if not shown:
        return None, "every timeline is zero throughout"
    size = figs.size("timelines")
    fig, axes = plt.subplots(len(shown), 1, figsize=(size[0], size[1] * len(shown) / 4 + 0.6),
                             sharex=True, squeeze=False)
    axes = [a[0] for a in axes]
    for ax, p in zip(axes, shown):
        name, ylabel, smoothed = TIMELINE_PANELS[p]
        all_values = []
        for config in configs:
            points = curves.get((config.index, p))
            if not points:
                continue
            t = [x for x, _ in points]
            stats = [mean_and_half_width(values) for _, values in points]
            mean = [m for m, _ in stats]
            all_values += mean
            style = style_of(config.index)
            ax.plot(t, mean, label=config.label, linewidth=0.9 if not figs.paper else 0.7,
                    **style)
            if config.seeds > 1:
                # Every panel's quantity is >= 0; utilization and I_frag are <= 1.
                top = 1.0 if name in ("utilization", "i_frag") else math.inf
                ax.fill_between(t, [max(0.0, m - h) if not math.isnan(h) else m for m, h in stats],
                                [min(top, m + h) if not math.isnan(h) else m for m, h in stats],
                                color=style["color"], alpha=0.2, linewidth=0)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        if name == "utilization":
            ax.set_ylim(0, 1.02)
        elif name == "i_frag":
            ax.set_ylim(-0.02, 1.02)
        elif spans_decades(all_values, LOG_DECADES_LINES):
            ax.set_yscale("symlog", linthresh=1)
            ax.set_ylabel(ylabel + ", log")
            ax.set_ylim(bottom=0)
        else:
            ax.set_ylim(bottom=0)
        if smoothed and hours * HOUR > min(r[0][1] - r[0][0] for r in series.values()):
            ax.text(0.99, 0.95, f"moving average over {hours:.3g} h", transform=ax.transAxes,
                    va="top", ha="right", fontsize=6 if figs.paper else 8, alpha=0.8)
    figs.title(axes[0], "interval averages over simulated time" +
               (" (mean over seeds; band: 95 % CI)" if pooled_note(configs) else ""))
    axes[-1].set_xlabel("simulated time (days)")
    fig.tight_layout()
    h, l = axes[0].get_legend_handles_labels()
    figs.figure_legend(fig, h, l, len(configs))
    message = f"timelines: left out {', '.join(left_out)} (zero throughout)" if left_out else ""
    return fig, message


# ---------------------------------------------------------------------------------------------
# Bars: per GPU type and headline figures, mean over seeds with 95 % error bars


def summary_values(db, run_id, metric):
    return {
        scope: value
        for scope, value in db.execute(
            "SELECT scope, value FROM summary WHERE run_id = ? AND metric = ?", (run_id, metric)
        )
    }


def config_value(db, config, metric, scope="all", scale=1.0, shares=None):
    """Mean and 95 % half-width over the configuration's seeds of a summary figure; with
    `shares` (comparable_figures), each run's value times its share of the shared horizon."""
    values = [summary_values(db, r, metric).get(scope) for r in config.ids]
    values = [v * (shares[r] if shares else 1.0) / scale
              for r, v in zip(config.ids, values) if v is not None and not math.isnan(v)]
    return mean_and_half_width(values)


def config_figure(figures, config, metric, scale=1.0):
    """Mean and 95 % half-width over the configuration's seeds of a comparable figure (scope
    'all', utilization and cost over the shared horizon; comparable_figures)."""
    values = [figures[r][0].get(metric) for r in config.ids]
    values = [v / scale for v in values if v is not None and not math.isnan(v)]
    return mean_and_half_width(values)


def all_ids(configs):
    return [run_id for config in configs for run_id in config.ids]


def error_bars(stats):
    errors = [h if not math.isnan(h) else 0.0 for _, h in stats]
    return errors if any(errors) else None


def plot_gpu_types(figs, db, configs):
    scopes = set()
    for config in configs:
        for run_id in config.ids:
            scopes |= set(summary_values(db, run_id, "gpu_utilization"))
    if not scopes:
        return None, "no gpu_utilization rows"
    types = sorted(s for s in scopes if s != "all")
    if len(types) <= 1:
        return None, "the plotted runs have one GPU type (the headline figure gives its " \
                     "utilization)"
    groups = types + ["all"]
    size = figs.size("bars")
    fig, ax = plt.subplots(figsize=(max(size[0], (1.4 if not figs.paper else 0.7) * len(groups)
                                        + 1), size[1]))
    width = 0.8 / max(1, len(configs))
    # Over the runs' shared horizon: each run's own-span utilization x its span / the horizon.
    shares = {run_id: share for run_id, (_, share) in
              comparable_figures(db, all_ids(configs)).items()}
    for i, config in enumerate(configs):
        xs = [g + (i - (len(configs) - 1) / 2) * width for g in range(len(groups))]
        stats = [config_value(db, config, "gpu_utilization", group, shares=shares)
                 for group in groups]
        ys = [m if not math.isnan(m) else 0 for m, _ in stats]
        ax.bar(xs, ys, width, yerr=error_bars(stats), capsize=2, label=config.label,
               color=style_of(config.index)["color"], hatch=hatch_of(config.index),
               edgecolor="white", linewidth=0, error_kw={"linewidth": 0.8})
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=15)
    ax.set_ylabel("GPU utilization (shared horizon)")
    ax.set_ylim(0, 1.05)
    figs.title(ax, "utilization per GPU type" +
               (" (mean over seeds, 95 % CI)" if pooled_note(configs) else ""))
    ax.grid(True, axis="y", alpha=0.3)
    figs.legend(ax, n=len(configs))
    return fig, ""


def plot_headline(figs, db, configs):
    panels = []
    left_out = []
    figures = comparable_figures(db, all_ids(configs))
    for metric, title, scale in HEADLINE:
        stats = [config_figure(figures, config, metric, scale) for config in configs]
        if all(math.isnan(m) or m == 0 for m, _ in stats):
            left_out.append(title)
            continue
        panels.append((title, stats))
    if not panels:
        return None, "no headline figure has a value"
    cols = 3 if len(panels) > 4 else min(2, len(panels))
    rows_n = (len(panels) + cols - 1) // cols
    full = figs.size("headline")
    fig, axes = plt.subplots(rows_n, cols, figsize=(full[0], full[1] * rows_n / 3 + 0.5),
                             squeeze=False)
    colours = [style_of(c.index)["color"] for c in configs]
    hatches = [hatch_of(c.index) for c in configs]
    # Short names under the bars when they fit; else numbers the legend explains.
    ticks = [c.label for c in configs]
    numbered = len(configs) > 6 or any(len(t) > 14 for t in ticks)
    if numbered:
        ticks = [str(i + 1) for i in range(len(configs))]
    for ax, (title, stats) in zip(axes.flat, panels):
        values = [m if not math.isnan(m) else 0 for m, _ in stats]
        ax.bar(range(len(configs)), values, color=colours, hatch=hatches, edgecolor="white",
               linewidth=0, yerr=error_bars(stats), capsize=2, error_kw={"linewidth": 0.8})
        if spans_decades(values, LOG_DECADES_BARS):
            ax.set_yscale("log")
            title += ", log scale"
        ax.set_xticks(range(len(configs)))
        ax.set_xticklabels(ticks, fontsize=7 if len(configs) > 12 or not numbered else None,
                           rotation=0 if numbered else 20, ha="center" if numbered else "right")
        ax.set_title(title, fontsize=8 if figs.paper else 10)  # a panel name, kept in paper style
        ax.grid(True, axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    handles = [plt.Rectangle((0, 0), 1, 1, facecolor=colours[i], hatch=hatches[i],
                             edgecolor="white") for i in range(len(configs))]
    if not figs.paper:
        fig.suptitle("headline figures by configuration" +
                     (" (mean over seeds; error bars: 95 % CI)" if pooled_note(configs) else ""))
    fig.tight_layout()
    labels = [f"{i + 1}: {c.label}" if numbered else c.label for i, c in enumerate(configs)]
    figs.figure_legend(fig, handles, labels, len(configs))
    message = f"headline: left out {', '.join(left_out)} (no value other than 0)" \
        if left_out else ""
    return fig, message


def plot_placement_curve(figs, db, configs):
    """Unallocated against arrived GPU capacity, one curve per configuration (mean over its
    seeds, and the band from the lowest to the highest seed); None without rows."""
    if not table_exists(db, "placement_curve"):
        return None, ""
    fig, (ax, zoom) = plt.subplots(1, 2, figsize=figs.size("curve"),
                                   gridspec_kw={"width_ratios": [3, 2]})
    drawn = 0
    for config in configs:
        by_percent = {}
        members = 0
        for run_id in config.ids:
            rows = db.execute("SELECT percent, unallocated_share FROM placement_curve WHERE "
                              "run_id = ? ORDER BY percent", (run_id,)).fetchall()
            members += bool(rows)
            for percent, unallocated in rows:
                by_percent.setdefault(percent, []).append(100 * unallocated)
        if not members:
            continue
        drawn += 1
        # Percents every seed reached, so the mean is over the same runs everywhere.
        xs = [p for p in sorted(by_percent) if len(by_percent[p]) == members]
        mean = [sum(by_percent[p]) / len(by_percent[p]) for p in xs]
        style = style_of(config.index)
        for panel in (ax, zoom):
            panel.plot(xs, mean, label=config.label, **style)
            if members > 1:
                panel.fill_between(xs, [min(by_percent[p]) for p in xs],
                                   [max(by_percent[p]) for p in xs], color=style["color"],
                                   alpha=0.2, linewidth=0)
    if not drawn:
        plt.close(fig)
        return None, ""
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
    figs.legend(zoom, drawn)
    fig.tight_layout()
    return fig, ""


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
    parser.add_argument("--occupancy-colour", choices=("auto", "job", "user", "size"),
                        default="auto",
                        help="occupancy chart colours: by job, user or size class (GPUs "
                             "requested); auto (default): by job up to "
                             f"{OCCUPANCY_JOBS_BY_JOB} jobs in the window, beyond that by user "
                             "when the run's jobs name several users, else by size")


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
    colour_by = args.occupancy_colour
    if colour_by == "auto":
        jobs = len({r[0] for r in rows})
        users = len({r[5] or "" for r in rows} - {""})
        colour_by = "job" if jobs <= OCCUPANCY_JOBS_BY_JOB else "user" if users > 1 else "size"
        if colour_by != "job":
            note(f"occupancy_run{run_id}: {jobs} jobs in the window, more than "
                 f"{OCCUPANCY_JOBS_BY_JOB}: coloured by {colour_by} (--occupancy-colour)")
    sizes = {}
    if colour_by == "size":
        sizes = dict(db.execute("SELECT job_index, gpus_requested FROM jobs WHERE run_id = ?",
                                (run_id,)).fetchall())
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
    if colour_by == "user":
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
        if colour_by == "user":
            k = users[user or ""]
            colour = colours[k] if k < len(colours) else (0.6, 0.6, 0.6)
        elif colour_by == "size":
            colour = SIZE_COLOURS[size_class(sizes.get(job), milli)]
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
                                     alpha=0.9 if colour_by == "job" else 0.8))
    ax.set_xlim(lo / HOUR, hi / HOUR)
    rows_total = len(layout) if args.occupancy_by == "nodes" else total
    ax.set_ylim(0, rows_total)
    ax.invert_yaxis()
    ax.set_xlabel("simulated time (hours)")
    ax.set_ylabel("node" if args.occupancy_by == "nodes" else "GPU index")
    what = {"user": "user (the 20 with most intervals; others grey)",
            "size": "GPUs requested", "job": "job"}[colour_by]
    ax.set_title(f"cluster occupancy, run {label}: {len(rows)} running intervals, coloured by "
                 f"{what}", fontsize=10)
    if colour_by == "size":
        present = {size_class(sizes.get(r[0]), r[3]) for r in rows}
        handles = [plt.Rectangle((0, 0), 1, 1, facecolor=SIZE_COLOURS[name])
                   for name in SIZE_CLASSES if name in present]
        ax.legend(handles, [f"{name} GPUs" for name in SIZE_CLASSES if name in present],
                  fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(True, axis="x", alpha=0.3)
    return fig


# Size classes of the occupancy chart, as validation's (sim/engine/validation.h), and their
# colours (a sequential map: larger jobs darker).
SIZE_CLASSES = ["<1", "1", "2-4", "5-8", "9-32", "33+"]
SIZE_COLOURS = {"<1": "#c6dbef", "1": "#9ecae1", "2-4": "#6baed6", "5-8": "#3182bd",
                "9-32": "#08519c", "33+": "#08306b"}


def size_class(gpus, milli):
    gpus = gpus or 0
    if gpus <= 1 and milli and 0 < milli < 1000:
        return "<1"
    if gpus <= 1:
        return "1"
    if gpus <= 4:
        return "2-4"
    if gpus <= 8:
        return "5-8"
    return "9-32" if gpus <= 32 else "33+"


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


def allocation_and_validation_figures(figs, db, configs, args):
    written = []
    has_allocations = table_exists(db, "allocations")
    has_validation = table_exists(db, "validation_series")
    labels = {}
    for config in configs:
        for run in config.runs:
            labels[run["run_id"]] = f"{run['run_id']}: {config.label}"
            if config.seeds > 1:
                labels[run["run_id"]] = f"{run['run_id']}: {config.label} seed {run['seed']}"
    for run_id in sorted(labels):
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


def stop_on_signal(signum, frame):
    """SIGTERM ends the script as Ctrl-C does: through the `finally` blocks that remove a figure
    written halfway."""
    del frame
    raise KeyboardInterrupt(f"signal {signum}")


def prepare_out(args):
    default = args.out is None
    args.out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.db)), "figures")
    parent = os.path.dirname(os.path.abspath(args.out))
    if not default and not args.mkdir and not os.path.isdir(parent):
        fail(f"--out {args.out}: the folder {parent} does not exist (create it first, or add "
             "--mkdir to create it)")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        fail(f"--out {args.out}: a file, not a folder")
    os.makedirs(args.out, exist_ok=True)


def main(argv):
    parser = argparse.ArgumentParser(
        description="Figures from a clustersim SQLite database: the JCT and wait CDFs, "
                    "timelines, per-GPU-type utilization, headline bars and, where the runs have "
                    "the rows, the placement curve, occupancy and validation charts. Runs that "
                    "differ only in their seed are pooled: mean and 95 % confidence band.")
    parser.add_argument("db", help="results database (clustersim run --out)")
    parser.add_argument("--out", help="output folder (default: figures/ next to the database)")
    parser.add_argument("--mkdir", action="store_true",
                        help="create the folder --out is in if it does not exist")
    parser.add_argument("--run", type=int, nargs="+", action="extend", default=[],
                        help="run ids to plot (default: every complete run)")
    parser.add_argument("--label", help="configuration labels: a format string over the runs "
                        "columns, e.g. '{policy}' (default: the settings that differ)")
    parser.add_argument("--no-pool", action="store_true",
                        help="one line per run instead of one per configuration (seeds pooled)")
    parser.add_argument("--include-interrupted", action="store_true",
                        help="plot interrupted runs too (marked); left out by default, as "
                             "clustersim report leaves them out")
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
    if args.dpi < 10 or args.dpi > 2000:
        fail(f"--dpi {args.dpi}: expected 10 to 2000")
    check_allocation_arguments(args)
    db = open_db(args.db)
    runs = select_runs(db, args.run, args.include_interrupted)
    configs = make_configs(runs, not args.no_pool, args.label)
    differences = job_set_differences(db, all_ids(configs))
    if differences:
        text = "; ".join(differences)
        if not args.allow_different_jobs:
            fail(f"the plotted runs did not see the same jobs, so their figures are not "
                 f"comparable: {text}. --allow-different-jobs plots them anyway; --run picks "
                 "runs that saw the same jobs")
        print(f"plot.py: warning: the runs saw different jobs: {text}", file=sys.stderr)
    prepare_out(args)
    global plt
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot

    plt = matplotlib.pyplot
    figs = Figures(args)
    for config in configs:
        for run in config.runs:
            print(f"run {run['run_id']}: {config.label}", file=sys.stderr)

    written = []
    for name, draw in (("jct_cdf", plot_jct), ("wait_cdf", plot_waits),
                       ("timelines", plot_timelines), ("gpu_type_utilization", plot_gpu_types),
                       ("headline", plot_headline), ("placement_curve", plot_placement_curve)):
        fig, message = draw(figs, db, configs)
        if fig is not None:
            written += figs.save(fig, name)
            if message:
                note(message)
        elif message:
            note(f"{name} left out: {message}")
    written += allocation_and_validation_figures(figs, db, configs, args)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, stop_on_signal)
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        print("plot.py: interrupted; no figure was left half-written", file=sys.stderr)
        sys.exit(130)
