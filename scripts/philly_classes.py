#!/usr/bin/python3
"""Gives every job of a native CSV trace a priority class 0-3 (weights 50/30/15/5, drawn with
Python's random.seed(11) in file order): the classed Philly trace of bench/scale_bench.sh's
priority_philly case and of scripts/compare_builds.sh's priority runs.

Usage: scripts/philly_classes.py NATIVE_CSV OUT_CSV
"""
import csv
import random
import sys


def main(source, target):
    random.seed(11)
    with open(source, newline="") as src, open(target, "w", newline="") as out:
        rows = csv.DictReader(src)
        writer = csv.DictWriter(out, rows.fieldnames, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            row["priority"] = random.choices([0, 1, 2, 3], weights=[50, 30, 15, 5])[0]
            writer.writerow(row)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
