#!/usr/bin/python3
"""How a run's cost grows with jobs and with GPUs: the figure of bench/README.md.

usage: scripts/plot_growth.py TSV [--axes jobs,gpus] [--out PNG] [--fit-from JOBS] [--dpi N]
                               [--table]

TSV is what bench/growth_bench.sh appends to (build/bench-results/growth/growth.tsv); a point
measured more than once counts as the median of its completed rounds. Writes one PNG (default
bench/figures/growth.png) with a column of two log-log panels per axis of bench/growth_bench.sh
(--axes, default jobs,gpus): wall time and peak RSS against jobs (fixed GPUs) or against GPUs
(fixed jobs), one line per policy; user CPU seconds as a dashed line of
the same colour beside the wall time. Runs ended by the time limit are drawn as an open marker at
the time they were ended ("over limit") and are not fitted; points not run are left out.

Fits (printed and in the legends), on wall seconds t:
  jobs axes   t = a * n^b, least squares on log t against log n over the points with
              n >= --fit-from jobs (default 100,000: below it fixed start-up costs dominate);
              b near 1 is linear growth.
  GPUs axes   both t = a * n^b and t = a + c * ln n, over every point; the one with the smaller
              root mean square of ln(t_fit / t) ("rms" in the legend) is named the better fit.
The same fits on user seconds are printed too (the machine is shared: wall time carries the load
of other processes, user time less so). --table also prints, per axis, a Markdown table of the
points (the one in bench/README.md): per policy wall / user seconds and peak RSS, "> T" for a run
ended by the time limit, "not run" for a point skipped after one.
"""
import argparse
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

POLICIES = ["fcfs", "easy", "conservative"]
# axis -> (what varies, x label, fixed part for the title)
AXES = {
    "jobs": ("jobs", "jobs (on 128 x 8 = 1,024 GPUs)", "1,024 GPUs"),
    "jobs-scale": ("jobs", "jobs (on 12,500 x 8 = 100,000 GPUs)", "100,000 GPUs"),
    "gpus": ("gpus", "GPUs (nodes of 8; 1,000,000 jobs)", "1,000,000 jobs"),
    "gpus-100k": ("gpus", "GPUs (nodes of 8; 100,000 jobs)", "100,000 jobs"),
}
COLORS = {"fcfs": "tab:blue", "easy": "tab:orange", "conservative": "tab:green"}


def read(path):
    """One row per point: the median of its completed rounds, else its last row."""
    rounds = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            key = (row["axis"], row["policy"], int(row["jobs"]), int(row["gpus"]))
            rounds.setdefault(key, []).append(row)
    points = {}
    for key, rows in rounds.items():
        ok = [r for r in rows if r["status"] == "ok"]
        if not ok:
            points[key] = dict(rows[-1], rounds="0")
            continue
        row = dict(ok[-1], rounds=str(len(ok)))
        for col in ("wall_s", "user_s", "peak_rss_mb"):
            row[col] = str(float(np.median([float(r[col]) for r in ok])))
        points[key] = row
    return points


def power_fit(n, t):
    """(a, b, rms of ln residuals) of t = a * n^b, least squares on logs."""
    x, y = np.log(n), np.log(t)
    b, ln_a = np.polyfit(x, y, 1)
    rms = float(np.sqrt(np.mean((ln_a + b * x - y) ** 2)))
    return math.exp(ln_a), float(b), rms


def log_fit(n, t):
    """(a, c, rms of ln residuals) of t = a + c * ln n, least squares on t."""
    x = np.log(n)
    c, a = np.polyfit(x, t, 1)
    fitted = a + c * x
    if np.any(fitted <= 0):
        return float(a), float(c), math.inf
    rms = float(np.sqrt(np.mean((np.log(fitted) - np.log(t)) ** 2)))
    return float(a), float(c), rms


def series(points, axis, policy):
    """Sorted rows of one policy on one axis, with n the axis's variable."""
    rows = [r for (ax, pol, _, _), r in points.items() if ax == axis and pol == policy]
    key = AXES[axis][0]
    return sorted(rows, key=lambda r: int(r[key])), key


