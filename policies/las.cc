// las: Tiresias discretized two-dimensional least attained service (docs/policies.md#las). A job's
// attained service is its GPUs x seconds held; K queues split at increasing thresholds, a new job
// enters the back of queue 0 and moves to the back of the next queue at the exact time its
// service crosses a threshold. Every pass scans the queues in order against the whole cluster,
// starts every queued job that fits in what the jobs before it leave (skipping the ones that do
// not), preempts the running jobs not chosen, and then reorders every queue, stably, so that its
// running jobs come before its queued ones.
// Parameters:
//   thresholds (3250,7200): demotion thresholds in GPU-seconds, comma-separated and increasing;
//     K = their count + 1 queues.
//   starvation_seconds (0 = off): a job in queue >= 1 that has waited this long since it was
//     preempted moves to the back of queue 0 at that exact time, its attained service counted
//     from 0 again (otherwise it would fall back at its next start).
//
// Choices beyond Tiresias' description (docs/policies.md#las):
// - Service is counted while a job holds GPUs, checkpoint-restore time after a preemption
//   included (JobRun::gpu_seconds): the GPUs are occupied either way.
// - Demotion is a timer set when the job starts (and after each demotion, for the next
//   threshold): t = now + (threshold - attained) / GPUs. Its tag carries a per-job generation
//   bumped at every start and preemption, so a timer from an earlier running interval is ignored.
// - Position in a queue is a key (queue, band, sequence): band 0 holds the queue's running jobs,
//   band 1 everything behind them. Arrivals, demotions and promotions take band 1 with a new
//   highest sequence (the back of the queue), so a job demoted by a timer is behind the queue's
//   queued jobs during the pass that follows. After the pass, jobs running in band 1 move to the
//   back of band 0 and jobs preempted from band 0 move to the front of band 1, each group in its
//   previous order: exactly a stable partition of the queue.
// - The starvation clock starts at the preemption (a job in queue >= 1 has always run: demotion
//   happens only while running); a job in queue 0 is never promoted.
// How chosen jobs map to GPUs (chosen running jobs keep theirs; evictions; migrations):
// policies/preemptive_plan.h, which also gives the cost of a pass: O((decisions + shapes) x
// shapes) placement queries, running jobs visited only for a queued job that does not fit.
// Implementation: per queue k a free-GPU state busy exactly where the jobs running in queues < k
// and in the running band of queue k are (kept up to date at every start, stop and demotion) is
// the planner's RoomBound for queue k's queued jobs: one placement query tells that a job cannot
// fit around the jobs before it, without evicting every job behind it to find out.
#include <algorithm>
#include <cmath>
#include <compare>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "policies/las_queues.h"
#include "policies/preemptive_plan.h"
#include "policies/registry.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

struct QueueKey {
  int queue = 0;
  int band = 1;      // 0: the queue's running jobs, at its front; 1: behind them
  int64_t seq = 0;   // position within the band; unique over all keys
  auto operator<=>(const QueueKey&) const = default;
};
using Entry = std::pair<QueueKey, JobId>;

class Las final : public Policy, public RunnableOrder {
 public:
  Las(std::vector<double> thresholds, double starvation_seconds)
      : thresholds_(std::move(thresholds)), starvation_seconds_(starvation_seconds) {}

  bool PlacesMig() const override { return false; }  // docs/mig.md
  void OnArrival(SchedulingContext& context, JobId id) override {
    Grow(id);
    key_[id] = QueueKey{0, 1, ++back_seq_};
    queued_.Insert(context.active(id).request, key_[id], id);
  }

  void OnCompletion(SchedulingContext& /*context*/, JobId id) override {
    running_.erase({key_[id], id});
    LeaveRoom(id);
  }

  // As a preemption: to the front of its queue's waiting band.
  void OnRequeue(SchedulingContext& context, JobId id) override {
    running_.erase({key_[id], id});
    LeaveRoom(id);
    ++generation_[id];
    key_[id] = QueueKey{key_[id].queue, 1, --front_seq_};
    queued_.Insert(context.active(id).request, key_[id], id);
    if (starvation_seconds_ > 0 && key_[id].queue > 0) {
      context.SetTimer(context.now() + starvation_seconds_, id, Tag(id, kPromote));
    }
  }

  void OnTimer(SchedulingContext& context, JobId id, int tag) override {
    if (static_cast<size_t>(id) >= key_.size() ||
        static_cast<uint32_t>(tag >> 1) != (generation_[id] & kGenerationMask)) {
      return;  // from an earlier running or waiting interval
    }
    const JobRun& run = context.run(id);
    const int queue = key_[id].queue;
    if ((tag & 1) == kDemote) {
      if (run.state != JobState::kRunning || queue + 1 >= QueueCount()) return;
      running_.erase({key_[id], id});
      LeaveRoom(id);
      key_[id] = QueueKey{queue + 1, 1, ++back_seq_};
      running_.emplace(key_[id], id);
      EnterRoom(context, id);
      demoted_running_.push_back(id);
      SetDemotionTimer(context, id);
    } else {
      if (run.state != JobState::kQueued || queue == 0) return;
      const ActiveRun& live = context.active(id);
      queued_.Erase(live.request, key_[id], id);
      key_[id] = QueueKey{0, 1, ++back_seq_};
      queued_.Insert(live.request, key_[id], id);
      service_base_[id] = run.gpu_seconds;
    }
  }

