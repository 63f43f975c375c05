// priority: priority classes with preemption, QoS and virtual-cluster quotas
// (docs/policies.md#priority). Waiting jobs are served in strict order of class (Job::priority,
// higher first), inside a class in a base order (`within`); a job of a higher class that cannot
// start preempts running jobs of lower classes, cheapest first, if that makes room for it.
//
// Order: (effective level descending, then `within`): fcfs = submission order; fair-share =
// accounts by Slurm's fair-share factor, descending (policies/fair_share_ledger.h), jobs of
// accounts with equal factors merged in submission order; las = Tiresias' attained-service queues
// (policies/las_queues.h) ascending, the queue fixed when the job enters the waiting queue,
// submission order inside. The base order never preempts: preemption happens between classes only.
//
// Without quotas, one pass: start jobs from the head of the order while they fit. When the head
// does not fit, look for victims among the running jobs of lower effective level (not of a
// `guaranteed` class, started before now, running for at least `min_slice` seconds since their
// last start, on a GPU type the head may use). Candidates are taken lowest level first, then by
// cost (GPUs x the job's preemption cost, docs/engine.md#preemption-cost: the engine saves a
// preempted job's work, so what a preemption wastes is that save + restore), then newest start
// first, on a scratch copy of the free GPUs until the run's placement finds room for the head;
// then every chosen victim whose GPUs the head does not need after all is given back (in reverse
// order). The victims are preempted, the head starts, and the pass goes on. If no set of victims
// makes room, the head blocks the rest (backfill=none) or gets an EASY reservation and later
// jobs that fit now start if they do not delay it (backfill=easy, policies/backfill.h). If
// `min_slice` kept some candidate out, a timer wakes the policy when the first of them reaches its
// slice.
//
// Quotas (`quota`): virtual cluster v is guaranteed q_v GPUs (a VC not listed: 0). A waiting job
// is within quota if its VC's held GPUs + its request <= q_v, else borrowing. Running jobs of a VC
// are within quota in order of start (oldest first) while they fit in what is left of q_v; the
// others are borrowing (marked in the engine, SetBorrowing). A pass has two phases:
//   1. guarantees: waiting jobs within quota, in order. One that does not fit preempts (a) the
//      borrowing jobs of other VCs, newest start first (reclaim, any class), then (b) running jobs
//      of its own VC of lower level (as above). If it still cannot start, its VC is blocked for
//      the rest of this phase (strict order inside a VC's quota). Repeated while it preempts.
//   2. borrowing: waiting jobs beyond quota, in order; each starts if it fits on idle GPUs, or by
//      preempting running jobs of lower level that are of its VC or borrowing themselves; else
//      it is skipped (borrowing never blocks).
//   backfill=easy cannot be combined with quotas (phase 2 already fills idle GPUs).
// Aging (`max_wait` > 0): a job waiting that long since it entered the queue (submission or its
// last preemption) is promoted to the next higher level among the jobs seen so far, then again
// after each further max_wait; a promotion lasts until the job ends.
// QoS by class (base level, as submitted): `guaranteed` classes are never preempted by a higher
// class (a guaranteed job borrowing beyond its VC's quota is still reclaimed: the quota is the
// stronger guarantee); `exclusive` classes hold whole nodes (Policy::WholeNodes,
// docs/engine.md#whole-nodes).
//
// Parameters:
//   within (fcfs): fcfs | fair-share | las; backfill (none): none | easy; walltime (trace): as for
//   easy; min_slice (0): seconds; max_wait (0 = off): seconds; guaranteed, exclusive (none):
//   levels or class names, comma-separated; quota (none): vc:GPUS,... or a JSON file
//   {"vc": GPUS, ...} (a value ending in .json); by, shares, half_life (within=fair-share);
//   thresholds (within=las); max_job_test (0 = no cap): the waiting jobs each quota walk, or
//   the backfilling scan with backfill=easy (its blocked head included), examines at most, as
//   Slurm's bf_max_job_test (the rest wait to the next pass).
// Cost of a pass: the starts and the walk of policies/backfill.h; per head that does not fit, one
// scan of the running jobs, a sort of the candidates and O(victims tried) placement queries (a
// count of the GPUs of lower levels refuses most hopeless heads in O(levels) first). With quotas
// the walk visits the waiting jobs until nothing is free and nothing can be preempted; heads of
// one (shape, level, VC) that failed are not tried again until something is preempted. A VC's
// borrowing marks are recomputed after a change to its running jobs: O(1) while it is within its
// quota with no job marked, else a walk of its running jobs, oldest first, that stops once
// nothing later can change (Relabel).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "policies/backfill.h"
#include "policies/fair_share_ledger.h"
#include "policies/las_queues.h"
#include "policies/registry.h"
#include "sim/engine/priority_class.h"
#include "sim/util/error.h"
#include "sim/util/json_file.h"

namespace clustersim {
namespace {

enum class Within { kFcfs, kFairShare, kLas };

struct Options {
  Within within = Within::kFcfs;
  bool backfill = false;
  double min_slice_seconds = 0;
  double max_wait_seconds = 0;  // 0 = no aging
  std::set<int> guaranteed;
  std::set<int> exclusive;
  bool quotas = false;
  std::map<std::string, int> quota;  // VC name -> guaranteed GPUs
  std::vector<double> thresholds;    // within=las
  int max_job_test = 0;  // jobs a quota walk or the EASY scan examines at most; 0 = all
};

// The waiting jobs in (level descending, group rank ascending, JobId) order, where a group is the
// within-class key (fcfs: one group; fair-share: an account; las: a queue) and its rank is given
// per pass by the policy; groups of equal rank are merged in submission order. Each group keeps
// its jobs in a QueueIndex (policies/backfill.h), so a walk jumps to the next job the filter
// admits instead of visiting every waiting job; a job that comes back out of submission order (a
// requeued job new to its group, a promotion) waits in the group's `late` list, walked job by job.
class WaitingOrder final : public CandidateOrder {
 public:
  WaitingOrder(std::function<double(int)> rank, std::function<void(JobId)> on_start)
      : rank_(std::move(rank)), on_start_(std::move(on_start)) {}

