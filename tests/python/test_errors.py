"""The Python API's errors in the caller's terms (docs/python.md, "Errors"): every bad argument
raises clustersim.InputError (a ValueError) naming the argument as it was passed, or
clustersim.PolicyError for a policy's bad call on ctx; never an error of the layers below
(os.fspath, json, pandas, pybind11) or a file the caller never saw. Runs in which nothing
starts warn (clustersim.SimulationWarning). And a seeded fuzz of run()'s arguments: whatever
they are, the outcome is a Result or InputError."""

import json
import pathlib
import random
import sqlite3
import warnings

import pandas as pd
import pytest

import clustersim

REPO = pathlib.Path(__file__).resolve().parents[2]
ONE_NODE = {"nodes": [{"count": 1, "gpu_type": "A100-80GB", "gpus_per_node": 4}]}


def tiny_trace():
    return pd.DataFrame({"job_id": ["a", "b", "c"], "submit_time": [0, 10, 20],
                         "gpus": [4, 2, 1], "duration": [100.0, 50.0, 30.0]})


# ---- arguments of clustersim.run --------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    # Before: TypeError "expected str, bytes or os.PathLike object, not int".
    ({"cluster": 5}, r"^cluster: expected a preset name .*, not int 5$"),
    # Before: ValueError "dictionary update sequence element #0 has length 1; 2 is required".
    ({"params": "walltime=exact"}, r"^params: expected a dict \{key: value\} .*, not str "
                                   r"'walltime=exact'$"),
    ({"params": {"walltime": [1, 2]}}, r"^params\['walltime'\]: expected a str, int, float or "
                                       r"bool, not list \[1, 2\]$"),
    ({"params": {"eassy:walltime": "exact"}, "policy": "easy"},
     r"params eassy:walltime=exact: no policy or placement is named \"eassy\"; did you mean "
     r"\"easy\"\?"),
    ({"policy": 3}, r"^policy: expected a registered policy name .*, not int 3$"),
    ({"policy": clustersim.policies.Fcfs}, r"^policy: pass an instance of the Policy subclass"),
    ({"placement": None}, r"^placement: expected a registered placement name .*, not NoneType"),
    ({"check": "yes"}, r"^check: expected True or False, not str 'yes'$"),
    ({"allow_duplicate": 1}, r"^allow_duplicate: expected True or False, not int 1$"),
    ({"trace": 7}, r"^trace: expected a file path, a clustersim.Trace or a pandas DataFrame"),
    ({"trace": pd.DataFrame({"job_id": ["a"], "gpus": [1]})},
     r"^trace DataFrame: missing column\(s\) submit_time, duration"),
    ({"trace": "no/such/trace.csv"}, r"no/such/trace.csv"),
    ({"seeed": 1}, r"^clustersim.run: unknown option seeed; did you mean seed\?"),
    ({"windw": "0:10"}, r"^clustersim.run: unknown option windw; did you mean window\?"),
    ({"first": -5}, r"^first: expected a count >= 0$"),
    ({"seed": 1.5}, r"^clustersim.run: seed: expected an integer"),
    ({"out": "/nonexistent/folder/x.sqlite"},
     r"^out: /nonexistent/folder/x.sqlite: the folder /nonexistent/folder does not exist"),
])
def test_bad_arguments_of_run_raise_input_error_in_the_callers_terms(kwargs, message):
    arguments = {"trace": tiny_trace(), "cluster": ONE_NODE}
    arguments.update(kwargs)
    with pytest.raises(clustersim.InputError, match=message):
        clustersim.run(**arguments)


def test_an_empty_trace_is_an_input_error():
    empty = tiny_trace().iloc[0:0]
    with pytest.raises(clustersim.InputError, match=r"^trace DataFrame: the trace holds no jobs"):
        clustersim.run(trace=empty, cluster=ONE_NODE)


def test_warnings_about_a_dataframe_trace_do_not_name_a_temporary_file():
    trace = tiny_trace()
    trace.loc[1, "duration"] = 0.0  # the sanity report's "zero durations"
    with pytest.warns(clustersim.SimulationWarning) as caught:
        result = clustersim.run(trace=trace, cluster=ONE_NODE)
    texts = [str(w.message) for w in caught]
    assert any(t.startswith("trace DataFrame (line n = row n - 2): 1 ") for t in texts), texts
    assert not any("/tmp" in t or "clustersim-" in t for t in texts), texts
    assert result.warnings == texts


