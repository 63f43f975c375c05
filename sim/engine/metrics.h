// Exact time integrals of the cluster state (docs/metrics.md). The state is piecewise constant
// between events; AdvanceTo(t) integrates it over [last, t] into run totals and into fixed
// intervals (default 300 s) for the `timeseries` table, splitting at interval boundaries, so
// every figure is an exact time-average, never a point sample.
//
// The engine reports every allocation change (OnAllocate / OnRelease) and, after each pass, the
// queue state (ObserveQueue). Metrics owns no job state.
//
// GPU sharing: an allocation with milli > 0 counts as milli/1000 of a busy GPU per listed GPU
// (busy GPUs, utilization, power, energy, node imbalance, memory held).
// GPU memory: by default a job holds the whole memory of its GPUs (a share of milli holds that
// share of the memory). With set_memory_reported(true) the engine reports the bytes each job
// places on each GPU (OnGpuMemory) and memory utilization and F_mem follow those reports.
// Fragmentation kept incrementally per change: F_mem (docs/metrics.md#f_mem) over the per-GPU free
// memory, in O(log GPUs) per GPU changed; FGD expected fragmentation (sim/engine/fragmentation.h)
// once the workload is given (set_resources + SetWorkload), in O(classes x GPUs) per node changed.
// Both read a GPU as down (no free memory, no idle capacity) when Resources holds it while no
// allocation does.
// Host resources (docs/resources.md): every allocation charges its nodes' CPUs and host memory as
// HostChargeOn says (a job stating no demand: the node's share of its GPUs), integrated into CPU
// and host-memory utilization over the nodes that declare them. With host limits
// (EnableHostLimits) the node imbalance reads each node's real CPU use, and idle GPUs on nodes
// whose free CPUs or memory are below the smallest demand any job of the run brings with one GPU
// (HostThresholds) are counted as CPU-stranded: no job of the run could use them.
#ifndef CLUSTERSIM_SIM_ENGINE_METRICS_H_
#define CLUSTERSIM_SIM_ENGINE_METRICS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/engine/fragmentation.h"
#include "sim/engine/placement.h"
#include "sim/engine/resources.h"
#include "sim/hardware/cluster.h"

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
  double f_mem = -1;
  // Negative also when FGD is not tracked (no workload given).
  double fgd_fragmentation = -1;
  double fgd_fragmented_gpus = -1;
  // Host resources (whole-cluster rows; negative when the cluster declares no such capacity, resp.
  // the run has no host limits).
  double cpu_utilization = -1;
  double host_memory_utilization = -1;
  double cpu_stranded_gpus = -1;
};

// The smallest host demand a job of the run brings with one piece of GPU, per dimension: over the
// jobs that state a demand, the demand per GPU (whole GPUs: demand / GPUs, rounded down; a share:
// its whole demand); over the jobs that state none, the smallest piece of GPU they take (1000 =
// a whole GPU; 0 = every job states one), which a node charges in proportion.
struct HostThresholds {
  int32_t cpu_milli = INT32_MAX;
  int32_t memory_mib = INT32_MAX;
  int unstated_cpu_piece_milli = 0;
  int unstated_memory_piece_milli = 0;
};

// Most timeseries intervals one run may hold (rows are kept in memory until written): 10^6 is
// 9.5 years at the default 300 s. A run that would need more throws InputError.
inline constexpr double kMaxTimeseriesIntervals = 1e6;

class Metrics {
 public:
  Metrics(const Cluster& cluster, double interval_seconds);

  // Integrates the current state over [last time, t]. REQUIRES t >= last time.
  void AdvanceTo(double t);
  // A job took (or gave back) `allocation`; one that spans nodes counts its NIC traffic in the
  // node-imbalance network dimension. Returns the number of nodes the allocation spans (the
  // engine records it per job: one walk over the GPUs serves both).
  // `host`: the job's stated host demands (charged per node by HostChargeOn).
  int OnAllocate(const Allocation& allocation, const HostDemand& host = {}) {
    return whole_fast_ && allocation.milli == 0 && !allocation.gpus.empty()
               ? ChangeWhole(allocation, +1)
               : Change(allocation, host, +1);
  }
  int OnRelease(const Allocation& allocation, const HostDemand& host = {}) {
    return whole_fast_ && allocation.milli == 0 && !allocation.gpus.empty()
               ? ChangeWhole(allocation, -1)
               : Change(allocation, host, -1);
  }
  // After a pass: the queue head's request (nullptr when the queue is empty), queue length and
  // running jobs. Computes stranded GPUs and I_frag for the state that now holds.
  void ObserveQueue(const Resources& resources, const PlacementRequest* head, int queue_length,
                    int running_jobs);
  // Closes the last partial interval at `t`.
  void Finish(double t);

