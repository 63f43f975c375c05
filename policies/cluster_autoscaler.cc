// `--autoscaler cluster-autoscaler` (docs/autoscaling.md#cluster-autoscaler): the Kubernetes
// Cluster Autoscaler's documented rules (kubernetes/autoscaler, cluster-autoscaler/FAQ.md, "How
// does scale-up work?" and "How does scale-down work?"), with jobs as pods and a node group's
// nodes as its template node.
//
// Every scan (10 s, the FAQ's --scan-interval default), after the scheduling pass:
// - Scale-up. The unschedulable jobs are the queued jobs that do not fit now
//   (SchedulingContext::TryPlace), CPU-only jobs included. For each pool (in cluster spec order,
//   standing in for CA's expanders), the jobs that could run on its nodes (PoolFit: the run's
//   placement on the pool's nodes alone, empty, as CA asks its predicates of the template node)
//   and that no earlier pool took are bin-packed onto its nodes still provisioning and then onto
//   new template nodes, first fit in decreasing order of GPUs (CA's binpacking estimator:
//   First-Fit Decreasing; ties in queue order), never beyond the pool's max. A bin is a node's
//   GPUs and, under host limits, its CPUs and memory; a job takes its charge on one node of
//   them (HostChargeOn); a share of a GPU or a MIG instance counts as one GPU. A job wider than
//   a node, or holding whole nodes, takes ceil(gpus / node GPUs) nodes of its own. The new
//   nodes are requested.
// - Scale-down, in a pool that did not grow at this scan: a ready node found empty at every
//   scan for idle_seconds (CA's --scale-down-unneeded-time, 10 min) is released, highest index
//   first, never below the pool's min. Only empty nodes go: jobs are not moved to free a node.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "policies/pool_fit.h"
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
    const bool host = ctx.resources().host_limited();
    waiting_.clear();
    for (JobId id = ctx.QueueFront(); id != kNoJob; id = ctx.QueueNext(id)) {
      if (!ctx.TryPlace(id, &scratch_)) waiting_.push_back(id);
    }
    std::stable_sort(waiting_.begin(), waiting_.end(), [&](JobId a, JobId b) {
      return ctx.active(a).request.gpus > ctx.active(b).request.gpus;
    });
    for (int group : pools.groups()) {
      const NodeGroupSpec& spec = cluster.spec().groups[group];
      const int per_node = spec.gpus_per_node;
      const Node& node = cluster.node(pools.nodes(group).front());  // the template node
      const Bin whole{per_node, host ? NodeCpuMilli(node) : 0, host ? NodeMemoryMib(node) : 0};
      // Bins: nodes provisioning (they run nothing yet), then new ones.
      bins_.assign(pools.requested(group), whole);
      const int can_add = spec.autoscale.max - pools.provisioned(group);
      int added = 0;
      for (JobId& id : waiting_) {
        if (id == kNoJob || !fit_.Fits(ctx, pools, group, id)) continue;
        const PlacementRequest& request = ctx.active(id).request;
        const int gpus = request.gpus;
        if (gpus <= per_node && !request.whole_nodes) {
          Bin need{gpus, 0, 0};
          if (host) {
            const HostCharge c = HostChargeOn(node, request.host, gpus, gpus, request.milli);
            need.cpu_milli = c.cpu_milli;
            need.memory_mib = c.memory_mib;
          }
          auto bin = std::find_if(bins_.begin(), bins_.end(), [&](const Bin& b) {
            return b.gpus >= need.gpus && b.cpu_milli >= need.cpu_milli &&
                   b.memory_mib >= need.memory_mib;
          });
          if (bin == bins_.end()) {
            if (added == can_add) continue;
            ++added;
            bins_.push_back(whole);
            bin = bins_.end() - 1;
          }
          bin->gpus -= need.gpus;
          bin->cpu_milli -= need.cpu_milli;
          bin->memory_mib -= need.memory_mib;
        } else {
          const int nodes = std::max(1, (gpus + per_node - 1) / per_node);
          int empty = 0;
          for (const Bin& b : bins_) empty += b == whole;
          const int fresh = std::max(0, nodes - empty);
          if (added + fresh > can_add) continue;
          int take = nodes - fresh;
          for (Bin& b : bins_) {
            if (take > 0 && b == whole) {
              b = Bin{};
              --take;
            }
          }
          added += fresh;
          bins_.insert(bins_.end(), fresh, Bin{});
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
  // What a template node has left in the estimate: GPUs, and under host limits CPUs (milli) and
  // memory (MiB); 0 where the run does not limit hosts.
  struct Bin {
    int gpus = 0;
    int32_t cpu_milli = 0;
    int32_t memory_mib = 0;
    bool operator==(const Bin&) const = default;
  };

  std::vector<JobId> waiting_;
  std::vector<Bin> bins_;
  PoolFit fit_;
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