def plain_log_ticks(ax):
    """Plain numbers on a log y axis; minor ticks labelled too where it spans under a decade, and
    the 2x and 5x ones where it spans under two."""
    lo, hi = ax.get_ylim()
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_formatter(plain)
    if hi / lo < 10:
        ax.yaxis.set_minor_formatter(plain)
    elif hi / lo < 100:
        ax.yaxis.set_minor_formatter(FuncFormatter(
            lambda v, _: f"{v:g}" if round(v / 10 ** math.floor(math.log10(v) + 1e-9)) in (2, 5)
            else ""))


def fmt_n(n):
    for div, unit in ((1_000_000, "M"), (1_000, "k")):
        if n >= div:
            v = n / div
            return f"{v:g}{unit}" if v >= 10 or v == int(v) else f"{v:.1f}{unit}"
    return str(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tsv")
    ap.add_argument("--axes", default="jobs,gpus")
    ap.add_argument("--out", default="bench/figures/growth.png")
    ap.add_argument("--fit-from", type=int, default=100_000)
    ap.add_argument("--dpi", type=int, default=110)
    ap.add_argument("--table", action="store_true")
    args = ap.parse_args()
    try:
        points = read(args.tsv)
    except (OSError, KeyError, ValueError) as e:
        ap.error(f"{args.tsv}: not a growth_bench.sh TSV ({e})")

    out_dir = os.path.dirname(args.out) or "."
    if not os.path.isdir(out_dir):
        ap.error(f"--out {args.out}: folder {out_dir} does not exist")
    names = args.axes.split(",")
    unknown = [a for a in names if a not in AXES]
    if unknown:
        ap.error(f"unknown axis {unknown[0]} (axes: {', '.join(AXES)})")
    fig, axes = plt.subplots(2, len(names), figsize=(7 * len(names), 14), squeeze=False)
    for col, axis in enumerate(names):
        ax_t, ax_m = axes[0][col], axes[1][col]
        for policy in POLICIES:
            rows, key = series(points, axis, policy)
            if not rows:
                continue
            color = COLORS[policy]
            ok = [r for r in rows if r["status"] == "ok"]
            over = [r for r in rows if r["status"] == "over_limit"]
            n = np.array([int(r[key]) for r in ok], dtype=float)
            wall = np.array([float(r["wall_s"]) for r in ok])
            user = np.array([float(r["user_s"]) for r in ok])
            rss = np.array([float(r["peak_rss_mb"]) for r in ok])
            label = policy
            if key == "jobs":
                sel = n >= args.fit_from
                if sel.sum() >= 2:
                    _, b, _ = power_fit(n[sel], wall[sel])
                    _, bu, _ = power_fit(n[sel], user[sel])
                    label += (f"\n  wall ~ n^{b:.2f}, user ~ n^{bu:.2f} "
                              f"(fit over n ≥ {fmt_n(args.fit_from)})")
                    print(f"{axis} {policy}: wall b={b:.3f}, user b={bu:.3f} over "
                          f"{int(sel.sum())} points >= {args.fit_from}")
            elif len(n) >= 2:
                _, b, rms_p = power_fit(n, wall)
                a, c, rms_l = log_fit(n, wall)
                _, bu, rms_pu = power_fit(n, user)
                au, cu, rms_lu = log_fit(n, user)
                better = "a+c·ln n" if rms_l < rms_p else "power law"
                better_u = "a+c·ln n" if rms_lu < rms_pu else "power law"
                label += (f"\n  wall ~ n^{b:.2f} (rms {rms_p:.2f}) or {a:.1f}+{c:.2f}·ln n "
                          f"(rms {rms_l:.2f}): {better} fits better"
                          f"\n  user ~ n^{bu:.2f} (rms {rms_pu:.2f}) or {au:.1f}+{cu:.2f}·ln n "
                          f"(rms {rms_lu:.2f}): {better_u} fits better")
                print(f"{axis} {policy}: wall power b={b:.3f} rms={rms_p:.3f}; "
                      f"log a={a:.3f} c={c:.3f} rms={rms_l:.3f} -> {better}; "
                      f"user power b={bu:.3f} rms={rms_pu:.3f}; log a={au:.3f} c={cu:.3f} "
                      f"rms={rms_lu:.3f} -> {'a+c·ln n' if rms_lu < rms_pu else 'power law'}")
            ax_t.plot(n, wall, "o-", color=color, label=label)
            ax_t.plot(n, user, "s--", color=color, alpha=0.6, markersize=4)
            ax_m.plot(n, rss, "o-", color=color, label=policy)
            if over:
                no = [int(r[key]) for r in over]
                ax_t.plot(no, [float(r["wall_s"]) for r in over], "o", color=color,
                          markerfacecolor="none", markersize=11, markeredgewidth=2,
                          label=f"{policy}: over the time limit (ended)")
                ax_m.plot(no, [float(r["peak_rss_mb"]) for r in over], "o", color=color,
                          markerfacecolor="none", markersize=11, markeredgewidth=2)
        var, what, fixed = AXES[axis]
        var = "jobs" if var == "jobs" else "GPUs"
        ax_t.plot([], [], "k-", label="solid: wall s; dashed: user CPU s")
        ax_t.set_title(f"Wall time against {var}, {fixed}")
        ax_m.set_title(f"Peak RSS against {var}, {fixed}")
        for ax in (ax_t, ax_m):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(what)
            ax.grid(True, which="both", alpha=0.3)
        plain_log_ticks(ax_t)
        plain_log_ticks(ax_m)
        ax_t.set_ylabel("seconds (end to end: parse, simulate, write SQLite)")
        ax_m.set_ylabel("peak resident set (MB)")
        ax_t.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1)
        ax_m.legend(fontsize=9, loc="upper left")
    fig.suptitle("clustersim run: cost against jobs and GPUs (first-fit, load 0.75, "
                 "bench/growth_bench.sh)")
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    fig.savefig(args.out, dpi=args.dpi)
    print(f"wrote {args.out}", file=sys.stderr)
    if args.table:
        for axis in names:
            table(points, axis)


