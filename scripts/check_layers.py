#!/usr/bin/env python3
"""Checks that every source folder includes only its own layer and the layers below it.

The layers, bottom to top (ARCHITECTURE.md explains each):

    sim/util  <  sim/hardware  <  sim/models, sim/alloc  <  sim/engine
              <  sim/output, policies, workloads  <  app  <  cli, python

sim/models and sim/alloc sit side by side (analytic models; allocators and the placement
constraints' arithmetic): neither includes the other.

sim/output, policies and workloads sit side by side: each may include sim/engine and below, not
one another. Tests, benchmarks, fuzz targets and python bindings sit above everything.

Usage: scripts/check_layers.py [REPO_ROOT]. Prints every wrong include as FILE:LINE: message and
exits 1 if there is one; exits 0 otherwise.
"""
import argparse
import pathlib
import re
import sys

# Folder -> the folders its files may include (its own included).
BELOW = {
    "sim/util": [],
    "sim/hardware": ["sim/util"],
    "sim/models": ["sim/util", "sim/hardware"],
    "sim/alloc": ["sim/util"],
    "sim/engine": ["sim/util", "sim/hardware", "sim/models", "sim/alloc"],
}
BELOW["sim/output"] = BELOW["sim/engine"] + ["sim/engine"]
BELOW["policies"] = BELOW["sim/output"]
BELOW["workloads"] = BELOW["sim/output"]
BELOW["app"] = BELOW["sim/output"] + ["sim/output", "policies", "workloads"]
# The program and the Python module's native part both wrap the run pipeline, side by side.
BELOW["cli"] = BELOW["app"] + ["app"]
BELOW["python"] = BELOW["app"] + ["app"]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(path: str) -> str:
    """Returns the layer folder of a repository-relative path, or '' if it is in none."""
    for folder in sorted(BELOW, key=len, reverse=True):
        if path.startswith(folder + "/"):
            return folder
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", nargs="?", default=".", help="the repository (default: .)")
    root = pathlib.Path(parser.parse_args().root).resolve()
    if not (root / "sim").is_dir():
        parser.error(f"{root}: not a clustersim repository (no sim/ folder)")
    errors = []
    for folder in BELOW:
        for source in sorted((root / folder).glob("*")):
            if source.suffix not in (".h", ".cc"):
                continue
            relative = source.relative_to(root).as_posix()
            allowed = BELOW[folder] + [folder]
            for number, line in enumerate(source.read_text().splitlines(), start=1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                target = match.group(1)
                target_folder = folder_of(target)
                if not target_folder:
                    errors.append(f"{relative}:{number}: includes \"{target}\", which is in no "
                                  "layer (include paths start at the repository root)")
                elif target_folder not in allowed:
                    errors.append(f"{relative}:{number}: {folder} may include only "
                                  f"{', '.join(allowed)}; \"{target}\" is in {target_folder}")
    for error in errors:
        print(error)
    if not errors:
        print(f"layers ok: {len(BELOW)} folders")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
