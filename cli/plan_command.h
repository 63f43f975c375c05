// `clustersim plan`: capacity planning (docs/capacity.md, docs/plan.md). Given a trace, a policy and
// placement, candidate node types (a catalog GPU type x GPUs per node, or a one-type preset) with
// prices, and an SLO (several conditions, all must hold) and optionally a budget, it finds by
// simulation the smallest node count of each type that meets the SLO and the cheapest mix of types.
//
// Search (every evaluation is one ExecuteRun without an output database; several run at once on
// threads, `--jobs`):
// - The SLO's `<=` conditions (waits, JCT, slowdown, queue length, utilization) improve as nodes
//   are added; they and "no job rejected" define the capacity conditions, assumed monotone in the
//   node count. `>=` conditions (e.g. utilization>=0.6) and the budget get worse as nodes are
//   added: they are checked on the points found, never searched.
// - One node type: the smallest passing count n with n - 1 failing (or n = the fewest nodes that
//   hold the largest job). Start from the Erlang C estimate (below); first round {start,
//   start - 1, 2 start, start / 2, ...}; while nothing passes, double the largest failing count
//   (up to --max-nodes); then split the bracket (largest fail, smallest pass) into --jobs + 1
//   parts per round until they are adjacent. A failing point where no job waited at all ends the
//   upward search: more identical nodes at the end of the node list cannot change the schedule.
// - Mixes of T >= 2 types: a grid over the counts of the first T - 1 types (each from 0 to its
//   single-type answer in --mix-steps steps) and, for each grid point, the same bracket search on
//   the last type's count in [0, its single-type answer] (assumed to pass there: adding nodes of
//   other types only adds capacity). Bounded by (steps + 1)^(T-1) chains of log2 steps each, and
//   by --max-evals in all. The cheapest point meeting every condition (capacity, `>=`, budget)
//   among everything evaluated is the answer.
// - Erlang C starting bracket: each job's GPUs are taken as separate one-GPU customers of an
//   M/M/c queue whose servers are GPUs: lambda = GPUs requested per second over the trace's
//   submission span, 1/mu = the GPU-weighted mean duration (divided by the GPU type's speedup in
//   the hardware runtime model), a = lambda/mu = offered GPU-seconds per second. c is the
//   smallest count with W_q <= target for mean_wait, the q-quantile of the M/M/c wait <= target
//   for pQQ_wait, W_q <= target - 1/mu for mean_jct, and floor(a) + 1 (rho < 1) otherwise; the
//   start is ceil(c / GPUs per node) nodes. Exact for one-GPU jobs with Poisson arrivals and
//   exponential durations on 1-GPU nodes; for gang-scheduled multi-GPU jobs it is optimistic
//   (fragmentation, head-of-line blocking), hence only a starting point.
#ifndef CLUSTERSIM_CLI_PLAN_COMMAND_H_
#define CLUSTERSIM_CLI_PLAN_COMMAND_H_

namespace clustersim {

// argv[0] is "plan". Returns 0 when a configuration meets the SLO (and budget), 1 when none
// does; throws InputError for bad options (exit 2 in main).
int CommandPlan(int argc, char** argv);

}  // namespace clustersim

#endif  // CLUSTERSIM_CLI_PLAN_COMMAND_H_
