#include "workloads/mig_from_shares.h"

namespace clustersim {

int SmallestProfileHolding(std::span<const MigProfile> profiles, int milli) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(profiles.size()); ++i) {
    const MigProfile& p = profiles[i];
    // slices / 7 >= milli / 1000, in integers.
    if (int64_t{p.compute_slices} * 1000 < int64_t{milli} * kMigComputeSlices) continue;
    if (best < 0 || p.compute_slices < profiles[best].compute_slices ||
        (p.compute_slices == profiles[best].compute_slices &&
         p.memory_slices < profiles[best].memory_slices)) {
      best = i;
    }
  }
  return best;
}

int64_t MapSharesToMig(std::span<Job> jobs, std::span<const MigProfile> profiles) {
  int64_t mapped = 0;
  for (Job& job : jobs) {
    if (!job.IsShare() || job.mig_profile != 0) continue;
    const int profile = SmallestProfileHolding(profiles, job.gpu_milli);
    if (profile < 0) continue;  // a share of < 1000 milli always fits 7 of 7 slices
    job.mig_profile = MigProfileId(profiles[profile].name);
    job.gpu_milli = 0;
    ++mapped;
  }
  return mapped;
}

}  // namespace clustersim
