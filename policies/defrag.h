// Defragmentation by migration (--defrag, docs/defragmentation.md). When the first queued job the
// policy would start next does not fit now, but would if some running jobs moved to other free
// GPUs, the defragmenter migrates the fewest of them (SchedulingContext::Migrate; each pays the
// run's preemption cost on its new GPUs) and asks the policy again, provided the migration pays:
// the waiting job's GPU-seconds gained by starting now exceed the moved jobs' GPU-seconds of cost.
//
// PlanDefrag is the decision alone (it reads the context, never changes it); Defragmenter is the
// policy wrapper a run with --defrag schedules with.
#ifndef CLUSTERSIM_POLICIES_DEFRAG_H_
#define CLUSTERSIM_POLICIES_DEFRAG_H_

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/policy.h"

namespace clustersim {

struct DefragMove {
  JobId job = kNoJob;
  Allocation to;  // the GPUs it moves to, as many as it holds
};

struct DefragPlan {
  JobId waiting = kNoJob;  // the job the moves make room for
  int node = -1;           // the node the moves empty for it
  std::vector<DefragMove> moves;  // in the order they are applied
  // When the waiting job could otherwise start: the earliest time enough GPUs are free on one
  // node it may use, with every running job ending at its estimated end (EstimatedEnd).
  double otherwise_start = std::numeric_limits<double>::infinity();
  // The rule (docs/defragmentation.md#when-it-pays): gain = its GPUs x (otherwise_start - now);
  // cost = sum over the moved jobs of their GPUs x their preemption cost. Moves iff gain > cost.
  double gain_gpu_seconds = 0;
  double cost_gpu_seconds = 0;
  bool Pays() const { return gain_gpu_seconds > cost_gpu_seconds; }
};

// The estimated end of running job `id`: its start plus its requested wall time (what a
// backfilling reservation plans with, Policy::RequestedWalltime) when it has one, else its true
// end (restore overhead plus remaining work at its rate). The earlier of the two when both exist
// (the engine kills a job at its wall time).
double EstimatedEnd(const SchedulingContext& context, const Policy& policy, JobId id);

// The fewest migrations that pay (DefragPlan::Pays) and let queued job `waiting` fit now, or a
// plan without moves when there are none: it fits already; it asks for a share, a MIG instance,
// whole nodes, a constraint class, or more GPUs than any node has; the placement ignores nodes or
// draws random numbers; or no set of movable jobs whose cost is below the gain frees enough GPUs
// on one node and fits elsewhere; or fewer GPUs of its types are free than it asks (moves make
// none). The search and its ties are in docs/defragmentation.md#search. otherwise_start and the
// gain are filled whenever the search runs.
DefragPlan PlanDefrag(const SchedulingContext& context, const Policy& policy, JobId waiting);

// Wraps `inner` (which must outlive it and ServesQueueHead): after each of its passes, while the
// first queued job it may start does not fit and PlanDefrag finds moves that pay, applies them
// and runs the inner policy's pass again. Every other question goes to `inner`.
std::unique_ptr<Policy> MakeDefragmenter(Policy& inner);
// The same, owning `inner`.
std::unique_ptr<Policy> MakeDefragmenter(std::unique_ptr<Policy> inner);

// Why `policy` (named `name`) cannot be defragmented for ("" if it can): the message of the
// InputError a run with --defrag raises.
std::string DefragProblem(const Policy& policy, const std::string& name);

}  // namespace clustersim

#endif  // CLUSTERSIM_POLICIES_DEFRAG_H_
