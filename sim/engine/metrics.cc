#include "sim/engine/metrics.h"

#include <cmath>
#include <cstdio>

#include "sim/hardware/mig.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {
// queue, running, stranded, i_frag, F, memory GiB, F_mem, FGD ratio, FGD fragmented GPUs,
// CPU cores held, host GiB held, CPU-stranded GPUs
constexpr int kQueueSlots = 12;
constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;
// sqrt(3) / 4: the node imbalance of (u, u, u, b) is this times |u - b| (NodeImbalance).
const double kImbalanceFactor = std::sqrt(3.0) / 4;
}  // namespace

Metrics::Metrics(const Cluster& cluster, double interval_seconds)
    : cluster_(cluster), interval_(interval_seconds) {
  CHECK(interval_seconds > 0, "timeseries interval must be positive");
  types_ = cluster.gpu_types();
  type_slot_.assign(cluster.catalog().gpus().size(), -1);
  for (size_t i = 0; i < types_.size(); ++i) type_slot_[types_[i]] = static_cast<int>(i);
  q_index_ = 2 * static_cast<int>(types_.size());
  state_.assign(q_index_ + kQueueSlots, 0.0);
  total_.assign(state_.size(), 0.0);
  bucket_.assign(state_.size(), 0.0);
  node_busy_.assign(cluster.node_count(), 0);
  node_multi_busy_.assign(cluster.node_count(), 0);
  node_imbalance_.assign(cluster.node_count(), 0);
  node_gpu_memory_bytes_.assign(cluster.node_count(), 0);
  for (const Node& node : cluster.nodes()) {
    cpu_capacity_cores_ += NodeCpuMilli(node) / 1000.0;
    host_memory_capacity_gib_ += NodeMemoryMib(node) / 1024.0;
    host_declared_ = host_declared_ || NodeCpuMilli(node) > 0 || NodeMemoryMib(node) > 0;
  }
  for (int type : types_) {
    type_memory_gib_.push_back(cluster.catalog().gpu(type).memory_gib);
    type_capacity_bytes_.push_back(cluster.catalog().gpu(type).memory_gib * kBytesPerGib);
  }
  const int gpus = cluster.total_gpus();
  held_milli_.assign(gpus, 0);
  reported_bytes_.assign(gpus, 0.0);
  capacity_bytes_.assign(gpus, 0.0);
  for (const Node& node : cluster.nodes()) {
    const double gib = cluster.catalog().gpu(node.gpu_type).memory_gib;
    total_memory_gib_ += node.gpu_count * gib;
    for (int i = 0; i < node.gpu_count; ++i) {
      capacity_bytes_[node.first_gpu + i] = gib * kBytesPerGib;
    }
  }
  while (mem_leaves_ < gpus) mem_leaves_ *= 2;
  free_max_.assign(2 * mem_leaves_, 0.0);
  free_sum_.assign(2 * mem_leaves_, 0.0);
  for (int g = 0; g < gpus; ++g) {
    free_max_[mem_leaves_ + g] = free_sum_[mem_leaves_ + g] = capacity_bytes_[g];
  }
  for (int i = mem_leaves_ - 1; i >= 1; --i) {
    free_max_[i] = std::max(free_max_[2 * i], free_max_[2 * i + 1]);
    free_sum_[i] = free_sum_[2 * i] + free_sum_[2 * i + 1];
  }
  UpdateFragmentationState();
}

bool Metrics::IsGpuDown(int gpu) const {
  return resources_ != nullptr && held_milli_[gpu] == 0 && resources_->free_milli(gpu) == 0;
}

void Metrics::BuildMemoryTree() {
  tree_live_ = true;
  UpdateFastPath();
  for (int g = 0; g < cluster_.total_gpus(); ++g) RefreshGpuMemory(g);
}

