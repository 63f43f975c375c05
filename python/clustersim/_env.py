"""clustersim.Env: a reinforcement-learning environment with Gymnasium's API (reset/step,
action_space/observation_space) and no dependency on it (docs/python.md, "RL environment").

An episode is one clustersim run. At a decision point (a scheduling pass in which at least one of
the first K queued jobs fits now) the agent picks an action: i < K starts the i-th queued job
(queue order: submit time, input order) on the GPUs the run's placement chooses; K waits, ending
the pass, and the simulation advances to the next event (a completion or an arrival). Several
starts may follow at one simulated time. A pass in which none of the first K jobs fits ends
without asking. Waiting is not offered while nothing runs: the cluster would stay idle with work
queued (every queued job fits the idle cluster; jobs that never can are rejected at arrival).

The simulation runs in a worker thread: the run's Python policy hands each observation to step()
and waits for the action, so the engine stays the ordinary ExecuteRun. Episodes are deterministic
given the trace and the actions.

Rewards (`reward=`), accrued exactly over simulated time between decisions from the arrivals,
starts and completions:
  "slowdown": -sum over jobs in the system of dt / max(duration, tau): an episode's return is
      -sum_j (end_j - submit_j) / max(duration_j, tau), the jobs' bounded slowdowns (Feitelson's
      bounded slowdown without its floor of 1; tau = slowdown_bound_seconds, default 10 s).
  "jct": -(jobs in the system) x dt in hours: the return is -sum of JCTs in hours (Little).
  "utilization": -(idle GPUs / all GPUs) x dt in hours while jobs wait: the return is minus the
      hours of idle capacity left while work queued.
"""

import math
import queue as queue_module
import threading

import numpy as np

from . import _core
from ._args import check_cluster, describe
from ._policy import Policy

__all__ = ["Env", "Box", "Discrete"]

QUEUE_FEATURES = ("present", "gpus", "duration_seconds", "wait_seconds", "fits_now")
RUNNING_FEATURES = ("remaining_seconds", "gpus")
SUMMARY_FEATURES = ("now_seconds", "queue_length", "running_jobs", "free_gpus")


class Discrete:
    """Actions 0..n-1 (gymnasium.spaces.Discrete's attributes)."""

    def __init__(self, n):
        self.n = int(n)
        self.shape = ()
        self.dtype = np.dtype(np.int64)

    def sample(self, rng=None, mask=None):
        rng = rng if rng is not None else np.random.default_rng()
        if mask is None:
            return int(rng.integers(self.n))
        return int(rng.choice(np.flatnonzero(mask)))

    def contains(self, x):
        return isinstance(x, (int, np.integer)) and 0 <= int(x) < self.n

    def __repr__(self):
        return f"Discrete({self.n})"


