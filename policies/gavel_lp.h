// The allocation linear programs of Gavel (Narayanan et al., "Heterogeneity-Aware Cluster
// Scheduling Policies for Deep Learning Workloads", OSDI'20, §3-4), solved with GLPK's simplex
// (Debian libglpk-dev). An allocation X gives every job m the fraction of time X[m][j] it should
// run on GPU type j.
//
// Constraints (the paper's §3.1; the artifact's Policy.get_base_constraints):
//   X[m][j] >= 0;  sum_j X[m][j] <= 1 (a job runs on one type at a time);
//   sum_m s_m X[m][j] <= N_j (a type's GPUs; s_m = the job's GPU count, its "scale factor");
//   X[m][j] = 0 where the job cannot run (throughput 0).
// Objectives:
// - max-min fairness, the heterogeneity-aware LAS of §4.1 (the artifact's
//   MaxMinFairnessPolicyWithPerf): maximize min_m (1/w_m) s_m sum_j T[m][j] X[m][j] / T_eq[m],
//   where T_eq[m] = sum_j T[m][j] N_j / max(M, sum_j N_j) is the job's throughput under an equal
//   split of every type among the M jobs (the artifact's ProportionalPolicy). Jobs that can run
//   nowhere are left out of the minimum. The min-max LP has many optima and simplex may return
//   one that leaves GPUs idle that no job's minimum needs; a second LP (the water-filling the
//   artifact offers in max_min_fairness_water_filling.py, reduced to one step) keeps every job at
//   or above the optimal minimum (less a relative 1e-7) and maximizes the total work rate
//   sum_m s_m sum_j T[m][j] X[m][j].
// - maximum total throughput (the artifact's ThroughputSumWithPerf): maximize
//   sum_m s_m sum_j T[m][j] X[m][j]. The artifact sums steps per second of each job; clustersim's
//   throughputs are rates relative to the job's trace run time on its GPUs, so each is weighted
//   by the job's GPUs to make jobs of different sizes commensurable (reference GPU-seconds of
//   work per second).
// Identical jobs (the same throughputs, scale factor and weight) get one allocation: the LPs are
// symmetric in them, so averaging any optimum over their permutations is an optimum too, and the
// LPs are solved over classes of identical jobs (a class of n jobs counts n times against
// capacity and in the total work rate). An interior-point method's limit, the analytic centre
// of the optimal face, is symmetric in them too; a simplex vertex over the jobs themselves would
// give identical jobs arbitrary, unequal shares. It also keeps the LP small when thousands of
// jobs are alike. One refinement: where a class's allocation mixes GPU types on which its
// throughput is the same, the class's time on those types is dealt out whole, in job order, so
// that all but a few of its jobs run on one type (each keeps its total share, hence its
// throughput; each type keeps its load; the allocation stays optimal). Otherwise the priority
// rule would move every such job between the types round after round, for nothing.
// Solves are serialized by the process-wide GlpkMutex (sim/alloc/glpk_lock.h).
#ifndef CLUSTERSIM_POLICIES_GAVEL_LP_H_
#define CLUSTERSIM_POLICIES_GAVEL_LP_H_

#include <vector>

namespace clustersim {

struct GavelProblem {
  std::vector<int> gpus_per_type;               // N_j
  std::vector<int> scale;                       // s_m >= 1
  std::vector<std::vector<double>> throughput;  // T[m][j] >= 0
  std::vector<double> weight;                   // w_m > 0; empty = all 1
};

enum class GavelObjective { kMaxMinFairness, kMaxThroughput };

struct GavelAllocation {
  std::vector<std::vector<double>> x;  // X[m][j], rounded to 1e-9 and clipped to [0, 1]
  // The optimal objective: the minimum normalized throughput (max-min) or the total work rate.
  double objective = 0;
  bool optimal = false;  // false: GLPK did not report an optimum (x is then all zero)
};

// T_eq[m] as defined above.
double EqualShareThroughput(const GavelProblem& problem, int job);

// REQUIRES: consistent sizes (CHECKed).
GavelAllocation SolveGavel(const GavelProblem& problem, GavelObjective objective);

}  // namespace clustersim

#endif  // CLUSTERSIM_POLICIES_GAVEL_LP_H_
