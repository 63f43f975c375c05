// gavel: heterogeneity-aware round-based scheduling (Narayanan et al., "Heterogeneity-Aware
// Cluster Scheduling Policies for Deep Learning Workloads", OSDI'20). Every round an allocation
// X[m][j] — the fraction of time job m should spend on GPU type j — comes from a linear program
// over the jobs' throughputs on each type (policies/gavel_lp.h), recomputed when the set of
// jobs or of working GPUs has changed since the last one; the paper's priority rule then turns it
// into the round's schedule, and jobs run, are preempted or migrate at round boundaries only.
//
// - Throughput T[m][j]: SchedulingContext::TypeRate, the job's rate under the run's runtime model
//   on the allocation the run's placement gives it on type j of the empty cluster (the paper
//   profiles it; clustersim knows it from the model). Use the hardware runtime model: under
//   `trace` every type is alike.
// - Priority (paper §5, Algorithm 1; the artifact's scheduler._update_priorities): for each (job,
//   type) with X[m][j] > 0, X[m][j] / (share of the rounds since the last LP in which m ran on j);
//   a pair that has not run yet gets X x 1e9. Pairs are taken in decreasing priority (ties: larger
//   X, lower job index, type in listed order) and a job is chosen for the first of its pairs whose
//   type still has s_m GPUs not taken by jobs chosen before (s_m = its GPU count).
// - Applying a round: a chosen job already running on its chosen type keeps its GPUs; any other
//   running job is preempted (one chosen for another type migrates: it is preempted and started
//   there in the same pass); chosen jobs are then placed by the run's placement, restricted to
//   their type, largest first (as the artifact assigns workers by decreasing scale factor). A
//   chosen job that does not fit (GPUs split across nodes) is skipped, and the pairs of the LP
//   not chosen are then offered the GPUs left, in priority order, so fragmentation does not idle
//   GPUs the LP gave out (a small extension of the paper's rule); a job stopped at this boundary
//   is not among them (it would pay its preemption cost to restart at once).
// - CPU-only jobs (no GPUs; docs/resources.md#cpu-only-jobs) are not part of the LP: at every
//   round boundary, after the GPU jobs, the queued ones start in submission order wherever the
//   run's placement finds room, and they run to their end (never preempted).
// - Preemption and migration cost the run's preemption cost (engine: a preempted job pays
//   checkpoint save + restore before it progresses again), charged on every round boundary a job
//   stops or moves at. Jobs that arrive or GPUs that finish mid-round wait for the next round
//   boundary. Rounds run while any job is queued or running; the first arrival after an idle
//   spell starts a round at once.
// Parameters:
//   round_seconds (360): round length, the paper's default of 6 minutes.
//   objective (max-min): max-min (heterogeneity-aware LAS, §4.1) or throughput (maximum total
//     throughput).
#include <algorithm>
#include <map>
#include <vector>

#include "policies/gavel_lp.h"
#include "policies/registry.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr double kDefaultRoundSeconds = 360;  // the paper's round length
constexpr double kUnrunPriority = 1e9;        // the artifact's factor for pairs not yet run
constexpr double kMinShare = 1e-9;            // X below this is "not allocated"
constexpr int kStopped = -2;                  // chosen_slot_: stopped at this boundary

class Gavel final : public Policy {
 public:
  Gavel(double round_seconds, GavelObjective objective)
      : round_seconds_(round_seconds), objective_(objective) {}

  bool PlacesMig() const override { return false; }  // docs/mig.md: its rounds count whole GPUs

  void OnArrival(SchedulingContext& context, JobId /*id*/) override {
    dirty_ = true;
    if (!timer_pending_) {
      context.SetTimer(context.now(), kNoJob, 0);
      timer_pending_ = true;
    }
  }
  void OnCompletion(SchedulingContext& /*context*/, JobId /*id*/) override { dirty_ = true; }
  void OnRequeue(SchedulingContext& /*context*/, JobId /*id*/) override { dirty_ = true; }
  void OnTimer(SchedulingContext& /*context*/, JobId /*id*/, int /*tag*/) override {
    timer_pending_ = false;
    round_due_ = true;
  }

