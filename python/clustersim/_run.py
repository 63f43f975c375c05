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
from ._args import (check_bool, check_cluster, check_option_names, check_output_path,
                    check_params, check_path, describe)
from ._policy import Policy

__all__ = ["run", "calibrate", "Calibration", "Result", "open", "Database", "Trace", "read_trace",
           "generate_trace", "SimulationWarning"]

_FILTER_OPTIONS = frozenset(_core.filter_option_names())
# Keyword arguments run() passes to the run config reader (the rest are its own or filters).
_CONFIG_OPTIONS = frozenset(_core.run_option_names()) - {
    "trace", "cluster", "policy", "placement", "params", "out"}
_RUN_OPTIONS = _CONFIG_OPTIONS | {o.replace("-", "_") for o in _FILTER_OPTIONS}


class SimulationWarning(UserWarning):
    """Something about a run its numbers do not show: a setting with nothing to act on, what the
    trace's sanity report found, or a run in which no job started (docs/python.md)."""


def _python_terms(message, options):
    """A core message in the caller's terms: `--window` becomes `window` for the options the
    caller passed as keyword arguments."""
    for option in sorted(options, key=len, reverse=True):
        dashed = "--" + option.replace("_", "-")
        message = re.sub(re.escape(dashed) + r"(?![\w-])", option, message)
    return message


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
        raise _core.InputError("trace: expected a file path, a clustersim.Trace or a pandas "
                               "DataFrame of jobs in the native columns (traces/README.md), not "
                               f"{describe(trace)}")
    missing = [c for c in ("job_id", "submit_time", "gpus", "duration") if c not in jobs.columns]
    if missing:
        raise _core.InputError(f"trace DataFrame: missing column(s) {', '.join(missing)} (the "
                               "native columns: job_id, submit_time, gpus, duration, then "
                               "optional ones; traces/README.md); it has "
                               f"{', '.join(map(str, jobs.columns)) or 'none'}")
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
    check_option_names(options, _RUN_OPTIONS, "clustersim.run")
    cluster_option, cluster_json = check_cluster(cluster)
    if isinstance(policy, type) and issubclass(policy, Policy):
        raise _core.InputError("policy: pass an instance of the Policy subclass, e.g. "
                               f"policy={policy.__name__}()")
    if not isinstance(policy, (str, Policy)):
        raise _core.InputError("policy: expected a registered policy name "
                               "(clustersim.policies_list()) or a clustersim.Policy instance, not "
                               f"{describe(policy)}")
    if not isinstance(placement, str):
        raise _core.InputError("placement: expected a registered placement name "
                               f"(clustersim.placements_list()), not {describe(placement)}")
    params = check_params(params)
    check_bool(check, "check")
    check_bool(allow_duplicate, "allow_duplicate")
    if out is not None:
        out = check_output_path(out, "out")
    with tempfile.TemporaryDirectory(prefix="clustersim-") as tmp:
        config = {}
        filter_args = []
        trace_label = ""
        if trace is not None:
            if isinstance(trace, (str, os.PathLike)):
                config["trace"] = check_path(trace, "trace", what="a trace file path")
            else:
                config["trace"] = os.path.join(tmp, "trace.csv")
                config["format"] = "native"
                trace_label = "trace DataFrame (line n = row n - 2)"
                _write_trace(trace, config["trace"])
        config["cluster"] = cluster_option
        hooks = None
        supports_shares = False
        policy_name = ""
        if isinstance(policy, Policy):
            hooks = policy._hooks()
            supports_shares = bool(policy.supports_shares)
            policy_name = policy._run_name()
        else:
            config["policy"] = policy
        config["placement"] = placement
        if params:
            config["params"] = params
        database = out if out is not None else os.path.join(tmp, "run.sqlite")
        config["out"] = database
        for key, value in options.items():
            option = key.replace("_", "-")
            if option in _FILTER_OPTIONS:
                # "--name=value": a value may start with "-".
                filter_args.append(f"--{option}={_option_value(value)}")
            else:
                config[key] = value
        config_path = os.path.join(tmp, "options.json")
        try:
            with builtins.open(config_path, "w") as f:
                json.dump(config, f)
        except (TypeError, ValueError) as error:
            raise _core.InputError(f"clustersim.run: an option value is not JSON data ({error})") \
                from None
        try:
            outcome = _core.run(config_path, filter_args, cluster_json, hooks, supports_shares,
                                policy_name, bool(check), bool(allow_duplicate), trace_label)
        except _core.InputError as e:
            error = _relabel(e, config_path, "clustersim.run")
            message = str(error).replace("--allow-duplicate appends", "allow_duplicate=True appends")
            message = message.replace(" or add --mkdir to create it", "")
            message = _python_terms(message, list(options) + ["params"])
            message = message.replace("--param ", "params ")
            if message != str(error):
                error = type(error)(message)
            if trace_label:
                error = _relabel(error, config["trace"], "trace DataFrame")
            raise error from None
        for message in outcome["warnings"]:
            warnings.warn(_python_terms(message, options), SimulationWarning, stacklevel=2)
        return Result(outcome, database)


