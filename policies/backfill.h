// What the backfilling policies share (docs/backfilling.md): the requested wall time of a job
// (parameter `walltime`) and EASY backfilling over an order the policy supplies (`easy` uses
// submission order, `fair-share` with backfill=easy its fair-share order).
//
// WalltimeRule: `walltime=trace` (default: the trace's walltime column, which is also the kill
// limit; a job without one is planned with a modelled user estimate, policies/user_estimates.h,
// and never killed), `exact` (every job planned with its true duration, none killed) or a number
// f > 0 (requested wall time = f x duration; a job running longer is killed). The modelled
// estimates are planning figures only: they are never below the job's trace duration, and a
// trace that records no wall time ran its jobs to their end (docs/backfilling.md#user-estimates).
//
// EasyBackfill owns the availability profile: the running jobs it started ordered by their
// estimated end (start + requested wall time, or the true end when there is none; the engine
// kills a job at its wall time, so no job runs past its estimate, but many end before it), plus
// `horizon`, a scratch copy of the free GPUs as they will be at one time tau (live state with the
// GPUs of every running job ending by tau released). The horizon is kept in step with every start
// and completion and moved forward or back one end time at a time, so finding the head's
// reservation costs the distance tau moves, not a walk over every running job.
//
// One pass (Pass): start jobs from the head of the order while they fit. When the head does not
// fit and some later job fits now, give the head its reservation: the earliest t_s at which the
// run's placement finds room for it on the horizon, and the GPUs it would take there (the
// reserved set). Then scan the rest of the order once: a job that fits now starts if it ends, by
// its requested wall time, no later than t_s; a job that outlasts t_s starts if the head keeps a
// placement at t_s with it running: at once if its own placement avoids the reserved set (under
// host limits: leaves the head's CPUs and memory free on the reserved nodes at t_s); else if the
// head can be re-placed at t_s around it (the reservation moves); else on the live state with
// the reserved nodes marked busy (their GPUs, and under host limits their CPUs and memory), if it
// fits there. CPU-only jobs (docs/resources.md#cpu-only-jobs) are planned like any other: they
// hold their node's CPUs and memory on the horizon, and a CPU-only head reserves a node. With `pool` this is exactly the count rule of
// docs/policies.md#easy (it uses at most the extra GPUs left); with node-aware placements it keeps
// the head's GPUs.
//
// The reservation is thus a placement on concrete GPUs at a future time, chosen by the run's
// placement on the GPUs free then (the horizon is EASY's availability profile: only running jobs
// hold GPUs in it). The first time a job is the blocked head it gets its reservation at once, and
// t_s is its promise (SchedulingContext::Promise; the `reserved_start` column). The head's t_s
// never grows while every job runs at most its plan: jobs started since end by t_s or keep off
// its GPUs at t_s (or it was moved to other GPUs at t_s), so it still fits at t_s, and its next
// reservation is the earliest time it fits. In submission order (easy) the head changes only by
// starting, so it starts by its promise; a fair-share order may put another job first, which
// makes fair-share's promises estimates.
//
// Cost of a pass: O(distance the horizon moves + (starts + 1) x classes examined x log queue).
// A request class is (GPUs, allowed types, host demands, placement-constraint class): once a job
// of a class fails to fit, or fails the
// reservation test, every later job of that class would too until the next start changes the
// state (placements are deterministic), so the scan skips the class until then. The queue index
// finds the next job through a min-tree over the classes (QueueIndex), so the classes the scan
// skips cost nothing per job examined; the horizon's move back is found by counting the free
// GPUs end group by end group, and only the groups it ends up behind are taken back (Reserve).
#ifndef CLUSTERSIM_POLICIES_BACKFILL_H_
#define CLUSTERSIM_POLICIES_BACKFILL_H_

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "policies/active_slot_map.h"
#include "policies/wait_statements.h"
#include "sim/engine/policy.h"
#include "sim/util/params.h"