void Metrics::RefreshGpuMemory(int gpu) {
  const int held_milli =
      held_milli_[gpu] + (mig_memory_extra_milli_.empty() ? 0 : mig_memory_extra_milli_[gpu]);
  const double used =
      memory_reported_ ? reported_bytes_[gpu] : capacity_bytes_[gpu] * held_milli / kMilliPerGpu;
  const double free = IsGpuDown(gpu) ? 0.0 : std::max(0.0, capacity_bytes_[gpu] - used);
  int i = mem_leaves_ + gpu;
  free_max_[i] = free_sum_[i] = free;
  for (i /= 2; i >= 1; i /= 2) {
    free_max_[i] = std::max(free_max_[2 * i], free_max_[2 * i + 1]);
    free_sum_[i] = free_sum_[2 * i] + free_sum_[2 * i + 1];
  }
}

// F_mem (docs/metrics.md#f_mem): 1 - (largest free memory on one GPU) / (total free GPU memory); 0
// when no memory is free. FGD: expected fragmented idle milli / idle milli (0 when nothing is
// idle), and the fragmented milli in GPUs.
void Metrics::UpdateFragmentationState() {
  double sum = 0;
  double largest = 0;
  if (tree_live_) {
    sum = free_sum_[1];
    largest = free_max_[1];
  } else {
    for (size_t i = 0; i < types_.size(); ++i) {
      const int free = resources_->free_of_type(types_[i]);
      if (free == 0) continue;
      const double capacity = type_capacity_bytes_[i];
      sum += free * capacity;
      largest = std::max(largest, capacity);
    }
  }
  state_[q_index_ + 6] = sum > 0 ? std::max(0.0, 1.0 - largest / sum) : 0.0;
  if (fgd_) {
    const double fragmented = std::max(0.0, fgd_->total());
    const int64_t idle = fgd_->idle_milli();
    state_[q_index_ + 7] = idle > 0 ? std::min(1.0, fragmented / static_cast<double>(idle)) : 0.0;
    state_[q_index_ + 8] = fragmented / kMilliPerGpu;
  }
}

void Metrics::set_memory_reported(bool reported) {
  CHECK(!allocated_any_, "the memory accounting mode must be set before the first allocation");
  memory_reported_ = reported;
  UpdateFastPath();
  if (reported && !tree_live_) BuildMemoryTree();
}

void Metrics::OnGpuMemory(int gpu, double delta_bytes) {
  CHECK(memory_reported_, "OnGpuMemory without set_memory_reported(true)");
  CHECK(gpu >= 0 && gpu < cluster_.total_gpus(), "OnGpuMemory: no GPU " + std::to_string(gpu));
  double& bytes = reported_bytes_[gpu];
  bytes += delta_bytes;
  CHECK(bytes >= -1, "GPU " + std::to_string(gpu) + ": more memory removed than placed");
  if (bytes < 0) bytes = 0;
  const double gib = delta_bytes / kBytesPerGib;
  state_[q_index_ + 5] += gib;
  const int node = cluster_.NodeOfGpu(gpu);
  state_[types_.size() + type_slot_[cluster_.node(node).gpu_type]] += gib;
  node_gpu_memory_bytes_[node] = std::max(0.0, node_gpu_memory_bytes_[node] + delta_bytes);
  RefreshNode(node);
  RefreshGpuMemory(gpu);
  UpdateFragmentationState();
}

void Metrics::EnableHostLimits(const HostThresholds& thresholds) {
  CHECK(resources_ != nullptr && resources_->host_limited(),
        "Metrics::EnableHostLimits without host-limited Resources");
  CHECK(!allocated_any_, "host limits must be enabled before the first allocation");
  host_limited_ = true;
  UpdateFastPath();
  cpu_threshold_.assign(cluster_.node_count(), INT32_MAX);
  memory_threshold_.assign(cluster_.node_count(), INT32_MAX);
  node_cpu_stranded_.assign(cluster_.node_count(), 0.0);
  auto threshold = [](int32_t stated, int piece, int32_t capacity, int gpus) {
    if (capacity <= 0) return INT32_MAX;
    int32_t t = stated;
    if (piece > 0) {
      t = std::min<int32_t>(
          t, static_cast<int32_t>(int64_t{capacity} * piece / (1000 * int64_t{gpus})));
    }
    return t;
  };
  for (const Node& node : cluster_.nodes()) {
    cpu_threshold_[node.index] =
        threshold(thresholds.cpu_milli, thresholds.unstated_cpu_piece_milli, NodeCpuMilli(node),
                  node.gpu_count);
    memory_threshold_[node.index] =
        threshold(thresholds.memory_mib, thresholds.unstated_memory_piece_milli,
                  NodeMemoryMib(node), node.gpu_count);
  }
  for (int node = 0; node < cluster_.node_count(); ++node) RefreshNode(node);
}