  // Memory accounting mode (see the header comment). REQUIRES: set before the first OnAllocate.
  void set_memory_reported(bool reported);
  bool memory_reported() const { return memory_reported_; }
  // `delta_bytes` of a job's memory were placed on (> 0) or removed from (< 0) GPU `gpu`.
  // REQUIRES memory_reported() (CHECKed); the GPU's reported bytes never go below 0 (CHECKed,
  // with a tolerance of 1 byte for rounding).
  void OnGpuMemory(int gpu, double delta_bytes);
  // The engine's live Resources (it outlives the Metrics), read by the FGD tracker and to tell
  // down GPUs. REQUIRES: OnAllocate / OnRelease are called after Resources has been updated.
  void set_resources(const Resources* resources);
  // Enables FGD expected fragmentation for the workload `classes` (WorkloadClasses), starting
  // from the current Resources state. REQUIRES set_resources first.
  void SetWorkload(const std::vector<TaskClass>& classes);
  bool fgd_enabled() const { return fgd_ != nullptr; }
  // The run limits host resources (Resources::host_limited): node imbalance and CPU stranding
  // read the Resources' free CPUs and memory. REQUIRES set_resources first and nothing allocated.
  void EnableHostLimits(const HostThresholds& thresholds);
  bool host_limited() const { return host_limited_; }
  // Resources changed on `node` outside an allocation (a failure or repair took its GPUs out or
  // gave them back): recomputes the node's FGD value and its GPUs' free memory.
  void OnNodeChanged(int node);
  // `node` went out of service (`out`: a pool node not provisioned, a spot node being replaced)
  // or came back; call before OnNodeChanged. A node out of service draws no power (energy and
  // the timeseries' power count its GPUs neither busy nor idle) and holds no CPUs in its
  // node imbalance, though its whole host is held out of placement.
  void OnNodeHeldOut(int node, bool out);

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
  double f_mem_seconds() const { return total_[q_index_ + 6]; }
  double fgd_fragmentation_seconds() const { return total_[q_index_ + 7]; }
  double fgd_fragmented_gpu_seconds() const { return total_[q_index_ + 8]; }
  // CPU cores and host GiB held (integrals), idle GPUs stranded by CPUs or memory (integral), and
  // the capacities the utilizations divide by (0 = not declared).
  double cpu_used_core_seconds() const { return total_[q_index_ + 9]; }
  double host_memory_used_gib_seconds() const { return total_[q_index_ + 10]; }
  double cpu_stranded_gpu_seconds() const { return total_[q_index_ + 11]; }
  double cpu_capacity_cores() const { return cpu_capacity_cores_; }
  double host_memory_capacity_gib() const { return host_memory_capacity_gib_; }
  double cpu_used_cores_now() const { return state_[q_index_ + 9]; }
  double cpu_stranded_gpus_now() const { return state_[q_index_ + 11]; }
  double node_imbalance_now() const { return state_[q_index_ + 4]; }
  // Current values (tests, invariant checks).
  double f_mem_now() const { return state_[q_index_ + 6]; }
  double fgd_fragmentation_now() const { return state_[q_index_ + 7]; }
  // FGD expected fragmented capacity and idle capacity now, in milli (0 without a workload).
  double fgd_fragmented_milli_now() const { return fgd_ ? std::max(0.0, fgd_->total()) : 0.0; }
  int64_t fgd_idle_milli_now() const { return fgd_ ? fgd_->idle_milli() : 0; }
  double memory_used_gib_now() const { return state_[q_index_ + 5]; }
  double total_memory_gib() const { return total_memory_gib_; }
  // Current busy GPUs (for the invariant checker).
  double busy_gpus_now() const;

