// The registry of ordering policies and placement strategies. Each lives in one file of
// policies/ and registers itself with a macro at the end of that file; `policies` is an OBJECT
// library so the linker keeps those registrations (STYLE.md). Entries are listed by name.
#ifndef CLUSTERSIM_POLICIES_REGISTRY_H_
#define CLUSTERSIM_POLICIES_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/node_pools.h"
#include "sim/engine/placement.h"
#include "sim/engine/policy.h"
#include "sim/util/params.h"

namespace clustersim {

struct PolicyEntry {
  std::string name;
  std::string summary;     // one line
  std::string parameters;  // "key (default): meaning" lines, or empty
  std::function<std::unique_ptr<Policy>(const Params&)> make;
};

struct PlacementEntry {
  std::string name;
  std::string summary;
  std::function<std::unique_ptr<Placement>(const PlacementEnv&, const Params&)> make;
  // Reads PlacementEnv::topology; for the others a run may leave it nullptr (the graph of
  // 100,000 GPUs takes about 45 MB).
  bool uses_topology = false;
};

// Autoscalers (docs/autoscaling.md), chosen with --autoscaler. `make` returns nullptr for
// `none` (pools stay at their start size).
struct AutoscalerEntry {
  std::string name;
  std::string summary;
  std::function<std::unique_ptr<Autoscaler>(const Params&)> make;
};

bool RegisterPolicy(PolicyEntry entry);
bool RegisterAutoscaler(AutoscalerEntry entry);
std::vector<const AutoscalerEntry*> Autoscalers();
const AutoscalerEntry& FindAutoscaler(const std::string& name);
bool RegisterPlacement(PlacementEntry entry);
// Sorted by name.
std::vector<const PolicyEntry*> Policies();
std::vector<const PlacementEntry*> Placements();
// Throw InputError listing the valid names when `name` is unknown.
const PolicyEntry& FindPolicy(const std::string& name);
const PlacementEntry& FindPlacement(const std::string& name);

}  // namespace clustersim

#define CLUSTERSIM_REGISTER_POLICY(id, ...) \
  static const bool kPolicyRegistered_##id = ::clustersim::RegisterPolicy({__VA_ARGS__})
#define CLUSTERSIM_REGISTER_AUTOSCALER(id, ...) \
  static const bool kAutoscalerRegistered_##id = ::clustersim::RegisterAutoscaler({__VA_ARGS__})
#define CLUSTERSIM_REGISTER_PLACEMENT(id, ...) \
  static const bool kPlacementRegistered_##id = ::clustersim::RegisterPlacement({__VA_ARGS__})

#endif  // CLUSTERSIM_POLICIES_REGISTRY_H_
