#include "policies/registry.h"

#include <algorithm>
#include <deque>

#include "sim/util/error.h"
#include "sim/util/suggest.h"

namespace clustersim {
namespace {

// Function-local statics: registrations run during static initialization of other files.
std::deque<PolicyEntry>& PolicyTable() {
  static std::deque<PolicyEntry> table;
  return table;
}
std::deque<PlacementEntry>& PlacementTable() {
  static std::deque<PlacementEntry> table;
  return table;
}

std::deque<AutoscalerEntry>& AutoscalerTable() {
  static std::deque<AutoscalerEntry> table;
  return table;
}

template <typename Entry>
std::vector<const Entry*> Sorted(const std::deque<Entry>& table) {
  std::vector<const Entry*> out;
  for (const auto& e : table) out.push_back(&e);
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->name < b->name; });
  return out;
}

template <typename Entry>
const Entry& Find(const std::deque<Entry>& table, const std::string& name, const char* what) {
  for (const auto& e : table) {
    if (e.name == name) return e;
  }
  std::vector<std::string> names;
  for (const Entry* e : Sorted(table)) names.push_back(e->name);
  throw InputError(std::string("unknown ") + what + " \"" + name + "\"" + DidYouMean(name, names) +
                   "; valid: " + JoinNames(names));
}

}  // namespace

bool RegisterPolicy(PolicyEntry entry) {
  PolicyTable().push_back(std::move(entry));
  return true;
}
bool RegisterPlacement(PlacementEntry entry) {
  PlacementTable().push_back(std::move(entry));
  return true;
}
bool RegisterAutoscaler(AutoscalerEntry entry) {
  AutoscalerTable().push_back(std::move(entry));
  return true;
}
std::vector<const AutoscalerEntry*> Autoscalers() { return Sorted(AutoscalerTable()); }
const AutoscalerEntry& FindAutoscaler(const std::string& name) {
  return Find(AutoscalerTable(), name, "autoscaler");
}
std::vector<const PolicyEntry*> Policies() { return Sorted(PolicyTable()); }
std::vector<const PlacementEntry*> Placements() { return Sorted(PlacementTable()); }
const PolicyEntry& FindPolicy(const std::string& name) {
  return Find(PolicyTable(), name, "policy");
}
const PlacementEntry& FindPlacement(const std::string& name) {
  return Find(PlacementTable(), name, "placement");
}

}  // namespace clustersim
