// best-fit placement (docs/policies.md#best-fit): as first-fit, but a job of n <= G GPUs (and the
// remainder n mod G of a larger job) goes to the node with the fewest free GPUs that still fits,
// ties to the lowest index; whole free nodes for larger jobs are still the lowest-index ones. Nodes
// whose free CPUs or memory cannot take the job are skipped (docs/resources.md); a CPU-only job
// takes the node it leaves with the fewest free CPUs (PlaceCpuOnly, whatever the type order).
// Parameters: type_order (listed): GPU-type order, TypeOrder in policies/node_placement.h.
#include "policies/node_placement.h"
#include "policies/registry.h"

namespace clustersim {
namespace {

class BestFit final : public Placement {
 public:
  BestFit(const PlacementEnv& env, const Params& params) : order_(env, params) {}
  bool PlacesCpuOnly() const override { return true; }
  bool Find(const Resources& resources, const PlacementRequest& request,
            Allocation* out) const override {
    if (IsCpuOnly(request)) return PlaceCpuOnly(resources, request, NodeRule::kBestFit, out);
    return order_.Place(resources, request, out,
                        [&](const PlacementRequest& one, Allocation* found) {
                          return PlaceOnNodes(resources, one, NodeRule::kBestFit, found);
                        });
  }
  // With type_order=listed and no spot preference, Find takes the node by this rule over every
  // allowed partition.
  SingleNodeRule single_node_rule() const override {
    return order_.plain() ? SingleNodeRule::kFewestFree
                                                     : SingleNodeRule::kOther;
  }

 private:
  TypeOrder order_;
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_PLACEMENT(best_fit, "best-fit",
                              "node with the fewest free GPUs that still fits (ties: lowest "
                              "index); whole free nodes for jobs larger than a node",
                              [](const clustersim::PlacementEnv& env,
                                 const clustersim::Params& params) {
                                return std::make_unique<clustersim::BestFit>(env, params);
                              });
