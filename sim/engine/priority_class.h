// Priority classes (docs/policies.md#priority): a job's class is an integer level, higher = more
// urgent (Job::priority). Traces that carry a class name (openb `qos`, an SWF queue) are mapped to
// levels while they are read: first by the run's --priority-map, then by the built-in table below,
// else level 0 with a warning. Policies resolve class names in their parameters the same way.
//
// Built-in table (case-insensitive):
//   low 0, medium 1, high 2, urgent 3 — the generic ladder (urgent > high > medium > low);
//   openb QoS (Alibaba cluster-trace-gpu-v2023): BE 0 (best effort), Burstable 1, LS 2 (latency
//   sensitive), Guaranteed 3. LS above BE follows the trace's own description of latency-sensitive
//   and best-effort pods; Burstable and Guaranteed follow the Kubernetes QoS order (BestEffort pods
//   are evicted first, Guaranteed last; kubernetes.io "Pod Quality of Service Classes").
#ifndef CLUSTERSIM_SIM_ENGINE_PRIORITY_CLASS_H_
#define CLUSTERSIM_SIM_ENGINE_PRIORITY_CLASS_H_

#include <map>
#include <optional>
#include <set>
#include <string>

namespace clustersim {

// Class names (lower case) -> level, as given by --priority-map NAME=LEVEL,...
using PriorityMap = std::map<std::string, int>;

// Parses "NAME=LEVEL,..." (LEVEL an integer in [-1000000000, 1000000000]; NAME non-empty, no ','
// or '='). Throws InputError naming `option` on anything else or a repeated name.
PriorityMap ParsePriorityMap(const std::string& text, const std::string& option);

// The level of class `name`: from `overrides`, else the built-in table, else nullopt.
std::optional<int> PriorityLevelOf(const std::string& name, const PriorityMap& overrides = {});

// The built-in name of `level` ("low", "medium", "high", "urgent"), or "" for other levels.
const char* PriorityLevelName(int level);

// Parses a comma list of levels or class names (built-in table) into levels, for a policy
// parameter `key`. Throws InputError naming the key for an unknown name.
std::set<int> ParsePriorityLevels(const std::string& text, const std::string& key);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_PRIORITY_CLASS_H_
