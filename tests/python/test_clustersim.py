"""Tests of the clustersim Python module (docs/python.md). Run by ctest (`python`) with
PYTHONPATH=build/python; expected schedules are computed by hand in the comments."""

import math
import pathlib
import sqlite3
import subprocess

import numpy as np
import pandas as pd
import pytest

import clustersim
from clustersim import _paths
from clustersim.policies import Fcfs, Sjf

REPO = pathlib.Path(__file__).resolve().parents[2]
BUNDLED = str(REPO / "traces" / "philly_default.csv")
ONE_NODE = {"nodes": [{"count": 1, "gpu_type": "A100-80GB", "gpus_per_node": 4}]}


def tiny_trace():
    # One node of 4 GPUs, runtime model `trace` (jobs run exactly their duration).
    return pd.DataFrame({
        "job_id": ["a", "b", "c", "d"],
        "submit_time": [0, 10, 20, 30],
        "gpus": [4, 2, 1, 4],
        "duration": [100.0, 50.0, 30.0, 10.0],
    })


def starts(result):
    jobs = result.jobs.set_index("job_id")
    return {j: (jobs.start_time[j], jobs.end_time[j]) for j in jobs.index}


# fcfs: a runs 0-100. At 100 the queue is b, c, d: b (2 GPUs) and c (1) start, d (4) blocks the
# head until b ends at 150, and runs 150-160.
FCFS_TINY = {"a": (0, 100), "b": (100, 150), "c": (100, 130), "d": (150, 160)}
# sjf: at 100 the queue by duration is d (10 s), c (30), b (50): d takes all 4 GPUs 100-110,
# then c and b start at 110.
SJF_TINY = {"a": (0, 100), "d": (100, 110), "c": (110, 140), "b": (110, 160)}


@pytest.mark.parametrize("policy, expected", [("fcfs", FCFS_TINY), ("sjf", SJF_TINY),
                                              (Fcfs(), FCFS_TINY), (Sjf(), SJF_TINY)])
def test_tiny_trace_schedules_match_hand_computation(policy, expected):
    result = clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy=policy, check=True)
    assert starts(result) == expected
    jcts = [end - submit for (_, end), submit in
            zip((expected[j] for j in "abcd"), (0, 10, 20, 30))]
    assert result.summary["jct_seconds_mean"] == pytest.approx(sum(jcts) / 4)
    assert result.status == "complete"


@pytest.mark.parametrize("cpp, python", [("fcfs", Fcfs), ("sjf", Sjf)])
def test_python_policies_reproduce_cpp_fingerprints_on_bundled_trace(cpp, python):
    native = clustersim.run(trace=BUNDLED, cluster="default", policy=cpp)
    ported = clustersim.run(trace=BUNDLED, cluster="default", policy=python())
    assert ported.fingerprint == native.fingerprint
    assert ported.summary["jct_seconds_mean"] == native.summary["jct_seconds_mean"]
    assert ported.policy == "python:" + python.__name__
    pd.testing.assert_frame_equal(ported.jobs.drop(columns="run_id"),
                                  native.jobs.drop(columns="run_id"))


def test_run_equals_the_cli(tmp_path):
    db = tmp_path / "cli.sqlite"
    subprocess.run([_paths.CLUSTERSIM_PROGRAM, "run", "--trace", BUNDLED, "--cluster", "default",
                    "--policy", "fcfs", "--out", str(db), "--no-progress"], check=True,
                   capture_output=True)
    with sqlite3.connect(db) as c:
        cli_mean = c.execute("SELECT value FROM summary WHERE metric='jct_seconds_mean' AND "
                             "scope='all'").fetchone()[0]
        cli_fingerprint = c.execute("SELECT fingerprint FROM runs").fetchone()[0]
    r = clustersim.run(trace=BUNDLED, cluster="default", policy="fcfs")
    assert r.summary["jct_seconds_mean"] == cli_mean
    assert r.fingerprint == cli_fingerprint