  void Schedule(SchedulingContext& context) override {
    CHECK(static_cast<int>(queued_.size()) == context.QueueLength(),
          "las: a job entered the queue other than by arriving or being preempted by las");
    outcome_.Clear();
    // With nobody queued every running job fits where it is: nothing to plan.
    if (!queued_.empty()) planner_.Run(context, *this, &outcome_);
    for (JobId id : outcome_.started) {
      ++generation_[id];
      SetDemotionTimer(context, id);
    }
    for (JobId id : outcome_.migrated) {
      generation_[id] += 2;  // a preemption and a start
      SetDemotionTimer(context, id);
    }
    for (JobId id : outcome_.preempted) {
      ++generation_[id];
      if (starvation_seconds_ > 0 && key_[id].queue > 0) {
        context.SetTimer(context.now() + starvation_seconds_, id, Tag(id, kPromote));
      }
    }
    for (JobId id : outcome_.preempted) LeaveRoom(id);
    for (JobId id : outcome_.migrated) LeaveRoom(id);
    touched_ = demoted_running_;
    for (JobId id : touched_) LeaveRoom(id);
    Reorder(context);
    for (JobId id : outcome_.started) EnterRoom(context, id);
    for (JobId id : outcome_.migrated) EnterRoom(context, id);
    for (JobId id : touched_) {
      if (context.run(id).state == JobState::kRunning) EnterRoom(context, id);
    }
    StatePreemptiveWaits(context, &waits_);
  }

  // RunnableOrder
  bool Before(JobId a, JobId b) const override { return key_[a] < key_[b]; }
  int QueuedLists() const override { return queued_.lists(); }
  JobId FirstQueued(int list) override { return queued_.First(list); }
  JobId NextQueued(int list) override { return queued_.Next(list); }
  JobId LowestRunning() override {
    running_cursor_ = running_.end();
    return NextHigherRunning();
  }
  JobId NextHigherRunning() override {
    if (running_cursor_ == running_.begin()) return kNoJob;
    return (--running_cursor_)->second;
  }
  // Queued jobs are in band 1: every job running in an earlier queue or in the running band of
  // their own queue comes before them.
  const Resources* RoomBound(JobId id) override {
    return room_.empty() ? nullptr : &room_[key_[id].queue];
  }
  void OnLost(JobId id) override { LeaveRoom(id); }

 private:
  static constexpr int kDemote = 0;
  static constexpr int kPromote = 1;
  static constexpr uint32_t kGenerationMask = (1u << 30) - 1;  // tags are non-negative ints

  int QueueCount() const { return static_cast<int>(thresholds_.size()) + 1; }
  int Tag(JobId id, int kind) const {
    return static_cast<int>((generation_[id] & kGenerationMask) << 1) | kind;
  }

  void Grow(JobId id) {
    if (static_cast<size_t>(id) < key_.size()) return;
    const size_t size = std::max<size_t>(static_cast<size_t>(id) + 1, 2 * key_.size());
    key_.resize(size);
    generation_.resize(size, 0);
    service_base_.resize(size, 0.0);
  }

  // GPU-seconds held since arrival (or since the last starvation promotion).
  double Attained(const SchedulingContext& context, JobId id) const {
    const JobRun& run = context.run(id);
    double held = run.gpu_seconds - service_base_[id];
    if (run.state == JobState::kRunning) {
      const ActiveRun& live = context.active(id);
      held += (context.now() - live.last_start) * static_cast<double>(live.allocation.gpus.size());
    }
    return held;
  }

  void SetDemotionTimer(SchedulingContext& context, JobId id) {
    const int queue = key_[id].queue;
    if (queue >= static_cast<int>(thresholds_.size())) return;  // the last queue
    const double gpus = static_cast<double>(context.active(id).allocation.gpus.size());
    if (gpus == 0) return;  // a CPU-only job attains no GPU service: never demoted
    const double left = std::max(0.0, thresholds_[queue] - Attained(context, id));
    context.SetTimer(context.now() + left / gpus, id, Tag(id, kDemote));
  }

