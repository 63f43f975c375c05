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
// because it would take this node whole as one of its nodes). CPUs, as the paper counts them
// (its artifact's GetNodePodFrag): when the run limits host resources (docs/resources.md) a class
// also needs its CPU demand free on the node — its own cpu_milli (per node: split by GPUs as
// HostChargeOn splits a job), or, for a class that states none, the node's CPUs in proportion to
// its GPUs — and a class lacking CPUs finds all of the node's idle GPU capacity fragmented.
// CPU-only tasks (a class of 0 GPUs, only in PaperTaskClasses) find all of a node's idle GPU
// capacity fragmented, as the paper counts them. What clustersim leaves out of the paper's
// measure: GPU-type constraints of classes (every class may use every type).
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
  int gpus = 1;       // whole GPUs when milli == 0; 1 when milli > 0; 0: a CPU-only task
  int milli = 0;      // 1..999: a share of one GPU; 0: whole GPUs
  double weight = 0;  // share of the workload's tasks; the classes' weights sum to 1
  int32_t cpu_milli = 0;  // CPU demand of the whole task (thousandths of a core); 0 = not stated
  // The paper's classes (PaperTaskClasses): a task runs on one node, so a class of more GPUs than
  // a node has never fits it (otherwise it is counted with its per-node demand, see above).
  bool single_node = false;
  // The per-GPU demand in milli (1000 for whole GPUs).
  int PerGpuMilli() const { return milli > 0 ? milli : kMilliPerGpu; }
  // Total demand in milli (gpus x 1000, or milli).
  int64_t TotalMilli() const { return milli > 0 ? milli : int64_t{gpus} * kMilliPerGpu; }
};

// A node's CPUs as the measure sees them. capacity_milli 0 = CPUs not limited (the run has no
// host limits or the node declares no CPUs): every class has its CPUs.
struct NodeCpu {
  int64_t free_milli = 0;
  int64_t capacity_milli = 0;
  bool limited() const { return capacity_milli > 0; }
};

// The CPUs (milli) a task of `task` needs on a node of `node_gpus` GPUs with `cpu`: its stated
// demand split by its per-node GPUs (rounded up), else the node's capacity in proportion to the
// GPU capacity it takes there (rounded down), as HostChargeOn charges a job.
int64_t ClassCpuOn(const TaskClass& task, const NodeCpu& cpu, int node_gpus);

// Default number of classes kept: the openb trace has about 30 distinct request sizes.
inline constexpr int kDefaultMaxTaskClasses = 32;

// Returns the trace's distribution of request sizes, most frequent first (ties: fewer GPUs,
// then smaller milli first). A job is (1, gpu_milli) when 0 < gpu_milli < 1000 and
// `fractional` (the run shares GPUs), else (gpus, 0); with `with_cpu` (the run limits host
// resources) its CPU demand (Job::cpu_milli) is part of its class. Jobs of 0 GPUs are not GPU
// tasks and are skipped. Beyond `max_classes` the tail is folded: each tail class adds its count to
// the kept class nearest in total demand (TotalMilli; ties to the larger demand, so a folded task
// is never assumed smaller than its neighbours; then the nearest CPU demand, ties to the larger),
// so the weights still count every job. (The authors' simulator instead drops the tail and
// renormalizes.) Empty if no job asks for GPUs. REQUIRES max_classes >= 1.
std::vector<TaskClass> WorkloadClasses(const Trace& trace, int max_classes = kDefaultMaxTaskClasses,
                                       bool fractional = true, bool with_cpu = false);

// The task classes of the FGD paper's artifact (hkust-adsl/kubernetes-scheduler-simulator,
// GetTypicalPods with its openb settings: CPU-only pods involved, popularity threshold 95 %):
// jobs grouped by (GPUs, share, CPU demand), CPU-only jobs (0 GPUs) included as classes of their
// own; the most frequent classes are kept until they cover at least 95 % of the jobs (ties in
// count: fewer GPUs, then smaller milli, then smaller CPU first), and their weights renormalized
// to sum to 1. Every class is single_node. With those classes the measure is the paper's: a
// CPU-only class finds all of a node's idle GPU capacity fragmented (its XL and XR cases), a
// class short of CPUs or of GPUs too. `fractional` and `with_cpu` as WorkloadClasses. Empty for
// an empty trace. (Left out as in WorkloadClasses: per-class GPU-type constraints.)
std::vector<TaskClass> PaperTaskClasses(const Trace& trace, bool fractional = true,
                                        bool with_cpu = false);

