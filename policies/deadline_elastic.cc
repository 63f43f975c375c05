// deadline-elastic: admission control and the fewest GPUs that meet each deadline
// (docs/deadlines.md#deadline-elastic). It follows ElasticFlow (Gu et al., "ElasticFlow: An
// Elastic Serverless Training Platform for Distributed Deep Learning", ASPLOS 2023): a job with a
// deadline is admitted only if its deadline can be met together with every job admitted before,
// and it is given its minimum satisfactory share, the fewest GPUs that finish it in time. Jobs
// without a deadline are best effort, as Chronus's (Gao et al., "Chronus: A Novel Deadline-aware
// Scheduler for Deep Learning Training Jobs", SoCC 2021) best-effort jobs, and run only where the
// plan leaves room.
//
// The rule, exactly. A plan is a free-GPU profile per GPU type over time: the type's GPUs less the
// failed ones, less each running job's GPUs until its estimated end (start + requested wall time,
// or its true end: WalltimeRule; a job without a wall time at least until its true end on the GPUs
// it started on, which a modelled estimate drawn for its whole request may not reach), less the
// reservations made so far. At every pass:
// 1. Admission. Each job with a deadline that arrived since the last pass, by deadline: the
//    admitted waiting jobs and it are planned in deadline order (below); if it meets its deadline
//    and every admitted job that met its deadline in the plan without it still does, it is
//    admitted, else declined (parameter `declined`: reject = the job ends rejected with the reason,
//    as ElasticFlow drops it; best-effort = it waits as a job without a deadline).
// 2. Plan. The admitted waiting jobs in deadline order (ties: submission), each on the profile
//    left by those before it: for every allowed GPU type and every GPU count n from 1 up to its
//    request R, the earliest start at which n GPUs of the type are free for its planned run time
//    (work x R / (n x rate on the type) plus any restore still due, where the rate is
//    SchedulingContext::TypeRate and the n / R is the engine's linear scaling of elastic starts;
//    in model-aware runs the goodput model's RateFactor at the best batch instead; an n below R
//    whose run time exceeds the job's requested wall time, its kill limit, is skipped); the
//    smallest n whose end is by the deadline wins, ties by earlier end then the type listed first;
//    with no such n, the earliest end on R GPUs (the job will be late). The choice is reserved.
// 3. Starts. Each admitted job whose reserved start is now starts on its n GPUs of its type where
//    the run's placement finds them (else it waits for the next pass). Then best-effort jobs, in
//    submission order, start on their whole request where the placement finds room now and the
//    profile keeps their GPUs of that type free of reservations until their estimated end.
// A job keeps its GPU count until it ends: no resizing, so no checkpoint-restore costs. That is
// the first difference from ElasticFlow, which rescales running jobs at every event and gives
// spare GPUs to admitted jobs by their marginal return; the second is the speed model: linear in
// the GPU count here unless the run is model-aware, where ElasticFlow uses measured throughput
// curves. Unlike Chronus, nothing is preempted and there are no leases. Admitted jobs meet their
// deadlines when the plan's estimates hold: exact run times (the `trace` runtime model, or
// `hardware` where placement matches the estimate) and a placement that finds n free GPUs of a
// type whenever n are free (`pool`); node-aware placements can fragment, and the job then waits.
//
// Parameters: declined (reject): reject | best-effort; shares (fewest): fewest | whole — whole
// plans every admitted job on its whole request (no elastic start), the control that separates
// what the fewest-GPU shares add from what admission control does (docs/deadlines.md);
// walltime (trace): the running jobs' end estimates, as for easy; margin (1): planned run times
// are multiplied by it (> 1 leaves slack for estimates that are too short).
// Cost of a pass: O(P x T x R x K) for K admitted waiting jobs planned on profiles of P steps, T
// types and requests of up to R GPUs, once plus once per arrival with a deadline; best-effort
// starts cost a placement query and O(P) each. The running jobs' ends are kept between passes
// (O(log running) at each start and end); a pass with jobs to plan builds the profiles from them
// in O(P) and copies them (O(P)) for each plan, a pass without (no job with a deadline waiting)
// only the free counts now: O(T), and O(S) per best-effort check after S starts in the pass.
// A waiting best-effort job asks the placement only if a type it allows has its GPUs free.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "policies/active_slot_map.h"
#include "policies/backfill.h"
#include "policies/registry.h"
#include "sim/engine/model_runtime.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Free GPUs of one type over time: key t holds the free count from t until the next key.
class StepProfile {
 public:
  StepProfile() = default;
  StepProfile(double now, int total) { free_[now] = total; }