def calibrate(trace, cluster, search, split=0.5, objective="fit", jobs=1, rounds=3,
              policy="fcfs", placement="first-fit", params=None, out=None, **options):
    """Calibrates a replay on the first part of a log and reports the rest, as
    ``clustersim validate --calibrate`` (docs/validation.md#calibrate); returns a Calibration.

    trace: a log that records its schedule (a path); cluster: a preset, spec path or dict.
    search: {key: [values]} or a list of "key=v1,v2" strings; keys are policy, placement,
      runtime-model, a cluster spec path (site.user_limits[0].max_running_jobs) or a [NAME:]
      parameter. The first value of each is where the coordinate descent starts.
    split: share of the jobs, by submit time, calibrated on; objective: fit or a --rank-by
      distance; jobs: runs in parallel; rounds: sweeps over the axes at most.
    policy, placement, params: the settings the axes do not name. out: the database every run is
      appended to, the evaluation run last (None = a temporary one). options: as for run (interval,
      format, trace filters, ...).
    """
    with tempfile.TemporaryDirectory(prefix="clustersim-") as tmp:
        config = {"trace": os.fspath(trace), "policy": policy, "placement": placement}
        cluster_json = ""
        if isinstance(cluster, dict):
            cluster_json = json.dumps(cluster)
            config["cluster"] = "dict"
        else:
            config["cluster"] = os.fspath(cluster)
        if params:
            config["params"] = dict(params)
        database = os.fspath(out) if out is not None else os.path.join(tmp, "calibrate.sqlite")
        config["out"] = database
        filter_args = []
        for key, value in options.items():
            option = key.replace("_", "-")
            if option in _FILTER_OPTIONS:
                filter_args.append(f"--{option}={_option_value(value)}")
            else:
                config[key] = value
        if isinstance(search, dict):
            axes = [f"{key}={','.join(str(v) for v in values)}" for key, values in search.items()]
        else:
            axes = list(search)
        config_path = os.path.join(tmp, "options.json")
        with builtins.open(config_path, "w") as f:
            json.dump(config, f)
        try:
            outcome = _core.calibrate(config_path, filter_args, cluster_json, axes, float(split),
                                      objective, int(jobs), int(rounds))
        except _core.InputError as e:
            raise _relabel(e, config_path, "clustersim.calibrate options") from None
        return Calibration(outcome)


class Calibration:
    """What clustersim.calibrate found.

    Attributes: trials (DataFrame: label, objective, run_id, wait_ks, wait_mean_hours_simulated,
    wait_mean_hours_recorded, utilization_correlation, fit; on the calibration part); chosen (the
    chosen trial's label); run_id (the evaluation run); held_out (dict of the same figures on the
    held-out part); split_time (seconds), calibration_jobs, held_out_jobs.
    """

    def __init__(self, outcome):
        self.trials = pd.DataFrame(outcome["trials"])
        self.chosen = outcome["trials"][outcome["chosen"]]["label"]
        self.run_id = outcome["run_id"]
        self.held_out = dict(outcome["held_out"])
        self.split_time = outcome["split_time"]
        self.calibration_jobs = outcome["calibration_jobs"]
        self.held_out_jobs = outcome["held_out_jobs"]

    def __repr__(self):
        return (f"Calibration(chosen={self.chosen!r}, trials={len(self.trials)}, "
                f"held_out_fit={self.held_out['fit']:.3f})")


