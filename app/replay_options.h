// The option groups every command that replays a trace shares (run, compare, validate, plan and
// the Python module): the replay settings, the trace filters and the model-aware settings.
#ifndef CLUSTERSIM_APP_REPLAY_OPTIONS_H_
#define CLUSTERSIM_APP_REPLAY_OPTIONS_H_

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>

#include "app/run.h"
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

// Adds the replay settings: --format, --cluster, --hardware, --seed, --interval, --stop-time,
// --preemption-cost, --bsld-threshold, the failure and checkpoint options (--node-mtbf,
// --gpu-mtbf, --mttr, --failure-trace, --checkpoint-interval, --checkpoint-cost,
// --restore-cost) and --check. Each command adds its own --trace, policy, --out and the like.
void AddReplayOptions(boost::program_options::options_description& desc, RunConfig& config);
// Throws InputError for a replay setting out of range (a negative --preemption-cost, an
// --interval that is not positive).
void CheckReplayOptions(const RunConfig& config);

// Adds --window, --vc, --user, --status, --first, --load-factor, --map-gpu, --submit-is-start,
// --no-host-demands, --priority-map.
void AddFilterOptions(boost::program_options::options_description& desc, FilterArgs& args);
// The model-aware options (--model-aware, --assign-models, --models, --oom-startup, --oom-retries,
// --colocation-speed, --storage-gbps) of run and compare.
void AddModelOptions(boost::program_options::options_description& desc, ModelConfig& models);
// Turns the parsed options into a TraceFilter. Throws InputError for a malformed value.
TraceFilter MakeFilter(const FilterArgs& args);

}  // namespace clustersim

#endif  // CLUSTERSIM_APP_REPLAY_OPTIONS_H_
