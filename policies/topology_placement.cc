// topology placement (docs/policies.md): among feasible placements, the one with the lowest
// communication cost on the topology graph, scored with the run's runtime model. Candidates: for
// a job that fits in one node, up to `candidates` nodes with enough free GPUs (fewest free first,
// then lowest index) and, in each, every subset of its free GPUs when it has at most 8 free (else
// every window of consecutive free GPUs); for a larger job, whole free nodes taken rack by rack
// (plus one node for the remainder), and the first-fit choice. Score: higher runtime-model rate,
// then higher ring bandwidth on the topology, then fewer nodes, then lower GPU indices.
// Cost per job: O(candidates x subsets x ring evaluation); the topology caches ring results.
// Nodes whose free CPUs or memory cannot take the job are not candidates (docs/resources.md); a
// CPU-only job takes the lowest-index node with room for it (PlaceCpuOnly).
// Parameters: candidates (16): nodes examined per single-node job; type_order (listed): GPU-type
// order, TypeOrder in policies/node_placement.h (with `listed` the score compares every type).
#include <algorithm>
#include <limits>

#include "policies/node_placement.h"
#include "policies/registry.h"
#include "sim/engine/job.h"
#include "sim/engine/runtime_model.h"
#include "sim/hardware/topology.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

struct Score {
  double rate = -1;
  double ring_gbps = -1;
  int nodes = 0;
  bool operator>(const Score& o) const {
    if (rate != o.rate) return rate > o.rate;
    if (ring_gbps != o.ring_gbps) return ring_gbps > o.ring_gbps;
    return nodes < o.nodes;
  }
};

class TopologyPlacement final : public Placement {
 public:
  TopologyPlacement(const PlacementEnv& env, int candidates, const Params& params)
      : env_(env), candidates_(candidates), order_(env, params) {
    default_job_.gpus = 1;
  }

  bool PlacesCpuOnly() const override { return true; }
  bool Find(const Resources& resources, const PlacementRequest& request,
            Allocation* out) const override {
    // Nothing to communicate: the lowest-index node with room.
    if (IsCpuOnly(request)) return PlaceCpuOnly(resources, request, NodeRule::kFirstFit, out);
    return order_.Place(resources, request, out,
                        [&](const PlacementRequest& one, Allocation* found) {
                          return FindAnyType(resources, one, found);
                        });
  }

 private:
  bool FindAnyType(const Resources& resources, const PlacementRequest& request,
                   Allocation* out) const {
    out->gpus.clear();
    out->gpu_type = -1;
    if (request.gpus <= 0) return false;
    Score best_score;
    bool found = false;
    auto consider = [&](int type, std::vector<int>& gpus) {
      std::sort(gpus.begin(), gpus.end());
      Allocation candidate{gpus, type};
      const Score score = Evaluate(request, candidate);
      if (!found || score > best_score ||
          (!(best_score > score) && candidate.gpus < out->gpus)) {
        best_score = score;
        *out = std::move(candidate);
        found = true;
      }
    };
    const int n = request.gpus;
    for (const Partition& part : resources.partitions()) {
      if (!request.AllowsType(part.gpu_type)) continue;
      if (n <= part.gpus_per_node) {
        SingleNodeCandidates(resources, part, request,
                             [&](std::vector<int>& gpus) { consider(part.gpu_type, gpus); });
      } else {
        MultiNodeCandidates(resources, part, request,
                            [&](std::vector<int>& gpus) { consider(part.gpu_type, gpus); });
      }
    }
    return found;
  }

  Score Evaluate(const PlacementRequest& request, const Allocation& a) const {
    Score s;
    const Job& job = request.job ? *request.job : default_job_;
    s.rate = env_.runtime ? env_.runtime->Rate(job, a) : 1.0;
    s.ring_gbps = a.gpus.size() < 2 || !env_.topology
                      ? std::numeric_limits<double>::infinity()
                      : env_.topology->RingBandwidthGbps(a.gpus);
    int nodes = 1;
    for (size_t i = 1; i < a.gpus.size(); ++i) {
      nodes += env_.cluster->NodeOfGpu(a.gpus[i]) != env_.cluster->NodeOfGpu(a.gpus[i - 1]);
    }
    s.nodes = nodes;
    return s;
  }

