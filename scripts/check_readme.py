#!/usr/bin/python3
"""Re-runs the README's examples and shows where their printed output no longer matches.

Usage: scripts/check_readme.py [--bin build/cli/clustersim] [--readme README.md]

Every fenced block whose lines start with "$ " is a session: the commands run in order (a
trailing backslash continues a command) in one scratch folder that links the repository's
traces/, scripts/ and tests/, so run numbers and databases build up as they do for a reader who
follows the tour from the top. The text after a command, up to the next command, is compared with
what it prints (standard output, or standard output and error when that is what the README
shows).

Masked: wall-clock times ("wall 0.22 s", "(0.27 s)"), run numbers ("run 3", "runs 3-6"), thread
counts ("on 2 threads") and log lines. The lines of a sweep's finished runs are compared in run
order, whatever thread finished first. A line "..." in the README stands for any number of lines;
a command shown without output is only run; output the README cuts short after its last shown
line matches. Commands whose lines carry a comment ("# ...") are skipped. Exit status 1 when some
command's output differs.
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MASKS = [(re.compile(r"\b(wall|in|took) +[0-9.]+ ?s\b"), r"\1 <t> s"),
         (re.compile(r"[0-9.]+ s\)"), "<t> s)"),
         (re.compile(r"\b(runs?) [0-9]+(-[0-9]+)?"), r"\1 <n>"),
         (re.compile(r"\bon [0-9]+ threads\b"), "on <n> threads"),  # a machine's core count
         (re.compile(r"^( *)[0-9]+( +[0-9]+  )"), r"\1<n>\2")]
LOG_LINE = re.compile(r"^\[\d{4}-\d\d-\d\d ")
# A sweep's "[3/12] run-0002-..." lines: its threads finish in any order.
PROGRESS = re.compile(r"^\[\d+/(\d+)\] ")
RUNNABLE = ("clustersim ", "echo ", "printf ", "zcat ", "gzip ", "sqlite3 ")


def blocks(lines):
    """Yields (first line index, last line index) of each fenced block holding a "$ " line."""
    start = None
    for i, line in enumerate(lines):
        if line.startswith("```"):
            if start is None:
                start = i
            else:
                if any(l.startswith("$ ") for l in lines[start + 1:i]):
                    yield start + 1, i
                start = None


def sessions(lines, first, last):
    """Splits a block into [command, [output lines]] pairs."""
    out = []
    i = first
    while i < last:
        line = lines[i]
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\") and i + 1 < last:
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            out.append([command, []])
        elif out:
            out[-1][1].append(line)
        i += 1
    return out


def normalize(text_lines):
    lines = []
    for line in text_lines:
        if LOG_LINE.match(line):
            continue
        for pattern, replacement in MASKS:
            line = pattern.sub(replacement, line.rstrip())
        lines.append(PROGRESS.sub(r"[k/\1] ", line))
    # Lines of runs finished by parallel threads: compared as a set, in run order.
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and lines[j].startswith("[k/"):
            j += 1
        lines[i:j] = sorted(lines[i:j])
        i = j + 1
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


def matches(want, got):
    """True when got holds want's lines in order, a "..." line in want standing for any lines."""
    segments, current = [], []
    for line in want:
        if line.strip() == "...":
            segments.append(current)
            current = []
        else:
            current.append(line)
    segments.append(current)
    if not want:
        return True
    if got[:len(segments[0])] != segments[0]:
        return False
    at = len(segments[0])
    for segment in segments[1:]:
        while at <= len(got) - len(segment) and got[at:at + len(segment)] != segment:
            at += 1
        if at > len(got) - len(segment):
            return False
        at += len(segment)
    return True  # the README may end its excerpt before the output ends


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(REPO, "build/cli/clustersim"))
    ap.add_argument("--readme", default=os.path.join(REPO, "README.md"))
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    lines = open(args.readme).read().split("\n")
    scratch = tempfile.mkdtemp(prefix="check_readme.")
    for name in ("traces", "scripts", "tests"):
        os.symlink(os.path.join(REPO, name), os.path.join(scratch, name))
    os.mkdir(os.path.join(scratch, "results"))
    env = dict(os.environ)
    bindir = os.path.join(scratch, "bin")
    os.mkdir(bindir)
    os.symlink(binary, os.path.join(bindir, "clustersim"))
    env["PATH"] = bindir + os.pathsep + env["PATH"]
    differing = 0
    for first, last in blocks(lines):
        pairs = sessions(lines, first, last)
        if any("#" in c for c, _ in pairs) or not all(c.startswith(RUNNABLE) for c, _ in pairs):
            continue
        for command, expected in pairs:
            result = subprocess.run(command, shell=True, cwd=scratch, env=env,
                                    capture_output=True, text=True)
            want_n = normalize(expected)
            got_n = normalize(result.stdout.split("\n"))
            if not matches(want_n, got_n):
                got_n = normalize((result.stdout + result.stderr).split("\n"))
            if not matches(want_n, got_n):
                differing += 1
                print(f"README.md:{first + 1}: $ {command}")
                sys.stdout.writelines(
                    l + "\n" for l in difflib.unified_diff(want_n, got_n, "README", "now",
                                                           lineterm="", n=1))
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"{differing} command(s) differ" if differing else "every checked example matches")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