  // room_[k]: busy exactly where jobs running in queues < k or in the running band of queue k
  // are, the bound RoomBound gives for queue k. Kept up to date at every start, stop and key
  // change of a running job (from the GPUs and key it entered with).
  static bool IsInRoom(const QueueKey& key, int k) {
    return key.queue < k || (key.queue == k && key.band == 0);
  }
  void EnterRoom(const SchedulingContext& context, JobId id) {
    if (room_.empty()) room_.assign(QueueCount(), Resources(context.cluster()));
    auto [it, inserted] = held_.try_emplace(id);
    if (!inserted) return;
    it->second.key = key_[id];
    it->second.gpus = context.active(id).allocation.gpus;
    for (int k = 0; k < QueueCount(); ++k) {
      if (IsInRoom(it->second.key, k)) room_[k].Allocate(it->second.gpus);
    }
  }
  void LeaveRoom(JobId id) {
    auto it = held_.find(id);
    if (it == held_.end()) return;
    for (int k = 0; k < QueueCount(); ++k) {
      if (IsInRoom(it->second.key, k)) room_[k].Release(it->second.gpus);
    }
    held_.erase(it);
  }

  // The stable partition after a pass: in every queue, running jobs before queued ones.
  void Reorder(const SchedulingContext& context) {
    // Preempted jobs: from band 0 to the front of band 1, keeping their order; a job demoted
    // and preempted at once is already in band 1, behind the queue's queued jobs, and stays.
    moved_.clear();
    for (JobId id : outcome_.preempted) {
      running_.erase({key_[id], id});
      if (key_[id].band == 0) {
        moved_.emplace_back(key_[id], id);
      } else {
        queued_.Insert(context.active(id).request, key_[id], id);
      }
    }
    std::sort(moved_.begin(), moved_.end(), std::greater<>());
    for (const auto& [key, id] : moved_) {
      key_[id] = QueueKey{key.queue, 1, --front_seq_};
      queued_.Insert(context.active(id).request, key_[id], id);
    }
    // Running jobs in band 1 (started in this pass, or demoted since the last one): to the back
    // of band 0, keeping their order.
    moved_.clear();
    for (JobId id : outcome_.started) {
      CHECK(queued_.Erase(context.active(id).request, key_[id], id), "las: started an unknown job");
      moved_.emplace_back(key_[id], id);
    }
    for (JobId id : demoted_running_) {
      if (context.run(id).state == JobState::kRunning && key_[id].band == 1) {
        running_.erase({key_[id], id});
        moved_.emplace_back(key_[id], id);
        key_[id].band = 0;  // marks it handled, should it be listed twice
      }
    }
    demoted_running_.clear();
    std::sort(moved_.begin(), moved_.end());
    for (const auto& [key, id] : moved_) {
      key_[id] = QueueKey{key.queue, 0, ++back_seq_};
      running_.emplace(key_[id], id);
    }
  }

  const std::vector<double> thresholds_;
  const double starvation_seconds_;
  std::vector<QueueKey> key_;          // per job
  std::vector<uint32_t> generation_;   // per job: bumped at every start and preemption
  std::vector<double> service_base_;   // per job: GPU-seconds not counted (starvation reset)
  QueuedByShape<QueueKey> queued_;
  std::set<Entry> running_;
  std::set<Entry>::const_iterator running_cursor_;
  std::vector<JobId> demoted_running_;  // demoted while running since the last pass
  std::vector<Entry> moved_;
  std::vector<JobId> touched_;
  struct Held {
    QueueKey key;
    std::vector<int> gpus;
  };
  std::vector<Resources> room_;  // per queue, see IsInRoom
  std::map<JobId, Held> held_;   // running jobs: what they entered room_ with
  int64_t back_seq_ = 0;
  int64_t front_seq_ = 0;
  PreemptivePlanner planner_;
  WaitStatements waits_;  // the first queued job's reason (StatePreemptiveWaits)
  PassOutcome outcome_;
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_POLICY(
    las, "las",
    "Tiresias discretized 2D least attained service (GPU-seconds), preemptive; demotion at "
    "thresholds by timer",
    "thresholds (3250,7200): demotion thresholds in GPU-seconds, comma-separated, increasing; "
    "K = count + 1 queues\n"
    // Continuation lines are indented to the column `clustersim list policies -v` prints at.
    "                           starvation_seconds (0 = off): a job in queue >= 1 waiting this "
    "long since its preemption moves to the back of queue 0, its service counted from 0 again",
    [](const clustersim::Params& params) {
      auto thresholds = clustersim::ParseThresholds(
          params.String("thresholds", clustersim::kDefaultLasThresholds));
      const double starvation = params.Double("starvation_seconds", 0);
      if (!(starvation >= 0) || !std::isfinite(starvation)) {
        throw clustersim::InputError("parameter starvation_seconds=" +
                                     params.String("starvation_seconds", "") +
                                     ": expected a number of seconds >= 0 (0 = off)");
      }
      return std::make_unique<clustersim::Las>(std::move(thresholds), starvation);
    });
