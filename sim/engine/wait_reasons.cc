#include "sim/engine/wait_reasons.h"

#include <algorithm>
#include <bit>

#include "sim/engine/fragmentation.h"
#include "sim/engine/job.h"
#include "sim/engine/placement.h"
#include "sim/engine/resources.h"
#include "sim/hardware/cluster.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr const char* kNames[kWaitReasonCount] = {
    "capacity",   "fragmentation_gpus", "fragmentation_cpus", "fragmentation_memory",
    "fragmentation_mig", "nodes_down", "queue_head", "reservation",
    "quota",      "priority",           "policy_hold",        "spread"};

int Index(WaitReason reason) { return static_cast<int>(reason); }

bool Fits(const Placement& placement, const Resources& free, const PlacementRequest& request) {
  Allocation scratch;
  return placement.Find(free, request, &scratch);
}

}  // namespace

const char* WaitReasonName(WaitReason reason) { return kNames[Index(reason)]; }

std::optional<WaitReason> WaitReasonFromName(const std::string& name) {
  for (int i = 0; i < kWaitReasonCount; ++i) {
    if (name == kNames[i]) return static_cast<WaitReason>(i);
  }
  return std::nullopt;
}

std::string WaitReasonNames() {
  std::string names;
  for (const char* name : kNames) names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

std::optional<WaitReason> ClassifyNoFit(const Cluster& cluster, const Placement& placement,
                                        const Resources& free, const PlacementRequest& request,
                                        const std::vector<int>& out_of_service) {
  const bool random = placement.DrawsRandomNumbers();
  auto down_of_allowed_types = [&] {
    int down = 0;
    for (int g : out_of_service) {
      down += request.AllowsType(cluster.node(cluster.NodeOfGpu(g)).gpu_type);
    }
    return down;
  };
  // The host demand is what keeps it out when it fits with a negligible one: the CPUs if it does
  // not fit with its CPUs alone, else the memory. Negligible is one milli-CPU and one MiB per
  // node, not 0: an unstated demand is charged the node's share of its CPUs and memory
  // (HostChargeOn), which binds too.
  auto host_reason = [&]() -> std::optional<WaitReason> {
    if (!free.host_limited()) return std::nullopt;
    PlacementRequest gpus_only = request;
    gpus_only.host = HostDemand{1, 1};
    if (!Fits(placement, free, gpus_only)) return std::nullopt;
    PlacementRequest cpus = request;
    cpus.host.memory_mib = 1;
    return !Fits(placement, free, cpus) ? WaitReason::kFragmentationCpus
                                        : WaitReason::kFragmentationMemory;
  };
  if (IsCpuOnly(request)) {
    // Placed on one node: CPUs and memory are the only dimensions. Capacity: fewer free CPUs (or
    // less free memory) on all the nodes of its allowed types together than it states (a
    // dimension some such node does not declare never binds there).
    if (!random && Fits(placement, free, request)) return std::nullopt;
    if (free.any_host_held_out() && !random) {
      Resources repaired = free;
      repaired.ReleaseHeldOutHosts();
      if (Fits(placement, repaired, request)) return WaitReason::kNodesDown;
    }
    int64_t free_cpu = 0;
    int64_t free_memory = 0;
    bool cpu_unbound = false;
    bool memory_unbound = false;
    for (const Node& node : cluster.nodes()) {
      if (!request.AllowsType(node.gpu_type)) continue;
      cpu_unbound = cpu_unbound || NodeCpuMilli(node) == 0;
      memory_unbound = memory_unbound || NodeMemoryMib(node) == 0;
      free_cpu += free.free_cpu_milli(node.index);
      free_memory += free.free_memory_mib(node.index);
    }
    if ((!cpu_unbound && free_cpu < request.host.cpu_milli) ||
        (!memory_unbound && free_memory < request.host.memory_mib)) {
      return WaitReason::kCapacity;
    }
    PlacementRequest cpus = request;
    cpus.host.memory_mib = 0;
    bool cpus_fit = false;
    for (int node = 0; node < cluster.node_count() && !cpus_fit; ++node) {
      cpus_fit = CpuOnlyFits(free, node, cpus);
    }
    return cpus_fit ? WaitReason::kFragmentationMemory : WaitReason::kFragmentationCpus;
  }
  if (IsMigRequest(request)) {
    // A MIG instance (docs/mig.md): capacity is the free memory slices of the GPUs in MIG mode
    // (free or holding instances) of the allowed types that offer its profile.
    if (Fits(placement, free, request)) return std::nullopt;
    // Its group's anti-affinity rule, where it would fit but for it (docs/spreading.md); the
    // placement's other reason for an instance is the layout, decided below.
    if (placement.NoFitReason(free, request) == WaitReason::kSpread) return WaitReason::kSpread;
    if (std::optional<WaitReason> host = host_reason()) return host;
    if (!out_of_service.empty() || free.any_host_held_out()) {
      Resources repaired = free;
      repaired.Release(out_of_service);
      repaired.ReleaseHeldOutHosts();
      if (Fits(placement, repaired, request)) return WaitReason::kNodesDown;
    }
    const std::string& name = MigProfileName(request.job->mig_profile);
    int free_slices = 0;
    int need = kMigMemorySlices + 1;
    for (int g = 0; g < cluster.total_gpus(); ++g) {
      if (!free.mig_enabled(g)) continue;
      if (!request.AllowsType(cluster.node(cluster.NodeOfGpu(g)).gpu_type)) continue;
      const auto profiles = GpuMigProfiles(cluster, g);
      const int p = FindMigProfile(profiles, name);
      if (p < 0) continue;
      need = profiles[p].memory_slices;
      if (free.mig_used(g) == 0 && !free.IsGpuFree(g)) continue;  // held by another job
      free_slices += kMigMemorySlices - std::popcount(static_cast<unsigned>(free.mig_used(g)));
    }
    return free_slices >= need ? WaitReason::kFragmentationMig : WaitReason::kCapacity;
  }
  if (request.milli > 0) {
    // A share: capacity is the free thousandths of the allowed types' GPUs.
    if (!random && Fits(placement, free, request)) return std::nullopt;
    int64_t free_milli = 0;
    for (int g = 0; g < cluster.total_gpus(); ++g) {
      if (request.AllowsType(cluster.node(cluster.NodeOfGpu(g)).gpu_type)) {
        free_milli += free.free_milli(g);
      }
    }
    if (free_milli >= request.milli) return WaitReason::kFragmentationGpus;
    return free_milli + int64_t{down_of_allowed_types()} * kMilliPerGpu >= request.milli
               ? WaitReason::kNodesDown
               : WaitReason::kCapacity;
  }
  int free_allowed = 0;
  for (int type : cluster.gpu_types()) {
    if (request.AllowsType(type)) free_allowed += free.free_of_type(type);
  }
  if (free_allowed < request.gpus) {
    return free_allowed + down_of_allowed_types() >= request.gpus ? WaitReason::kNodesDown
                                                                  : WaitReason::kCapacity;
  }
  if (random) return WaitReason::kFragmentationGpus;
  if (Fits(placement, free, request)) return std::nullopt;
  if (std::optional<WaitReason> own = placement.NoFitReason(free, request)) return own;
  if (std::optional<WaitReason> host = host_reason()) return host;
  if (!out_of_service.empty()) {
    Resources repaired = free;
    repaired.Release(out_of_service);
    repaired.ReleaseHeldOutHosts();  // a node out of service holds out its host too
    if (Fits(placement, repaired, request)) return WaitReason::kNodesDown;
  }
  return WaitReason::kFragmentationGpus;
}

// ---- WaitLedger ----

void WaitLedger::Resize(size_t jobs) {
  flags_.assign(jobs, 0);
  own_.assign(jobs, WaitReason::kQueueHead);
}

WaitLedger::Group& WaitLedger::GroupOf(int group) {
  CHECK(group >= 0, "wait group out of range: negative");
  if (group >= static_cast<int>(group_state_.size())) group_state_.resize(group + 1);
  return group_state_[group];
}

void WaitLedger::Enter(JobId id, int group, double now) {
  if (group != 0 && groups_.empty()) groups_.assign(flags_.size(), 0);
  if (!groups_.empty()) groups_[id] = static_cast<uint32_t>(group);
  flags_[id] &= kTallied;  // a job queued again keeps the seconds of its earlier waits
  Join(id, now);
}

void WaitLedger::Join(JobId id, double now) {
  Group& g = GroupOf(group(id));
  if (g.members++ == 0) {
    g.epochs.clear();
    g.epochs.push_back(Epoch{now, g.reason, {}});
  }
}

void WaitLedger::Leave(JobId id, double queued_since, double now) {
  Close(id, queued_since, now);
  if (!has_own(id)) --group_state_[group(id)].members;
  if (flags_[id] & kPieceStart) piece_start_.erase(id);
  flags_[id] &= kTallied;
}

void WaitLedger::SetOwn(JobId id, WaitReason reason, bool derived, double queued_since,
                        double now) {
  const uint8_t derived_bit = derived ? kDerived : 0;
  if (has_own(id) && own_[id] == reason) {
    flags_[id] = static_cast<uint8_t>((flags_[id] & ~kDerived) | derived_bit);
    return;
  }
  Close(id, queued_since, now);
  if (!has_own(id)) --group_state_[group(id)].members;
  own_[id] = reason;
  flags_[id] = static_cast<uint8_t>((flags_[id] & ~kDerived) | kOwn | derived_bit);
  SetPieceStart(id, queued_since, now);
}

void WaitLedger::ClearOwn(JobId id, double queued_since, double now) {
  if (!has_own(id)) return;
  Close(id, queued_since, now);
  flags_[id] &= static_cast<uint8_t>(~(kOwn | kDerived));
  Join(id, now);
  SetPieceStart(id, queued_since, now);
}

void WaitLedger::SetGroup(int group, WaitReason reason, double now) {
  Group& g = GroupOf(group);
  if (g.reason == reason) return;
  g.reason = reason;
  if (g.members == 0) return;
  const Epoch& last = g.epochs.back();
  if (last.start == now) {
    // Nothing accrued under the last epoch: replace its reason.
    g.epochs.back().reason = reason;
    return;
  }
  Epoch next{now, reason, last.before};
  next.before[Index(last.reason)] += now - last.start;
  g.epochs.push_back(next);
}

WaitReason WaitLedger::Current(JobId id) const {
  return has_own(id) ? own_[id] : group_state_[group(id)].reason;
}

double WaitLedger::PieceStart(JobId id, double queued_since) const {
  return (flags_[id] & kPieceStart) ? piece_start_.at(id) : queued_since;
}

void WaitLedger::SetPieceStart(JobId id, double queued_since, double now) {
  if (now == queued_since) {
    if (flags_[id] & kPieceStart) piece_start_.erase(id);
    flags_[id] &= static_cast<uint8_t>(~kPieceStart);
    return;
  }
  piece_start_[id] = now;
  flags_[id] |= kPieceStart;
}

void WaitLedger::Close(JobId id, double queued_since, double now) {
  const double start = PieceStart(id, queued_since);
  if (!(now > start)) return;
  if (has_own(id)) {
    Add(id, own_[id], now - start);
    return;
  }
  const Group& g = group_state_[group(id)];
  const Epoch& last = g.epochs.back();
  if (start >= last.start) {
    Add(id, last.reason, now - start);  // no change since it joined: the common case
    return;
  }
  // Seconds per reason up to time x, from the first epoch's start, within epoch k (start <= x).
  auto upto = [&](size_t k, double x, int r) {
    const Epoch& e = g.epochs[k];
    return e.before[r] + (Index(e.reason) == r ? x - e.start : 0.0);
  };
  const auto after = std::upper_bound(g.epochs.begin(), g.epochs.end(), start,
                                      [](double t, const Epoch& e) { return t < e.start; });
  CHECK(after != g.epochs.begin(), "wait ledger: a member joined before its group's first epoch");
  const size_t k_start = static_cast<size_t>(after - g.epochs.begin()) - 1;
  const size_t k_now = g.epochs.size() - 1;
  for (int r = 0; r < kWaitReasonCount; ++r) {
    const double seconds = upto(k_now, now, r) - upto(k_start, start, r);
    if (seconds > 0) Add(id, static_cast<WaitReason>(r), seconds);
  }
}

void WaitLedger::Add(JobId id, WaitReason reason, double seconds) {
  totals_[Index(reason)] += seconds;
  const int32_t added = static_cast<int32_t>(tallies_.size());
  if (!(flags_[id] & kTallied)) {
    flags_[id] |= kTallied;
    first_tally_[id] = added;
  } else {
    int32_t t = first_tally_.at(id);
    while (true) {
      if (tallies_[t].reason == reason) {
        tallies_[t].seconds += seconds;
        return;
      }
      if (tallies_[t].next < 0) break;
      t = tallies_[t].next;
    }
    tallies_[t].next = added;
  }
  tallies_.push_back(Tally{seconds, -1, reason});
}

std::vector<std::pair<WaitReason, double>> WaitLedger::Seconds(JobId id) const {
  std::vector<std::pair<WaitReason, double>> seconds;
  if (static_cast<size_t>(id) >= flags_.size() || !(flags_[id] & kTallied)) return seconds;
  for (int32_t t = first_tally_.at(id); t >= 0; t = tallies_[t].next) {
    seconds.emplace_back(tallies_[t].reason, tallies_[t].seconds);
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds;
}

}  // namespace clustersim
