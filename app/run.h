// One simulation run from inputs to a committed database: load the catalog, cluster and trace,
// build the topology, runtime model, placement and policy, run the engine, write every table.
// Used by `clustersim run` and by tests and benchmarks that need the whole path.
#ifndef CLUSTERSIM_APP_RUN_H_
#define CLUSTERSIM_APP_RUN_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/engine/model_runtime.h"
#include "sim/engine/summary.h"
#include "sim/engine/validation.h"
#include "sim/util/params.h"
#include "workloads/transforms.h"

namespace clustersim {

// Model-aware simulation (docs/models.md, sim/engine/model_runtime.h); off by default.
struct ModelConfig {
  bool enabled = false;      // memory model, OOM, batch-aware rates, GPU sharing of models
  bool assign = false;       // give jobs without a model one (workloads/model_assignment.h)
  std::string catalog_path;  // empty = the built-in model catalog
  // How assigned jobs' user batches are drawn (workloads/model_assignment.h): recipe (default),
  // reference or uniform.
  std::string user_batches = "recipe";
  // "user" or "optimal": ModelRuntimeOptions::batch_choice (applied by ExecuteRun).
  std::string batch_choice = "user";
  ModelRuntimeOptions options;
  // The settings as JSON for the runs table ("{}" when off).
  std::string ToJson(int64_t seed) const;
};

struct RunConfig {
  std::string trace_path;
  // How warnings name the trace, when not by trace_path (the Python module's DataFrame traces
  // are written to a temporary file the user never saw); empty = trace_path.
  std::string trace_label;
  std::string trace_format;      // empty = auto-detect
  std::string cluster = "default";  // preset name or JSON path
  std::string cluster_json;      // if non-empty, the spec's JSON text itself (`cluster` names it)
  std::string hardware_path;     // empty = built-in catalog
  std::string policy = "fcfs";
  // A policy object to run instead of the registered `policy` (the caller owns it and keeps it
  // alive for the run; the Python module's policies come this way). `policy` then only names it
  // in the runs table and in messages, and `params` go to the placement alone. nullptr = make
  // `policy` from the registry.
  Policy* policy_object = nullptr;
  std::string placement = "first-fit";
  // How node pools grow and shrink (docs/autoscaling.md): a registered autoscaler's name.
  std::string autoscaler = "none";
  std::string runtime_model;     // empty = hardware if the cluster is heterogeneous, else trace
  Params params;
  TraceFilter filter;            // explicit exclusions and transforms applied after reading
  int64_t seed = 0;
  std::string out;               // empty = do not write a database
  EngineOptions engine;          // engine.faults: checkpoint settings and MTTR are taken as given
  // Failures (docs/engine.md#failures), resolved against the catalog and cluster by ExecuteRun:
  // MTBF in the ParseMtbfHours form ("HOURS" or "TYPE=HOURS,..."), empty = none; a failure trace
  // CSV.
  std::string node_mtbf, gpu_mtbf, failure_trace;
  // A failure model (docs/reliability.md): "fleet" or a JSON file; empty = none.
  std::string failure_model;
  // How jobs checkpoint: fixed (engine.faults.checkpoint_interval_seconds), young or daly;
  // asynchronous saves with engine.faults.checkpoint.async (docs/reliability.md).
  std::string checkpoint_policy = "fixed";
  ModelConfig models;
  double bsld_threshold_seconds = kDefaultBsldThresholdSeconds;  // bounded slowdown, > 0
  // Appending a run that `out` (or `duplicates_of`) already holds — the same identity key as
  // `clustersim merge` uses — is an error naming that run unless allow_duplicate is set.
  bool allow_duplicate = false;
  std::string duplicates_of;  // another database to check (compare's output), empty = none
  // Constraints most traces lack (docs/deadlines.md, workloads/constraint_rules.h): the
  // --deadlines rule (e.g. "factor=1.5:4"), the --data-nodes rule (e.g. "replicas=3"); empty =
  // none. Jobs whose trace states them keep theirs. The locality alpha and the default node limit
  // are engine.constraints.
  std::string deadlines, data_nodes;
  // --mig-from-shares (docs/mig.md#from-gpu-shares): jobs asking for a share of one GPU ask for
  // the smallest MIG profile of the cluster's MIG GPU type that holds the share instead.
  bool mig_from_shares = false;
  // Compare the run with the trace's recorded schedule (`clustersim validate`,
  // sim/engine/validation.h): records the allocation log, fills RunOutcome::validation and writes
  // the allocations, validation and validation_series rows. Refuses a trace without a record and
  // a load factor other than 1 (it moves submissions away from the record).
  bool validate = false;
  // With validate: compare only the jobs submitted at or after this time (seconds of the trace),
  // and the series from the bucket holding it on (`validate --calibrate` reports the held-out
  // part of a log this way: the whole log is simulated, so those jobs meet the queue the earlier
  // ones left). -inf = every job.
  double validate_from = -std::numeric_limits<double>::infinity();
};

struct RunOutcome {
  int64_t run_id = -1;
  RunStatus status = RunStatus::kComplete;
  uint64_t fingerprint = 0;
  uint64_t events = 0;
  double wall_seconds = 0;
  size_t jobs = 0;
  int64_t jobs_started = 0;  // jobs that started at least once
  int gpus = 0;
  std::string runtime_model;
  std::string trace_format;
  FilterCounts filter_counts;
  SanityReport sanity;
  std::vector<SummaryRow> summary;
  // Settings with nothing to act on in this run, each naming the fix (also logged as warnings
  // before the simulation starts), and "no job started: <why>" after a run that started none.
  std::vector<std::string> warnings;
  // What reading the trace found (the filter's exclusions, the sanity report), as logged.
  std::vector<std::string> trace_warnings;
  // What the policy planned run times with (Policy::PlanningEstimates), "" when it plans nothing
  // ahead; also in runs.planning_estimates.
  std::string planning_estimates;
  ValidationReport validation;  // RunConfig::validate only
};

// Throws InputError for bad inputs or a duplicate run (nothing is written then; both are found
// before simulating) and InternalError for a bug. A trace with no job (after the filters) is an
// InputError; a run in which no job started ends with a warning saying why.
// Without an output database it may run on several threads at once (`clustersim plan` does),
// each with its own RunConfig: Params records which keys were read, so a config is not shared.
RunOutcome ExecuteRun(const RunConfig& config);

// What ExecuteRun checks before it reads the trace, alone: the options, the catalogs, the
// cluster, the policy and placement names, every --param (scopes, keys, values) and the policy's
// settings against the cluster (Policy::ClusterProblem). Commands that run several simulations
// (compare, validate --search, plan) call it for each before starting any. Throws InputError.
void CheckRunConfig(const RunConfig& config);

// Applies a run config JSON file: an object with any of the keys trace, format, cluster,
// hardware, policy, placement, runtime_model, params (an object of key: value), seed, interval,
// stop_time, preemption_cost, node_mtbf, gpu_mtbf, mttr, failure_trace, failure_model,
// checkpoint_interval, checkpoint_cost, restore_cost, checkpoint_policy, checkpoint_async,
// model_aware, assign_models, models, oom_startup, oom_retries,
// colocation_speed, storage_gbps, bsld_threshold, record_allocations, on_no_fit, no_departures,
// inflate, deadlines, data_nodes, mig_from_shares, locality_alpha, max_nodes_per_job, out. Keys named in `given`
// (option names set on the command line, which win) are skipped; a params key also given as
// --param keeps the
// command-line value. Throws InputError naming the file and key for an unknown key or a value of
// the wrong type.
void ApplyRunConfigFile(const std::string& path, const std::set<std::string>& given,
                        RunConfig* config);
// The keys ApplyRunConfigFile takes (the Python module's keyword arguments are these too).
const std::vector<std::string>& RunConfigKeys();

// The value of --on-no-fit, a run config's on_no_fit and a sweep's on_no_fit: "wait" (false) or
// "skip" (true; EngineOptions::skip_no_fit). Empty for anything else: the caller names the option.
std::optional<bool> SkipNoFitFromName(const std::string& value);

std::string DefaultTracePath();

std::string HexFingerprint(uint64_t fingerprint);

}  // namespace clustersim

#endif  // CLUSTERSIM_APP_RUN_H_
