#include "app/reliability_study.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "app/run.h"
#include "sim/engine/fleet_failures.h"
#include "sim/models/failure_catalog.h"
#include "sim/models/memory_model.h"
#include "sim/models/model_catalog.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

void CheckSettings(const ReliabilityStudySettings& s) {
  if (s.gpus.empty()) throw InputError("--gpus: expected at least one job size");
  if (s.gpus_per_node < 1) throw InputError("--gpus-per-node: expected at least 1");
  for (int g : s.gpus) {
    if (g < 1 || g % s.gpus_per_node != 0) {
      throw InputError(
          "--gpus: expected job sizes that are positive multiples of "
          "--gpus-per-node (" +
          std::to_string(s.gpus_per_node) + "), got " + std::to_string(g));
    }
  }
  if (s.spares.empty()) throw InputError("--spares: expected at least one count");
  for (int k : s.spares) {
    if (k < 0) throw InputError("--spares: expected counts >= 0, got " + std::to_string(k));
  }
  if (s.nodes_per_rack < 1) throw InputError("--nodes-per-rack: expected at least 1");
  if (!(s.mttr_seconds > 0) || !std::isfinite(s.mttr_seconds)) {
    throw InputError("--mttr: expected a duration > 0");
  }
  if (!(s.swap_seconds >= 0) || !std::isfinite(s.swap_seconds)) {
    throw InputError("--swap-time: expected a duration >= 0");
  }
  if (!(s.days > 0) || !std::isfinite(s.days)) throw InputError("--days: expected a number > 0");
  if (s.seeds < 0) throw InputError("--seeds: expected a count >= 0");
  if (s.threads < 1) throw InputError("--jobs: expected at least 1");
  if (!(s.save_seconds >= 0) || !(s.restore_seconds >= 0)) {
    throw InputError("--checkpoint-cost, --restore-cost: expected durations >= 0");
  }
  if (s.checkpoint.rule == CheckpointRule::kFixed && !(s.fixed_interval_seconds > 0)) {
    throw InputError("--checkpoint-interval: expected a duration > 0");
  }
  if (!s.model.empty() && !s.storage.declared()) {
    throw InputError("--model: its checkpoint time needs --storage-gbps (GB/s)");
  }
}

// The node group of the study's cluster: the job's nodes and the spares.
NodeGroupSpec Group(const ReliabilityStudySettings& s, int gpus, int spares) {
  NodeGroupSpec group;
  group.count = gpus / s.gpus_per_node;
  group.gpu_type = s.gpu_type;
  group.gpus_per_node = s.gpus_per_node;
  group.spares = spares;
  group.swap_seconds = s.swap_seconds;
  return group;
}

