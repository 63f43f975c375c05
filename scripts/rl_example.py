#!/usr/bin/env python3
"""Trains a small policy-gradient scheduler in clustersim.Env (numpy only) and compares it with
random choices, fcfs and sjf on its synthetic training trace and on held-out ones (docs/python.md,
"The RL environment, trained").

The agent scores each of the first K queued jobs that fit with a linear function of the job's
features (log duration, GPUs, log wait) and the wait action with a linear function of the
cluster's state (free fraction, running jobs), and samples from the softmax over the valid
actions: REINFORCE (Williams 1992) with the mean return-to-go at the same decision index as the
baseline. Reward "slowdown": an episode's return is minus the sum of the jobs' bounded slowdowns
(tau = 10 s). The traces come from `clustersim trace generate` (clustersim.generate_trace).

Usage (after building, with PYTHONPATH=build/python):
  python3 scripts/rl_example.py [--iterations 30] [--plot docs/figures/rl_learning_curve.png]
Prints the learning curve (per iteration: the mean bounded slowdown of the episodes sampled on the
training trace; every --eval-every iterations: of one sampled episode per held-out trace) and the
final comparison table.
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np

import clustersim

TAU = 10.0  # seconds, the bounded-slowdown threshold
CLUSTER = {"nodes": [{"count": 4, "gpu_type": "V100-32GB", "gpus_per_node": 8}]}
K = 32
# Offered load 2.5 on the 32 GPUs, exponential durations (mean 1 h): a queue builds up, and which
# queued job starts next matters.
GENERATOR = dict(jobs=200, gpus=32, load=2.5)


def job_features(queue_rows):
    """(K, 4): log10 duration (s) - 3, GPUs / 8, log10 (1 + wait s) - 3, 1. Centred near a
    typical job (1,000 s), so that a large weight on a feature does not by itself move every job's
    score against the wait action's."""
    duration = np.maximum(queue_rows[:, 2], 1.0)
    return np.stack([np.log10(duration) - 3, queue_rows[:, 1] / 8.0,
                     np.log10(1.0 + queue_rows[:, 3]) - 3, np.ones(len(queue_rows))], axis=1)


def wait_features(observation, total_gpus):
    summary = observation["summary"]
    return np.array([summary[3] / total_gpus, summary[2] / 8.0, 1.0])


class LinearSoftmax:
    def __init__(self, rng):
        self.job_w = rng.normal(0, 0.01, 4)
        self.wait_w = rng.normal(0, 0.01, 3)
        self.wait_w[2] = -1.0  # start off preferring to start jobs

    def probabilities(self, observation, mask, total_gpus):
        jf = job_features(observation["queue"])
        wf = wait_features(observation, total_gpus)
        scores = np.full(K + 1, -np.inf)
        scores[:K] = np.where(mask[:K], jf @ self.job_w, -np.inf)
        if mask[K]:
            scores[K] = wf @ self.wait_w
        scores -= scores.max()
        p = np.exp(scores)
        return p / p.sum(), jf, wf

    def grad_log(self, action, p, jf, wf):
        """d log pi(action) / d (job_w, wait_w) for the linear softmax."""
        expected_job = (p[:K, None] * jf).sum(axis=0)
        g_job = -expected_job
        g_wait = -p[K] * wf
        if action < K:
            g_job = g_job + jf[action]
        else:
            g_wait = g_wait + wf
        return g_job, g_wait


def episode(env, choose):
    """Plays one episode; returns (rewards, decisions, result)."""
    observation, info = env.reset()
    rewards, decisions = [], []
    done = env._done
    while not done:
        action, record = choose(observation, info["action_mask"])
        observation, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        decisions.append(record)
        done = terminated or truncated
    return rewards, decisions, env.result


def bounded_slowdown(result):
    jobs = result.jobs[result.jobs.status == "completed"]
    return float(np.mean((jobs.end_time - jobs.submit_time) / np.maximum(jobs.run_time, TAU)))


def make_traces(folder, seeds):
    return [clustersim.generate_trace(os.path.join(folder, f"synthetic_{s}.csv"), seed=s,
                                      **GENERATOR) for s in seeds]


