// Wait reasons stated pass by pass (docs/metrics.md#wait-reasons): a policy that examines only
// some of its waiting jobs in a pass states a reason for each of them through WaitStatements,
// and at the end of the pass the jobs it stated a reason for in the previous pass but not in this
// one take their wait group's reason again (SchedulingContext::ClearWaitReason). So a job's own
// reason is always the one of the policy's latest look at it, and the cost is O(jobs stated) per
// pass, never O(queue). Wait groups whose reason is set per pass are named by the policy (for
// EASY: request classes, policies/backfill.h).
#ifndef CLUSTERSIM_POLICIES_WAIT_STATEMENTS_H_
#define CLUSTERSIM_POLICIES_WAIT_STATEMENTS_H_

#include <cstdint>
#include <vector>

#include "sim/engine/policy.h"

namespace clustersim {

class WaitStatements {
 public:
  // States the queued job's reason for this pass (SchedulingContext::SetWaitReason).
  void State(SchedulingContext& context, JobId id, WaitReason reason) {
    if (id >= static_cast<JobId>(stamp_.size())) {
      stamp_.resize(std::max<size_t>(id + 1, stamp_.size() * 2), 0);
    }
    if (stamp_[id] != pass_) {
      stamp_[id] = pass_;
      stated_.push_back(id);
    }
    context.SetWaitReason(id, reason);
  }
  // The reason the job does not fit now (SchedulingContext::NoFitReason), stated; `otherwise` when
  // it fits after all (a placement that draws random numbers is not asked).
  WaitReason StateNoFit(SchedulingContext& context, JobId id, WaitReason otherwise) {
    const WaitReason reason = context.NoFitReason(id).value_or(otherwise);
    State(context, id, reason);
    return reason;
  }
  // Ends the pass: every job stated in the previous pass but not in this one, still queued, takes
  // its group's reason again.
  void EndPass(SchedulingContext& context) {
    for (JobId id : previous_) {
      if (stamp_[id] != pass_ && context.run(id).state == JobState::kQueued) {
        context.ClearWaitReason(id);
      }
    }
    previous_.swap(stated_);
    stated_.clear();
    ++pass_;
  }

 private:
  uint64_t pass_ = 1;
  std::vector<uint64_t> stamp_;  // per job: the pass it was last stated in
  std::vector<JobId> stated_;    // this pass
  std::vector<JobId> previous_;  // the previous pass
};

}  // namespace clustersim

#endif  // CLUSTERSIM_POLICIES_WAIT_STATEMENTS_H_
