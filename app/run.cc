#include "app/run.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "app/param_scopes.h"
#include "policies/defrag.h"
#include "policies/registry.h"
#include "sim/engine/fragmentation.h"
#include "sim/engine/overcommit.h"
#include "sim/hardware/mig.h"
#include "sim/hardware/topology.h"
#include "sim/models/memory_model.h"
#include "sim/output/sqlite_writer.h"
#include "sim/util/duration.h"
#include "sim/util/error.h"
#include "sim/util/json_file.h"
#include "sim/util/output_path.h"
#include "sim/util/sha256.h"
#include "sim/util/suggest.h"
#include "workloads/constraint_rules.h"
#include "workloads/failure_trace.h"
#include "workloads/mig_from_shares.h"
#include "workloads/model_assignment.h"
#include "workloads/reader.h"

#ifndef CLUSTERSIM_VERSION
#define CLUSTERSIM_VERSION "0.0.0"
#endif

namespace clustersim {

std::string DefaultTracePath() { return BundledTracesDir() + "/philly_default.csv"; }

std::optional<bool> SkipNoFitFromName(const std::string& value) {
  if (value == "wait") return false;
  if (value == "skip") return true;
  return std::nullopt;
}

std::string HexFingerprint(uint64_t fingerprint) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(fingerprint));
  return buffer;
}

const std::vector<std::string>& RunConfigKeys() {
  static const std::vector<std::string> keys = {"trace",
                                                "format",
                                                "cluster",
                                                "hardware",
                                                "policy",
                                                "placement",
                                                "autoscaler",
                                                "runtime_model",
                                                "params",
                                                "seed",
                                                "interval",
                                                "stop_time",
                                                "preemption_cost",
                                                "node_mtbf",
                                                "gpu_mtbf",
                                                "mttr",
                                                "failure_trace",
                                                "checkpoint_interval",
                                                "checkpoint_cost",
                                                "restore_cost",
                                                "model_aware",
                                                "assign_models",
                                                "models",
                                                "oom_startup",
                                                "oom_retries",
                                                "colocation_speed",
                                                "storage_gbps",
                                                "user_batches",
                                                "batch_choice",
                                                "bsld_threshold",
                                                "record_allocations",
                                                "on_no_fit",
                                                "no_departures",
                                                "defrag",
                                                "inflate",
                                                "mig_from_shares",
                                                "out"};
  return keys;
}

void ApplyRunConfigFile(const std::string& path, const std::set<std::string>& given,
                        RunConfig* config) try {
  const nlohmann::json doc = ParseJsonFile(path);
  if (!doc.is_object()) throw InputError(path, 0, 0, "expected a JSON object of run options");
  auto text = [&](const nlohmann::json& v, const std::string& key) {
    return RequireString(v, path, key);
  };
  for (const auto& [key, value] : doc.items()) {
    // Command-line options use dashes; the file may use either spelling.
    std::string option = key;
    std::replace(option.begin(), option.end(), '_', '-');
    if (key == "params") {
      if (!value.is_object()) throw JsonValueError(path, "params", "expected an object");
      for (const auto& [name, v] : value.items()) {
        if (name.empty()) throw JsonValueError(path, "params", "expected non-empty names");
        if (config->params.values().count(name)) continue;  // --param wins
        const std::string s = v.is_string() ? v.get<std::string>() : v.dump();
        config->params.AddAssignment(name + "=" + s);
      }
      continue;
    }
    if (given.count(option)) continue;
    if (option == "trace") {
      config->trace_path = text(value, key);
    } else if (option == "format") {
      config->trace_format = text(value, key);
    } else if (option == "cluster") {
      config->cluster = text(value, key);
    } else if (option == "hardware") {
      config->hardware_path = text(value, key);
    } else if (option == "policy") {
      config->policy = text(value, key);
    } else if (option == "placement") {
      config->placement = text(value, key);
    } else if (option == "autoscaler") {
      config->autoscaler = text(value, key);
    } else if (option == "runtime-model") {
      config->runtime_model = text(value, key);
    } else if (option == "out") {
      config->out = text(value, key);
    } else if (option == "seed") {
      if (!value.is_number_integer()) throw JsonValueError(path, key, "expected an integer");
      config->seed = value.get<int64_t>();
    } else if (option == "interval") {
      config->engine.timeseries_interval_seconds = RequireDuration(value, path, key);
      if (config->engine.timeseries_interval_seconds <= 0) {
        throw JsonValueError(path, key, "expected a positive number of seconds");
      }
    } else if (option == "stop-time") {
      config->engine.stop_time = RequireDuration(value, path, key);
      if (config->engine.stop_time < 0) {
        throw JsonValueError(path, key, "expected a number of seconds >= 0");
      }
    } else if (option == "preemption-cost") {
      config->engine.preemption_cost_seconds = RequireDuration(value, path, key);
      if (config->engine.preemption_cost_seconds < 0) {
        throw JsonValueError(path, key, "expected a number of seconds >= 0");
      }
    } else if (option == "node-mtbf" || option == "gpu-mtbf") {
      // A number of hours for every type, or a duration or the TYPE=HOURS list as a string.
      const std::string v = value.is_number() ? value.dump() : text(value, key);
      (option == "node-mtbf" ? config->node_mtbf : config->gpu_mtbf) = v;
    } else if (option == "mttr") {
      config->engine.faults.mttr_seconds = RequireDuration(value, path, key, kSecondsPerHour);
    } else if (option == "failure-trace") {
      config->failure_trace = text(value, key);
    } else if (option == "failure-model") {
      config->failure_model = text(value, key);
    } else if (option == "checkpoint-policy") {
      config->checkpoint_policy = text(value, key);
    } else if (option == "checkpoint-async") {
      if (!value.is_boolean()) throw JsonValueError(path, key, "expected true or false");
      config->engine.faults.checkpoint.async = value.get<bool>();
    } else if (option == "checkpoint-interval") {
      config->engine.faults.checkpoint_interval_seconds = RequireDuration(value, path, key);
    } else if (option == "checkpoint-cost") {
      config->engine.faults.checkpoint_cost_seconds = RequireDuration(value, path, key);
    } else if (option == "restore-cost") {
      config->engine.faults.restore_cost_seconds = RequireDuration(value, path, key);
    } else if (option == "model-aware" || option == "assign-models") {
      if (!value.is_boolean()) throw JsonValueError(path, key, "expected true or false");
      (option == "model-aware" ? config->models.enabled : config->models.assign) =
          value.get<bool>();
    } else if (option == "models") {
      config->models.catalog_path = text(value, key);
    } else if (option == "record-allocations") {
      if (!value.is_boolean()) throw JsonValueError(path, key, "expected true or false");
      config->engine.record_allocations = value.get<bool>();
    } else if (option == "oom-startup") {
      config->models.options.oom_startup_seconds = RequireDuration(value, path, key);
    } else if (option == "oom-retries") {
      if (!value.is_number_integer()) throw JsonValueError(path, key, "expected an integer");
      const int64_t retries = value.get<int64_t>();
      if (retries < 0 || retries > 64) {
        throw JsonValueError(path, key, "expected an integer in 0..64");
      }
      config->models.options.oom_retries = static_cast<int>(retries);
    } else if (option == "colocation-speed") {
      config->models.options.colocation_speed = RequireNumber(value, path, key);
    } else if (option == "storage-gbps") {
      config->models.options.storage_gbps = RequireNumber(value, path, key);
    } else if (option == "on-no-fit") {
      const std::optional<bool> skip = SkipNoFitFromName(text(value, key));
      if (!skip) {
        throw JsonValueError(
            path, key, "expected wait or skip" + DidYouMean(text(value, key), {"wait", "skip"}));
      }
      config->engine.skip_no_fit = *skip;
    } else if (option == "no-departures") {
      if (!value.is_boolean()) throw JsonValueError(path, key, "expected true or false");
      config->engine.no_departures = value.get<bool>();
    } else if (option == "defrag") {
      if (!value.is_boolean()) throw JsonValueError(path, key, "expected true or false");
      config->engine.defrag = value.get<bool>();
    } else if (option == "inflate") {
      config->filter.inflate = RequireNumber(value, path, key);
      if (!(config->filter.inflate > 0) || !std::isfinite(config->filter.inflate)) {
        throw JsonValueError(path, key, "expected a factor > 0");
      }
    } else if (option == "user-batches") {
      config->models.user_batches = text(value, key);
    } else if (option == "batch-choice") {
      config->models.batch_choice = text(value, key);
    } else if (option == "bsld-threshold") {
      config->bsld_threshold_seconds = RequireNumber(value, path, key);
    } else if (option == "deadlines") {
      config->deadlines = text(value, key);
    } else if (option == "mig-from-shares") {
      if (!value.is_boolean()) throw JsonValueError(path, key, "expected true or false");
      config->mig_from_shares = value.get<bool>();
    } else if (option == "data-nodes") {
      config->data_nodes = text(value, key);
    } else if (option == "locality-alpha") {
      config->engine.constraints.locality_alpha = RequireNumber(value, path, key);
    } else if (option == "max-nodes-per-job") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
          value.get<int64_t>() > 1'000'000) {
        throw JsonValueError(path, key, "expected an integer >= 0 (0 = no limit)");
      }
      config->engine.constraints.max_nodes_per_job = static_cast<int>(value.get<int64_t>());
    } else {
      throw JsonValueError::Verbatim(
          path, key,
          "unknown key \"" + key + "\"" + DidYouMean(key, RunConfigKeys()) +
              "; expected trace, format, cluster, hardware, policy, placement, "
              "runtime_model, params, seed, interval, stop_time, preemption_cost, "
              "node_mtbf, gpu_mtbf, mttr, failure_trace, failure_model, checkpoint_interval, "
              "checkpoint_cost, restore_cost, checkpoint_policy, checkpoint_async, "
              "model_aware, assign_models, models, "
              "oom_startup, oom_retries, colocation_speed, storage_gbps, user_batches, "
              "batch_choice, bsld_threshold, record_allocations, on_no_fit, no_departures, "
              "defrag, inflate, deadlines, data_nodes, mig_from_shares, locality_alpha, "
              "max_nodes_per_job, out");
    }
  }
} catch (const JsonValueError& e) {
  throw AtJsonPosition(e, path, ReadFileText(path));
}

