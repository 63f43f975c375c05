// `--mig-from-shares` (docs/mig.md#from-gpu-shares): a trace's fractional GPU requests (openb's
// gpu_milli) as MIG instances, for asking what a sharing workload would get on MIG GPUs.
#ifndef CLUSTERSIM_WORKLOADS_MIG_FROM_SHARES_H_
#define CLUSTERSIM_WORKLOADS_MIG_FROM_SHARES_H_

#include <cstdint>
#include <span>

#include "sim/engine/job.h"
#include "sim/hardware/mig.h"

namespace clustersim {

// The smallest of `profiles` (fewest compute slices, then fewest memory slices) whose compute
// share, slices / 7, is at least `milli` / 1000; -1 if none. REQUIRES: 0 < milli < 1000.
int SmallestProfileHolding(std::span<const MigProfile> profiles, int milli);

// Every job asking for a share of one GPU (Job::IsShare) and no profile gets the smallest of
// `profiles` that holds its share and no share (an instance is the job's). Returns the jobs
// changed. REQUIRES: `profiles` not empty (a MIG GPU type's).
int64_t MapSharesToMig(std::span<Job> jobs, std::span<const MigProfile> profiles);

}  // namespace clustersim

#endif  // CLUSTERSIM_WORKLOADS_MIG_FROM_SHARES_H_
