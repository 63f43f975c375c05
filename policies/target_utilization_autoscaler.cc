// `--autoscaler target-utilization` (docs/autoscaling.md#target-utilization): keeps the GPUs
// jobs need at a target share of the GPUs provisioned, as a target tracking policy does, with the
// rules of two documented autoscalers:
// - The metric is Amazon ECS cluster auto scaling's CapacityProviderReservation (Amazon ECS
//   Developer Guide, "Automatically manage Amazon ECS capacity with cluster auto scaling"): the
//   capacity the work needs over the capacity provisioned, here per GPU type: GPUs held by
//   running jobs plus GPUs of queued jobs that do not fit now and could run on a pool's nodes
//   (PoolFit), over the GPUs of fixed nodes plus pool nodes requested or ready. Its target,
//   `--param target_utilization` (0 < t <= 1), is ECS's targetCapacity, whose documented default
//   of 100 % keeps no spare capacity.
// - The step follows Kubernetes' Horizontal Pod Autoscaler (kubernetes.io, "Horizontal Pod
//   Autoscaling", "Algorithm details"): the desired capacity is ceil(demand / target) GPUs, so
//   a pool gets the nodes that capacity needs beyond the fixed nodes (pools of one GPU type in
//   cluster spec order), within its min and max; no change while demand / (target x capacity)
//   is within 0.1 of 1 (the HPA's --horizontal-pod-autoscaler-tolerance default); a scan every
//   15 s (its --horizontal-pod-autoscaler-sync-period default); scale-up at once and in one
//   step (ECS's maximumScalingStepSize default is 10,000 instances); scale-down to the highest
//   recommendation of the last `--param scale_down_stabilization` seconds (the HPA's
//   --horizontal-pod-autoscaler-downscale-stabilization default, 300 s).
// Only ready nodes that run nothing are released, highest index first: jobs are not moved.
#include <algorithm>
#include <cmath>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "policies/pool_fit.h"
#include "policies/registry.h"
#include "sim/engine/policy.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr double kScanIntervalSeconds = 15;  // HPA --horizontal-pod-autoscaler-sync-period
constexpr double kTolerance = 0.1;           // HPA --horizontal-pod-autoscaler-tolerance

class TargetUtilization final : public Autoscaler {
 public:
  TargetUtilization(double target, double window) : target_(target), window_(window) {}

  double scan_interval_seconds() const override { return kScanIntervalSeconds; }

  void Scan(const SchedulingContext& ctx, const NodePools& pools, ScaleDecision* out) override {
    const Cluster& cluster = ctx.cluster();
    if (history_.empty()) history_.resize(cluster.spec().groups.size());
    // Demand per GPU type: GPUs held by running jobs, plus the GPUs of queued jobs that do not
    // fit now, each counted for the first pool (spec order) whose nodes it could run on
    // (PoolFit; a job no pool could take asks for no capacity).
    int types = 0;
    for (int type : cluster.gpu_types()) types = std::max(types, type + 1);
    demand_.assign(types, 0.0);
    for (JobId id : ctx.running()) {
      const Allocation& a = ctx.active(id).allocation;
      if (a.gpu_type < 0) continue;
      demand_[a.gpu_type] += a.milli > 0 ? a.gpus.size() * a.milli / 1000.0 : a.gpus.size();
    }
    for (JobId id = ctx.QueueFront(); id != kNoJob; id = ctx.QueueNext(id)) {
      const PlacementRequest& request = ctx.active(id).request;
      if (request.gpus <= 0 || ctx.TryPlace(id, &scratch_)) continue;
      for (int group : pools.groups()) {
        if (fit_.Fits(ctx, pools, group, id)) {
          demand_[PoolType(cluster, pools, group)] += request.gpus;
          break;
        }
      }
    }
    // Per GPU type with a pool: the recommendation of each of its pools.
    const auto& groups = cluster.spec().groups;
    for (size_t i = 0; i < pools.groups().size(); ++i) {
      const int type = PoolType(cluster, pools, pools.groups()[i]);
      bool seen = false;  // pools of this type are handled with the first of them
      for (size_t j = 0; j < i; ++j) seen |= PoolType(cluster, pools, pools.groups()[j]) == type;
      if (seen) continue;
      double capacity = FixedGpus(cluster, type);
      for (int group : pools.groups()) {
        if (PoolType(cluster, pools, group) == type) {
          capacity += pools.provisioned(group) * groups[group].gpus_per_node;
        }
      }
      const double demand = demand_[type];
      // Within the tolerance (or nothing provisioned and nothing needed) every pool stays.
      const bool steady =
          capacity > 0 ? std::abs(demand / (target_ * capacity) - 1) <= kTolerance : demand == 0;
      double needed = std::ceil(demand / target_ - 1e-9) - FixedGpus(cluster, type);
      for (int group : pools.groups()) {
        if (PoolType(cluster, pools, group) != type) continue;
        const NodeGroupSpec& spec = groups[group];
        int recommended = pools.provisioned(group);
        if (!steady) {
          // Compared as a double first: a tiny target makes `needed` beyond any int.
          const double nodes = needed > 0 ? std::ceil(needed / spec.gpus_per_node) : 0;
          recommended = nodes >= spec.autoscale.max
                            ? spec.autoscale.max
                            : std::max(spec.autoscale.min, static_cast<int>(nodes));
          needed -= static_cast<double>(recommended) * spec.gpus_per_node;
        }
        Apply(ctx, pools, group, recommended, out);
      }
    }
  }

