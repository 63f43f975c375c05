#include "sim/engine/resources.h"

#include <algorithm>
#include <cmath>

#include "sim/hardware/mig.h"
#include "sim/util/error.h"

namespace clustersim {

int32_t NodeCpuMilli(const Node& node) {
  return static_cast<int32_t>(std::min<int64_t>(int64_t{node.cpus} * 1000, INT32_MAX));
}

int32_t NodeMemoryMib(const Node& node) {
  return static_cast<int32_t>(std::min(std::floor(node.host_memory_gib * 1024), 2147483647.0));
}

namespace {

// One dimension of HostChargeOn: a stated demand split by GPUs (rounded up), else the node's
// capacity in proportion (rounded down).
int32_t ChargeOf(int32_t demand, int32_t capacity, int gpus_on_node, int allocation_gpus, int milli,
                 int node_gpus) {
  if (capacity <= 0) return 0;
  if (demand > 0) {
    if (milli > 0 || gpus_on_node >= allocation_gpus) return demand;
    return static_cast<int32_t>((int64_t{demand} * gpus_on_node + allocation_gpus - 1) /
                                allocation_gpus);
  }
  if (node_gpus <= 0) return 0;  // a node without GPUs: only stated demands charge it
  if (milli > 0)
    return static_cast<int32_t>(int64_t{capacity} * milli / (1000 * int64_t{node_gpus}));
  return static_cast<int32_t>(int64_t{capacity} * gpus_on_node / node_gpus);
}

}  // namespace

HostCharge HostChargeOn(const Node& node, const HostDemand& demand, int gpus_on_node,
                        int allocation_gpus, int milli) {
  HostCharge charge;
  charge.cpu_milli = ChargeOf(demand.cpu_milli, NodeCpuMilli(node), gpus_on_node, allocation_gpus,
                              milli, node.gpu_count);
  charge.memory_mib = ChargeOf(demand.memory_mib, NodeMemoryMib(node), gpus_on_node,
                               allocation_gpus, milli, node.gpu_count);
  return charge;
}

HostCharge JobHostChargeOn(const Node& node, const HostDemand& demand, int on_node,
                           int allocation_gpus, int milli) {
  if (milli == 0) return HostChargeOn(node, demand, on_node, allocation_gpus, 0);
  const HostCharge one = HostChargeOn(node, demand, 1, 1, milli);
  return HostCharge{one.cpu_milli * on_node, one.memory_mib * on_node};
}

Resources::Resources(const Cluster& cluster) : cluster_(&cluster) {
  const int node_count = cluster.node_count();
  const int types = static_cast<int>(cluster.catalog().gpus().size());
  free_bits_.assign((cluster.total_gpus() + 63) / 64, 0);
  for (int g = 0; g < cluster.total_gpus(); ++g) free_bits_[g >> 6] |= uint64_t{1} << (g & 63);
  free_milli_.assign(cluster.total_gpus(), 1000);
  shared_gpus_ = IndexSet(cluster.total_gpus());
  node_free_.resize(node_count);
  type_free_.assign(types, 0);
  node_partition_.resize(node_count);
  node_position_.resize(node_count);
  node_type_position_.resize(node_count);
  type_nodes_.resize(types);
  for (const Node& node : cluster.nodes()) {
    int p = 0;
    while (p < static_cast<int>(partitions_.size()) &&
           !(partitions_[p].gpu_type == node.gpu_type &&
             partitions_[p].gpus_per_node == node.gpu_count)) {
      ++p;
    }
    if (p == static_cast<int>(partitions_.size())) {
      Partition part;
      part.gpu_type = node.gpu_type;
      part.gpus_per_node = node.gpu_count;
      partitions_.push_back(std::move(part));
    }
    node_partition_[node.index] = p;
    node_position_[node.index] = static_cast<int>(partitions_[p].nodes.size());
    partitions_[p].nodes.push_back(node.index);
    node_type_position_[node.index] = static_cast<int>(type_nodes_[node.gpu_type].size());
    type_nodes_[node.gpu_type].push_back(node.index);
  }
  for (auto& part : partitions_) {
    const int n = static_cast<int>(part.nodes.size());
    part.by_free.assign(part.gpus_per_node + 1, IndexSet(n));
    part.by_free_count.assign(part.gpus_per_node + 1, 0);
    part.free_tree = MaxTree(n);
    for (int pos = 0; pos < n; ++pos) {
      part.by_free[part.gpus_per_node].Insert(pos);
      part.free_tree.Set(pos, part.gpus_per_node);
    }
    part.by_free_count[part.gpus_per_node] = n;
  }
  type_nonempty_.reserve(types);
  for (int t = 0; t < types; ++t) {
    type_nonempty_.emplace_back(static_cast<int>(type_nodes_[t].size()));
    for (int pos = 0; pos < static_cast<int>(type_nodes_[t].size()); ++pos) {
      type_nonempty_[t].Insert(pos);
    }
  }
  for (const Node& node : cluster.nodes()) {
    node_free_[node.index] = node.gpu_count;
    type_free_[node.gpu_type] += node.gpu_count;
  }
  total_free_ = cluster.total_gpus();
  for (const Node& node : cluster.nodes()) {
    if (!node.mig) continue;
    if (mig_enabled_.empty()) {
      mig_enabled_.assign(cluster.total_gpus(), 0);
      mig_used_.assign(cluster.total_gpus(), 0);
    }
    for (int i = 0; i < node.gpu_count; ++i) mig_enabled_[node.first_gpu + i] = 1;
  }
}

void Resources::SetNodeFree(int node, int free) {
  const int old = node_free_[node];
  if (old == free) return;
  node_free_[node] = free;
  Partition& part = partitions_[node_partition_[node]];
  const int pos = node_position_[node];
  part.by_free[old].Erase(pos);
  part.by_free_count[old]--;
  part.by_free[free].Insert(pos);
  part.by_free_count[free]++;
  part.free_tree.Set(pos, free);
  if (!part.cpu_by_free.empty()) {
    part.cpu_by_free[old].Set(pos, 0);
    IndexFreeCpu(node);
  }
  const int type = cluster_->node(node).gpu_type;
  type_free_[type] += free - old;
  total_free_ += free - old;
  if (free == 0) {
    type_nonempty_[type].Erase(node_type_position_[node]);
  } else if (old == 0) {
    type_nonempty_[type].Insert(node_type_position_[node]);
  }
}

void Resources::Allocate(std::span<const int> gpus) {
  ++version_;
  size_t i = 0;
  while (i < gpus.size()) {
    const int node = cluster_->NodeOfGpu(gpus[i]);
    int taken = 0;
    for (; i < gpus.size() && cluster_->NodeOfGpu(gpus[i]) == node; ++i) {
      const int g = gpus[i];
      CHECK(IsGpuFree(g), "GPU " + std::to_string(g) + " allocated twice");
      free_bits_[g >> 6] &= ~(uint64_t{1} << (g & 63));
      free_milli_[g] = 0;
      ++taken;
    }
    SetNodeFree(node, node_free_[node] - taken);
  }
}

void Resources::Release(std::span<const int> gpus) {
  ++version_;
  size_t i = 0;
  while (i < gpus.size()) {
    const int node = cluster_->NodeOfGpu(gpus[i]);
    int given = 0;
    for (; i < gpus.size() && cluster_->NodeOfGpu(gpus[i]) == node; ++i) {
      const int g = gpus[i];
      CHECK(!IsGpuFree(g), "GPU " + std::to_string(g) + " released while free");
      CHECK(free_milli_[g] == 0, "GPU " + std::to_string(g) + " released whole while shared");
      free_bits_[g >> 6] |= uint64_t{1} << (g & 63);
      free_milli_[g] = 1000;
      ++given;
    }
    SetNodeFree(node, node_free_[node] + given);
  }
}

void Resources::AllocateShare(int gpu, int milli) {
  ++version_;
  CHECK(milli > 0 && milli < 1000, "a share must be 1..999 thousandths of a GPU");
  CHECK(free_milli_[gpu] >= milli, "GPU " + std::to_string(gpu) + " has too small a share left");
  if (free_milli_[gpu] == 1000) {
    const int one[] = {gpu};
    Allocate(one);  // leaves the whole-GPU indexes
    free_milli_[gpu] = 1000;
  }
  free_milli_[gpu] = static_cast<int16_t>(free_milli_[gpu] - milli);
  if (free_milli_[gpu] > 0) {
    if (!shared_gpus_.Contains(gpu)) shared_gpus_.Insert(gpu);
  } else if (shared_gpus_.Contains(gpu)) {
    shared_gpus_.Erase(gpu);
  }
}

void Resources::ReleaseShare(int gpu, int milli) {
  ++version_;
  CHECK(milli > 0 && milli < 1000 && !IsGpuFree(gpu) && free_milli_[gpu] + milli <= 1000,
        "GPU " + std::to_string(gpu) + ": released share not held");
  free_milli_[gpu] = static_cast<int16_t>(free_milli_[gpu] + milli);
  if (free_milli_[gpu] == 1000) {
    if (shared_gpus_.Contains(gpu)) shared_gpus_.Erase(gpu);
    free_milli_[gpu] = 0;
    const int one[] = {gpu};
    Release(one);
  } else if (!shared_gpus_.Contains(gpu)) {
    shared_gpus_.Insert(gpu);
  }
}

void Resources::AppendLowestFreeGpus(int node, int count, std::vector<int>* out) const {
  if (count <= 0) return;
  const Node& n = cluster_->node(node);
  const int end = n.first_gpu + n.gpu_count;
  // Word by word over the free bits: a wide job takes whole free words, written without a
  // capacity check per GPU.
  const size_t start = out->size();
  out->resize(start + count);
  int* dst = out->data() + start;
  int g = n.first_gpu;
  while (count > 0) {
    CHECK(g < end, "node " + std::to_string(node) + " has fewer free GPUs than requested");
    const int base = (g >> 6) << 6;
    uint64_t word = free_bits_[g >> 6] & (~uint64_t{0} << (g & 63));
    if (end - base < 64) word &= (uint64_t{1} << (end - base)) - 1;
    if (word == ~uint64_t{0} && count >= 64) {
      for (int i = 0; i < 64; ++i) dst[i] = base + i;
      dst += 64;
      count -= 64;
    } else {
      for (; word != 0 && count > 0; word &= word - 1, --count) {
        *dst++ = base + __builtin_ctzll(word);
      }
    }
    g = base + 64;
  }
}

}  // namespace clustersim