double Metrics::CpuStranded(int node) const {
  const Node& n = cluster_.node(node);
  const bool short_of_cpu =
      cpu_threshold_[node] < INT32_MAX && resources_->free_cpu_milli(node) < cpu_threshold_[node];
  const bool short_of_memory = memory_threshold_[node] < INT32_MAX &&
                               resources_->free_memory_mib(node) < memory_threshold_[node];
  if (!short_of_cpu && !short_of_memory) return 0;
  int64_t idle = 0;
  for (int i = 0; i < n.gpu_count; ++i) idle += resources_->free_milli(n.first_gpu + i);
  return idle / static_cast<double>(kMilliPerGpu);
}

void Metrics::RefreshNode(int node) {
  imbalance_sum_ -= node_imbalance_[node];
  node_imbalance_[node] = NodeImbalance(node);
  imbalance_sum_ += node_imbalance_[node];
  state_[q_index_ + 4] = cluster_.node_count() > 0 ? imbalance_sum_ / cluster_.node_count() : 0;
  if (host_limited_) {
    cpu_stranded_sum_ -= node_cpu_stranded_[node];
    node_cpu_stranded_[node] = CpuStranded(node);
    cpu_stranded_sum_ += node_cpu_stranded_[node];
    state_[q_index_ + 11] = cpu_stranded_sum_;
  }
}

void Metrics::set_resources(const Resources* resources) {
  resources_ = resources;
  if (resources_ != nullptr && !memory_reported_ && !allocated_any_) {
    tree_live_ = false;
    UpdateFastPath();
  } else {
    BuildMemoryTree();
  }
  UpdateFragmentationState();
}

void Metrics::SetWorkload(const std::vector<TaskClass>& classes) {
  CHECK(resources_ != nullptr, "Metrics::SetWorkload before set_resources");
  fgd_ = std::make_unique<FgdTracker>(cluster_, classes);
  for (int node = 0; node < cluster_.node_count(); ++node) fgd_->NodeChanged(node, *resources_);
  UpdateFragmentationState();
}

void Metrics::OnNodeChanged(int node) {
  const Node& n = cluster_.node(node);
  if (tree_live_) {
    for (int i = 0; i < n.gpu_count; ++i) RefreshGpuMemory(n.first_gpu + i);
  }
  if (fgd_) fgd_->NodeChanged(node, *resources_);
  if (host_limited_) RefreshNode(node);
  UpdateFragmentationState();
}

void Metrics::OnNodeHeldOut(int node, bool out) {
  const Node& n = cluster_.node(node);
  if (off_index_ < 0) {
    off_index_ = static_cast<int>(state_.size());
    state_.resize(state_.size() + types_.size(), 0.0);
    total_.resize(state_.size(), 0.0);
    bucket_.resize(state_.size(), 0.0);
    held_out_.assign(cluster_.node_count(), 0);
  }
  if (held_out_[node] == static_cast<uint8_t>(out)) return;
  held_out_[node] = out;
  state_[off_index_ + type_slot_[n.gpu_type]] += out ? n.gpu_count : -n.gpu_count;
}

