// `clustersim trace stats|convert|generate`, and the trace filter options shared with `run`.
#ifndef CLUSTERSIM_SIM_CLI_TRACE_COMMANDS_H_
#define CLUSTERSIM_SIM_CLI_TRACE_COMMANDS_H_

#include <boost/program_options.hpp>
#include <string>

#include "sim/cli/run.h"
#include "workloads/transforms.h"

namespace clustersim {

struct FilterArgs {
  std::string window, vc, user, status, map_gpu;
  std::string priority_map;
  int64_t first = -1;
  double load_factor = 1.0;
  bool submit_is_start = false;
  bool no_host_demands = false;
};

// Adds --window, --vc, --user, --status, --first, --load-factor, --map-gpu, --submit-is-start,
// --no-host-demands, --priority-map.
void AddFilterOptions(boost::program_options::options_description& desc, FilterArgs& args);
// The model-aware options (--model-aware, --assign-models, --models, --oom-startup, --oom-retries,
// --colocation-speed, --storage-gbps) of run and compare.
void AddModelOptions(boost::program_options::options_description& desc, ModelConfig& models);
// Turns the parsed options into a TraceFilter. Throws InputError for a malformed value.
TraceFilter MakeFilter(const FilterArgs& args);

// argv[0] is "trace". Returns the exit code; throws InputError for bad input.
int CommandTrace(int argc, char** argv);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_CLI_TRACE_COMMANDS_H_