  // Takes `gpus` over [start, end), start >= the first key.
  void Take(double start, double end, int gpus) {
    if (!(end > start) || gpus == 0) return;
    Split(start);
    if (std::isfinite(end)) Split(end);
    for (auto it = free_.find(start); it != free_.end() && it->first < end; ++it) {
      it->second -= gpus;
    }
  }
  // Appends a step: `free` GPUs from t on (t after every key).
  void Append(double t, int free) { free_.emplace_hint(free_.end(), t, free); }
  // The least free count over [start, end).
  int MinOver(double start, double end) const {
    auto it = std::prev(free_.upper_bound(start));
    int least = it->second;
    for (++it; it != free_.end() && it->first < end; ++it) least = std::min(least, it->second);
    return least;
  }
  // The earliest t >= not_before with at least `gpus` free throughout [t, t + seconds), or +inf.
  double EarliestSlot(int gpus, double seconds, double not_before) const {
    auto it = std::prev(free_.upper_bound(not_before));
    double candidate = not_before;
    for (; it != free_.end(); ++it) {
      const double begin = std::max(it->first, not_before);
      if (begin >= candidate + seconds) return candidate;
      if (it->second < gpus) {
        auto next = std::next(it);
        if (next == free_.end()) return kInfinity;
        candidate = next->first;
      }
    }
    return candidate;  // the last step holds from its key on
  }

 private:
  void Split(double t) {
    auto it = free_.upper_bound(t);
    CHECK(it != free_.begin(), "deadline-elastic: a profile is taken before its start");
    const int value = std::prev(it)->second;
    free_.emplace(t, value);
  }
  std::map<double, int> free_;
};

struct Choice {
  int type = -1;
  int gpus = 0;
  double start = kInfinity;
  double end = kInfinity;
  int batch = 0;  // model-aware runs: the batch the plan assumed; 0 = the job's own
  bool MeetsDeadline(double deadline) const { return end <= deadline; }
};

struct Options {
  bool reject_declined = true;
  bool fewest = true;  // false: whole requests only (shares=whole)
  double margin = 1.0;
};

class DeadlineElastic final : public Policy {
 public:
  DeadlineElastic(Options options, WalltimeRule rule) : options_(options), rule_(rule) {}

  bool Elastic() const override { return true; }
  bool PlacesMig() const override { return false; }  // docs/mig.md: it plans whole GPUs
  double RequestedWalltime(const Job& job) const override { return rule_.Requested(job); }

  void OnArrival(SchedulingContext& context, JobId id) override {
    if (std::isfinite(context.deadline(id))) {
      arrived_.emplace(context.deadline(id), id);
    } else {
      best_effort_.insert(id);
    }
  }
  void OnRequeue(SchedulingContext& context, JobId id) override {
    Forget(context, id);
    if (admitted_ids_.count(id)) {
      admitted_.emplace(context.deadline(id), id);
    } else {
      best_effort_.insert(id);
    }
  }
  void OnCompletion(SchedulingContext& context, JobId id) override {
    Forget(context, id);
    admitted_ids_.erase(id);
  }

  // Jobs without a wall time are planned with modelled user estimates unless walltime=exact, as
  // for easy (docs/backfilling.md#user-estimates).
  void BeforeRun(const Trace& trace, uint64_t seed) override { rule_.Prepare(trace, seed); }
  std::string PlanningEstimates() const override { return rule_.Describe(); }

