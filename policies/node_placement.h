// Shared by the node-aware placement strategies (first-fit, best-fit; docs/policies.md#placement).
// A job of n GPUs on a partition of G GPUs per node: if n <= G it takes one node; if n > G it
// takes floor(n/G) completely free nodes (lowest positions) plus, if n mod G > 0, one other node
// chosen by the strategy's rule for the remainder. Multi-node jobs stay in one partition.
#ifndef CLUSTERSIM_POLICIES_NODE_PLACEMENT_H_
#define CLUSTERSIM_POLICIES_NODE_PLACEMENT_H_

#include <functional>
#include <vector>

#include "sim/engine/placement.h"

namespace clustersim {

enum class NodeRule { kFirstFit, kBestFit };

// Returns the position in `part` of the node the rule picks for `gpus` GPUs (lowest position with
// enough free for first-fit; fewest free that still fits, ties lowest, for best-fit), skipping
// positions in `exclude` (ascending); -1 if none. Sets *free_count to that node's free GPUs.
int PickNode(const Partition& part, int gpus, NodeRule rule, const std::vector<int>& exclude,
             int* free_count);

// Places `request` under `rule`: single-node over all allowed partitions with G >= n (the best
// candidate across partitions: lowest node index for first-fit, (fewest free, lowest index) for
// best-fit), else multi-node in the first allowed partition with G < n where it fits.
bool PlaceOnNodes(const Resources& resources, const PlacementRequest& request, NodeRule rule,
                  Allocation* out);

// The multi-node part of the above for a request larger than a node, with the remainder node
// chosen by `pick_remainder(part, remainder, chosen)`: a position in `part` not in `chosen` (the
// whole free nodes taken, ascending positions), or -1 if none fits. First allowed partition with
// G < n where it fits; false if none.
using RemainderPicker =
    std::function<int(const Partition& part, int remainder, const std::vector<int>& chosen)>;
bool PlaceAcrossNodes(const Resources& resources, const PlacementRequest& request,
                      const RemainderPicker& pick_remainder, Allocation* out);

}  // namespace clustersim

#endif  // CLUSTERSIM_POLICIES_NODE_PLACEMENT_H_