std::string ModelConfig::ToJson(int64_t seed) const {
  if (!enabled && !assign) return "{}";
  nlohmann::json j;
  j["assign"] = assign;
  if (assign) j["assign_seed"] = seed;
  j["catalog"] = catalog_path.empty() ? "built-in" : catalog_path;
  j["oom_startup_seconds"] = options.oom_startup_seconds;
  j["oom_retries"] = options.oom_retries;
  j["colocation_speed"] = options.colocation_speed;
  if (options.storage_gbps > 0) j["storage_gbps"] = options.storage_gbps;
  if (assign && user_batches != "recipe") j["user_batches"] = user_batches;
  if (batch_choice != "user") j["batch_choice"] = batch_choice;
  return j.dump();
}

namespace {

void CheckModelOptions(const ModelConfig& models) {
  const ModelRuntimeOptions& o = models.options;
  if (!(o.oom_startup_seconds >= 0) || !std::isfinite(o.oom_startup_seconds)) {
    throw InputError("--oom-startup: expected a number of seconds >= 0");
  }
  if (o.oom_retries < 0 || o.oom_retries > 64) {
    throw InputError("--oom-retries: expected an integer in 0..64");
  }
  if (!(o.colocation_speed > 0 && o.colocation_speed <= 1)) {
    throw InputError("--colocation-speed: expected a number in (0, 1]");
  }
  if (!(o.storage_gbps >= 0) || !std::isfinite(o.storage_gbps)) {
    throw InputError("--storage-gbps: expected a number of GB/s >= 0");
  }
  if (!ParseUserBatchRule(models.user_batches)) {
    throw InputError("--user-batches: expected recipe, reference or uniform, got \"" +
                     models.user_batches + "\"" +
                     DidYouMean(models.user_batches, {"recipe", "reference", "uniform"}));
  }
  if (models.batch_choice != "user" && models.batch_choice != "optimal") {
    throw InputError("--batch-choice: expected user or optimal, got \"" + models.batch_choice +
                     "\"" + DidYouMean(models.batch_choice, {"user", "optimal"}));
  }
  if (!models.assign && models.user_batches != "recipe") {
    spdlog::warn("--user-batches {} has nothing to act on without --assign-models",
                 models.user_batches);
  }
  if (!models.enabled && !models.assign && models.batch_choice != "user") {
    spdlog::warn("--batch-choice {} has nothing to act on without --model-aware",
                 models.batch_choice);
  }
}

// Checks the fault settings and fills in what needs the catalog and cluster.
void ResolveFaults(const RunConfig& config, const Cluster& cluster, FaultOptions* faults) {
  auto seconds = [](double v, const char* option, bool positive) {
    if (!(positive ? v > 0 : v >= 0) || std::isnan(v)) {
      throw InputError(std::string(option) + ": expected a number of seconds " +
                       (positive ? "> 0" : ">= 0"));
    }
  };
  seconds(faults->checkpoint_interval_seconds, "--checkpoint-interval", true);
  seconds(faults->checkpoint_cost_seconds, "--checkpoint-cost", false);
  seconds(faults->restore_cost_seconds, "--restore-cost", false);
  if (!(faults->mttr_seconds > 0) || !std::isfinite(faults->mttr_seconds)) {
    throw InputError("--mttr: expected a duration > 0 (a plain number is hours)");
  }
  if (!config.node_mtbf.empty()) {
    faults->node_mtbf_seconds = ParseMtbfHours(config.node_mtbf, cluster.catalog(), "--node-mtbf");
  }
  if (!config.gpu_mtbf.empty()) {
    faults->gpu_mtbf_seconds = ParseMtbfHours(config.gpu_mtbf, cluster.catalog(), "--gpu-mtbf");
  }
  if (!config.failure_trace.empty()) {
    faults->trace = LoadFailureTrace(config.failure_trace, cluster);
    faults->trace_path = config.failure_trace;
  }
  if (!ParseCheckpointRule(config.checkpoint_policy, &faults->checkpoint.rule)) {
    throw InputError("--checkpoint-policy: expected fixed, young or daly, got \"" +
                     config.checkpoint_policy + "\"");
  }
  const CheckpointSettings& c = faults->checkpoint;
  if (!(c.async_blocking >= 0 && c.async_blocking <= 1)) {
    throw InputError("--async-blocking: expected a share of the save time in [0, 1]");
  }
  if (!(c.async_slowdown >= 0 && c.async_slowdown < 1)) {
    throw InputError("--async-slowdown: expected a share of the speed in [0, 1)");
  }
  // One stream per run seed, apart from any other use of the seed.
  faults->seed = static_cast<uint64_t>(config.seed) ^ 0xFA0175EEDull;
}

// Reliability settings with nothing to act on (docs/reliability.md), each naming the fix.
std::vector<std::string> ReliabilityWarnings(const RunConfig& config, const Cluster& cluster,
                                             const FaultOptions& faults) {
  std::vector<std::string> warnings;
  if (faults.checkpoint.rule != CheckpointRule::kFixed && !faults.failures()) {
    warnings.push_back("--checkpoint-policy " + config.checkpoint_policy +
                       ": no failures (--failure-model, --node-mtbf, --gpu-mtbf), so no job has "
                       "a failure rate to set its interval by, and none checkpoints");
  } else if (faults.checkpoint.rule != CheckpointRule::kFixed && faults.node_mtbf_seconds.empty() &&
             faults.gpu_mtbf_seconds.empty() && faults.failure_model == nullptr) {
    warnings.push_back("--checkpoint-policy " + config.checkpoint_policy +
                       ": a failure trace gives no failure rate; jobs checkpoint at "
                       "--checkpoint-interval (none without it)");
  }
  if (faults.checkpoint.async && !faults.checkpoints()) {
    warnings.push_back(
        "--checkpoint-async: no job checkpoints (set --checkpoint-interval or "
        "--checkpoint-policy young|daly)");
  }
  if (cluster.spare_nodes() > 0 && !faults.failures()) {
    warnings.push_back("cluster " + cluster.spec().origin + " holds " +
                       std::to_string(cluster.spare_nodes()) +
                       " hot spare nodes, but no failures are on (--failure-model, "
                       "--node-mtbf, --gpu-mtbf, --failure-trace): they stay idle");
  }
  if (cluster.spec().storage.declared() && !config.models.enabled && !config.models.assign) {
    warnings.push_back("cluster " + cluster.spec().origin +
                       " declares checkpoint storage, which sets checkpoint times from the "
                       "models' state: add --model-aware");
  }
  return warnings;
}

// A demand nothing acts on is worth a warning: the trace states CPUs or memory the cluster does not
// declare (docs/resources.md). Returns the warnings.
std::vector<std::string> UnusedHostDemands(const Trace& trace, const Cluster& cluster,
                                           bool host_limits) {
  std::vector<std::string> warnings;
  int64_t cpu_jobs = 0;
  int64_t memory_jobs = 0;
  for (const Job& job : trace.jobs) {
    cpu_jobs += job.cpu_milli > 0;
    memory_jobs += job.memory_mib > 0;
  }
  bool cpus = false;
  bool memory = false;
  for (const Node& node : cluster.nodes()) {
    cpus = cpus || NodeCpuMilli(node) > 0;
    memory = memory || NodeMemoryMib(node) > 0;
  }
  if (cpu_jobs > 0 && !cpus) {
    warnings.push_back(std::to_string(cpu_jobs) + " jobs state CPU demands, but cluster " +
                       cluster.spec().origin + " declares no node's cpus: not enforced");
  }
  if (memory_jobs > 0 && !memory) {
    warnings.push_back(std::to_string(memory_jobs) +
                       " jobs state host-memory demands, but cluster " + cluster.spec().origin +
                       " declares no node's host_memory_gib: not enforced");
  }
  if (host_limits) {
    spdlog::info("host limits on: {} jobs state CPUs, {} host memory (docs/resources.md)", cpu_jobs,
                 memory_jobs);
  }
  return warnings;
}

// The catalogs a run reads: the built-in ones or those of --hardware and --models.
struct Catalogs {
  HardwareCatalog custom_hardware;
  ModelCatalog custom_models;
  const HardwareCatalog* hardware = &HardwareCatalog::Default();
  const ModelCatalog* models = &ModelCatalog::Default();
};

// What a run is scheduled with, made from the options before the trace is read so that every
// name, parameter and setting is checked first: the runtime model (and the topology graph where
// something reads it), the placement, the policy, and the engine's options with the faults
// resolved. The placement reads `workload` and `placement_models`, filled once the trace is read.
struct Scheduler {
  std::string runtime_name;
  std::optional<Topology> topology;
  std::unique_ptr<RuntimeModel> runtime;
  std::vector<TaskClass> workload;
  const ModelRuntime* placement_models = nullptr;
  std::unique_ptr<Placement> placement;
  std::unique_ptr<Policy> owned_policy;
  std::unique_ptr<Policy> defragmenter;  // --defrag: wraps the policy (policies/defrag.h)
  Policy* policy = nullptr;
  std::string fgd_classes;
  std::optional<FailureCatalog> failure_model;  // engine_options.faults points at it
  std::unique_ptr<Autoscaler> autoscaler;       // engine_options.autoscaler points at it
  EngineOptions engine_options;
  // The run's parameters: config.params with every NAME:key scoped to this run's policy or
  // placement resolved to `key` (app/param_scopes.h); what the runs table records.
  Params params;
};

// The trace as the run replays it, with what reading it found.
struct LoadedTrace {
  std::string path;
  Trace trace;
  FilterCounts counts;
  SanityReport sanity;
  std::unique_ptr<ModelRuntime> models;  // model-aware runs only
  std::vector<std::string> warnings;     // the filter's exclusions and the sanity report
};

std::string FormatNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

// Memory a run takes per job, end to end: about 400 bytes (a 1,000,000-job fcfs run peaks at
// 383-389 MB, bench/README.md), the Job, its engine state and its rows waiting for the writer.
constexpr double kRunBytesPerJob = 400;

// Refuses an --inflate factor whose jobs would not fit in the memory available, with the
// estimate, before InflateTrace makes them: the inflated trace holds factor x the cluster's GPUs
// of demand, so about factor x GPUs x (jobs / demand) jobs.
void CheckInflatedSize(const Trace& trace, double factor, const Cluster& cluster) {
  double demand_milli = 0;
  for (const Job& job : trace.jobs) demand_milli += static_cast<double>(job.DemandMilli());
  if (!(demand_milli > 0)) return;  // InflateTrace says no job requests GPUs
  const double jobs = factor * cluster.total_gpus() * 1000.0 *
                      static_cast<double>(trace.jobs.size()) / demand_milli;
  const double bytes = jobs * kRunBytesPerJob;
  const long long available = AvailableMemoryBytes();
  if (available > 0 && bytes > static_cast<double>(available)) {
    char count[32];
    std::snprintf(count, sizeof count, "%.3g", jobs);
    throw InputError("--inflate " + FormatNumber(factor) + ": the trace would grow to about " +
                     count + " jobs (the cluster's " + std::to_string(cluster.total_gpus()) +
                     " GPUs x " + FormatNumber(factor) + " of demand), about " +
                     FormatBytes(bytes) + " of memory, more than the " +
                     FormatBytes(static_cast<double>(available)) + " available");
  }
}

// Bytes of the `jobs` table per job (300,000 jobs take 45 MB of a 66 MB database whose other
// 134,560 rows are timeseries): a floor for a run's database.
constexpr double kJobRowBytes = 150;

// Refuses a run whose jobs rows alone would not fit on the output's file system.
void CheckOutputSpace(const std::string& out, size_t jobs) {
  if (out.empty()) return;
  const double bytes = static_cast<double>(jobs) * kJobRowBytes;
  const long long free_bytes = FreeDiskBytes(out);
  if (free_bytes >= 0 && bytes > static_cast<double>(free_bytes)) {
    throw InputError(out, 0, 0,
                     "the run's " + std::to_string(jobs) + " jobs rows alone would take about " +
                         FormatBytes(bytes) + ", more than the " +
                         FormatBytes(static_cast<double>(free_bytes)) +
                         " free on its file system; nothing was written");
  }
}

std::string FilterExclusions(const FilterCounts& counts) {
  return std::to_string(counts.outside_window) + " outside the window, " +
         std::to_string(counts.other_vc) + " other vc, " + std::to_string(counts.other_user) +
         " other user, " + std::to_string(counts.other_status) + " other status, " +
         std::to_string(counts.beyond_first_n) + " beyond --first";
}

// Step 1: the catalogs, and the checks of settings that need neither cluster nor trace.
void ResolveOptions(const RunConfig& config, Catalogs* catalogs) {
  if (!config.hardware_path.empty()) {
    catalogs->custom_hardware = HardwareCatalog::FromFile(config.hardware_path);
    catalogs->hardware = &catalogs->custom_hardware;
  }
  CheckModelOptions(config.models);
  if (!(config.bsld_threshold_seconds > 0) || !std::isfinite(config.bsld_threshold_seconds)) {
    throw InputError("--bsld-threshold: expected a number of seconds > 0");
  }
  if (!config.models.catalog_path.empty()) {
    catalogs->custom_models = ModelCatalog::FromFile(config.models.catalog_path);
    catalogs->models = &catalogs->custom_models;
  }
  const ConstraintOptions& c = config.engine.constraints;
  if (!(c.locality_alpha >= 0 && c.locality_alpha <= 1)) {
    throw InputError("--locality-alpha: expected a fraction in [0, 1]");
  }
  if (c.max_nodes_per_job < 0) {
    throw InputError("--max-nodes-per-job: expected a node count >= 1 (0 = no limit)");
  }
  if (!config.deadlines.empty()) ParseDeadlineRule(config.deadlines);
  if (!config.data_nodes.empty()) ParseDataNodeRule(config.data_nodes);
  if (config.validate && config.filter.load_factor != 1.0) {
    throw InputError(
        "--load-factor: validation compares with the recorded schedule, which a load factor "
        "other than 1 moves the submissions away from");
  }
}

Cluster LoadCluster(const RunConfig& config, const HardwareCatalog& catalog) {
  return Cluster(config.cluster_json.empty()
                     ? ClusterSpec::Load(config.cluster, catalog)
                     : ClusterSpec::FromJsonText(config.cluster_json, config.cluster, catalog),
                 catalog);
}

// Step 2: runtime model, placement and policy. Throws InputError for an unknown name or a
// --param nothing reads.
void MakeScheduler(const RunConfig& config, const Cluster& cluster, Scheduler* s) {
  const PolicyEntry* policy_entry =
      config.policy_object != nullptr ? nullptr : &FindPolicy(config.policy);
  const PlacementEntry& placement_entry = FindPlacement(config.placement);
  const AutoscalerEntry& autoscaler_entry = FindAutoscaler(config.autoscaler);
  CheckParamScopes(config.params.values(), {config.policy}, {config.placement}, "--param");
  s->params = ParamsForRun(config.params.values(), config.policy, config.placement);
  const Params& params = s->params;
  s->runtime_name = config.runtime_model;
  if (s->runtime_name.empty()) s->runtime_name = cluster.IsHeterogeneous() ? "hardware" : "trace";
  s->engine_options = config.engine;
  s->engine_options.seed = static_cast<uint64_t>(config.seed);
  ResolveFaults(config, cluster, &s->engine_options.faults);
  if (!config.failure_model.empty()) {
    s->failure_model = FailureCatalog::Load(config.failure_model, "--failure-model");
    s->engine_options.faults.failure_model = &*s->failure_model;
  }
  if (config.validate) s->engine_options.record_allocations = true;  // the simulated series
  s->autoscaler = autoscaler_entry.make(params);
  s->engine_options.autoscaler = s->autoscaler.get();
  if (s->autoscaler && !cluster.has_pools()) {
    throw InputError("--autoscaler " + config.autoscaler + ": cluster " + cluster.spec().origin +
                     " has no node pool to scale (give a node group \"autoscale\"; "
                     "docs/autoscaling.md)");
  }
  // The topology graph only for what reads it, the hardware runtime model and the topology
  // placement: on 100,000 GPUs it takes about 45 MB of the 400 a million jobs may use.
  if (s->runtime_name != "trace" || placement_entry.uses_topology) s->topology.emplace(cluster);
  const Topology* const topology = s->topology ? &*s->topology : nullptr;
  s->runtime = MakeRuntimeModel(s->runtime_name, cluster, topology);
  s->placement = placement_entry.make(PlacementEnv{&cluster, topology, s->runtime.get(),
                                                   &s->workload, &s->placement_models, config.seed},
                                      params);
  if (policy_entry != nullptr) s->owned_policy = policy_entry->make(params);
  s->policy = policy_entry != nullptr ? s->owned_policy.get() : config.policy_object;
  // The classes of FGD's measure (metric and frag-aware): folded (WorkloadClasses, default) or
  // the paper's (PaperTaskClasses); docs/metrics.md#fgd.
  s->fgd_classes = params.String("fgd_classes", "folded");
  if (s->fgd_classes != "folded" && s->fgd_classes != "paper") {
    throw InputError("--param fgd_classes=" + s->fgd_classes + ": expected folded or paper");
  }
  // GPU memory over-commit (docs/overcommit.md): 1 <= F <= 4.
  const double overcommit = params.Double("overcommit", kMinOvercommit);
  if (!(overcommit >= kMinOvercommit && overcommit <= kMaxOvercommit)) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "--param overcommit=%g: expected a factor from 1 (no over-commit) to 4",
                  overcommit);
    throw InputError(text);
  }
  if (overcommit > kMinOvercommit && (config.models.enabled || config.models.assign)) {
    throw InputError(
        "--param overcommit: model-aware runs size each job's GPU memory from its model; "
        "over-commit applies to the shares of runs without --model-aware (docs/overcommit.md)");
  }
  s->engine_options.memory_overcommit = overcommit;
  // The shares' memory over time under over-commit (docs/overcommit.md#memory-over-time).
  PeakModel& peaks = s->engine_options.peaks;
  peaks.period_seconds = params.Double("peak_period", peaks.period_seconds);
  peaks.length_seconds = params.Double("peak_seconds", peaks.length_seconds);
  peaks.steady_share = params.Double("steady_share", peaks.steady_share);
  peaks.oom_retries = config.models.options.oom_retries;
  if (!(peaks.period_seconds >= 1 && peaks.period_seconds <= 30 * 86400.0)) {
    throw InputError("--param peak_period: expected seconds from 1 to 2592000 (30 days)");
  }
  if (!(peaks.length_seconds > 0 && peaks.length_seconds < peaks.period_seconds)) {
    throw InputError("--param peak_seconds: expected seconds above 0 and below peak_period");
  }
  if (!(peaks.steady_share > 0 && peaks.steady_share <= 1)) {
    throw InputError("--param steady_share: expected a fraction above 0, at most 1");
  }
  if (overcommit * peaks.steady_share > 1 + 1e-12) {
    char text[240];
    std::snprintf(text, sizeof text,
                  "--param overcommit=%g with steady_share=%g: the shares' steady memory alone "
                  "could exceed a GPU's (%g x %g > 1); expected overcommit x steady_share <= 1",
                  overcommit, peaks.steady_share, overcommit, peaks.steady_share);
    throw InputError(text);
  }
  if (overcommit == kMinOvercommit) {
    for (const char* key : {"peak_period", "peak_seconds", "steady_share"}) {
      if (config.params.values().count(key) > 0) {
        spdlog::warn("--param {} has nothing to act on without --param overcommit above 1 "
                     "(docs/overcommit.md)",
                     key);
      }
    }
  }
  params.RejectUnused("policy " + config.policy + " with placement " + config.placement +
                      (s->autoscaler ? " and autoscaler " + config.autoscaler : ""));
  if (const std::string problem = s->policy->ClusterProblem(cluster); !problem.empty()) {
    throw InputError(problem + " (cluster " + cluster.spec().origin + ")");
  }
  if (config.engine.defrag) {
    if (const std::string problem = DefragProblem(*s->policy, config.policy); !problem.empty()) {
      throw InputError(problem);
    }
    if (s->placement->DrawsRandomNumbers() || s->placement->IgnoresNodes()) {
      throw InputError("--defrag: placement " + config.placement +
                       (s->placement->IgnoresNodes() ? " ignores nodes, so no node is fragmented"
                                                     : " draws random numbers, which only the "
                                                       "policy may do") +
                       " (docs/defragmentation.md)");
    }
    s->defragmenter = MakeDefragmenter(*s->policy);
    s->policy = s->defragmenter.get();
  }
  if (config.engine.skip_no_fit && config.policy != "fcfs") {
    throw InputError("--on-no-fit skip: places each job as it arrives, which is fcfs; policy " +
                     config.policy + " keeps its own queue (use --policy fcfs)");
  }
}

