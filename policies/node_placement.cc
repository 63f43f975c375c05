#include "policies/node_placement.h"

#include <algorithm>

namespace clustersim {
namespace {

bool Excluded(const std::vector<int>& exclude, int pos) {
  return std::binary_search(exclude.begin(), exclude.end(), pos);
}

}  // namespace

int PickNode(const Partition& part, int gpus, NodeRule rule, const std::vector<int>& exclude,
             int* free_count) {
  if (gpus > part.gpus_per_node) return -1;
  if (rule == NodeRule::kFirstFit) {
    int pos = part.free_tree.FindFirstAtLeast(gpus, 0);
    while (pos >= 0 && Excluded(exclude, pos)) pos = part.free_tree.FindFirstAtLeast(gpus, pos + 1);
    if (pos >= 0) *free_count = part.free_tree.Get(pos);
    return pos;
  }
  for (int f = std::max(gpus, 1); f <= part.gpus_per_node; ++f) {
    if (part.by_free_count[f] == 0) continue;
    int pos = part.by_free[f].FindFirst();
    while (pos >= 0 && Excluded(exclude, pos)) pos = part.by_free[f].FindFrom(pos + 1);
    if (pos >= 0) {
      *free_count = f;
      return pos;
    }
  }
  return -1;
}

bool PlaceOnNodes(const Resources& resources, const PlacementRequest& request, NodeRule rule,
                  Allocation* out) {
  out->gpus.clear();
  out->gpu_type = -1;
  const int n = request.gpus;
  if (n <= 0) return false;
  const auto& partitions = resources.partitions();
  static const std::vector<int> kNone;

  // Single node.
  int best_node = -1;
  int best_free = 0;
  for (const Partition& part : partitions) {
    if (!request.AllowsType(part.gpu_type) || part.gpus_per_node < n) continue;
    int free_count = 0;
    const int pos = PickNode(part, n, rule, kNone, &free_count);
    if (pos < 0) continue;
    const int node = part.nodes[pos];
    const bool better = best_node < 0 ||
                        (rule == NodeRule::kFirstFit
                             ? node < best_node
                             : (free_count < best_free ||
                                (free_count == best_free && node < best_node)));
    if (better) {
      best_node = node;
      best_free = free_count;
    }
  }
  if (best_node >= 0) {
    out->gpu_type = resources.cluster().node(best_node).gpu_type;
    resources.AppendLowestFreeGpus(best_node, n, &out->gpus);
    return true;
  }

  // Several nodes: whole free nodes plus one node for the remainder, in one partition.
  return PlaceAcrossNodes(
      resources, request,
      [rule](const Partition& part, int remainder, const std::vector<int>& chosen) {
        int free_count = 0;
        return PickNode(part, remainder, rule, chosen, &free_count);
      },
      out);
}

bool PlaceAcrossNodes(const Resources& resources, const PlacementRequest& request,
                      const RemainderPicker& pick_remainder, Allocation* out) {
  const int n = request.gpus;
  for (const Partition& part : resources.partitions()) {
    const int g = part.gpus_per_node;
    if (!request.AllowsType(part.gpu_type) || n <= g) continue;
    const int whole = n / g;
    const int remainder = n % g;
    if (part.by_free_count[g] < whole) continue;
    std::vector<int> chosen;  // positions, ascending
    for (int pos = part.by_free[g].FindFirst(); pos >= 0 && static_cast<int>(chosen.size()) < whole;
         pos = part.by_free[g].FindFrom(pos + 1)) {
      chosen.push_back(pos);
    }
    int remainder_pos = -1;
    if (remainder > 0) {
      remainder_pos = pick_remainder(part, remainder, chosen);
      if (remainder_pos < 0) continue;
    }
    std::vector<int> nodes;
    for (int pos : chosen) nodes.push_back(part.nodes[pos]);
    if (remainder_pos >= 0) nodes.push_back(part.nodes[remainder_pos]);
    std::sort(nodes.begin(), nodes.end());
    out->gpu_type = part.gpu_type;
    for (int node : nodes) {
      const int take = (remainder_pos >= 0 && node == part.nodes[remainder_pos]) ? remainder : g;
      resources.AppendLowestFreeGpus(node, take, &out->gpus);
    }
    return true;
  }
  return false;
}

}  // namespace clustersim