namespace clustersim {

class WalltimeRule {
 public:
  // Reads parameter `walltime` (default `trace`). Throws InputError on anything else than
  // trace, exact or a positive number.
  static WalltimeRule FromParams(const Params& params);
  // The `parameters` text for `clustersim list policies --verbose`.
  static constexpr const char* kHelp =
      "walltime (trace): the requested wall time: trace = the trace's walltime column (a job "
      "without one is planned with a modelled user estimate, seeded, and not killed; "
      "docs/backfilling.md#user-estimates); exact = every job's true duration; a number f > 0 = "
      "f x duration. A job running past a requested wall time is killed (timeout)";

  // Before the run (Policy::BeforeRun): with `trace`, draws the modelled estimates of the jobs
  // that have no wall time, from the run's seed. Planned and EstimatedEnd need it first.
  void Prepare(const Trace& trace, uint64_t seed);
  // What the run planned with, for the run's printout and runs.planning_estimates (after
  // Prepare), e.g. "modelled user estimates for 11160 jobs without a wall time (...)".
  std::string Describe() const;

  // What Policy::RequestedWalltime returns: the kill limit in seconds, or -1 for none.
  double Requested(const Job& job) const;
  // The run time, in seconds, planned for a job that has not started: Requested if >= 0, else
  // its modelled estimate if it has one, else the trace duration (the true duration with the
  // `trace` runtime model). REQUIRES: `job` is an element of the trace given to Prepare (the
  // context's jobs are).
  double Planned(const Job& job) const;
  // The estimated end of a job just started at context.now(): start + its planned run time
  // minus what it has run (the engine kills it at a requested wall time, so it never runs
  // longer; a modelled estimate is never below its duration), or its true end when it has
  // neither (computed as Engine::ScheduleFinish does).
  double EstimatedEnd(const SchedulingContext& context, JobId id) const;

 private:
  enum class Source { kTrace, kExact, kFactor };
  // The modelled estimate of a job without a wall time, or -1.
  double Modelled(const Job& job) const;

  Source source_ = Source::kTrace;
  double factor_ = 1;
  // Modelled estimates by JobId (-1: the job has a wall time), drawn by Prepare; shared by the
  // copies of the rule a policy holds.
  std::shared_ptr<const std::vector<double>> estimates_;
  const Job* first_job_ = nullptr;  // trace.jobs.data() of Prepare's trace
  std::string description_;
};

// Which request classes a backfilling scan still considers: all their jobs (kAny), only those
// planned to run at most `short_limit` seconds (kShortOnly), or none (kNone).
class ClassFilter {
 public:
  enum Mode : uint8_t { kAny, kShortOnly, kNone };
  Mode mode(int cls) const { return cls < static_cast<int>(modes_.size()) ? modes_[cls] : kAny; }
  double short_limit() const { return short_limit_; }
  void Set(int cls, Mode mode) {
    if (cls >= static_cast<int>(modes_.size())) modes_.resize(cls + 1, kAny);
    modes_[cls] = mode;
  }
  void SetShortLimit(double seconds) { short_limit_ = seconds; }
  void Reset() {
    modes_.assign(modes_.size(), kAny);
    ++widened_;
  }
  // Changes whenever the filter may admit a job it refused before (Reset); Set and
  // SetShortLimit only narrow it within a pass.
  uint64_t widened() const { return widened_; }
  // True if a job of class `cls` planned to run `planned` seconds may be returned.
  bool Admits(int cls, double planned) const {
    const Mode m = mode(cls);
    return m == kAny || (m == kShortOnly && planned <= short_limit_);
  }