  void set_context(const SchedulingContext* context) { context_ = context; }
  // The jobs a walk from First() yields at most (0 = all): max_job_test. (Jobs the walk's filter
  // rules out are not yielded: the index passes them without examining them.)
  void set_limit(int limit) { limit_ = limit; }
  // `cls`: the job's request class (EasyBackfill::ClassOf), `planned`: its planned run time,
  // `gpus`: its request, for MinRequest.
  void Insert(JobId id, int level, int group, int cls, double planned, int gpus) {
    Group& g = levels_[level][group];
    ++sizes_[gpus];
    // Put back during a walk (a preempted job, with quotas: their walks admit every job), into a
    // group of the run being merged: the walk meets it only if it comes after the group's next
    // job (a walk over the group's jobs in order has passed that point otherwise); else it waits
    // hidden until the next walk.
    if (context_ != nullptr && id > cursor_ &&
        std::find(run_.begin(), run_.end(), &g) != run_.end()) {
      JobId next = g.index.FirstWaitingAfter(cursor_);
      if (auto late = LateAfter(g, cursor_);
          late != g.late.end() && (next == kNoJob || late->id < next)) {
        next = late->id;
      }
      if (next == kNoJob || id < next) {
        g.hidden.push_back(Hidden{id, cls, planned});
        return;
      }
    }
    Place(g, Hidden{id, cls, planned});
  }
  void Erase(JobId id, int level, int group, int gpus) {
    auto level_it = levels_.find(level);
    CHECK(level_it != levels_.end(), "priority: erased a job of an unknown level");
    auto group_it = level_it->second.find(group);
    CHECK(group_it != level_it->second.end(), "priority: erased a job that was not waiting");
    Group& g = group_it->second;
    const auto hidden =
        std::find_if(g.hidden.begin(), g.hidden.end(), [&](const Hidden& h) { return h.id == id; });
    if (hidden != g.hidden.end()) {
      g.hidden.erase(hidden);
    } else if (auto late = LateFrom(g, id); late != g.late.end() && late->id == id) {
      g.late.erase(late);
    } else {
      g.index.OnStart(id);  // CHECKs that it was waiting
    }
    auto size = sizes_.find(gpus);
    if (--size->second == 0) sizes_.erase(size);
  }
  bool empty() const { return sizes_.empty(); }
  // The fewest GPUs a waiting job requests. REQUIRES !empty().
  int MinRequest() const { return sizes_.begin()->first; }

  JobId First() override {
    // Jobs hidden from the last walk join their groups; empty groups and levels are dropped only
    // here, never during a walk.
    for (auto& [level, groups] : levels_) {
      for (auto& [group, g] : groups) {
        for (const Hidden& h : g.hidden) Place(g, h);
        g.hidden.clear();
      }
    }
    for (auto level_it = levels_.begin(); level_it != levels_.end();) {
      std::erase_if(level_it->second, [](const auto& group) { return group.second.empty(); });
      level_it = level_it->second.empty() ? levels_.erase(level_it) : std::next(level_it);
    }
    run_.clear();
    visited_ = 0;
    level_it_ = levels_.begin();
    OpenLevel();
    static const ClassFilter kAll;
    return Next(kAll);
  }

  JobId Next(const ClassFilter& filter) override {
    if (limit_ > 0 && visited_ == limit_) return kNoJob;
    while (true) {
      if (run_.empty()) {
        if (level_it_ == levels_.end()) return kNoJob;
        if (group_pos_ < groups_.size()) {
          // The next run of groups of equal rank, merged by JobId.
          const double rank = groups_[group_pos_].first;
          for (; group_pos_ < groups_.size() && groups_[group_pos_].first == rank; ++group_pos_) {
            Group& g = level_it_->second.at(groups_[group_pos_].second);
            g.index.Restart();
            run_.push_back(&g);
          }
          cursor_ = kNoJob;
          if (run_.size() > 1) {
            merge_.Refill(static_cast<int>(run_.size()), filter,
                          [&](int m) { return NextOf(*run_[m], filter); });
          }
          continue;
        }
        ++level_it_;
        OpenLevel();
        continue;
      }
      const JobId id = run_.size() == 1 ? NextOf(*run_[0], filter) : NextInRun(filter);
      if (id != kNoJob) {
        cursor_ = id;
        ++visited_;
        return id;
      }
      run_.clear();
    }
  }

  void OnStart(JobId id) override { on_start_(id); }

 private:
  struct Hidden {
    JobId id;
    int cls;
    double planned;
  };
  struct Group {
    QueueIndex index;
    JobId last_added = kNoJob;    // the highest id ever added to index
    // Waiting jobs not in index, by id, with their classes and planned times (a filter checks
    // them one by one).
    std::vector<Hidden> late;
    std::vector<Hidden> hidden;   // waiting jobs the current walk does not meet (Insert)
    bool empty() const { return index.empty() && late.empty() && hidden.empty(); }
  };

