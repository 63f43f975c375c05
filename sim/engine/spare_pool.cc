#include "sim/engine/spare_pool.h"

#include "sim/util/error.h"

namespace clustersim {

SparePool::SparePool(const Cluster& cluster)
    : cluster_(&cluster),
      in_pool_(cluster.node_count(), 0),
      held_(cluster.total_gpus(), 0),
      node_held_(cluster.node_count(), 0),
      pool_size_(cluster.spec().groups.size(), 0),
      usable_(cluster.spec().groups.size()) {
  for (const Node& node : cluster.nodes()) {
    if (node.spare) Enter(node.index);
  }
}

void SparePool::Hold(int gpu) {
  const int node = cluster_->NodeOfGpu(gpu);
  CHECK(in_pool_[node] && !held_[gpu], "spare pool: holding a GPU twice or off the pool");
  held_[gpu] = 1;
  ++node_held_[node];
  ++held_gpus_;
  Refresh(node);
}

void SparePool::Unhold(int gpu) {
  const int node = cluster_->NodeOfGpu(gpu);
  CHECK(held_[gpu], "spare pool: letting go of a GPU not held");
  held_[gpu] = 0;
  --node_held_[node];
  --held_gpus_;
  Refresh(node);
}

void SparePool::Enter(int node) {
  CHECK(!in_pool_[node], "spare pool: node entered twice");
  in_pool_[node] = 1;
  ++pool_size_[cluster_->node(node).group];
  Refresh(node);
}

void SparePool::Leave(int node) {
  CHECK(in_pool_[node] && node_held_[node] == 0, "spare pool: node leaves with GPUs held");
  in_pool_[node] = 0;
  --pool_size_[cluster_->node(node).group];
  Refresh(node);
}

int SparePool::FirstUsable(int group) const {
  return usable_[group].empty() ? -1 : *usable_[group].begin();
}

void SparePool::Refresh(int node) {
  const Node& n = cluster_->node(node);
  if (in_pool_[node] && node_held_[node] == n.gpu_count) {
    usable_[n.group].insert(node);
  } else {
    usable_[n.group].erase(node);
  }
}

}  // namespace clustersim
