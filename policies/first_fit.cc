// first-fit placement (docs/policies.md): a job of n GPUs with G per node takes, if n <= G, the
// lowest-index node with >= n free; if n > G, floor(n/G) completely free nodes (lowest indices)
// plus, if n mod G > 0, the lowest-index other node with >= n mod G free. Within a node, the
// lowest-index free GPUs. Nodes whose free CPUs or memory cannot take the job are skipped
// (policies/node_placement.h); a CPU-only job takes the lowest-index node with room for it
// (PlaceCpuOnly, whatever the type order). Parameters: type_order (listed): GPU-type order, TypeOrder in
// policies/node_placement.h.
#include "policies/node_placement.h"
#include "policies/registry.h"

namespace clustersim {
namespace {

class FirstFit final : public Placement {
 public:
  FirstFit(const PlacementEnv& env, const Params& params) : order_(env, params) {}
  bool PlacesCpuOnly() const override { return true; }
  bool Find(const Resources& resources, const PlacementRequest& request,
            Allocation* out) const override {
    if (IsCpuOnly(request)) return PlaceCpuOnly(resources, request, NodeRule::kFirstFit, out);
    return order_.Place(resources, request, out,
                        [&](const PlacementRequest& one, Allocation* found) {
                          return PlaceOnNodes(resources, one, NodeRule::kFirstFit, found);
                        });
  }
  // With type_order=listed and no spot preference, Find takes the node by this rule over every
  // allowed partition.
  SingleNodeRule single_node_rule() const override {
    return order_.plain() ? SingleNodeRule::kLowestIndex
                                                     : SingleNodeRule::kOther;
  }

 private:
  TypeOrder order_;
};

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_PLACEMENT(first_fit, "first-fit",
                              "lowest-index node with enough free GPUs; whole free nodes for "
                              "jobs larger than a node",
                              [](const clustersim::PlacementEnv& env,
                                 const clustersim::Params& params) {
                                return std::make_unique<clustersim::FirstFit>(env, params);
                              });
