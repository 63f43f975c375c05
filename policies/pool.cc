// pool placement (docs/policies.md#pool): GPU counting that ignores nodes, the HPC model. A job
// takes the lowest-index free GPUs of the first GPU type (in order of appearance in the cluster
// spec) it may use that has enough free. Parameters: none.
#include "policies/registry.h"

namespace clustersim {
namespace {

class Pool final : public Placement {
 public:
  bool Find(const Resources& resources, const PlacementRequest& request,
            Allocation* out) const override {
    out->gpus.clear();
    out->gpu_type = -1;
    if (request.gpus <= 0) return false;
    for (int type : resources.cluster().gpu_types()) {
      if (!request.AllowsType(type) || resources.free_of_type(type) < request.gpus) continue;
      const std::vector<int>& nodes = resources.type_nodes(type);
      const IndexSet& with_free = resources.type_nodes_with_free(type);
      int remaining = request.gpus;
      for (int pos = with_free.FindFirst(); remaining > 0; pos = with_free.FindFrom(pos + 1)) {
        const int node = nodes[pos];
        const int take = std::min(remaining, resources.free_gpus(node));
        resources.AppendLowestFreeGpus(node, take, &out->gpus);
        remaining -= take;
      }
      out->gpu_type = type;
      return true;
    }
    return false;
  }
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_PLACEMENT(pool, "pool",
                              "GPU counting, ignores nodes: the lowest-index free GPUs of one type",
                              [](const clustersim::PlacementEnv&, const clustersim::Params&) {
                                return std::make_unique<clustersim::Pool>();
                              });
