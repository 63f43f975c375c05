// fcfs: first come, first served with strict head-of-line blocking (docs/policies.md#fcfs). The
// queue is in (submit time, input order); jobs start from the head while the head fits under the
// run's placement, and the pass stops at the first job that does not fit. Jobs a site model's
// limits hold back (SchedulingContext::MayStart) are passed over, not waited for.
// Parameters: none.
// Cost of a pass: (starts + 1) placement queries (O(log nodes) each for first-fit and best-fit);
// the pass ends at the first job that does not fit.
#include "policies/registry.h"

namespace clustersim {
namespace {

class Fcfs final : public Policy {
 public:
  bool SupportsShares() const override { return true; }
  bool HonoursSiteRules() const override { return true; }
  bool ServesQueueHead() const override { return true; }  // --defrag may serve it
  void Schedule(SchedulingContext& context) override {
    Allocation allocation;
    JobId id = context.QueueFront();
    while (id != kNoJob) {
      const JobId next = context.QueueNext(id);
      // A job a site's limits hold back is passed over, as Slurm leaves it pending without
      // blocking its partition (docs/cluster.md#site-model).
      if (context.MayStart(id)) {
        if (!context.TryPlace(id, &allocation)) return;
        context.Start(id, std::move(allocation));
      }
      id = next;
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
