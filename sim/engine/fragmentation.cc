#include "sim/engine/fragmentation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "sim/engine/resources.h"
#include "sim/util/error.h"

namespace clustersim {

namespace {

struct Counted {
  TaskClass task;
  int64_t count;
};

// The trace's jobs counted by (GPUs, share, CPU demand), most frequent first (ties: fewer GPUs,
// then smaller share, then smaller CPU demand): a job is (1, gpu_milli) when `fractional` and it
// asks for a share (Job::IsShare), else (gpus, 0); its CPU demand counts when `with_cpu`. Jobs of
// 0 GPUs count as (0, 0) classes when `cpu_only`, else not at all. `*jobs` gets the jobs counted.
std::vector<Counted> CountClasses(const Trace& trace, bool fractional, bool with_cpu, bool cpu_only,
                                  int64_t* jobs) {
  std::map<std::tuple<int, int, int32_t>, int64_t> counts;  // ordered: deterministic
  *jobs = 0;
  for (const Job& job : trace.jobs) {
    if (job.gpus <= 0 && !cpu_only) continue;
    const bool share = fractional && job.IsShare();
    const int32_t cpu = with_cpu ? job.cpu_milli : 0;
    ++counts[std::tuple{std::max(job.gpus, 0), share ? job.gpu_milli : 0, cpu}];
    ++*jobs;
  }
  std::vector<Counted> all;
  for (const auto& [key, count] : counts) {
    all.push_back({TaskClass{std::get<0>(key), std::get<1>(key), 0, std::get<2>(key)}, count});
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Counted& a, const Counted& b) { return a.count > b.count; });
  return all;
}

}  // namespace

std::vector<TaskClass> WorkloadClasses(const Trace& trace, int max_classes, bool fractional,
                                       bool with_cpu) {
  CHECK(max_classes >= 1, "WorkloadClasses: max_classes must be at least 1");
  int64_t jobs = 0;
  std::vector<Counted> all = CountClasses(trace, fractional, with_cpu, false, &jobs);
  if (jobs == 0) return {};
  const size_t kept = std::min(all.size(), static_cast<size_t>(max_classes));
  for (size_t i = kept; i < all.size(); ++i) {
    const int64_t demand = all[i].task.TotalMilli();
    const int64_t cpu = all[i].task.cpu_milli;
    size_t nearest = 0;
    int64_t best_distance = -1;
    int64_t best_cpu_distance = -1;
    for (size_t k = 0; k < kept; ++k) {
      const int64_t other = all[k].task.TotalMilli();
      const int64_t distance = other > demand ? other - demand : demand - other;
      const int64_t other_cpu = all[k].task.cpu_milli;
      const int64_t cpu_distance = other_cpu > cpu ? other_cpu - cpu : cpu - other_cpu;
      const TaskClass& near = all[nearest].task;
      const bool better = best_distance < 0 || distance < best_distance ||
                          (distance == best_distance &&
                           (other > near.TotalMilli() ||
                            (other == near.TotalMilli() &&
                             (cpu_distance < best_cpu_distance ||
                              (cpu_distance == best_cpu_distance && other_cpu > near.cpu_milli)))));
      if (better) {
        nearest = k;
        best_distance = distance;
        best_cpu_distance = cpu_distance;
      }
    }
    all[nearest].count += all[i].count;
  }
  all.resize(kept);
  // Folding may reorder the counts: keep "most frequent first" true of the result.
  std::stable_sort(all.begin(), all.end(),
                   [](const Counted& a, const Counted& b) { return a.count > b.count; });
  std::vector<TaskClass> out;
  out.reserve(kept);
  for (const Counted& c : all) {
    TaskClass task = c.task;
    task.weight = static_cast<double>(c.count) / static_cast<double>(jobs);
    out.push_back(task);
  }
  return out;
}

std::vector<TaskClass> PaperTaskClasses(const Trace& trace, bool fractional, bool with_cpu) {
  int64_t jobs = 0;
  std::vector<Counted> all = CountClasses(trace, fractional, with_cpu, true, &jobs);
  if (jobs == 0) return {};
  for (Counted& c : all) c.task.single_node = true;
  // Kept until the classes cover >= 95 % of the jobs (integer test: 100 x covered >= 95 x jobs).
  int64_t covered = 0;
  size_t kept = 0;
  while (kept < all.size() && covered * 100 < jobs * 95) covered += all[kept++].count;
  std::vector<TaskClass> out;
  for (size_t i = 0; i < kept; ++i) {
    TaskClass task = all[i].task;
    task.weight = static_cast<double>(all[i].count) / static_cast<double>(covered);
    out.push_back(task);
  }
  return out;
}

