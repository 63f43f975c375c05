#include "sim/engine/fleet_failures.h"

#include <cmath>
#include <limits>

#include "sim/engine/resources.h"
#include "sim/util/random.h"

namespace clustersim {

FleetFailures::FleetFailures(const FailureCatalog& catalog, const Cluster& cluster, uint64_t seed)
    : catalog_(&catalog), cluster_(&cluster) {
  for (size_t c = 0; c < catalog.causes().size(); ++c) {
    const FailureCause& cause = catalog.causes()[c];
    const int units = cause.per == FailureUnit::kGpu    ? cluster.total_gpus()
                      : cause.per == FailureUnit::kNode ? cluster.node_count()
                                                        : 1;
    units_.push_back(units);
    rate_per_second_.push_back(cause.rate_per_unit_hour * units / 3600.0);
    // One stream per cause: the seed mixed with the cause's index (splitmix64's constant).
    streams_.emplace_back(seed ^ (0x9E3779B97F4A7C15ull * (c + 1)));
  }
}

double FleetFailures::NextGap(int c) {
  if (!(rate_per_second_[c] > 0)) return std::numeric_limits<double>::infinity();
  // 53 bits to a uniform in [0, 1), then the inverse of the exponential distribution.
  const double u = static_cast<double>(streams_[c]() >> 11) * 0x1.0p-53;
  return -std::log1p(-u) / rate_per_second_[c];
}

int FleetFailures::DrawUnit(int c) {
  return static_cast<int>(UniformBelow(streams_[c], static_cast<uint64_t>(units_[c])));
}

FailureStrike FleetFailures::Strike(int c, int unit) const {
  const FailureCause& cause = catalog_->causes()[c];
  FailureStrike s;
  s.takes_out = cause.TakesHardwareOut();
  if (cause.domain == FailureDomain::kCluster) {
    s.whole_cluster = true;
    return s;
  }
  const int node = cause.per == FailureUnit::kGpu ? cluster_->NodeOfGpu(unit) : unit;
  const Node& n = cluster_->node(node);
  switch (cause.domain) {
    case FailureDomain::kGpu:
      s = {unit, 1, node, 1, true, false};
      break;
    case FailureDomain::kJob:
      // The job on the struck GPU, or every job on the struck node.
      s = cause.per == FailureUnit::kGpu
              ? FailureStrike{unit, 1, node, 1, false, false}
              : FailureStrike{n.first_gpu, n.gpu_count, node, 1, false, false};
      break;
    case FailureDomain::kNode:
      s = {n.first_gpu, n.gpu_count, node, 1, true, false};
      break;
    case FailureDomain::kRack: {
      const int first = cluster_->RackFirstNode(n.rack);
      const int count = cluster_->RackNodeCount(n.rack);
      const Node& last = cluster_->node(first + count - 1);
      const int first_gpu = cluster_->node(first).first_gpu;
      s = {first_gpu, last.first_gpu + last.gpu_count - first_gpu, first, count, true, false};
      break;
    }
    case FailureDomain::kCluster:
      break;
  }
  return s;
}

JobFootprint FleetFailures::Footprint(const std::vector<int>& gpus) const {
  JobFootprint f;
  f.gpus = static_cast<int>(gpus.size());
  int last_rack = -1;
  ForEachNode(*cluster_, gpus, [&](int node, int) {
    ++f.nodes;
    const int rack = cluster_->node(node).rack;
    if (rack != last_rack) {  // nodes ascend, so a job's racks come in order
      f.rack_nodes += cluster_->RackNodeCount(rack);
      last_rack = rack;
    }
  });
  return f;
}

double FleetFailures::JobRatePerSecond(const std::vector<int>& gpus) const {
  return JobInterruptionsPerHour(*catalog_, Footprint(gpus), cluster_->total_gpus(),
                                 cluster_->node_count()) /
         3600.0;
}

}  // namespace clustersim
