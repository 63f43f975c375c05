// GPU fragmentation as Alibaba's FGD measures it (Weng et al., "Beware of Fragmentation:
// Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC'23, §3).
//
// The workload is a distribution of task classes (request sizes with weights summing to 1). The
// fragment of a node for one class is the node's idle GPU capacity (thousandths of a GPU,
// "milli") that a task of the class cannot use:
//   - the task does not fit on the node at all: all of the node's idle capacity;
//   - it fits: the idle capacity of the GPUs that individually cannot hold the task's per-GPU
//     share, i.e. GPUs with free milli < min(demand, 1000) — for a fractional task of m milli the
//     GPUs with less than m free, for a whole-GPU task the leftovers of partly used GPUs.
// The node's expected fragmentation is the weighted sum over classes (the paper's F_n(M)); the
// cluster's is the sum over nodes. FGD places a task where this grows least.
//
// Fit rules here: a fractional class (milli > 0) fits when some GPU has >= milli free; a
// whole-GPU class of g GPUs fits when the node has >= min(g, G) completely free GPUs (G = the
// node's GPUs: a class larger than a node is counted with its per-node demand, as I_frag does,
// because it would take this node whole as one of its nodes). What clustersim leaves out of the
// paper's measure: CPU demands (a node is never "short of CPU") and GPU-type constraints of
// classes (every class may use every type), and CPU-only tasks (not a GPU workload here).
//
// Units: milli throughout (1000 = one whole GPU). Every function is a pure function of its
// arguments; FgdTracker caches one value per node and owns nothing else.
#ifndef CLUSTERSIM_SIM_ENGINE_FRAGMENTATION_H_
#define CLUSTERSIM_SIM_ENGINE_FRAGMENTATION_H_

#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine/job.h"
#include "sim/hardware/cluster.h"

namespace clustersim {

class Resources;

inline constexpr int kMilliPerGpu = 1000;

struct TaskClass {
  int gpus = 1;       // whole GPUs when milli == 0; 1 when milli > 0
  int milli = 0;      // 1..999: a share of one GPU; 0: whole GPUs
  double weight = 0;  // share of the workload's tasks; the classes' weights sum to 1
  // The per-GPU demand in milli (1000 for whole GPUs).
  int PerGpuMilli() const { return milli > 0 ? milli : kMilliPerGpu; }
  // Total demand in milli (gpus x 1000, or milli).
  int64_t TotalMilli() const { return milli > 0 ? milli : int64_t{gpus} * kMilliPerGpu; }
};

// Default number of classes kept: the openb trace has about 30 distinct request sizes.
inline constexpr int kDefaultMaxTaskClasses = 32;

// Returns the trace's distribution of request sizes, most frequent first (ties: fewer GPUs,
// then smaller milli first). A job is (1, gpu_milli) when 0 < gpu_milli < 1000 and
// `fractional` (the run shares GPUs), else (gpus, 0); jobs of 0 GPUs are not GPU tasks and are
// skipped. Beyond `max_classes` the tail is folded: each tail class adds its count to the kept
// class nearest in total demand (TotalMilli; ties to the larger demand, so a folded task is
// never assumed smaller than its neighbours), so the weights still count every job. (The
// authors' simulator instead drops the tail and renormalizes.) Empty if no job asks for GPUs.
// REQUIRES max_classes >= 1.
std::vector<TaskClass> WorkloadClasses(const Trace& trace, int max_classes = kDefaultMaxTaskClasses,
                                       bool fractional = true);

// The fragment of a node for one class, in milli. `free_milli` holds the node's GPUs' free
// thousandths (0..1000; a GPU held whole or down is 0).
double ClassFragment(std::span<const int> free_milli, const TaskClass& task);

// The node's expected fragmentation sum_c weight_c x ClassFragment(node, c), in milli.
double NodeFragmentation(std::span<const int> free_milli, std::span<const TaskClass> classes);

// Evaluates NodeFragmentation after one GPU's free milli changes, in O(classes) each after
// O(classes x GPUs) set-up: what frag-aware placement asks for every candidate GPU of a node.
class NodeFragmentationView {
 public:
  NodeFragmentationView(std::span<const int> free_milli, std::span<const TaskClass> classes);
  // NodeFragmentation of the node as given.
  double current() const { return current_; }
  // NodeFragmentation if one GPU with `from` free milli had `to` free instead.
  // REQUIRES some GPU of the node has `from` free.
  double AfterChange(int from, int to) const;

 private:
  double Evaluate(int64_t idle, int max_free, int full, const std::vector<int64_t>& below, int from,
                  int to) const;

  std::span<const TaskClass> classes_;
  int gpus_ = 0;
  int64_t idle_ = 0;            // sum of free milli
  int full_ = 0;                // GPUs with 1000 free
  int top_ = -1;                // largest free milli
  int top_count_ = 0;           // GPUs holding it
  int second_ = -1;             // largest free milli below top_, -1 if none
  std::vector<int64_t> below_;  // per class: sum of free milli of GPUs below its per-GPU demand
  double current_ = 0;
};

// The cluster's expected fragmentation kept per node: NodeChanged recomputes one node in
// O(classes x GPUs of the node), so nothing scans the cluster per event. A node whose GPUs are
// each wholly free or wholly held (no shares) has a value that depends only on its GPU count and
// its free GPUs (the measure depends on the free amounts, not on which GPU holds which): it is
// looked up in a table filled on first use, O(GPUs of the node).
class FgdTracker {
 public:
  // Starts from the empty cluster (every GPU free).
  FgdTracker(const Cluster& cluster, std::vector<TaskClass> classes);

  // Recomputes `node` from `resources` (free_milli of its GPUs).
  void NodeChanged(int node, const Resources& resources);
  // Sum over nodes of the expected fragmented milli.
  double total() const { return total_; }
  // Sum over nodes of the idle milli (free thousandths of GPUs).
  int64_t idle_milli() const { return idle_; }
  double node_value(int node) const { return node_value_[node]; }
  const std::vector<TaskClass>& classes() const { return classes_; }

 private:
  const Cluster* cluster_;
  std::vector<TaskClass> classes_;
  std::vector<double> node_value_;
  std::vector<int64_t> node_idle_;
  double total_ = 0;
  int64_t idle_ = 0;
  std::vector<int> scratch_;
  // The value of a node of `gpu_count` GPUs with `free` whole-free GPUs and the rest held whole.
  double WholeNodeValue(int gpu_count, int free);
  // whole_value_[gpu_count][free GPUs], NaN until computed.
  std::vector<std::vector<double>> whole_value_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_FRAGMENTATION_H_