 private:
  static int PoolType(const Cluster& cluster, const NodePools& pools, int group) {
    return cluster.node(pools.nodes(group).front()).gpu_type;
  }

  // GPUs of `type` on nodes that are not pool nodes (fixed for the run).
  static double FixedGpus(const Cluster& cluster, int type) {
    double gpus = 0;
    for (const Node& node : cluster.nodes()) {
      if (!node.pool && node.gpu_type == type) gpus += node.gpu_count;
    }
    return gpus;
  }

  // Scale-up to `recommended` now; scale-down to the highest recommendation of the window.
  void Apply(const SchedulingContext& ctx, const NodePools& pools, int group, int recommended,
             ScaleDecision* out) {
    std::deque<std::pair<double, int>>& history = history_[group];
    const double now = ctx.now();
    history.emplace_back(now, recommended);
    while (!history.empty() && history.front().first <= now - window_) history.pop_front();
    const int provisioned = pools.provisioned(group);
    if (recommended > provisioned) {
      out->add.emplace_back(group, recommended - provisioned);
      return;
    }
    int stabilized = 0;
    for (const auto& [time, count] : history) stabilized = std::max(stabilized, count);
    int releasable = provisioned - stabilized;
    const std::vector<int>& nodes = pools.nodes(group);
    const Resources& free = ctx.resources();
    for (auto it = nodes.rbegin(); it != nodes.rend() && releasable > 0; ++it) {
      if (pools.state(*it) != PoolNodeState::kReady) continue;
      if (!free.NodeIdle(*it)) continue;
      out->release.push_back(*it);
      --releasable;
    }
  }

  const double target_;
  const double window_;
  std::vector<double> demand_;
  std::vector<std::deque<std::pair<double, int>>> history_;  // per cluster group
  PoolFit fit_;
  Allocation scratch_;
};

std::unique_ptr<Autoscaler> Make(const Params& params) {
  const double target = params.Double("target_utilization", 1.0);
  if (!(target > 0 && target <= 1)) {
    throw InputError("--param target_utilization=" + params.String("target_utilization", "") +
                     ": expected a share of the provisioned GPUs in (0, 1] (1 = no spare "
                     "capacity; docs/autoscaling.md#target-utilization)");
  }
  const double window = params.Double("scale_down_stabilization", 300);
  if (!(window >= 0 && window <= 7 * 86400)) {
    throw InputError("--param scale_down_stabilization=" +
                     params.String("scale_down_stabilization", "") +
                     ": expected seconds from 0 to 604800 (one week)");
  }
  return std::make_unique<TargetUtilization>(target, window);
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_AUTOSCALER(target_utilization, "target-utilization",
                               "keeps the GPUs jobs need at a target share of those provisioned "
                               "(ECS's metric and default 100 %, the HPA's step, tolerance and "
                               "300 s scale-down window); 15 s scans",
                               clustersim::Make);
