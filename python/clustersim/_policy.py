"""clustersim.Policy: the base class of policies written in Python (docs/python.md)."""

__all__ = ["Policy"]

_OPTIONAL_HOOKS = ("on_arrival", "on_completion", "on_timer", "on_requeue", "requested_walltime")


class Policy:
    """A scheduling policy written in Python.

    Subclass it, implement ``schedule(ctx)`` and pass an instance to ``clustersim.run(policy=...)``.
    The engine calls ``schedule`` once per pass, after every event due at the current time was
    applied; the optional hooks run while events are applied (before the pass). ``ctx`` is a
    ``clustersim.Context``: the queue, running jobs and free GPUs, and the verbs ``try_place``,
    ``start``, ``preempt``, ``resize`` and ``set_timer``, each validated and applied at once by the
    engine. A decision the engine refuses raises ``clustersim.PolicyError`` with the engine's
    message and stops the run. Jobs are integer indices into the trace sorted by (submit time,
    input order); ``ctx.job(i)`` gives the job as the trace stated it.

    Class attributes:
      name: how runs record the policy (``python:<name>``); default: the class name.
      supports_shares: True if the policy copes with GPU shares (Allocation.milli), as the C++
        ``Policy::SupportsShares``; default False (fractional jobs then hold whole GPUs).
    """

    name = None
    supports_shares = False

    def schedule(self, ctx):
        """One scheduling pass. Required."""
        raise NotImplementedError(f"{type(self).__name__}.schedule(ctx) is not implemented")

    def on_arrival(self, ctx, job):
        """A job was submitted and entered the queue."""

    def on_completion(self, ctx, job):
        """A running job ended (completed, timed out or failed)."""

    def on_timer(self, ctx, job, tag):
        """A timer set with ctx.set_timer(time, job, tag) is due."""

    def on_requeue(self, ctx, job):
        """A running job lost its GPUs to a failure and is queued again."""

    def requested_walltime(self, job):
        """The job's requested wall time in seconds (NaN: none); the engine kills a job whose
        running time reaches it. Default: the trace's walltime."""
        return job.walltime

    def _hooks(self):
        """The bound hooks the engine must call: schedule, and each optional hook this class
        overrides (the engine skips the others without calling into Python)."""
        hooks = {"schedule": self.schedule}
        for hook in _OPTIONAL_HOOKS:
            if getattr(type(self), hook) is not getattr(Policy, hook):
                hooks[hook] = getattr(self, hook)
        return hooks

    def _run_name(self):
        return "python:" + (self.name or type(self).__name__)