  void Schedule(SchedulingContext& context) override {
    // Jobs wait for the next round boundary (docs/metrics.md#wait-reasons: policy hold).
    context.SetGroupWaitReason(0, WaitReason::kPolicyHold);
    if (!round_due_) return;
    round_due_ = false;
    Round(context);
  }

 private:
  struct Pair {
    double priority;
    double share;
    JobId job;
    int slot;
  };

  void Setup(const SchedulingContext& context) {
    if (!types_.empty()) return;
    types_ = context.cluster().gpu_types();
    slot_of_.assign(context.cluster().catalog().gpus().size(), -1);
    for (size_t s = 0; s < types_.size(); ++s) slot_of_[types_[s]] = static_cast<int>(s);
  }

  // Working GPUs of each type slot (failed ones excluded).
  std::vector<int> Capacity(const SchedulingContext& context) const {
    const Cluster& cluster = context.cluster();
    std::vector<int> capacity(types_.size());
    for (size_t s = 0; s < types_.size(); ++s) capacity[s] = cluster.GpusOfType(types_[s]);
    for (int g : context.failed_gpus()) {
      --capacity[slot_of_[cluster.node(cluster.NodeOfGpu(g)).gpu_type]];
    }
    return capacity;
  }

  void SolveAllocation(const SchedulingContext& context, const std::vector<JobId>& active,
                       const std::vector<int>& capacity) {
    GavelProblem problem;
    problem.gpus_per_type = capacity;
    for (JobId id : active) {
      problem.scale.push_back(std::max(1, context.active(id).request.gpus));
      std::vector<double> row(types_.size());
      for (size_t s = 0; s < types_.size(); ++s) row[s] = context.TypeRate(id, types_[s]);
      problem.throughput.push_back(std::move(row));
    }
    const GavelAllocation allocation = SolveGavel(problem, objective_);
    CHECK(allocation.optimal, "gavel: GLPK found no optimal allocation");
    const size_t types = types_.size();
    allocated_ = active;
    if (static_cast<size_t>(active.back()) >= chosen_slot_.size()) {
      chosen_slot_.resize(active.back() + 1, -1);
      x_.resize((active.back() + 1) * types, 0.0);
      received_.resize((active.back() + 1) * types, 0);
    }
    for (size_t i = 0; i < active.size(); ++i) {
      const size_t at = static_cast<size_t>(active[i]) * types;
      std::copy(allocation.x[i].begin(), allocation.x[i].end(), x_.begin() + at);
      std::fill(received_.begin() + at, received_.begin() + at + types, 0);
    }
    rounds_since_reset_ = 0;
  }

