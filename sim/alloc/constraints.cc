#include "sim/alloc/constraints.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace clustersim {

bool NodeLimits::IsDataNode(int node) const {
  return std::binary_search(data_nodes.begin(), data_nodes.end(), node);
}

int LocalityNeed(double alpha, int gpus) {
  if (alpha <= 0 || gpus <= 0) return 0;
  const double exact = alpha * gpus;
  const double nearest = std::round(exact);
  if (std::abs(exact - nearest) <= 1e-9 * std::max(1.0, exact)) {
    return static_cast<int>(nearest);
  }
  return static_cast<int>(std::ceil(exact));
}

std::string CheckNodeLimits(const std::vector<std::pair<int, int>>& per_node,
                            const NodeLimits& limits) {
  int total = 0;
  int local = 0;
  int nodes = 0;
  for (const auto& [node, gpus] : per_node) {
    if (gpus <= 0) continue;
    total += gpus;
    ++nodes;
    if (limits.IsDataNode(node)) local += gpus;
  }
  char text[160];
  if (limits.max_nodes > 0 && nodes > limits.max_nodes) {
    std::snprintf(text, sizeof text, "%d nodes; at most %d allowed (max_nodes)", nodes,
                  limits.max_nodes);
    return text;
  }
  if (!limits.data_nodes.empty()) {
    const int need = LocalityNeed(limits.alpha, total);
    if (local < need) {
      std::snprintf(text, sizeof text, "%d of %d GPUs on its data nodes; needs %d (alpha %g)", local,
                    total, need, limits.alpha);
      return text;
    }
  }
  return "";
}

std::vector<std::pair<int, int>> SpreadOverNodes(std::vector<NodeOffer> offers, int gpus,
                                                 int need_local, int max_nodes) {
  std::vector<std::pair<int, int>> out;
  if (gpus <= 0) return out;
  std::vector<NodeOffer> data, other;
  for (const NodeOffer& o : offers) {
    if (o.free > 0) (o.data ? data : other).push_back(o);
  }
  const auto fuller = [](const NodeOffer& a, const NodeOffer& b) {
    return a.free != b.free ? a.free > b.free : a.node < b.node;
  };
  std::sort(data.begin(), data.end(), fuller);
  std::sort(other.begin(), other.end(), fuller);
  // prefix[k] = GPUs free on the k fullest nodes of a kind.
  auto prefix = [](const std::vector<NodeOffer>& v) {
    std::vector<long long> p(v.size() + 1, 0);
    for (size_t i = 0; i < v.size(); ++i) p[i + 1] = p[i] + v[i].free;
    return p;
  };
  const std::vector<long long> pd = prefix(data);
  const std::vector<long long> po = prefix(other);
  const int nd = static_cast<int>(data.size());
  const int no = static_cast<int>(other.size());
  const int limit = max_nodes > 0 ? std::min(max_nodes, nd + no) : nd + no;
  for (int k = 1; k <= limit; ++k) {
    for (int d = std::min(k, nd); d >= std::max(0, k - no); --d) {
      if (pd[d] < need_local || pd[d] + po[k - d] < gpus) continue;
      int left = gpus;
      for (int i = 0; i < d && left > 0; ++i) {
        const int take = std::min(left, data[i].free);
        out.emplace_back(data[i].node, take);
        left -= take;
      }
      for (int i = 0; i < k - d && left > 0; ++i) {
        const int take = std::min(left, other[i].free);
        out.emplace_back(other[i].node, take);
        left -= take;
      }
      std::sort(out.begin(), out.end());
      return out;
    }
  }
  return out;
}

}  // namespace clustersim