  // A waiting job joins the group's index (in submission order, or back at its place) or else
  // its late jobs.
  static void Place(Group& g, const Hidden& job) {
    if (g.last_added == kNoJob || job.id > g.last_added) {
      g.index.Add(job.id, job.cls, job.planned);
      g.last_added = job.id;
    } else if (g.index.Holds(job.id, job.cls)) {
      g.index.Readd(job.id, job.cls, job.planned);
    } else {
      g.late.insert(LateAfter(g, job.id), job);
    }
  }
  using Level = std::map<int, Group>;

  // The group's first late job after `after`; from `from` on.
  static std::vector<Hidden>::iterator LateAfter(Group& g, JobId after) {
    return std::upper_bound(g.late.begin(), g.late.end(), after,
                            [](JobId id, const Hidden& late) { return id < late.id; });
  }
  static std::vector<Hidden>::iterator LateFrom(Group& g, JobId from) {
    return std::lower_bound(g.late.begin(), g.late.end(), from,
                            [](const Hidden& late, JobId id) { return late.id < id; });
  }

  // The group's first waiting job after cursor_ that `filter` admits (its index, with its late
  // jobs checked one by one), or kNoJob.
  JobId NextOf(Group& g, const ClassFilter& filter) {
    JobId best = g.index.NextAfter(cursor_, filter);
    for (auto it = LateAfter(g, cursor_); it != g.late.end(); ++it) {
      if (best != kNoJob && it->id > best) break;
      if (filter.Admits(it->cls, it->planned)) {
        best = it->id;
        break;
      }
    }
    return best;
  }

  JobId NextInRun(const ClassFilter& filter) {
    return merge_.Next(static_cast<int>(run_.size()), filter,
                       [&](int m) { return NextOf(*run_[m], filter); });
  }

  void OpenLevel() {
    groups_.clear();
    group_pos_ = 0;
    if (level_it_ == levels_.end()) return;
    for (const auto& [group, jobs] : level_it_->second) {
      if (!jobs.empty()) groups_.emplace_back(rank_(group), group);
    }
    std::stable_sort(groups_.begin(), groups_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }

  std::function<double(int)> rank_;
  std::function<void(JobId)> on_start_;
  const SchedulingContext* context_ = nullptr;
  std::map<int, Level, std::greater<int>> levels_;
  std::map<int, int> sizes_;  // GPUs requested -> waiting jobs
  // The walk: the level, its groups by rank, the run of equal rank being merged.
  std::map<int, Level, std::greater<int>>::iterator level_it_;
  std::vector<std::pair<double, int>> groups_;  // (rank, group) of the current level
  size_t group_pos_ = 0;
  std::vector<Group*> run_;
  JobId cursor_ = kNoJob;  // the last job returned in this run
  LazyMerge merge_;        // of the run's groups
  int limit_ = 0;    // max_job_test during the backfilling scan; 0 = no cap
  int visited_ = 0;  // jobs yielded since First()
};

class PriorityPolicy final : public Policy {
 public:
  PriorityPolicy(Options options, WalltimeRule walltime,
                 std::optional<FairShareLedger::Options> fair)
      : options_(std::move(options)), backfill_(walltime) {
    if (fair) {
      fair_by_vc_ = fair->by_vc;
      ledger_.emplace(std::move(*fair));
    }
    AddOrder();  // bucket 0: every job without quotas
  }

  // Settings with nothing to act on in this trace, joined by "; " (docs/policies.md#priority).
  std::string IdleWarning(const Trace& trace, const ModelRuntime* /*models*/) const override {
    std::set<int> levels;
    std::set<Symbol> users, vcs;
    for (const Job& job : trace.jobs) {
      levels.insert(job.priority);
      users.insert(job.user);
      vcs.insert(job.vc);
    }
    std::vector<std::string> warnings;
    if (levels.size() <= 1 && !options_.quotas) {
      warnings.push_back(
          "priority: every job of the trace has the same level, so there is no class to order "
          "or preempt and the policy schedules like " +
          std::string(options_.backfill ? "easy" : "fcfs") +
          " (within aside); give classes with a priority column or --priority-map "
          "(traces/README.md#priority-classes), or quotas with --param quota=vc:GPUS,...");
    }
    if (options_.within == Within::kFairShare && (fair_by_vc_ ? vcs : users).size() <= 1) {
      warnings.push_back(std::string("priority within=fair-share: every job is charged to one ") +
                         (fair_by_vc_ ? "virtual cluster" : "user") +
                         ", so the order inside a class is submission order (within=fcfs)");
    }
    auto absent_levels = [&](const char* key, const std::set<int>& chosen) {
      std::string absent;
      for (int level : chosen) {
        if (!levels.count(level)) absent += (absent.empty() ? "" : ",") + std::to_string(level);
      }
      if (!absent.empty()) {
        warnings.push_back(std::string("priority ") + key + ": no job of the trace has level " +
                           absent);
      }
    };
    absent_levels("guaranteed", options_.guaranteed);
    absent_levels("exclusive", options_.exclusive);
    std::set<std::string> vc_names;
    for (const Symbol& vc : vcs) vc_names.insert(vc.str());
    std::string absent_vcs;
    for (const auto& [name, gpus] : options_.quota) {
      if (!vc_names.count(name)) absent_vcs += (absent_vcs.empty() ? "" : ", ") + name;
    }
    if (!absent_vcs.empty()) {
      warnings.push_back("priority quota: no job of the trace is in virtual cluster " + absent_vcs +
                         " (its quota guarantees nothing)");
    }
    std::string text;
    for (const std::string& w : warnings) text += (text.empty() ? "" : "; ") + w;
    return text;
  }

  bool OrdersByPriority() const override { return true; }

