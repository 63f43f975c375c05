// Failures drawn from a failure model (sim/models/failure_catalog.h; docs/reliability.md) on one
// cluster: for each cause, one Poisson process over the whole cluster at rate
// rate_per_unit_hour x the cluster's units (GPUs, nodes, or 1 for a cluster-wide cause), the unit
// each event strikes drawn uniformly. Superposing the units' processes this way is exact for
// exponential times between failures, and it costs O(1) per event, whatever the cluster's size
// (the units' own clocks would cost one heap entry per unit). An event may strike a unit that is
// already down: it counts, and the unit stays down until its last repair.
//
// Each cause draws from its own generator, seeded from the run's seed and the cause's index, so
// the failures of one cause do not move when another cause is added or removed. What an event
// takes out or hits (Strike) depends only on the cause and the unit: per-failure work is
// proportional to the domain hit, not to the cluster.
#ifndef CLUSTERSIM_SIM_ENGINE_FLEET_FAILURES_H_
#define CLUSTERSIM_SIM_ENGINE_FLEET_FAILURES_H_

#include <cstdint>
#include <random>
#include <vector>

#include "sim/hardware/cluster.h"
#include "sim/models/failure_catalog.h"
#include "sim/models/reliability.h"

namespace clustersim {

// What one failure takes out (GPUs [first_gpu, first_gpu + gpu_count) of nodes
// [first_node, first_node + node_count), all consecutive) or, for domains that take nothing
// out, hits: the jobs on those GPUs (domain job: the job holding the struck unit's GPUs;
// domain cluster: every running job, gpu_count then 0).
struct FailureStrike {
  int first_gpu = 0;
  int gpu_count = 0;
  int first_node = 0;
  int node_count = 0;
  bool takes_out = false;
  bool whole_cluster = false;  // domain cluster: every running job is hit
};

class FleetFailures {
 public:
  // `catalog` must outlive this object.
  FleetFailures(const FailureCatalog& catalog, const Cluster& cluster, uint64_t seed);

  int cause_count() const { return static_cast<int>(catalog_->causes().size()); }
  const FailureCause& cause(int c) const { return catalog_->causes()[c]; }
  // Events per second of cause `c` on the whole cluster.
  double ClusterRatePerSecond(int c) const { return rate_per_second_[c]; }
  // Seconds to the next event of cause `c` (exponential; the cause's own stream).
  double NextGap(int c);
  // The unit an event of cause `c` strikes: a GPU or node index, uniform (0 for a cluster-wide
  // cause).
  int DrawUnit(int c);
  // What an event of cause `c` on `unit` takes out or hits.
  FailureStrike Strike(int c, int unit) const;
  // Events per second that hit a job holding `gpus` (ascending) on this cluster.
  double JobRatePerSecond(const std::vector<int>& gpus) const;
  // The footprint of a job holding `gpus` (ascending): its GPUs, nodes and the nodes of its racks.
  JobFootprint Footprint(const std::vector<int>& gpus) const;

 private:
  const FailureCatalog* catalog_;
  const Cluster* cluster_;
  std::vector<double> rate_per_second_;  // by cause
  std::vector<int> units_;               // by cause: GPUs, nodes or 1
  std::vector<std::mt19937_64> streams_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_FLEET_FAILURES_H_
