#include "sim/engine/placement.h"

#include <algorithm>

#include "sim/engine/job.h"

namespace clustersim {

bool AllocationFits(const Resources& resources, const HostDemand& host,
                    const Allocation& allocation) {
  if (allocation.gpus.empty()) {
    return allocation.node >= 0 && resources.HostFitsCpuOnly(allocation.node, host);
  }
  if (allocation.mig_profile >= 0) {
    return allocation.gpus.size() == 1 &&
           resources.MigFits(allocation.gpus[0], allocation.mig_profile, allocation.mig_start) &&
           resources.HostFitsGpus(host, allocation.gpus, allocation.milli);
  }
  for (int g : allocation.gpus) {
    if (allocation.milli > 0 ? resources.free_milli(g) < allocation.milli : !resources.IsGpuFree(g))
      return false;
  }
  return resources.HostFitsGpus(host, allocation.gpus, allocation.milli);
}

bool PlaceWholeNodes(const Resources& resources, const PlacementRequest& request, Allocation* out) {
  out->gpus.clear();
  out->gpu_type = -1;
  out->milli = 0;
  if (request.gpus <= 0) return false;
  for (const Partition& part : resources.partitions()) {
    const int per_node = part.gpus_per_node;
    if (!request.AllowsType(part.gpu_type) || per_node <= 0) continue;
    const int nodes = (request.gpus + per_node - 1) / per_node;
    if (part.by_free_count[per_node] < nodes) continue;
    const IndexSet& whole = part.by_free[per_node];
    int pos = whole.FindFirst();
    for (int taken = 0; taken < nodes; ++taken, pos = whole.FindFrom(pos + 1)) {
      resources.AppendLowestFreeGpus(part.nodes[pos], per_node, &out->gpus);
    }
    // The job's host demand is charged over all the GPUs it holds (docs/resources.md).
    if (!resources.HostFitsGpus(request.host, out->gpus)) {
      out->gpus.clear();
      continue;
    }
    out->gpu_type = part.gpu_type;
    return true;  // positions ascend with node indices, so the GPUs are ascending
  }
  return false;
}

int TensorGroup(const PlacementRequest& request) {
  if (request.job == nullptr || request.whole_nodes || request.milli > 0) return 0;
  return request.job->tensor_parallel;
}

RequestShape ShapeOf(const PlacementRequest& request) {
  const int mig = request.job != nullptr ? request.job->mig_profile : 0;
  return {request.gpus,           request.milli,           request.type_mask,
          request.host.cpu_milli, request.host.memory_mib, request.whole_nodes,
          request.constraint,     TensorGroup(request),    mig};
}

bool PlaceTensorGroups(const Resources& resources, const PlacementRequest& request,
                       Allocation* out) {
  out->gpus.clear();
  out->gpu_type = -1;
  out->milli = 0;
  const int group = TensorGroup(request);
  if (request.gpus <= 0 || group < 1 || request.gpus % group != 0) return false;
  for (const Partition& part : resources.partitions()) {
    if (!request.AllowsType(part.gpu_type) || part.gpus_per_node < group) continue;
    if (resources.free_of_type(part.gpu_type) < request.gpus) continue;
    int groups_left = request.gpus / group;
    for (int pos = part.free_tree.FindFirstAtLeast(group); pos >= 0 && groups_left > 0;
         pos = part.free_tree.FindFirstAtLeast(group, pos + 1)) {
      const int node = part.nodes[pos];
      const int take = std::min(resources.free_gpus(node) / group, groups_left);
      resources.AppendLowestFreeGpus(node, take * group, &out->gpus);
      groups_left -= take;
    }
    if (groups_left > 0 || !resources.HostFitsGpus(request.host, out->gpus)) {
      out->gpus.clear();
      continue;
    }
    out->gpu_type = part.gpu_type;
    return true;  // positions ascend with node indices, so the GPUs are ascending
  }
  return false;
}

}  // namespace clustersim
