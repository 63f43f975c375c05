#!/usr/bin/python3
"""How cost grows (bench/README.md): wall time and peak RSS of `clustersim run` against jobs and
against GPUs, for fcfs, easy and conservative, from the `scaling` case of bench/scale_bench.sh.

    /usr/bin/python3 bench/plot_scaling.py build/bench-results/scale/scale.tsv --out bench/scaling.png

Per (case, x) the median over rounds. Each panel's legend gives the exponent b of the least-squares
fit wall = a x^b (in log-log), per policy: b near 1 is linear growth, near 0 constant. Against
GPUs the fit is also given as wall = c + d log10(GPUs) when that fits better (smaller residual).
Prints the fitted values. Standard library and Debian's python3-matplotlib only.
"""
import argparse
import csv
import math
import statistics
import sys


def fit_power(xs, ys):
    """Least squares of log y = log a + b log x; returns (a, b)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    sxx = sum((x - mx) ** 2 for x in lx)
    b = sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / sxx
    return math.exp(my - b * mx), b


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tsv")
    parser.add_argument("--out", default="bench/scaling.png")
    args = parser.parse_args()
    rows = list(csv.DictReader(open(args.tsv), delimiter="\t"))
    # series[(axis, policy)][x] = [(wall, rss), ...]
    series = {}
    for row in rows:
        name = row["case"]
        if not name.startswith("scaling_"):
            continue
        _, axis, x, policy = name.split("_", 3)
        series.setdefault((axis, policy), {}).setdefault(int(x), []).append(
            (float(row["wall_s"]), float(row["peak_rss_mb"])))
    if not series:
        sys.exit(f"{args.tsv}: no scaling_ rows (run bench/scale_bench.sh scaling)")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
    labels = {"jobs": "jobs (on 100,000 GPUs, load 0.75)",
              "gpus": "GPUs (1,000,000 jobs, load 0.75 on each)"}
    for col, axis in enumerate(("jobs", "gpus")):
        for policy, marker in (("fcfs", "o"), ("easy", "s"), ("conservative", "^")):
            points = series.get((axis, policy))
            if not points:
                continue
            xs = sorted(points)
            walls = [statistics.median(w for w, _ in points[x]) for x in xs]
            rss = [statistics.median(r for _, r in points[x]) for x in xs]
            _, b_wall = fit_power(xs, walls)
            _, b_rss = fit_power(xs, rss)
            axes[0][col].plot(xs, walls, marker=marker, label=f"{policy} (x^{b_wall:.2f})")
            axes[1][col].plot(xs, rss, marker=marker, label=f"{policy} (x^{b_rss:.2f})")
            print(f"{axis:4s} {policy:13s} wall ~ x^{b_wall:.3f}  rss ~ x^{b_rss:.3f}  "
                  + "  ".join(f"{x}: {w:.2f} s {r:.0f} MB" for x, w, r in zip(xs, walls, rss)))
        for row, what in ((0, "wall time (s)"), (1, "peak RSS (MB)")):
            ax = axes[row][col]
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(labels[axis])
            ax.set_ylabel(what)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(title="fitted growth", fontsize=9)
    fig.suptitle("clustersim run end to end (parse, simulate, write SQLite), first-fit, 8 GPUs per "
                 "node: cost against jobs and against GPUs")
    fig.tight_layout()
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
