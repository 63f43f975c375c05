#include "sim/metrics.h"

#include <cmath>
#include <cstdio>

#include "sim/error.h"

namespace clustersim {
namespace {
constexpr int kQueueSlots = 6;  // queue, running, stranded, i_frag, F, memory GiB
}

Metrics::Metrics(const Cluster& cluster, double interval_seconds)
    : cluster_(cluster), interval_(interval_seconds) {
  CHECK(interval_seconds > 0, "timeseries interval must be positive");
  types_ = cluster.gpu_types();
  type_slot_.assign(cluster.catalog().gpus().size(), -1);
  for (size_t i = 0; i < types_.size(); ++i) type_slot_[types_[i]] = static_cast<int>(i);
  q_index_ = static_cast<int>(types_.size());
  state_.assign(q_index_ + kQueueSlots, 0.0);
  total_.assign(state_.size(), 0.0);
  bucket_.assign(state_.size(), 0.0);
  node_busy_.assign(cluster.node_count(), 0);
  node_multi_busy_.assign(cluster.node_count(), 0);
  for (const Node& node : cluster.nodes()) {
    total_memory_gib_ += node.gpu_count * cluster.catalog().gpu(node.gpu_type).memory_gib;
  }
}

// Node imbalance F of one node (seed 001 §3.3.3): the population standard deviation of its
// utilization of GPUs, GPU memory, CPU and network. What clustersim models today: a job holds
// the whole memory of its GPUs and the node's CPUs in proportion to its GPUs (so those two equal
// the GPU utilization u), and a multi-node job uses the NIC in proportion to its GPUs on the node
// (network utilization b). The deviation of (u, u, u, b) is sqrt(3)/4 |u - b|, and u - b is the
// share of the node's GPUs held by single-node jobs. When the memory model brings per-job memory
// and traces bring CPU demands, this becomes the general four-value deviation.
double Metrics::NodeImbalance(int node) const {
  static const double kFactor = std::sqrt(3.0) / 4;
  return kFactor * (node_busy_[node] - node_multi_busy_[node]) / cluster_.node(node).gpu_count;
}

void Metrics::Change(const Allocation& allocation, bool multi_node, int sign) {
  const int slot = type_slot_[allocation.gpu_type];
  CHECK(slot >= 0, "allocation of a GPU type absent from the cluster");
  state_[slot] += sign * static_cast<double>(allocation.gpus.size());
  const double gib = cluster_.catalog().gpu(allocation.gpu_type).memory_gib;
  state_[q_index_ + 5] += sign * gib * static_cast<double>(allocation.gpus.size());
  size_t i = 0;
  while (i < allocation.gpus.size()) {
    const int node = cluster_.NodeOfGpu(allocation.gpus[i]);
    int count = 0;
    for (; i < allocation.gpus.size() && cluster_.NodeOfGpu(allocation.gpus[i]) == node; ++i) {
      ++count;
    }
    imbalance_sum_ -= NodeImbalance(node);
    node_busy_[node] += sign * count;
    if (multi_node) node_multi_busy_[node] += sign * count;
    imbalance_sum_ += NodeImbalance(node);
  }
  state_[q_index_ + 4] = cluster_.node_count() > 0 ? imbalance_sum_ / cluster_.node_count() : 0;
}

void Metrics::ObserveQueue(const Resources& resources, const PlacementRequest* head,
                           int queue_length, int running_jobs) {
  state_[q_index_] = queue_length;
  state_[q_index_ + 1] = running_jobs;
  double stranded = 0;
  double i_frag = 0;
  if (head != nullptr && resources.total_free() > 0) {
    // Stranded GPUs (seed 002 §1.2): the head waits although its allowed types have at least its
    // demand idle; every idle GPU of those types is then idle because of fragmentation.
    int idle_allowed = 0;
    for (int type : types_) {
      if (head->AllowsType(type)) idle_allowed += resources.free_of_type(type);
    }
    if (idle_allowed >= head->gpus) stranded = idle_allowed;
    // I_frag (seed 001 §3.5.4): idle GPUs on nodes that cannot host the head's per-node demand
    // min(n, G) (or of a type it may not use), over all idle GPUs.
    double unusable = 0;
    for (const Partition& part : resources.partitions()) {
      if (!head->AllowsType(part.gpu_type)) {
        for (int f = 1; f <= part.gpus_per_node; ++f) unusable += f * part.by_free_count[f];
        continue;
      }
      const int need = std::min(head->gpus, part.gpus_per_node);
      for (int f = 1; f < need; ++f) unusable += f * part.by_free_count[f];
    }
    i_frag = unusable / resources.total_free();
  }
  state_[q_index_ + 2] = stranded;
  state_[q_index_ + 3] = i_frag;
}

void Metrics::Integrate(double from, double to, std::vector<double>& into) const {
  const double dt = to - from;
  for (size_t i = 0; i < state_.size(); ++i) into[i] += state_[i] * dt;
}

void Metrics::AdvanceTo(double t) {
  if (!started_) {
    started_ = true;
    start_ = last_ = t;
    interval_start_ = std::floor(t / interval_) * interval_;
    return;
  }
  CHECK(t >= last_, "time went backwards");
  // The timeseries keeps a row per interval (and GPU type) in memory: a trace whose times or
  // durations reach centuries (or 1e20 s, where adding the interval no longer changes a double)
  // would exhaust memory or never end. Such a run is refused with what to change.
  if (t - start_ > kMaxTimeseriesIntervals * interval_ ||
      interval_start_ + interval_ == interval_start_) {
    char what[256];
    std::snprintf(what, sizeof what,
                  "the simulated clock reached %g s: the timeseries at an interval of %g s would "
                  "need more than %g intervals; raise --interval or check the trace's times and "
                  "durations",
                  t, interval_, kMaxTimeseriesIntervals);
    throw InputError(what);
  }
  while (interval_start_ + interval_ <= t) {
    const double end = interval_start_ + interval_;
    Integrate(last_, end, bucket_);
    Integrate(last_, end, total_);
    last_ = end;
    FlushInterval(end);
  }
  Integrate(last_, t, bucket_);
  Integrate(last_, t, total_);
  last_ = t;
}

void Metrics::FlushInterval(double end) {
  const double begin = std::max(interval_start_, start_);
  const double length = end - begin;
  if (length > 0) {
    double all_busy = 0;
    double all_power = 0;
    for (size_t i = 0; i < types_.size(); ++i) {
      const GpuSpec& gpu = cluster_.catalog().gpu(types_[i]);
      const double gpus = cluster_.GpusOfType(types_[i]);
      TimeseriesRow row;
      row.t_start = begin;
      row.t_end = end;
      row.gpu_type = types_[i];
      row.busy_gpus = bucket_[i] / length;
      row.utilization = row.busy_gpus / gpus;
      row.memory_utilization = row.utilization;
      row.power_watts = row.busy_gpus * gpu.tdp_watts + (gpus - row.busy_gpus) * gpu.idle_watts;
      all_busy += row.busy_gpus;
      all_power += row.power_watts;
      rows_.push_back(row);
    }
    TimeseriesRow row;
    row.t_start = begin;
    row.t_end = end;
    row.gpu_type = -1;
    row.busy_gpus = all_busy;
    row.utilization = all_busy / cluster_.total_gpus();
    row.memory_utilization = bucket_[q_index_ + 5] / length / total_memory_gib_;
    row.power_watts = all_power;
    row.queue_length = bucket_[q_index_] / length;
    row.running_jobs = bucket_[q_index_ + 1] / length;
    row.stranded_gpus = bucket_[q_index_ + 2] / length;
    row.i_frag = bucket_[q_index_ + 3] / length;
    row.node_imbalance = bucket_[q_index_ + 4] / length;
    rows_.push_back(row);
  }
  std::fill(bucket_.begin(), bucket_.end(), 0.0);
  interval_start_ = end;
}

void Metrics::Finish(double t) {
  if (!started_) return;
  AdvanceTo(t);
  if (last_ > interval_start_) FlushInterval(last_);
}

double Metrics::busy_gpu_seconds() const {
  double sum = 0;
  for (size_t i = 0; i < types_.size(); ++i) sum += total_[i];
  return sum;
}

double Metrics::busy_gpu_seconds_of_type(int type) const {
  const int slot = type_slot_[type];
  return slot < 0 ? 0.0 : total_[slot];
}

double Metrics::energy_joules() const {
  const double span = last_ - start_;
  double joules = 0;
  for (size_t i = 0; i < types_.size(); ++i) {
    const GpuSpec& gpu = cluster_.catalog().gpu(types_[i]);
    joules += total_[i] * gpu.tdp_watts +
              (cluster_.GpusOfType(types_[i]) * span - total_[i]) * gpu.idle_watts;
  }
  return joules;
}

double Metrics::busy_gpus_now() const {
  double sum = 0;
  for (size_t i = 0; i < types_.size(); ++i) sum += state_[i];
  return sum;
}

}  // namespace clustersim