  // Guarantees the cluster cannot keep: one VC's quota beyond its GPUs, or quotas summing past
  // them (docs/policies.md#quotas).
  std::string ClusterProblem(const Cluster& cluster) const override {
    const int64_t gpus = cluster.total_gpus();
    int64_t sum = 0;
    for (const auto& [name, quota] : options_.quota) {
      if (quota > gpus) {
        return "parameter quota: virtual cluster \"" + name + "\" is guaranteed " +
               std::to_string(quota) + " GPUs, " + std::to_string(quota - gpus) +
               " more than the cluster's " + std::to_string(gpus);
      }
      sum += quota;
    }
    if (sum > gpus) {
      return "parameter quota: the quotas sum to " + std::to_string(sum) + " GPUs, " +
             std::to_string(sum - gpus) + " more than the cluster's " + std::to_string(gpus) +
             " (a guarantee the cluster cannot keep when every virtual cluster asks for it)";
    }
    return "";
  }

  void OnArrival(SchedulingContext& context, JobId id) override {
    Grow(id);
    const Job& job = context.job(id);
    level_[id] = job.priority;
    seen_levels_.insert(job.priority);
    vc_[id] = VcIndex(job);
    if (ledger_) account_[id] = ledger_->AccountOf(job);
    backfill_.ClassOf(context, id);
    Enqueue(context, id);
  }

  void OnCompletion(SchedulingContext& context, JobId id) override {
    OnStopped(context, id);
    backfill_.OnCompletion(context, id);
  }

  // Failures and out-of-memory retries put a running job back in the queue.
  void OnRequeue(SchedulingContext& context, JobId id) override {
    OnStopped(context, id);
    backfill_.OnCompletion(context, id);
    Enqueue(context, id);
  }

  void OnTimer(SchedulingContext& context, JobId id, int tag) override {
    if ((tag & 1) != kAgingTag) return;  // a min_slice wake-up: the pass that follows is the point
    if (static_cast<uint32_t>(tag >> 1) != (generation_[id] & kGenerationMask) ||
        context.run(id).state != JobState::kQueued) {
      return;
    }
    auto next = seen_levels_.upper_bound(level_[id]);
    if (next == seen_levels_.end()) return;  // already at the top
    const int gpus = context.active(id).request.gpus;
    OrderOf(id).Erase(id, level_[id], group_[id], gpus);
    level_[id] = *next;
    OrderOf(id).Insert(id, level_[id], group_[id], backfill_.ClassOf(context, id),
                       backfill_.walltime().Planned(context.job(id)), gpus);
    context.SetTimer(context.now() + options_.max_wait_seconds, id, Tag(id));
  }

  void Schedule(SchedulingContext& context) override {
    context_ = &context;
    for (auto& order : orders_) order->set_context(&context);
    if (ledger_) {
      ledger_->Advance(context.now());
      ledger_->ComputeFactors();
    }
    if (options_.quotas) {
      QuotaPass(context);
    } else {
      ClassPass(context);
    }
    for (int v = 0; v < static_cast<int>(vcs_.size()); ++v) Relabel(context, v);
    backfill_.EndPass(context);
    context_ = nullptr;
    for (auto& order : orders_) order->set_context(nullptr);
  }
  int WaitGroup(SchedulingContext& context, JobId id) override {
    return backfill_.WaitGroup(context, id);
  }

  double RequestedWalltime(const Job& job) const override {
    return backfill_.walltime().Requested(job);
  }
  // Estimates only for backfill=easy: without it nothing is planned ahead.
  void BeforeRun(const Trace& trace, uint64_t seed) override {
    if (options_.backfill) backfill_.BeforeRun(trace, seed);
  }
  std::string PlanningEstimates() const override { return backfill_.walltime().Describe(); }
  bool WholeNodes(const Job& job) const override { return options_.exclusive.count(job.priority); }

 private:
  static constexpr int kAgingTag = 0;
  static constexpr int kWakeTag = 1;
  static constexpr uint32_t kGenerationMask = (1u << 30) - 1;  // tags are non-negative ints

  struct Vc {
    int quota = 0;
    int held = 0;  // GPUs held by its running jobs
    // With quotas only: its running jobs by (last start, job), their GPU counts (held -> jobs) and
    // how many of them are marked borrowing.
    std::set<std::pair<double, JobId>> running;
    std::map<int, int> sizes;
    int marked = 0;
    bool dirty = false;    // labels not recomputed since a change
    bool blocked = false;  // this pass's guarantee phase
  };

  using Shape = RequestShape;
  struct Candidate {
    int tier;  // 0: reclaimed from another VC's borrowing; 1: of a lower level
    int level;
    double cost;
    double last_start;
    JobId id;
    auto Key() const {
      return std::make_tuple(tier, tier == 0 ? 0 : level, tier == 0 ? 0.0 : cost, -last_start, -id);
    }
  };

  int Tag(JobId id) const { return static_cast<int>((generation_[id] & kGenerationMask) << 1); }
  bool IsGuaranteed(const SchedulingContext& context, JobId id) const {
    return options_.guaranteed.count(context.job(id).priority) > 0;
  }

  void Grow(JobId id) {
    if (static_cast<size_t>(id) < level_.size()) return;
    const size_t size = std::max<size_t>(static_cast<size_t>(id) + 1, 2 * level_.size());
    level_.resize(size, 0);
    group_.resize(size, 0);
    vc_.resize(size, 0);
    account_.resize(size, 0);
    generation_.resize(size, 0);
    held_.resize(size, 0);
    start_.resize(size, 0.0);
    borrowing_.resize(size, 0);
  }

