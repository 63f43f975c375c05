// The failure trace format (docs/engine.md#failures): CSV with a header naming `time`, `node` and
// `duration` (seconds; node = index in the cluster spec, as `clustersim cluster show` numbers
// them) and optionally `gpu` (the GPU within the node; empty or -1 = the whole node), in any
// column order. Rows need not be sorted.
#ifndef CLUSTERSIM_WORKLOADS_FAILURE_TRACE_H_
#define CLUSTERSIM_WORKLOADS_FAILURE_TRACE_H_

#include <string>
#include <vector>

#include "sim/engine/faults.h"
#include "sim/hardware/cluster.h"

namespace clustersim {

// Throws InputError with file, line and column for a malformed row, a node or GPU that the
// cluster does not have, a negative time or a duration <= 0.
std::vector<FailureRecord> LoadFailureTrace(const std::string& path, const Cluster& cluster);

}  // namespace clustersim

#endif  // CLUSTERSIM_WORKLOADS_FAILURE_TRACE_H_
