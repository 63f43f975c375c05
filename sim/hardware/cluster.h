// The cluster: a cluster spec (node groups + inter-node network, from JSON or a named preset)
// expanded into indexed nodes and GPUs. Nodes are numbered in the order the spec lists them and
// GPUs node-major (node 0's GPUs are 0..G0-1, ...). A Cluster is immutable: which GPUs are free
// is engine state (sim/engine/resources.h), not part of the cluster.
//
// Site partitions (docs/cluster.md#site-model) are node sets; a job of a partition may use only
// its nodes. Placement restricts jobs by GPU type (PlacementRequest::type_mask), so the nodes of
// one GPU type that belong to different sets of partitions get GPU types of their own: copies of
// the catalog entry named "<type>@<partition>[+<partition>...]" (HardwareCatalog::AddAlias), held
// in the cluster's own catalog. A type all of whose nodes are in the same partitions keeps its
// name. Every figure of an alias is its type's, so only placement and per-type reports see it.
#ifndef CLUSTERSIM_SIM_HARDWARE_CLUSTER_H_
#define CLUSTERSIM_SIM_HARDWARE_CLUSTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/hardware/hardware.h"
#include "sim/hardware/site.h"

namespace clustersim {

// Intra-node GPU interconnects the topology model knows (docs/cluster.md#topology).
enum class NodeTopology {
  kNvSwitch,        // all-to-all through NVSwitch (DGX A100, DGX H100)
  kHybridCubeMesh,  // DGX-1: NVLink cube-mesh of 8 GPUs, not all-to-all
  kPcie,            // PCIe switches under two CPU sockets, no NVLink
};
const char* NodeTopologyName(NodeTopology t);

// A node pool (docs/autoscaling.md): the group's nodes come and go between `min` and `max`
// as an autoscaler (`--autoscaler`) requests and releases them. A requested node is ready (runs
// jobs) after `provision_seconds`; a node empty for `idle_seconds` may be released.
struct AutoscaleSpec {
  bool enabled = false;
  int min = 0;
  int max = 0;
  double provision_seconds = 300;  // Cluster Autoscaler FAQ: "usually about 5 minutes"
  // With `"provision_seconds": {"uniform": [low, high]}` each request draws its time uniformly
  // from [provision_seconds, provision_max_seconds]; otherwise both are equal.
  double provision_max_seconds = 300;
  double idle_seconds = 600;       // Cluster Autoscaler --scale-down-unneeded-time, 10m
};

// Spot capacity (docs/autoscaling.md#spot-capacity): the group's nodes cost `price_per_gpu_hour`
// and are taken back. Each ready node is interrupted at exponentially distributed times,
// `interruptions_per_hour` per node-hour (drawn from the run's seed), and at the times of the
// `interruptions` file (CSV time,node: seconds, node index within the group); the node is gone
// `notice_seconds` after the interruption.
struct SpotInterruption {
  double time = 0;  // seconds
  int node = 0;     // within the group
  int64_t line = 0;
};
struct SpotSpec {
  bool enabled = false;
  double price_per_gpu_hour = 0;
  double interruptions_per_hour = 0;  // per node
  double notice_seconds = 30;         // Azure and GCP Spot VMs: 30 s
  std::string interruptions_path;     // as written in the spec ("" = none)
  std::vector<SpotInterruption> interruptions;
};

struct NodeGroupSpec {
  std::string name;  // optional; site partitions may name groups by it
  int count = 1;
  std::string gpu_type;
  int gpus_per_node = 8;
  NodeTopology topology = NodeTopology::kNvSwitch;
  int cpus = 0;                // 0 = unknown
  double host_memory_gib = 0;  // 0 = unknown
  double nic_gbps = 100;       // total inter-node bandwidth per node, Gbit/s
  // Hot spares (docs/reliability.md#hot-spares): `spares` more nodes of the group, held out of
  // placement, that replace a failed node of a running job after `swap_seconds`.
  int spares = 0;
  double swap_seconds = 0;
  // A node pool (`count` is then its size at the start; AutoscaleSpec). Its nodes are
  // autoscale.max, of which those past `count` start not provisioned.
  AutoscaleSpec autoscale = {};
  // USD per GPU-hour for the group's nodes; < 0 = the catalog's price of its GPU type.
  double price_per_gpu_hour = -1;
  // Nodes the group expands into: max for a pool, else count + spares.
  int node_count() const { return autoscale.enabled ? autoscale.max : count + spares; }
  // MIG mode on every GPU of the group (docs/mig.md): jobs naming a MIG profile run on instances
  // of these GPUs. Only for GPU types with MIG profiles (sim/hardware/mig.h).
  bool mig = false;
  SpotSpec spot = {};
};

struct NetworkSpec {
  int nodes_per_rack = 32;        // nodes under one leaf switch
  double oversubscription = 1.0;  // leaf downlink : uplink bandwidth ratio
  double latency_us = 5.0;        // one inter-node hop (NIC to NIC through the fabric)
};

// Checkpoint storage (docs/reliability.md#checkpoint-cost): a job saves its checkpoint at
// min(write_gbps, nodes x node_gbps) and restores it at min(read_gbps, nodes x node_gbps), GB/s
// (1e9 bytes per second); 0 = not declared (node_gbps 0 = no per-node limit).
struct StorageSpec {
  double write_gbps = 0;
  double read_gbps = 0;
  double node_gbps = 0;
  bool declared() const { return write_gbps > 0; }
};

struct ClusterSpec {
  std::string origin;  // file path or "preset:NAME"
  std::string text;    // the JSON text it was read from (hashed into `runs`)
  std::vector<NodeGroupSpec> groups;
  NetworkSpec network;
  SiteSpec site;  // the optional "site" object (sim/hardware/site.h)
  StorageSpec storage;