// Node imbalance F of one node (docs/metrics.md#node-imbalance, docs/resources.md): the population standard deviation of its
// utilization of GPUs (u), GPU memory, CPUs and network (b). GPU memory is the memory the engine
// reports per GPU in model-aware runs, else the memory of the GPUs held (u); CPUs are the CPUs
// held under host limits (on a node that declares them), else u, since a job stating no demand
// holds the node's CPUs in proportion to its GPUs; a multi-node job uses the NIC in proportion to
// its GPUs on the node (b), which is also why the NIC never limits placement. When memory and
// CPUs both equal u the deviation of (u, u, u, b) is sqrt(3)/4 |u - b|, computed in that form.
double Metrics::NodeImbalance(int node) const {
  const Node& n = cluster_.node(node);
  if (!host_limited_ && !memory_reported_) {
    return kImbalanceFactor * (node_busy_[node] - node_multi_busy_[node]) / n.gpu_count;
  }
  const double u = node_busy_[node] / n.gpu_count;
  const double b = node_multi_busy_[node] / n.gpu_count;
  double memory = u;
  if (memory_reported_) {
    const double capacity = n.gpu_count * capacity_bytes_[n.first_gpu];
    memory = capacity > 0 ? node_gpu_memory_bytes_[node] / capacity : u;
  }
  double cpu = u;
  if (host_limited_) {
    const int32_t capacity = NodeCpuMilli(n);
    // A node out of service has its whole host held out of placement but no job on it.
    const bool out = !held_out_.empty() && held_out_[node];
    if (capacity > 0) {
      cpu = out ? 0.0 : 1.0 - static_cast<double>(resources_->free_cpu_milli(node)) / capacity;
    }
  }
  const double mean = (u + memory + cpu + b) / 4;
  const double variance = ((u - mean) * (u - mean) + (memory - mean) * (memory - mean) +
                           (cpu - mean) * (cpu - mean) + (b - mean) * (b - mean)) /
                          4;
  return std::sqrt(variance);
}

int Metrics::Change(const Allocation& allocation, const HostDemand& host, int sign) {
  const int slot = type_slot_[allocation.gpu_type];
  CHECK(slot >= 0, "allocation of a GPU type absent from the cluster");
  CHECK(allocation.milli >= 0 && allocation.milli < kMilliPerGpu, "allocation share out of range");
  allocated_any_ = true;
  const bool share = allocation.milli > 0;
  // A share counts as milli/1000 of a busy GPU per listed GPU; whole GPUs keep the integer
  // arithmetic of before shares existed (same sums, same results).
  const double per_gpu = share ? allocation.milli / static_cast<double>(kMilliPerGpu) : 1.0;
  const double count = static_cast<double>(allocation.gpus.size());
  state_[slot] += share ? sign * per_gpu * count : sign * count;
  // A MIG instance holds its memory slices (kMilliPerGpu / kMigMemorySlices thousandths each) of
  // its GPU's memory, which differ from its compute share (docs/mig.md); `extra` is the
  // difference, on its one GPU.
  int extra = 0;
  if (allocation.mig_profile >= 0) {
    const auto profiles = MigProfilesOf(cluster_.catalog().gpu(allocation.gpu_type).name);
    CHECK(allocation.mig_profile < static_cast<int>(profiles.size()), "unknown MIG profile");
    extra = profiles[allocation.mig_profile].memory_slices * (kMilliPerGpu / kMigMemorySlices) -
            allocation.milli;
    if (mig_memory_extra_milli_.empty()) mig_memory_extra_milli_.assign(held_milli_.size(), 0);
  }
  if (!memory_reported_) {
    const double gib = cluster_.catalog().gpu(allocation.gpu_type).memory_gib;
    const double memory_share =
        extra != 0 ? (allocation.milli + extra) / static_cast<double>(kMilliPerGpu) : per_gpu;
    const double held = share ? sign * gib * memory_share * count : sign * gib * count;
    state_[q_index_ + 5] += held;
    state_[types_.size() + slot] += held;
  }
  const int milli = share ? allocation.milli : kMilliPerGpu;
  const bool multi_node =
      !allocation.gpus.empty() &&
      cluster_.NodeOfGpu(allocation.gpus.front()) != cluster_.NodeOfGpu(allocation.gpus.back());
  int nodes = 0;
  size_t i = 0;
  while (i < allocation.gpus.size()) {
    const int node = cluster_.NodeOfGpu(allocation.gpus[i]);
    ++nodes;
    int on_node = 0;
    for (; i < allocation.gpus.size() && cluster_.NodeOfGpu(allocation.gpus[i]) == node; ++i) {
      const int g = allocation.gpus[i];
      held_milli_[g] += sign * milli;
      CHECK(held_milli_[g] >= 0 && held_milli_[g] <= kMilliPerGpu,
            "GPU " + std::to_string(g) + ": metrics' held share out of range");
      if (extra != 0) mig_memory_extra_milli_[g] += sign * extra;
      if (tree_live_) RefreshGpuMemory(g);
      ++on_node;
    }
    const double busy = share ? per_gpu * on_node : on_node;
    node_busy_[node] += sign * busy;
    if (multi_node) node_multi_busy_[node] += sign * busy;
    const Node& info = cluster_.node(node);
    HostCharge charge =
        HostChargeOn(info, host, share ? 1 : on_node,
                     share ? 1 : static_cast<int>(allocation.gpus.size()), allocation.milli);
    if (share) charge = HostCharge{charge.cpu_milli * on_node, charge.memory_mib * on_node};
    cpu_used_milli_ += sign * int64_t{charge.cpu_milli};
    memory_used_mib_ += sign * int64_t{charge.memory_mib};
    RefreshNode(node);
    if (fgd_) fgd_->NodeChanged(node, *resources_);
  }
  if (allocation.gpus.empty() && allocation.node >= 0) {
    // A CPU-only job: its host charge on its node, no GPU (docs/resources.md#cpu-only-jobs).
    const HostCharge charge = HostChargeOn(cluster_.node(allocation.node), host, 0, 0, 0);
    cpu_used_milli_ += sign * int64_t{charge.cpu_milli};
    memory_used_mib_ += sign * int64_t{charge.memory_mib};
    RefreshNode(allocation.node);
    if (fgd_) fgd_->NodeChanged(allocation.node, *resources_);
    nodes = 1;
  }
  state_[q_index_ + 9] = cpu_used_milli_ / 1000.0;
  state_[q_index_ + 10] = memory_used_mib_ / 1024.0;
  if (share && !tree_live_) BuildMemoryTree();  // the first share: per-GPU memory from now on
  UpdateFragmentationState();
  return nodes;
}

