// Node pools (docs/autoscaling.md): the nodes of the cluster spec's autoscaled node groups and
// their provisioning state, the `node_events` they produce and the GPU-seconds they are billed.
// Owned by the engine, which also takes a node's GPUs out of placement while it is not ready
// (allocated in Resources and out of service, like a failed GPU) and gives them back when it is;
// this class only keeps the books. An autoscaler (Autoscaler below; implementations in
// policies/, chosen with --autoscaler) reads them at every scan and returns a ScaleDecision that
// the engine validates and applies.
//
// A pool node is off (not provisioned), requested (provisioning: billed, runs nothing) or ready
// (billed, in placement). The group's first `count` nodes are ready at the start of the run and
// billed from it; the others are off. Requested -> ready after the group's provision_seconds;
// released (ready -> off) only when the autoscaler asks and the node runs nothing.
#ifndef CLUSTERSIM_SIM_ENGINE_NODE_POOLS_H_
#define CLUSTERSIM_SIM_ENGINE_NODE_POOLS_H_

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/hardware/cluster.h"

namespace clustersim {

class SchedulingContext;

enum class PoolNodeState : uint8_t { kOff, kRequested, kReady };

enum class NodeEventKind : uint8_t { kRequested, kReady, kReleased, kInterrupted };
// "requested", "ready", "released", "interrupted"
const char* NodeEventName(NodeEventKind kind);

struct NodeEvent {
  double time = 0;  // seconds
  int node = 0;
  NodeEventKind kind = NodeEventKind::kRequested;
};

// What an autoscaler asks for at one scan: nodes to request per pool group, and ready nodes to
// release. The engine requests the group's lowest-index off nodes and refuses (a bug of the
// autoscaler) a request beyond the group's max or a release below its min, of a node that is
// not ready, or of one that runs a job.
struct ScaleDecision {
  std::vector<std::pair<int, int>> add;  // (group, nodes)
  std::vector<int> release;              // nodes
  void clear() {
    add.clear();
    release.clear();
  }
};

class NodePools {
 public:
  static constexpr double kNever = std::numeric_limits<double>::quiet_NaN();

  NodePools() = default;
  explicit NodePools(const Cluster& cluster);

  bool empty() const { return groups_.empty(); }
  // Indexes of the node groups that are pools, ascending.
  const std::vector<int>& groups() const { return groups_; }
  // A pool group's nodes, ascending.
  const std::vector<int>& nodes(int group) const { return group_nodes_[group]; }
  PoolNodeState state(int node) const { return state_[node]; }
  // Requested or ready nodes of a pool group.
  int provisioned(int group) const { return provisioned_[group]; }
  // Of them, the ones still provisioning.
  int requested(int group) const { return requested_[group]; }
  // Since when a ready node has run nothing, as seen at scans (NaN if it runs a job or is not
  // ready).
  double empty_since(int node) const { return empty_since_[node]; }
  const std::vector<NodeEvent>& events() const { return events_; }
  // GPU-seconds billed to `group` up to `end`: each node from its request (or the run's start
  // for a node provisioned at the start) to its release (or `end`).
  double BilledGpuSeconds(int group, double end) const;
  bool pool_node(int node) const { return !state_.empty() && cluster_->node(node).pool; }

  // Books (the engine moves the GPUs in Resources). Start: the run starts at `start` (the
  // first arrival), billing the nodes provisioned at the start from then.
  void Start(double start);
  void Request(int node, double now);
  void Ready(int node, double now);
  void Release(int node, double now);
  // A spot node got its interruption notice (docs/autoscaling.md#spot-capacity); only an event.
  // The books of a fixed spot node (not a pool node) follow it through Release, Request and
  // Ready when it is replaced; its billing is its group's (the whole run).
  void Interrupted(int node, double now) {
    events_.push_back({now, node, NodeEventKind::kInterrupted});
  }
  // At a scan: records whether each ready node is empty now (starting its idle clock or
  // stopping it).
  void ObserveEmpty(int node, bool is_empty, double now);
  // Seconds from a request of a `group` node to its being ready: the group's provision_seconds,
  // or for a uniform range a draw from it, from a stream of its own seeded by the run's seed
  // (SeedProvisioning), one draw per request in request order.
  void SeedProvisioning(uint64_t seed);
  double ProvisionSeconds(int group);

 private:
  const Cluster* cluster_ = nullptr;
  std::vector<int> groups_;
  std::vector<std::vector<int>> group_nodes_;  // per cluster group
  std::vector<int> provisioned_;               // per cluster group
  std::vector<int> requested_;                 // per cluster group
  std::vector<PoolNodeState> state_;           // per node
  std::vector<double> since_;                  // per node: billed since
  std::vector<double> empty_since_;            // per node
  std::vector<double> billed_closed_;          // per group: GPU-seconds of released nodes
  std::vector<NodeEvent> events_;
  std::mt19937_64 provision_rng_;
};

// Decides when pools grow and shrink (docs/autoscaling.md). Registered like policies
// (policies/autoscalers.h) and chosen with --autoscaler; it reads the engine through the
// SchedulingContext and the pools, and changes nothing itself.
class Autoscaler {
 public:
  virtual ~Autoscaler() = default;
  // Seconds between scans (> 0). Scans start at the first arrival.
  virtual double scan_interval_seconds() const = 0;
  // Called after the scheduling pass at every scan time; fills `out` (cleared by the caller).
  virtual void Scan(const SchedulingContext& ctx, const NodePools& pools, ScaleDecision* out) = 0;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_NODE_POOLS_H_
