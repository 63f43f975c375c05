// Resources: which GPUs of a Cluster are free, with the indexes placement strategies query.
// The engine owns the live instance and is the only one that allocates and releases on it;
// policies may copy it to plan on a scratch copy. Every query is O(log nodes) or O(GPUs of one
// node) so placement never scans the whole cluster per job.
//
// Partitions: nodes of the same GPU type and GPUs per node, in the order of their first node.
// Multi-node placements stay within one partition.
//
// GPU sharing (docs/engine.md#gpu-sharing): a GPU may also be held in shares of thousandths
// ("milli", as Alibaba's gpu_milli). free_milli(g) is 1000 for a whole free GPU and 0 for one held
// whole or fully shared. A GPU with any share taken is not free in the whole-GPU indexes above (so
// whole-GPU placement never lands on a shared GPU); it returns to them when its last share is
// released. shared_gpus() holds the GPUs with 0 < free_milli < 1000, for placements that share.
#ifndef CLUSTERSIM_SIM_ENGINE_RESOURCES_H_
#define CLUSTERSIM_SIM_ENGINE_RESOURCES_H_

#include <cstdint>
#include <span>
#include <vector>

#include "sim/hardware/cluster.h"
#include "sim/util/index_set.h"

namespace clustersim {

struct Partition {
  int gpu_type = 0;
  int gpus_per_node = 0;
  std::vector<int> nodes;          // global node indices, ascending
  std::vector<IndexSet> by_free;   // by_free[f] = positions of nodes with exactly f free GPUs
  std::vector<int> by_free_count;  // by_free[f].count(), kept for O(G) fragmentation sums
  MaxTree free_tree;               // free GPUs per position
};

class Resources {
 public:
  explicit Resources(const Cluster& cluster);

  const Cluster& cluster() const { return *cluster_; }
  int free_gpus(int node) const { return node_free_[node]; }
  int free_of_type(int type) const { return type_free_[type]; }
  int total_free() const { return total_free_; }
  bool IsGpuFree(int gpu) const { return (free_bits_[gpu >> 6] >> (gpu & 63)) & 1; }

  // REQUIRES: every GPU in `gpus` is free (resp. busy); CHECKed.
  void Allocate(std::span<const int> gpus);
  void Release(std::span<const int> gpus);

  // Shares. REQUIRES 0 < milli < 1000 and free_milli(gpu) >= milli (resp. the share is held).
  int free_milli(int gpu) const { return free_milli_[gpu]; }
  void AllocateShare(int gpu, int milli);
  void ReleaseShare(int gpu, int milli);
  // GPUs partly shared (0 < free_milli < 1000), as an IndexSet over global GPU indices.
  const IndexSet& shared_gpus() const { return shared_gpus_; }

  // Appends the `count` lowest-index free GPUs of `node`. REQUIRES free_gpus(node) >= count.
  void AppendLowestFreeGpus(int node, int count, std::vector<int>* out) const;

  const std::vector<Partition>& partitions() const { return partitions_; }
  int partition_of(int node) const { return node_partition_[node]; }
  int position_of(int node) const { return node_position_[node]; }
  // Nodes of catalog type `type` (ascending) and the positions among them with free GPUs.
  const std::vector<int>& type_nodes(int type) const { return type_nodes_[type]; }
  const IndexSet& type_nodes_with_free(int type) const { return type_nonempty_[type]; }

 private:
  void SetNodeFree(int node, int free);

  const Cluster* cluster_;
  std::vector<uint64_t> free_bits_;  // bit g set = GPU g free
  std::vector<int16_t> free_milli_;  // per GPU, thousandths free
  IndexSet shared_gpus_;
  std::vector<int> node_free_;
  std::vector<int> type_free_;
  int total_free_ = 0;
  std::vector<Partition> partitions_;
  std::vector<int> node_partition_;
  std::vector<int> node_position_;       // position within its partition
  std::vector<int> node_type_position_;  // position within type_nodes_
  std::vector<std::vector<int>> type_nodes_;
  std::vector<IndexSet> type_nonempty_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_RESOURCES_H_
