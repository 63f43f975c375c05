"""Reference policies written in Python: the rules of the C++ fcfs and sjf (docs/policies.md),
line for line, so that they give the same schedule and fingerprint. They are also the examples of
the Policy API and the subjects of the per-pass overhead benchmark (bench/README.md)."""

import heapq

from ._policy import Policy

__all__ = ["Fcfs", "Sjf"]


class Fcfs(Policy):
    """First come, first served with strict head-of-line blocking (policies/fcfs.cc): start jobs
    from the head of the queue while the head fits under the run's placement."""

    supports_shares = True

    def schedule(self, ctx):
        job = ctx.queue_front()
        while job != -1:
            allocation = ctx.try_place(job)
            if allocation is None:
                return
            ctx.start(job, allocation)
            job = ctx.queue_front()


class Sjf(Policy):
    """Non-preemptive shortest job first by trace duration, strict blocking (policies/sjf.cc):
    the policy's own queue in (duration, job index) order, fed by arrivals and requeues."""

    supports_shares = True

    def __init__(self):
        self._queue = []  # heap of (trace duration, job index)

    def on_arrival(self, ctx, job):
        heapq.heappush(self._queue, (ctx.job(job).duration, job))

    def on_requeue(self, ctx, job):
        self.on_arrival(ctx, job)

    def schedule(self, ctx):
        queue = self._queue
        while queue:
            job = queue[0][1]
            allocation = ctx.try_place(job)
            if allocation is None:
                return
            ctx.start(job, allocation)
            heapq.heappop(queue)
