#!/usr/bin/env python3
"""Trains a small policy-gradient scheduler in clustersim.Env (numpy only) and compares it with
random choices, fcfs and sjf on held-out synthetic traces (README, "Python").

The agent scores each of the first K queued jobs that fit with a linear function of the job's
features (log duration, GPUs, log wait) and the wait action with a linear function of the
cluster's state (free fraction, running jobs), and samples from the softmax over the valid
actions (REINFORCE with a per-decision baseline, Williams 1992). Reward: "slowdown", so an
episode's return is minus the sum of the jobs' bounded slowdowns (tau = 10 s).

Usage (after building, with PYTHONPATH=build/python):
  python3 scripts/rl_example.py [--iterations 60] [--plot docs/figures/rl_learning_curve.png]
Prints the learning curve (per iteration: mean training return; every few: the greedy policy's
mean bounded slowdown on the held-out traces) and the final comparison table.
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np

import clustersim

TAU = 10.0  # seconds, the bounded-slowdown threshold
CLUSTER = {"nodes": [{"count": 4, "gpu_type": "V100-SXM2-32GB", "gpus_per_node": 8}]}
K = 8
GENERATOR = dict(jobs=120, gpus=32, load=1.1, durations="philly")


def job_features(queue_rows):
    """(K, 4): log10 duration (s), GPUs / 8, log10 (1 + wait s), 1."""
    duration = np.maximum(queue_rows[:, 2], 1.0)
    return np.stack([np.log10(duration), queue_rows[:, 1] / 8.0,
                     np.log10(1.0 + queue_rows[:, 3]), np.ones(len(queue_rows))], axis=1)


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
    values = []
    for trace in traces:
        env = clustersim.Env(trace=trace, cluster=CLUSTER, k=K, reward="slowdown",
                             slowdown_bound_seconds=TAU)
        _, _, result = episode(env, choose_factory())
        values.append(bounded_slowdown(result))
        env.close()
    return float(np.mean(values))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--episodes", type=int, default=4, help="episodes per iteration")
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--eval-every", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", help="write the learning curve to this PNG (matplotlib)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    total_gpus = 32
    started = time.time()

    with tempfile.TemporaryDirectory(prefix="rl-example-") as folder:
        train = make_traces(folder, range(1, 9))
        held_out = make_traces(folder, range(101, 105))

        def random_choice():
            r = np.random.default_rng(12345)
            return lambda observation, mask: (int(r.choice(np.flatnonzero(mask))), None)

        def shortest_fitting():  # sjf over the agent's window, never waiting
            def choose(observation, mask):
                d = np.where(mask[:K], observation["queue"][:, 2], np.inf)
                return int(np.argmin(d)), None
            return lambda: choose

        baselines = {"random (valid actions)": evaluate(held_out, random_choice),
                     "shortest fitting of K": evaluate(held_out, shortest_fitting())}
        for name in ("fcfs", "sjf"):
            baselines[name] = float(np.mean([bounded_slowdown(clustersim.run(
                trace=t, cluster=CLUSTER, policy=name)) for t in held_out]))

        model = LinearSoftmax(rng)

        def greedy():
            def choose(observation, mask):
                p, _, _ = model.probabilities(observation, mask, total_gpus)
                return int(np.argmax(p)), None
            return choose

        def sampler(observation, mask):
            p, jf, wf = model.probabilities(observation, mask, total_gpus)
            action = int(rng.choice(K + 1, p=p))
            return action, model.grad_log(action, p, jf, wf)

        curve = []  # (iteration, mean training return, held-out greedy bounded slowdown or nan)
        print("iteration  train_return  heldout_bsld")
        for iteration in range(args.iterations + 1):
            held = float("nan")
            if iteration % args.eval_every == 0:
                held = evaluate(held_out, greedy)
            if iteration == args.iterations:
                curve.append((iteration, float("nan"), held))
                print(f"{iteration:9d}  {'':>12}  {held:12.2f}")
                break
            trace = train[iteration % len(train)]
            env = clustersim.Env(trace=trace, cluster=CLUSTER, k=K, reward="slowdown",
                                 slowdown_bound_seconds=TAU)
            runs = [episode(env, sampler) for _ in range(args.episodes)]
            env.close()
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
            model.job_w += args.learning_rate * g_job / steps * 10
            model.wait_w += args.learning_rate * g_wait / steps * 10
            mean_return = float(np.mean([sum(r) for r, _, _ in runs]))
            curve.append((iteration, mean_return, held))
            print(f"{iteration:9d}  {mean_return:12.1f}  "
                  + (f"{held:12.2f}" if not np.isnan(held) else ""))
            sys.stdout.flush()

        learned = curve[-1][2]
        print(f"\nmean bounded slowdown (tau {TAU:.0f} s) on {len(held_out)} held-out traces "
              f"({GENERATOR['jobs']} jobs, load {GENERATOR['load']}, Philly durations) on 32 "
              "V100 GPUs:")
        for name, value in list(baselines.items()) + [("learned (greedy)", learned)]:
            print(f"  {name:24s} {value:8.2f}")
        print(f"weights: jobs {np.round(model.job_w, 3).tolist()}  "
              f"wait {np.round(model.wait_w, 3).tolist()}")
        print(f"wall time {time.time() - started:.0f} s")

        if args.plot:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            fig, ax = plt.subplots(figsize=(7, 4))
            xs = [c[0] for c in curve if not np.isnan(c[2])]
            ys = [c[2] for c in curve if not np.isnan(c[2])]
            ax.plot(xs, ys, "o-", color="black", label="learned policy (greedy), held-out")
            styles = {"random (valid actions)": ("tab:red", ":"), "fcfs": ("tab:orange", "--"),
                      "sjf": ("tab:green", "--"), "shortest fitting of K": ("tab:blue", "-.")}
            for name, value in baselines.items():
                color, style = styles[name]
                ax.axhline(value, color=color, linestyle=style, label=name)
            ax.set_yscale("log")
            ax.set_xlabel("training iteration (4 episodes each)")
            ax.set_ylabel("mean bounded slowdown (log)")
            ax.set_title("Policy gradient in clustersim.Env: 120-job synthetic traces, 32 GPUs")
            ax.legend(fontsize=8)
            fig.tight_layout()
            fig.savefig(args.plot, dpi=110)
            print(f"figure written to {args.plot}")


if __name__ == "__main__":
    main()
