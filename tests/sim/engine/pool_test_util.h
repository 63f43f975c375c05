// Helpers of the node-pool, spot and summary tests: the run's node events as "time node event"
// lines and one summary figure.
#ifndef CLUSTERSIM_TESTS_SIM_ENGINE_POOL_TEST_UTIL_H_
#define CLUSTERSIM_TESTS_SIM_ENGINE_POOL_TEST_UTIL_H_

#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/engine/summary.h"

namespace clustersim::testing {

// "time node event" lines of the run's node events, in order (whole seconds).
inline std::vector<std::string> Events(const Engine& engine) {
  std::vector<std::string> out;
  for (const NodeEvent& e : engine.node_pools().events()) {
    out.push_back(std::to_string(static_cast<int>(e.time)) + " " + std::to_string(e.node) + " " +
                  NodeEventName(e.kind));
  }
  return out;
}

// The summary's `metric` at `scope`, or -1 if the run has no such row.
inline double Summary(const Engine& engine, const std::string& metric, const std::string& scope) {
  for (const SummaryRow& row : ComputeSummary(engine)) {
    if (row.metric == metric && row.scope == scope) return row.value;
  }
  return -1;
}

}  // namespace clustersim::testing

#endif  // CLUSTERSIM_TESTS_SIM_ENGINE_POOL_TEST_UTIL_H_