 private:
  std::vector<Mode> modes_;
  double short_limit_ = std::numeric_limits<double>::infinity();
  uint64_t widened_ = 0;
};

// The order a backfilling pass walks: a policy's view of its waiting jobs.
class CandidateOrder {
 public:
  virtual ~CandidateOrder() = default;
  // Restarts the walk and returns the first waiting job, or kNoJob.
  virtual JobId First() = 0;
  // Returns the next waiting job after the last one returned that `filter` admits (a superset
  // is fine: the caller checks again), or kNoJob. Jobs already passed are not returned again.
  virtual JobId Next(const ClassFilter& filter) = 0;
  // Called after a job returned by First/Next was started.
  virtual void OnStart(JobId id) = 0;
};

// The waiting jobs in submission order (JobId order), indexed by request class so a scan jumps
// to the next job a filter admits: per class, the job ids and a min-tree of planned run times;
// over the classes, a min-tree of a lower bound of each class's next admitted job, made exact
// only for the classes that reach its top (a lazy tournament: a class the filter rules out, or
// whose jobs all come later, costs nothing until the walk gets there).
// Add: O(log n) amortized; Next: O(log classes) per class that reaches the top, plus
// O(log n) per class whose answer changed; First and a widening of the filter (a start):
// O(log classes) per class whose bound they move back (checked since). A walk uses one filter, which narrows (Set, SetShortLimit) between Reset calls
// and otherwise changes widened() (ClassFilter's contract), or a different short limit.
class QueueIndex final : public CandidateOrder {
 public:
  // REQUIRES: ids added in increasing order.
  void Add(JobId id, int cls, double planned_seconds);
  // A job added before and started since is waiting again (a failure put it back).
  void Readd(JobId id, int cls, double planned_seconds);
  JobId First() override;
  JobId Next(const ClassFilter& filter) override;
  void OnStart(JobId id) override;
  // For an order that merges several indexes: starts a walk (as First, returning nothing), and
  // returns the first waiting job after `after` that `filter` admits without passing it.
  // REQUIRES: within a walk, `after` never decreases.
  void Restart();
  JobId NextAfter(JobId after, const ClassFilter& filter);
  bool empty() const { return class_of_.empty(); }
  // True if `id` was added to class `cls` (waiting, or started since: then Readd puts it back).
  bool Holds(JobId id, int cls) const;
  // The first waiting job after `after`, of any class and planned time, or kNoJob; the walk is
  // not changed. O(classes x log n).
  JobId FirstWaitingAfter(JobId after) const;

 private:
  // Min segment tree over a growing array of doubles; removed entries hold +infinity.
  class MinTree {
   public:
    void PushBack(double value);
    void Set(int position, double value);
    // The lowest position >= from whose value is <= limit, or -1.
    int FirstAtMost(double limit, int from) const;
    double At(int position) const { return tree_[leaves_ + position]; }
    int size() const { return size_; }

   private:
    int Descend(int node, int lo, int hi, int from, double limit) const;
    int leaves_ = 0;
    int size_ = 0;
    std::vector<double> tree_;  // 1-based heap layout over leaves_ leaves
  };
  struct Stream {
    std::vector<JobId> ids;  // ascending
    MinTree planned;
    int waiting = 0;
    int head = 0;  // the lowest position still waiting (planned not +infinity), or ids.size()
  };
  // Min tree over the classes of JobId bounds (kNoBound: none); ties go to the lower class.
  class BoundTree {
   public:
    static constexpr JobId kNoBound = std::numeric_limits<JobId>::max();
    // Grows to `classes` leaves, the new ones kNoBound.
    void Grow(int classes);
    void Set(int cls, JobId bound);
    JobId Get(int cls) const { return tree_[leaves_ + cls]; }
    JobId Min() const { return tree_.empty() ? kNoBound : tree_[1]; }
    int ArgMin() const;  // REQUIRES: Min() != kNoBound

   private:
    int leaves_ = 0;
    std::vector<JobId> tree_;  // 1-based heap layout
  };
  struct Cached {
    JobId next = kNoJob;
    int position = -1;  // of next in its stream, when next != kNoJob
    ClassFilter::Mode mode = ClassFilter::kAny;
    double limit = 0;
    uint64_t walk = 0;
  };
  JobId FindIn(int cls, JobId after, double limit) const;
  // FindIn's answer as a position in the class's stream, or -1.
  int FindPositionIn(int cls, JobId after, double limit) const;
  JobId Scan(const ClassFilter& filter);  // the answer of Next, cursor unchanged
  // A lower bound of every answer class `cls` may give in this walk (its first waiting job).
  JobId LowerBound(int cls) const;
  // Lowers the bound of `cls` to at most `id` (a job added or put back).
  void LowerTo(int cls, JobId id);
  // Sets the bound of `cls` within a walk (noted in touched_).
  void SetBound(int cls, JobId bound);
  // Keeps bounds_ a lower bound of every class's answer under `filter`: at a new walk, the
  // classes touched in the last one back to their first waiting job; after the filter widened,
  // those that were checked under a narrower setting than it has now.
  void SyncBounds(const ClassFilter& filter, double short_limit);