  void Round(SchedulingContext& context) {
    Setup(context);
    // CPU-only jobs (docs/resources.md#cpu-only-jobs) hold no GPU: they are not part of the
    // allocation, never preempted, and start after the round's GPU jobs (StartCpuOnly).
    std::vector<JobId> active;
    for (JobId id : context.running()) {
      if (!IsCpuOnly(context.active(id).request)) active.push_back(id);
    }
    std::vector<JobId> cpu_only;
    for (JobId id = context.QueueFront(); id != kNoJob; id = context.QueueNext(id)) {
      (IsCpuOnly(context.active(id).request) ? cpu_only : active).push_back(id);
    }
    if (active.empty()) {
      StartCpuOnly(context, cpu_only);
      // Idle (the next arrival starts a round), unless CPU-only jobs still wait for CPUs.
      if (context.QueueLength() > 0 || !context.running().empty()) NextRound(context);
      return;
    }
    std::sort(active.begin(), active.end());
    const std::vector<int> capacity = Capacity(context);
    if (dirty_ || context.failed_gpus_version() != failed_version_) {
      SolveAllocation(context, active, capacity);
      dirty_ = false;
      failed_version_ = context.failed_gpus_version();
    } else {
      // Jobs join or leave the active set only by arrivals, ends and requeues, which mark the
      // allocation dirty: without them the last LP's jobs are this round's.
      CHECK(active == allocated_, "gavel: the active jobs changed without a new allocation");
    }

    // The paper's priorities over (job, type) pairs.
    pairs_.clear();
    const size_t types = types_.size();
    for (JobId id : active) {
      const double* x = &x_[id * types];
      const int* got = &received_[id * types];
      for (size_t s = 0; s < types; ++s) {
        if (x[s] <= kMinShare) continue;
        const double share =
            rounds_since_reset_ > 0 ? static_cast<double>(got[s]) / rounds_since_reset_ : 0.0;
        const double priority = share > 0 ? x[s] / share : x[s] * kUnrunPriority;
        pairs_.push_back({priority, x[s], id, static_cast<int>(s)});
      }
    }
    std::sort(pairs_.begin(), pairs_.end(), [](const Pair& a, const Pair& b) {
      if (a.priority != b.priority) return a.priority > b.priority;
      if (a.share != b.share) return a.share > b.share;
      if (a.job != b.job) return a.job < b.job;
      return a.slot < b.slot;
    });
    // chosen_slot_[job]: the slot it was chosen for this round, -1 = not chosen, -2 = stopped
    // at this boundary and not chosen (not restarted). Reset for the active jobs at the end.
    std::vector<int> left = capacity;
    for (const Pair& p : pairs_) {
      if (chosen_slot_[p.job] >= 0) continue;
      const int gpus = std::max(1, context.active(p.job).request.gpus);
      if (gpus > left[p.slot]) continue;
      left[p.slot] -= gpus;
      chosen_slot_[p.job] = p.slot;
    }

    // Preempt what does not stay; a job chosen for its current type stays where it is.
    const std::vector<JobId> running(context.running().begin(), context.running().end());
    for (JobId id : running) {
      if (IsCpuOnly(context.active(id).request)) continue;
      const int chosen = chosen_slot_[id];
      const int slot = slot_of_[context.active(id).allocation.gpu_type];
      if (chosen == slot) continue;
      context.Preempt(id);
      if (chosen < 0) chosen_slot_[id] = kStopped;
    }
    // Start the chosen queued jobs, largest first (ties: priority order).
    std::vector<std::pair<JobId, int>> starts;
    for (const Pair& p : pairs_) {
      if (chosen_slot_[p.job] != p.slot) continue;
      if (context.run(p.job).state != JobState::kQueued) continue;
      starts.emplace_back(p.job, p.slot);
    }
    std::stable_sort(starts.begin(), starts.end(), [&](const auto& a, const auto& b) {
      return context.active(a.first).request.gpus > context.active(b.first).request.gpus;
    });
    for (const auto& [id, slot] : starts) TryStart(context, id, slot);
    // GPUs left by chosen jobs that did not fit: offered to the other pairs in priority order.
    for (const Pair& p : pairs_) {
      if (context.run(p.job).state != JobState::kQueued || chosen_slot_[p.job] == kStopped) {
        continue;
      }
      TryStart(context, p.job, p.slot);
    }

    // Wait reasons: a chosen job that did not fit waits for room on its type; the others were
    // not given GPUs this round.
    // Nothing starts or stops in this loop: requests of one shape have one reason.
    reasons_.clear();
    for (JobId id : active) {
      if (context.run(id).state != JobState::kQueued) continue;
      const int chosen = chosen_slot_[id];
      WaitReason reason = WaitReason::kPolicyHold;
      if (chosen >= 0) {
        const PlacementRequest request = OnType(context.active(id).request, types_[chosen]);
        const auto [known, added] = reasons_.try_emplace(ShapeOf(request), reason);
        if (added) {
          known->second = ClassifyNoFit(context.cluster(), context.placement(), context.resources(),
                                        request, context.failed_gpus())
                              .value_or(WaitReason::kPolicyHold);
        }
        reason = known->second;
      }
      context.SetWaitReason(id, reason);
    }
    for (JobId id : active) chosen_slot_[id] = -1;
    for (JobId id : context.running()) {
      if (IsCpuOnly(context.active(id).request)) continue;
      ++received_[id * types + slot_of_[context.active(id).allocation.gpu_type]];
    }
    ++rounds_since_reset_;
    StartCpuOnly(context, cpu_only);
    NextRound(context);
  }

