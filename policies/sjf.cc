// sjf: non-preemptive shortest job first with oracle knowledge (docs/policies.md#sjf). The queue is
// in order of trace duration (ties: submit order, then input order); jobs start from the head while
// the head fits under the run's placement, and the pass stops at the first job that does not fit
// (strict blocking, as fcfs).
// Parameters: none.
//
// The key is the trace's duration even under the `hardware` runtime model (the oracle knows the
// work, not the rate a placement will give). The policy keeps its own ordered queue, fed by
// OnArrival and OnRequeue: jobs enter the engine's queue only by arriving or after a failure,
// as sjf never preempts.
// Cost of a pass: (starts + 1) placement queries plus O(log queue) per start.
#include <set>
#include <utility>

#include "policies/registry.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

class Sjf final : public Policy {
 public:
  bool SupportsShares() const override { return true; }
  void OnArrival(SchedulingContext& context, JobId id) override {
    queued_.emplace(context.job(id).duration, id);
  }
  void OnRequeue(SchedulingContext& context, JobId id) override { OnArrival(context, id); }

  void Schedule(SchedulingContext& context) override {
    CHECK(static_cast<int>(queued_.size()) == context.QueueLength(),
          "sjf: a job entered the queue other than by arriving");
    Allocation allocation;
    while (!queued_.empty()) {
      const JobId id = queued_.begin()->second;
      if (!context.TryPlace(id, &allocation)) {
        // Its head waits for room; every other job behind it (its wait group's queue_head).
        if (id != blocked_head_) {
          if (blocked_head_ != kNoJob && context.run(blocked_head_).state == JobState::kQueued) {
            context.ClearWaitReason(blocked_head_);
          }
          blocked_head_ = id;
        }
        context.SetWaitReason(id, context.NoFitReason(id).value_or(WaitReason::kCapacity));
        return;
      }
      context.Start(id, std::move(allocation));
      queued_.erase(queued_.begin());
    }
  }

 private:
  std::set<std::pair<double, JobId>> queued_;  // (trace duration, job): JobId is submit order
  JobId blocked_head_ = kNoJob;                // the last head given a wait reason
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(sjf, "sjf",
                           "shortest job first by trace duration (oracle), non-preemptive; "
                           "strict blocking",
                           "", [](const clustersim::Params&) {
                             return std::make_unique<clustersim::Sjf>();
                           });
