// The cluster's interconnect as a Boost.Graph (docs/cluster.md#topology). Vertices are GPUs,
// NVSwitch fabrics, PCIe switches, CPU sockets, NICs, leaf (rack) switches and the spine; every
// edge is a full-duplex link carrying `gbps_per_direction` GB/s each way and a latency in seconds.
//
// Built once per run from an immutable Cluster, which must outlive it. Read-only afterwards, so
// it may be shared between threads: the only mutable state is a cache of ring orders per node
// kind, guarded by a mutex. Copies share that cache.
//
// Intra-node models (figures per direction, from the catalog: nvlink_gbps is the aggregate of
// both directions, so one direction is nvlink_gbps / 2):
// - nvswitch: each GPU has one edge to the node's NVSwitch vertex of nvlink_gbps / 2.
// - hybrid-cube-mesh (DGX-1, 8 GPUs): direct GPU-GPU NVLink edges with the DGX-1V link counts
//   (1 or 2 NVLink2 links of nvlink_gbps / 2 / 6 each: 25 GB/s for V100); GPU pairs without
//   NVLink talk over PCIe and the CPU interconnect.
// - pcie: no NVLink; GPU traffic goes GPU -> PCIe switch (-> socket (-> socket) -> switch) -> GPU.
// Every node has one PCIe switch per two GPUs (x16 of the GPU's PCIe generation per edge), the
// first half of the switches under CPU socket 0 and the rest under socket 1, the two sockets
// joined by the CPU interconnect, and one NIC (nic_gbps / 8 GB/s) under the first switch. NICs hang
// off their rack's leaf switch; each leaf has one uplink to the spine of
// (sum of its nodes' NIC bandwidth) / oversubscription. topology.cc states every figure.
//
// Routing: a path between two GPUs is a widest path (largest bottleneck bandwidth; ties go to the
// fewest hops, then to the lowest vertex indices) and never passes through a third GPU. A ring
// hop that leaves a node is an exception for bandwidth: NCCL runs one channel per NIC rail and the
// channels leave from different GPUs (GPUDirect RDMA), so the hop is limited by the NIC and the
// fabric and by the sum of the PCIe x16 links of the node's GPUs in the ring, not by one GPU's
// PCIe link. Its latency is that of the graph path GPU -> NIC -> fabric -> NIC -> GPU.
#ifndef CLUSTERSIM_SIM_HARDWARE_TOPOLOGY_H_
#define CLUSTERSIM_SIM_HARDWARE_TOPOLOGY_H_

#include <boost/graph/adjacency_list.hpp>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/hardware/cluster.h"

namespace clustersim {

enum class VertexKind { kGpu, kNvSwitch, kPcieSwitch, kCpuSocket, kNic, kLeaf, kSpine };

struct TopologyVertex {
  VertexKind kind = VertexKind::kGpu;
  int node = -1;  // owning node, -1 for leaf/spine
  int index = 0;  // global GPU index for GPUs; local index otherwise (rack for leaves)
  std::string label;
};

struct TopologyEdge {
  double gbps_per_direction = 0;  // GB/s each way
  double latency_seconds = 0;
};

using TopologyGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                            TopologyVertex, TopologyEdge>;

class Topology {
 public:
  explicit Topology(const Cluster& cluster);

  const TopologyGraph& graph() const { return graph_; }
  // The graph vertex of global GPU `gpu`.
  int GpuVertex(int gpu) const { return gpu_vertex_[gpu]; }

  // Returns the bandwidth in GB/s per direction that a ring all-reduce over `gpus` (global GPU
  // indices, any order, no duplicates) sustains: every hop of the ring (consecutive GPUs, last to
  // first included) is routed on its widest path, each directed link's bandwidth is divided by
  // the number of hops that cross it in that direction, and the ring's bandwidth is the minimum
  // of that over the links used. The ring order is chosen, not taken from `gpus`: within one node,
  // all cyclic orders if the node holds at most 8 of the GPUs, else index order; across nodes,
  // nodes in ascending index, each node's GPUs contiguous in the best open order (at most 8) or
  // index order. The result does not depend on the order of `gpus`.
  // Returns +infinity for fewer than 2 GPUs.
  // REQUIRES: every index is in [0, total_gpus) and appears once.
  double RingBandwidthGbps(std::span<const int> gpus) const;

  // Returns the latency of one ring step, in seconds: the largest path latency of a hop of the
  // ring RingBandwidthGbps chooses. Returns 0 for fewer than 2 GPUs.
  double RingHopLatencySeconds(std::span<const int> gpus) const;

  // Writes the graph in Graphviz dot format: one line per vertex labelled like "n0/gpu3" (node 0,
  // its GPU 3), "n0/nvswitch", "n0/pcie1", "n0/cpu0", "n0/nic", "rack0/leaf", "spine", and one per
  // edge labelled with its bandwidth per direction ("300 GB/s"). Each rack is a subgraph cluster
  // (cluster_rackR, holding its leaf) and each node one inside it (cluster_nodeN, labelled with
  // its GPU count, type and topology, holding its vertices and internal links); the NIC-leaf and
  // leaf-spine links join them. The graph asks for the fdp layout, which packs the boxes in two
  // dimensions.
  void WriteDot(std::ostream& out) const;

 private:
  // Link table mirroring the graph's edges, per-node layout, per-node-kind widest paths and the
  // ring-order cache (defined in topology.cc).
  struct Routing;

  const Cluster* cluster_;
  TopologyGraph graph_;
  std::vector<int> gpu_vertex_;
  std::shared_ptr<Routing> routing_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_HARDWARE_TOPOLOGY_H_