// Change for the common case, with the same arithmetic in the same order: whole GPUs, no host
// capacity declared (every host charge is 0), memory not reported, no host limits, F_mem from
// the free GPUs per type (no per-GPU tree).
int Metrics::ChangeWhole(const Allocation& allocation, int sign) {
  const int slot = type_slot_[allocation.gpu_type];
  CHECK(slot >= 0, "allocation of a GPU type absent from the cluster");
  allocated_any_ = true;
  const size_t size = allocation.gpus.size();
  const double count = static_cast<double>(size);
  state_[slot] += sign * count;
  const double held = sign * type_memory_gib_[slot] * count;
  state_[q_index_ + 5] += held;
  state_[types_.size() + slot] += held;
  const int* gpus = allocation.gpus.data();
  const int multi_node = cluster_.NodeOfGpu(gpus[0]) != cluster_.NodeOfGpu(gpus[size - 1]);
  const int milli = sign * kMilliPerGpu;
  int nodes = 0;
  size_t i = 0;
  while (i < size) {
    const int node = cluster_.NodeOfGpu(gpus[i]);
    ++nodes;
    int on_node = 0;
    for (; i < size && cluster_.NodeOfGpu(gpus[i]) == node; ++i) {
      int& held_milli = held_milli_[gpus[i]];
      held_milli += milli;
      CHECK(held_milli >= 0 && held_milli <= kMilliPerGpu,
            "GPU " + std::to_string(gpus[i]) + ": metrics' held share out of range");
      ++on_node;
    }
    node_busy_[node] += sign * on_node;
    if (multi_node) node_multi_busy_[node] += sign * on_node;
    imbalance_sum_ -= node_imbalance_[node];
    node_imbalance_[node] = kImbalanceFactor * (node_busy_[node] - node_multi_busy_[node]) /
                            cluster_.node(node).gpu_count;
    imbalance_sum_ += node_imbalance_[node];
    if (fgd_) {
      // No host limits here (whole_fast_): the table case unless some GPU is shared.
      if (resources_->shared_gpus().empty()) {
        fgd_->WholeNodeChanged(node, cluster_.node(node).gpu_count, resources_->free_gpus(node));
      } else {
        fgd_->NodeChanged(node, *resources_);
      }
    }
  }
  state_[q_index_ + 4] = imbalance_sum_ / cluster_.node_count();
  state_[q_index_ + 9] = cpu_used_milli_ / 1000.0;
  state_[q_index_ + 10] = memory_used_mib_ / 1024.0;
  UpdateFragmentationState();
  return nodes;
}

