// srtf: preemptive shortest remaining time first with oracle knowledge (docs/policies.md). Every
// pass re-plans all runnable jobs, queued and running, in order of remaining work (ties: submit
// order) against the whole cluster, starts each one that fits in what the jobs before it leave
// (skipping the ones that do not) and preempts the running jobs not chosen.
// Parameters: none.
//
// Remaining work is in seconds at rate 1: the trace duration minus the work done. For a running
// job it is computed at the pass's time exactly as the engine accounts it when the job stops
// (sim/engine/engine.cc StopRunning): work_left - (elapsed - overhead paid) x rate, where the
// overhead paid is the part of the elapsed time spent on checkpoint restore (min(elapsed,
// overhead_left)). Under the `hardware` runtime model the key stays work, not time: a queued job's
// rate depends on where it will be placed. A queued job's pending restore overhead does not count.
// How chosen jobs map to GPUs (chosen running jobs keep theirs; evictions; migrations):
// policies/preemptive_plan.h, which also gives the cost of a pass: O((decisions + shapes) x
// shapes) placement queries, running jobs visited only for a queued job that does not fit.
//
// Implementation: jobs are compared by now + remaining work (then submit order). A running job
// at rate 1 past its restore ("steady") has now + remaining = its projected end, a constant (the
// key used for it, equal up to rounding), so
// steady jobs stay in one ordered set and a pass never sorts them; only the others (restoring, or
// at another rate under the `hardware` model) are sorted, when a pass needs the running order.
// For RoomBound, each job shape that asked for a bound has a Room: a free-GPU state busy exactly
// where the steady jobs ending before its threshold are. The threshold follows the keys of that
// shape's jobs, which move little from pass to pass, so updating it touches few jobs.
#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <set>
#include <utility>
#include <vector>

#include "policies/preemptive_plan.h"
#include "policies/registry.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

double RemainingWork(const JobRun& run, const ActiveRun& live, double now) {
  if (run.state != JobState::kRunning) return live.work_left;
  const double ran = now - live.last_start;
  const double overhead = std::min(ran, live.overhead_left);
  return std::max(0.0, live.work_left - (ran - overhead) * live.rate);
}

class Srtf final : public Policy, public RunnableOrder {
 public:
  bool PlacesMig() const override { return false; }  // docs/mig.md
  void OnArrival(SchedulingContext& context, JobId id) override {
    const ActiveRun& live = context.active(id);
    queued_.Insert(live.request, live.work_left, id);
  }

  void OnCompletion(SchedulingContext& /*context*/, JobId id) override { LeaveRunning(id); }
  void OnRequeue(SchedulingContext& context, JobId id) override {
    LeaveRunning(id);
    const ActiveRun& live = context.active(id);
    queued_.Insert(live.request, live.work_left, id);
  }

  void Schedule(SchedulingContext& context) override {
    CHECK(static_cast<int>(queued_.size()) == context.QueueLength(),
          "srtf: a job entered the queue other than by arriving or being preempted by srtf");
    if (queued_.empty()) return;  // every running job fits where it is
    context_ = &context;
    now_ = context.now();
    Refresh();
    others_sorted_ = false;
    planner_.Run(context, *this, &outcome_);
    // A queued job's work is constant, so its key is its work left now.
    for (JobId id : outcome_.preempted) {
      LeaveRunning(id);
      const ActiveRun& live = context.active(id);
      queued_.Insert(live.request, live.work_left, id);
    }
    for (JobId id : outcome_.migrated) LeaveRunning(id);
    for (JobId id : outcome_.started) {
      const ActiveRun& live = context.active(id);
      CHECK(queued_.Erase(live.request, live.work_left, id), "srtf: started an unknown job");
      EnterRunning(id);
    }
    for (JobId id : outcome_.migrated) EnterRunning(id);
    StatePreemptiveWaits(context, &waits_);
    context_ = nullptr;
  }

  // RunnableOrder
  bool Before(JobId a, JobId b) const override {
    const double ka = Key(a);
    const double kb = Key(b);
    return ka < kb || (ka == kb && a < b);
  }
  int QueuedLists() const override { return queued_.lists(); }
  JobId FirstQueued(int list) override { return queued_.First(list); }
  JobId NextQueued(int list) override { return queued_.Next(list); }
  JobId LowestRunning() override {
    if (!others_sorted_) SortOthers();
    steady_cursor_ = steady_.end();
    others_cursor_ = others_sorted_ids_.size();
    return NextHigherRunning();
  }
  JobId NextHigherRunning() override {
    const JobId steady =
        steady_cursor_ == steady_.begin() ? kNoJob : std::prev(steady_cursor_)->second;
    const JobId other = others_cursor_ == 0 ? kNoJob : others_sorted_ids_[others_cursor_ - 1];
    if (steady == kNoJob && other == kNoJob) return kNoJob;
    if (other == kNoJob || (steady != kNoJob && Before(other, steady))) {
      --steady_cursor_;
      return steady;
    }
    --others_cursor_;
    return other;
  }
  // The steady jobs ending before this job's key all come before it: the room of its shape
  // moves its threshold there, touching the steady jobs it crosses.
  const Resources* RoomBound(JobId id) override {
    const PlacementRequest& request = context_->active(id).request;
    auto [slot, added] = room_of_shape_.try_emplace(
        {request.gpus, request.type_mask, request.constraint}, static_cast<int>(rooms_.size()));
    if (added) rooms_.push_back(Room{Resources(context_->cluster()), kNever});
    Room& room = rooms_[slot->second];
    const double target = now_ + context_->active(id).work_left;
    if (target > room.threshold) {
      for (auto it = steady_.lower_bound({room.threshold, kNoJob});
           it != steady_.end() && it->first < target; ++it) {
        room.state.Allocate(gpus_[it->second]);
      }
    } else {
      for (auto it = steady_.lower_bound({target, kNoJob});
           it != steady_.end() && it->first < room.threshold; ++it) {
        room.state.Release(gpus_[it->second]);
      }
    }
    room.threshold = target;
    return &room.state;
  }
  // Out of the steady set (and the rooms) at once; its key no longer matters in this pass.
  void OnLost(JobId id) override { LeaveRunning(id); }

