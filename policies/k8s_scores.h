// kube-scheduler's default resource scores (docs/spreading.md#k8s-default), as Kubernetes v1.29
// computes them in pkg/scheduler/framework/plugins/noderesources: NodeResourcesFit with the
// LeastAllocated strategy (least_allocated.go, leastResourceScorer) and
// NodeResourcesBalancedAllocation (balanced_allocation.go, balancedResourceScorer). Each is on
// 0..MaxNodeScore (100) in int64 arithmetic, as upstream; the default profile weights both plugins
// 1 (pkg/scheduler/apis/config/v1/default_plugins.go), so a node's score is their sum. Pure
// functions, so that tests check them against hand computation.
#ifndef CLUSTERSIM_POLICIES_K8S_SCORES_H_
#define CLUSTERSIM_POLICIES_K8S_SCORES_H_

#include <cmath>
#include <cstdint>
#include <vector>

namespace clustersim {

inline constexpr int64_t kMaxNodeScore = 100;  // framework.MaxNodeScore

// One scored resource of a node: what it offers (allocatable), what would be requested with the
// job placed there (the running jobs' requests + the job's), and the resource's weight.
struct ScoredResource {
  int64_t allocatable = 0;
  int64_t requested = 0;
  int64_t weight = 1;
};

// LeastAllocated: per resource (allocatable - requested) x 100 / allocatable (integer division; 0
// when requested > allocatable), averaged with the weights: sum(score x weight) / sum(weight)
// (integer division). Resources with nothing allocatable are left out; 0 if none is left.
inline int64_t LeastAllocatedScore(const std::vector<ScoredResource>& resources) {
  int64_t score = 0;
  int64_t weights = 0;
  for (const ScoredResource& r : resources) {
    if (r.allocatable == 0) continue;
    const int64_t one = r.requested > r.allocatable
                            ? 0
                            : (r.allocatable - r.requested) * kMaxNodeScore / r.allocatable;
    score += one * r.weight;
    weights += r.weight;
  }
  return weights == 0 ? 0 : score / weights;
}

// BalancedAllocation: the fractions f_i = requested / allocatable (at most 1) of the resources with
// something allocatable; std = |f_1 - f_2| / 2 for two, the population standard deviation for
// more, 0 for one or none; the score is int64((1 - std) x 100), truncated. (Releases before the
// standard deviation used 1 - |f_cpu - f_memory|; v1.29 uses this form.)
inline int64_t BalancedAllocationScore(const std::vector<ScoredResource>& resources) {
  std::vector<double> fractions;
  double total = 0;
  for (const ScoredResource& r : resources) {
    if (r.allocatable == 0) continue;
    double f = static_cast<double>(r.requested) / static_cast<double>(r.allocatable);
    if (f > 1) f = 1;
    total += f;
    fractions.push_back(f);
  }
  double deviation = 0;
  if (fractions.size() == 2) {
    deviation = std::abs((fractions[0] - fractions[1]) / 2);
  } else if (fractions.size() > 2) {
    const double mean = total / static_cast<double>(fractions.size());
    double sum = 0;
    for (double f : fractions) sum += (f - mean) * (f - mean);
    deviation = std::sqrt(sum / static_cast<double>(fractions.size()));
  }
  return static_cast<int64_t>((1 - deviation) * static_cast<double>(kMaxNodeScore));
}

}  // namespace clustersim

#endif  // CLUSTERSIM_POLICIES_K8S_SCORES_H_
