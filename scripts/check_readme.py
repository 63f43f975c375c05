#!/usr/bin/python3
"""Re-runs the examples of README.md and of every docs/*.md page and shows where their printed
output no longer matches.

Usage: scripts/check_readme.py [--bin build/cli/clustersim] [--python build/python] [PAGE ...]

Without PAGE it checks README.md and every docs/*.md page. Every "$ " line of a fenced block is a
command, and every command is run, except one carrying a shell comment ("# why it is not run",
e.g. because it takes minutes or needs a Slurm cluster): the page shows it, the check skips it.
A page is one session: its commands run in order (a trailing backslash continues a command; a
here-document "<<'EOF'" takes the lines up to "EOF") in one scratch folder of its own that links
the repository's traces/, scripts/ and tests/, has build/cli/clustersim (--bin) and build/python
(--python) as in a checkout and an empty results/, so run numbers and databases build up as they
do for a reader who follows the page from the top: a page whose examples need a database makes it
with its own earlier commands. `clustersim` on the PATH is --bin; PYTHONPATH is --python and
`python3` the interpreter it was built for, --python3 (without --python, commands starting
"python3" are skipped, said so). Each page's CPU time is printed, to keep the whole check short.
The text after a command, up to the next command, is compared with what it prints (standard
output, or standard output and error when that is what the page shows); a command shown without
output must exit 0.

Masked: wall-clock times ("wall 0.22 s", "(0.27 s)"), run numbers ("run 3", "runs 3-6"), thread
counts ("on 2 threads") and log lines. The lines of a sweep's finished runs are compared in run
order, whatever thread finished first. A line "..." stands for any number of lines; a command
shown without output is only run; output the page cuts short after its last shown line matches.
Exit status 1 when some command's output differs or a command runs over --timeout seconds.
"""
import argparse
import difflib
import glob
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MASKS = [(re.compile(r"\b(wall|in|took) +[0-9.]+ ?s\b"), r"\1 <t> s"),
         (re.compile(r"[0-9.]+ s\)"), "<t> s)"),
         (re.compile(r"\b(runs?) [0-9]+(-[0-9]+)?"), r"\1 <n>"),
         (re.compile(r"\bon [0-9]+ threads\b"), "on <n> threads"),  # a machine's core count
         (re.compile(r"^( *)[0-9]+( +[0-9]+  )"), r"\1<n>\2")]
LOG_LINE = re.compile(r"^\[\d{4}-\d\d-\d\d ")
# A sweep's "[3/12] run-0002-..." lines: its threads finish in any order.
PROGRESS = re.compile(r"^\[\d+/(\d+)\] ")
COMMENT = re.compile(r"(^|\s)# ")
HEREDOC = re.compile(r"<<-?\s*'?\"?([A-Za-z_]+)'?\"?")


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
    """Splits a block into [command, [output lines], line index] triples."""
    out = []
    i = first
    while i < last:
        line = lines[i]
        if line.startswith("$ "):
            at = i
            command = line[2:]
            while command.endswith("\\") and i + 1 < last:
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            heredoc = HEREDOC.search(command)
            if heredoc and not COMMENT.search(command):
                while i + 1 < last:
                    i += 1
                    command += "\n" + lines[i]
                    if lines[i].strip() == heredoc.group(1):
                        break
            out.append([command, [], at])
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
    return True  # the page may end its excerpt before the output ends


def run(command, cwd, env, timeout):
    """Runs a shell command; None, with everything it started ended, when it outlasts timeout."""
    process = subprocess.Popen(command, shell=True, cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return None
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def check_page(page, binary, python_path, python3, timeout):
    """Runs a page's commands in a scratch folder of its own; returns (run, skipped, differing)."""
    name = os.path.relpath(page, REPO)
    lines = open(page).read().split("\n")
    scratch = tempfile.mkdtemp(prefix="check_readme.")
    for link in ("traces", "scripts", "tests"):
        os.symlink(os.path.join(REPO, link), os.path.join(scratch, link))
    os.mkdir(os.path.join(scratch, "results"))
    env = dict(os.environ)
    bindir = os.path.join(scratch, "bin")
    os.mkdir(bindir)
    os.symlink(binary, os.path.join(bindir, "clustersim"))
    env["PATH"] = bindir + os.pathsep + env["PATH"]
    # As in a checkout: build/cli/clustersim (the scripts' default) and build/python.
    os.makedirs(os.path.join(scratch, "build", "cli"))
    os.symlink(binary, os.path.join(scratch, "build", "cli", "clustersim"))
    if python_path:
        os.symlink(python_path, os.path.join(scratch, "build", "python"))
        env["PYTHONPATH"] = python_path
        # The interpreter the module was built for, whatever python3 comes first on the PATH.
        os.symlink(python3, os.path.join(bindir, "python3"))
    ran = skipped = differing = 0
    started = time.monotonic()
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        for first, last in blocks(lines):
            for command, expected, at in sessions(lines, first, last):
                if COMMENT.search(command.split("\n")[0]):
                    skipped += 1
                    continue
                if command.startswith("python3") and not python_path:
                    skipped += 1
                    print(f"{name}:{at + 1}: skipped (no --python): $ {command[:60]}")
                    continue
                ran += 1
                result = run(command, scratch, env, timeout)
                if result is None:
                    differing += 1
                    print(f"{name}:{at + 1}: $ {command}\n  still running after {timeout} s")
                    continue
                want_n = normalize(expected)
                if not want_n and result.returncode != 0:
                    differing += 1
                    print(f"{name}:{at + 1}: $ {command}\n  exited {result.returncode}; the page"
                          f" shows no output:\n" + (result.stdout + result.stderr)[-2000:])
                    continue
                got_n = normalize(result.stdout.split("\n"))
                if not matches(want_n, got_n):
                    got_n = normalize((result.stdout + result.stderr).split("\n"))
                if not matches(want_n, got_n):
                    differing += 1
                    print(f"{name}:{at + 1}: $ {command}")
                    sys.stdout.writelines(
                        l + "\n" for l in difflib.unified_diff(want_n, got_n, name, "now",
                                                               lineterm="", n=1))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_seconds = (cpu.ru_utime - cpu_before.ru_utime) + (cpu.ru_stime - cpu_before.ru_stime)
    print(f"{name}: {ran} command(s) run, {skipped} skipped (marked '# ...'"
          f"{' or Python' if not python_path else ''}), {differing} differ"
          f" ({time.monotonic() - started:.0f} s, CPU {cpu_seconds:.0f} s)")
    return ran, skipped, differing


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(REPO, "build/cli/clustersim"))
    ap.add_argument("--python", default=None,
                    help="folder holding the clustersim Python package (build/python)")
    ap.add_argument("--python3", default="/usr/bin/python3",
                    help="the interpreter the module was built for: `python3` in the pages")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per command")
    ap.add_argument("pages", nargs="*",
                    help="Markdown files (default: README.md and docs/*.md)")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    python_path = os.path.abspath(args.python) if args.python else None
    pages = args.pages or ([os.path.join(REPO, "README.md")] +
                           sorted(glob.glob(os.path.join(REPO, "docs", "*.md"))))
    differing = 0
    for page in pages:
        differing += check_page(os.path.abspath(page), binary, python_path, args.python3,
                                args.timeout)[2]
    print(f"{differing} command(s) differ" if differing else "every checked example matches")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