def evaluate(traces, choose_factory):
    """Mean bounded slowdown of one episode per trace, choices from choose_factory()."""
    values = []
    for trace in traces:
        env = clustersim.Env(trace=trace, cluster=CLUSTER, k=K, reward="slowdown",
                             slowdown_bound_seconds=TAU)
        _, _, result = episode(env, choose_factory())
        values.append(bounded_slowdown(result))
        env.close()
    return float(np.mean(values))


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--episodes", type=int, default=4, help="episodes per iteration")
    parser.add_argument("--learning-rate", type=float, default=40.0)
    parser.add_argument("--eval-every", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", help="write the learning curve to this PNG (matplotlib)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    total_gpus = 32
    started = time.time()

    with tempfile.TemporaryDirectory(prefix="rl-example-") as folder:
        train = make_traces(folder, [1])
        held_out = make_traces(folder, range(101, 105))

        def random_choice():
            r = np.random.default_rng(12345)
            return lambda observation, mask: (int(r.choice(np.flatnonzero(mask))), None)

        def shortest_fitting():  # sjf over the agent's window, never waiting
            def choose(observation, mask):
                d = np.where(mask[:K], observation["queue"][:, 2], np.inf)
                return int(np.argmin(d)), None
            return choose

        def compiled(name):
            return lambda traces: float(np.mean([bounded_slowdown(clustersim.run(
                trace=t, cluster=CLUSTER, policy=name)) for t in traces]))

        baselines = {  # name -> (training trace, held-out traces)
            "random (valid actions)": [evaluate(t, random_choice) for t in (train, held_out)],
            "shortest fitting of K": [evaluate(t, shortest_fitting) for t in (train, held_out)],
            "fcfs": [compiled("fcfs")(t) for t in (train, held_out)],
            "sjf": [compiled("sjf")(t) for t in (train, held_out)],
        }
        model = LinearSoftmax(rng)

        def sampler(observation, mask):
            p, jf, wf = model.probabilities(observation, mask, total_gpus)
            action = int(rng.choice(K + 1, p=p))
            return action, model.grad_log(action, p, jf, wf)

        # (iteration, mean bounded slowdown of the iteration's episodes on the training trace,
        # of one episode per held-out trace every --eval-every iterations or nan), both sampled
        # from the policy before the iteration's update
        curve = []
        print("iteration  training  held-out   (mean bounded slowdown, actions sampled)")
        env = clustersim.Env(trace=train[0], cluster=CLUSTER, k=K, reward="slowdown",
                             slowdown_bound_seconds=TAU)
        for iteration in range(args.iterations):
            held = float("nan")
            if iteration % args.eval_every == 0:
                held = evaluate(held_out, lambda: sampler)
            runs = [episode(env, sampler) for _ in range(args.episodes)]
            sampled = float(np.mean([bounded_slowdown(result) for _, _, result in runs]))
            curve.append((iteration, sampled, held))
            print(f"{iteration:9d}  {sampled:8.2f}  " + ("" if np.isnan(held) else f"{held:8.2f}"))
            sys.stdout.flush()
            # REINFORCE: returns to go, minus their mean over the episodes at the same decision
            # index, scaled by their spread.
            returns_to_go = [np.cumsum(r[::-1])[::-1] for r, _, _ in runs]
            length = max(len(g) for g in returns_to_go)
            padded = np.full((len(runs), length), np.nan)
            for i, g in enumerate(returns_to_go):
                padded[i, :len(g)] = g
            baseline = np.nanmean(padded, axis=0)
            scale = np.nanstd(padded) + 1e-8
            g_job = np.zeros(4)
            g_wait = np.zeros(3)
            steps = 0
            for (_, decisions, _), g in zip(runs, returns_to_go):
                for t, (gj, gw) in enumerate(decisions):
                    advantage = (g[t] - baseline[t]) / scale
                    g_job += advantage * gj
                    g_wait += advantage * gw
                    steps += 1
            model.job_w += args.learning_rate * g_job / steps
            model.wait_w += args.learning_rate * g_wait / steps
        env.close()
        learned = [float(np.mean([evaluate(train, lambda: sampler)
                                  for _ in range(args.episodes)])),
                   evaluate(held_out, lambda: sampler)]

        print(f"\nmean bounded slowdown (tau {TAU:.0f} s), {GENERATOR['jobs']}-job traces at "
              f"offered load {GENERATOR['load']} (exponential durations, mean 1 h) on 32 V100 "
              f"GPUs, k = {K}:")
        print(f"  {'policy':26s} {'training trace':>14s} {'4 held-out':>11s}")
        for name, (on_train, on_held) in list(baselines.items()) + [
                (f"learned ({args.iterations} iterations)", learned)]:
            print(f"  {name:26s} {on_train:14.2f} {on_held:11.2f}")
        print(f"weights: jobs (log10 duration - 3, GPUs/8, log10 wait - 3, 1) "
              f"{np.round(model.job_w, 3).tolist()}; wait (free fraction, running/8, 1) "
              f"{np.round(model.wait_w, 3).tolist()}")
        print(f"wall time {time.time() - started:.0f} s")

        if args.plot:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter
            fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
            styles = {"random (valid actions)": ("tab:red", ":"), "fcfs": ("tab:orange", "--"),
                      "sjf": ("tab:green", "--"), "shortest fitting of K": ("tab:blue", "-.")}
            panels = (("training trace (4 sampled episodes per point)", 1, "o-"),
                      ("4 held-out traces (1 sampled episode each)", 2, "s-"))
            for panel, (ax, (title, column, marker)) in enumerate(zip(axes, panels)):
                points = [(c[0], c[column]) for c in curve if not np.isnan(c[column])]
                ax.plot([p[0] for p in points], [p[1] for p in points], marker, color="black",
                        label="learned policy")
                for name, values in baselines.items():
                    color, style = styles[name]
                    ax.axhline(values[panel], color=color, linestyle=style, label=name)
                ax.set_yscale("log")
                ax.yaxis.set_major_locator(FixedLocator([1, 2, 3, 5, 10, 20, 30, 50]))
                ax.yaxis.set_major_formatter(ScalarFormatter())
                ax.yaxis.set_minor_locator(NullLocator())
                ax.set_title(title, fontsize=10)
                ax.set_xlabel("training iteration (policy before its update)")
            axes[0].set_ylabel("mean bounded slowdown (log scale)")
            axes[1].legend(fontsize=8, loc="upper right")
            fig.suptitle(f"REINFORCE in clustersim.Env: {GENERATOR['jobs']}-job synthetic traces "
                         f"at offered load {GENERATOR['load']}, 32 GPUs, k = {K}", fontsize=11)
            fig.tight_layout()
            fig.savefig(args.plot, dpi=100)
            print(f"figure written to {args.plot}")


if __name__ == "__main__":
    main()
