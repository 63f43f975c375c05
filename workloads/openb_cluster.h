// A cluster spec from the Alibaba 2023 openb node list (`sn,cpu_milli,memory_mib,gpu,model`):
// `clustersim trace cluster-from openb_node_list_gpu_node.csv`. Nodes with the same (model, GPUs,
// CPUs, memory) form one node group, groups in order of first appearance; node topology follows
// the GPU type's default (PCIe cards -> pcie; 8 SXM2 V100 -> hybrid-cube-mesh). Nodes without
// GPUs are left out and counted (they cannot host GPU jobs). A model with no catalog entry (G2,
// G3: anonymized) must be mapped to one (`--map-gpu G2=A100-80GB`), or the command fails naming
// it with its node count: the simulator does not invent specifications.
#ifndef CLUSTERSIM_WORKLOADS_OPENB_CLUSTER_H_
#define CLUSTERSIM_WORKLOADS_OPENB_CLUSTER_H_

#include <map>
#include <string>

#include "sim/hardware/hardware.h"

namespace clustersim {

struct OpenbClusterResult {
  std::string spec_json;
  int64_t gpu_nodes = 0;
  int64_t cpu_only_nodes = 0;  // left out
  int64_t gpus = 0;
};

// Throws InputError (file, line, column) for a malformed row or an unmapped model. With
// `keep_order` a node joins only the group of the node listed just before it, so the spec's node
// indices follow the list (more groups): placements that break ties by the lowest node index then
// break them in the list's order, as the FGD artifact breaks them by node name (the list is sorted
// by name).
OpenbClusterResult OpenbNodeListToClusterSpec(const std::string& path,
                                              const std::map<std::string, std::string>& gpu_map,
                                              const HardwareCatalog& catalog,
                                              bool keep_order = false);

}  // namespace clustersim

#endif  // CLUSTERSIM_WORKLOADS_OPENB_CLUSTER_H_
