// One pass of a preemptive priority policy (srtf, las; docs/policies.md). Every runnable job,
// queued or running, is considered in the policy's priority order against the whole cluster ("each
// pass considers all GPUs free"): a job is selected if it fits in what the jobs selected before it
// leave. Selected queued jobs start; running jobs not selected are preempted.
//
// How the plan maps to real GPUs (docs/policies.md#preemptive-passes):
// - A selected running job keeps the GPUs it holds. The GPUs left for a job are the cluster
//   minus the GPUs of the jobs selected before it, where those jobs actually are (kept jobs where
//   they run, newly started jobs where this pass puts them). Under `pool` this selects exactly the
//   jobs a fresh packing of the empty cluster would; under node-aware placements the leftover has
//   the shape the kept jobs really leave, so no job migrates only because a fresh packing would
//   put it elsewhere.
// - Running jobs are pinned to their GPUs until a higher-priority job needs room. A job that does
//   not fit around the pinned jobs evicts pinned jobs of lower priority (only those of a GPU type
//   it may use), lowest priority first, until it fits; if it cannot fit even with all of them
//   evicted it is skipped and nothing is evicted. An evicted job is reconsidered at its own place
//   in the order: it keeps its GPUs if they are all still free (no preemption at all), else it is
//   placed anew like a queued job (a migration: preempted and restarted on other GPUs in the same
//   pass, paying the preemption cost) or, if it fits nowhere, it is preempted.
// - Decisions are applied at the end of the pass, preemptions first, then starts. Until the first
//   eviction the pass starts jobs directly on the live state.
// Cost per pass: queued jobs are scanned per shape and a shape is dropped at its first failure
// (RunnableOrder), so the scan is bounded by the decisions plus the shapes; running jobs are
// visited only for a queued job that does not fit as things are (a GPU count check, then
// evictions; if one eviction is not enough, the policy's RoomBound is asked first, so a job that
// cannot fit is usually refused without touching every lower-priority job); the pass stops once
// no GPU is free and no lower-priority running job is left to evict.
#ifndef CLUSTERSIM_POLICIES_PREEMPTIVE_PLAN_H_
#define CLUSTERSIM_POLICIES_PREEMPTIVE_PLAN_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "policies/wait_statements.h"
#include "sim/engine/policy.h"

namespace clustersim {

// How a preemptive policy orders its runnable jobs. Owned by the policy; read by the planner
// during one pass, during which the order must not change.
//
// Queued jobs come in lists, one per shape (what decides whether a request fits: ShapeOf,
// sim/engine/placement.h), each in priority order: once a job of some shape does not fit in what is
// left, no later job of that shape can (what is left only shrinks along the order), so the pass
// drops the rest of that list. A pass thus costs O((decisions + shapes) x shapes), not O(queued
// jobs).
class RunnableOrder {
 public:
  virtual ~RunnableOrder() = default;
  // A strict total order over runnable jobs: true if `a` has higher priority than `b`.
  virtual bool Before(JobId a, JobId b) const = 0;
  // The queued jobs, as lists each in priority order: FirstQueued(list) (which restarts that
  // list), then NextQueued(list) until kNoJob. Every queued job is in exactly one list; all jobs
  // of a list have the same PlacementRequest.
  virtual int QueuedLists() const = 0;
  virtual JobId FirstQueued(int list) = 0;
  virtual JobId NextQueued(int list) = 0;
  // The running jobs from the lowest priority up: LowestRunning() (which restarts the walk),
  // then NextHigherRunning() until kNoJob. Must hold every job running when the pass began, but
  // for those reported by OnLost; jobs the pass started may be listed too (they are never behind
  // a job the pass considers later).
  virtual JobId LowestRunning() = 0;
  virtual JobId NextHigherRunning() = 0;
  // Optional, for speed: for a queued job, a free-GPU state in which every GPU is free except
  // (some of) those held by jobs that were running when the pass began, come before `id` and
  // have not been reported by OnLost; nullptr if none. A job that does not fit there cannot fit
  // in what is left for it, so the planner skips it without trying evictions.
  virtual const Resources* RoomBound(JobId /*id*/) { return nullptr; }
  // The pass has decided to preempt (or migrate) running job `id`: its GPUs are no longer held
  // in the plan, and RoomBound must not count them from now on.
  virtual void OnLost(JobId /*id*/) {}
};

// Queued jobs split by shape, each shape's jobs ordered by (Key, JobId): the queued side of a
// RunnableOrder. Shapes get list numbers in order of first appearance and keep them.
template <typename Key>
class QueuedByShape {
 public:
  void Insert(const PlacementRequest& request, const Key& key, JobId id) {
    const auto shape = ShapeOf(request);
    auto it = index_.find(shape);
    if (it == index_.end()) {
      it = index_.emplace(shape, static_cast<int>(lists_.size())).first;
      lists_.emplace_back();
      cursors_.emplace_back();
    }
    lists_[it->second].emplace(key, id);
    ++size_;
  }
  // Returns false if the job was not there.
  bool Erase(const PlacementRequest& request, const Key& key, JobId id) {
    auto it = index_.find(ShapeOf(request));
    if (it == index_.end() || lists_[it->second].erase({key, id}) == 0) return false;
    --size_;
    return true;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int lists() const { return static_cast<int>(lists_.size()); }
  JobId First(int list) {
    cursors_[list] = lists_[list].begin();
    return cursors_[list] == lists_[list].end() ? kNoJob : cursors_[list]->second;
  }
  JobId Next(int list) {
    ++cursors_[list];
    return cursors_[list] == lists_[list].end() ? kNoJob : cursors_[list]->second;
  }

 private:
  using List = std::set<std::pair<Key, JobId>>;
  std::map<RequestShape, int> index_;  // shape -> list
  std::vector<List> lists_;
  std::vector<typename List::const_iterator> cursors_;
  size_t size_ = 0;
};

struct PassOutcome {
  std::vector<JobId> started;    // queued jobs started, in priority order
  std::vector<JobId> preempted;  // running jobs preempted and left queued
  std::vector<JobId> migrated;   // running jobs preempted and restarted on other GPUs
  void Clear() {
    started.clear();
    preempted.clear();
    migrated.clear();
  }
};

class PreemptivePlanner {
 public:
  // Plans one pass over `order` and applies it through `context`; fills `outcome`.
  void Run(SchedulingContext& context, RunnableOrder& order, PassOutcome* outcome);