 private:
  enum Where : uint8_t { kNowhere = 0, kSteady, kRestoring, kOtherRate };
  struct Running {
    Where where = kNowhere;
    double end = 0;       // projected end at rate 1 (steady and restoring jobs)
    double restored = 0;  // when the restore overhead is paid off
  };

  double Key(JobId id) const {
    if (static_cast<size_t>(id) < running_.size() && running_[id].where == kSteady) {
      return running_[id].end;
    }
    return now_ + RemainingWork(context_->run(id), context_->active(id), now_);
  }

  void EnterRunning(JobId id) {
    const ActiveRun& live = context_->active(id);
    if (static_cast<size_t>(id) >= running_.size()) {
      running_.resize(std::max<size_t>(static_cast<size_t>(id) + 1, 2 * running_.size()));
    }
    if (gpus_.size() < running_.size()) gpus_.resize(running_.size());
    Running& r = running_[id];
    gpus_[id] = live.allocation.gpus;
    r.restored = now_ + live.overhead_left;
    r.end = r.restored + live.work_left / live.rate;
    if (live.rate != 1.0) {
      r.where = kOtherRate;
      others_.insert(id);
    } else if (r.restored > now_) {
      r.where = kRestoring;
      restoring_.emplace(r.restored, id);
    } else {
      BecomeSteady(id);
    }
  }

  void BecomeSteady(JobId id) {
    Running& r = running_[id];
    r.where = kSteady;
    steady_.emplace(r.end, id);
    for (Room& room : rooms_) {
      if (r.end < room.threshold) room.state.Allocate(gpus_[id]);
    }
  }

  void LeaveRunning(JobId id) {
    if (static_cast<size_t>(id) >= running_.size()) return;
    Running& r = running_[id];
    switch (r.where) {
      case kSteady:
        steady_.erase({r.end, id});
        for (Room& room : rooms_) {
          if (r.end < room.threshold) room.state.Release(gpus_[id]);
        }
        break;
      case kRestoring:
        restoring_.erase({r.restored, id});
        break;
      case kOtherRate:
        others_.erase(id);
        break;
      case kNowhere:
        return;
    }
    r.where = kNowhere;
    gpus_[id].clear();
    gpus_[id].shrink_to_fit();
  }

  // At the start of a pass: restores paid off by now make their jobs steady.
  void Refresh() {
    while (!restoring_.empty() && restoring_.begin()->first <= now_) {
      const JobId id = restoring_.begin()->second;
      restoring_.erase(restoring_.begin());
      BecomeSteady(id);
    }
  }

  void SortOthers() {
    others_sorted_ = true;
    others_sorted_ids_.clear();
    for (const auto& [restored, id] : restoring_) others_sorted_ids_.push_back(id);
    others_sorted_ids_.insert(others_sorted_ids_.end(), others_.begin(), others_.end());
    std::sort(others_sorted_ids_.begin(), others_sorted_ids_.end(),
              [this](JobId a, JobId b) { return Before(a, b); });
  }

  QueuedByShape<double> queued_;  // by work left
  SchedulingContext* context_ = nullptr;  // during a pass
  double now_ = 0;
  std::vector<Running> running_;            // per job; kNowhere unless running
  std::vector<std::vector<int>> gpus_;      // per job: held while running, for the rooms
  std::set<std::pair<double, JobId>> steady_;      // (projected end, job)
  std::set<std::pair<double, JobId>> restoring_;   // (restore paid off, job)
  std::set<JobId> others_;                          // rate != 1
  std::set<std::pair<double, JobId>>::const_iterator steady_cursor_;
  bool others_sorted_ = false;
  std::vector<JobId> others_sorted_ids_;  // restoring and other-rate jobs, highest priority first
  size_t others_cursor_ = 0;
  static constexpr double kNever = -std::numeric_limits<double>::infinity();
  struct Room {
    Resources state;   // busy exactly where steady jobs ending before `threshold` are
    double threshold;
  };
  std::vector<Room> rooms_;
  std::map<std::tuple<int, uint64_t, uint16_t>, int> room_of_shape_;
  PreemptivePlanner planner_;
  WaitStatements waits_;  // the first queued job's reason (StatePreemptiveWaits)
  PassOutcome outcome_;
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(srtf, "srtf",
                           "shortest remaining time first (oracle), preemptive; every pass "
                           "re-plans queued and running jobs and starts every one that fits",
                           "", [](const clustersim::Params&) {
                             return std::make_unique<clustersim::Srtf>();
                           });
