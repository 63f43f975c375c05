// best-fit placement (docs/policies.md#best-fit): as first-fit, but a job of n <= G GPUs (and the
// remainder n mod G of a larger job) goes to the node with the fewest free GPUs that still fits,
// ties to the lowest index; whole free nodes for larger jobs are still the lowest-index ones.
// Parameters: none.
#include "policies/node_placement.h"
#include "policies/registry.h"

namespace clustersim {
namespace {

class BestFit final : public Placement {
 public:
  bool Find(const Resources& resources, const PlacementRequest& request,
            Allocation* out) const override {
    return PlaceOnNodes(resources, request, NodeRule::kBestFit, out);
  }
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_PLACEMENT(best_fit, "best-fit",
                              "node with the fewest free GPUs that still fits (ties: lowest "
                              "index); whole free nodes for jobs larger than a node",
                              [](const clustersim::PlacementEnv&, const clustersim::Params&) {
                                return std::make_unique<clustersim::BestFit>();
                              });