namespace clustersim {

void Resources::EnableHostLimits() {
  ++version_;
  if (host_limited()) return;
  CHECK(total_free_ == cluster_->total_gpus() && shared_gpus_.empty(),
        "host limits must be enabled before anything is allocated");
  free_cpu_milli_.resize(cluster_->node_count());
  free_memory_mib_.resize(cluster_->node_count());
  for (const Node& node : cluster_->nodes()) {
    // An undeclared dimension is charged 0 and so never binds; its free amount stays 0.
    free_cpu_milli_[node.index] = NodeCpuMilli(node);
    free_memory_mib_[node.index] = NodeMemoryMib(node);
  }
  for (Partition& part : partitions_) {
    part.cpu_by_free.assign(part.gpus_per_node + 1, MaxTree(static_cast<int>(part.nodes.size())));
    for (int node : part.nodes) IndexFreeCpu(node);
  }
}

void Resources::IndexFreeCpu(int node) {
  Partition& part = partitions_[node_partition_[node]];
  if (part.cpu_by_free.empty()) return;
  const int32_t cpu = NodeCpuMilli(cluster_->node(node)) > 0 ? free_cpu_milli_[node]
                                                               : Partition::kUndeclaredCpu;
  part.cpu_by_free[node_free_[node]].Set(node_position_[node], cpu);
}

bool Resources::HostFitsGpus(const HostDemand& demand, std::span<const int> gpus, int milli) const {
  if (!host_limited()) return true;
  bool fits = true;
  const int n = static_cast<int>(gpus.size());
  ForEachNode(*cluster_, gpus, [&](int node, int on_node) {
    fits = fits && HostFits(node, JobHostChargeOn(cluster_->node(node), demand, on_node, n, milli));
  });
  return fits;
}

void Resources::AllocateHost(const HostDemand& demand, std::span<const int> gpus, int milli) {
  ++version_;
  if (!host_limited()) return;
  const int n = static_cast<int>(gpus.size());
  ForEachNode(*cluster_, gpus, [&](int node, int on_node) {
    const HostCharge c = JobHostChargeOn(cluster_->node(node), demand, on_node, n, milli);
    CHECK(HostFits(node, c), "node " + std::to_string(node) + ": host charge does not fit");
    free_cpu_milli_[node] -= c.cpu_milli;
    free_memory_mib_[node] -= c.memory_mib;
    IndexFreeCpu(node);
  });
}

void Resources::ReleaseHost(const HostDemand& demand, std::span<const int> gpus, int milli) {
  ++version_;
  if (!host_limited()) return;
  const int n = static_cast<int>(gpus.size());
  ForEachNode(*cluster_, gpus, [&](int node, int on_node) {
    const HostCharge c = JobHostChargeOn(cluster_->node(node), demand, on_node, n, milli);
    free_cpu_milli_[node] += c.cpu_milli;
    free_memory_mib_[node] += c.memory_mib;
    IndexFreeCpu(node);
    const Node& info = cluster_->node(node);
    CHECK(free_cpu_milli_[node] <= NodeCpuMilli(info) &&
              free_memory_mib_[node] <= NodeMemoryMib(info),
          "node " + std::to_string(node) + ": host charge released twice");
  });
}

bool Resources::NodeIdle(int node) const {
  const Node& n = cluster_->node(node);
  if (free_gpus(node) != n.gpu_count) return false;
  return !host_limited() ||
         (free_cpu_milli_[node] == NodeCpuMilli(n) && free_memory_mib_[node] == NodeMemoryMib(n));
}

void Resources::HoldOutHost(int node) {
  if (!host_limited()) return;
  if (host_held_out_.empty()) host_held_out_.assign(cluster_->node_count(), 0);
  CHECK(!host_held_out_[node], "node " + std::to_string(node) + " held out twice");
  const Node& n = cluster_->node(node);
  AllocateHostOn(node, HostDemand{NodeCpuMilli(n), NodeMemoryMib(n)});
  host_held_out_[node] = 1;
  ++held_out_hosts_;
}

void Resources::BringInHost(int node) {
  if (host_held_out_.empty() || !host_held_out_[node]) return;
  const Node& n = cluster_->node(node);
  ReleaseHostOn(node, HostDemand{NodeCpuMilli(n), NodeMemoryMib(n)});
  host_held_out_[node] = 0;
  --held_out_hosts_;
}

void Resources::ReleaseHeldOutHosts() {
  for (int node = 0; node < static_cast<int>(host_held_out_.size()) && held_out_hosts_ > 0;
       ++node) {
    BringInHost(node);
  }
}

void Resources::AllocateHostOn(int node, const HostDemand& demand) {
  ++version_;
  if (!host_limited()) return;
  const HostCharge c = HostChargeOn(cluster_->node(node), demand, 0, 0, 0);
  CHECK(HostFits(node, c), "node " + std::to_string(node) + ": host charge does not fit");
  free_cpu_milli_[node] -= c.cpu_milli;
  free_memory_mib_[node] -= c.memory_mib;
  IndexFreeCpu(node);
}

void Resources::ReleaseHostOn(int node, const HostDemand& demand) {
  ++version_;
  if (!host_limited()) return;
  const HostCharge c = HostChargeOn(cluster_->node(node), demand, 0, 0, 0);
  free_cpu_milli_[node] += c.cpu_milli;
  free_memory_mib_[node] += c.memory_mib;
  IndexFreeCpu(node);
  const Node& info = cluster_->node(node);
  CHECK(
      free_cpu_milli_[node] <= NodeCpuMilli(info) && free_memory_mib_[node] <= NodeMemoryMib(info),
      "node " + std::to_string(node) + ": host charge released twice");
}

std::span<const MigProfile> GpuMigProfiles(const Cluster& cluster, int gpu) {
  return MigProfilesOf(cluster.catalog().gpu(cluster.node(cluster.NodeOfGpu(gpu)).gpu_type).name);
}

bool Resources::MigFits(int gpu, int profile, int start) const {
  if (!mig_enabled(gpu)) return false;
  const auto profiles = GpuMigProfiles(*cluster_, gpu);
  if (profile < 0 || profile >= static_cast<int>(profiles.size())) return false;
  const MigProfile& p = profiles[profile];
  if (!p.StartsAt(start)) return false;
  const uint8_t used = mig_used_[gpu];
  if (used == 0 && !IsGpuFree(gpu)) return false;  // held whole or shared
  return (used & p.Mask(start)) == 0;
}

void Resources::AllocateMig(int gpu, int profile, int start) {
  ++version_;
  CHECK(MigFits(gpu, profile, start), "MIG instance on GPU " + std::to_string(gpu) +
                                          " at slice " + std::to_string(start) + " does not fit");
  const auto profiles = GpuMigProfiles(*cluster_, gpu);
  if (mig_used_[gpu] == 0) {
    const int one[] = {gpu};
    Allocate(one);
  }
  mig_used_[gpu] |= profiles[profile].Mask(start);
}

void Resources::ReleaseMig(int gpu, int profile, int start) {
  ++version_;
  CHECK(mig_enabled(gpu), "MIG instance released on GPU " + std::to_string(gpu) + " not in MIG mode");
  const auto profiles = GpuMigProfiles(*cluster_, gpu);
  CHECK(profile >= 0 && profile < static_cast<int>(profiles.size()), "unknown MIG profile index");
  const uint8_t mask = profiles[profile].Mask(start);
  CHECK((mig_used_[gpu] & mask) == mask, "MIG instance released on GPU " + std::to_string(gpu) +
                                             " that does not hold it");
  mig_used_[gpu] &= static_cast<uint8_t>(~mask);
  if (mig_used_[gpu] == 0) {
    const int one[] = {gpu};
    Release(one);
  }
}

void Resources::AllocateJob(const HostDemand& demand, std::span<const int> gpus, int milli,
                            int cpu_only_node, uint16_t constraint, int mig_profile, int mig_start) {
  if (gpus.empty() && cpu_only_node >= 0) AllocateHostOn(cpu_only_node, demand);
  if (mig_profile >= 0) {
    CHECK(gpus.size() == 1, "a MIG instance on more than one GPU");
    AllocateMig(gpus[0], mig_profile, mig_start);
  } else if (milli > 0) {
    for (int g : gpus) AllocateShare(g, milli);
  } else {
    Allocate(gpus);
  }
  AllocateHost(demand, gpus, milli);
  CountJobKind(gpus, milli, +1);
  CountSpread(constraint, gpus, cpu_only_node, +1);
}

void Resources::ReleaseJob(const HostDemand& demand, std::span<const int> gpus, int milli,
                           int cpu_only_node, uint16_t constraint, int mig_profile, int mig_start) {
  if (gpus.empty() && cpu_only_node >= 0) ReleaseHostOn(cpu_only_node, demand);
  CountJobKind(gpus, milli, -1);
  CountSpread(constraint, gpus, cpu_only_node, -1);
  ReleaseHost(demand, gpus, milli);
  if (mig_profile >= 0) {
    CHECK(gpus.size() == 1, "a MIG instance on more than one GPU");
    ReleaseMig(gpus[0], mig_profile, mig_start);
  } else if (milli > 0) {
    for (int g : gpus) ReleaseShare(g, milli);
  } else {
    Release(gpus);
  }
}

void Resources::EnableJobKinds() {
  ++version_;
  CHECK(total_free_ == cluster_->total_gpus(), "EnableJobKinds after GPUs were allocated");
  job_kinds_.assign(static_cast<size_t>(cluster_->node_count()), {});
}

void Resources::CountJobKind(std::span<const int> gpus, int milli, int delta) {
  ++version_;
  if (job_kinds_.empty()) return;
  const int kind = JobKind(gpus.size(), milli);
  ForEachNode(*cluster_, gpus, [&](int node, int) {
    auto& kinds = job_kinds_[node];
    auto it = std::find_if(kinds.begin(), kinds.end(),
                           [kind](const std::pair<int, int>& k) { return k.first == kind; });
    if (it == kinds.end()) {
      CHECK(delta > 0, "a job kind released on a node that holds none");
      kinds.emplace_back(kind, delta);
    } else if ((it->second += delta) == 0) {
      *it = kinds.back();
      kinds.pop_back();
    } else {
      CHECK(it->second > 0, "more jobs of a kind released than held");
    }
  });
}

void Resources::EnableSpread(std::shared_ptr<const std::vector<SpreadRule>> rules) {
  ++version_;
  CHECK(total_free_ == cluster_->total_gpus(), "EnableSpread after GPUs were allocated");
  spread_rules_ = std::move(rules);
}

void Resources::CountSpread(uint16_t constraint, std::span<const int> gpus, int cpu_only_node,
                            int delta) {
  ++version_;
  const SpreadRule& rule = spread_rule(constraint);
  if (rule.empty()) return;
  // The domains the job spans, each once (a job on two nodes of one rack is one job there).
  std::vector<int> domains;
  if (gpus.empty()) {
    if (cpu_only_node >= 0) domains.push_back(SpreadDomainOf(rule.domain, cpu_only_node));
  } else {
    ForEachNode(*cluster_, gpus,
                [&](int node, int) { domains.push_back(SpreadDomainOf(rule.domain, node)); });
  }
  std::sort(domains.begin(), domains.end());
  domains.erase(std::unique(domains.begin(), domains.end()), domains.end());
  if (domains.empty()) return;
  for (int d : domains) {
    int& count = spread_count_[{rule.group, d}];
    count += delta;
    CHECK(count >= 0, "a spread group released from a domain where it runs no job");
    if (count == 0) spread_count_.erase({rule.group, d});
  }
  int& running = running_of_group_[rule.group];
  running += delta;
  CHECK(running >= 0, "a spread group released more jobs than it runs");
  if (running == 0) running_of_group_.erase(rule.group);
}

}  // namespace clustersim