  std::string IdleWarning(const Trace& trace, const ModelRuntime* /*models*/) const override {
    for (const JobConstraints& c : trace.constraints) {
      if (c.has_deadline()) return "";
    }
    return "deadline-elastic: no job of the trace has a deadline, so every job is best effort "
           "(greedy first fit in submission order); give deadlines with --deadlines or a deadline "
           "column (docs/deadlines.md)";
  }

  void Schedule(SchedulingContext& context) override {
    const double now = context.now();
    Prepare(context);
    Base(context, !arrived_.empty() || !admitted_.empty());
    if (!arrived_.empty()) {
      // The admitted jobs that meet their deadlines in the plan as it stands.
      std::set<JobId> met;
      std::vector<StepProfile> scratch = base_;
      Plan(context, admitted_, &scratch, &met, nullptr);
      while (!arrived_.empty()) {
        const auto [deadline, id] = *arrived_.begin();
        arrived_.erase(arrived_.begin());
        Admit(context, id, deadline, &met);
      }
    }
    std::vector<StepProfile> profile = base_;
    std::vector<std::pair<JobId, Choice>> plans;
    Plan(context, admitted_, &profile, nullptr, &plans);
    for (const auto& [id, choice] : plans) {
      if (choice.start > now || choice.type < 0) continue;
      PlacementRequest request = OnType(context.active(id).request, choice.type);
      request.gpus = choice.gpus;
      Allocation allocation;
      if (!context.placement().Find(context.resources(), request, &allocation)) continue;
      allocation.batch = choice.batch;
      if (Begin(context, id, std::move(allocation))) admitted_.erase({context.deadline(id), id});
    }
    // Best effort: whole requests where the plan leaves their GPUs free until they end.
    for (auto it = best_effort_.begin(); it != best_effort_.end();) {
      const JobId id = *it;
      Allocation allocation;
      if (TooFewFree(context, context.active(id).request) || !context.TryPlace(id, &allocation)) {
        ++it;
        continue;
      }
      if (IsCpuOnly(context.active(id).request)) {
        // A CPU-only job holds CPUs and memory on one node and no GPU: nothing of the GPU plan
        // to keep free (docs/resources.md#cpu-only-jobs).
        context.Start(id, std::move(allocation));
        it = best_effort_.erase(it);
        continue;
      }
      // The placement's choice first; where no batch of the job's model fits those GPUs (an
      // elastic policy never starts a job into an out-of-memory failure), the next type the
      // placement finds, so that such a job does not wait for ever.
      PlacementRequest request = context.active(id).request;
      bool started = false;
      while (true) {
        const int type = allocation.gpu_type;
        const int slot = SlotOf(type);
        const double seconds =
            PlannedSeconds(context, id, type, static_cast<int>(allocation.gpus.size()), 0);
        const int n = static_cast<int>(allocation.gpus.size());
        if (slot < 0 || profile[slot].MinOver(now, now + seconds) < n) break;
        if (Begin(context, id, std::move(allocation))) {
          profile[slot].Take(now, now + seconds, n);
          started = true;
          break;
        }
        request.type_mask &= ~(uint64_t{1} << type);
        allocation = Allocation();
        if (request.type_mask == 0 ||
            !context.placement().Find(context.resources(), request, &allocation)) {
          break;
        }
      }
      it = started ? best_effort_.erase(it) : std::next(it);
    }
  }

 private:
  // The GPU types, and the running jobs' ends as of now: every pass starts with it.
  void Prepare(const SchedulingContext& context) {
    const double now = context.now();
    if (types_.empty()) {
      types_ = context.cluster().gpu_types();
      ends_.resize(types_.size());
      taken_.assign(types_.size(), 0);
    }
    // A running job past its estimated end no longer holds GPUs in the plan (as easy assumes).
    for (size_t slot = 0; slot < types_.size(); ++slot) {
      std::map<double, int>& ends = ends_[slot];
      while (!ends.empty() && !(ends.begin()->first > now)) {
        taken_[slot] -= ends.begin()->second;
        ends.erase(ends.begin());
      }
    }
    counted_to_ = now;
    failed_.assign(types_.size(), 0);
    const Cluster& cluster = context.cluster();
    for (int g : context.failed_gpus()) {
      const int slot = SlotOf(cluster.node(cluster.NodeOfGpu(g)).gpu_type);
      if (slot >= 0) ++failed_[slot];
    }
  }

