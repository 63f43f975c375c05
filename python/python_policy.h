// A Policy written in Python (docs/python.md): PythonPolicy adapts the hooks of a
// `clustersim.Policy` subclass to the engine's Policy interface, and PolicyContext is the `ctx`
// those hooks receive: the SchedulingContext's views and verbs under Python names.
//
// Ownership and lifetime: the caller (the module's run function) owns the PythonPolicy for one
// run and holds the GIL when it creates and destroys it. The engine calls the hooks with the GIL
// released; each hook takes the GIL for the call. The PolicyContext is shared with its Python
// object (which Python code may keep); it points at the engine's SchedulingContext only while a
// hook runs, so a `ctx` kept and used afterwards raises RuntimeError instead of dangling.
//
// Invalid decisions: a verb the engine refuses raises clustersim.PolicyError with the engine's
// message. The engine's contract is that an invalid decision stops the run (sim/engine/policy.h),
// so the refusal is remembered: if the hook catches the exception and returns, the adapter raises
// it again and the run stops all the same.
#ifndef CLUSTERSIM_PYTHON_PYTHON_POLICY_H_
#define CLUSTERSIM_PYTHON_PYTHON_POLICY_H_

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/engine/policy.h"
#include "sim/util/error.h"

namespace clustersim {

// An invalid decision of a Python policy (clustersim.PolicyError); the message is the engine's.
class PolicyDecisionError : public InternalError {
 public:
  using InternalError::InternalError;
};

class PythonPolicy;

class PolicyContext {
 public:
  explicit PolicyContext(PythonPolicy* owner) : owner_(owner) {}

  // The context of the hook now running. Throws std::runtime_error outside a hook.
  SchedulingContext& get() const;
  // Jobs that have arrived so far: JobIds below it are jobs the policy may refer to.
  int64_t jobs_seen() const;
  void Bind(SchedulingContext* context) { context_ = context; }
  SchedulingContext* bound() const { return context_; }

  // Verbs: apply the decision or throw PolicyDecisionError with the engine's message.
  void Start(JobId id, Allocation allocation);
  void Preempt(JobId id);
  void Resize(JobId id, Allocation allocation);
  void SetTimer(double time, JobId id, int tag);
  // Wait reasons by name (docs/metrics.md#wait-reasons); an unknown name raises InputError listing
  // the valid ones.
  void SetWaitReason(JobId id, const std::string& reason);
  void ClearWaitReason(JobId id);
  void SetGroupWaitReason(int group, const std::string& reason);

  // An allocation of `gpus` (global indices, ascending) as whole GPUs or shares of `milli`
  // thousandths; its GPU type is that of the first GPU's node (the engine checks the others).
  Allocation MakeAllocation(std::vector<int> gpus, int milli) const;
  // Seconds until a running job ends at its current rate (restore overhead still to pay plus the
  // remaining work over the rate, ignoring periodic checkpoint saves); for any other job its
  // remaining work at rate 1. An oracle estimate, as srtf's (policies/srtf.cc).
  double RemainingSeconds(JobId id) const;

 private:
  template <typename Verb>
  void Apply(Verb&& verb);

  PythonPolicy* owner_;
  SchedulingContext* context_ = nullptr;
};

class PythonPolicy final : public Policy {
 public:
  // The Python callables for each hook; None for a hook the Python class does not override (the
  // engine then skips the call). `schedule` is required; `requested_walltime(job) -> seconds`.
  struct Hooks {
    pybind11::object schedule, on_arrival, on_completion, on_timer, on_requeue, requested_walltime;
  };
  // `name` names the policy in the engine's messages.
  PythonPolicy(Hooks hooks, bool supports_shares, std::string name);
  ~PythonPolicy() override;

  void Schedule(SchedulingContext& context) override;
  void OnArrival(SchedulingContext& context, JobId id) override;
  void OnCompletion(SchedulingContext& context, JobId id) override;
  void OnTimer(SchedulingContext& context, JobId id, int tag) override;
  void OnRequeue(SchedulingContext& context, JobId id) override;
  double RequestedWalltime(const Job& job) const override;
  bool SupportsShares() const override { return supports_shares_; }

  const std::string& name() const { return name_; }
  int64_t jobs_seen() const { return jobs_seen_; }
  // Remembers the first refused decision (see the header comment).
  void NoteRefusal(const std::string& message) {
    if (refusal_.empty()) refusal_ = message;
  }

 private:
  // Calls `hook(ctx, args...)` with the GIL held and the context bound, then re-raises a refusal
  // the hook swallowed.
  template <typename... Args>
  void Call(const pybind11::object& hook, SchedulingContext& context, Args... args);

  Hooks hooks_;
  bool supports_shares_;
  std::string name_;
  std::shared_ptr<PolicyContext> context_;
  pybind11::object context_object_;  // the Python `ctx`, sharing context_
  std::string refusal_;
  int64_t jobs_seen_ = 0;  // 1 + the highest JobId that has arrived
};

}  // namespace clustersim

#endif  // CLUSTERSIM_PYTHON_PYTHON_POLICY_H_