// Step 3: reads and filters the trace, inflates it and assigns models if asked, and prints the
// sanity report (problems are warnings: nothing is dropped for them).
// Whether a catalog model can hold one sample on a job's GPUs of some type of the cluster it may
// use (MinimalModelParallelism with the run's memory options): what --assign-models asks before
// giving a job a model (workloads/model_assignment.h). Cached per (model, GPUs, allowed types).
HoldsModel MakeHoldsModel(const Cluster& cluster, const ModelCatalog& models,
                          const MemoryOptions& memory) {
  auto cache = std::make_shared<std::map<std::tuple<std::string, int, uint32_t>, bool>>();
  return [&cluster, &models, memory, cache](const Job& job, const std::string& name) {
    const auto key = std::make_tuple(name, job.gpus, job.gpu_type.id());
    if (auto it = cache->find(key); it != cache->end()) return it->second;
    bool holds = false;
    const ModelSpec* spec = models.Find(name);
    const HardwareCatalog& catalog = cluster.catalog();
    std::set<int> allowed;  // empty: any type of the cluster
    const std::string& types = job.gpu_type.str();
    for (size_t begin = 0; !types.empty() && begin <= types.size();) {
      const size_t end = std::min(types.find('|', begin), types.size());
      if (const auto type = catalog.Find(types.substr(begin, end - begin))) allowed.insert(*type);
      begin = end + 1;
    }
    for (int type : cluster.gpu_types()) {
      if (spec == nullptr || holds) break;
      if (!types.empty() && !allowed.count(type)) continue;
      const auto layout =
          MinimalModelParallelism(*spec, models.efficiency(), catalog.gpu(type), memory);
      holds = layout && layout->model_parallel_gpus() <= job.gpus;
    }
    cache->emplace(key, holds || spec == nullptr);
    return holds || spec == nullptr;
  };
}

