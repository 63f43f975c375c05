// Scoped parameters: `--param NAME:key=value` (compare, validate, plan, run, a sweep spec's
// "params", the Python module's params) applies `key=value` only to runs whose policy or
// placement is NAME; a plain `key=value` applies to every run. NAME is checked against the
// policy and placement registries (policies/registry.h), so a new policy or placement is a valid
// scope without editing this file, and a misspelt one is an error with the nearest name instead
// of a setting silently applied to no run.
#ifndef CLUSTERSIM_APP_PARAM_SCOPES_H_
#define CLUSTERSIM_APP_PARAM_SCOPES_H_

#include <map>
#include <string>
#include <vector>

#include "sim/util/params.h"

namespace clustersim {

// Every name a scope may take: the registered policies, then the registered placements.
std::vector<std::string> ParamScopeNames();

// The problem with the scope of `key` (as written, "easy:walltime" or "walltime") given the
// policies and placements the command runs, or "" when there is none: NAME is no policy or
// placement (with "did you mean"), NAME is one but none of the runs uses it (the setting would
// apply to no run), or the key after the colon is empty.
std::string ParamScopeProblem(const std::string& key, const std::vector<std::string>& policies,
                              const std::vector<std::string>& placements);

// Throws InputError "<source> KEY=VALUE: <problem>" for the first key of `given` with a
// ParamScopeProblem. `source` names where the settings came from ("--param").
void CheckParamScopes(const std::map<std::string, std::string>& given,
                      const std::vector<std::string>& policies,
                      const std::vector<std::string>& placements, const std::string& source);

// Parameters for one run out of parameters given for several: a key "NAME:key" applies only to
// runs whose policy or placement is NAME (as `key`); a plain key applies to every run. A scoped
// key overrides a plain one of the same name.
Params ParamsForRun(const std::map<std::string, std::string>& given, const std::string& policy,
                    const std::string& placement);

// Parses repeated `--param [NAME:]key=value` options into a map (later ones win). Throws
// InputError naming the option for an assignment without '='.
std::map<std::string, std::string> ParseParamOptions(const std::vector<std::string>& options);

}  // namespace clustersim

#endif  // CLUSTERSIM_APP_PARAM_SCOPES_H_
