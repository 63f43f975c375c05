// The engine's side of spot capacity (sim/engine/spot.h, docs/autoscaling.md#spot-capacity).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sim/engine/engine.h"
#include "sim/util/error.h"

namespace clustersim {

void Engine::SetUpSpot() {
  if (options_.faults.failures() || !spares_.empty()) {
    throw InputError(cluster_.spec().origin, 0, 0,
                     "spot capacity does not combine with failures or hot spares yet "
                     "(docs/autoscaling.md#limits)");
  }
  if (!cluster_.has_pools()) pools_ = NodePools(cluster_);  // the books of the spot nodes
  spot_.on = true;
  spot_.rng = ExponentialSource(options_.seed ^ 0x5907'1A7E'5EEDull);
  spot_.cause = failure_log_.AddCause({"spot", "spot interruption", "node"});
  spot_.pending.assign(cluster_.node_count(), std::numeric_limits<double>::quiet_NaN());
  spot_.noticed.assign(cluster_.node_count(), 0);
}

void Engine::StartSpot() {
  plans_held_ = false;  // interruptions requeue jobs: promises are estimates
  // Draws (docs/autoscaling.md#spot-capacity): one per spot node ready at the first arrival, in
  // node order, from then; later one each time a spot node becomes ready, in event order.
  const double start = trace_.jobs.empty() ? 0.0 : trace_.jobs.front().submit_time;
  const double saved = now_;
  now_ = start;
  for (const Node& node : cluster_.nodes()) {
    if (pools_.state(node.index) == PoolNodeState::kReady) DrawSpotInterruption(node.index);
  }
  now_ = saved;
  const auto& groups = cluster_.spec().groups;
  for (size_t g = 0; g < groups.size(); ++g) {
    const SpotSpec& spot = groups[g].spot;
    if (!spot.enabled || spot.interruptions.empty()) continue;
    int first = -1;
    for (const Node& node : cluster_.nodes()) {
      if (node.group == static_cast<int>(g)) {
        first = node.index;
        break;
      }
    }
    for (const SpotInterruption& r : spot.interruptions) {
      Push(r.time, kTimerRank, kSpotTraceJob, static_cast<uint32_t>(first + r.node));
    }
  }
}

void Engine::DrawSpotInterruption(int node) {
  const SpotSpec& spot = cluster_.spec().groups[cluster_.node(node).group].spot;
  if (!spot.enabled || !(spot.interruptions_per_hour > 0)) return;
  const double at = now_ + spot_.rng.Next(3600.0 / spot.interruptions_per_hour);
  spot_.pending[node] = at;
  Push(at, kTimerRank, kSpotNoticeJob, static_cast<uint32_t>(node));
}

void Engine::DropSpotTimersWhenDone() {
  if (jobs_done_ != static_cast<int64_t>(trace_.jobs.size())) return;
  // Nothing is left to interrupt: spot timers would only stretch the run.
  while (!heap_.empty() && heap_.top().rank() == kTimerRank && heap_.top().job <= kSpotNoticeJob &&
         heap_.top().job >= kSpotReplacedJob) {
    heap_.pop();
  }
}

void Engine::SpotTimer(const Event& e) {
  const int node = static_cast<int>(e.aux);
  const double notice = cluster_.spec().groups[cluster_.node(node).group].spot.notice_seconds;
  const bool ready = pools_.state(node) == PoolNodeState::kReady;
  if (e.job == kSpotNoticeJob || e.job == kSpotTraceJob) {
    if (e.job == kSpotNoticeJob) {
      if (spot_.pending[node] != now_) return;  // drawn for an earlier readiness
      spot_.pending[node] = std::numeric_limits<double>::quiet_NaN();
    }
    if (!ready || spot_.noticed[node]) return;  // nothing to take back
    spot_.noticed[node] = 1;
    pools_.Interrupted(node, now_);
    Push(now_ + notice, kTimerRank, kSpotGoneJob, static_cast<uint32_t>(node));
    return;
  }
  if (e.job == kSpotReplacedJob) {
    pools_.Ready(node, now_);
    BringInNode(node);
    DrawSpotInterruption(node);
    return;
  }
  // The notice is over: the node is gone.
  spot_.noticed[node] = 0;
  if (!ready) return;  // released by the autoscaler during the notice
  const Node& n = cluster_.node(node);
  const int first = n.first_gpu;
  const int last = n.first_gpu + n.gpu_count;
  victims_.clear();
  for (JobId id : running_) {
    const Allocation& allocation = Live(id).allocation;
    const std::vector<int>& gpus = allocation.gpus;
    // A CPU-only job holds the node's CPUs and memory, no GPU.
    if (std::any_of(gpus.begin(), gpus.end(), [&](int g) { return g >= first && g < last; }) ||
        (gpus.empty() && allocation.node == node)) {
      victims_.push_back(id);
    }
  }
  std::sort(victims_.begin(), victims_.end());  // deterministic order for the policy's hooks
  ++failures_;
  InterruptVictims(spot_.cause, 0, 0, false, first, last);
  spot_.pending[node] = std::numeric_limits<double>::quiet_NaN();
  pools_.Release(node, now_);
  HoldOutNode(node);
  // Replaced: a fixed group's node, and a pool's under --autoscaler none (pools keep their size).
  const bool fixed = !n.pool || options_.autoscaler == nullptr;
  if (fixed) {
    pools_.Request(node, now_);
    Push(now_ + kSpotReplacementSeconds, kTimerRank, kSpotReplacedJob,
         static_cast<uint32_t>(node));
  }
  FailureEvent event;
  event.time = now_;
  event.cause = spot_.cause;
  event.first_node = node;
  event.node_count = 1;
  event.first_gpu = first;
  event.gpus_out = n.gpu_count;
  event.repair_seconds = fixed ? kSpotReplacementSeconds : 0.0;
  failure_log_.Record(event, victims_);
}

}  // namespace clustersim
