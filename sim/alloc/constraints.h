// Placement constraints as arithmetic on the GPUs a job holds per node (docs/deadlines.md#
// constraints): data locality — at least a fraction alpha of a job's GPUs on the nodes that hold
// its data — and a maximum node count beta. The engine's placement layer
// (sim/engine/placement_constraints.h) judges every allocation with these functions, and the batch
// allocators (sim/alloc/batch_allocation.h) build their solutions with them, so a constraint means
// the same thing everywhere. Pure functions: no engine state.
//
// Formulation (docs/deadlines.md#constraints): y_i = GPUs of the job on node i, S = its data
// nodes, n = sum_i y_i;
//   locality:   sum_{i in S} y_i >= ceil(alpha x n)         (alpha in [0, 1]; 0 = none)
//   node count: |{i : y_i > 0}| <= beta                      (beta >= 1; 0 = no limit)
// Locality as a share of the job's work on nodes holding its data is how locality-aware schedulers
// measure it (Zaharia et al., "Delay Scheduling", EuroSys 2010); a node-count limit is what Slurm's
// `sbatch --nodes=MIN-MAX` asks for.
#ifndef CLUSTERSIM_SIM_ALLOC_CONSTRAINTS_H_
#define CLUSTERSIM_SIM_ALLOC_CONSTRAINTS_H_

#include <string>
#include <utility>
#include <vector>

namespace clustersim {

// The locality and node-count limits of one job. Data nodes are node indices (of the cluster, or
// of an allocation instance), ascending and distinct.
struct NodeLimits {
  std::vector<int> data_nodes;  // empty = no locality constraint
  double alpha = 0;             // fraction of the GPUs that must be on data nodes, in [0, 1]
  int max_nodes = 0;            // beta; 0 = no limit
  bool empty() const { return (data_nodes.empty() || alpha <= 0) && max_nodes <= 0; }
  bool IsDataNode(int node) const;
};

// GPUs of a job of `gpus` that must be on its data nodes: ceil(alpha x gpus), where a product
// within 1e-9 of an integer counts as that integer (0.8 x 5 is 4, not 5 after rounding).
int LocalityNeed(double alpha, int gpus);

// Returns "" if holding `per_node` ((node, GPUs > 0) pairs, nodes distinct) meets `limits`;
// otherwise what is violated, e.g. "2 of 4 GPUs on its data nodes; needs 4 (alpha 0.8)".
std::string CheckNodeLimits(const std::vector<std::pair<int, int>>& per_node,
                            const NodeLimits& limits);

// What one node offers a job: its free GPUs and whether it holds the job's data.
struct NodeOffer {
  int node = 0;
  int free = 0;
  bool data = false;
};

// Chooses where `gpus` GPUs go among `offers` (nodes a job may span together) so that at least
// `need_local` of them are on data nodes and at most `max_nodes` nodes are used (0 = no limit):
// the fewest nodes, and among those the most data nodes; within a kind, nodes with more free GPUs
// first (ties: lower node index). Data nodes are filled before the others. Returns (node, GPUs)
// pairs ascending by node, or an empty vector if no choice meets the limits. Exact for these two
// limits: taking the d fullest data nodes and the k - d fullest others maximizes both the local
// and the total GPUs for each (k, d). O(offers log offers + k^2) for the k nodes taken.
std::vector<std::pair<int, int>> SpreadOverNodes(std::vector<NodeOffer> offers, int gpus,
                                                 int need_local, int max_nodes);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ALLOC_CONSTRAINTS_H_