  int VcIndex(const Job& job) {
    auto [it, inserted] = vc_index_.try_emplace(job.vc.id(), static_cast<int>(vcs_.size()));
    if (inserted) {
      Vc vc;
      if (auto q = options_.quota.find(job.vc.str()); q != options_.quota.end()) {
        vc.quota = q->second;
      }
      vcs_.push_back(std::move(vc));
      if (options_.quotas && vcs_.size() > orders_.size()) AddOrder();
    }
    return it->second;
  }

  double Rank(int group) const {
    switch (options_.within) {
      case Within::kFcfs:
        return 0;
      case Within::kFairShare:
        return -ledger_->factor(group);
      case Within::kLas:
        return group;
    }
    return 0;
  }

  void AddOrder() {
    orders_.push_back(std::make_unique<WaitingOrder>(
        [this](int group) { return Rank(group); }, [this](JobId id) { OnStarted(*context_, id); }));
    if (context_) orders_.back()->set_context(context_);
  }
  // With quotas one order per VC (its index), else one for all.
  WaitingOrder& OrderOf(JobId id) { return *orders_[options_.quotas ? vc_[id] : 0]; }
  // The global order of waiting jobs: (level descending, rank ascending, submission order).
  std::tuple<int, double, JobId> Key(JobId id) const { return {-level_[id], Rank(group_[id]), id}; }

  void Enqueue(SchedulingContext& context, JobId id) {
    switch (options_.within) {
      case Within::kFcfs:
        group_[id] = 0;
        break;
      case Within::kFairShare:
        group_[id] = account_[id];
        break;
      case Within::kLas:
        group_[id] = LasQueueOf(options_.thresholds, context.run(id).gpu_seconds);
        break;
    }
    OrderOf(id).Insert(id, level_[id], group_[id], backfill_.ClassOf(context, id),
                       backfill_.walltime().Planned(context.job(id)),
                       context.active(id).request.gpus);
    if (options_.max_wait_seconds > 0) {
      context.SetTimer(context.now() + options_.max_wait_seconds, id, Tag(id));
    }
  }

  void OnStarted(const SchedulingContext& context, JobId id) {
    OrderOf(id).Erase(id, level_[id], group_[id], context.active(id).request.gpus);
    ++generation_[id];  // its aging timer no longer applies
    const ActiveRun& live = context.active(id);
    held_[id] = static_cast<int>(live.allocation.gpus.size());
    start_[id] = live.last_start;
    Vc& vc = vcs_[vc_[id]];
    vc.held += held_[id];
    if (options_.quotas) {
      vc.running.emplace(start_[id], id);
      ++vc.sizes[held_[id]];
    }
    vc.dirty = true;
    // (A CPU-only job holds no GPU: nothing to count.)
    if (!IsGuaranteed(context, id) && held_[id] > 0) preemptible_gpus_[level_[id]] += held_[id];
    if (ledger_) ledger_->Charge(account_[id], held_[id]);
  }

  void OnStopped(const SchedulingContext& context, JobId id) {
    if (ledger_) {
      ledger_->Advance(context.now());
      ledger_->Charge(account_[id], -held_[id]);
    }
    Vc& vc = vcs_[vc_[id]];
    vc.held -= held_[id];
    if (options_.quotas) {
      vc.running.erase({start_[id], id});
      auto size = vc.sizes.find(held_[id]);
      if (--size->second == 0) vc.sizes.erase(size);
      vc.marked -= borrowing_[id];
    }
    vc.dirty = true;
    borrowing_[id] = 0;  // the engine ends the mark when the job stops
    if (!IsGuaranteed(context, id) && held_[id] > 0) {
      auto it = preemptible_gpus_.find(level_[id]);
      it->second -= held_[id];
      if (it->second == 0) preemptible_gpus_.erase(it);
    }
    held_[id] = 0;
  }

  // Recomputes VC v's borrowing marks (oldest start first, within quota while it fits). The walk
  // stops once nothing after it can change: what is left of the quota is below the smallest job
  // of the VC (so every later job borrows) and every job still marked within has been visited
  // (so every later job is marked borrowing already). A VC within its quota with no mark is done
  // at once.
  void Relabel(SchedulingContext& context, int v) {
    Vc& vc = vcs_[v];
    if (!vc.dirty) return;
    vc.dirty = false;
    if (!options_.quotas || (vc.held <= vc.quota && vc.marked == 0)) return;
    const int smallest = vc.sizes.empty() ? 0 : vc.sizes.begin()->first;
    int left = vc.quota;
    int unvisited_within = static_cast<int>(vc.running.size()) - vc.marked;
    for (const auto& [start, id] : vc.running) {
      if (left < smallest && unvisited_within == 0) break;
      const bool was = borrowing_[id];
      unvisited_within -= !was;
      const bool borrowing = held_[id] > left;
      if (!borrowing) left -= held_[id];
      if (borrowing != was) {
        borrowing_[id] = borrowing;
        vc.marked += borrowing ? 1 : -1;
        context.SetBorrowing(id, borrowing);
      }
    }
  }
  bool IsBorrowing(SchedulingContext& context, JobId id) {
    Relabel(context, vc_[id]);
    return borrowing_[id];
  }
  bool IsWithinQuota(JobId id, const ActiveRun& live) const {
    const Vc& vc = vcs_[vc_[id]];
    return vc.held + live.request.gpus <= vc.quota;
  }

  void Preempt(SchedulingContext& context, JobId id) {
    context.Preempt(id);
    OnStopped(context, id);
    backfill_.OnCompletion(context, id);
    Enqueue(context, id);
  }

  void Wake(SchedulingContext& context, double time, JobId head) {
    if (!std::isfinite(time)) return;
    if (wake_at_ > context.now() && wake_at_ <= time) return;  // an earlier wake-up is pending
    wake_at_ = time;
    context.SetTimer(time, head, kWakeTag);
  }

