// Exact time integrals of the cluster state (DESIGN.md §8). The state is piecewise constant
// between events; AdvanceTo(t) integrates it over [last, t] into run totals and into fixed
// intervals (default 300 s) for the `timeseries` table, splitting at interval boundaries, so
// every figure is an exact time-average, never a point sample.
//
// The engine reports every allocation change (OnAllocate / OnRelease) and, after each pass, the
// queue state (ObserveQueue). Metrics owns no job state.
#ifndef CLUSTERSIM_SIM_METRICS_H_
#define CLUSTERSIM_SIM_METRICS_H_

#include <vector>

#include "sim/cluster.h"
#include "sim/placement.h"
#include "sim/resources.h"

namespace clustersim {

struct TimeseriesRow {
  double t_start = 0;
  double t_end = 0;
  int gpu_type = -1;  // catalog index; -1 = whole cluster
  double busy_gpus = 0;
  double utilization = 0;
  double memory_utilization = 0;
  double power_watts = 0;
  // Whole-cluster rows only (per-type rows leave them negative = not applicable).
  double queue_length = -1;
  double running_jobs = -1;
  double stranded_gpus = -1;
  double i_frag = -1;
  double node_imbalance = -1;
};

// Most timeseries intervals one run may hold (rows are kept in memory until written): 10^6 is
// 9.5 years at the default 300 s. A run that would need more throws InputError.
inline constexpr double kMaxTimeseriesIntervals = 1e6;

class Metrics {
 public:
  Metrics(const Cluster& cluster, double interval_seconds);

  // Integrates the current state over [last time, t]. REQUIRES t >= last time.
  void AdvanceTo(double t);
  // A job took (or gave back) `allocation`; `multi_node` says whether it spans nodes (its NIC
  // traffic counts in the node-imbalance network dimension).
  void OnAllocate(const Allocation& allocation, bool multi_node) { Change(allocation, multi_node, +1); }
  void OnRelease(const Allocation& allocation, bool multi_node) { Change(allocation, multi_node, -1); }
  // After a pass: the queue head's request (nullptr when the queue is empty), queue length and
  // running jobs. Computes stranded GPUs and I_frag for the state that now holds.
  void ObserveQueue(const Resources& resources, const PlacementRequest* head, int queue_length,
                    int running_jobs);
  // Closes the last partial interval at `t`.
  void Finish(double t);

  const std::vector<TimeseriesRow>& rows() const { return rows_; }
  double start_time() const { return start_; }
  double last_time() const { return last_; }
  // Integrals over the whole run (unit x seconds).
  double busy_gpu_seconds() const;
  double busy_gpu_seconds_of_type(int type) const;
  double energy_joules() const;
  double queue_length_seconds() const { return total_[q_index_]; }
  double running_jobs_seconds() const { return total_[q_index_ + 1]; }
  double stranded_gpu_seconds() const { return total_[q_index_ + 2]; }
  double i_frag_seconds() const { return total_[q_index_ + 3]; }
  double node_imbalance_seconds() const { return total_[q_index_ + 4]; }
  double memory_used_gib_seconds() const { return total_[q_index_ + 5]; }
  double total_memory_gib() const { return total_memory_gib_; }
  // Current busy GPUs (for the invariant checker).
  double busy_gpus_now() const;

 private:
  void Change(const Allocation& allocation, bool multi_node, int sign);
  void Integrate(double from, double to, std::vector<double>& into) const;
  void FlushInterval(double end);
  double NodeImbalance(int node) const;

  const Cluster& cluster_;
  double interval_;
  bool started_ = false;
  double start_ = 0;
  double last_ = 0;
  double interval_start_ = 0;
  // State vector: [busy GPUs per present type..., queue, running, stranded, i_frag, F, mem GiB].
  std::vector<int> types_;       // present catalog types, order of the state slots
  std::vector<int> type_slot_;   // catalog type -> slot
  int q_index_ = 0;
  std::vector<double> state_;
  std::vector<double> total_;
  std::vector<double> bucket_;
  std::vector<TimeseriesRow> rows_;
  // Node imbalance bookkeeping (seed 001 §3.3.3).
  std::vector<int> node_busy_;
  std::vector<int> node_multi_busy_;
  double imbalance_sum_ = 0;
  double total_memory_gib_ = 0;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_METRICS_H_