  std::vector<Stream> streams_;              // by class
  std::vector<Cached> cached_;               // by class: the answer of the last Next for that class
  std::unordered_map<JobId, int> class_of_;  // waiting jobs
  JobId cursor_ = kNoJob;
  uint64_t walk_ = 0;  // bumped by First and by Add: cached answers of older walks are stale
  // By class: at most the class's next admitted job after cursor_ (exact where a class was last
  // checked), and at most its first waiting job outside the classes in touched_; narrowed_: the
  // classes checked under short-only or none since the last widening; what the bounds were kept
  // for: the walk and the filter's widenings and short limit.
  BoundTree bounds_;
  std::vector<int> touched_, narrowed_;
  std::vector<uint8_t> in_touched_, in_narrowed_;  // by class
  uint64_t bounds_walk_ = ~uint64_t{0};
  uint64_t bounds_widened_ = 0;
  double bounds_short_limit_ = 0;
};

// Merges sources of waiting jobs, each in JobId order, into one JobId order (fair-share's accounts
// of one factor, priority's groups of one rank) by each source's next job a filter admits, asked
// lazily: a heap of lower bounds of which only the least is made exact, the answer once it stays
// least. `next_of(s)` is source s's next admitted job after the caller's cursor, or kNoJob; the
// sources are 0 .. sources - 1.
class LazyMerge {
 public:
  // Every source's next admitted job: at the start of a merge, and again after the filter widened
  // (old bounds may be too late).
  template <typename NextOf>
  void Refill(int sources, const ClassFilter& filter, NextOf&& next_of) {
    heap_ = {};
    for (int s = 0; s < sources; ++s) {
      const JobId id = next_of(s);
      if (id != kNoJob) heap_.push(Entry{id, s});
    }
    widened_ = filter.widened();
  }
  // The merge's next job after the caller's cursor, or kNoJob.
  template <typename NextOf>
  JobId Next(int sources, const ClassFilter& filter, NextOf&& next_of) {
    if (filter.widened() != widened_) Refill(sources, filter, next_of);
    while (!heap_.empty()) {
      const Entry top = heap_.top();
      heap_.pop();
      const JobId id = next_of(top.source);
      if (id == kNoJob) continue;  // back at the next Refill if the filter widens
      heap_.push(Entry{id, top.source});
      if (id == top.id) return id;  // the least bound is exact: the next job in the merge
    }
    return kNoJob;
  }

 private:
  struct Entry {
    JobId id;  // a lower bound of the source's next admitted job after the cursor
    int source;
    bool operator>(const Entry& other) const { return id > other.id; }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  uint64_t widened_ = 0;  // ClassFilter::widened() of the last Refill
};

class EasyBackfill {
 public:
  explicit EasyBackfill(WalltimeRule rule) : rule_(rule) {}
  const WalltimeRule& walltime() const { return rule_; }
  // Forward Policy::BeforeRun here (WalltimeRule::Prepare).
  void BeforeRun(const Trace& trace, uint64_t seed) { rule_.Prepare(trace, seed); }

  // The request class of a job (its RequestShape, sim/engine/placement.h), assigned on first use.
  int ClassOf(const SchedulingContext& context, JobId id);
  // Forward Policy::OnCompletion here.
  void OnCompletion(SchedulingContext& context, JobId id);
  // One pass over `order` (see the file comment); with `backfill` false, strict blocking.
  void Pass(SchedulingContext& context, CandidateOrder& order, bool backfill);

