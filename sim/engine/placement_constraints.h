// Placement constraints (docs/deadlines.md#constraints): the one place where the engine judges an
// allocation against what a job asks beyond its GPU count — data locality (at least alpha of its
// GPUs on the nodes holding its data) and a node limit (at most beta nodes). A constraint kind
// added later (e.g. spread domains) belongs here too, so that every placement, every policy's
// start and `--check` see the same rules.
//
// - PlacementConstraints resolves each job's limits once per run, from the trace
//   (JobConstraints: data_nodes, max_nodes) and the run's ConstraintOptions (alpha, the default
//   node limit). Jobs with equal limits share a class (PlacementRequest::constraint, 0 = none),
//   so caches keyed by a request's shape stay exact when they add the class.
// - ConstrainedPlacement wraps the run's placement: it returns the inner strategy's answer when
//   that meets the job's limits, and otherwise searches for one that does (SpreadOverNodes in
//   sim/alloc/constraints.h: within one partition of an allowed type, the fewest nodes, data
//   nodes first, fullest first), so every strategy honours the constraints; a job for which no
//   placement of the empty cluster meets them is rejected at arrival with the reason.
// - The engine checks every start and resize (a policy starting a job against its constraints is
//   a policy bug, stopped naming the policy) and, with --check, every running job after each pass.
#ifndef CLUSTERSIM_SIM_ENGINE_PLACEMENT_CONSTRAINTS_H_
#define CLUSTERSIM_SIM_ENGINE_PLACEMENT_CONSTRAINTS_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "sim/alloc/constraints.h"
#include "sim/engine/job.h"
#include "sim/engine/placement.h"

namespace clustersim {

// The run's settings (run --locality-alpha, --max-nodes-per-job).
struct ConstraintOptions {
  // Fraction of a job's GPUs that must be on its data nodes, for jobs that have data nodes.
  // Default 1: every worker on a node holding the data, what a job reading a node-local copy of
  // its dataset needs; lower values let a share of the workers read over the network
  // (docs/deadlines.md#constraints); 0 = data nodes are ignored.
  double locality_alpha = 1.0;
  // Most nodes any job may span (a job's own max_nodes wins when it is smaller); 0 = no limit.
  int max_nodes_per_job = 0;
};

class PlacementConstraints {
 public:
  // Throws InputError naming the trace file and line for a data node outside the cluster.
  PlacementConstraints(const Trace& trace, const Cluster& cluster, const ConstraintOptions& options);

  // True if no job has a locality or node limit (nothing to check).
  bool empty() const { return limits_.size() <= 1; }
  // The job's class for PlacementRequest::constraint (0 = none).
  uint16_t ClassOf(JobId id) const { return class_of_.empty() ? 0 : class_of_[id]; }
  const NodeLimits& limits(uint16_t cls) const { return limits_[cls]; }
  const ConstraintOptions& options() const { return options_; }

  // Returns "" if a job of `request` holding `gpus` (ascending global indices) meets its limits,
  // else what it violates.
  std::string Check(const Cluster& cluster, const PlacementRequest& request,
                    std::span<const int> gpus) const;
  // Why a job of `request` fits the empty cluster under the run's placement but no placement
  // meets its limits there: its limits and the most they allow, for the rejection reason.
  std::string Describe(const PlacementRequest& request) const;

 private:
  ConstraintOptions options_;
  std::vector<NodeLimits> limits_;  // by class; [0] = no limits
  std::vector<uint16_t> class_of_;  // by job; empty = every job 0
};

// The run's placement under the constraints (see the file comment). Requests of class 0 go to the
// inner strategy untouched.
class ConstrainedPlacement final : public Placement {
 public:
  ConstrainedPlacement(const Placement& inner, const PlacementConstraints& constraints)
      : inner_(inner), constraints_(constraints) {}
  bool Find(const Resources& resources, const PlacementRequest& request,
            Allocation* out) const override;
  bool SharesGpus() const override { return inner_.SharesGpus(); }
  // Nodes matter once a job has limits: planners then plan per node.
  bool IgnoresNodes() const override { return inner_.IgnoresNodes() && constraints_.empty(); }
  bool PlacesCpuOnly() const override { return inner_.PlacesCpuOnly(); }
  bool CountsJobKinds() const override { return inner_.CountsJobKinds(); }

 private:
  // The search when the inner answer does not meet the limits: whole GPUs per partition, or a
  // share on one GPU of a data node.
  bool Search(const Resources& resources, const PlacementRequest& request, Allocation* out) const;

  const Placement& inner_;
  const PlacementConstraints& constraints_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_PLACEMENT_CONSTRAINTS_H_
