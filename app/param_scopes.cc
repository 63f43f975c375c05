#include "app/param_scopes.h"

#include <algorithm>

#include "policies/registry.h"
#include "sim/util/error.h"
#include "sim/util/suggest.h"

namespace clustersim {

std::vector<std::string> ParamScopeNames() {
  std::vector<std::string> names;
  for (const PolicyEntry* p : Policies()) names.push_back(p->name);
  for (const PlacementEntry* p : Placements()) names.push_back(p->name);
  return names;
}

std::string ParamScopeProblem(const std::string& key, const std::vector<std::string>& policies,
                              const std::vector<std::string>& placements) {
  const size_t colon = key.find(':');
  if (colon == std::string::npos) return "";
  const std::string scope = key.substr(0, colon);
  if (colon + 1 == key.size()) return "expected NAME:key=value, with a key after the colon";
  if (key.find(':', colon + 1) != std::string::npos) {
    return "expected NAME:key=value with one NAME (no parameter's key holds a colon)";
  }
  const std::vector<std::string> names = ParamScopeNames();
  if (std::find(names.begin(), names.end(), scope) == names.end()) {
    return "no policy or placement is named \"" + scope + "\"" + DidYouMean(scope, names) +
           " (NAME:key applies key to the runs of policy or placement NAME; clustersim list "
           "policies, clustersim list placements)";
  }
  const bool used = std::find(policies.begin(), policies.end(), scope) != policies.end() ||
                    std::find(placements.begin(), placements.end(), scope) != placements.end();
  if (used) return "";
  std::vector<std::string> run_names = policies;
  run_names.insert(run_names.end(), placements.begin(), placements.end());
  return "applies to no run: \"" + scope + "\" is none of the policies and placements run (" +
         JoinNames(run_names) + ")" + DidYouMean(scope, run_names);
}

void CheckParamScopes(const std::map<std::string, std::string>& given,
                      const std::vector<std::string>& policies,
                      const std::vector<std::string>& placements, const std::string& source) {
  for (const auto& [key, value] : given) {
    const std::string problem = ParamScopeProblem(key, policies, placements);
    if (!problem.empty()) throw InputError(source + " " + key + "=" + value + ": " + problem);
  }
}

Params ParamsForRun(const std::map<std::string, std::string>& given, const std::string& policy,
                    const std::string& placement) {
  std::map<std::string, std::string> values;
  for (const auto& [key, value] : given) {
    if (key.find(':') == std::string::npos) values[key] = value;
  }
  for (const auto& [key, value] : given) {
    const size_t colon = key.find(':');
    if (colon == std::string::npos) continue;
    const std::string scope = key.substr(0, colon);
    if (scope == policy || scope == placement) values[key.substr(colon + 1)] = value;
  }
  return Params(std::move(values));
}

std::map<std::string, std::string> ParseParamOptions(const std::vector<std::string>& options) {
  std::map<std::string, std::string> given;
  for (const std::string& option : options) {
    Params parsed;
    parsed.AddAssignment(option);
    for (const auto& [key, value] : parsed.values()) given[key] = value;
  }
  return given;
}

}  // namespace clustersim