def test_dataframe_trace_round_trip_keeps_the_fingerprint():
    trace = clustersim.Trace.read(BUNDLED)
    assert len(trace) == 11160 and trace.format == "native"
    assert list(trace.jobs.columns[:4]) == ["job_id", "submit_time", "gpus", "duration"]
    from_path = clustersim.run(trace=BUNDLED, policy="fcfs")
    from_frame = clustersim.run(trace=trace, policy="fcfs")
    assert from_frame.fingerprint == from_path.fingerprint


def test_options_and_filters_reach_the_core():
    # --first 2 keeps a and b; a stop time of 120 s leaves b (100-150) unfinished.
    r = clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, first=2, stop_time=120,
                       interval=60)
    assert len(r.jobs) == 2
    assert r.jobs.set_index("job_id").status["b"] == "unfinished"
    assert r.run["timeseries_interval_seconds"] == 60


def test_bad_input_raises_input_error_with_the_core_message():
    with pytest.raises(clustersim.InputError, match=r"^clustersim.run: seed: expected an "
                                                    r"integer"):
        clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, seed="x")
    with pytest.raises(clustersim.InputError, match="unknown option no_such_option"):
        clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, no_such_option=1)
    with pytest.raises(clustersim.InputError, match="fcfs"):  # lists the valid names
        clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy="no-such-policy")
    bad = tiny_trace()
    bad.loc[2, "gpus"] = "two"
    with pytest.raises(clustersim.InputError, match=r"^trace DataFrame row 2 \(CSV line 4"):
        clustersim.run(trace=bad, cluster=ONE_NODE)
    with pytest.raises(clustersim.InputError, match="^first: expected a count >= 0"):
        clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, first=-5)
    assert issubclass(clustersim.InputError, ValueError)
    # Tracebacks name the package's exceptions, not the extension's.
    assert {e.__module__ for e in (clustersim.InputError, clustersim.InternalError,
                                   clustersim.PolicyError)} == {"clustersim"}


class StartOnOneGpu(clustersim.Policy):
    def __init__(self, swallow):
        self.swallow = swallow

    def schedule(self, ctx):
        job = ctx.queue_front()
        if job == -1:
            return
        try:
            ctx.start(job, [0])  # job a requests 4 GPUs
        except clustersim.PolicyError:
            if not self.swallow:
                raise


@pytest.mark.parametrize("swallow", [False, True])
def test_invalid_decision_raises_policy_error_and_stops_the_run(swallow):
    message = (r"policy python:StartOnOneGpu made an invalid decision at t=0\.000000: start of "
               r"job a on 1 GPUs; it requests 4")
    with pytest.raises(clustersim.PolicyError, match=message):
        clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy=StartOnOneGpu(swallow))


class PreemptAtTimer(clustersim.Policy):
    """Starts a at 0 with a timer at 40; at the timer preempts a and starts b; then fcfs."""

    def __init__(self):
        self.log = []

    def schedule(self, ctx):
        if ctx.now == 0:
            a = ctx.queue_front()
            assert ctx.try_start(a)
            ctx.set_timer(40.0, a, 7)
            return
        Fcfs.schedule(self, ctx)

    def on_timer(self, ctx, job, tag):
        self.log.append((ctx.now, ctx.job(job).id, tag, ctx.remaining_seconds(job)))
        ctx.preempt(job)
        # The preempted a goes back to its place in submission order, ahead of b.
        assert [ctx.job(j).id for j in ctx.queue()] == ["a", "b"]
        b = ctx.queue_next(ctx.queue_front())
        ctx.start(b, ctx.try_place(b))

    def on_completion(self, ctx, job):
        self.log.append((ctx.now, ctx.job(job).id, "done", ctx.state(job)))