 private:
  int Change(const Allocation& allocation, const HostDemand& host, int sign);
  int ChangeWhole(const Allocation& allocation, int sign);
  // Recomputes `node`'s imbalance and CPU stranding from the current state.
  void RefreshNode(int node);
  double CpuStranded(int node) const;
  // Adds the state times (to - from) to the current interval's bucket and the run totals.
  void Integrate(double from, double to);
  void FlushInterval(double end);
  double NodeImbalance(int node) const;
  // Recomputes the free memory of `gpu` in the max/sum tree (F_mem) from its state.
  void RefreshGpuMemory(int gpu);
  void UpdateFragmentationState();
  bool IsGpuDown(int gpu) const;

  const Cluster& cluster_;
  double interval_;
  bool started_ = false;
  double start_ = 0;
  double last_ = 0;
  double interval_start_ = 0;
  // State vector: [busy GPUs per present type..., memory GiB held per type..., queue, running,
  // stranded, i_frag, F, memory GiB, F_mem, FGD ratio, FGD fragmented GPUs].
  std::vector<int> types_;      // present catalog types, order of the state slots
  std::vector<int> type_slot_;  // catalog type -> slot
  int q_index_ = 0;
  // Slots of GPUs out of service per present type (OnNodeHeldOut), after the queue slots; made
  // at the first node held out (-1 before: a run without pools or spot keeps its state vector).
  int off_index_ = -1;
  std::vector<uint8_t> held_out_;  // per node, once a node was held out
  std::vector<double> state_;
  std::vector<double> total_;
  std::vector<double> bucket_;
  std::vector<TimeseriesRow> rows_;
  // Node imbalance bookkeeping (docs/metrics.md#node-imbalance).
  std::vector<double> node_busy_;  // GPUs (shares as fractions)
  std::vector<double> node_multi_busy_;
  std::vector<double> node_imbalance_;         // cached NodeImbalance per node
  std::vector<double> node_gpu_memory_bytes_;  // reported GPU memory per node
  double imbalance_sum_ = 0;
  // Host resources: held totals (milli-cores, MiB) and, with host limits, per-node thresholds
  // and CPU-stranded GPUs.
  int64_t cpu_used_milli_ = 0;
  int64_t memory_used_mib_ = 0;
  double cpu_capacity_cores_ = 0;
  double host_memory_capacity_gib_ = 0;
  bool host_declared_ = false;  // some node declares CPUs or host memory
  // ChangeWhole applies to allocations of whole GPUs: no host capacity declared, memory not
  // reported, no host limits, no per-GPU memory tree. Kept by UpdateFastPath.
  bool whole_fast_ = false;
  void UpdateFastPath() {
    whole_fast_ = !host_declared_ && !memory_reported_ && !host_limited_ && !tree_live_;
  }
  // Per state slot of a type: its GPUs' memory, in GiB and in bytes.
  std::vector<double> type_memory_gib_;
  std::vector<double> type_capacity_bytes_;
  bool host_limited_ = false;
  std::vector<int32_t> cpu_threshold_;     // per node; INT32_MAX = never stranded by CPUs
  std::vector<int32_t> memory_threshold_;  // per node
  std::vector<double> node_cpu_stranded_;
  double cpu_stranded_sum_ = 0;
  double total_memory_gib_ = 0;
  // Per-GPU memory (F_mem): held thousandths, reported bytes, and a tree over GPUs holding the
  // max and the sum of free bytes (leaves at mem_leaves_ + gpu), recomputed along one path per
  // change so the sum never drifts.
  bool memory_reported_ = false;
  bool allocated_any_ = false;
  std::vector<int> held_milli_;
  // Per GPU, the thousandths of its memory that MIG instances hold beyond their compute share
  // (an instance holds its memory slices, 125 thousandths each: docs/mig.md); empty until the
  // first MIG instance.
  std::vector<int> mig_memory_extra_milli_;
  std::vector<double> reported_bytes_;
  std::vector<double> capacity_bytes_;
  // Whether the tree is kept up to date. With the Resources known, whole GPUs and unreported
  // memory (the common case), free memory per GPU is its capacity or nothing, and F_mem follows
  // from the free GPUs per type in O(types); the tree is built on the first share or report.
  bool tree_live_ = true;
  void BuildMemoryTree();
  int mem_leaves_ = 1;
  std::vector<double> free_max_;
  std::vector<double> free_sum_;
  const Resources* resources_ = nullptr;
  std::unique_ptr<FgdTracker> fgd_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_METRICS_H_