class Result:
    """One run: its summary, jobs and timeseries as read from its database.

    Attributes: run_id; fingerprint (16 hex digits); status ('complete' or 'interrupted');
    events; wall_seconds (parse + simulate + summary); policy (as recorded); summary (dict metric
    -> value, scope 'all'); summary_table (DataFrame: metric, scope, value; per-GPU-type scopes
    too); jobs, timeseries (DataFrames, the `jobs` and `timeseries` tables of results/README.md);
    run (the `runs` row as a dict); jobs_started (jobs that started at least once); warnings
    (the run's warnings, also issued as clustersim.SimulationWarning).
    """

    def __init__(self, outcome, database):
        self.run_id = outcome["run_id"]
        self.warnings = list(outcome.get("warnings", []))
        self.jobs_started = outcome.get("jobs_started")
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
        self.path = check_path(path, "path", what="a results database path")
        if not os.path.exists(self.path):
            raise _core.InputError(f"{self.path}: no such database")
        if os.path.isdir(self.path):
            raise _core.InputError(f"{self.path}: a folder, not a results database")
        with builtins.open(self.path, "rb") as f:
            header = f.read(16)
        if header != b"SQLite format 3\x00":
            raise _core.InputError(f"{self.path}: not a clustersim results database (not a SQLite "
                                   "file; clustersim run --out writes one)")
        tables = set(self._rows("SELECT name FROM sqlite_master WHERE type = 'table'"))
        if "runs" not in tables:
            raise _core.InputError(f"{self.path}: not a clustersim results database (a SQLite file "
                                   "without a runs table)")

    def _rows(self, sql):
        uri = "file:" + self.path + "?mode=ro"
        try:
            with sqlite3.connect(uri, uri=True) as connection:
                return [r[0] for r in connection.execute(sql)]
        except sqlite3.DatabaseError as error:
            raise _core.InputError(f"{self.path}: not a readable SQLite database ({error})") \
                from None

    def query(self, sql, params=()):
        """Runs a read-only SQL query and returns its rows as a DataFrame. A query SQLite refuses
        raises InputError with SQLite's message."""
        uri = "file:" + self.path + "?mode=ro"
        try:
            with sqlite3.connect(uri, uri=True) as connection:
                return pd.read_sql_query(sql, connection, params=params)
        except (sqlite3.Error, pd.errors.DatabaseError) as error:
            raise _core.InputError(f"{self.path}: {error}") from None

    def _table(self, name, run_id):
        if run_id is None:
            return self.query(f"SELECT * FROM {name} ORDER BY run_id")
        if isinstance(run_id, bool) or not isinstance(run_id, int):
            raise _core.InputError(f"run_id: expected an int (a run of Database.runs), not "
                                   f"{describe(run_id)}")
        return self.query(f"SELECT * FROM {name} WHERE run_id = ?", (run_id,))

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
        path = check_path(path, "path", what="a trace file path")
        if not isinstance(format, str):
            raise _core.InputError(f"format: expected a format name (clustersim list formats) or "
                                   f"'', not {describe(format)}")
        data = _core.read_trace(path, format)
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
    out = check_output_path(out, "out")
    command = [_paths.CLUSTERSIM_PROGRAM, "trace", "generate", "--out", out]
    for key, value in options.items():
        if not isinstance(key, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", key):
            raise _core.InputError(f"generate_trace: unknown option {key!r}")
        command.append("--" + key.replace("_", "-") + "=" + _option_value(value))
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        message = done.stderr.strip().removeprefix("clustersim: error: ")
        message = message.replace(" (clustersim trace generate --help lists the options)", "")
        message = message.replace(" or add --mkdir to create it", "")
        message = re.sub(r"--([a-z][a-z0-9-]*)", lambda m: m.group(1).replace("-", "_"), message)
        raise _core.InputError(message)
    return out
