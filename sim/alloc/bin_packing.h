// One-dimensional bin packing (docs/allocators.md): items of integer sizes into the fewest bins of
// one capacity — GPU requests into nodes when every job fits on one node. The allocators here are
// the ones docs/allocators.md compares by cost and by their ratio to the optimum:
// - first fit (items in the given order) and first-fit decreasing (items by size, largest first):
//   FFD(I) <= 11/9 OPT(I) + 6/9, a tight bound (Dósa, "The Tight Bound of First Fit Decreasing
//   Bin-Packing Algorithm Is FFD(I) <= 11/9 OPT(I) + 6/9", ESCAPE 2007, LNCS 4614); first fit in
//   arbitrary order only guarantees 1.7 OPT (Dósa and Sgall, STACS 2013);
// - exact: an integer program solved by GLPK's branch and cut (GLPK 5, glp_intopt), and a dynamic
//   program over subsets for up to kMaxDpItems items (the two are independent, so each checks the
//   other);
// - a genetic algorithm over item orders decoded by first fit, seeded.
// Pure functions: the caller's instance in, a packing out.
#ifndef CLUSTERSIM_SIM_ALLOC_BIN_PACKING_H_
#define CLUSTERSIM_SIM_ALLOC_BIN_PACKING_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace clustersim {

struct BinPacking {
  int64_t capacity = 0;
  std::vector<int64_t> sizes;  // each in [1, capacity]
};

struct Packing {
  std::vector<int> bin_of;  // per item: its bin, 0-based
  int bins = 0;
  bool optimal = false;  // proven optimal (an exact method finished, or bins = a lower bound)
};

// Settings of the genetic algorithms (here and in batch_allocation.h). Each generation keeps the
// `elite` best, then fills the population with children of two tournament winners (tournament of
// 2): order crossover (OX1), then with probability `mutation` a swap of two genes. The first
// individual is the greedy order (FFD's), so the result is never worse than the greedy one. Cost:
// O(generations x population x decode).
struct GeneticOptions {
  int generations = 60;
  int population = 40;
  int elite = 2;
  double mutation = 0.3;
  uint64_t seed = 1;
};

// Throws InputError unless capacity >= 1 and every size is in [1, capacity].
void CheckBinPacking(const BinPacking& instance);

// Bins of items placed in `order` (indices into sizes), each into the lowest-index bin with room.
Packing FirstFit(const BinPacking& instance);
Packing FirstFitInOrder(const BinPacking& instance, const std::vector<int>& order);
// Items by size, largest first (ties: lower index first), then first fit.
Packing FirstFitDecreasing(const BinPacking& instance);
// ceil(sum of sizes / capacity) and the number of items larger than half a bin, the larger: no
// packing uses fewer bins.
int BinsLowerBound(const BinPacking& instance);
// Dósa's bound on FFD for an instance whose optimum is `opt` bins: 11/9 opt + 6/9.
double FfdBound(int opt);

// The optimum by an integer program (bins y_b, assignments x_ib with item i only in bins
// b <= i after sorting, y_b >= y_(b+1)), solved by GLPK within `time_limit_seconds`. Returns the
// packing with optimal = true when GLPK proved it; nullopt if the time ran out first.
std::optional<Packing> ExactBinPackingIlp(const BinPacking& instance, double time_limit_seconds);
// The optimum by dynamic programming over subsets of items: for each subset the least (bins,
// fill of the last bin) pair, adding one item at a time (O(2^n n) time, 9 x 2^n bytes). Returns
// nullopt for more than kMaxDpItems items or a capacity above 2^30.
inline constexpr int kMaxDpItems = 20;
std::optional<Packing> ExactBinPackingDp(const BinPacking& instance);

// The genetic algorithm over item orders (GeneticOptions), each decoded by first fit; fitness
// is the bins used, ties broken by the sum of squared bin fills (fuller bins are better,
// Falkenauer and Delchambre, "A Genetic Algorithm for Bin Packing and Line Balancing", ICRA 1992).
Packing GeneticBinPacking(const BinPacking& instance, const GeneticOptions& options);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ALLOC_BIN_PACKING_H_
