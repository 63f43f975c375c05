// k8s-default placement (docs/spreading.md#k8s-default): kube-scheduler's default node scoring,
// Kubernetes v1.29 — NodeResourcesFit with the LeastAllocated strategy plus
// NodeResourcesBalancedAllocation, each weight 1 (policies/k8s_scores.h for the formulas and
// sources). It spreads: the emptiest node wins, where best-fit packs.
//
// Scored resources: the node's GPUs, as the extended resource nvidia.com/gpu the NVIDIA device
// plugin advertises (allocatable = the node's GPUs, requested = GPUs held + the job's), weight 1;
// and, when the run limits host resources (Resources::host_limited) and the node declares them,
// its CPUs (milli-cores) and host memory (MiB), weight 1 each, requested = what the running jobs
// are charged there + the job's charge (HostChargeOn). Upstream's default resources are cpu and
// memory only; clustersim adds the GPUs because they are what every cluster spec models and what
// a GPU cluster's scheduler configuration lists in scoringStrategy.resources. Without host limits
// a node scores by its GPUs alone (BalancedAllocation is then 100 everywhere).
//
// A job of n GPUs on a partition of G GPUs per node: n <= G — every node of an allowed type with
// n free GPUs (and room for its host charge) is scored, the highest wins; n > G — the job is
// placed pod by pod, one pod per node, in the first allowed partition with n free GPUs: each step
// scores the nodes not yet taken for a pod of min(free, GPUs still to place) and takes the
// highest. Ties go to the lowest node index (kube-scheduler picks among tied nodes at random).
// Within a node, its lowest-index free GPUs. GPU shares are not placed as shares (a fractional
// job gets a whole GPU). A CPU-only job (docs/resources.md#cpu-only-jobs) takes the best-scored
// node with room for it, its pod requesting no GPUs. Cost: O(nodes) per query (every node is
// scored, as kube-scheduler does with percentageOfNodesToScore at 100%).
// Parameters: none.
#include <algorithm>
#include <vector>

#include "policies/k8s_scores.h"
#include "policies/registry.h"

namespace clustersim {
namespace {

class K8sDefault final : public Placement {
 public:
  bool PlacesCpuOnly() const override { return true; }
  bool Find(const Resources& resources, const PlacementRequest& request,
            Allocation* out) const override {
    out->gpus.clear();
    out->gpu_type = -1;
    out->milli = 0;
    out->node = -1;
    if (IsCpuOnly(request)) {
      // A CPU-only job: the best-scored node whose free CPUs and memory take it (CpuOnlyFits).
      int best = -1;
      int64_t best_score = -1;
      for (int node = 0; node < resources.cluster().node_count(); ++node) {
        if (!CpuOnlyFits(resources, node, request)) continue;
        const int64_t score = Score(resources, request, node, 0, 0);
        if (score > best_score) {  // nodes ascend: a tie keeps the lower index
          best = node;
          best_score = score;
        }
      }
      if (best < 0) return false;
      out->node = best;
      out->gpu_type = resources.cluster().node(best).gpu_type;
      return true;
    }
    const int n = std::max(1, request.gpus);
    // One node: the best-scored node of every allowed partition with G >= n.
    int best = -1;
    int64_t best_score = -1;
    bool single = false;
    for (const Partition& part : resources.partitions()) {
      if (!request.AllowsType(part.gpu_type) || part.gpus_per_node < n) continue;
      single = true;
      for (int node : part.nodes) {
        if (resources.free_gpus(node) < n || !resources.HostFitsJob(node, request.host, n, n)) {
          continue;
        }
        const int64_t score = Score(resources, request, node, n, n);
        if (score > best_score || (score == best_score && node < best)) {
          best = node;
          best_score = score;
        }
      }
    }
    if (best >= 0) {
      resources.AppendLowestFreeGpus(best, n, &out->gpus);
      out->gpu_type = resources.cluster().node(best).gpu_type;
      return true;
    }
    if (single) return false;
    // Pod by pod in the first allowed partition with G < n and n free GPUs.
    for (const Partition& part : resources.partitions()) {
      if (!request.AllowsType(part.gpu_type) || part.gpus_per_node >= n) continue;
      int free = 0;
      for (int node : part.nodes) free += resources.free_gpus(node);
      if (free < n) continue;
      std::vector<char> taken(part.nodes.size(), 0);
      int left = n;
      out->gpus.clear();
      while (left > 0) {
        int pick = -1;
        int64_t pick_score = -1;
        for (size_t i = 0; i < part.nodes.size(); ++i) {
          const int node = part.nodes[i];
          const int pod = std::min(resources.free_gpus(node), left);
          if (taken[i] || pod == 0 || !resources.HostFitsJob(node, request.host, pod, n)) continue;
          const int64_t score = Score(resources, request, node, pod, n);
          if (score > pick_score) {  // nodes ascend: a tie keeps the lower index
            pick = static_cast<int>(i);
            pick_score = score;
          }
        }
        if (pick < 0) break;
        taken[pick] = 1;
        const int pod = std::min(resources.free_gpus(part.nodes[pick]), left);
        resources.AppendLowestFreeGpus(part.nodes[pick], pod, &out->gpus);
        left -= pod;
      }
      if (left > 0) continue;
      std::sort(out->gpus.begin(), out->gpus.end());
      out->gpu_type = part.gpu_type;
      return true;
    }
    out->gpus.clear();
    return false;
  }

 private:
  // LeastAllocated + BalancedAllocation of `node` with `pod` of the job's `n` GPUs placed on it.
  static int64_t Score(const Resources& resources, const PlacementRequest& request, int node,
                       int pod, int n) {
    const Node& info = resources.cluster().node(node);
    std::vector<ScoredResource> scored;
    scored.push_back({info.gpu_count, info.gpu_count - resources.free_gpus(node) + pod, 1});
    if (resources.host_limited()) {
      const HostCharge charge = HostChargeOn(info, request.host, pod, n, 0);
      if (const int32_t cpus = NodeCpuMilli(info); cpus > 0) {
        scored.push_back(
            {cpus, int64_t{cpus} - resources.free_cpu_milli(node) + charge.cpu_milli, 1});
      }
      if (const int32_t memory = NodeMemoryMib(info); memory > 0) {
        scored.push_back(
            {memory, int64_t{memory} - resources.free_memory_mib(node) + charge.memory_mib, 1});
      }
    }
    return LeastAllocatedScore(scored) + BalancedAllocationScore(scored);
  }
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_PLACEMENT(k8s_default, "k8s-default",
                              "kube-scheduler's default scoring (v1.29): LeastAllocated + "
                              "BalancedAllocation over GPUs (and CPUs, memory when modelled); "
                              "the emptiest node wins, ties lowest index",
                              [](const clustersim::PlacementEnv&, const clustersim::Params&) {
                                return std::make_unique<clustersim::K8sDefault>();
                              });