class NeverStarts(clustersim.Policy):
    def schedule(self, ctx):
        pass


def test_a_python_policy_that_never_starts_a_job_warns():
    with pytest.warns(clustersim.SimulationWarning,
                      match=r"no job started: policy python:NeverStarts never started a job \(3 "
                            r"waited until the end\)"):
        result = clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy=NeverStarts())
    assert result.jobs_started == 0
    assert (result.jobs.status == "unfinished").all()


def test_a_run_that_starts_jobs_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", clustersim.SimulationWarning)
        result = clustersim.run(trace=tiny_trace(), cluster=ONE_NODE)
    assert result.jobs_started == 3 and result.warnings == []


# ---- ctx calls of a Python policy ---------------------------------------------------------------

class BadCall(clustersim.Policy):
    """Makes one bad ctx call at the first pass."""

    def __init__(self, call):
        self.call = call

    def schedule(self, ctx):
        job = ctx.queue_front()
        if job != -1:
            self.call(ctx, job)


@pytest.mark.parametrize("call, message", [
    # Before: pybind11's "incompatible function arguments" TypeError.
    (lambda ctx, j: ctx.start(j, "gpu0"),
     r"^ctx.start\(job, allocation\): the allocation must be an Allocation \(ctx.try_place, "
     r"ctx.allocation\) or a list of GPU indices, not str 'gpu0'$"),
    (lambda ctx, j: ctx.start("a", [0, 1, 2, 3]),
     r"^ctx.start\(job, allocation\): job must be an int, not str 'a'$"),
    (lambda ctx, j: ctx.start(j, [0, 1, 2, 99]),
     r"^ctx.start\(job, allocation\): GPU 99 is out of range: expected a GPU index of the "
     r"cluster \(0 to 3\)$"),
    (lambda ctx, j: ctx.job(10**6),
     r"^ctx.job\(job\): job 1000000 is out of range: expected the index of a job that has "
     r"arrived \(0 to 0\)$"),
    (lambda ctx, j: ctx.preempt(True), r"^ctx.preempt\(job\): job must be an int, not bool True$"),
    (lambda ctx, j: ctx.node_free_gpus(-1), r"^ctx.node_free_gpus\(node\): node -1 is out of "
                                            r"range: expected a node index of the cluster"),
    (lambda ctx, j: ctx.free_gpus_of_type("A100"),
     r"^ctx.free_gpus_of_type\(gpu_type\): unknown GPU type \"A100\"; valid: "),
    (lambda ctx, j: ctx.allocation([0], milli=1500),
     r"^ctx.allocation\(gpus, milli\): milli 1500 is out of range"),
    (lambda ctx, j: ctx.set_timer(float("nan")),
     r"^ctx.set_timer\(time, job, tag\): time must be finite, not float nan$"),
    (lambda ctx, j: ctx.queue("3"), r"^ctx.queue\(limit\): limit must be an int, not str '3'$"),
])
def test_bad_ctx_arguments_raise_policy_error_naming_the_call(call, message):
    with pytest.raises(clustersim.PolicyError, match=message):
        clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy=BadCall(call))


# ---- open, read_trace, generate_trace, cluster_nodes, Env ---------------------------------------

def test_open_refuses_what_is_not_a_results_database(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    # Before: pandas' DatabaseError from the first query.
    with pytest.raises(clustersim.InputError, match=r"notes.txt: not a clustersim results "
                                                    r"database \(not a SQLite file"):
        clustersim.open(text)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE t (x)")
    with pytest.raises(clustersim.InputError, match=r"a SQLite file without a runs table"):
        clustersim.open(other)
    with pytest.raises(clustersim.InputError, match=r"a folder, not a results database"):
        clustersim.open(tmp_path)
    with pytest.raises(clustersim.InputError, match=r"^path: expected a results database path"):
        clustersim.open(3)
    database = tmp_path / "runs.sqlite"
    clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, out=database)
    db = clustersim.open(database)
    with pytest.raises(clustersim.InputError, match=r"^run_id: expected an int .*, not str '1'"):
        db.jobs("1")
    with pytest.raises(clustersim.InputError, match=r"no such table: missing_table"):
        db.query("SELECT * FROM missing_table")


