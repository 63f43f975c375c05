// Hot spares (docs/reliability.md#hot-spares): which nodes are in a node group's spare pool and
// which of their GPUs the engine holds out of placement for it. Owned by the engine, which also
// takes and gives back the GPUs in Resources; this class only keeps the books.
//
// A pool node's GPUs are each in one of three states: held for the pool (allocated in Resources,
// no job on it), down (a failure in progress), or still held by a job that ran on the node when
// it entered the pool (it drains: a GPU the job lets go of is held for the pool). A pool node is
// usable, and may replace a failed node, when the pool holds every one of its GPUs. When a spare
// replaces a failed node, the spare leaves the pool (its GPUs the job does not take become free)
// and the failed node enters it: once repaired and drained it is the group's next spare. So a
// group keeps its number of spares; failures only make them unusable for a while.
//
// Invariants (Engine::CheckInvariants): a GPU held for the pool is neither free nor held by a job
// nor down; only pool nodes have held GPUs.
#ifndef CLUSTERSIM_SIM_ENGINE_SPARE_POOL_H_
#define CLUSTERSIM_SIM_ENGINE_SPARE_POOL_H_

#include <cstdint>
#include <set>
#include <vector>

#include "sim/hardware/cluster.h"

namespace clustersim {

class SparePool {
 public:
  SparePool() = default;
  // The pool of every group as the cluster spec starts it (Node::spare); nothing held yet.
  explicit SparePool(const Cluster& cluster);

  bool empty() const { return in_pool_.empty(); }
  bool InPool(int node) const { return !in_pool_.empty() && in_pool_[node]; }
  bool IsHeld(int gpu) const { return !held_.empty() && held_[gpu]; }
  int held_gpus() const { return held_gpus_; }
  // Nodes of `group` in the pool, usable or not.
  int PoolSize(int group) const { return pool_size_[group]; }
  int UsableCount(int group) const { return static_cast<int>(usable_[group].size()); }

  // Books a GPU of a pool node as held (it was just allocated in Resources) or no longer held.
  void Hold(int gpu);
  void Unhold(int gpu);
  // Moves `node` into the pool (a failed node replaced by a spare) or out of it (a spare taken).
  void Enter(int node);
  void Leave(int node);
  // The lowest-index usable spare of `group`, or -1; all of them, ascending.
  int FirstUsable(int group) const;
  const std::set<int>& Usable(int group) const { return usable_[group]; }

 private:
  void Refresh(int node);

  const Cluster* cluster_ = nullptr;
  std::vector<uint8_t> in_pool_;       // per node
  std::vector<uint8_t> held_;          // per GPU
  std::vector<int> node_held_;         // per node: GPUs held
  std::vector<int> pool_size_;         // per group
  std::vector<std::set<int>> usable_;  // per group: usable pool nodes, ascending
  int held_gpus_ = 0;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_SPARE_POOL_H_
