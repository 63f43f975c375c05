// edf: earliest deadline first with EASY backfilling (docs/deadlines.md#edf). The waiting jobs are
// ordered by absolute deadline (submit time + the job's deadline; jobs without one after every job
// with one), ties by submission order, and served as `easy` serves its queue: from the head while
// the head fits; when it does not, it gets a reservation at the earliest time the running jobs,
// ending by their requested wall times, leave room for it, and later jobs start if they do not
// delay it (policies/backfill.h). EDF is optimal for meeting deadlines on one preemptive processor
// (Liu and Layland, JACM 1973; Dertouzos, IFIP 1974); here jobs are rigid, gang-scheduled and
// never preempted, so it is a heuristic.
// Parameters: walltime (trace) = trace | exact | a factor f > 0 of the duration, as for easy;
// backfill (easy) = easy | none (strict blocking at the first job that does not fit);
// order (deadline) = deadline | duration: `duration` orders by trace duration instead (shortest
// first, the same backfilling), the control that separates what the deadlines add from what
// serving short jobs first does (docs/deadlines.md).
// The blocked head's reservation is recorded as its promise, an estimate: a job arriving later
// with an earlier deadline goes before it (KeepsPromises is false).
// Cost of a pass: EASY's (policies/backfill.h) with O(log queue) per job entering or leaving the
// order, plus O(jobs the walk skips) for the filter: the order is one sorted set, not indexed by
// request class.
#include <limits>
#include <set>
#include <unordered_map>
#include <utility>

#include "policies/backfill.h"
#include "policies/registry.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

// The waiting jobs by (absolute deadline, JobId).
class DeadlineOrder final : public CandidateOrder {
 public:
  void Add(JobId id, double deadline, int cls, double planned) {
    keys_.emplace(id, Entry{deadline, cls, planned});
    waiting_.emplace(deadline, id);
  }
  void Remove(JobId id) {
    auto it = keys_.find(id);
    if (it == keys_.end()) return;
    waiting_.erase({it->second.deadline, id});
    keys_.erase(it);
  }

  JobId First() override {
    cursor_ = {-std::numeric_limits<double>::infinity(), kNoJob};
    static const ClassFilter kAll;
    return Next(kAll);
  }
  JobId Next(const ClassFilter& filter) override {
    for (auto it = waiting_.upper_bound(cursor_); it != waiting_.end(); ++it) {
      cursor_ = *it;
      const Entry& e = keys_.at(it->second);
      if (filter.Admits(e.cls, e.planned)) return it->second;
    }
    cursor_ = {std::numeric_limits<double>::infinity(), std::numeric_limits<JobId>::max()};
    return kNoJob;
  }
  void OnStart(JobId id) override { Remove(id); }

 private:
  struct Entry {
    double deadline;
    int cls;
    double planned;
  };
  std::set<std::pair<double, JobId>> waiting_;
  std::unordered_map<JobId, Entry> keys_;
  std::pair<double, JobId> cursor_;
};

class Edf final : public Policy {
 public:
  Edf(WalltimeRule rule, bool backfill, bool by_duration)
      : backfill_(rule), easy_(backfill), by_duration_(by_duration) {}

  void Schedule(SchedulingContext& context) override { backfill_.Pass(context, order_, easy_); }
  void BeforeRun(const Trace& trace, uint64_t seed) override { backfill_.BeforeRun(trace, seed); }
  std::string PlanningEstimates() const override { return backfill_.walltime().Describe(); }
  void OnArrival(SchedulingContext& context, JobId id) override { Enter(context, id); }
  void OnCompletion(SchedulingContext& context, JobId id) override {
    backfill_.OnCompletion(context, id);
  }
  void OnRequeue(SchedulingContext& context, JobId id) override {
    backfill_.OnCompletion(context, id);
    Enter(context, id);
  }
  double RequestedWalltime(const Job& job) const override {
    return backfill_.walltime().Requested(job);
  }
  std::string IdleWarning(const Trace& trace, const ModelRuntime* /*models*/) const override {
    for (const JobConstraints& c : trace.constraints) {
      if (c.has_deadline()) return "";
    }
    return std::string("edf: no job of the trace has a deadline, so the order is submission ") +
           "order and the policy schedules like " + (easy_ ? "easy" : "fcfs") +
           "; give deadlines with --deadlines or a deadline column (docs/deadlines.md)";
  }

 private:
  void Enter(SchedulingContext& context, JobId id) {
    const double key = by_duration_ ? context.job(id).duration : context.deadline(id);
    order_.Add(id, key, backfill_.ClassOf(context, id),
               backfill_.walltime().Planned(context.job(id)));
  }

  EasyBackfill backfill_;
  bool easy_;
  bool by_duration_;
  DeadlineOrder order_;
};

bool ByDurationFromParams(const Params& params) {
  const std::string order = params.String("order", "deadline");
  if (order != "deadline" && order != "duration") {
    throw InputError("parameter order=" + order + ": expected deadline or duration");
  }
  return order == "duration";
}

bool BackfillFromParams(const Params& params) {
  const std::string mode = params.String("backfill", "easy");
  if (mode != "easy" && mode != "none") {
    throw InputError("parameter backfill=" + mode + ": expected easy or none");
  }
  return mode == "easy";
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(
    edf, "edf",
    "earliest deadline first (jobs without a deadline last) with EASY backfilling",
    "walltime (trace): trace | exact | a factor of the duration, as for easy\n"
    "                           backfill (easy): easy = EASY backfilling | none = strict blocking\n"
    "                           order (deadline): deadline | duration (shortest first: a control)",
    [](const clustersim::Params& params) {
      return std::make_unique<clustersim::Edf>(clustersim::WalltimeRule::FromParams(params),
                                               clustersim::BackfillFromParams(params),
                                               clustersim::ByDurationFromParams(params));
    });
