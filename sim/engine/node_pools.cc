#include "sim/engine/node_pools.h"

#include <cmath>

#include "sim/util/error.h"

namespace clustersim {

const char* NodeEventName(NodeEventKind kind) {
  switch (kind) {
    case NodeEventKind::kRequested:
      return "requested";
    case NodeEventKind::kReady:
      return "ready";
    case NodeEventKind::kReleased:
      return "released";
    case NodeEventKind::kInterrupted:
      return "interrupted";
  }
  return "?";
}

NodePools::NodePools(const Cluster& cluster) : cluster_(&cluster) {
  const size_t groups = cluster.spec().groups.size();
  group_nodes_.resize(groups);
  provisioned_.assign(groups, 0);
  requested_.assign(groups, 0);
  billed_closed_.assign(groups, 0.0);
  state_.assign(cluster.node_count(), PoolNodeState::kReady);
  since_.assign(cluster.node_count(), 0.0);
  empty_since_.assign(cluster.node_count(), kNever);
  for (const Node& node : cluster.nodes()) {
    if (!node.pool) continue;
    if (group_nodes_[node.group].empty()) groups_.push_back(node.group);
    group_nodes_[node.group].push_back(node.index);
    if (node.starts_provisioned) {
      ++provisioned_[node.group];
    } else {
      state_[node.index] = PoolNodeState::kOff;
    }
  }
}

void NodePools::SeedProvisioning(uint64_t seed) {
  // A stream of its own ("prov" in the high bits), so provisioning draws shift no other draw.
  provision_rng_.seed(seed ^ 0x70726f7600000000ULL);
}

double NodePools::ProvisionSeconds(int group) {
  const AutoscaleSpec& spec = cluster_->spec().groups[group].autoscale;
  if (!(spec.provision_max_seconds > spec.provision_seconds)) return spec.provision_seconds;
  // 53 random bits: a uniform double in [0, 1), the same on every standard library.
  const double u = static_cast<double>(provision_rng_() >> 11) * 0x1.0p-53;
  return spec.provision_seconds + u * (spec.provision_max_seconds - spec.provision_seconds);
}

void NodePools::Start(double start) {
  for (size_t n = 0; n < state_.size(); ++n) {
    if (state_[n] != PoolNodeState::kOff) since_[n] = start;
  }
}

double NodePools::BilledGpuSeconds(int group, double end) const {
  double seconds = billed_closed_[group];
  for (int n : group_nodes_[group]) {
    if (state_[n] == PoolNodeState::kOff) continue;
    seconds += cluster_->node(n).gpu_count * std::max(0.0, end - since_[n]);
  }
  return seconds;
}

void NodePools::Request(int node, double now) {
  CHECK(state_[node] == PoolNodeState::kOff, "requested a pool node that is not off");
  const int group = cluster_->node(node).group;
  state_[node] = PoolNodeState::kRequested;
  since_[node] = now;
  ++provisioned_[group];
  ++requested_[group];
  events_.push_back({now, node, NodeEventKind::kRequested});
}

void NodePools::Ready(int node, double now) {
  CHECK(state_[node] == PoolNodeState::kRequested, "a pool node ready that was not requested");
  state_[node] = PoolNodeState::kReady;
  --requested_[cluster_->node(node).group];
  events_.push_back({now, node, NodeEventKind::kReady});
}

void NodePools::Release(int node, double now) {
  CHECK(state_[node] == PoolNodeState::kReady, "released a pool node that is not ready");
  const Node& n = cluster_->node(node);
  state_[node] = PoolNodeState::kOff;
  billed_closed_[n.group] += n.gpu_count * (now - since_[node]);
  empty_since_[node] = kNever;
  --provisioned_[n.group];
  events_.push_back({now, node, NodeEventKind::kReleased});
}

void NodePools::ObserveEmpty(int node, bool is_empty, double now) {
  if (!is_empty) {
    empty_since_[node] = kNever;
  } else if (std::isnan(empty_since_[node])) {
    empty_since_[node] = now;
  }
}

}  // namespace clustersim