def test_timer_and_preemption_follow_the_hand_schedule():
    # a (4 GPUs, 100 s) runs 0-40, is preempted with 60 s left; b (4 GPUs, 10 s) runs 40-50;
    # a resumes at 50 and ends at 110. No preemption cost (preemption_cost=0; the default is 30 s).
    trace = pd.DataFrame({"job_id": ["a", "b"], "submit_time": [0, 0], "gpus": [4, 4],
                          "duration": [100.0, 10.0]})
    policy = PreemptAtTimer()
    r = clustersim.run(trace=trace, cluster=ONE_NODE, policy=policy, check=True,
                       preemption_cost=0)
    jobs = r.jobs.set_index("job_id")
    assert jobs.end_time["b"] == 50 and jobs.end_time["a"] == 110
    assert jobs.preemptions["a"] == 1
    assert policy.log == [(40.0, "a", 7, 60.0), (50.0, "b", "done", "completed"),
                          (110.0, "a", "done", "completed")]


def test_run_view_of_an_ended_job():
    # fcfs on the tiny trace: a (job 0, 4 GPUs, 100 s) runs 0-100. At the next pass after its end
    # (t = 100, b and c start) the engine keeps only its whole-run figures: first start 0, 100 s
    # run, 400 GPU-seconds; progress and GPUs are forgotten (docs/python.md: last_start NaN,
    # work, rate and overhead 0, the trace's 4 GPUs requested, no GPUs, its last type kept).
    ended = []
    seen = {}

    class Watch(Fcfs):
        def schedule(self, ctx):
            if ended and not seen:
                run = ctx.run(ended[0])
                seen.update(now=ctx.now, state=run.state, first_start=run.first_start,
                            last_start_nan=math.isnan(run.last_start), work_left=run.work_left,
                            rate=run.rate, overhead_left=run.overhead_left,
                            run_seconds=run.run_seconds, gpu_seconds=run.gpu_seconds,
                            requested=run.requested_gpus, gpus=run.allocation.gpus,
                            type_index=run.allocation.gpu_type_index,
                            remaining=ctx.remaining_seconds(ended[0]))
            Fcfs.schedule(self, ctx)

        def on_completion(self, ctx, job):
            ended.append(job)

    clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy=Watch())
    a100 = seen.pop("type_index")
    assert a100 >= 0
    assert seen == {"now": 100.0, "state": "completed", "first_start": 0.0, "last_start_nan": True,
                    "work_left": 0.0, "rate": 0.0, "overhead_left": 0.0, "run_seconds": 100.0,
                    "gpu_seconds": 400.0, "requested": 4, "gpus": [], "remaining": 0.0}


def test_context_views():
    seen = {}

    class Look(clustersim.Policy):
        def schedule(self, ctx):
            if not seen:
                seen["free"] = ctx.free_gpus
                seen["per_node"] = ctx.free_gpus_per_node().tolist()
                seen["types"] = ctx.gpu_types()
                seen["queue"] = [ctx.job(j).id for j in ctx.queue()]
                seen["alloc"] = ctx.try_place(ctx.queue_front()).gpus
            Fcfs.schedule(self, ctx)

    clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy=Look())
    assert seen == {"free": 4, "per_node": [4], "types": ["A100-80GB"], "queue": ["a"],
                    "alloc": [0, 1, 2, 3]}
    with pytest.raises(RuntimeError, match="valid only inside"):
        kept = {}

        class Keep(Fcfs):
            def schedule(self, ctx):
                kept["ctx"] = ctx
                Fcfs.schedule(self, ctx)

        clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy=Keep())
        kept["ctx"].queue_front()


def test_open_reads_appended_runs(tmp_path):
    db = tmp_path / "runs.sqlite"
    first = clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy="fcfs", out=db)
    second = clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy=Sjf(), out=db)
    stored = clustersim.open(db)
    assert list(stored.runs.policy) == ["fcfs", "python:Sjf"]
    assert (first.run_id, second.run_id) == (1, 2)
    pd.testing.assert_frame_equal(stored.jobs(2), second.jobs)
    assert set(stored.summary().run_id) == {1, 2}