  // Wait reasons (docs/metrics.md#wait-reasons). A pass states the reason of every job it examines
  // and does not start: the blocked head and each job the backfill scan finds not fitting, its
  // NoFitReason; each job that fits but would delay the head, reservation. A job the scan skips
  // because a job of its request class was already refused in the pass takes that job's reason:
  // the wait group of a job is its request class (WaitGroup), whose reason EndPass sets to the
  // last one stated for the class in the pass; classes the scan never reached (nothing free) wait
  // for capacity, and with strict blocking every job but the head waits behind it (queue_head).
  // The policy calls EndPass once at the end of each Schedule.
  int WaitGroup(SchedulingContext& context, JobId id) { return ClassOf(context, id); }
  void EndPass(SchedulingContext& context);
  WaitStatements& waits() { return waits_; }
  // The reason of the classes no pass reached in this Schedule, for policies that walk their
  // queue themselves (priority with quotas).
  void SetUnexamined(WaitReason reason) {
    blocked_ = true;
    unexamined_ = reason;
  }

 private:
  // Records `reason` as the last one stated for the class of `id` in this Schedule.
  void Note(SchedulingContext& context, JobId id, WaitReason reason);
  void StartJob(SchedulingContext& context, CandidateOrder& order, JobId id, Allocation allocation);
  // Holds the currently failed GPUs on the horizon (they come back at no known time).
  void SyncFailedGpus(const SchedulingContext& context);
  // Free GPUs of some allowed type >= request: what fitting on `resources` needs.
  static bool CountFits(const Resources& resources, const PlacementRequest& request) {
    return MostFreeOfOneType(resources, request) >= request.gpus;
  }
  // CountFits, then the run's placement on `resources`.
  static bool FitsOn(const SchedulingContext& context, const Resources& resources,
                     const PlacementRequest& request, Allocation* out);
  bool StepForward();  // releases the next end group on the horizon; false if none
  bool StepBack();     // takes back the last released end group; false if none
  void Reserve(const SchedulingContext& context, JobId head);
  // Where Reserve's step back by counts stops (the horizon time of the earliest end group at
  // which `request` has enough free GPUs of an allowed type, counting down from the horizon as
  // it is), found by counting each group's GPUs instead of taking them; false (nothing found)
  // if a group stepped over holds GPU shares or MIG instances, whose counts depend on the state.
  bool EarliestCountFit(const SchedulingContext& context, const PlacementRequest& request,
                        double* target);
  // Moves the horizon back to `target` (the end of a group, or -infinity, at most
  // horizon_time_): takes back every group ending after it.
  void StepBackTo(double target);
  // For a job that outlasts t_s and fits now on `allocation`: true (with the allocation to use)
  // if the head keeps a placement at t_s.
  bool PlaceOutlasting(const SchedulingContext& context, JobId id, JobId head,
                       Allocation* allocation);
  // True if the reserved placement stays free at t_s with `allocation` of job `id` running
  // then too: no reserved GPU taken and, under host limits, the head's CPUs and memory still
  // free on its nodes.
  bool KeepsReservation(const SchedulingContext& context, JobId id, JobId head,
                        const Allocation& allocation);
  // False only if the horizon, with whole-GPU `allocation` taken, has too few free GPUs of every
  // type the head allows (FitsOn's count test on it, without changing the horizon).
  bool CountFitsWithout(const SchedulingContext& context, const PlacementRequest& head_request,
                        const Allocation& allocation) const;
  // After reserved_ changes: a new generation, and its GPUs as words and their one type.
  void IndexReservation(const SchedulingContext& context);
  // False only if a job of `request` cannot fit on the live state without the reserved GPUs by
  // counts alone (FitsOn's count test on unreserved_, without building it).
  bool UnreservedCountFits(const SchedulingContext& context, const PlacementRequest& request);
  // True if unreserved_ was derived from the live state as it is and the current reservation.
  bool UnreservedCurrent(const SchedulingContext& context) const;
  // After a start on the live state, with unreserved_ current before it: the same start on
  // unreserved_ (else it goes stale).
  void KeepUnreservedCurrent(const SchedulingContext& context, const PlacementRequest& request,
                             const Allocation& held);
  // The live state with the reserved nodes kept from jobs outlasting t_s (unreserved_).
  void BuildUnreserved(const SchedulingContext& context);

