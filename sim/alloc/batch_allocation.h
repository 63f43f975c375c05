// Allocating a batch of jobs at once (docs/allocators.md): which of a set of waiting jobs start
// now and on which nodes, to maximize the sum of their values, under
// - capacity: a node's GPUs held by the batch are at most its free GPUs;
// - integrity: a job gets all its GPUs or none (gang scheduling);
// - groups: a job's GPUs lie in one group of nodes it may use (one GPU type and node size, as
//   the cluster's partitions);
// - locality and node count per job (sim/alloc/constraints.h: alpha of its GPUs on its data
//   nodes, at most beta nodes).
// This is a multiple-knapsack problem with splittable, all-or-nothing items (NP-hard; it contains
// bin packing). The allocators:
// - ExactAllocate: an integer program solved by GLPK (glp_intopt) within a time limit;
// - GreedyAllocate: first-fit decreasing — jobs by GPUs, largest first (ties: higher value, then
//   lower index), each placed by SpreadOverNodes in the first group where it fits;
// - GeneticAllocate: orders of the jobs (GeneticOptions) decoded by the same placement, seeded;
// - DpAllocate: when the instance is one-dimensional (one group, no job with locality or a node
//   limit: any set of jobs whose GPUs add up to at most the free GPUs fits), the 0/1 knapsack by
//   dynamic programming over GPU counts, exact in O(jobs x free GPUs).
// The `weighted` policy and `clustersim allocate-bench` use them. Pure functions.
#ifndef CLUSTERSIM_SIM_ALLOC_BATCH_ALLOCATION_H_
#define CLUSTERSIM_SIM_ALLOC_BATCH_ALLOCATION_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/alloc/bin_packing.h"
#include "sim/alloc/constraints.h"

namespace clustersim {

struct AllocNode {
  int free = 0;   // free GPUs
  int group = 0;  // nodes a multi-node job may span together (0-based)
};

struct AllocJob {
  int gpus = 1;  // >= 1
  // The value of starting the job, > 0; per group when `value_in_group` is non-empty (one entry
  // per group of the instance; a value <= 0 forbids the group).
  double value = 1;
  std::vector<double> value_in_group;
  std::vector<int> groups;  // the groups it may use, ascending; empty = every group
  NodeLimits limits;        // data nodes are instance node indices
  double ValueIn(int group) const {
    return value_in_group.empty() ? value : value_in_group[group];
  }
  bool MayUse(int group) const;
};

struct BatchInstance {
  std::vector<AllocNode> nodes;
  std::vector<AllocJob> jobs;
  int group_count = 0;  // groups, some perhaps without nodes here; 0 = as the nodes say
  // max(group_count, 1 + the largest group of a node); 0 without either.
  int groups() const;
};

struct BatchSolution {
  // Per job: (node, GPUs) pairs ascending by node; empty = not started.
  std::vector<std::vector<std::pair<int, int>>> placement;
  double value = 0;
  bool optimal = false;  // proven optimal
};

// Throws InputError for an instance out of its domain (a job of < 1 GPU or value not finite, a
// node of negative free GPUs, a data node or group out of range).
void CheckBatchInstance(const BatchInstance& instance);
// Returns "" if `solution` is feasible for `instance` and its value is the sum of its jobs';
// otherwise what is wrong (for tests and the bench).
std::string CheckBatchSolution(const BatchInstance& instance, const BatchSolution& solution);

// Places one job on `free` (per node) in the first group where SpreadOverNodes finds room, best
// value first when values differ per group (ties: lower group). Returns the placement, or empty.
std::vector<std::pair<int, int>> PlaceJob(const BatchInstance& instance,
                                          const std::vector<int>& free, int job);

BatchSolution GreedyAllocate(const BatchInstance& instance);
// The jobs tried in `order` with PlaceJob, each started if it fits.
BatchSolution AllocateInOrder(const BatchInstance& instance, const std::vector<int>& order);
BatchSolution GeneticAllocate(const BatchInstance& instance, const GeneticOptions& options);
// The optimum by GLPK within `time_limit_seconds`; nullopt if not proven in time.
std::optional<BatchSolution> ExactAllocate(const BatchInstance& instance,
                                           double time_limit_seconds);
// True if DpAllocate applies (see the file comment).
bool IsOneDimensional(const BatchInstance& instance);
// The optimum of a one-dimensional instance; nullopt if it is not one.
std::optional<BatchSolution> DpAllocate(const BatchInstance& instance);

// One allocator by name, for the policies and commands that let users choose:
// greedy (first-fit decreasing), exact, ga, dp, or auto = dp on a one-dimensional instance, else
// exact when jobs x nodes <= auto_exact_cells, else greedy.
enum class Allocator { kGreedy, kExact, kGenetic, kDp, kAuto };
std::optional<Allocator> ParseAllocator(const std::string& name);
const char* AllocatorName(Allocator allocator);
inline constexpr const char* kAllocatorNames = "greedy, exact, ga, dp or auto";

struct AllocatorOptions {
  Allocator kind = Allocator::kAuto;
  GeneticOptions genetic;
  // Exact: GLPK's time limit per instance (trade-off: longer proves more instances optimal,
  // each pass of a policy waits that long at worst).
  double time_limit_seconds = 1.0;
  int auto_exact_cells = 256;  // auto: exact up to this many jobs x nodes
};

// Solves with options.kind. dp on an instance that is not one-dimensional, and exact when GLPK
// does not prove an optimum in time, fall back to greedy (*fell_back set, if given).
BatchSolution Allocate(const BatchInstance& instance, const AllocatorOptions& options,
                       bool* fell_back = nullptr);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ALLOC_BATCH_ALLOCATION_H_
