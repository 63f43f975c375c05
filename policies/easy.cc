// easy: EASY backfilling (docs/backfilling.md). Jobs start from the head of the submission-order
// queue while the head fits; when it does not, it gets a reservation at the earliest time t_s at
// which the running jobs, ending by their requested wall times, leave room for it — the GPUs the
// run's placement would give it then — and any later job that fits now starts if it ends by t_s
// or leaves the head's reservation intact (with `pool`: uses no more than the extra GPUs left at
// t_s; with node-aware placements: keeps off the GPUs reserved for the head unless the head can
// be placed elsewhere at t_s). A head's first t_s is its promise, kept while every job runs at
// most its plan (KeepsPromises; --check verifies it).
// Parameters: walltime (trace) = trace | exact | a factor f > 0 of the duration; see
// policies/backfill.h for the exact rule and why the promise holds.
// Cost of a pass: O(distance the horizon moves + (starts + 1) x classes examined x log queue)
// (policies/backfill.h); on the 82,247-job Philly trace on 56 x 8 GPUs the whole run takes about
// 2 s, on the 312,826-job CEA-Curie log on 1,024 x 64 about 25 s of CPU (bench/README.md).
#include "policies/backfill.h"
#include "policies/registry.h"

namespace clustersim {
namespace {

class Easy final : public Policy {
 public:
  explicit Easy(WalltimeRule rule) : backfill_(rule) {}

  void Schedule(SchedulingContext& context) override {
    backfill_.Pass(context, queue_, true);
    backfill_.EndPass(context);
  }
  int WaitGroup(SchedulingContext& context, JobId id) override {
    return backfill_.WaitGroup(context, id);
  }
  void OnArrival(SchedulingContext& context, JobId id) override {
    queue_.Add(id, backfill_.ClassOf(context, id), backfill_.walltime().Planned(context.job(id)));
  }
  void OnCompletion(SchedulingContext& context, JobId id) override {
    backfill_.OnCompletion(context, id);
  }
  void OnRequeue(SchedulingContext& context, JobId id) override {
    backfill_.OnCompletion(context, id);
    queue_.Readd(id, backfill_.ClassOf(context, id), backfill_.walltime().Planned(context.job(id)));
  }
  double RequestedWalltime(const Job& job) const override {
    return backfill_.walltime().Requested(job);
  }
  bool KeepsPromises() const override { return true; }
  bool HonoursSiteRules() const override { return true; }
  void BeforeRun(const Trace& trace, uint64_t seed) override { backfill_.BeforeRun(trace, seed); }
  std::string PlanningEstimates() const override { return backfill_.walltime().Describe(); }

 private:
  EasyBackfill backfill_;
  QueueIndex queue_;  // the waiting jobs in submission order
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(easy, "easy",
                           "EASY backfilling: FCFS with a reservation for the blocked head; later "
                           "jobs start if they do not delay it",
                           clustersim::WalltimeRule::kHelp, [](const clustersim::Params& params) {
                             return std::make_unique<clustersim::Easy>(
                                 clustersim::WalltimeRule::FromParams(params));
                           });