  // The profiles of the running jobs and failed GPUs, per GPU type of the cluster (after
  // Prepare): from now, the type's GPUs less the failed ones and the running jobs' (ends_), each
  // job's given back at its estimated end; built from the kept ends in O(ends). Without `steps`,
  // the count now alone: enough while nothing is reserved (no job to plan), as the free count
  // then never falls over time, so a best-effort job's least over its run is the count now.
  void Base(const SchedulingContext& context, bool steps) {
    const double now = context.now();
    const Cluster& cluster = context.cluster();
    base_.clear();
    for (size_t slot = 0; slot < types_.size(); ++slot) {
      int free = cluster.GpusOfType(types_[slot]) - failed_[slot] - taken_[slot];
      StepProfile profile(now, free);
      for (const auto& [end, gpus] : ends_[slot]) {
        if (!steps || !std::isfinite(end)) break;
        free += gpus;
        profile.Append(end, free);
      }
      base_.push_back(std::move(profile));
    }
  }

  // Counts the job's GPUs in the plan until `end`, its estimated end at its start: in ends_
  // unless it is already past it.
  void Hold(const SchedulingContext& context, JobId id, double end) {
    const Allocation& a = context.active(id).allocation;
    const int slot = SlotOf(a.gpu_type);
    if (slot < 0 || a.gpus.empty()) return;
    const int gpus = static_cast<int>(a.gpus.size());
    held_.Insert(context, id) = Held{slot, gpus, end};
    if (end > counted_to_) {
      ends_[slot][end] += gpus;
      taken_[slot] += gpus;
    }
  }
  void Forget(const SchedulingContext& context, JobId id) {
    const Held* kept = held_.Find(context, id);
    if (kept == nullptr) return;
    const Held& held = *kept;
    if (held.end > counted_to_) {
      auto at = ends_[held.slot].find(held.end);
      CHECK(at != ends_[held.slot].end() && at->second >= held.gpus,
            "deadline-elastic: a running job's end is missing from its plan");
      at->second -= held.gpus;
      if (at->second == 0) ends_[held.slot].erase(at);
      taken_[held.slot] -= held.gpus;
    }
    held_.Erase(context, id);
  }

  // Plans `jobs` in their order on *profile (reserving each choice). For each job that meets its
  // deadline, marks it in *met (if given); appends (job, choice) to *plans (if given).
  void Plan(const SchedulingContext& context, const std::set<std::pair<double, JobId>>& jobs,
            std::vector<StepProfile>* profile, std::set<JobId>* met,
            std::vector<std::pair<JobId, Choice>>* plans) {
    for (const auto& [deadline, id] : jobs) {
      const Choice choice = Choose(context, id, deadline, *profile);
      if (choice.type >= 0) {
        (*profile)[SlotOf(choice.type)].Take(choice.start, choice.end, choice.gpus);
      }
      if (met != nullptr && choice.type >= 0 && choice.MeetsDeadline(deadline)) met->insert(id);
      if (plans != nullptr) plans->emplace_back(id, choice);
    }
  }

  // Admission of a job with a deadline (step 1 of the rule). *met: the admitted jobs meeting
  // their deadlines in the current plan, updated when the job is admitted.
  void Admit(SchedulingContext& context, JobId id, double deadline, std::set<JobId>* met) {
    std::set<std::pair<double, JobId>> with = admitted_;
    with.emplace(deadline, id);
    std::set<JobId> met_after;
    std::vector<StepProfile> profile = base_;
    Plan(context, with, &profile, &met_after, nullptr);
    const bool fits = met_after.count(id) > 0 &&
                      std::includes(met_after.begin(), met_after.end(), met->begin(), met->end());
    if (fits) {
      admitted_.emplace(deadline, id);
      admitted_ids_.insert(id);
      *met = std::move(met_after);
      return;
    }
    if (options_.reject_declined) {
      char text[200];
      std::snprintf(text, sizeof text,
                    "declined at admission: its deadline (t=%.0f s) cannot be met beside the jobs "
                    "admitted before (deadline-elastic)",
                    deadline);
      context.Decline(id, text);
    } else {
      best_effort_.insert(id);
    }
  }

