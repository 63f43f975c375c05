"""clustersim: run GPU-cluster simulations, read their results, write scheduling policies and
train schedulers from Python (docs/python.md).

    import clustersim
    r = clustersim.run(trace="traces/philly_default.csv", cluster="default", policy="fcfs")
    r.summary["jct_seconds_mean"], r.jobs, r.timeseries, r.fingerprint

The C++ core does the simulating; this package passes options to it, adapts Python policies to the
engine's Policy interface and returns results as pandas DataFrames.
"""

import sys as _sys

from . import _paths

try:
    from . import _core
    import numpy  # noqa: F401
    import pandas  # noqa: F401
except ImportError as error:
    raise ImportError(
        f"{error}. clustersim was built for {_paths.PYTHON_EXECUTABLE} and uses Debian's "
        f"python3-numpy and python3-pandas (docs/python.md); this is {_sys.executable}") from error
from ._core import Allocation, Context, InputError, InternalError, Job, JobRun, PolicyError
from ._core import set_log_level
from ._env import Box, Discrete, Env
from ._policy import Policy
from ._run import (Calibration, Database, Result, SimulationWarning, Trace, calibrate,
                   generate_trace, open, read_trace, run)
from . import policies

__all__ = [
    "Allocation", "Box", "Calibration", "Context", "Database", "Discrete", "Env", "InputError",
    "InternalError", "calibrate",
    "Job", "JobRun", "Policy", "PolicyError", "Result", "SimulationWarning", "Trace",
    "cluster_nodes",
    "cluster_presets", "generate_trace", "open", "placements_list", "policies", "policies_list",
    "read_trace", "run", "set_log_level",
]


def policies_list():
    """The registered C++ policies as (name, one-line summary, parameters)."""
    return _core.policies()


def placements_list():
    """The registered placement strategies as (name, one-line summary)."""
    return _core.placements()


def cluster_nodes(cluster="default", hardware=""):
    """The nodes of a cluster (preset name, spec path or spec dict) as a DataFrame: node,
    gpu_type, gpus, rack."""
    import pandas as pd
    from ._args import check_cluster, check_path
    name, spec_json = check_cluster(cluster)
    hardware = check_path(hardware, "hardware", what="a hardware catalog path") if hardware else ""
    nodes = _core.cluster_nodes(name, spec_json, hardware)
    frame = pd.DataFrame(nodes, columns=["gpu_type", "gpus", "rack"])
    frame.insert(0, "node", range(len(frame)))
    return frame


def cluster_presets():
    """The names of the built-in cluster presets."""
    return _core.cluster_presets()