def table(points, axis):
    """Prints the Markdown table of one axis: a row per point, a column per policy."""
    var = AXES[axis][0]
    ns = sorted({key[2 if var == "jobs" else 3] for key in points if key[0] == axis})
    print(f"\n{axis}: {AXES[axis][1]}\n")
    print(f"| {var} | " + " | ".join(f"{p}: wall / user s, peak RSS" for p in POLICIES)
          + " | fcfs: utilization, mean queue |")
    print("|---:|" + "---:|" * len(POLICIES) + "---|")
    for n in ns:
        cells, load = [], ""
        for policy in POLICIES:
            rows = [r for key, r in points.items()
                    if key[0] == axis and key[1] == policy and int(r[var]) == n]
            if not rows:
                cells.append("")
                continue
            r = rows[0]
            if r["status"] == "ok":
                rounds = f" ({r['rounds']} rounds)" if int(r["rounds"]) > 1 else ""
                cells.append(f"{float(r['wall_s']):.2f} / {float(r['user_s']):.2f} s, "
                             f"{float(r['peak_rss_mb']):,.0f} MB{rounds}")
                if policy == "fcfs" and r.get("utilization_pct"):
                    load = f"{r['utilization_pct']} %, {r['mean_queue_jobs']} jobs"
            elif r["status"] == "over_limit":
                cells.append(f"> {float(r['wall_s']):.0f} / {float(r['user_s']):.1f} s "
                             f"(ended), {float(r['peak_rss_mb']):,.0f} MB")
            elif r["status"] == "skipped":
                cells.append("not run")
            else:
                cells.append("failed")
        print(f"| {n:,} | " + " | ".join(cells) + f" | {load} |")


if __name__ == "__main__":
    main()
