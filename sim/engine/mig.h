// MIG instances in the engine (docs/mig.md): what a job naming a MIG profile holds, and the
// checks of a GPU's layout. The layouts themselves live in Resources (mig_used); the profiles'
// geometry in sim/hardware/mig.h.
#ifndef CLUSTERSIM_SIM_ENGINE_MIG_H_
#define CLUSTERSIM_SIM_ENGINE_MIG_H_

#include <string>

#include "sim/engine/placement.h"
#include "sim/engine/resources.h"
#include "sim/hardware/mig.h"

namespace clustersim {

// The compute share of an instance of `profile` in thousandths of its GPU, what the metrics
// count it as holding: floor(1000 x compute slices / 7), and 999 for the whole-GPU profile (7g)
// so that every instance is a share (1..999) to the rest of the engine.
int MigMilli(const MigProfile& profile);

// Takes the free memory slices of `gpu` in `state` (a planner's copy) if the GPU is in MIG mode
// and holds instances, so that no instance may start there; a GPU free whole is left alone.
void CloseMigGpu(Resources& state, int gpu);

// Why a job naming `profile_name` can never run on `cluster` ("" if some GPU in MIG mode of a
// type in `type_mask` offers it): an unknown name, or no MIG GPU offering it.
std::string MigRejection(const Cluster& cluster, const std::string& profile_name,
                         uint64_t type_mask);

// Why the MIG instances `allocations` (each on one GPU) cannot all be held at once on `cluster`
// ("" if they can): an instance on a GPU not in MIG mode, an unknown profile, a start the profile
// does not document, or two instances sharing a memory slice. --check runs it on the running
// jobs.
std::string CheckMigLayouts(const Cluster& cluster, const std::vector<const Allocation*>& allocations);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_MIG_H_