LoadedTrace LoadRunTrace(const RunConfig& config, const Catalogs& catalogs, const Cluster& cluster) {
  LoadedTrace loaded;
  loaded.path =
      config.trace_path.empty() ? DefaultTracePath() : ResolveBundledPath(config.trace_path);
  spdlog::info("reading trace {}", loaded.path);
  loaded.trace = LoadTrace(loaded.path, config.trace_format, config.filter, &loaded.counts);
  const FilterCounts& counts = loaded.counts;
  if (counts.kept != counts.before && counts.kept > 0) {
    loaded.warnings.push_back("trace filter kept " + std::to_string(counts.kept) + " of " +
                              std::to_string(counts.before) +
                              " jobs (excluded: " + FilterExclusions(counts) + ")");
  }
  if (loaded.trace.jobs.empty()) {
    // Nothing to simulate: a run of no jobs has no waits or JCTs, only NaN figures.
    throw InputError(
        loaded.path, 0, 0,
        counts.before == 0
            ? "the trace holds no jobs (" + loaded.trace.format +
                  " format, nothing after the header): nothing to simulate"
            : "no job is left after the trace filters (" + std::to_string(counts.before) +
                  " read; excluded: " + FilterExclusions(counts) + "): nothing to simulate");
  }
  Trace& trace = loaded.trace;
  if (config.filter.inflate > 0) {
    CheckInflatedSize(trace, config.filter.inflate, cluster);
    // After the filters, on the kept jobs; the seed is the run's, so each seed is one sample.
    const size_t before = trace.jobs.size();
    InflateTrace(&trace, config.filter.inflate, int64_t{cluster.total_gpus()} * 1000,
                 static_cast<uint64_t>(config.seed));
    spdlog::info("--inflate {}: {} jobs -> {} jobs, shuffled, one arrival a second",
                 config.filter.inflate, before, trace.jobs.size());
  }
  if (config.mig_from_shares) {
    // The profiles of the cluster's MIG GPU type; several MIG types must offer the same ones.
    std::span<const MigProfile> profiles;
    std::string type;
    for (const NodeGroupSpec& group : cluster.spec().groups) {
      if (!group.mig) continue;
      const std::span<const MigProfile> these = MigProfilesOf(group.gpu_type);
      auto names = [](std::span<const MigProfile> ps) {
        std::string text;
        for (const MigProfile& p : ps) text += std::string(p.name) + " ";
        return text;
      };
      if (!profiles.empty() && names(these) != names(profiles)) {
        throw InputError("--mig-from-shares: the cluster's MIG GPU types " + type + " and " +
                         group.gpu_type +
                         " offer different profiles; a share maps onto one type's (docs/mig.md)");
      }
      profiles = these;
      type = group.gpu_type;
    }
    if (profiles.empty()) {
      throw InputError("--mig-from-shares: cluster " + cluster.spec().origin +
                       " has no node group in MIG mode (\"mig\": true; docs/mig.md)");
    }
    const int64_t mapped = MapSharesToMig(trace.jobs, profiles);
    if (mapped == 0) {
      loaded.warnings.push_back("--mig-from-shares: no job asks for a share of one GPU "
                                "(gpu_milli): nothing to map onto MIG profiles");
    } else {
      spdlog::info("--mig-from-shares: {} GPU shares mapped onto {} MIG profiles", mapped, type);
    }
  }
  if (!config.deadlines.empty()) {
    const int64_t given = AssignDeadlines(&trace, ParseDeadlineRule(config.deadlines),
                                          static_cast<uint64_t>(config.seed));
    spdlog::info("--deadlines {}: {} jobs given a deadline (seed {})", config.deadlines, given,
                 config.seed);
  }
  if (!config.data_nodes.empty()) {
    const int64_t given = AssignDataNodes(&trace, cluster.node_count(),
                                          ParseDataNodeRule(config.data_nodes),
                                          static_cast<uint64_t>(config.seed));
    spdlog::info("--data-nodes {}: {} jobs given data nodes (seed {})", config.data_nodes, given,
                 config.seed);
  }
  if (config.models.assign) {
    const int64_t assigned =
        AssignModels(trace.jobs, static_cast<uint64_t>(config.seed),
                     *ParseUserBatchRule(config.models.user_batches),
                     MakeHoldsModel(cluster, *catalogs.models, config.models.options.memory));
    spdlog::info("assigned a model and batch to {} jobs (seed {})", assigned, config.seed);
  }
  if (config.validate && std::none_of(trace.jobs.begin(), trace.jobs.end(), [](const Job& job) {
        return job.has_recorded_start() || job.has_recorded_end();
      })) {
    throw InputError(loaded.path, 0, 0,
                     "the trace (" + trace.format +
                         " format) records no start or end times to validate against (see "
                         "traces/README.md for what each format records; --submit-is-start for "
                         "logs whose submit times are their start times)");
  }
  // Inflated: the submit times are the shuffled arrival order, not the file's.
  loaded.sanity = CheckTraceSanity(trace, &cluster, !(config.filter.inflate > 0));
  const std::string& name = config.trace_label.empty() ? loaded.path : config.trace_label;
  for (const SanityItem& item : loaded.sanity.items) {
    std::string lines;
    for (int64_t line : item.first_lines) lines += " " + std::to_string(line);
    loaded.warnings.push_back(name + ": " + std::to_string(item.count) + " " + item.what +
                              (lines.empty() ? "" : " (first lines:" + lines + ")"));
  }
  for (const std::string& warning : loaded.warnings) spdlog::warn("{}", warning);
  return loaded;
}