  // Preempts the cheapest set of eligible victims that makes room for `head` (see the file
  // comment). Returns true if it did, so the head fits now.
  bool MakeRoom(SchedulingContext& context, JobId head) {
    const ActiveRun& head_live = context.active(head);
    const PlacementRequest& request = head_live.request;
    const int level = level_[head];
    const int v = vc_[head];
    const double now = context.now();
    const bool within = options_.quotas && IsWithinQuota(head, head_live);
    // Necessary: free GPUs of allowed types plus those of every preemptible job of lower level
    // (and, for reclaim, of borrowing jobs) reach the request.
    if (!within) {
      int available = 0;
      for (int type : context.cluster().gpu_types()) {
        if (request.AllowsType(type)) available += context.resources().free_of_type(type);
      }
      for (auto it = preemptible_gpus_.begin();
           it != preemptible_gpus_.end() && it->first < level && available < request.gpus; ++it) {
        available += it->second;
      }
      if (available < request.gpus) return false;
    }
    candidates_.clear();
    double wake = std::numeric_limits<double>::infinity();
    for (JobId r : context.running()) {
      const bool lower = level_[r] < level && !IsGuaranteed(context, r);
      int tier = -1;
      if (!options_.quotas) {
        if (lower) tier = 1;
      } else {
        const bool borrowing = IsBorrowing(context, r);
        if (within && vc_[r] != v && borrowing) {
          tier = 0;
        } else if (lower && (vc_[r] == v || borrowing)) {
          tier = 1;
        }
      }
      // The job's engine state is read only for a job the head may take from: with thousands
      // running and none of a lower level, the walk reads the policy's own vectors only.
      if (tier < 0) continue;
      const ActiveRun& live = context.active(r);
      if (!request.AllowsType(live.allocation.gpu_type) || !(live.last_start < now)) continue;
      // The slice ends at last_start + min_slice, the very time a wake-up is set for: compared
      // as that sum (now - last_start can round below min_slice at that time, and the policy
      // would wake at the same moment again and again).
      const double slice_end = live.last_start + options_.min_slice_seconds;
      if (now < slice_end) {
        wake = std::min(wake, slice_end);
        continue;
      }
      const double gpus = static_cast<double>(live.allocation.gpus.size());
      candidates_.push_back(
          Candidate{tier, level_[r], gpus * context.preemption_cost(r), live.last_start, r});
    }
    if (candidates_.empty()) {
      Wake(context, wake, head);
      return false;
    }
    std::sort(candidates_.begin(), candidates_.end(),
              [](const Candidate& a, const Candidate& b) { return a.Key() < b.Key(); });
    if (scratch_) {
      *scratch_ = context.resources();
    } else {
      scratch_.emplace(context.resources());
    }
    Allocation allocation;
    size_t taken = 0;
    bool fits = false;
    // Victims give back their GPUs and their CPUs and memory (docs/resources.md), as they will
    // when preempted.
    while (taken < candidates_.size() && !fits) {
      const ActiveRun& victim = context.active(candidates_[taken++].id);
      GiveBackAllocation(*scratch_, victim.request, victim.allocation);
      fits = context.placement().Find(*scratch_, request, &allocation);
    }
    if (!fits) {
      Wake(context, wake, head);
      return false;
    }
    // Give back, costliest first, every victim whose GPUs the head does not need.
    victims_.assign(taken, kNoJob);
    for (size_t i = taken; i-- > 0;) {
      const ActiveRun& victim = context.active(candidates_[i].id);
      TakeAllocation(*scratch_, victim.request, victim.allocation);
      if (context.placement().Find(*scratch_, request, &allocation)) continue;
      GiveBackAllocation(*scratch_, victim.request, victim.allocation);
      victims_[i] = candidates_[i].id;
    }
    for (JobId r : victims_) {
      if (r != kNoJob) Preempt(context, r);
    }
    return true;
  }

  // Without quotas: strict order with preemption between classes, then EASY if asked.
  void ClassPass(SchedulingContext& context) {
    while (true) {
      backfill_.Pass(context, *orders_[0], false);
      const JobId head = orders_[0]->First();
      if (head == kNoJob) return;
      if (!MakeRoom(context, head)) break;
    }
    if (options_.backfill) {
      orders_[0]->set_limit(options_.max_job_test);
      backfill_.Pass(context, *orders_[0], true);
      orders_[0]->set_limit(0);
    }
  }

  void StartNow(SchedulingContext& context, JobId id, Allocation allocation) {
    context.Start(id, std::move(allocation));
    OnStarted(context, id);
  }

  // With quotas: the guarantee phase (repeated while it preempts), then the borrowing phase.
  void QuotaPass(SchedulingContext& context) {
    // Jobs the walks do not examine wait behind their VC's blocked head, unless a walk stops
    // because nothing is free (SetUnexamined then says capacity).
    if (!orders_.empty()) backfill_.SetUnexamined(WaitReason::kQueueHead);
    for (Vc& vc : vcs_) vc.blocked = false;
    while (QuotaWalk(context, /*guarantees=*/true)) {
    }
    QuotaWalk(context, /*guarantees=*/false);
  }

  // True if VC v may still start a job in the guarantee phase: not blocked, and its smallest
  // waiting request fits in what is left of its quota.
  bool HasRoom(int v) const {
    const Vc& vc = vcs_[v];
    return !vc.blocked && !orders_[v]->empty() && vc.held + orders_[v]->MinRequest() <= vc.quota;
  }

