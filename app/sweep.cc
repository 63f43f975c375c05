#include "app/sweep.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "app/progress.h"
#include "policies/registry.h"
#include "sim/hardware/cluster.h"
#include "sim/output/merge.h"
#include "sim/output/sqlite_writer.h"
#include "sim/util/error.h"
#include "sim/util/json_file.h"
#include "sim/util/sha256.h"
#include "sim/util/suggest.h"
#include "sim/util/temporary_files.h"

#ifndef CLUSTERSIM_VERSION
#define CLUSTERSIM_VERSION "0.0.0"
#endif

namespace clustersim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kSpecKeys =
    "traces, clusters, policies, placements, params, load_factor, seeds, runtime_model, format, "
    "hardware, interval, preemption_cost, stop_time, models, on_no_fit, no_departures, inflate, "
    "no_host_demands, autoscaler, defrag";

// The most runs a spec may expand to: each is a database file in --out (a million runs of even
// the tiny test trace take some 60 GB), and the expansion is held in memory.
constexpr size_t kMaxSweepRuns = 1'000'000;

// Index width in file names: at least 4 digits, more for larger sweeps, so names sort by index.
int IndexDigits(size_t count) {
  int digits = 4;
  for (size_t limit = 10000; count > limit; limit *= 10) ++digits;
  return digits;
}

std::string FormatNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

// Writes `text` to `path` through a temporary sibling renamed into place (several shards may
// write the same manifest at once; each rename is atomic and their contents are equal).
void WriteFileAtomically(const std::string& path, const std::string& text) {
  char host[256] = "host";
  ::gethostname(host, sizeof host - 1);
  const std::string temporary =
      path + ".tmp-" + std::string(host) + "-" + std::to_string(::getpid());
  const RemoveOnSignal remove_on_signal(temporary);
  {
    std::ofstream out(temporary, std::ios::binary);
    out << text;
    if (!out.flush()) throw InputError(temporary, 0, 0, "cannot write file");
  }
  std::error_code ec;
  fs::rename(temporary, path, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw InputError(path, 0, 0, "cannot write file");
  }
}

}  // namespace