void Metrics::ObserveQueue(const Resources& resources, const PlacementRequest* head,
                           int queue_length, int running_jobs) {
  state_[q_index_] = queue_length;
  state_[q_index_ + 1] = running_jobs;
  double stranded = 0;
  double i_frag = 0;
  // A CPU-only head (0 GPUs) waits for CPUs, not GPUs: no GPU is stranded by its wait.
  if (head != nullptr && head->gpus > 0 && resources.total_free() > 0) {
    // Stranded GPUs (docs/metrics.md#stranded-gpus): the head waits although its allowed types have
    // at least its demand idle; every idle GPU of those types is then idle because of
    // fragmentation.
    int idle_allowed = 0;
    for (int type : types_) {
      if (head->AllowsType(type)) idle_allowed += resources.free_of_type(type);
    }
    if (idle_allowed >= head->gpus) stranded = idle_allowed;
    // I_frag (docs/metrics.md#i_frag): idle GPUs on nodes that cannot host the head's per-node
    // demand min(n, G) (or of a type it may not use), over all idle GPUs.
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

void Metrics::Integrate(double from, double to) {
  const double dt = to - from;
  const double* __restrict state = state_.data();
  double* __restrict bucket = bucket_.data();
  double* __restrict total = total_.data();
  for (size_t i = 0, n = state_.size(); i < n; ++i) {
    const double area = state[i] * dt;
    bucket[i] += area;
    total[i] += area;
  }
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
    Integrate(last_, end);
    last_ = end;
    FlushInterval(end);
  }
  Integrate(last_, t);
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
      row.memory_utilization = memory_reported_
                                   ? bucket_[types_.size() + i] / length / (gpus * gpu.memory_gib)
                                   : row.utilization;
      // GPUs out of service (pool nodes off) draw nothing.
      const double off = off_index_ < 0 ? 0.0 : bucket_[off_index_ + i] / length;
      row.power_watts =
          row.busy_gpus * gpu.tdp_watts + (gpus - off - row.busy_gpus) * gpu.idle_watts;
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
    row.f_mem = bucket_[q_index_ + 6] / length;
    if (fgd_) {
      row.fgd_fragmentation = bucket_[q_index_ + 7] / length;
      row.fgd_fragmented_gpus = bucket_[q_index_ + 8] / length;
    }
    if (cpu_capacity_cores_ > 0) {
      row.cpu_utilization = bucket_[q_index_ + 9] / length / cpu_capacity_cores_;
    }
    if (host_memory_capacity_gib_ > 0) {
      row.host_memory_utilization = bucket_[q_index_ + 10] / length / host_memory_capacity_gib_;
    }
    if (host_limited_) row.cpu_stranded_gpus = bucket_[q_index_ + 11] / length;
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
    const double off = off_index_ < 0 ? 0.0 : total_[off_index_ + i];  // draws nothing
    joules += total_[i] * gpu.tdp_watts +
              (cluster_.GpusOfType(types_[i]) * span - off - total_[i]) * gpu.idle_watts;
  }
  return joules;
}

double Metrics::busy_gpus_now() const {
  double sum = 0;
  for (size_t i = 0; i < types_.size(); ++i) sum += state_[i];
  return sum;
}

}  // namespace clustersim