// Step 4: the per-run model table of a model-aware run, and the workload classes placements and
// the FGD metric score against. Returns the warnings about settings with nothing to act on.
std::vector<std::string> BuildModels(const RunConfig& config, const Catalogs& catalogs,
                                     const Cluster& cluster, LoadedTrace* loaded, Scheduler* s) {
  const Trace& trace = loaded->trace;
  // The hardware model's reference without an explicit type: the trace's own GPU type where it
  // states one (docs/models.md#runtime-models). The run records the model with its reference.
  if (s->runtime_name == "hardware") {
    if (const auto type = TraceGpuType(trace, cluster.catalog())) s->runtime->SetReference(*type);
  }
  s->runtime_name = s->runtime->Label(cluster.catalog());
  if (s->runtime->reference_type() >= 0) {
    spdlog::info("runtime model {}: trace durations are times on {}", s->runtime_name,
                 cluster.catalog().gpu(s->runtime->reference_type()).name);
  }
  if (config.models.enabled || config.models.assign) {
    ModelRuntimeOptions options = config.models.options;
    options.batch_choice = config.models.batch_choice == "optimal"
                               ? ModelRuntimeOptions::BatchChoice::kGoodputOptimal
                               : ModelRuntimeOptions::BatchChoice::kUser;
    loaded->models =
        std::make_unique<ModelRuntime>(trace, cluster.catalog(), *catalogs.models, options);
    s->engine_options.models = loaded->models.get();
    s->placement_models = loaded->models.get();
    spdlog::info("{} of {} jobs name a model of the catalog", loaded->models->modelled_jobs(),
                 trace.jobs.size());
  }
  spdlog::info("{} jobs ({} format); cluster {}: {} nodes, {} GPUs", trace.jobs.size(),
               trace.format, cluster.spec().origin, cluster.node_count(), cluster.total_gpus());
  std::vector<std::string> warnings;
  if (loaded->models && loaded->models->modelled_jobs() == 0 && !config.models.assign) {
    warnings.push_back(
        "--model-aware: no job of the trace names a model of the catalog (clustersim list "
        "models), so nothing is model-aware; add --assign-models to give every job a model and "
        "batch by its size");
  }
  if (std::string warning = s->policy->IdleWarning(trace, loaded->models.get());
      !warning.empty()) {
    warnings.push_back(std::move(warning));
  }
  if (std::string warning = s->policy->PlacementWarning(cluster, *s->placement); !warning.empty()) {
    warnings.push_back(std::move(warning));
  }
  for (std::string& warning : ReliabilityWarnings(config, cluster, s->engine_options.faults)) {
    warnings.push_back(std::move(warning));
  }
  if (config.engine.preemption_cost_seconds == 0) {
    char text[320];
    std::snprintf(text, sizeof text,
                  "--preemption-cost 0: preemptions, resizes and migrations cost nothing (but "
                  "model-sized checkpoints), which favours preemptive policies; the default, %g "
                  "s, follows published measurements (docs/engine.md#preemption-cost)",
                  kDefaultPreemptionCostSeconds);
    warnings.push_back(text);
  }
  for (const std::string& warning : warnings) spdlog::warn("{}", warning);
  // Demands the cluster does not declare are about the trace on this cluster: logged with the
  // sanity report (RunOutcome::trace_warnings), not among the settings' warnings.
  const bool host_limits = RunLimitsHost(trace, cluster);
  for (std::string& warning : UnusedHostDemands(trace, cluster, host_limits)) {
    spdlog::warn("{}", warning);
    loaded->warnings.push_back(std::move(warning));
  }
  const bool shares = s->placement->SharesGpus();
  if (s->engine_options.memory_overcommit > kMinOvercommit) {
    const bool any_share = std::any_of(trace.jobs.begin(), trace.jobs.end(),
                                       [](const Job& job) { return job.IsShare(); });
    // The engine places shares only where both the placement and the policy do (a policy that
    // does not gives a share's job a whole GPU).
    const bool policy_shares = s->policy->SupportsShares();
    if (!shares || !policy_shares || !any_share) {
      const std::string why =
          !shares ? "placement " + config.placement +
                        " does not share GPUs (use frag-aware or a share baseline)"
          : !policy_shares
              ? "policy " + config.policy +
                    " gives a job asking for a share a whole GPU (fcfs, sjf and cosched place "
                    "shares)"
              : std::string("no job of the trace asks for a share of a GPU");
      char text[400];
      std::snprintf(text, sizeof text,
                    "--param overcommit=%g has nothing to act on: it applies to GPU shares, and %s "
                    "(docs/overcommit.md)",
                    s->engine_options.memory_overcommit, why.c_str());
      spdlog::warn("{}", text);
      warnings.push_back(text);
    }
  }
  s->workload = s->fgd_classes == "paper"
                    ? PaperTaskClasses(trace, shares, host_limits)
                    : WorkloadClasses(trace, kDefaultMaxTaskClasses, shares, host_limits);
  s->engine_options.workload = &s->workload;  // the same classes for the FGD metric
  return warnings;
}

