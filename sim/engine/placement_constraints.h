// Placement constraints (docs/deadlines.md#constraints): the one place where the engine judges an
// allocation against what a job asks beyond its GPU count — data locality (at least alpha of its
// GPUs on the nodes holding its data) and a node limit (at most beta nodes). A constraint kind
// added later belongs here too, so that every placement, every policy's start and `--check` see
// the same rules.
//
// Anti-affinity (docs/spreading.md) is one: a job of a group (JobConstraints::group) with a
// spread domain (node or rack) never holds GPUs in a domain where another job of its group runs.
// Unlike the limits above it depends on what runs, so its state is in Resources (counted by
// AllocateJob per group and domain, so a planner's copy knows its planned starts too); this file
// gives each group's jobs their class and rule (Resources::EnableSpread), and
// ConstrainedPlacement keeps every placement out of the refused domains.
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
#include <memory>
#include <optional>
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
  // Throws InputError naming the trace file and line for a data node outside the cluster, or a
  // job whose spread domain differs from the first job of its group.
  PlacementConstraints(const Trace& trace, const Cluster& cluster, const ConstraintOptions& options);

  // True if no job has a locality or node limit or a spread rule (nothing to check).
  bool empty() const { return limits_.size() <= 1; }
  // The spread rule of each class (for Resources::EnableSpread), or nullptr if no job has one.
  std::shared_ptr<const std::vector<SpreadRule>> spread_rules() const { return spread_rules_; }
  const SpreadRule& spread(uint16_t cls) const {
    static const SpreadRule kNone;
    return spread_rules_ ? (*spread_rules_)[cls] : kNone;
  }
  // The name of spread group `group` (as the trace gives it).
  const std::string& group_name(int group) const { return group_names_[group]; }
  // Returns "" if a job of `request` may take `gpus` (ascending) on `resources` (which does not
  // hold it) under its spread rule, else the domain where another job of its group runs.
  std::string CheckSpread(const Resources& resources, const PlacementRequest& request,
                          std::span<const int> gpus) const;
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
  std::shared_ptr<std::vector<SpreadRule>> spread_rules_;  // by class; null = no spread rules
  std::vector<std::string> group_names_;                   // by group index
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
  bool DrawsRandomNumbers() const override { return inner_.DrawsRandomNumbers(); }
  // WaitReason::kSpread when the inner strategy would place the job but only in domains where
  // jobs of its group run; else the inner strategy's reason.
  std::optional<WaitReason> NoFitReason(const Resources& resources,
                                        const PlacementRequest& request) const override;

 private:
  // The search when the inner answer does not meet the limits: whole GPUs per partition, or a
  // share on one GPU of a data node.
  bool Search(const Resources& resources, const PlacementRequest& request, Allocation* out) const;

  const Placement& inner_;
  const PlacementConstraints& constraints_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_PLACEMENT_CONSTRAINTS_H_
