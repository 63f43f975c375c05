#include "sim/alloc/constraints.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

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

namespace {

// The nodes of one kind, sorted fullest first (ties: lower node index) only as far as a search
// reaches: SpreadOverNodes usually takes one or two nodes of hundreds, so a full sort at every
// call would cost O(n log n) where O(n) suffices. The order is a strict total one (node indices
// are distinct), so the sorted prefix is the same as a full sort's.
class FullestFirst {
 public:
  explicit FullestFirst(std::vector<NodeOffer> nodes) : nodes_(std::move(nodes)) {
    prefix_.push_back(0);
  }
  int size() const { return static_cast<int>(nodes_.size()); }
  const NodeOffer& operator[](int i) {
    Reach(i + 1);
    return nodes_[i];
  }
  // GPUs free on the k fullest nodes.
  long long Prefix(int k) {
    Reach(k);
    return prefix_[k];
  }

 private:
  void Reach(int k) {
    if (k <= sorted_) return;
    const int m = std::min(size(), std::max({k, 2 * sorted_, 8}));
    std::partial_sort(nodes_.begin(), nodes_.begin() + m, nodes_.end(),
                      [](const NodeOffer& a, const NodeOffer& b) {
                        return a.free != b.free ? a.free > b.free : a.node < b.node;
                      });
    sorted_ = m;
    prefix_.resize(1);
    for (int i = 0; i < m; ++i) prefix_.push_back(prefix_.back() + nodes_[i].free);
  }

  std::vector<NodeOffer> nodes_;
  std::vector<long long> prefix_;  // prefix_[k] for k <= sorted_
  int sorted_ = 0;
};

}  // namespace

std::vector<std::pair<int, int>> SpreadOverNodes(std::vector<NodeOffer> offers, int gpus,
                                                 int need_local, int max_nodes) {
  std::vector<std::pair<int, int>> out;
  if (gpus <= 0) return out;
  std::vector<NodeOffer> data_nodes, other_nodes;
  long long free_data = 0, free_all = 0;
  for (const NodeOffer& o : offers) {
    if (o.free <= 0) continue;
    (o.data ? data_nodes : other_nodes).push_back(o);
    free_all += o.free;
    if (o.data) free_data += o.free;
  }
  if (free_all < gpus || free_data < need_local) return out;  // no k can do
  FullestFirst data(std::move(data_nodes));
  FullestFirst other(std::move(other_nodes));
  const int nd = data.size();
  const int no = other.size();
  const int limit = max_nodes > 0 ? std::min(max_nodes, nd + no) : nd + no;
  for (int k = 1; k <= limit; ++k) {
    for (int d = std::min(k, nd); d >= std::max(0, k - no); --d) {
      const long long local = data.Prefix(d);
      if (local < need_local || local + other.Prefix(k - d) < gpus) continue;
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
