// first-fit placement (docs/policies.md): a job of n GPUs with G per node takes, if n <= G, the
// lowest-index node with >= n free; if n > G, floor(n/G) completely free nodes (lowest indices)
// plus, if n mod G > 0, the lowest-index other node with >= n mod G free. Within a node, the
// lowest-index free GPUs. Parameters: none.
#include "policies/node_placement.h"
#include "policies/registry.h"

namespace clustersim {
namespace {

class FirstFit final : public Placement {
 public:
  bool Find(const Resources& resources, const PlacementRequest& request,
            Allocation* out) const override {
    return PlaceOnNodes(resources, request, NodeRule::kFirstFit, out);
  }
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_PLACEMENT(first_fit, "first-fit",
                              "lowest-index node with enough free GPUs; whole free nodes for "
                              "jobs larger than a node",
                              [](const clustersim::PlacementEnv&, const clustersim::Params&) {
                                return std::make_unique<clustersim::FirstFit>();
                              });