SweepSpec LoadSweepSpec(const std::string& path) try {
  const json doc = ParseJsonFile(path);
  if (!doc.is_object()) throw InputError(path, 0, 0, "expected a JSON object (a sweep spec)");
  static const std::set<std::string> kKnown = {
      "traces",    "clusters",      "policies",  "placements",    "params",   "load_factor",
      "seeds",     "runtime_model", "format",    "hardware",      "interval", "preemption_cost",
      "stop_time", "models",        "on_no_fit", "no_departures", "inflate",  "no_host_demands",
      "autoscaler", "defrag"};
  for (const auto& [key, value] : doc.items()) {
    if (key == "load_factors") {
      // Its factors multiplied the gaps between arrivals; load_factor's multiply the arrival
      // rate. Refused rather than read with the opposite meaning.
      std::string instead;
      if (value.is_array()) {
        for (const json& v : value) {
          if (!v.is_number() || !(v.get<double>() > 0)) {
            instead.clear();
            break;
          }
          char buffer[32];
          std::snprintf(buffer, sizeof buffer, "%.6g", 1 / v.get<double>());
          instead += (instead.empty() ? "" : ", ") + std::string(buffer);
        }
      }
      throw JsonValueError(path, key,
                           "was removed: its factors multiplied the gaps between arrivals (0.5 "
                           "meant twice the load). Use \"load_factor\": [" +
                               (instead.empty() ? std::string("1/F, ...") : instead) +
                               "], whose factors multiply the arrival rate (larger is heavier)");
    }
    if (!kKnown.count(key)) {
      throw JsonValueError::Verbatim(
          path, key,
          "unknown key \"" + key + "\"" +
              DidYouMean(key, std::vector<std::string>(kKnown.begin(), kKnown.end())) +
              "; expected " + kSpecKeys);
    }
  }
  // A list: missing = the default; present = a non-empty array without repeated entries (or,
  // where `scalar_ok`, one value standing for a list of it).
  auto list = [&](const char* key, json fallback, bool scalar_ok = false) {
    if (!doc.contains(key)) return fallback;
    const json& value = doc[key];
    if (scalar_ok && !value.is_array()) return json::array({value});
    if (!value.is_array() || value.empty()) {
      throw JsonValueError(path, key, "expected a non-empty list");
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < value.size(); ++i) {
      if (!seen.insert(value[i].dump()).second) {
        throw JsonValueError(path, std::string(key) + "[" + std::to_string(i) + "]",
                             value[i].dump() + " is listed twice");
      }
    }
    return value;
  };
  auto where = [](const char* key, size_t i) {
    return std::string(key) + "[" + std::to_string(i) + "]";
  };
  auto strings = [&](const char* key, json fallback) {
    std::vector<std::string> out;
    const json values = list(key, std::move(fallback));
    for (size_t i = 0; i < values.size(); ++i) {
      out.push_back(RequireString(values[i], path, where(key, i)));
      if (out.back().empty()) throw JsonValueError(path, where(key, i), "expected a name");
    }
    return out;
  };
  if (!doc.contains("traces")) {
    throw JsonValueError(path, "traces", "missing; expected a non-empty list of trace files");
  }
  const std::vector<std::string> traces = strings("traces", json::array());
  const std::vector<std::string> clusters = strings("clusters", json::array({"default"}));
  const std::vector<std::string> policies = strings("policies", json::array({"fcfs"}));
  const std::vector<std::string> placements = strings("placements", json::array({"first-fit"}));
  for (size_t i = 0; i < policies.size(); ++i) {
    try {
      FindPolicy(policies[i]);
    } catch (const InputError& e) {
      throw JsonValueError(path, where("policies", i), e.what());
    }
  }
  for (size_t i = 0; i < placements.size(); ++i) {
    try {
      FindPlacement(placements[i]);
    } catch (const InputError& e) {
      throw JsonValueError(path, where("placements", i), e.what());
    }
  }
  std::vector<double> loads;
  {
    const json values = list("load_factor", json::array({1.0}), /*scalar_ok=*/true);
    const bool is_list = doc.contains("load_factor") && doc["load_factor"].is_array();
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string at = is_list ? where("load_factor", i) : "load_factor";
      const double load = RequireNumber(values[i], path, at);
      if (!(load > 0) || !std::isfinite(load)) {
        throw JsonValueError(path, at, "expected a number > 0 (2 = twice the arrival rate)");
      }
      loads.push_back(load);
    }
  }
  std::vector<int64_t> seeds;
  {
    const json values = list("seeds", json::array({0}));
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i].is_number_integer()) {
        throw JsonValueError(path, where("seeds", i), "expected an integer");
      }
      seeds.push_back(values[i].get<int64_t>());
    }
  }
  std::vector<std::map<std::string, std::string>> param_sets;
  {
    const json values = list("params", json::array({json::object()}));
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i].is_object()) {
        throw JsonValueError(path, where("params", i), "expected an object of key: value");
      }
      std::map<std::string, std::string> set;
      for (const auto& [key, value] : values[i].items()) {
        if (!value.is_string() && !value.is_number() && !value.is_boolean()) {
          throw JsonValueError(path, where("params", i) + "." + key,
                               "expected a string, number or boolean");
        }
        // A NAME:key scope must name a policy or placement of the spec (app/param_scopes.h).
        if (const std::string problem = ParamScopeProblem(key, policies, placements);
            !problem.empty()) {
          throw JsonValueError(path, where("params", i) + "." + key, problem);
        }
        set[key] = value.is_string() ? value.get<std::string>() : value.dump();
      }
      param_sets.push_back(std::move(set));
    }
  }
  auto text = [&](const char* key) {
    return doc.contains(key) ? RequireString(doc[key], path, key) : std::string();
  };
  auto duration = [&](const char* key, double fallback) {
    return doc.contains(key) ? RequireDuration(doc[key], path, key) : fallback;
  };
  const std::string runtime_model = text("runtime_model");
  // The autoscaler of every run (docs/autoscaling.md), checked now like policies.
  const std::string autoscaler = doc.contains("autoscaler") ? text("autoscaler") : "none";
  try {
    FindAutoscaler(autoscaler);
  } catch (const InputError& e) {
    throw JsonValueError(path, "autoscaler", e.what());
  }
  const std::string format = text("format");
  const std::string hardware = text("hardware");
  EngineOptions engine;
  engine.timeseries_interval_seconds = duration("interval", engine.timeseries_interval_seconds);
  engine.preemption_cost_seconds = duration("preemption_cost", kDefaultPreemptionCostSeconds);
  const double stop_time = duration("stop_time", -1);
  if (!(engine.timeseries_interval_seconds > 0)) {
    throw JsonValueError(path, "interval", "expected a positive number of seconds");
  }
  if (engine.preemption_cost_seconds < 0) {
    throw JsonValueError(path, "preemption_cost", "expected a number of seconds >= 0");
  }
  if (doc.contains("stop_time")) {
    if (!(stop_time > 0)) throw JsonValueError(path, "stop_time", "expected seconds > 0");
    engine.stop_time = stop_time;
  }
  // Arrival-only placement and trace transforms for every run
  // (docs/engine.md#arrival-only-placement).
  if (doc.contains("on_no_fit")) {
    const std::optional<bool> skip =
        SkipNoFitFromName(RequireString(doc["on_no_fit"], path, "on_no_fit"));
    if (!skip) {
      throw JsonValueError(
          path, "on_no_fit",
          "expected wait or skip" +
              DidYouMean(RequireString(doc["on_no_fit"], path, "on_no_fit"), {"wait", "skip"}));
    }
    engine.skip_no_fit = *skip;
  }
  auto flag_of = [&](const char* key) {
    if (!doc.contains(key)) return false;
    if (!doc[key].is_boolean()) throw JsonValueError(path, key, "expected true or false");
    return doc[key].get<bool>();
  };
  engine.no_departures = flag_of("no_departures");
  engine.defrag = flag_of("defrag");  // docs/defragmentation.md
  const bool no_host_demands = flag_of("no_host_demands");
  double inflate = 0;
  if (doc.contains("inflate")) {
    inflate = RequireNumber(doc["inflate"], path, "inflate");
    if (!(inflate > 0) || !std::isfinite(inflate)) {
      throw JsonValueError(path, "inflate", "expected a factor > 0 (1.3 = 130 % of the GPUs)");
    }
  }
  // Model-aware settings for every run of the sweep: an object with any of model_aware,
  // assign_models (booleans), models (catalog path), oom_startup, oom_retries, colocation_speed,
  // storage_gbps, user_batches, batch_choice, as the run options of the same names.
  ModelConfig models;
  if (doc.contains("models")) {
    const json& m = doc["models"];
    if (!m.is_object()) throw JsonValueError(path, "models", "expected an object");
    for (auto it = m.begin(); it != m.end(); ++it) {
      const std::string& key = it.key();
      const json& value = it.value();  // not a structured binding: lambdas capture it
      const std::string where = "models." + key;
      auto flag = [&] {
        if (!value.is_boolean()) throw JsonValueError(path, where, "expected true or false");
        return value.get<bool>();
      };
      if (key == "model_aware") {
        models.enabled = flag();
      } else if (key == "assign_models") {
        models.assign = flag();
      } else if (key == "models") {
        models.catalog_path = RequireString(value, path, where);
      } else if (key == "oom_startup") {
        models.options.oom_startup_seconds = RequireDuration(value, path, where);
      } else if (key == "oom_retries") {
        if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > 64) {
          throw JsonValueError(path, where, "expected an integer in 0..64");
        }
        models.options.oom_retries = static_cast<int>(value.get<int64_t>());
      } else if (key == "colocation_speed") {
        models.options.colocation_speed = RequireNumber(value, path, where);
      } else if (key == "user_batches" || key == "batch_choice") {
        if (!value.is_string()) throw InputError(path, 0, 0, where + ": expected a string");
        (key == "user_batches" ? models.user_batches : models.batch_choice) =
            value.get<std::string>();
      } else if (key == "storage_gbps") {
        models.options.storage_gbps = RequireNumber(value, path, where);
      } else {
        throw JsonValueError::Verbatim(
            path, where,
            "unknown key \"" + where + "\"" +
                DidYouMean(key,
                           {"model_aware", "assign_models", "models", "oom_startup", "oom_retries",
                            "colocation_speed", "storage_gbps", "user_batches", "batch_choice"}) +
                "; expected model_aware, assign_models, models, oom_startup, "
                "oom_retries, colocation_speed, storage_gbps, user_batches, batch_choice");
      }
    }
  }

  // Relative paths are relative to the spec's folder, so a spec and its inputs move together.
  const fs::path folder = fs::path(path).parent_path();
  auto resolve = [&](const std::string& p) {
    if (p.empty() || fs::path(p).is_absolute() || folder.empty()) return p;
    return (folder / p).lexically_normal().string();
  };
  auto resolve_cluster = [&](const std::string& c) {
    return ClusterSpec::PresetText(c).empty() ? resolve(c) : c;
  };

  // An absurd cross product is refused before it is expanded (each run is a database file).
  double product = 1;
  for (const size_t n : {traces.size(), clusters.size(), policies.size(), placements.size(),
                         param_sets.size(), loads.size(), seeds.size()}) {
    product *= static_cast<double>(n);
  }
  if (product > kMaxSweepRuns) {
    char count[32];
    std::snprintf(count, sizeof count, "%.3g", product);
    throw InputError(
        path, 0, 0,
        std::string("the spec expands to ") + count +
            " runs (traces x clusters x "
            "policies x placements x params x load_factor x seeds): expected at most " +
            std::to_string(kMaxSweepRuns) + "; split it into several sweeps");
  }
  SweepSpec spec;
  spec.path = path;
  std::set<std::string> keys;
  for (const std::string& trace : traces) {
    for (const std::string& cluster : clusters) {
      for (const std::string& policy : policies) {
        for (const std::string& placement : placements) {
          for (const auto& given : param_sets) {
            for (const double load : loads) {
              for (const int64_t seed : seeds) {
                SweepRun run;
                run.config.trace_path = resolve(trace);
                run.config.trace_format = format;
                run.config.cluster = resolve_cluster(cluster);
                run.config.hardware_path = resolve(hardware);
                run.config.policy = policy;
                run.config.placement = placement;
                run.config.runtime_model = runtime_model;
                run.config.autoscaler = autoscaler;
                run.config.params = ParamsForRun(given, policy, placement);
                run.config.filter.load_factor = load;
                run.config.filter.inflate = inflate;
                run.config.filter.drop_host_demands = no_host_demands;
                run.config.seed = seed;
                run.config.engine = engine;
                run.config.models = models;
                run.config.models.catalog_path = resolve(models.catalog_path);
                json key = {
                    {"trace", trace},
                    {"cluster", cluster},
                    {"policy", policy},
                    {"placement", placement},
                    {"params", run.config.params.values()},
                    {"load_factor", load},
                    {"seed", seed},
                    {"runtime_model", runtime_model},
                    {"format", format},
                    {"hardware", hardware},
                    {"interval", engine.timeseries_interval_seconds},
                    {"preemption_cost", engine.preemption_cost_seconds},
                    {"stop_time", doc.contains("stop_time") ? json(stop_time) : json()}};
                // Only when given, so the keys (and file names) of earlier sweeps stay the same.
                if (doc.contains("models")) key["models"] = doc["models"];
                for (const char* k :
                     {"on_no_fit", "no_departures", "inflate", "no_host_demands", "autoscaler", "defrag"}) {
                  if (doc.contains(k)) key[k] = doc[k];
                }
                run.key_json = key.dump();
                // A parameter scoped to another policy can make two combinations the same run:
                // it is listed once.
                if (!keys.insert(run.key_json).second) continue;
                run.label = fs::path(trace).filename().string() + " x " +
                            fs::path(cluster).filename().string() + " " + policy + "/" + placement +
                            " load " + FormatNumber(load) + " seed " + std::to_string(seed);
                if (!run.config.params.values().empty()) {
                  run.label += " " + run.config.params.ToJson();
                }
                run.index = spec.runs.size();
                spec.runs.push_back(std::move(run));
              }
            }
          }
        }
      }
    }
  }
  const int digits = IndexDigits(spec.runs.size());
  for (SweepRun& run : spec.runs) {
    char name[64];
    std::snprintf(name, sizeof name, "run-%0*zu-%s.sqlite", digits, run.index,
                  Sha256Hex(run.key_json).substr(0, 8).c_str());
    run.file_name = name;
  }
  return spec;
} catch (const JsonValueError& e) {
  throw AtJsonPosition(e, path, ReadFileText(path));
}