class Box:
    """An array of `shape` and `dtype` with elementwise bounds (gymnasium.spaces.Box's)."""

    def __init__(self, low, high, shape, dtype=np.float32):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.low = np.full(self.shape, low, dtype=self.dtype)
        self.high = np.full(self.shape, high, dtype=self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


class _Abort(Exception):
    """Ends an episode's worker thread early (reset or close during an episode)."""


class _EnvPolicy(Policy):
    """The policy of an episode's run: asks the agent at each decision point."""

    name = "env"

    def __init__(self, env):
        self._env = env

    def on_arrival(self, ctx, job):
        env = self._env
        env._accrue(ctx.now)
        env._in_system += 1
        env._slowdown_weight += 1.0 / max(ctx.job(job).duration, env.slowdown_bound_seconds)
        env._queued += 1

    def on_completion(self, ctx, job):
        env = self._env
        env._accrue(ctx.now)
        info = ctx.job(job)
        env._in_system -= 1
        env._slowdown_weight -= 1.0 / max(info.duration, env.slowdown_bound_seconds)
        env._busy_gpus -= env._held.pop(job, 0)

    def schedule(self, ctx):
        env = self._env
        env._accrue(ctx.now)
        while True:
            jobs = ctx.queue(env.k)
            allocations = [ctx.try_place(j) for j in jobs]
            if all(a is None for a in allocations):
                return
            mask = np.zeros(env.k + 1, dtype=bool)
            mask[:len(jobs)] = [a is not None for a in allocations]
            running = ctx.running()
            mask[env.k] = len(running) > 0
            action = env._ask(env._observe(ctx, jobs, allocations, running), mask, ctx.now)
            if action == env.k:
                return
            job = jobs[action]
            ctx.start(job, allocations[action])
            env._queued -= 1
            env._held[job] = len(allocations[action])
            env._busy_gpus += env._held[job]


class Env:
    """A scheduling environment over one trace and cluster (module docstring for the rules).

    trace: a trace path, clustersim.Trace or DataFrame, or a callable(seed) returning one (reset's
      seed then picks the episode's workload); cluster: as clustersim.run's.
    k: queued jobs the agent sees and can start (actions 0..k-1; k waits).
    max_running: running jobs in the observation (the ones ending soonest).
    reward: "slowdown", "jct" or "utilization".
    max_steps: truncate an episode after this many decisions (None: run to the end).
    options: any other clustersim.run option (placement, params, seed, runtime_model, ...).

    After an episode ends, `result` is its clustersim.Result (summary, jobs, fingerprint).
    """

    def __init__(self, trace, cluster="default", k=8, max_running=16, reward="slowdown",
                 slowdown_bound_seconds=10.0, max_steps=None, **options):
        if reward not in ("slowdown", "jct", "utilization"):
            near = _core.nearest_name(str(reward), ["slowdown", "jct", "utilization"])
            raise _core.InputError(f"reward: expected slowdown, jct or utilization, not "
                                   f"{describe(reward)}" + (f"; did you mean {near}?" if near else ""))
        for name, value, least in (("k", k, 1), ("max_running", max_running, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise _core.InputError(f"{name}: expected an int >= {least}, not {describe(value)}")
        if max_steps is not None and (isinstance(max_steps, bool) or
                                      not isinstance(max_steps, int) or max_steps < 1):
            raise _core.InputError(f"max_steps: expected an int >= 1 or None, not "
                                   f"{describe(max_steps)}")
        if isinstance(slowdown_bound_seconds, bool) or \
                not isinstance(slowdown_bound_seconds, (int, float)) or \
                not slowdown_bound_seconds > 0:
            raise _core.InputError("slowdown_bound_seconds: expected a number of seconds > 0, not "
                                   f"{describe(slowdown_bound_seconds)}")
        self.trace = trace
        self.cluster = cluster
        self.k = int(k)
        self.max_running = int(max_running)
        self.reward_kind = reward
        self.slowdown_bound_seconds = float(slowdown_bound_seconds)
        self.max_steps = max_steps
        self.options = options
        cluster_name, cluster_json = check_cluster(cluster)
        nodes = _core.cluster_nodes(cluster_name, cluster_json, options.get("hardware", ""))
        self.node_gpu_types = [t for t, _, _ in nodes]
        self.node_gpus = np.array([g for _, g, _ in nodes], dtype=np.int32)
        self.gpu_types = sorted(set(self.node_gpu_types), key=self.node_gpu_types.index)
        self.total_gpus = int(self.node_gpus.sum())
        inf = np.inf
        self.action_space = Discrete(self.k + 1)
        self.observation_space = {
            "queue": Box(0, inf, (self.k, len(QUEUE_FEATURES))),
            "running": Box(0, inf, (self.max_running, len(RUNNING_FEATURES))),
            "free_gpus": Box(0, int(self.node_gpus.max()), (len(nodes),), np.int32),
            "free_gpus_per_type": Box(0, self.total_gpus, (len(self.gpu_types),), np.int32),
            "summary": Box(0, inf, (len(SUMMARY_FEATURES),)),
        }
        self.result = None
        self._thread = None
        self._to_agent = None
        self._to_engine = None
        self._done = True

    # ---- Gymnasium API ----
    def reset(self, seed=None, options=None):
        """Starts an episode; returns (observation, info). `options` is accepted for API
        compatibility and ignored."""
        del options
        self._stop_worker()
        trace = self.trace(seed) if callable(self.trace) else self.trace
        self.result = None
        self._steps = 0
        self._last_time = 0.0
        self._reward = 0.0
        self._in_system = 0
        self._queued = 0
        self._slowdown_weight = 0.0
        self._busy_gpus = 0
        self._held = {}  # job -> GPUs it holds
        self._to_agent = queue_module.Queue(maxsize=1)
        self._to_engine = queue_module.Queue(maxsize=1)
        self._thread = threading.Thread(target=self._episode, args=(trace,), daemon=True)
        self._thread.start()
        self._done = False
        observation, _, terminated, info = self._receive()
        if terminated:  # no decision in the whole trace
            self._done = True
        return observation, info

    def step(self, action):
        """Applies `action`; returns (observation, reward, terminated, truncated, info)."""
        if self._done:
            raise RuntimeError("step() after the episode ended: call reset()")
        if not self.action_space.contains(action) or not self._mask[int(action)]:
            raise _core.InputError(f"action {action!r} is not valid here; info['action_mask'] "
                                   "lists the valid ones")
        self._steps += 1
        self._to_engine.put(int(action))
        observation, reward, terminated, info = self._receive()
        truncated = False
        if terminated:
            self._done = True
        elif self.max_steps is not None and self._steps >= self.max_steps:
            truncated = True
            self._done = True
            self._stop_worker()
        return observation, reward, terminated, truncated, info

    def close(self):
        self._stop_worker()

    # ---- worker side (runs in the episode's thread) ----
    def _episode(self, trace):
        from ._run import run
        try:
            result = run(trace=trace, cluster=self.cluster, policy=_EnvPolicy(self),
                         **self.options)
            self._to_agent.put(("done", result, self._take_reward()))
        except _Abort:
            pass
        except BaseException as error:  # handed to the agent's thread, raised there
            self._to_agent.put(("error", error, 0.0))

    def _accrue(self, now):
        dt = now - self._last_time
        if dt > 0:
            if self.reward_kind == "slowdown":
                self._reward -= self._slowdown_weight * dt
            elif self.reward_kind == "jct":
                self._reward -= self._in_system * dt / 3600.0
            elif self._queued > 0:
                idle = self.total_gpus - self._busy_gpus
                self._reward -= idle / self.total_gpus * dt / 3600.0
        self._last_time = now

    def _take_reward(self):
        reward, self._reward = self._reward, 0.0
        return reward

    def _ask(self, observation, mask, now):
        self._to_agent.put(("observation", (observation, mask, now), self._take_reward()))
        action = self._to_engine.get()
        if action is _Abort:
            raise _Abort()
        return action

    def _observe(self, ctx, jobs, allocations, running):
        now = ctx.now
        q = np.zeros((self.k, len(QUEUE_FEATURES)), dtype=np.float32)
        for i, (job, allocation) in enumerate(zip(jobs, allocations)):
            info = ctx.job(job)
            q[i] = (1.0, info.gpus, info.duration, now - info.submit_time,
                    1.0 if allocation is not None else 0.0)
        r = np.zeros((self.max_running, len(RUNNING_FEATURES)), dtype=np.float32)
        if self.max_running:
            rows = sorted((ctx.remaining_seconds(j), len(ctx.run(j).allocation)) for j in running)
            for i, row in enumerate(rows[:self.max_running]):
                r[i] = row
        free = ctx.free_gpus_per_node()
        per_type = np.array([ctx.free_gpus_of_type(t) for t in self.gpu_types], dtype=np.int32)
        summary = np.array([now, ctx.queue_length, len(running), ctx.free_gpus], dtype=np.float32)
        return {"queue": q, "running": r, "free_gpus": free, "free_gpus_per_type": per_type,
                "summary": summary}

    # ---- agent side ----
    def _receive(self):
        kind, payload, reward = self._to_agent.get()
        if kind == "error":
            self._thread.join()
            self._thread = None
            self._done = True
            raise payload
        if kind == "done":
            self._thread.join()
            self._thread = None
            self.result = payload
            self._mask = np.zeros(self.k + 1, dtype=bool)
            observation = {name: np.zeros(space.shape, space.dtype)
                           for name, space in self.observation_space.items()}
            info = {"action_mask": self._mask, "result": payload}
            return observation, reward, True, info
        observation, mask, now = payload
        self._mask = mask
        info = {"action_mask": mask, "now": now}
        return observation, reward, False, info

    def _stop_worker(self):
        if self._thread is None:
            return
        if self._thread.is_alive():
            self._to_engine.put(_Abort)
            # The worker may have been about to hand over an observation: drain it.
            while self._thread.is_alive():
                try:
                    self._to_agent.get(timeout=0.05)
                except queue_module.Empty:
                    pass
        self._thread.join()
        self._thread = None

    def __del__(self):
        try:
            self._stop_worker()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass
