// fcfs: first come, first served with strict head-of-line blocking (docs/policies.md#fcfs). The
// queue is in (submit time, input order); jobs start from the head while the head fits under the
// run's placement, and the pass stops at the first job that does not fit.
// Parameters: none.
// Cost of a pass: (starts + 1) placement queries (O(log nodes) each for first-fit and best-fit);
// the pass ends at the first job that does not fit.
#include "policies/registry.h"

namespace clustersim {
namespace {

class Fcfs final : public Policy {
 public:
  bool SupportsShares() const override { return true; }
  void Schedule(SchedulingContext& context) override {
    Allocation allocation;
    for (JobId id = context.QueueFront(); id != kNoJob; id = context.QueueFront()) {
      if (!context.TryPlace(id, &allocation)) return;
      context.Start(id, std::move(allocation));
    }
  }
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(fcfs, "fcfs",
                           "first come, first served; strict head-of-line blocking", "",
                           [](const clustersim::Params&) {
                             return std::make_unique<clustersim::Fcfs>();
                           });