  // The fewest GPUs of any allowed type that end the job by its deadline on `profile` (step 2).
  Choice Choose(const SchedulingContext& context, JobId id, double deadline,
                const std::vector<StepProfile>& profile) const {
    const double now = context.now();
    const PlacementRequest& request = context.active(id).request;
    // A requested wall time is the kill limit: a start on fewer GPUs that would run past it is
    // never chosen (the job would be killed, not late).
    const double requested = rule_.Requested(context.job(id));
    const double limit = requested >= 0 ? requested - context.run(id).run_seconds : kInfinity;
    Choice best;
    Choice fastest;  // the earliest end on the whole request, if nothing meets the deadline
    for (size_t slot = 0; slot < types_.size(); ++slot) {
      const int t = types_[slot];
      if (!request.AllowsType(t) || context.TypeRate(id, t) <= 0) continue;
      const int step = Step(context, id, t);
      if (step <= 0) continue;
      const int first = options_.fewest ? step : request.gpus;
      for (int n = first; n <= request.gpus; n += step) {
        int batch = 0;
        const double seconds = PlannedSeconds(context, id, t, n, &batch);
        if (!std::isfinite(seconds)) continue;
        if (n < request.gpus && seconds > limit) continue;
        const double start = profile[slot].EarliestSlot(n, seconds, now);
        if (!std::isfinite(start)) continue;
        const Choice c{t, n, start, start + seconds, batch};
        if (n == request.gpus && c.end < fastest.end) fastest = c;
        if (c.MeetsDeadline(deadline)) {
          if (best.type < 0 || n < best.gpus || (n == best.gpus && c.end < best.end)) best = c;
          break;  // the fewest GPUs of this type that meet the deadline
        }
      }
    }
    return best.type >= 0 ? best : fastest;
  }

  // GPU counts the job may start on, a multiple of this: its model's TP x PP in model-aware runs,
  // else its tensor-parallel group (trace column tp; each group shares a node), else 1.
  int Step(const SchedulingContext& context, JobId id, int type) const {
    const ModelRuntime* models = context.models();
    if (models == nullptr || !models->ScalesWithGpus(id)) {
      return std::max(1, TensorGroup(context.active(id).request));
    }
    return models->min_gpus(id, type);
  }

  // Seconds the job runs on n GPUs of `type` (restore still due included), times the margin;
  // +inf if it cannot run there. In model-aware runs *batch is the batch assumed.
  double PlannedSeconds(const SchedulingContext& context, JobId id, int type, int n,
                        int* batch) const {
    const ActiveRun& live = context.active(id);
    const double rate = context.TypeRate(id, type);
    if (!(rate > 0)) return kInfinity;
    double factor = static_cast<double>(n) / live.request.gpus;
    const ModelRuntime* models = context.models();
    if (models != nullptr && models->ScalesWithGpus(id)) {
      const int b = models->BestBatch(id, type, n);
      if (b < 1) return kInfinity;
      factor = models->RateFactor(id, type, n, b);
      if (batch != nullptr) *batch = b;
    }
    if (!(factor > 0)) return kInfinity;
    return (live.overhead_left + live.work_left / (rate * factor)) * options_.margin;
  }

  // Starts the job; in model-aware runs a modelled job runs at the best batch that fits its GPUs
  // (an elastic start must fit in memory). False if no batch fits.
  bool Begin(SchedulingContext& context, JobId id, Allocation allocation) {
    const ModelRuntime* models = context.models();
    if (allocation.batch == 0 && models != nullptr && models->ScalesWithGpus(id)) {
      allocation.batch = models->BestBatch(id, allocation.gpu_type,
                                           static_cast<int>(allocation.gpus.size()));
      if (allocation.batch < 1) return false;
    }
    context.Start(id, std::move(allocation));
    double end = rule_.EstimatedEnd(context, id);
    if (rule_.Requested(context.job(id)) < 0) {
      // No kill limit. A modelled estimate was drawn for the whole request, and a start on n of
      // its R GPUs runs R/n times as long: the end the engine computes for this start is the
      // least it holds its GPUs.
      const ActiveRun& live = context.active(id);
      if (live.rate > 0) {
        end = std::max(end, context.now() + live.overhead_left + live.work_left / live.rate);
      }
    }
    Hold(context, id, end);
    return true;
  }

