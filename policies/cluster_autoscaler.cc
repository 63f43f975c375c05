// `--autoscaler cluster-autoscaler` (docs/autoscaling.md#cluster-autoscaler): the Kubernetes
// Cluster Autoscaler's documented rules (kubernetes/autoscaler, cluster-autoscaler/FAQ.md, "How
// does scale-up work?" and "How does scale-down work?"), with jobs as pods and a node group's
// nodes as its template node.
//
// Every scan (10 s, the FAQ's --scan-interval default), after the scheduling pass:
// - Scale-up. The unschedulable jobs are the queued jobs that do not fit the free GPUs now
//   (SchedulingContext::TryPlace). For each pool (in cluster spec order, standing in for CA's
//   expanders), the jobs that may use its GPU type and no earlier pool took are bin-packed onto
//   its nodes still provisioning and then onto new template nodes, first fit in decreasing
//   order of GPUs (CA's binpacking estimator: First-Fit Decreasing; ties in queue order), never
//   beyond the pool's max. A job wider than a node takes ceil(gpus / node GPUs) nodes of its
//   own. The new nodes are requested.
// - Scale-down, in a pool that did not grow at this scan: a ready node found empty at every
//   scan for idle_seconds (CA's --scale-down-unneeded-time, 10 min) is released, highest index
//   first, never below the pool's min. Only empty nodes go: jobs are not moved to free a node.
#include <algorithm>
#include <cmath>
#include <vector>

#include "policies/registry.h"
#include "sim/engine/policy.h"

namespace clustersim {
namespace {

constexpr double kScanIntervalSeconds = 10;  // CA FAQ: --scan-interval default 10s

class ClusterAutoscaler final : public Autoscaler {
 public:
  double scan_interval_seconds() const override { return kScanIntervalSeconds; }

  void Scan(const SchedulingContext& ctx, const NodePools& pools, ScaleDecision* out) override {
    const Cluster& cluster = ctx.cluster();
    waiting_.clear();
    for (JobId id = ctx.QueueFront(); id != kNoJob; id = ctx.QueueNext(id)) {
      if (ctx.active(id).request.gpus > 0 && !ctx.TryPlace(id, &scratch_)) waiting_.push_back(id);
    }
    std::stable_sort(waiting_.begin(), waiting_.end(), [&](JobId a, JobId b) {
      return ctx.active(a).request.gpus > ctx.active(b).request.gpus;
    });
    for (int group : pools.groups()) {
      const NodeGroupSpec& spec = cluster.spec().groups[group];
      const int per_node = spec.gpus_per_node;
      const int type = cluster.node(pools.nodes(group).front()).gpu_type;
      // Free GPUs of the bins: nodes provisioning (they run nothing yet), then new ones.
      free_.assign(pools.requested(group), per_node);
      const int can_add = spec.autoscale.max - pools.provisioned(group);
      int added = 0;
      for (JobId& id : waiting_) {
        if (id == kNoJob || !ctx.active(id).request.AllowsType(type)) continue;
        const int gpus = ctx.active(id).request.gpus;
        if (gpus <= per_node) {
          auto bin = std::find_if(free_.begin(), free_.end(), [&](int f) { return f >= gpus; });
          if (bin == free_.end()) {
            if (added == can_add) continue;
            ++added;
            free_.push_back(per_node);
            bin = free_.end() - 1;
          }
          *bin -= gpus;
        } else {
          const int nodes = (gpus + per_node - 1) / per_node;
          int empty = 0;
          for (int f : free_) empty += f == per_node;
          const int fresh = std::max(0, nodes - empty);
          if (added + fresh > can_add) continue;
          int take = nodes - fresh;
          for (int& f : free_) {
            if (take > 0 && f == per_node) {
              f = 0;
              --take;
            }
          }
          added += fresh;
          free_.insert(free_.end(), fresh, 0);
        }
        id = kNoJob;  // packed: later pools do not count it again
      }
      if (added > 0) {
        out->add.emplace_back(group, added);
        continue;
      }
      int releasable = pools.provisioned(group) - spec.autoscale.min;
      const std::vector<int>& nodes = pools.nodes(group);
      for (auto it = nodes.rbegin(); it != nodes.rend() && releasable > 0; ++it) {
        const double since = pools.empty_since(*it);
        if (pools.state(*it) != PoolNodeState::kReady || std::isnan(since)) continue;
        if (ctx.now() - since < spec.autoscale.idle_seconds) continue;
        out->release.push_back(*it);
        --releasable;
      }
    }
  }

 private:
  std::vector<JobId> waiting_;
  std::vector<int> free_;
  Allocation scratch_;
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_AUTOSCALER(cluster_autoscaler, "cluster-autoscaler",
                               "Kubernetes Cluster Autoscaler: binpacking scale-up, scale-down "
                               "of nodes empty for idle_seconds; 10 s scans",
                               [](const clustersim::Params&) {
                                 return std::unique_ptr<clustersim::Autoscaler>(
                                     std::make_unique<clustersim::ClusterAutoscaler>());
                               });
