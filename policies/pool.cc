// pool placement (docs/policies.md#pool): GPU counting that ignores nodes, the HPC model. A job
// takes the lowest-index free GPUs of the first GPU type (in order of appearance in the cluster
// spec, or in the order type_order gives) it may use that has enough free. With host limits
// (docs/resources.md) a node whose free CPUs or memory cannot take its part of the job is passed
// over; a CPU-only job takes the lowest-index node with room for it (PlaceCpuOnly).
// Parameters: type_order (listed): GPU-type order, TypeOrder in policies/node_placement.h.
#include "policies/node_placement.h"
#include "policies/registry.h"

namespace clustersim {
namespace {

class Pool final : public Placement {
 public:
  Pool(const PlacementEnv& env, const Params& params) : order_(env, params) {}

  bool IgnoresNodes() const override { return true; }
  bool PlacesCpuOnly() const override { return true; }
  bool Find(const Resources& resources, const PlacementRequest& request,
            Allocation* out) const override {
    if (IsCpuOnly(request)) return PlaceCpuOnly(resources, request, NodeRule::kFirstFit, out);
    out->gpus.clear();
    out->gpu_type = -1;
    if (request.gpus <= 0) return false;
    if (order_.plain()) {
      for (int type : resources.cluster().gpu_types()) {
        if (PlaceOnType(resources, request, type, out)) return true;
      }
      return false;
    }
    order_.Order(resources, request, &types_);
    for (int type : types_) {
      if (PlaceOnType(resources, request, type, out)) return true;
    }
    return false;
  }

 private:
  bool PlaceOnType(const Resources& resources, const PlacementRequest& request, int type,
                   Allocation* out) const {
    if (!request.AllowsType(type) || resources.free_of_type(type) < request.gpus) return false;
    const std::vector<int>& nodes = resources.type_nodes(type);
    const IndexSet& with_free = resources.type_nodes_with_free(type);
    const bool host = resources.host_limited();
    int remaining = request.gpus;
    for (int pos = with_free.FindFirst(); remaining > 0 && pos >= 0;
         pos = with_free.FindFrom(pos + 1)) {
      const int node = nodes[pos];
      const int take = std::min(remaining, resources.free_gpus(node));
      if (host && !resources.HostFitsJob(node, request.host, take, request.gpus)) continue;
      resources.AppendLowestFreeGpus(node, take, &out->gpus);
      remaining -= take;
    }
    if (remaining > 0) {  // only with host limits: too few nodes with room
      out->gpus.clear();
      return false;
    }
    out->gpu_type = type;
    return true;
  }

  TypeOrder order_;
  mutable std::vector<int> types_;
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_PLACEMENT(pool, "pool",
                              "GPU counting, ignores nodes: the lowest-index free GPUs of one type",
                              [](const clustersim::PlacementEnv& env,
                                 const clustersim::Params& params) {
                                return std::make_unique<clustersim::Pool>(env, params);
                              });
