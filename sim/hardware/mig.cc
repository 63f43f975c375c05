#include "sim/hardware/mig.h"

#include <vector>

namespace clustersim {
namespace {

// Start masks from `nvidia-smi mig -lgipp` (MIG User Guide, "Getting Started with MIG"):
// {0,1,2,3,4,5,6}:1, {0,2,4,6}:2, {0,2,4}:2, {0,4}:4, {0}:4 and {0}:8.
constexpr uint8_t kAny1 = 0b0111'1111;
constexpr uint8_t kEven = 0b0101'0101;
constexpr uint8_t kEven2 = 0b0001'0101;
constexpr uint8_t kHalves = 0b0001'0001;
constexpr uint8_t kFirst = 0b0000'0001;

// A100-SXM4-40GB and A100-PCIE-40GB (the guide's Table "GPU Instance Profiles on A100").
constexpr MigProfile kA100_40[] = {
    {"1g.5gb", 1, 1, kAny1},  {"1g.10gb", 1, 2, kEven},  {"2g.10gb", 2, 2, kEven2},
    {"3g.20gb", 3, 4, kHalves}, {"4g.20gb", 4, 4, kFirst}, {"7g.40gb", 7, 8, kFirst}};
// A100 80GB: the same geometry, the names doubled; H100 80GB (the guide's Table "GPU Instance
// Profiles on H100") has the same names and placements.
constexpr MigProfile k80[] = {
    {"1g.10gb", 1, 1, kAny1},  {"1g.20gb", 1, 2, kEven},  {"2g.20gb", 2, 2, kEven2},
    {"3g.40gb", 3, 4, kHalves}, {"4g.40gb", 4, 4, kFirst}, {"7g.80gb", 7, 8, kFirst}};

}  // namespace

std::span<const MigProfile> MigProfilesOf(std::string_view gpu_type) {
  if (gpu_type == "A100-40GB") return kA100_40;
  if (gpu_type == "A100-80GB" || gpu_type == "A100-PCIe-80GB" || gpu_type == "H100-80GB" ||
      gpu_type == "H100-PCIe-80GB") {
    return k80;
  }
  return {};
}

int FindMigProfile(std::span<const MigProfile> profiles, std::string_view name) {
  for (size_t i = 0; i < profiles.size(); ++i) {
    if (name == profiles[i].name) return static_cast<int>(i);
  }
  return -1;
}

bool IsKnownMigProfile(std::string_view name) {
  return FindMigProfile(kA100_40, name) >= 0 || FindMigProfile(k80, name) >= 0;
}

std::string KnownMigProfileNames() {
  std::vector<std::string_view> names;
  for (const auto& table : {std::span<const MigProfile>(kA100_40), std::span<const MigProfile>(k80)}) {
    for (const MigProfile& p : table) {
      bool seen = false;
      for (std::string_view n : names) seen = seen || n == p.name;
      if (!seen) names.push_back(p.name);
    }
  }
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

}  // namespace clustersim