// The fragment of a node for one class, in milli. `free_milli` holds the node's GPUs' free
// thousandths (0..1000; a GPU held whole or down is 0); `cpu` its CPUs (default: not limited).
double ClassFragment(std::span<const int> free_milli, const TaskClass& task,
                     const NodeCpu& cpu = {});

// The node's expected fragmentation sum_c weight_c x ClassFragment(node, c), in milli.
double NodeFragmentation(std::span<const int> free_milli, std::span<const TaskClass> classes,
                         const NodeCpu& cpu = {});

// Evaluates NodeFragmentation after one GPU's free milli changes, in O(classes) each after
// O(classes x GPUs) set-up: what frag-aware placement asks for every candidate GPU of a node.
class NodeFragmentationView {
 public:
  NodeFragmentationView(std::span<const int> free_milli, std::span<const TaskClass> classes,
                        const NodeCpu& cpu = {});
  // NodeFragmentation of the node as given.
  double current() const { return current_; }
  // NodeFragmentation if one GPU with `from` free milli had `to` free instead and the node had
  // `cpu_free_milli` CPUs free (< 0: as given).
  // REQUIRES some GPU of the node has `from` free.
  double AfterChange(int from, int to, int64_t cpu_free_milli = -1) const;
  // NodeFragmentation if `take` of the node's wholly free GPUs were taken (free 0) and the node
  // had `cpu_free_milli` CPUs free (< 0: as given). REQUIRES take <= the wholly free GPUs.
  double AfterTake(int take, int64_t cpu_free_milli = -1) const;

 private:
  double Evaluate(int64_t idle, int max_free, int full, const std::vector<int64_t>& below, int from,
                  int to, int64_t cpu_free) const;

  std::span<const TaskClass> classes_;
  int gpus_ = 0;
  int64_t idle_ = 0;            // sum of free milli
  int full_ = 0;                // GPUs with 1000 free
  int top_ = -1;                // largest free milli
  int top_count_ = 0;           // GPUs holding it
  int second_ = -1;             // largest free milli below top_, -1 if none
  std::vector<int64_t> below_;  // per class: sum of free milli of GPUs below its per-GPU demand
  NodeCpu cpu_;
  std::vector<int64_t> class_cpu_;  // per class: its CPU demand on this node (cpu_ limited)
  double current_ = 0;
};

// The cluster's expected fragmentation kept per node: NodeChanged recomputes one node in
// O(classes x GPUs of the node), so nothing scans the cluster per event. A node whose GPUs are
// each wholly free or wholly held (no shares) has a value that depends only on its GPU count and
// its free GPUs (the measure depends on the free amounts, not on which GPU holds which): it is
// looked up in a table filled on first use, O(GPUs of the node), unless the run limits host
// resources (the value then depends on the node's free CPUs too).
class FgdTracker {
 public:
  // Starts from the empty cluster (every GPU free).
  FgdTracker(const Cluster& cluster, std::vector<TaskClass> classes);

  // Recomputes `node` from `resources` (free_milli of its GPUs).
  void NodeChanged(int node, const Resources& resources);
  // NodeChanged when no GPU of the cluster is shared and the run does not limit host resources:
  // the node, of `gpu_count` GPUs, has `free` wholly free GPUs and the others held.
  void WholeNodeChanged(int node, int gpu_count, int free) {
    const int64_t idle = int64_t{free} * kMilliPerGpu;
    const double value = whole_value_[gpu_count][free];
    total_ += value - node_value_[node];
    idle_ += idle - node_idle_[node];
    node_value_[node] = value;
    node_idle_[node] = idle;
  }
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