Shard ParseShard(const std::string& text) {
  Shard shard;
  const size_t slash = text.find('/');
  size_t end_index = 0;
  size_t end_count = 0;
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    shard.index = std::stoi(text.substr(0, slash), &end_index);
    shard.count = std::stoi(text.substr(slash + 1), &end_count);
  } catch (const std::exception&) {
    throw InputError("--shard " + text + ": expected i/N, e.g. 0/4");
  }
  if (end_index != slash || end_count != text.size() - slash - 1 || shard.count < 1 ||
      shard.index < 0 || shard.index >= shard.count) {
    throw InputError("--shard " + text + ": expected i/N with 0 <= i < N, e.g. 0/4");
  }
  return shard;
}

void ParallelFor(size_t count, int jobs, const std::function<void(size_t)>& body) {
  // SQLite built without thread support would need one connection at a time: run serially.
  const size_t wanted = sqlite3_threadsafe() ? static_cast<size_t>(std::max(1, jobs)) : 1;
  const size_t threads = std::min(count, wanted);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++) body(i);
  };
  if (threads <= 1) {
    worker();
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (std::thread& thread : pool) thread.join();
}

int DefaultJobCount() { return std::max(1u, std::thread::hardware_concurrency()); }

void RecordFailedRun(const RunConfig& config, const std::string& error) {
  RunRecord record;
  record.trace_path = config.trace_path.empty() ? DefaultTracePath() : config.trace_path;
  record.trace_format = config.trace_format;
  try {
    record.trace_sha256 = Sha256OfContent(record.trace_path);
  } catch (const std::exception&) {
    // An unreadable trace is often the error itself: the hash stays empty.
  }
  record.cluster_spec = config.cluster;
  try {
    const HardwareCatalog& catalog = HardwareCatalog::Default();
    const ClusterSpec spec = ClusterSpec::Load(config.cluster, catalog);
    record.cluster_spec = spec.origin;
    record.cluster_sha256 = Sha256Hex(spec.text);
    record.cluster_json = spec.text;
  } catch (const std::exception&) {
  }
  record.policy = config.policy;
  record.placement = config.placement;
  record.params_json = config.params.ToJson();
  record.runtime_model = config.runtime_model;
  record.seed = config.seed;
  record.version = CLUSTERSIM_VERSION;
  record.status = "failed";
  record.error = error;
  record.timeseries_interval_seconds = config.engine.timeseries_interval_seconds;
  record.preemption_cost_seconds = config.engine.preemption_cost_seconds;
  record.trace_filter = config.filter.ToJson();
  record.models = config.models.ToJson(config.seed);
  SqliteWriter writer(config.out);
  writer.WriteRunWithoutRows(record);
  writer.Commit();
}