  WalltimeRule rule_;
  // RequestShape -> request class.
  std::map<RequestShape, int> class_ids_;
  std::vector<int> class_of_;  // by JobId; -1 = not assigned yet
  // The running jobs started by this policy by (estimated end, id), each with the engine's slot
  // of its ActiveRun (JobRun::active), where held_ keeps what it holds. The tree's nodes stay
  // small (tens of thousands of running jobs: each level of a search is a cache miss).
  using ByEnd = std::map<std::pair<double, JobId>, int32_t>;
  ByEnd by_end_;
  // What a running job started by this policy holds: its allocation (GPUs, or the node of a
  // CPU-only job) and request (the horizon takes both, so that with host limits it counts CPUs
  // and memory as the live state does; docs/resources.md), and its entry of by_end_, so that a
  // completion erases it without searching the tree. A slot's GPU list keeps its storage for the
  // slot's next job.
  struct Held {
    ByEnd::iterator entry;
    Allocation allocation;
    PlacementRequest request;  // its host demand and constraint class
  };
  ActiveSlotMap<Held> held_;
  std::optional<Resources> horizon_;  // free GPUs at horizon_time_ as estimated
  double horizon_time_ = -std::numeric_limits<double>::infinity();
  std::vector<int> failed_;      // failed GPUs held on the horizon
  uint64_t failed_version_ = 0;  // SchedulingContext::failed_gpus_version() of failed_
  // Per pass: the head's reservation and, built on demand, the live state minus the reserved GPUs.
  double reservation_time_ = 0;
  Allocation reserved_;
  std::optional<Resources> unreserved_;
  // What the reservation was planned from (Reserve plans again only if one of them changed) and
  // what unreserved_ was derived from (the reservation's generation, the live state's version).
  JobId reserved_head_ = kNoJob;
  uint64_t plan_changes_ = 0;  // running jobs started or gone (by_end_ changed)
  uint64_t reserved_plan_changes_ = 0;
  uint64_t reserved_horizon_version_ = 0;
  uint64_t reservation_generation_ = 0;  // grows whenever reserved_ changes
  uint64_t unreserved_generation_ = 0;
  uint64_t unreserved_live_version_ = 0;
  // The reserved GPUs as (word of the free bits, mask) pairs, and the GPU type of them all (-1 if
  // they are not of one type); set by IndexReservation.
  std::vector<std::pair<int, uint64_t>> reserved_words_;
  int reserved_type_ = -1;
  // Reserved GPUs free on the live state, for the reservation and live version it was counted at.
  int free_reserved_ = 0;
  uint64_t free_reserved_generation_ = ~uint64_t{0};
  uint64_t free_reserved_live_version_ = 0;

  std::vector<int> outside_reserved_;  // scratch of KeepUnreservedCurrent
  std::vector<int> count_free_;        // scratch of EarliestCountFit, by cluster GPU type
  // By request class (Reserve): how many moves of a wide head's horizon by counts in a row took
  // more than 16 placement searches to fit, and how many reservations are still to start where
  // the horizon is instead.
  struct CountsMislead {
    int misses = 0;
    int skip = 0;
  };
  std::vector<CountsMislead> counts_mislead_;
  ClassFilter filter_;
  JobId promised_head_ = kNoJob;  // the last blocked head given its reservation as a promise
  // Wait reasons within one Schedule: the statements, the last reason per class (-1 = none) and
  // the reason of the classes not reached; blocked_: some head waited.
  WaitStatements waits_;
  std::vector<int8_t> class_reason_;
  WaitReason unexamined_ = WaitReason::kQueueHead;
  bool blocked_ = false;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_POLICIES_BACKFILL_H_