  // One walk over the waiting jobs in the global order, merged from the VCs' orders (in the
  // guarantee phase only of VCs with room, each dropped once it has none); returns true if it
  // preempted something.
  bool QuotaWalk(SchedulingContext& context, bool guarantees) {
    using Head = std::pair<std::tuple<int, double, JobId>, int>;  // (key, VC)
    // Shapes that did not fit on the live state and (shape, level, VC) whose preemption failed
    // are those stamped with the walk's stamp (a new stamp empties both).
    ++walk_stamp_;
    std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads;
    auto advance = [&](int v, JobId next) {
      if (next != kNoJob) heads.emplace(Key(next), v);
    };
    for (int v = 0; v < static_cast<int>(vcs_.size()); ++v) {
      if (guarantees ? HasRoom(v) : !orders_[v]->empty()) advance(v, orders_[v]->First());
    }
    bool preempted = false;
    int examined = 0;
    while (!heads.empty()) {
      // The cap: jobs past it are not examined in this walk (the reason of unexamined jobs).
      if (options_.max_job_test > 0 && examined == options_.max_job_test) break;
      ++examined;
      const JobId id = std::get<2>(heads.top().first);
      const int v = heads.top().second;
      heads.pop();
      const ActiveRun& live = context.active(id);
      const bool within = IsWithinQuota(id, live);
      if (guarantees ? within : !within) {
        const int shape = ShapeOf(id, live.request);
        Allocation allocation;
        if (no_fit_stamp_[shape] != walk_stamp_ && context.TryPlace(id, &allocation)) {
          StartNow(context, id, std::move(allocation));
        } else {
          no_fit_stamp_[shape] = walk_stamp_;
          if (NoRoomStamp(shape, level_[id], v) != walk_stamp_ && MakeRoom(context, id)) {
            preempted = true;
            ++walk_stamp_;
            CHECK(context.TryPlace(id, &allocation), "priority: no room after preemption");
            StartNow(context, id, std::move(allocation));
          } else {
            NoRoomStamp(shape, level_[id], v) = walk_stamp_;
            if (guarantees) {
              vcs_[v].blocked = true;
              backfill_.waits().StateNoFit(context, id, WaitReason::kCapacity);
            } else {
              // Beyond its VC's quota it may only borrow, and nothing it may take is free.
              backfill_.waits().State(context, id, WaitReason::kQuota);
            }
          }
        }
      }
      if (!guarantees || HasRoom(v)) advance(v, orders_[v]->Next(ClassFilter()));
      // Nothing free and nobody left that a later (lower or equal level) job could preempt (under
      // host limits a CPU-only job needs no free GPU).
      if (!heads.empty() && !context.resources().AnyGpuRoom() &&
          !context.resources().host_limited() &&
          (preemptible_gpus_.empty() ||
           level_[std::get<2>(heads.top().first)] <= preemptible_gpus_.begin()->first) &&
          !(guarantees && AnyBorrowing(context))) {
        backfill_.SetUnexamined(WaitReason::kCapacity);
        break;
      }
    }
    return preempted;
  }

  // The shape of a job's request (sim/engine/placement.h: what decides whether it fits) as a
  // small number, the same for equal shapes.
  int ShapeOf(JobId id, const PlacementRequest& request) {
    const Shape shape = clustersim::ShapeOf(request);
    if (id >= static_cast<JobId>(shape_of_.size())) shape_of_.resize(id + 1, -1);
    int& known = shape_of_[id];
    if (known >= 0 && shapes_[known] == shape) return known;
    const auto [it, added] = shape_ids_.emplace(shape, static_cast<int>(shapes_.size()));
    if (added) {
      shapes_.push_back(shape);
      no_fit_stamp_.push_back(0);
      no_room_stamp_.emplace_back();
    }
    return known = it->second;
  }

  // The stamp of (shape, level, VC) in QuotaWalk's memory.
  uint64_t& NoRoomStamp(int shape, int level, int v) {
    std::vector<std::vector<std::pair<int, uint64_t>>>& by_vc = no_room_stamp_[shape];
    if (v >= static_cast<int>(by_vc.size())) by_vc.resize(v + 1);
    for (auto& [known, stamp] : by_vc[v]) {
      if (known == level) return stamp;
    }
    return by_vc[v].emplace_back(level, 0).second;
  }

  bool AnyBorrowing(SchedulingContext& context) {
    for (int v = 0; v < static_cast<int>(vcs_.size()); ++v) {
      Relabel(context, v);
      if (vcs_[v].held > vcs_[v].quota) return true;
    }
    return false;
  }

