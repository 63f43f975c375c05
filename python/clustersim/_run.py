"""clustersim.run, Result, open and Trace (docs/python.md).

A run goes through the same code as ``clustersim run``: the options become a run config JSON file
read by the CLI's reader (the keys of ``clustersim run --config``), the trace filter options are
parsed by the CLI's option description, and ExecuteRun simulates and writes the database. Tables
are read back from that database, so ``Result.jobs`` is exactly the ``jobs`` table.
"""

import builtins
import json
import os
import re
import sqlite3
import subprocess
import tempfile
import warnings

import pandas as pd

from . import _core
from ._policy import Policy

__all__ = ["run", "Result", "open", "Database", "Trace", "read_trace", "generate_trace"]

_FILTER_OPTIONS = frozenset(_core.filter_option_names())


def _option_value(value):
    """A filter option's value as the command line takes it (lists become comma lists)."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _relabel(error, path, label):
    """Re-raises a core error whose message names a temporary file as the thing it stands for."""
    message = str(error)
    if path not in message:
        return error
    if label.startswith("trace DataFrame"):
        def row(match):
            line = int(match.group(1))
            column = f", column {match.group(2)}" if match.group(2) else ""
            return f"{label} row {line - 2} (CSV line {line}{column})"
        message = re.sub(re.escape(path) + r":(\d+)(?::(\d+))?", row, message)
    message = re.sub(re.escape(path) + r"(:\d+)*", label, message)
    return type(error)(message)


def _write_trace(trace, path):
    jobs = trace.jobs if isinstance(trace, Trace) else trace
    if not isinstance(jobs, pd.DataFrame):
        raise TypeError("trace: expected a path, a clustersim.Trace or a pandas DataFrame of jobs "
                        f"in the native columns (traces/README.md), not {type(trace).__name__}")
    jobs.to_csv(path, index=False, na_rep="")


def run(trace=None, cluster="default", policy="fcfs", placement="first-fit", params=None,
        out=None, check=False, allow_duplicate=False, **options):
    """Simulates one run and returns its Result.

    trace: a trace file path (any format clustersim reads), a clustersim.Trace or a DataFrame of
      jobs in the native columns (traces/README.md); None = the bundled Philly window.
    cluster: a preset name or spec JSON path, or a spec as a dict (docs/cluster.md).
    policy: a registered policy name (clustersim.policies_list()) or a clustersim.Policy instance.
    placement: a registered placement strategy name.
    params: {key: value} of --param settings for the policy and placement.
    out: a SQLite database to append the run to (None = a temporary one, deleted after reading).
      A run `out` already holds (same trace, cluster, policy name, placement, parameters, seed,
      options) is refused with InputError unless allow_duplicate=True (--allow-duplicate). A
      Python policy is known by its class name only: after changing its code, append with
      allow_duplicate=True or to another database.
    check: verify the engine's invariants after every pass (--check; slow).
    options: any other `clustersim run` option with underscores for dashes, as in a run config
      file (seed, interval, stop_time, preemption_cost, node_mtbf, mttr, runtime_model, format,
      model_aware, ...) or a trace filter (window, vc, user, status, first, map_gpu, ...).
    Raises clustersim.InputError with the core's message for bad input, PolicyError for an invalid
    decision of a Python policy.
    """
    with tempfile.TemporaryDirectory(prefix="clustersim-") as tmp:
        config = {}
        filter_args = []
        trace_label = None
        if trace is not None:
            if isinstance(trace, (str, os.PathLike)):
                config["trace"] = os.fspath(trace)
            else:
                config["trace"] = os.path.join(tmp, "trace.csv")
                config["format"] = "native"
                trace_label = "trace DataFrame"
                _write_trace(trace, config["trace"])
        cluster_json = ""
        if isinstance(cluster, dict):
            cluster_json = json.dumps(cluster)
            config["cluster"] = "dict"
        else:
            config["cluster"] = os.fspath(cluster)
        hooks = None
        supports_shares = False
        policy_name = ""
        if isinstance(policy, Policy):
            hooks = policy._hooks()
            supports_shares = bool(policy.supports_shares)
            policy_name = policy._run_name()
        elif isinstance(policy, type) and issubclass(policy, Policy):
            raise TypeError("policy: pass an instance of the Policy subclass, e.g. "
                            f"policy={policy.__name__}()")
        else:
            config["policy"] = policy
        config["placement"] = placement
        if params:
            config["params"] = dict(params)
        database = os.fspath(out) if out is not None else os.path.join(tmp, "run.sqlite")
        config["out"] = database
        for key, value in options.items():
            option = key.replace("_", "-")
            if option in _FILTER_OPTIONS:
                # "--name=value": a value may start with "-".
                filter_args.append(f"--{option}={_option_value(value)}")
            else:
                config[key] = value
        config_path = os.path.join(tmp, "options.json")
        with builtins.open(config_path, "w") as f:
            json.dump(config, f)
        try:
            outcome = _core.run(config_path, filter_args, cluster_json, hooks, supports_shares,
                                policy_name, bool(check), bool(allow_duplicate))
        except _core.InputError as e:
            error = _relabel(e, config_path, "clustersim.run options")
            message = str(error).replace("--allow-duplicate appends", "allow_duplicate=True appends")
            if message != str(error):
                error = type(error)(message)
            if trace_label:
                error = _relabel(error, config["trace"], trace_label)
            raise error from None
        return Result(outcome, database)


class Result:
    """One run: its summary, jobs and timeseries as read from its database.

    Attributes: run_id; fingerprint (16 hex digits); status ('complete' or 'interrupted');
    events; wall_seconds (parse + simulate + summary); policy (as recorded); summary (dict metric
    -> value, scope 'all'); summary_table (DataFrame: metric, scope, value; per-GPU-type scopes
    too); jobs, timeseries (DataFrames, the `jobs` and `timeseries` tables of results/README.md);
    run (the `runs` row as a dict).
    """

    def __init__(self, outcome, database):
        self.run_id = outcome["run_id"]
        self.fingerprint = outcome["fingerprint"]
        self.status = outcome["status"]
        self.events = outcome["events"]
        self.wall_seconds = outcome["wall_seconds"]
        self.policy = outcome["policy"]
        self.summary_table = pd.DataFrame(outcome["summary"], columns=["metric", "scope", "value"])
        all_scope = self.summary_table[self.summary_table.scope == "all"]
        self.summary = dict(zip(all_scope.metric, all_scope.value))
        db = Database(database)
        self.jobs = db.jobs(self.run_id)
        self.timeseries = db.timeseries(self.run_id)
        runs = db.runs
        self.run = runs[runs.run_id == self.run_id].iloc[0].to_dict()

    def __repr__(self):
        return (f"Result(run_id={self.run_id}, policy={self.policy!r}, status={self.status!r}, "
                f"fingerprint={self.fingerprint!r}, jobs={len(self.jobs)})")


class Database:
    """A clustersim results database (results/README.md) read as DataFrames."""

    def __init__(self, path):
        self.path = os.fspath(path)
        if not os.path.exists(self.path):
            raise _core.InputError(f"{self.path}: no such database")

    def query(self, sql, params=()):
        """Runs a read-only SQL query and returns its rows as a DataFrame."""
        uri = "file:" + self.path + "?mode=ro"
        with sqlite3.connect(uri, uri=True) as connection:
            return pd.read_sql_query(sql, connection, params=params)

    def _table(self, name, run_id):
        if run_id is None:
            return self.query(f"SELECT * FROM {name} ORDER BY run_id")
        return self.query(f"SELECT * FROM {name} WHERE run_id = ?", (int(run_id),))

    @property
    def runs(self):
        return self.query("SELECT * FROM runs ORDER BY run_id")

    def jobs(self, run_id=None):
        return self._table("jobs", run_id)

    def timeseries(self, run_id=None):
        return self._table("timeseries", run_id)

    def summary(self, run_id=None):
        return self._table("summary", run_id)

    def compare(self, runs=None, allow_different_jobs=False):
        """The runs side by side, as `clustersim compare --csv` gives them: one row per run
        (run_id, policy, placement, seed, status, then every summary metric of scope 'all'),
        with gpu_utilization and cost_usd taken over the runs' shared horizon (horizon_seconds:
        first submission to the last run's end; docs/metrics.md#comparing-runs).

        runs: run ids (default: every complete run). The runs must have seen the same jobs (the
        same trace and filters, the same jobs rejected); otherwise InputError names the jobs
        that differ, unless allow_different_jobs=True, which compares them with a warning.
        """
        table = self.runs
        if runs is None:
            ids = [int(r) for r in table.run_id[table.status == "complete"]]
        else:
            ids = [int(r) for r in runs]
            unknown = sorted(set(ids) - set(int(r) for r in table.run_id))
            if unknown:
                raise _core.InputError(f"{self.path}: no run {unknown[0]}")
        if not ids:
            raise _core.InputError(f"{self.path}: no complete run to compare")
        checked = _core.compare_runs(self.path, ids,
                                     "allow_different_jobs=True compares them anyway")
        if checked["message"]:
            if not allow_different_jobs:
                raise _core.InputError(f"{self.path}: {checked['message']}")
            warnings.warn(checked["message"], stacklevel=2)
        marks = ",".join("?" * len(ids))
        summary = self.query(f"SELECT run_id, metric, value FROM summary WHERE scope = 'all' "
                             f"AND run_id IN ({marks})", tuple(ids))
        wide = summary.pivot(index="run_id", columns="metric", values="value").reindex(ids)
        wide["gpu_utilization"] = checked["gpu_utilization"]
        wide["cost_usd"] = checked["cost_usd"]
        wide["horizon_seconds"] = checked["horizon_seconds"]
        front = table.set_index("run_id").loc[ids, ["policy", "placement", "seed", "status"]]
        return front.join(wide).reset_index()
    def wait_reasons(self, run_id=None):
        """Seconds each job waited for each reason (docs/metrics.md#wait-reasons)."""
        return self._table("wait_reasons", run_id)

    def report_html(self, out, runs=None):
        """Writes the HTML report of `clustersim report --html` (docs/comparing.md): one
        self-contained page for the database's complete runs, or for the run ids in `runs`.
        Returns the path written."""
        run_ids = [] if runs is None else [int(r) for r in runs]
        _core.report_html(self.path, os.fspath(out), run_ids)
        return os.fspath(out)

    def __repr__(self):
        return f"Database({self.path!r})"


def open(path):  # noqa: A001 (clustersim.open, as sqlite3.connect)
    """Opens a results database written by clustersim run/compare/sweep or clustersim.run."""
    return Database(path)


class Trace:
    """A trace as a DataFrame of jobs in the native columns (traces/README.md): job_id,
    submit_time, gpus, duration and optionally walltime, gpu_type, user, vc, priority, model,
    batch_size, status. Build one from a DataFrame, or read any trace file clustersim reads."""

    def __init__(self, jobs):
        self.jobs = pd.DataFrame(jobs)

    @classmethod
    def read(cls, path, format=""):  # noqa: A002 (the CLI's --format)
        """Reads a trace file with clustersim's readers (format auto-detected by default)."""
        data = _core.read_trace(os.fspath(path), format)
        trace = cls(pd.DataFrame(data["columns"]))
        trace.format = data["format"]
        return trace

    def write(self, path):
        """Writes the native CSV format."""
        _write_trace(self, os.fspath(path))

    def __len__(self):
        return len(self.jobs)

    def __repr__(self):
        return f"Trace({len(self.jobs)} jobs)"


def read_trace(path, format=""):  # noqa: A002
    """The jobs of a trace file as a DataFrame in the native columns (Trace.read(...).jobs)."""
    return Trace.read(path, format).jobs


def generate_trace(out, **options):
    """Writes a seeded synthetic trace with `clustersim trace generate` (its options with
    underscores for dashes: jobs, gpus, load, seed, arrivals, durations, mean_duration, ...) and
    returns the path. Raises InputError with the program's message when it refuses the options."""
    from . import _paths
    command = [_paths.CLUSTERSIM_PROGRAM, "trace", "generate", "--out", os.fspath(out)]
    for key, value in options.items():
        command.append("--" + key.replace("_", "-") + "=" + _option_value(value))
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        message = done.stderr.strip().removeprefix("clustersim: error: ")
        raise _core.InputError(message)
    return os.fspath(out)