namespace {

// Per-node demand of a whole-GPU class: a class larger than the node takes it whole, unless the
// class is single_node (then it never fits: more than the node's GPUs).
int WholeNeed(const TaskClass& task, int node_gpus) {
  if (task.single_node && task.gpus > node_gpus) return std::numeric_limits<int>::max();
  return std::min(task.gpus, node_gpus);
}

}  // namespace

int64_t ClassCpuOn(const TaskClass& task, const NodeCpu& cpu, int node_gpus) {
  if (!cpu.limited() || node_gpus <= 0) return 0;
  if (task.gpus <= 0) return task.cpu_milli;  // a CPU-only task
  if (task.milli > 0) {
    return task.cpu_milli > 0
               ? task.cpu_milli
               : cpu.capacity_milli * task.milli / (int64_t{kMilliPerGpu} * node_gpus);
  }
  const int on_node = WholeNeed(task, node_gpus);
  if (task.cpu_milli > 0) {
    return (int64_t{task.cpu_milli} * on_node + task.gpus - 1) / task.gpus;
  }
  return cpu.capacity_milli * on_node / node_gpus;
}

double ClassFragment(std::span<const int> free_milli, const TaskClass& task, const NodeCpu& cpu) {
  if (task.gpus <= 0) {
    // A CPU-only task uses no GPU: all of the node's idle GPU capacity is a fragment to it.
    int64_t idle = 0;
    for (int f : free_milli) idle += f;
    return static_cast<double>(idle);
  }
  const int demand = task.PerGpuMilli();
  int64_t idle = 0;
  int64_t below = 0;
  int max_free = 0;
  int full = 0;
  for (int f : free_milli) {
    idle += f;
    if (f < demand) below += f;
    max_free = std::max(max_free, f);
    if (f == kMilliPerGpu) ++full;
  }
  const int gpus = static_cast<int>(free_milli.size());
  const bool fits = (task.milli > 0 ? max_free >= task.milli : full >= WholeNeed(task, gpus)) &&
                    (!cpu.limited() || ClassCpuOn(task, cpu, gpus) <= cpu.free_milli);
  return static_cast<double>(fits ? below : idle);
}

double NodeFragmentation(std::span<const int> free_milli, std::span<const TaskClass> classes,
                         const NodeCpu& cpu) {
  double sum = 0;
  for (const TaskClass& task : classes) sum += task.weight * ClassFragment(free_milli, task, cpu);
  return sum;
}

NodeFragmentationView::NodeFragmentationView(std::span<const int> free_milli,
                                             std::span<const TaskClass> classes, const NodeCpu& cpu)
    : classes_(classes), gpus_(static_cast<int>(free_milli.size())), cpu_(cpu) {
  if (cpu_.limited()) {
    class_cpu_.resize(classes.size());
    for (size_t c = 0; c < classes.size(); ++c) class_cpu_[c] = ClassCpuOn(classes[c], cpu_, gpus_);
  }
  for (int f : free_milli) {
    idle_ += f;
    if (f == kMilliPerGpu) ++full_;
    if (f > top_) {
      second_ = top_;
      top_ = f;
      top_count_ = 1;
    } else if (f == top_) {
      ++top_count_;
    } else if (f > second_) {
      second_ = f;
    }
  }
  below_.assign(classes.size(), 0);
  for (size_t c = 0; c < classes.size(); ++c) {
    const int demand = classes[c].PerGpuMilli();
    for (int f : free_milli) {
      if (f < demand) below_[c] += f;
    }
  }
  current_ = Evaluate(idle_, top_, full_, below_, 0, 0, cpu_.free_milli);
}

double NodeFragmentationView::AfterChange(int from, int to, int64_t cpu_free_milli) const {
  const int others_max = (from == top_ && top_count_ == 1) ? second_ : top_;
  const int max_free = std::max(others_max, to);
  const int full = full_ - (from == kMilliPerGpu) + (to == kMilliPerGpu);
  return Evaluate(idle_ - from + to, max_free, full, below_, from, to,
                  cpu_free_milli < 0 ? cpu_.free_milli : cpu_free_milli);
}

double NodeFragmentationView::AfterTake(int take, int64_t cpu_free_milli) const {
  // The taken GPUs held the most free (1000): the largest left is 1000 while some stay wholly
  // free, else the largest below it, or the 0 of a taken one. A GPU going from 1000 to 0 changes
  // no class's sum below its demand (1000 is below none; 0 adds nothing).
  const int full = full_ - take;
  const int max_free = take == 0 ? top_ : full > 0 ? kMilliPerGpu : std::max(second_, 0);
  return Evaluate(idle_ - int64_t{take} * kMilliPerGpu, max_free, full, below_, 0, 0,
                  cpu_free_milli < 0 ? cpu_.free_milli : cpu_free_milli);
}