 private:
  enum Mark : uint8_t { kPinned = 0, kEvicted, kSettled };

  Mark MarkOf(JobId id) const {
    return static_cast<size_t>(id) < marks_.size() ? static_cast<Mark>(marks_[id]) : kPinned;
  }
  void SetMark(JobId id, Mark mark);
  const Resources& State() const;
  bool Place(JobId id, Allocation* out) const;
  bool MakeRoom(JobId id, Allocation* out);
  bool IsKnownNotToFit(JobId id) const;
  void SettleEvicted(JobId id);
  void StartOrDefer(JobId id, Allocation allocation);
  bool IsPinnedJobBehind(JobId id);
  void AddEvicted(JobId id);

  SchedulingContext* context_ = nullptr;
  RunnableOrder* order_ = nullptr;
  PassOutcome* outcome_ = nullptr;
  std::optional<Resources> scratch_;  // the plan, once the pass has evicted something
  bool planning_ = false;
  std::vector<uint8_t> marks_;  // Mark per job; only running jobs are ever marked
  std::vector<JobId> marked_;   // jobs whose mark to reset after the pass
  std::vector<JobId> evicted_;  // evicted, not yet reconsidered: lowest priority first
  std::vector<JobId> trial_;
  std::vector<JobId> heads_;  // per queued list: its next job, kNoJob once done
  std::vector<JobId> to_preempt_;                         // in the order decided
  std::vector<std::pair<JobId, Allocation>> to_start_;    // deferred starts, in order
  std::vector<RequestShape> cannot_fit_;                  // shapes known not to fit
};

// Wait reasons of a preemptive priority pass (docs/metrics.md#wait-reasons): every queued job
// waits because the jobs ranked before it take the room it needs (priority). The first queued
// job is classified on the free state the pass left: fragmentation or nodes down when that is
// what stops it, else priority (a GPU count short is room held by jobs ranked higher, or they
// would have been preempted).
inline void StatePreemptiveWaits(SchedulingContext& context, WaitStatements* waits) {
  context.SetGroupWaitReason(0, WaitReason::kPriority);
  const JobId front = context.QueueFront();
  if (front != kNoJob) {
    WaitReason reason = context.NoFitReason(front).value_or(WaitReason::kPriority);
    if (reason == WaitReason::kCapacity) reason = WaitReason::kPriority;
    waits->State(context, front, reason);
  }
  waits->EndPass(context);
}

}  // namespace clustersim

#endif  // CLUSTERSIM_POLICIES_PREEMPTIVE_PLAN_H_