  const Options options_;
  EasyBackfill backfill_;
  std::vector<std::unique_ptr<WaitingOrder>> orders_;  // by bucket (see OrderOf)
  std::optional<FairShareLedger> ledger_;
  bool fair_by_vc_ = false;               // within=fair-share: accounts are VCs, else users
  SchedulingContext* context_ = nullptr;  // during a pass
  // Per job.
  std::vector<int> level_;  // effective level (the trace's, raised by aging)
  std::vector<int> group_;  // within-class group while waiting
  std::vector<int> vc_;
  std::vector<int> account_;
  std::vector<uint32_t> generation_;  // bumped at every start: aging timers of earlier waits
  std::vector<int> held_;             // GPUs held while running
  std::vector<double> start_;         // last start while running
  std::vector<uint8_t> borrowing_;    // the mark last given to the engine
  std::set<int> seen_levels_;
  std::map<int, int> preemptible_gpus_;  // level -> GPUs held by running non-guaranteed jobs
  std::unordered_map<uint32_t, int> vc_index_;
  std::vector<Vc> vcs_;
  double wake_at_ = -1;
  std::vector<Candidate> candidates_;
  std::vector<JobId> victims_;
  // QuotaWalk's memory (see there): shapes by number, the number last found per job, and the
  // stamps of the walk that found a shape not fitting or a (shape, level, VC) without room.
  std::map<Shape, int> shape_ids_;
  std::vector<Shape> shapes_;
  std::vector<int> shape_of_;
  std::vector<uint64_t> no_fit_stamp_;
  std::vector<std::vector<std::vector<std::pair<int, uint64_t>>>> no_room_stamp_;  // [shape][VC]
  uint64_t walk_stamp_ = 0;
  std::optional<Resources> scratch_;
};

Options ParseOptions(const Params& params) {
  Options options;
  const std::string within = params.String("within", "fcfs");
  if (within == "fcfs") {
    options.within = Within::kFcfs;
  } else if (within == "fair-share") {
    options.within = Within::kFairShare;
  } else if (within == "las") {
    options.within = Within::kLas;
    options.thresholds = ParseThresholds(params.String("thresholds", kDefaultLasThresholds));
  } else {
    throw InputError("parameter within=" + within + ": expected fcfs, fair-share or las");
  }
  const std::string backfill = params.String("backfill", "none");
  if (backfill != "none" && backfill != "easy") {
    throw InputError("parameter backfill=" + backfill + ": expected none or easy");
  }
  options.backfill = backfill == "easy";
  auto seconds = [&params](const char* key) {
    const double value = params.Double(key, 0);
    if (!(value >= 0) || !std::isfinite(value)) {
      throw InputError(std::string("parameter ") + key + "=" + params.String(key, "") +
                       ": expected a number of seconds >= 0");
    }
    return value;
  };
  options.min_slice_seconds = seconds("min_slice");
  options.max_wait_seconds = seconds("max_wait");
  options.guaranteed = ParsePriorityLevels(params.String("guaranteed", ""), "guaranteed");
  options.exclusive = ParsePriorityLevels(params.String("exclusive", ""), "exclusive");
  options.max_job_test = params.Cap("max_job_test", "jobs");
  const std::string quota = params.String("quota", "");
  if (!quota.empty()) {
    options.quotas = true;
    if (options.backfill) {
      throw InputError(
          "parameters backfill=easy and quota cannot be combined: with quotas, jobs beyond "
          "their VC's quota already fill idle GPUs in class order (docs/policies.md#quotas)");
    }
    auto add = [&options](const std::string& vc, double gpus, const std::string& where) {
      if (!(gpus >= 0) || gpus != std::floor(gpus) || gpus > 1e9) {
        throw InputError(where + ": expected a whole number of GPUs >= 0 for VC \"" + vc + "\"");
      }
      if (!options.quota.emplace(vc, static_cast<int>(gpus)).second) {
        throw InputError(where + ": VC \"" + vc + "\" given twice");
      }
    };
    if (quota.size() > 5 && quota.ends_with(".json")) {
      const nlohmann::json doc = ParseJsonFile(quota);
      if (!doc.is_object()) throw InputError(quota + ": expected an object {\"vc\": GPUs, ...}");
      for (const auto& [vc, value] : doc.items()) {
        add(vc, RequireNumber(value, quota, vc), quota);
      }
    } else {
      size_t begin = 0;
      while (begin <= quota.size()) {
        size_t end = quota.find(',', begin);
        if (end == std::string::npos) end = quota.size();
        const std::string item = quota.substr(begin, end - begin);
        const size_t colon = item.rfind(':');
        double gpus = -1;
        if (colon != std::string::npos) {
          const std::string number = item.substr(colon + 1);
          char* parsed_end = nullptr;
          gpus = std::strtod(number.c_str(), &parsed_end);
          if (number.empty() || *parsed_end != '\0') gpus = -1;
        }
        if (colon == std::string::npos) {
          throw InputError("parameter quota: \"" + item + "\": expected vc:GPUS");
        }
        add(item.substr(0, colon), gpus, "parameter quota");
        begin = end + 1;
      }
    }
  }
  return options;
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(
    priority, "priority",
    "priority classes (higher level first) with preemption of lower classes, min slice, aging, "
    "QoS and VC quotas",
    "within (fcfs): fcfs | fair-share | las, the order inside a class\n"
    "                           backfill (none): none = strict blocking | easy = EASY "
    "backfilling (not with quota)\n"
    "                           walltime (trace): trace | exact | a factor of the duration, as "
    "for easy\n"
    "                           min_slice (0): seconds a job runs after a start before it may be "
    "preempted\n"
    "                           max_wait (0 = off): seconds of waiting after which a job is "
    "promoted one class\n"
    "                           guaranteed (none): classes never preempted (levels or names)\n"
    "                           exclusive (none): classes that hold whole nodes\n"
    "                           quota (none): vc:GPUS,... or FILE.json; beyond it jobs borrow "
    "idle GPUs and are reclaimed\n"
    "                           by, shares, half_life: the fair-share account (within=fair-share)\n"
    "                           thresholds (3250,7200): LAS queues in GPU-seconds (within=las)\n"
    "                           max_job_test (0 = no cap): the waiting jobs each quota walk or "
    "backfilling scan examines at most",
    [](const clustersim::Params& params) {
      clustersim::Options options = clustersim::ParseOptions(params);
      std::optional<clustersim::FairShareLedger::Options> fair;
      if (options.within == clustersim::Within::kFairShare) {
        fair = clustersim::FairShareLedger::ParseOptions(params);
      }
      return std::make_unique<clustersim::PriorityPolicy>(
          std::move(options), clustersim::WalltimeRule::FromParams(params), std::move(fair));
    });