  // True if no GPU type the whole-GPU request allows has as many free GPUs as it asks, so that
  // every placement fails (an allocation of whole GPUs is of one type, and of free GPUs only):
  // the deep queues of best-effort jobs ask the placement only for the jobs that may fit. False
  // for shares, MIG instances and CPU-only jobs, which the placement answers.
  static bool TooFewFree(const SchedulingContext& context, const PlacementRequest& request) {
    if (request.gpus <= 0 || request.milli > 0 || IsMigRequest(request)) return false;
    return MostFreeOfOneType(context.resources(), request) < request.gpus;
  }

  int SlotOf(int type) const {
    for (size_t s = 0; s < types_.size(); ++s) {
      if (types_[s] == type) return static_cast<int>(s);
    }
    return -1;
  }

  Options options_;
  WalltimeRule rule_;
  std::vector<int> types_;  // GPU types of the cluster, in listed order
  std::vector<StepProfile> base_;
  // The running GPU jobs the plan counts (started by Begin): type slot, GPUs, estimated end at
  // the start. A running job's GPUs do not change: the policy neither resizes nor preempts, and
  // --defrag, which migrates, refuses it (it does not serve the queue's head). Per slot, the ends
  // after counted_to_ with the GPUs given back then (ends_), their sum (taken_), and the failed
  // GPUs (failed_, counted each pass).
  struct Held {
    int slot;
    int gpus;
    double end;
  };
  ActiveSlotMap<Held> held_;  // by the engine's slot of the job (policies/active_slot_map.h)
  std::vector<std::map<double, int>> ends_;
  std::vector<int> taken_;
  std::vector<int> failed_;
  double counted_to_ = -kInfinity;  // the last pass's time: ends_ holds the ends after it
  std::set<std::pair<double, JobId>> arrived_;   // jobs with a deadline, not yet decided
  std::set<std::pair<double, JobId>> admitted_;  // admitted and waiting, by deadline
  std::set<JobId> admitted_ids_;                 // admitted, waiting or running
  std::set<JobId> best_effort_;                  // waiting, by submission
};

Options ParseOptions(const Params& params) {
  Options options;
  const std::string declined = params.String("declined", "reject");
  if (declined != "reject" && declined != "best-effort") {
    throw InputError("parameter declined=" + declined + ": expected reject or best-effort");
  }
  options.reject_declined = declined == "reject";
  const std::string shares = params.String("shares", "fewest");
  if (shares != "fewest" && shares != "whole") {
    throw InputError("parameter shares=" + shares + ": expected fewest or whole");
  }
  options.fewest = shares == "fewest";
  options.margin = params.Double("margin", 1.0);
  if (!(options.margin >= 1) || !std::isfinite(options.margin)) {
    throw InputError("parameter margin: expected a factor >= 1");
  }
  return options;
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(
    deadline_elastic, "deadline-elastic",
    "admits a deadline job only if its deadline can be met, on the fewest GPUs that meet it "
    "(after ElasticFlow); others best effort",
    "declined (reject): reject = a declined job ends rejected | best-effort = it waits as a job "
    "without a deadline\n"
    "                           shares (fewest): fewest | whole = whole requests (a control)\n"
    "                           walltime (trace): running jobs' end estimates, as for easy\n"
    "                           margin (1): factor >= 1 on planned run times",
    [](const clustersim::Params& params) {
      return std::make_unique<clustersim::DeadlineElastic>(
          clustersim::ParseOptions(params), clustersim::WalltimeRule::FromParams(params));
    });
