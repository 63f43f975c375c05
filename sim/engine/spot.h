// Spot capacity (docs/autoscaling.md#spot-capacity): the engine's state for node groups with a
// "spot" object. Each ready spot node has at most one drawn interruption pending; at an
// interruption the node gets its notice (node event `interrupted`), and `notice_seconds` later it
// is gone: the jobs on it go back to the queue at their last checkpoint (the failure machinery,
// cause "spot") and it leaves placement. A pool node then goes back to off (the autoscaler may
// request it again); a fixed group's node, or a pool's under --autoscaler none, is replaced:
// requested again at once and ready kSpotReplacementSeconds later.
#ifndef CLUSTERSIM_SIM_ENGINE_SPOT_H_
#define CLUSTERSIM_SIM_ENGINE_SPOT_H_

#include <cstdint>
#include <vector>

#include "sim/engine/faults.h"

namespace clustersim {

// The replacement time of a fixed spot group's node: the node pools' default provisioning time
// (AutoscaleSpec::provision_seconds, 300 s, Cluster Autoscaler FAQ).
inline constexpr double kSpotReplacementSeconds = 300;

struct SpotState {
  bool on = false;
  // Interruption draws, seeded by the run's seed (docs/autoscaling.md#spot-capacity gives the
  // draw order).
  ExponentialSource rng{0};
  int cause = -1;                // the failure log's cause "spot"
  std::vector<double> pending;   // per node: the drawn interruption waiting (NaN = none)
  std::vector<uint8_t> noticed;  // per node: between its notice and its end
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_SPOT_H_