def test_other_functions_check_their_arguments(tmp_path):
    with pytest.raises(clustersim.InputError, match=r"^path: expected a trace file path"):
        clustersim.read_trace(None)
    with pytest.raises(clustersim.InputError, match=r"^format: expected a format name"):
        clustersim.read_trace(REPO / "tests" / "data" / "tiny_trace.csv", format=1)
    with pytest.raises(clustersim.InputError, match=r"^cluster: expected a preset name"):
        clustersim.cluster_nodes(cluster=5)
    with pytest.raises(clustersim.InputError, match=r"^unknown option jbos; did you mean jobs\?"):
        clustersim.generate_trace(tmp_path / "g.csv", jbos=10)
    with pytest.raises(clustersim.InputError, match=r"^out: .*: the folder .* does not exist"):
        clustersim.generate_trace(tmp_path / "missing" / "g.csv", jobs=10)
    with pytest.raises(clustersim.InputError, match=r"^reward: expected slowdown, jct or "
                                                    r"utilization, not str 'slowdwn'; did you "
                                                    r"mean slowdown\?"):
        clustersim.Env(tiny_trace(), cluster=ONE_NODE, reward="slowdwn")
    with pytest.raises(clustersim.InputError, match=r"^k: expected an int >= 1, not float 2.5"):
        clustersim.Env(tiny_trace(), cluster=ONE_NODE, k=2.5)
    with pytest.raises(clustersim.InputError, match=r"^cluster: expected a preset name"):
        clustersim.Env(tiny_trace(), cluster=["default"])


# ---- fuzz: run()'s arguments ------------------------------------------------------------------

# The corpus of fuzz/corpus/python-args (JSON objects of run()'s keyword arguments, also replayed
# through the C++ target of that name) and seeded random arguments: each run ends in a Result or
# an InputError, never another exception.
VALUES = [None, True, False, 0, -1, 1, 2**40, 1.5, float("nan"), float("inf"), "", "x", "-1",
          "0:10", "easy", "fcfs", "default", "1h", [], [1], {}, {"a": 1}, b"bytes", ("t",),
          object()]
KEYS = ["trace", "cluster", "policy", "placement", "params", "seed", "interval", "stop_time",
        "first", "window", "load_factor", "user", "map_gpu", "runtime_model", "check",
        "allow_duplicate", "model_aware", "preemption_cost", "on_no_fit", "inflate"]


def corpus_cases():
    folder = REPO / "fuzz" / "corpus" / "python-args"
    return sorted(folder.glob("*")) + sorted((REPO / "fuzz" / "regressions" /
                                             "python-args").glob("*"))


def run_arguments(arguments):
    arguments.setdefault("trace", tiny_trace())
    arguments.setdefault("cluster", ONE_NODE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clustersim.SimulationWarning)
        try:
            result = clustersim.run(**arguments)
        except clustersim.InputError:
            return
    assert isinstance(result, clustersim.Result)


@pytest.mark.parametrize("path", corpus_cases(), ids=lambda p: p.name)
def test_fuzz_corpus_arguments_end_in_a_result_or_input_error(path):
    try:
        arguments = json.loads(path.read_text(errors="replace"))
    except ValueError:
        return  # the C++ target takes any bytes; only JSON objects are arguments here
    if not isinstance(arguments, dict):
        return
    if isinstance(arguments.get("trace"), str) and arguments["trace"].startswith("tests/"):
        arguments["trace"] = str(REPO / arguments["trace"])
    run_arguments(arguments)


@pytest.mark.parametrize("seed", range(40))
def test_random_arguments_end_in_a_result_or_input_error(seed):
    rng = random.Random(seed)
    arguments = {key: rng.choice(VALUES) for key in rng.sample(KEYS, rng.randint(1, 4))}
    run_arguments(arguments)