// The runs-table row of the run, all but the outcome; also the run's identity for duplicates.
RunRecord DescribeRun(const RunConfig& config, const Cluster& cluster, const Scheduler& s,
                      const LoadedTrace& loaded) {
  RunRecord record;
  record.trace_path = loaded.path;
  record.trace_sha256 = loaded.trace.sha256;
  record.trace_format = loaded.trace.format;
  record.cluster_spec = cluster.spec().origin;
  record.cluster_sha256 = Sha256Hex(cluster.spec().text);
  record.cluster_json = cluster.spec().text;
  record.policy = config.policy;
  record.placement = config.placement;
  record.params_json = s.params.ToJson();
  if (config.autoscaler != "none") {
    // Recorded with the parameters (the run's identity): docs/autoscaling.md#output.
    nlohmann::json params = nlohmann::json::parse(record.params_json);
    params["autoscaler"] = config.autoscaler;
    record.params_json = params.dump();
  }
  if (config.engine.defrag) {
    // Likewise (docs/defragmentation.md#metrics): a run with --defrag is another run.
    nlohmann::json params = nlohmann::json::parse(record.params_json);
    params["defrag"] = true;
    record.params_json = params.dump();
  }
  record.runtime_model = s.runtime_name;
  record.seed = config.seed;
  record.version = CLUSTERSIM_VERSION;
  record.timeseries_interval_seconds = config.engine.timeseries_interval_seconds;
  record.preemption_cost_seconds = config.engine.preemption_cost_seconds;
  record.faults = s.engine_options.faults.ToJson(cluster.catalog());
  record.models = config.models.ToJson(config.seed);
  record.bsld_threshold_seconds = config.bsld_threshold_seconds;
  nlohmann::json filter = nlohmann::json::parse(config.filter.ToJson());
  if (!config.filter.IsIdentity()) {
    filter["jobs_before"] = loaded.counts.before;
    filter["jobs_kept"] = loaded.counts.kept;
  }
  if (config.filter.inflate > 0) filter["jobs_inflated"] = loaded.trace.jobs.size();
  // Constraint rules and settings change what the run schedules: part of the run's identity.
  if (!config.deadlines.empty()) filter["deadlines"] = config.deadlines;
  if (config.mig_from_shares) filter["mig_from_shares"] = true;
  if (!config.data_nodes.empty()) filter["data_nodes"] = config.data_nodes;
  const ConstraintOptions& c = config.engine.constraints;
  if (c.locality_alpha != ConstraintOptions{}.locality_alpha) {
    filter["locality_alpha"] = c.locality_alpha;
  }
  if (c.max_nodes_per_job > 0) filter["max_nodes_per_job"] = c.max_nodes_per_job;
  record.trace_filter = filter.dump();
  // The trace's class names per level, for reports by priority.
  std::map<int, std::set<std::string>> classes;
  for (const Job& job : loaded.trace.jobs) {
    if (!job.priority_class.empty()) classes[job.priority].insert(job.priority_class.str());
  }
  if (!classes.empty()) {
    nlohmann::json names = nlohmann::json::object();
    for (const auto& [level, set] : classes) {
      std::string joined;
      for (const std::string& name : set) joined += (joined.empty() ? "" : "|") + name;
      names[std::to_string(level)] = joined;
    }
    record.priority_classes = names.dump();
  }
  return record;
}