// Same arithmetic as NodeFragmentation (a weighted sum in class order) so that both give the
// same double for the same state: placement ties then compare equal.
double NodeFragmentationView::Evaluate(int64_t idle, int max_free, int full,
                                       const std::vector<int64_t>& below, int from, int to,
                                       int64_t cpu_free) const {
  double sum = 0;
  for (size_t c = 0; c < classes_.size(); ++c) {
    const TaskClass& task = classes_[c];
    if (task.gpus <= 0) {  // CPU-only (ClassFragment)
      sum += task.weight * static_cast<double>(idle);
      continue;
    }
    const int demand = task.PerGpuMilli();
    const int64_t b = below[c] - (from < demand ? from : 0) + (to < demand ? to : 0);
    const bool fits = (task.milli > 0 ? max_free >= task.milli : full >= WholeNeed(task, gpus_)) &&
                      (!cpu_.limited() || class_cpu_[c] <= cpu_free);
    sum += task.weight * static_cast<double>(fits ? b : idle);
  }
  return sum;
}

FgdTracker::FgdTracker(const Cluster& cluster, std::vector<TaskClass> classes)
    : cluster_(&cluster), classes_(std::move(classes)) {
  node_value_.assign(cluster.node_count(), 0.0);
  node_idle_.assign(cluster.node_count(), 0);
  for (const Node& node : cluster.nodes()) {
    scratch_.assign(node.gpu_count, kMilliPerGpu);
    node_value_[node.index] = NodeFragmentation(scratch_, classes_);
    node_idle_[node.index] = int64_t{node.gpu_count} * kMilliPerGpu;
    total_ += node_value_[node.index];
    idle_ += node_idle_[node.index];
  }
  // Every whole-node value a node of this cluster can take, filled now so that NodeChanged's
  // common case is one lookup (the same values WholeNodeValue would compute on first use).
  for (const Node& node : cluster.nodes()) {
    for (int free = 0; free <= node.gpu_count; ++free) WholeNodeValue(node.gpu_count, free);
  }
}

double FgdTracker::WholeNodeValue(int gpu_count, int free) {
  if (whole_value_.size() <= static_cast<size_t>(gpu_count)) whole_value_.resize(gpu_count + 1);
  std::vector<double>& table = whole_value_[gpu_count];
  if (table.empty()) table.assign(gpu_count + 1, std::numeric_limits<double>::quiet_NaN());
  if (std::isnan(table[free])) {
    std::vector<int> gpus(gpu_count, 0);
    std::fill(gpus.begin(), gpus.begin() + free, kMilliPerGpu);
    table[free] = NodeFragmentation(gpus, classes_);
  }
  return table[free];
}

void FgdTracker::NodeChanged(int node, const Resources& resources) {
  const Node& n = cluster_->node(node);
  const bool host = resources.host_limited() && NodeCpuMilli(n) > 0;
  if (!host && resources.shared_gpus().empty()) {
    // No share anywhere: the node's GPUs are whole-free or held, O(1) from the free count (the
    // table was filled at construction).
    const int free = resources.free_gpus(node);
    const int64_t idle = int64_t{free} * kMilliPerGpu;
    const double value = whole_value_[n.gpu_count][free];
    total_ += value - node_value_[node];
    idle_ += idle - node_idle_[node];
    node_value_[node] = value;
    node_idle_[node] = idle;
    return;
  }
  scratch_.resize(n.gpu_count);
  int64_t idle = 0;
  int free_whole = 0;
  bool shared = false;
  for (int i = 0; i < n.gpu_count; ++i) {
    scratch_[i] = resources.free_milli(n.first_gpu + i);
    idle += scratch_[i];
    free_whole += scratch_[i] == kMilliPerGpu;
    shared |= scratch_[i] != 0 && scratch_[i] != kMilliPerGpu;
  }
  double value;
  if (host) {
    value = NodeFragmentation(scratch_, classes_,
                              NodeCpu{resources.free_cpu_milli(node), NodeCpuMilli(n)});
  } else if (shared) {
    value = NodeFragmentation(scratch_, classes_);
  } else {
    value = WholeNodeValue(n.gpu_count, free_whole);
  }
  total_ += value - node_value_[node];
  idle_ += idle - node_idle_[node];
  node_value_[node] = value;
  node_idle_[node] = idle;
}

}  // namespace clustersim