def test_compare_checks_the_jobs_and_takes_utilization_over_one_horizon(tmp_path):
    # fcfs on the tiny trace, on one node of 4 GPUs (FCFS_TINY: ends at 160) and on two (a 0-100
    # on node 0; b 10-60 and c 20-50 on node 1; d needs a whole node: 60-70; ends at 100). Both
    # hold 400 + 100 + 30 + 40 = 570 GPU-seconds: own utilizations 570 / (4 x 160) = 0.890625 and
    # 570 / (8 x 100) = 0.7125; over the shared horizon [0, 160] 0.890625 and 0.4453125.
    db = tmp_path / "runs.sqlite"
    two_nodes = {"nodes": [{"count": 2, "gpu_type": "A100-80GB", "gpus_per_node": 4}]}
    clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy="fcfs", out=db)
    clustersim.run(trace=tiny_trace(), cluster=two_nodes, policy="fcfs", out=db)
    stored = clustersim.open(db)
    table = stored.compare()
    assert list(table.run_id) == [1, 2]
    assert table.horizon_seconds.tolist() == [160, 160]
    assert table.gpu_utilization.tolist() == pytest.approx([0.890625, 0.4453125])
    assert stored.summary(2).query("metric == 'gpu_utilization' and scope == 'all'").value.iloc[0] \
        == pytest.approx(0.7125)
    # A third run that read only the first two jobs saw other jobs: refused, named, unless allowed.
    clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy="fcfs", out=db, first=2)
    with pytest.raises(clustersim.InputError, match=r"run 3 \(fcfs/first-fit\) read the trace "
                                                    r"with the filters .*allow_different_jobs"):
        stored.compare()
    with pytest.warns(UserWarning, match="did not see the same jobs"):
        assert len(stored.compare(allow_different_jobs=True)) == 3
    assert len(stored.compare(runs=[1, 2])) == 2


def test_repeated_run_is_refused_unless_allowed(tmp_path):
    # The same trace (by content: a DataFrame is written to a new temporary file each time),
    # cluster, policy and options: the CLI's duplicate guard, which writes nothing.
    db = tmp_path / "runs.sqlite"
    clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy=Fcfs(), out=db)
    with pytest.raises(clustersim.InputError, match=r"already holds this run as run 1 .*"
                                                    r"allow_duplicate=True appends it again"):
        clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy=Fcfs(), out=db)
    assert list(clustersim.open(db).runs.run_id) == [1]
    again = clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy=Fcfs(), out=db,
                           allow_duplicate=True)
    assert again.run_id == 2
    # Another seed is another run.
    assert clustersim.run(trace=tiny_trace(), cluster=ONE_NODE, policy=Fcfs(), out=db,
                          seed=1).run_id == 3


def test_generate_trace(tmp_path):
    path = clustersim.generate_trace(tmp_path / "g.csv", jobs=50, seed=3, gpus=16)
    assert len(clustersim.read_trace(path)) == 50
    with pytest.raises(clustersim.InputError, match="jobs"):
        clustersim.generate_trace(tmp_path / "h.csv", jobs="many")


# ---- the RL environment ----

def play(env, choose):
    observation, info = env.reset()
    total, steps, terminated, truncated = 0.0, 0, env._done, False
    while not (terminated or truncated):
        observation, reward, terminated, truncated, info = env.step(choose(observation, info))
        total += reward
        steps += 1
    return total, steps, env.result


def first_valid(observation, info):
    return int(np.flatnonzero(info["action_mask"])[0])


def test_env_always_starting_the_head_is_fcfs():
    # With k = 1, starting the head whenever it fits is fcfs's rule.
    env = clustersim.Env(trace=tiny_trace(), cluster=ONE_NODE, k=1, reward="jct")
    total, steps, result = play(env, first_valid)
    assert result.fingerprint == clustersim.run(trace=tiny_trace(), cluster=ONE_NODE,
                                                policy="fcfs").fingerprint
    assert steps == 4
    # The jct reward integrates jobs in the system: its return is minus the JCTs in hours.
    assert total == pytest.approx(-(100 + 140 + 110 + 130) / 3600)