  void NextRound(SchedulingContext& context) {
    context.SetTimer(context.now() + round_seconds_, kNoJob, 0);
    timer_pending_ = true;
  }

  // Queued CPU-only jobs in submission order, each where the run's placement finds room.
  static void StartCpuOnly(SchedulingContext& context, const std::vector<JobId>& jobs) {
    Allocation allocation;
    for (JobId id : jobs) {
      if (context.TryPlace(id, &allocation)) context.Start(id, std::move(allocation));
    }
  }

  // Starts the job on type `slot` where the run's placement finds room. A request of a shape
  // refused on the free state as it still is (Resources::version) cannot fit (the placement is
  // deterministic in the free state and the shape) and is not asked again, unless the placement
  // draws random numbers.
  void TryStart(SchedulingContext& context, JobId id, int slot) {
    const PlacementRequest request = OnType(context.active(id).request, types_[slot]);
    const uint64_t version = context.resources().version();
    const bool remembers = !context.placement().DrawsRandomNumbers();
    const RequestShape shape = ShapeOf(request);
    if (remembers) {
      const auto refused = refused_at_.find(shape);
      if (refused != refused_at_.end() && refused->second == version) return;
    }
    Allocation allocation;
    if (context.placement().Find(context.resources(), request, &allocation)) {
      context.Start(id, std::move(allocation));
    } else if (remembers) {
      refused_at_[shape] = version;
    }
  }

  double round_seconds_;
  GavelObjective objective_;
  std::vector<int> types_;                      // present catalog types, listed order (slots)
  std::vector<int> slot_of_;                    // catalog type -> slot
  // By JobId (x_ and received_ by JobId x slots): the allocation per slot of the jobs of the last
  // LP (allocated_, ascending), the rounds each ran per slot since, and the round's choice.
  std::vector<JobId> allocated_;
  std::vector<double> x_;
  std::vector<int> received_;
  std::vector<int> chosen_slot_;
  int rounds_since_reset_ = 0;
  bool dirty_ = true;
  bool timer_pending_ = false;
  bool round_due_ = false;
  uint64_t failed_version_ = 0;
  std::vector<Pair> pairs_;
  std::map<RequestShape, uint64_t> refused_at_;  // shape -> free-state version it was refused on
  std::map<RequestShape, WaitReason> reasons_;  // the round's wait reasons by shape
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(
    gavel, "gavel",
    "heterogeneity-aware rounds (Gavel, OSDI'20): an LP allocation over per-type throughputs, "
    "scheduled by the paper's priority rule",
    "round_seconds (360): round length, seconds\n"
    "objective (max-min): max-min (heterogeneity-aware LAS) or throughput",
    [](const clustersim::Params& params) {
      const double round = params.Double("round_seconds", clustersim::kDefaultRoundSeconds);
      if (!(round > 0)) {
        throw clustersim::InputError("parameter round_seconds: expected a number of seconds > 0");
      }
      const std::string objective = params.String("objective", "max-min");
      clustersim::GavelObjective kind;
      if (objective == "max-min") {
        kind = clustersim::GavelObjective::kMaxMinFairness;
      } else if (objective == "throughput") {
        kind = clustersim::GavelObjective::kMaxThroughput;
      } else {
        throw clustersim::InputError("parameter objective=" + objective +
                                     ": expected max-min or throughput");
      }
      return std::make_unique<clustersim::Gavel>(round, kind);
    });
