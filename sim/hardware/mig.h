// MIG (Multi-Instance GPU) geometry of the GPU types that have it (docs/mig.md): each profile's
// compute slices (of 7), memory slices (of 8) and the memory-slice indices an instance of it may
// start at, as NVIDIA's MIG User Guide lists them ("Supported MIG Profiles" and
// `nvidia-smi mig -lgipp` in "Getting Started with MIG"). An instance of a profile started at s
// occupies memory slices [s, s + memory_slices).
#ifndef CLUSTERSIM_SIM_HARDWARE_MIG_H_
#define CLUSTERSIM_SIM_HARDWARE_MIG_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace clustersim {

inline constexpr int kMigComputeSlices = 7;
inline constexpr int kMigMemorySlices = 8;

struct MigProfile {
  const char* name;  // as nvidia-smi prints it without "MIG ", e.g. "3g.20gb"
  int compute_slices;
  int memory_slices;
  uint8_t starts;  // bit s set = an instance may start at memory slice s
  bool StartsAt(int s) const { return s >= 0 && s < kMigMemorySlices && ((starts >> s) & 1); }
  // The memory slices an instance started at `start` occupies, as a bit mask.
  uint8_t Mask(int start) const {
    return static_cast<uint8_t>(((1u << memory_slices) - 1u) << start);
  }
};

// The MIG profiles of the GPU type named `gpu_type` (a catalog name: A100-40GB, A100-80GB,
// A100-PCIe-80GB, H100-80GB, H100-PCIe-80GB), in the guide's order (smallest first); empty for a
// type without MIG.
std::span<const MigProfile> MigProfilesOf(std::string_view gpu_type);

// The index of the profile named `name` among `profiles`, or -1.
int FindMigProfile(std::span<const MigProfile> profiles, std::string_view name);

// True if some GPU type with MIG has a profile of that name.
bool IsKnownMigProfile(std::string_view name);

// Every profile name of every MIG GPU type, once each, separated by ", " (for messages).
std::string KnownMigProfileNames();

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_HARDWARE_MIG_H_