def test_env_slowdown_return_is_minus_the_bounded_slowdowns():
    env = clustersim.Env(trace=tiny_trace(), cluster=ONE_NODE, k=4, reward="slowdown",
                         slowdown_bound_seconds=20)
    # Shortest fitting job first: the agent's sjf over the window.
    def shortest(observation, info):
        mask = info["action_mask"][:-1]
        durations = np.where(mask, observation["queue"][:, 2], np.inf)
        return int(np.argmin(durations))
    total, _, result = play(env, shortest)
    jobs = result.jobs
    expected = -sum((jobs.end_time - jobs.submit_time) / np.maximum(jobs.run_time, 20))
    assert total == pytest.approx(expected)
    assert starts(result) == SJF_TINY


def test_env_spaces_masks_and_resets():
    env = clustersim.Env(trace=tiny_trace(), cluster=ONE_NODE, k=3, max_running=2)
    assert env.action_space.n == 4
    assert env.observation_space["queue"].shape == (3, 5)
    assert env.observation_space["free_gpus"].shape == (1,)
    observation, info = env.reset()
    # t = 0: only a is queued and the cluster is idle, so waiting is not offered.
    assert info["action_mask"].tolist() == [True, False, False, False]
    for name, space in env.observation_space.items():
        assert space.contains(observation[name]), name
    with pytest.raises(clustersim.InputError, match="not valid"):
        env.step(3)
    observation, reward, terminated, truncated, info = env.step(0)
    # Next decision at 100 (a ends): b, c, d queued; b and c fit... all fit the idle node.
    assert info["now"] == 100 and info["action_mask"].tolist() == [True, True, True, False]
    # A reset mid-episode abandons it; the next episode is the same.
    observation2, info2 = env.reset()
    assert info2["action_mask"].tolist() == [True, False, False, False]
    total, _, result = play(env, first_valid)
    assert math.isfinite(total) and result.status == "complete"
    env.close()


def test_calibrate_finds_the_recorded_machine_size_and_matches_the_held_out_half(tmp_path):
    # 200 one-processor jobs of 100 s, one every 40 s, recorded on 2 processors under FCFS: job i
    # starts at start(i - 2) + 100, so it waits 20 * (i // 2) s (jobs 0 and 1 not at all). On 3
    # processors nobody waits, on 1 everyone waits longer: the search must settle on 2, and the
    # held-out jobs 100..199 then wait 20 * 74.5 = 1490 s on average in both.
    log = tmp_path / "known.swf"
    lines = ["; MaxProcs: 2"]
    for i in range(200):
        wait = 0 if i < 2 else 20 * (i // 2)
        lines.append(f"{i + 1} {40 * i} {wait} 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1")
    log.write_text("\n".join(lines) + "\n")
    cluster = {"nodes": [{"name": "n", "count": 3, "gpu_type": "A100-80GB", "gpus_per_node": 1}]}
    c = clustersim.calibrate(log, cluster, {"nodes[0].count": [3, 1, 2]}, objective="wait_ks",
                             out=tmp_path / "cal.sqlite")
    assert c.chosen == "nodes[0].count=2"
    assert (c.split_time, c.calibration_jobs, c.held_out_jobs) == (4000, 100, 100)
    assert c.held_out["wait_ks"] == 0
    assert c.held_out["wait_mean_hours_recorded"] == pytest.approx(1490 / 3600)
    assert c.held_out["wait_mean_hours_simulated"] == pytest.approx(1490 / 3600)
    assert len(c.trials) == 3
    # The evaluation run is the last one in the database.
    with sqlite3.connect(tmp_path / "cal.sqlite") as db:
        assert db.execute("SELECT MAX(run_id) FROM runs").fetchone()[0] == c.run_id
