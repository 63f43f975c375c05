#include "sim/cli/run.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "policies/registry.h"
#include "sim/error.h"
#include "sim/sha256.h"
#include "sim/sqlite_writer.h"
#include "sim/topology.h"
#include "workloads/reader.h"

#ifndef CLUSTERSIM_SOURCE_DIR
#define CLUSTERSIM_SOURCE_DIR "."
#endif
#ifndef CLUSTERSIM_VERSION
#define CLUSTERSIM_VERSION "0.0.0"
#endif

namespace clustersim {

std::string BundledTracesDir() {
  if (const char* dir = std::getenv("CLUSTERSIM_DATA_DIR")) return dir;
  return std::string(CLUSTERSIM_SOURCE_DIR) + "/traces";
}

std::string DefaultTracePath() { return BundledTracesDir() + "/philly_default.csv"; }

std::string HexFingerprint(uint64_t fingerprint) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(fingerprint));
  return buffer;
}

RunOutcome ExecuteRun(const RunConfig& config) {
  const auto wall_start = std::chrono::steady_clock::now();
  HardwareCatalog custom_catalog;
  const HardwareCatalog* catalog = &HardwareCatalog::Default();
  if (!config.hardware_path.empty()) {
    custom_catalog = HardwareCatalog::FromFile(config.hardware_path);
    catalog = &custom_catalog;
  }
  // Validate every name before any heavy work, so errors come fast.
  const PolicyEntry& policy_entry = FindPolicy(config.policy);
  const PlacementEntry& placement_entry = FindPlacement(config.placement);
  const Cluster cluster(ClusterSpec::Load(config.cluster, *catalog), *catalog);
  std::string runtime_name = config.runtime_model;
  if (runtime_name.empty()) runtime_name = cluster.IsHeterogeneous() ? "hardware" : "trace";
  const Topology topology(cluster);
  const auto runtime = MakeRuntimeModel(runtime_name, cluster, topology);
  const auto placement =
      placement_entry.make(PlacementEnv{&cluster, &topology, runtime.get()}, config.params);
  const auto policy = policy_entry.make(config.params);
  config.params.RejectUnused("policy " + config.policy + " with placement " + config.placement);

  const std::string trace_path = config.trace_path.empty() ? DefaultTracePath() : config.trace_path;
  spdlog::info("reading trace {}", trace_path);
  const Trace trace = LoadTrace(trace_path, config.trace_format);
  spdlog::info("{} jobs ({} format); cluster {}: {} nodes, {} GPUs", trace.jobs.size(),
               trace.format, cluster.spec().origin, cluster.node_count(), cluster.total_gpus());

  // Open the output before simulating, so an unwritable path fails fast.
  std::unique_ptr<SqliteWriter> writer;
  if (!config.out.empty()) writer = std::make_unique<SqliteWriter>(config.out);

  Engine engine(trace, cluster, *placement, *runtime, *policy, config.policy, config.engine);
  engine.Run();

  RunOutcome outcome;
  outcome.status = engine.status();
  outcome.fingerprint = engine.fingerprint();
  outcome.events = engine.events_processed();
  outcome.jobs = trace.jobs.size();
  outcome.gpus = cluster.total_gpus();
  outcome.runtime_model = runtime_name;
  outcome.trace_format = trace.format;
  outcome.summary = ComputeSummary(engine);
  outcome.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (writer) {
    RunRecord record;
    record.trace_path = trace_path;
    record.trace_sha256 = trace.sha256;
    record.trace_format = trace.format;
    record.cluster_spec = cluster.spec().origin;
    record.cluster_sha256 = Sha256Hex(cluster.spec().text);
    record.cluster_json = cluster.spec().text;
    record.policy = config.policy;
    record.placement = config.placement;
    record.params_json = config.params.ToJson();
    record.runtime_model = runtime_name;
    record.seed = config.seed;
    record.version = CLUSTERSIM_VERSION;
    record.wall_seconds = outcome.wall_seconds;
    record.events = engine.events_processed();
    record.passes = engine.passes();
    record.status = engine.status() == RunStatus::kComplete ? "complete" : "interrupted";
    record.fingerprint = HexFingerprint(engine.fingerprint());
    record.timeseries_interval_seconds = config.engine.timeseries_interval_seconds;
    outcome.run_id = writer->WriteRun(record, &engine, outcome.summary);
    writer->Commit();
  }
  return outcome;
}

}  // namespace clustersim