// Step 5: opens the output before simulating, so an unwritable path or a repeated run fails
// fast. Returns nullptr when the run writes no database.
std::unique_ptr<SqliteWriter> OpenOutput(const RunConfig& config, const RunRecord& record) {
  std::unique_ptr<SqliteWriter> writer;
  if (!config.out.empty()) writer = std::make_unique<SqliteWriter>(config.out);
  if (config.allow_duplicate) return writer;
  auto refuse = [&](const std::string& path, int64_t run_id) {
    throw InputError(path, 0, 0,
                     "already holds this run as run " + std::to_string(run_id) +
                         " (same trace and cluster, policy, placement, parameters, runtime "
                         "model, seed, filters, interval, preemption cost, faults and models: "
                         "the simulation is deterministic, so its rows would be the same); "
                         "nothing was written; --allow-duplicate appends it again");
  };
  if (writer) {
    if (const int64_t same = writer->FindSameRun(record); same >= 0) refuse(config.out, same);
  }
  if (!config.duplicates_of.empty()) {
    if (const int64_t same = FindSameRunIn(config.duplicates_of, record); same >= 0) {
      refuse(config.duplicates_of, same);
    }
  }
  return writer;
}

// What the replay of a log cannot reproduce, said before its distances are read: a record that
// holds more GPUs than the cluster has (the log ran on a larger one), partitions (unless the
// cluster spec's site models them) and queues or classes the policy does not order by.
std::vector<std::string> ValidationWarnings(const ValidationReport& report, const Trace& trace,
                                            const Cluster& cluster, const Policy& policy,
                                            const std::string& policy_name) {
  std::vector<std::string> warnings;
  for (const ValidationSeries& series : report.series) {
    if (series.scope != "all" || series.recorded_utilization.empty()) continue;
    const auto peak =
        std::max_element(series.recorded_utilization.begin(), series.recorded_utilization.end());
    if (!(*peak > 1 + 1e-9)) continue;
    int64_t over = 0;
    for (double u : series.recorded_utilization) over += u > 1 + 1e-9;
    char text[512];
    std::snprintf(
        text, sizeof text,
        "the recorded schedule holds more GPUs than cluster %s has: up to %.2fx its %d "
        "GPUs (%.0f GPUs on average over the %g s interval at day %.2f), above it in "
        "%.1f %% of the intervals; the log ran on a larger cluster (or counts GPUs "
        "differently), so the replay cannot reproduce its waits: give --cluster the "
        "cluster it ran on (docs/validation.md)",
        cluster.spec().origin.c_str(), *peak, cluster.total_gpus(), *peak * cluster.total_gpus(),
        series.interval_seconds,
        (series.t0 + series.interval_seconds *
                         static_cast<double>(peak - series.recorded_utilization.begin())) /
            86400,
        100.0 * static_cast<double>(over) /
            static_cast<double>(series.recorded_utilization.size()));
    warnings.push_back(text);
  }
  auto listing = [](const std::map<std::string, int64_t>& jobs) {
    std::vector<std::pair<int64_t, std::string>> by_jobs;
    for (const auto& [name, n] : jobs) by_jobs.emplace_back(-n, name);
    std::sort(by_jobs.begin(), by_jobs.end());
    std::string text;
    for (size_t i = 0; i < by_jobs.size() && i < 5; ++i) {
      text += (i ? ", " : "") + std::string("\"") + by_jobs[i].second + "\" " +
              std::to_string(-by_jobs[i].first) + " jobs";
    }
    if (by_jobs.size() > 5) text += ", ...";
    return text;
  };
  // A cluster spec with site partitions models them (docs/cluster.md#site-model): no warning.
  if (trace.partitions.size() > 1 && cluster.spec().site.partitions.empty()) {
    warnings.push_back("the log names " + std::to_string(trace.partitions.size()) +
                       " partitions (" + listing(trace.partitions) +
                       ") that the replay does not model: every job shares the one --cluster; "
                       "validate one partition's jobs on that partition's cluster");
  }
  std::map<std::string, int64_t> classes;
  for (const Job& job : trace.jobs) {
    if (!job.priority_class.empty()) ++classes[job.priority_class.str()];
  }
  if (classes.size() > 1 && !policy.OrdersByPriority()) {
    warnings.push_back("the log names " + std::to_string(classes.size()) +
                       " queues or priority classes (" + listing(classes) + ") that policy " +
                       policy_name +
                       " does not model: it serves them in one order (policy priority with "
                       "--priority-map orders by them: docs/policies.md#priority)");
  }
  return warnings;
}