// A temporary folder for the one-job traces, removed with the object.
class ScratchFolder {
 public:
  ScratchFolder() {
    static std::atomic<int> counter{0};
    path_ =
        std::filesystem::temp_directory_path() /
        ("clustersim-reliability-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The model's figures for one row (see the header comment).
void Model(const ReliabilityStudySettings& s, const FailureCatalog& catalog,
           const HardwareCatalog& hardware, double checkpoint_bytes, ReliabilityRow* row) {
  NetworkSpec network;
  network.nodes_per_rack = s.nodes_per_rack;
  const Cluster cluster(
      ClusterSpec::FromJsonText(ClusterSpecJson({Group(s, row->gpus, row->spares)}, network),
                                "reliability", hardware),
      hardware);
  const FleetFailures fleet(catalog, cluster, 0);
  std::vector<int> gpus(row->gpus);
  for (int g = 0; g < row->gpus; ++g) gpus[g] = g;  // first-fit's first allocation
  const JobFootprint footprint = fleet.Footprint(gpus);
  if (checkpoint_bytes > 0) {
    auto seconds = [&](double gbps) {
      if (s.storage.node_gbps > 0) gbps = std::min(gbps, row->nodes * s.storage.node_gbps);
      return checkpoint_bytes / (gbps * 1e9);
    };
    row->save_seconds = seconds(s.storage.write_gbps);
    row->restore_seconds = seconds(s.storage.read_gbps);
  } else {
    row->save_seconds = s.save_seconds;
    row->restore_seconds = s.restore_seconds;
  }
  double lambda = 0;     // interruptions of the job per second
  double node_outs = 0;  // the cluster's nodes taken out per second, spares included
  double erlangs = 0;    // nodes under repair, on average
  JobFootprint whole;    // every node of the cluster, for its failures
  whole.gpus = cluster.total_gpus();
  whole.nodes = cluster.node_count();
  whole.rack_nodes = cluster.node_count();
  for (const FailureCause& cause : catalog.causes()) {
    lambda +=
        JobInterruptionsPerHour(cause, footprint, cluster.total_gpus(), cluster.node_count()) /
        3600;
    if (!cause.TakesHardwareOut()) continue;
    // Events strike the cluster's units (every one counted in `whole`); a rack event takes the
    // whole rack out.
    const double nodes_out = cause.domain == FailureDomain::kRack ? s.nodes_per_rack : 1;
    const double events = JobInterruptionsPerHour(cause, whole, whole.gpus, whole.nodes) / 3600;
    node_outs += events * nodes_out;
    erlangs += events * nodes_out * cause.RepairSeconds(s.mttr_seconds);
  }
  const double repair = node_outs > 0 ? erlangs / node_outs : s.mttr_seconds;  // mean
  row->shortage_probability = SpareShortageProbability(row->spares, node_outs, repair);
  const double p = row->shortage_probability;
  // The wait of a job that finds no spare (sim/models/reliability.h).
  const double blocked =
      p > 0 ? ExpectedCapacityWaitSeconds(row->spares, node_outs, repair) / p : 0.0;
  double hold = 0;  // rate-weighted sums over the causes
  double wait = 0;
  for (const FailureCause& cause : catalog.causes()) {
    const double rate =
        JobInterruptionsPerHour(cause, footprint, cluster.total_gpus(), cluster.node_count()) /
        3600;
    double hold_c = cause.restart_seconds + row->restore_seconds + cause.detection_seconds;
    double wait_c = 0;
    if (cause.TakesHardwareOut()) {
      // No spare: the job waits (`blocked`) while the detection goes on; a spare: detection
      // and swap while it holds its GPUs.
      hold_c = cause.restart_seconds + row->restore_seconds +
               (1 - p) * (cause.detection_seconds + s.swap_seconds) +
               p * std::max(0.0, cause.detection_seconds - blocked);
      wait_c = p * blocked;
    }
    hold += rate * hold_c;
    wait += rate * wait_c;
  }
  row->hold_seconds = lambda > 0 ? hold / lambda : 0;
  row->wait_seconds = lambda > 0 ? wait / lambda : 0;
  row->interruptions_per_day = lambda * 86400;
  row->mtbf_hours = lambda > 0 ? 1 / lambda / 3600 : INFINITY;
  row->plan = PlanCheckpoints(s.checkpoint, s.fixed_interval_seconds, row->save_seconds,
                              lambda > 0 ? 1 / lambda : FaultOptions::kNever);
  row->ettr = ExpectedEttr(lambda, row->hold_seconds, row->wait_seconds, row->plan);
}

// One simulation: the row's job on its cluster with seed `seed`.
void Simulate(const ReliabilityStudySettings& s, const ReliabilityRow& row, int seed,
              const std::string& trace_path, double* ettr, double* per_day, double* mtbf_hours) {
  RunConfig config;
  config.trace_path = trace_path;
  config.trace_format = "native";
  NetworkSpec network;
  network.nodes_per_rack = s.nodes_per_rack;
  config.cluster = "reliability:" + std::to_string(row.nodes) + "x" + s.gpu_type + "+" +
                   std::to_string(row.spares);
  config.cluster_json = ClusterSpecJson({Group(s, row.gpus, row.spares)}, network);
  config.hardware_path = s.hardware_path;
  config.policy = "fcfs";
  config.placement = "first-fit";
  config.runtime_model = "trace";
  config.seed = seed;
  config.failure_model = s.failure_model;
  config.checkpoint_policy = CheckpointRuleName(s.checkpoint.rule);
  FaultOptions& f = config.engine.faults;
  f.checkpoint = s.checkpoint;
  f.checkpoint_interval_seconds = s.fixed_interval_seconds;
  f.checkpoint_cost_seconds = row.save_seconds;
  f.restore_cost_seconds = row.restore_seconds;
  f.mttr_seconds = s.mttr_seconds;
  // The time series is not read here: one interval per 1/20,000 of the work (5 min at least)
  // keeps it within the engine's bound even when failures stretch the job 50 times.
  config.engine.timeseries_interval_seconds = std::max(300.0, s.days * 86400 / 20000);
  const RunOutcome outcome = ExecuteRun(config);
  auto value = [&](const char* metric) { return SummaryValue(outcome.summary, metric); };
  *ettr = value("ettr");
  const double interruptions = value("interruptions");
  const double elapsed = value("makespan_seconds");
  const double waited = value("capacity_wait_gpu_hours") * 3600 / row.gpus;
  const double holding = elapsed - waited;
  *per_day = interruptions / (holding / 86400);
  *mtbf_hours = interruptions > 0 ? holding / interruptions / 3600 : INFINITY;
}

}  // namespace

std::vector<ReliabilityRow> RunReliabilityStudy(const ReliabilityStudySettings& settings,
                                                bool simulate,
                                                const std::function<void(int, int)>& progress) {
  CheckSettings(settings);
  HardwareCatalog custom_hardware;
  const HardwareCatalog* hardware = &HardwareCatalog::Default();
  if (!settings.hardware_path.empty()) {
    custom_hardware = HardwareCatalog::FromFile(settings.hardware_path);
    hardware = &custom_hardware;
  }
  if (!hardware->Find(settings.gpu_type)) {
    throw InputError("--gpu-type: unknown GPU type \"" + settings.gpu_type +
                     "\"; valid types: " + hardware->NameList());
  }
  const FailureCatalog catalog = FailureCatalog::Load(settings.failure_model, "--failure-model");
  double checkpoint_bytes = 0;
  if (!settings.model.empty()) {
    const ModelCatalog models = settings.models_path.empty()
                                    ? ModelCatalog::Default()
                                    : ModelCatalog::FromFile(settings.models_path);
    checkpoint_bytes = CheckpointBytes(models.Require(settings.model));
  }
  std::vector<ReliabilityRow> rows;
  for (int gpus : settings.gpus) {
    for (int spares : settings.spares) {
      ReliabilityRow row;
      row.gpus = gpus;
      row.nodes = gpus / settings.gpus_per_node;
      row.spares = spares;
      Model(settings, catalog, *hardware, checkpoint_bytes, &row);
      row.sim_ettr.assign(settings.seeds, NAN);
      row.sim_interruptions_per_day.assign(settings.seeds, NAN);
      row.sim_mtbf_hours.assign(settings.seeds, NAN);
      rows.push_back(std::move(row));
    }
  }
  if (!simulate || settings.seeds == 0) return rows;

  // One trace per job size: one job of `days` of work submitted at 0.
  const ScratchFolder folder;
  std::map<int, std::string> traces;
  for (int gpus : settings.gpus) {
    const std::string path = (folder.path() / ("job_" + std::to_string(gpus) + ".csv")).string();
    std::ofstream out(path);
    char duration[64];
    std::snprintf(duration, sizeof duration, "%.17g", settings.days * 86400);
    out << "job_id,submit_time,gpus,duration\nllm," << 0 << "," << gpus << "," << duration << "\n";
    if (!out) throw InputError(path, 0, 0, "cannot write a scratch trace");
    traces[gpus] = path;
  }
  const int total = static_cast<int>(rows.size()) * settings.seeds;
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  std::mutex error_mutex;
  std::exception_ptr error;
  auto work = [&] {
    while (true) {
      const int task = next++;
      if (task >= total) return;
      ReliabilityRow& row = rows[task / settings.seeds];
      const int seed = task % settings.seeds;
      try {
        Simulate(settings, row, seed, traces.at(row.gpus), &row.sim_ettr[seed],
                 &row.sim_interruptions_per_day[seed], &row.sim_mtbf_hours[seed]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next = total;
        return;
      }
      const int finished = ++done;
      if (progress) progress(finished, total);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::min(settings.threads, total); ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return rows;
}

}  // namespace clustersim
