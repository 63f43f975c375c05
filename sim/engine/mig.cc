#include "sim/engine/mig.h"

#include <deque>
#include <map>
#include <mutex>
#include <string_view>

#include "sim/engine/job.h"

namespace clustersim {
namespace {

struct MigNames {
  std::mutex mutex;
  std::deque<std::string> names;  // id - 1 -> name; a deque keeps references stable
  std::map<std::string, uint16_t, std::less<>> ids;
};

MigNames& Names() {
  static MigNames* names = new MigNames;  // never destroyed: ids outlive static destructors
  return *names;
}

}  // namespace

uint16_t MigProfileId(std::string_view name) {
  MigNames& table = Names();
  std::lock_guard<std::mutex> lock(table.mutex);
  if (auto it = table.ids.find(name); it != table.ids.end()) return it->second;
  if (table.names.size() >= 65535) return 0;
  table.names.emplace_back(name);
  const auto id = static_cast<uint16_t>(table.names.size());
  table.ids.emplace(std::string(name), id);
  return id;
}

const std::string& MigProfileName(uint16_t id) {
  static const std::string kNone;
  if (id == 0) return kNone;
  MigNames& table = Names();
  std::lock_guard<std::mutex> lock(table.mutex);
  return id <= table.names.size() ? table.names[id - 1] : kNone;
}

int MigMilli(const MigProfile& profile) {
  return profile.compute_slices >= kMigComputeSlices
             ? 999
             : profile.compute_slices * 1000 / kMigComputeSlices;
}

bool IsMigRequest(const PlacementRequest& request) {
  return request.job != nullptr && request.job->mig_profile != 0;
}

bool PlaceMig(const Resources& resources, const PlacementRequest& request, Allocation* out) {
  out->gpus.clear();
  out->gpu_type = -1;
  out->milli = 0;
  out->mig_profile = -1;
  out->mig_start = -1;
  if (!resources.any_mig() || request.job == nullptr) return false;
  const Cluster& cluster = resources.cluster();
  const std::string& name = MigProfileName(request.job->mig_profile);
  for (const Node& node : cluster.nodes()) {
    if (!node.mig || !request.AllowsType(node.gpu_type)) continue;
    const auto profiles = MigProfilesOf(cluster.catalog().gpu(node.gpu_type).name);
    const int p = FindMigProfile(profiles, name);
    if (p < 0) continue;
    const int milli = MigMilli(profiles[p]);
    if (!resources.HostFitsJob(node.index, request.host, 1, 1, milli)) continue;
    for (int g = node.first_gpu; g < node.first_gpu + node.gpu_count; ++g) {
      for (int start = 0; start < kMigMemorySlices; ++start) {
        if (!resources.MigFits(g, p, start)) continue;
        out->gpus.push_back(g);
        out->gpu_type = node.gpu_type;
        out->milli = milli;
        out->mig_profile = static_cast<int8_t>(p);
        out->mig_start = static_cast<int8_t>(start);
        return true;
      }
    }
  }
  return false;
}

void CloseMigGpu(Resources& state, int gpu) {
  if (!state.mig_enabled(gpu) || state.mig_used(gpu) == 0) return;
  // One-slice instances on every free slice they may start at (0-6): every profile that could
  // still use slice 7 also needs slice 6 (docs/mig.md's table), so none fits after.
  const auto profiles = GpuMigProfiles(state.cluster(), gpu);
  for (size_t p = 0; p < profiles.size(); ++p) {
    if (profiles[p].memory_slices != 1) continue;
    for (int start = 0; start < kMigMemorySlices; ++start) {
      if (state.MigFits(gpu, static_cast<int>(p), start)) {
        state.AllocateMig(gpu, static_cast<int>(p), start);
      }
    }
    return;
  }
}

std::string MigRejection(const Cluster& cluster, const std::string& profile_name,
                         uint64_t type_mask) {
  if (!IsKnownMigProfile(profile_name)) {
    return "mig_profile: unknown MIG profile \"" + profile_name + "\" (known: " +
           KnownMigProfileNames() + "; docs/mig.md)";
  }
  std::string offered;
  for (const Node& node : cluster.nodes()) {
    if (!node.mig) continue;
    const std::string& type = cluster.catalog().gpu(node.gpu_type).name;
    if (((type_mask >> node.gpu_type) & 1) &&
        FindMigProfile(MigProfilesOf(type), profile_name) >= 0) {
      return "";
    }
    if (offered.find(type) == std::string::npos) offered += (offered.empty() ? "" : ", ") + type;
  }
  return "mig_profile " + profile_name + ": no GPU in MIG mode of an allowed type offers it" +
         (offered.empty() ? std::string(" (no node group has \"mig\": true)")
                          : " (MIG GPU types: " + offered + ")");
}

std::string CheckMigLayouts(const Cluster& cluster,
                            const std::vector<const Allocation*>& allocations) {
  std::map<int, uint8_t> used;   // GPU -> occupied memory slices
  std::map<int, int> compute;    // GPU -> compute slices held
  for (const Allocation* a : allocations) {
    if (a->gpus.size() != 1) return "a MIG instance on " + std::to_string(a->gpus.size()) + " GPUs";
    const int g = a->gpus[0];
    const std::string at = "GPU " + std::to_string(g);
    if (!cluster.node(cluster.NodeOfGpu(g)).mig) return at + " holds a MIG instance but is not in MIG mode";
    const auto profiles = MigProfilesOf(cluster.catalog().gpu(cluster.node(cluster.NodeOfGpu(g)).gpu_type).name);
    if (a->mig_profile < 0 || a->mig_profile >= static_cast<int>(profiles.size())) {
      return at + " holds an instance of an unknown profile";
    }
    const MigProfile& p = profiles[a->mig_profile];
    if (!p.StartsAt(a->mig_start)) {
      return at + ": " + p.name + " at memory slice " + std::to_string(a->mig_start) +
             ", not one of its documented starts";
    }
    uint8_t& mask = used[g];
    if ((mask & p.Mask(a->mig_start)) != 0) {
      return at + ": " + p.name + " at memory slice " + std::to_string(a->mig_start) +
             " overlaps another instance";
    }
    mask |= p.Mask(a->mig_start);
    if ((compute[g] += p.compute_slices) > kMigComputeSlices) {
      return at + ": its instances hold more than " + std::to_string(kMigComputeSlices) +
             " compute slices";
    }
  }
  return "";
}

}  // namespace clustersim