SweepReport RunSweep(const SweepSpec& spec, const SweepOptions& options) {
  std::error_code ec;
  fs::create_directories(options.out_dir, ec);
  if (ec || !fs::is_directory(options.out_dir)) {
    throw InputError(options.out_dir, 0, 0, "cannot create the output directory");
  }
  {
    json manifest = {{"spec", spec.path}, {"runs", json::array()}};
    for (const SweepRun& run : spec.runs) {
      manifest["runs"].push_back(
          {{"index", run.index}, {"file", run.file_name}, {"key", json::parse(run.key_json)}});
    }
    WriteFileAtomically((fs::path(options.out_dir) / "sweep.json").string(),
                        manifest.dump(2) + "\n");
  }

  SweepReport report;
  std::set<std::string> selected;
  for (const SweepRun& run : spec.runs) {
    if (options.shard.Contains(run.index)) selected.insert(run.file_name);
  }
  // Temporary files left by writers that were killed ("<file>.tmp-<pid>"): this shard alone owns
  // its runs' names, so they can go.
  for (const auto& entry : fs::directory_iterator(options.out_dir, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t mark = name.find(".tmp-");
    if (mark != std::string::npos && selected.count(name.substr(0, mark))) {
      fs::remove(entry.path(), ec);
    }
  }
  std::vector<const SweepRun*> todo;
  for (const SweepRun& run : spec.runs) {
    if (!options.shard.Contains(run.index)) continue;
    ++report.in_shard;
    const fs::path file = fs::path(options.out_dir) / run.file_name;
    if (fs::exists(file)) {
      bool complete = false;
      try {
        complete = ReadRunStatuses(file.string()) == std::vector<std::string>{"complete"};
      } catch (const InputError&) {
        // Unreadable: redo it.
      }
      if (complete) {
        ++report.skipped;
        continue;
      }
      fs::remove(file, ec);
    }
    todo.push_back(&run);
  }
  std::printf("sweep %s: %zu runs, %lld in shard %d/%d, %lld already complete, %zu to run",
              spec.path.c_str(), spec.runs.size(), static_cast<long long>(report.in_shard),
              options.shard.index, options.shard.count, static_cast<long long>(report.skipped),
              todo.size());
  if (!todo.empty()) {
    std::printf(" on %zu threads", std::min<size_t>(todo.size(), std::max(1, options.jobs)));
  }
  std::printf("\n");
  std::fflush(stdout);

  std::mutex mutex;  // guards report and the finished count
  size_t finished = 0;
  BatchProgress progress("runs", todo.size(), options.progress, false, "clustersim sweep");
  ParallelFor(todo.size(), options.jobs, [&](size_t k) {
    const SweepRun& run = *todo[k];
    if (options.interrupt && options.interrupt->load()) {
      std::lock_guard<std::mutex> lock(mutex);
      ++report.interrupted;
      return;
    }
    RunConfig config = run.config;
    config.out = (fs::path(options.out_dir) / run.file_name).string();
    config.engine.interrupt = options.interrupt;
    const int slot = progress.Begin();
    if (progress.enabled()) {
      config.engine.progress = [&progress, slot](const EngineProgress& p) {
        progress.Update(slot, p.jobs_total ? double(p.jobs_done) / p.jobs_total : 1.0);
      };
    }
    const auto start = std::chrono::steady_clock::now();
    std::string status;
    std::string error;
    std::vector<std::string> warnings;
    try {
      const RunOutcome outcome = ExecuteRun(config);
      warnings = outcome.warnings;
      if (outcome.status == RunStatus::kComplete) {
        status = "complete";
      } else {
        // A sweep directory holds complete or failed runs only; resume redoes this one.
        std::error_code remove_error;
        fs::remove(config.out, remove_error);
        status = "interrupted";
      }
    } catch (const std::exception& e) {
      status = "failed";
      error = e.what();
      try {
        RecordFailedRun(config, error);
      } catch (const std::exception& write_error) {
        error += std::string(" (and recording the failure failed: ") + write_error.what() + ")";
      }
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string line;
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++finished;
      if (status == "complete") ++report.complete;
      if (status == "failed") ++report.failed;
      if (status == "interrupted") ++report.interrupted;
      char head[64];
      std::snprintf(head, sizeof head, "[%zu/%zu] ", finished, todo.size());
      char tail[32];
      std::snprintf(tail, sizeof tail, " (%.2f s)", seconds);
      char padded[16];
      std::snprintf(padded, sizeof padded, "%-11s", status.c_str());
      line = head + run.file_name + " " + padded + " " + run.label + tail + "\n";
      if (!error.empty()) line += "    error: " + error + "\n";
      for (const std::string& warning : warnings) line += "    warning: " + warning + "\n";
    }
    progress.End(slot);
    progress.Print(stdout, line);
  });
  return report;
}

}  // namespace clustersim