// Step 6: runs the engine, the writer taking rows on its own thread while the run goes on
// (sqlite_writer.h), and fills the outcome's results. The writer reads the engine until its
// EndRun, so the run's last rows are written here, while the engine lives.
void SimulateAndWrite(const RunConfig& config, Scheduler* s, const Cluster& cluster,
                      const LoadedTrace& loaded, RunRecord* record, SqliteWriter* writer,
                      std::chrono::steady_clock::time_point wall_start, RunOutcome* outcome) {
  if (writer) {
    s->engine_options.observe = [writer](const Engine& e) { writer->WriteFinished(e, false); };
  }
  Engine engine(loaded.trace, cluster, *s->placement, *s->runtime, *s->policy, config.policy,
                s->engine_options);
  if (engine.site() != nullptr) {
    for (const std::string& warning : engine.site()->warnings()) {
      spdlog::warn("{}", warning);
      outcome->warnings.push_back(warning);
    }
  }
  // Known once the policy has seen the trace (Policy::BeforeRun, from the engine's constructor).
  record->planning_estimates = s->policy->PlanningEstimates();
  outcome->planning_estimates = record->planning_estimates;
  if (writer) writer->BeginRun(*record, engine);
  engine.Run();
  const SummaryOptions summary_options{config.bsld_threshold_seconds};
  outcome->summary = writer ? writer->WriteLastRows(engine, summary_options)
                            : ComputeSummary(engine, summary_options);
  outcome->status = engine.status();
  outcome->fingerprint = engine.fingerprint();
  outcome->events = engine.events_processed();
  outcome->jobs_started = engine.jobs_started();
  if (config.validate) {
    outcome->validation = ComputeValidation(engine, config.engine.timeseries_interval_seconds,
                                            config.validate_from);
    for (std::string& warning : ValidationWarnings(outcome->validation, loaded.trace, cluster,
                                                   *s->policy, config.policy)) {
      spdlog::warn("{}", warning);
      outcome->warnings.push_back(std::move(warning));
    }
  }
  // Parse + simulate + summary: the time spent waiting for the writer thread is the write's.
  outcome->wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count() -
      (writer ? writer->wait_seconds() : 0.0);
  if (!writer) return;
  record->wall_seconds = outcome->wall_seconds;
  record->events = engine.events_processed();
  record->passes = engine.passes();
  record->status = engine.status() == RunStatus::kComplete ? "complete" : "interrupted";
  record->fingerprint = HexFingerprint(engine.fingerprint());
  outcome->run_id = writer->EndRun(*record, outcome->summary);
  if (config.validate) writer->WriteValidation(outcome->run_id, outcome->validation);
  writer->Commit();
}

// Step 7: what the run replayed, for the caller's report.
void DescribeOutcome(const RunConfig& config, const Cluster& cluster, const Scheduler& s,
                     LoadedTrace* loaded, RunOutcome* outcome) {
  outcome->jobs = loaded->trace.jobs.size();
  outcome->trace_warnings = std::move(loaded->warnings);
  if (outcome->jobs_started == 0) {
    // A run that started nothing has only NaN waits and JCTs: say so loudly, and why.
    const int64_t rejected = static_cast<int64_t>(SummaryValue(outcome->summary, "jobs_rejected"));
    std::string why;
    if (rejected == static_cast<int64_t>(outcome->jobs)) {
      why = "every job was rejected (none fits the cluster " + cluster.spec().origin + " of " +
            std::to_string(cluster.total_gpus()) + " GPUs; the jobs table gives each reason)";
    } else if (outcome->status != RunStatus::kComplete) {
      why = "the run was interrupted before the first start";
    } else if (std::isfinite(config.engine.stop_time)) {
      why = "the clock stopped at --stop-time before the first start";
    } else {
      why = "policy " + config.policy + " never started a job (" +
            std::to_string(static_cast<int64_t>(outcome->jobs) - rejected) +
            " waited until the end); its waits and JCTs are undefined";
    }
    std::string warning = "no job started: " + why;
    spdlog::warn("{}", warning);
    outcome->warnings.push_back(std::move(warning));
  }
  outcome->gpus = cluster.total_gpus();
  outcome->runtime_model = s.runtime_name;
  outcome->trace_format = loaded->trace.format;
  outcome->filter_counts = loaded->counts;
  outcome->sanity = std::move(loaded->sanity);
}

}  // namespace

void CheckRunConfig(const RunConfig& config) {
  Catalogs catalogs;
  ResolveOptions(config, &catalogs);
  const Cluster cluster = LoadCluster(config, *catalogs.hardware);
  Scheduler scheduler;
  MakeScheduler(config, cluster, &scheduler);
}

RunOutcome ExecuteRun(const RunConfig& config) {
  const auto wall_start = std::chrono::steady_clock::now();
  Catalogs catalogs;
  ResolveOptions(config, &catalogs);
  const Cluster cluster = LoadCluster(config, *catalogs.hardware);
  Scheduler scheduler;
  MakeScheduler(config, cluster, &scheduler);  // every name and --param checked before reading
  LoadedTrace loaded = LoadRunTrace(config, catalogs, cluster);
  RunOutcome outcome;
  outcome.warnings = BuildModels(config, catalogs, cluster, &loaded, &scheduler);
  RunRecord record = DescribeRun(config, cluster, scheduler, loaded);
  CheckOutputSpace(config.out, loaded.trace.jobs.size());
  const std::unique_ptr<SqliteWriter> writer = OpenOutput(config, record);
  SimulateAndWrite(config, &scheduler, cluster, loaded, &record, writer.get(), wall_start,
                   &outcome);
  DescribeOutcome(config, cluster, scheduler, &loaded, &outcome);
  return outcome;
}

}  // namespace clustersim
