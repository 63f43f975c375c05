// Whether a queued job could run on a pool's nodes at all (docs/autoscaling.md#autoscalers): the
// question the Kubernetes Cluster Autoscaler asks its scheduler's predicates of a node group's
// template node before it counts a pending pod for that group (cluster-autoscaler/FAQ.md, "How
// does scale-up work?"). Here it is the run's placement (every rule it honours: GPU type, host
// demands, data nodes and node limits, tensor-parallel groups, whole nodes, MIG profiles) asked
// on the pool's nodes alone, all empty and in service. A job that fits there on no account
// (its data held elsewhere, more host memory than a pool node has) must not make a pool grow.
#ifndef CLUSTERSIM_POLICIES_POOL_FIT_H_
#define CLUSTERSIM_POLICIES_POOL_FIT_H_

#include <map>
#include <memory>
#include <vector>

#include "sim/engine/node_pools.h"
#include "sim/engine/placement.h"
#include "sim/engine/policy.h"

namespace clustersim {

class PoolFit {
 public:
  // True if the queued job `id` fits pool group `group`'s nodes, empty, under the run's
  // placement. A placement that draws random numbers is not asked (its draws are the run's):
  // then only the GPU type decides. Answers are kept per request shape (ShapeOf), which decides
  // a fit.
  bool Fits(const SchedulingContext& ctx, const NodePools& pools, int group, JobId id);

 private:
  struct Group {
    std::unique_ptr<Resources> empty;  // the pool's nodes free, every other node held
    std::map<RequestShape, bool> fits;
  };
  const Resources& EmptyPool(const SchedulingContext& ctx, const NodePools& pools, int group);

  std::vector<Group> groups_;  // by cluster group, made at first need
  Allocation scratch_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_POLICIES_POOL_FIT_H_
