// The engine's side of node pools (sim/engine/node_pools.h, docs/autoscaling.md): pool nodes
// that are not ready are out of placement like failed GPUs (allocated in Resources and listed
// in failed_gpus()); scans run after the pass at their time and the engine applies the
// autoscaler's decisions after checking them.
#include <algorithm>
#include <cmath>
#include <string>

#include "sim/engine/engine.h"
#include "sim/util/error.h"

namespace clustersim {

void Engine::SetUpPools() {
  if (options_.faults.failures() || !spares_.empty()) {
    throw InputError(cluster_.spec().origin, 0, 0,
                     "node pools (autoscale) do not combine with failures or hot spares yet "
                     "(docs/autoscaling.md#limits)");
  }
  pools_ = NodePools(cluster_);
  pools_.SeedProvisioning(options_.seed);
  for (int group : pools_.groups()) {
    for (int node : pools_.nodes(group)) {
      if (pools_.state(node) == PoolNodeState::kOff) HoldOutNode(node);
    }
  }
}

void Engine::StartPools() {
  const double start = trace_.jobs.empty() ? 0.0 : trace_.jobs.front().submit_time;
  pools_.Start(start);
  if (options_.autoscaler != nullptr) {
    const double interval = options_.autoscaler->scan_interval_seconds();
    CHECK(interval > 0 && std::isfinite(interval), "autoscaler scan interval must be > 0");
    Push(start, kTimerRank, kPoolScanJob, 0);
  }
}

// A node out of service holds out its GPUs and, under host limits, its CPUs and memory (no
// CPU-only job may start there). REQUIRES: nothing runs on it (Resources::NodeIdle).
void Engine::HoldOutNode(int node) {
  const Node& n = cluster_.node(node);
  CHECK(resources_.NodeIdle(node), "node " + std::to_string(node) + " taken out while in use");
  for (int g = n.first_gpu; g < n.first_gpu + n.gpu_count; ++g) {
    const int one[] = {g};
    resources_.Allocate(one);
    AddOutOfService(g);
  }
  resources_.HoldOutHost(node);
  if (held_out_.empty()) held_out_.assign(cluster_.node_count(), 0);
  held_out_[node] = 1;
  pool_out_gpus_ += n.gpu_count;
  metrics_.OnNodeHeldOut(node, true);
  metrics_.OnNodeChanged(node);
  ++state_version_;
}

void Engine::BringInNode(int node) {
  const Node& n = cluster_.node(node);
  for (int g = n.first_gpu; g < n.first_gpu + n.gpu_count; ++g) {
    const int one[] = {g};
    resources_.Release(one);
    RemoveOutOfService(g);
  }
  resources_.BringInHost(node);
  if (!held_out_.empty()) held_out_[node] = 0;
  pool_out_gpus_ -= n.gpu_count;
  metrics_.OnNodeHeldOut(node, false);
  metrics_.OnNodeChanged(node);
  ++state_version_;
}

void Engine::PoolTimer(const Event& e) {
  if (e.job == kPoolReadyJob) {
    const int node = static_cast<int>(e.aux);
    pools_.Ready(node, now_);
    BringInNode(node);
    if (spot_.on) DrawSpotInterruption(node);
    return;
  }
  scan_due_ = true;
}

void Engine::ScanPools() {
  scan_due_ = false;
  // Idle clocks: a ready pool node that runs nothing is empty (docs/autoscaling.md).
  for (int group : pools_.groups()) {
    for (int node : pools_.nodes(group)) {
      if (pools_.state(node) != PoolNodeState::kReady) continue;
      pools_.ObserveEmpty(node, resources_.NodeIdle(node), now_);
    }
  }
  scale_.clear();
  options_.autoscaler->Scan(*this, pools_, &scale_);
  const auto& groups = cluster_.spec().groups;
  for (int node : scale_.release) {
    if (node < 0 || node >= cluster_.node_count() || !pools_.pool_node(node)) {
      PolicyBug("autoscaler released node " + std::to_string(node) + ", not a pool node");
    }
    const int group = cluster_.node(node).group;
    if (pools_.state(node) != PoolNodeState::kReady) {
      PolicyBug("autoscaler released node " + std::to_string(node) + ", which is not ready");
    }
    if (!resources_.NodeIdle(node)) {
      PolicyBug("autoscaler released node " + std::to_string(node) + ", which runs a job");
    }
    if (pools_.provisioned(group) <= groups[group].autoscale.min) {
      PolicyBug("autoscaler released node " + std::to_string(node) + " below its pool's min");
    }
    pools_.Release(node, now_);
    HoldOutNode(node);
  }
  for (const auto& [group, count] : scale_.add) {
    if (group < 0 || group >= static_cast<int>(groups.size()) || !groups[group].autoscale.enabled) {
      PolicyBug("autoscaler grew group " + std::to_string(group) + ", not a pool");
    }
    if (count < 0 || pools_.provisioned(group) + count > groups[group].autoscale.max) {
      PolicyBug("autoscaler asked for " + std::to_string(count) + " nodes of group " +
                std::to_string(group) + " beyond its max");
    }
    int left = count;
    for (int node : pools_.nodes(group)) {
      if (left == 0) break;
      if (pools_.state(node) != PoolNodeState::kOff) continue;
      pools_.Request(node, now_);
      Push(now_ + pools_.ProvisionSeconds(group), kTimerRank, kPoolReadyJob,
           static_cast<uint32_t>(node));
      --left;
    }
  }
  // Scan again while jobs are left or a pool could still shrink.
  bool more = jobs_done_ < static_cast<int64_t>(trace_.jobs.size());
  for (int group : pools_.groups()) {
    more = more || pools_.provisioned(group) > groups[group].autoscale.min;
  }
  if (more) Push(now_ + options_.autoscaler->scan_interval_seconds(), kTimerRank, kPoolScanJob, 0);
}

void Engine::CheckPoolInvariants() const {
  // No job on a node that is not ready (a pool node, or a spot node gone and not yet replaced);
  // a node not ready has every GPU out of placement.
  for (JobId id : running_) {
    for (int g : Live(id).allocation.gpus) {
      const int node = cluster_.NodeOfGpu(g);
      CHECK(pools_.state(node) == PoolNodeState::kReady,
            "job " + trace_.jobs[id].id + " runs on node " + std::to_string(node) +
                ", which is not ready");
    }
  }
  int out = 0;
  auto held_out = [&](const Node& n) {
    for (int g = n.first_gpu; g < n.first_gpu + n.gpu_count; ++g) {
      CHECK(!resources_.IsGpuFree(g) &&
                std::binary_search(failed_gpus_.begin(), failed_gpus_.end(), g),
            "GPU " + std::to_string(g) + " of a node not ready is free or in service");
    }
    out += n.gpu_count;
  };
  if (spot_.on) {
    // Fixed spot nodes being replaced.
    for (const Node& n : cluster_.nodes()) {
      if (!n.pool && pools_.state(n.index) != PoolNodeState::kReady) held_out(n);
    }
  }
  for (int group : pools_.groups()) {
    int provisioned = 0;
    for (int node : pools_.nodes(group)) {
      if (pools_.state(node) == PoolNodeState::kReady) continue;
      provisioned += pools_.state(node) == PoolNodeState::kRequested;
      held_out(cluster_.node(node));
    }
    const auto& spec = cluster_.spec().groups[group].autoscale;
    // Spot interruptions may take a pool below its min (the autoscaler grows it again only for
    // waiting jobs, docs/autoscaling.md#spot-capacity).
    const bool spot = cluster_.spec().groups[group].spot.enabled;
    CHECK((spot ||
           pools_.provisioned(group) >= std::min(spec.min, cluster_.spec().groups[group].count)) &&
              pools_.provisioned(group) <= spec.max,
          "pool " + std::to_string(group) + " outside its min and max");
    CHECK(provisioned == pools_.requested(group), "pool requested count out of step");
  }
  CHECK(out == pool_out_gpus_, "unprovisioned GPU count out of step");
}

}  // namespace clustersim
