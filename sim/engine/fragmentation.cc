#include "sim/engine/fragmentation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "sim/engine/resources.h"
#include "sim/util/error.h"

namespace clustersim {

std::vector<TaskClass> WorkloadClasses(const Trace& trace, int max_classes, bool fractional) {
  CHECK(max_classes >= 1, "WorkloadClasses: max_classes must be at least 1");
  std::map<std::pair<int, int>, int64_t> counts;  // (gpus, milli) -> jobs; ordered: deterministic
  int64_t jobs = 0;
  for (const Job& job : trace.jobs) {
    if (job.gpus <= 0) continue;
    const bool share = fractional && job.gpu_milli > 0 && job.gpu_milli < kMilliPerGpu;
    ++counts[share ? std::pair{1, job.gpu_milli} : std::pair{job.gpus, 0}];
    ++jobs;
  }
  if (jobs == 0) return {};
  struct Counted {
    TaskClass task;
    int64_t count;
  };
  std::vector<Counted> all;
  for (const auto& [key, count] : counts)
    all.push_back({TaskClass{key.first, key.second, 0}, count});
  // Most frequent first; the map order (fewer GPUs, then smaller milli) breaks ties.
  std::stable_sort(all.begin(), all.end(),
                   [](const Counted& a, const Counted& b) { return a.count > b.count; });
  const size_t kept = std::min(all.size(), static_cast<size_t>(max_classes));
  for (size_t i = kept; i < all.size(); ++i) {
    const int64_t demand = all[i].task.TotalMilli();
    size_t nearest = 0;
    int64_t best_distance = -1;
    for (size_t k = 0; k < kept; ++k) {
      const int64_t other = all[k].task.TotalMilli();
      const int64_t distance = other > demand ? other - demand : demand - other;
      const bool better = best_distance < 0 || distance < best_distance ||
                          (distance == best_distance && other > all[nearest].task.TotalMilli());
      if (better) {
        nearest = k;
        best_distance = distance;
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

namespace {

// Per-node demand of a whole-GPU class: a class larger than the node takes it whole.
int WholeNeed(const TaskClass& task, int node_gpus) { return std::min(task.gpus, node_gpus); }

}  // namespace

double ClassFragment(std::span<const int> free_milli, const TaskClass& task) {
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
  const bool fits = task.milli > 0 ? max_free >= task.milli
                                   : full >= WholeNeed(task, static_cast<int>(free_milli.size()));
  return static_cast<double>(fits ? below : idle);
}

double NodeFragmentation(std::span<const int> free_milli, std::span<const TaskClass> classes) {
  double sum = 0;
  for (const TaskClass& task : classes) sum += task.weight * ClassFragment(free_milli, task);
  return sum;
}

NodeFragmentationView::NodeFragmentationView(std::span<const int> free_milli,
                                             std::span<const TaskClass> classes)
    : classes_(classes), gpus_(static_cast<int>(free_milli.size())) {
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
  current_ = Evaluate(idle_, top_, full_, below_, 0, 0);
}

double NodeFragmentationView::AfterChange(int from, int to) const {
  const int others_max = (from == top_ && top_count_ == 1) ? second_ : top_;
  const int max_free = std::max(others_max, to);
  const int full = full_ - (from == kMilliPerGpu) + (to == kMilliPerGpu);
  return Evaluate(idle_ - from + to, max_free, full, below_, from, to);
}

// Same arithmetic as NodeFragmentation (a weighted sum in class order) so that both give the
// same double for the same state: placement ties then compare equal.
double NodeFragmentationView::Evaluate(int64_t idle, int max_free, int full,
                                       const std::vector<int64_t>& below, int from, int to) const {
  double sum = 0;
  for (size_t c = 0; c < classes_.size(); ++c) {
    const TaskClass& task = classes_[c];
    const int demand = task.PerGpuMilli();
    const int64_t b = below[c] - (from < demand ? from : 0) + (to < demand ? to : 0);
    const bool fits = task.milli > 0 ? max_free >= task.milli : full >= WholeNeed(task, gpus_);
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
  if (resources.shared_gpus().empty()) {
    // No share anywhere: the node's GPUs are whole-free or held, O(1) from the free count.
    const int free = resources.free_gpus(node);
    const int64_t idle = int64_t{free} * kMilliPerGpu;
    const double value = WholeNodeValue(n.gpu_count, free);
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
  if (shared) {
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
