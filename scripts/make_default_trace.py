#!/usr/bin/python3
"""Derive the bundled default trace (traces/philly_default.csv) from the real Philly trace.

Source: pollux_philly.csv (Microsoft Philly, 2017; CC-BY-4.0), the derived CSV with columns
timestamp,duration,num_gpus,gpu_time,cluster. Mapping (also in traces/README.md):
  - keep rows submitted in [2017-11-03 00:00:00, 2017-11-17 00:00:00) whose virtual cluster is one
    of 11cb48, 103959, 6214e9, 6c71a0;
  - job_id      = "philly-<line number of the row in pollux_philly.csv>" (header is line 1);
  - submit_time = seconds since 2017-11-03 00:00:00 (the trace's wall-clock timestamps);
  - gpus        = num_gpus; duration = duration (seconds); vc = cluster;
  - rows are written sorted by (submit_time, line number). Nothing else is changed or dropped.
Usage: scripts/make_default_trace.py PATH/TO/pollux_philly.csv > traces/philly_default.csv
"""
import argparse
import csv
import datetime
import sys

WINDOW_START = datetime.datetime(2017, 11, 3)
WINDOW_END = datetime.datetime(2017, 11, 17)
VIRTUAL_CLUSTERS = {"11cb48", "103959", "6214e9", "6c71a0"}


def main(path):
    kept = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        for line_number, row in enumerate(reader, start=2):
            submitted = datetime.datetime.strptime(row["timestamp"], "%Y-%m-%d %H:%M:%S")
            if not (WINDOW_START <= submitted < WINDOW_END) or row["cluster"] not in VIRTUAL_CLUSTERS:
                continue
            seconds = (submitted - WINDOW_START).total_seconds()
            kept.append((seconds, line_number, int(row["num_gpus"]), float(row["duration"]),
                         row["cluster"]))
    kept.sort(key=lambda r: (r[0], r[1]))
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["job_id", "submit_time", "gpus", "duration", "vc"])
    for seconds, line_number, gpus, duration, vc in kept:
        out.writerow([f"philly-{line_number}", f"{seconds:.0f}", gpus, f"{duration:.0f}", vc])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("philly_csv", help="pollux_philly.csv")
    main(parser.parse_args().philly_csv)