  template <typename Visit>
  void SingleNodeCandidates(const Resources& resources, const Partition& part,
                            const PlacementRequest& request, Visit visit) const {
    const int n = request.gpus;
    int examined = 0;
    for (int f = n; f <= part.gpus_per_node && examined < candidates_; ++f) {
      for (int pos = part.by_free[f].FindFirst(); pos >= 0 && examined < candidates_;
           pos = part.by_free[f].FindFrom(pos + 1)) {
        if (!resources.HostFitsJob(part.nodes[pos], request.host, n, n)) continue;
        ++examined;
        std::vector<int> free_gpus;
        resources.AppendLowestFreeGpus(part.nodes[pos], f, &free_gpus);
        std::vector<int> pick;
        if (f <= 8) {
          // Every n-subset of the free GPUs, in lexicographic order.
          std::vector<bool> mask(f, false);
          std::fill(mask.begin(), mask.begin() + n, true);
          do {
            pick.clear();
            for (int i = 0; i < f; ++i) {
              if (mask[i]) pick.push_back(free_gpus[i]);
            }
            visit(pick);
          } while (std::prev_permutation(mask.begin(), mask.end()));
        } else {
          for (int i = 0; i + n <= f; ++i) {
            pick.assign(free_gpus.begin() + i, free_gpus.begin() + i + n);
            visit(pick);
          }
        }
      }
    }
  }

  template <typename Visit>
  void MultiNodeCandidates(const Resources& resources, const Partition& part,
                           const PlacementRequest& original, Visit visit) const {
    const int n = original.gpus;
    const int g = part.gpus_per_node;
    const int whole = n / g;
    const int remainder = n % g;
    // Whole free nodes grouped by rack, so a job can stay under one leaf switch.
    std::vector<std::vector<int>> by_rack(env_.cluster->rack_count());
    for (int pos = part.by_free[g].FindFirst(); pos >= 0; pos = part.by_free[g].FindFrom(pos + 1)) {
      const int node = part.nodes[pos];
      if (!resources.HostFitsJob(node, original.host, g, n)) continue;
      by_rack[env_.cluster->node(node).rack].push_back(node);
    }
    std::vector<int> pick;
    for (const auto& nodes : by_rack) {
      const int needed = whole + (remainder > 0 ? 1 : 0);
      if (static_cast<int>(nodes.size()) < (remainder > 0 ? whole : needed)) continue;
      pick.clear();
      for (int i = 0; i < whole; ++i) resources.AppendLowestFreeGpus(nodes[i], g, &pick);
      if (remainder > 0) {
        // The remainder on the rack's fullest node that fits it, else on a further whole node.
        // Racks are consecutive node ranges (Node::rack = index / nodes_per_rack).
        const int per_rack = env_.cluster->spec().network.nodes_per_rack;
        const int rack = env_.cluster->node(nodes[0]).rack;
        const int end = std::min(env_.cluster->node_count(), (rack + 1) * per_rack);
        int best = -1;
        for (int node = rack * per_rack; node < end; ++node) {
          const Node& info = env_.cluster->node(node);
          const int free = resources.free_gpus(node);
          if (info.gpu_type != part.gpu_type || info.gpu_count != g || free < remainder ||
              std::find(nodes.begin(), nodes.begin() + whole, node) != nodes.begin() + whole ||
              !resources.HostFitsJob(node, original.host, remainder, n)) {
            continue;
          }
          if (best < 0 || free < resources.free_gpus(best)) best = node;
        }
        if (best < 0) continue;
        resources.AppendLowestFreeGpus(best, remainder, &pick);
      }
      visit(pick);
    }
    // The first-fit choice, which may span racks.
    Allocation first_fit;
    PlacementRequest request;
    request.gpus = n;
    request.host = original.host;
    request.type_mask = uint64_t{1} << part.gpu_type;
    if (PlaceOnNodes(resources, request, NodeRule::kFirstFit, &first_fit)) visit(first_fit.gpus);
  }

  PlacementEnv env_;
  int candidates_;
  TypeOrder order_;
  Job default_job_;
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_PLACEMENT(
    topology, "topology",
    "lowest communication cost on the topology graph (same NVLink domain, node, rack), scored "
    "with the runtime model",
    [](const clustersim::PlacementEnv& env, const clustersim::Params& params) {
      const int candidates = params.Int("candidates", 16);
      if (candidates < 1) throw clustersim::InputError("parameter candidates: expected >= 1");
      return std::make_unique<clustersim::TopologyPlacement>(env, candidates, params);
    },
    /*uses_topology=*/true);