  // Accepts a preset name (see PresetNames()) or a path to a JSON file.
  // Throws InputError naming the file and key on a bad spec or unknown GPU type.
  static ClusterSpec Load(const std::string& name_or_path, const HardwareCatalog& catalog);
  static ClusterSpec FromJsonText(const std::string& text, const std::string& origin,
                                  const HardwareCatalog& catalog);
  static std::vector<std::string> PresetNames();
  static std::string PresetText(const std::string& name);  // empty if not a preset
};

// Returns the JSON text of a cluster spec with these node groups (each with its count) and
// network, accepted by ClusterSpec::FromJsonText: a way to build clusters in memory (e.g. the
// homogeneous N-node clusters of `clustersim plan`). Unknown (0) cpus / host memory are left out,
// and so are spares and storage when there are none.
std::string ClusterSpecJson(const std::vector<NodeGroupSpec>& groups, const NetworkSpec& network,
                            const StorageSpec& storage = {});

struct Node {
  int index = 0;
  int group = 0;
  int gpu_type = 0;  // index into the hardware catalog
  int gpu_count = 0;
  int first_gpu = 0;  // global index of the node's GPU 0
  int rack = 0;
  NodeTopology topology = NodeTopology::kNvSwitch;
  int cpus = 0;
  double host_memory_gib = 0;
  double nic_gbps = 0;
  // One of its group's hot spares at the start of a run (the engine's pool changes as spares
  // replace failed nodes; docs/reliability.md#hot-spares). Spares follow the group's `count`
  // nodes.
  bool spare = false;
  // A pool node (NodeGroupSpec::autoscale) and whether it is provisioned at the start (the
  // first `count` of its group are).
  bool pool = false;
  bool starts_provisioned = true;
  bool mig = false;  // its GPUs are in MIG mode (NodeGroupSpec::mig)
};

class Cluster {
 public:
  Cluster(ClusterSpec spec, const HardwareCatalog& catalog);

  const ClusterSpec& spec() const { return spec_; }
  const HardwareCatalog& catalog() const { return *catalog_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(int i) const { return nodes_[i]; }
  int node_count() const { return static_cast<int>(nodes_.size()); }
  int total_gpus() const { return total_gpus_; }
  int rack_count() const { return rack_count_; }
  // Nodes of rack `rack`: [first, first + count) (racks are runs of network.nodes_per_rack
  // consecutive nodes; the last may be short).
  int RackFirstNode(int rack) const { return rack * spec_.network.nodes_per_rack; }
  int RackNodeCount(int rack) const;
  // Nodes that start as hot spares (NodeGroupSpec::spares, summed over the groups).
  int spare_nodes() const { return spare_nodes_; }
  // True if some node group is a pool (NodeGroupSpec::autoscale).
  bool has_pools() const { return has_pools_; }
  // True if some node group is spot capacity (NodeGroupSpec::spot).
  bool has_spot() const { return has_spot_; }
  // The GPU types of the spot groups' nodes (a spot group whose type an on-demand group also has
  // gets the alias "<type>@spot"); 0 without spot groups.
  uint64_t SpotTypes() const { return spot_types_; }
  // USD per GPU-hour of group `group`'s nodes (its spot price, else its price_per_gpu_hour, else
  // its type's).
  double GroupPrice(int group) const;
  // Node owning global GPU `gpu`.
  int NodeOfGpu(int gpu) const { return gpu_node_[gpu]; }
  // GPU types present, in order of first appearance in the spec.
  const std::vector<int>& gpu_types() const { return gpu_types_; }
  // GPUs of catalog type `type` (0 if absent).
  int GpusOfType(int type) const;
  // More than one kind of GPU hardware: types that are copies of one catalog type (site
  // partitions' and spot groups' aliases, GpuSpec::alias_of) count as that type.
  bool IsHeterogeneous() const;
  // The catalog types a job naming type `type` may use: the type and its aliases.
  uint64_t TypeAndAliases(int type) const;
  // The types of site partition `partition`'s nodes (every bit set when the spec has no
  // partitions).
  uint64_t PartitionTypes(int partition) const;

 private:
  ClusterSpec spec_;
  std::shared_ptr<const HardwareCatalog> own_catalog_;  // with aliases, when partitions split types
  const HardwareCatalog* catalog_;
  std::vector<uint64_t> partition_types_;  // per site partition
  std::vector<Node> nodes_;
  std::vector<int> gpu_node_;
  std::vector<int> gpu_types_;
  std::vector<int> gpus_per_type_;  // indexed by catalog type
  int total_gpus_ = 0;
  int rack_count_ = 0;
  int spare_nodes_ = 0;
  bool has_pools_ = false;
  bool has_spot_ = false;
  uint64_t spot_types_ = 0;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_HARDWARE_CLUSTER_H_
