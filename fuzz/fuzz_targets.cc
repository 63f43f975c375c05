#include "fuzz/fuzz_targets.h"

#include <stdlib.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "app/options.h"
#include "app/param_scopes.h"
#include "app/progress.h"
#include "app/replay_options.h"
#include "app/run.h"
#include "app/sweep.h"
#include "policies/registry.h"
#include "sim/engine/runtime_model.h"
#include "sim/engine/summary.h"
#include "sim/engine/validation.h"
#include "sim/hardware/cluster.h"
#include "sim/hardware/hardware.h"
#include "sim/hardware/topology.h"
#include "sim/util/error.h"
#include "workloads/model_assignment.h"
#include "workloads/openb_cluster.h"
#include "workloads/reader.h"
#include "workloads/transforms.h"

namespace clustersim::fuzz {
namespace {

// Limits that keep one iteration fast and small. An input may legally describe a cluster of
// millions of GPUs; building it would only measure the allocator, so larger ones are parsed and
// checked but not expanded into nodes and a topology graph.
constexpr int64_t kMaxExpandedGpus = 100'000;  // Cluster objects (a vector entry per GPU)
constexpr int64_t kMaxTopologyGpus = 512;      // Boost.Graph topologies (widest paths per ring)

// A private folder for the files a target writes, made once per process (mkdtemp), removed at
// exit. The files are overwritten on every input.
class Scratch {
 public:
  Scratch() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/clustersim-fuzz-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("clustersim fuzz: mkdtemp");
      std::abort();
    }
    dir_ = pattern;
  }
  ~Scratch() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // Writes `bytes` to the file `name` and returns its path.
  std::string Write(const std::string& name, std::string_view bytes) const {
    const std::string path = Path(name);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() ||
        std::fclose(f) != 0) {
      std::perror(("clustersim fuzz: writing " + path).c_str());
      std::abort();
    }
    return path;
  }

 private:
  std::string dir_;
};

const Scratch& Dir() {
  static const Scratch scratch;
  return scratch;
}

[[noreturn]] void Finding(const std::string& what) { throw FuzzFinding(what); }

const Cluster& DefaultCluster() {
  static const Cluster cluster(ClusterSpec::Load("default", HardwareCatalog::Default()),
                               HardwareCatalog::Default());
  return cluster;
}

// What every reader promises about the jobs it returns (sim/engine/job.h, traces/README.md).
void CheckJobs(const Trace& trace) {
  double previous_submit = 0;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const Job& job = trace.jobs[i];
    const std::string where = trace.format + " job " + std::to_string(i) + " (\"" + job.id +
                              "\", line " + std::to_string(job.line) + "): ";
    if (job.id.empty()) Finding(where + "empty job id");
    if (job.line < 1) Finding(where + "line number < 1");
    if (!std::isfinite(job.submit_time) || job.submit_time < 0) {
      Finding(where + "submit_time not a finite number >= 0: " + std::to_string(job.submit_time));
    }
    if (job.submit_time < previous_submit) Finding(where + "jobs not sorted by submit_time");
    previous_submit = job.submit_time;
    if (!std::isfinite(job.duration) || job.duration < 0) {
      Finding(where + "duration not a finite number >= 0: " + std::to_string(job.duration));
    }
    if (job.gpus < 0) Finding(where + "negative GPU count " + std::to_string(job.gpus));
    if (std::isnan(job.walltime) || (job.walltime >= 0 && !std::isfinite(job.walltime))) {
      Finding(where + "walltime not finite: " + std::to_string(job.walltime));
    }
    if (job.gpu_milli < 0 || job.gpu_milli > 1000 || (job.gpu_milli > 0 && job.gpus != 1)) {
      Finding(where + "gpu_milli " + std::to_string(job.gpu_milli) + " with " +
              std::to_string(job.gpus) + " GPUs");
    }
    if (job.cpu_milli < 0) Finding(where + "negative cpu_milli");
    // A recorded time is absent (NaN) or finite; attempts lie in the trace's list.
    if (std::isinf(job.recorded_start) || std::isinf(job.recorded_end)) {
      Finding(where + "recorded start or end infinite");
    }
    if (static_cast<size_t>(job.recorded_attempt_begin) + job.recorded_attempt_count >
        trace.recorded_attempts.size()) {
      Finding(where + "recorded attempts beyond the trace's list");
    }
    if (job.batch_size < 0) Finding(where + "negative batch_size");
  }
}

// Recorded times are equal when both are absent (NaN) or both the same number.
bool SameRecorded(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// `trace convert --to native` must write a file the native reader reads back to the same jobs.
// Skipped when ids repeat: formats other than the native one allow that (the sanity report
// lists them), the native format does not.
void CheckNativeRoundTrip(const Trace& trace) {
  std::set<std::string_view> ids;
  for (const Job& job : trace.jobs) {
    if (!ids.insert(job.id).second) return;
  }
  const std::string path = Dir().Path("converted.csv");
  try {
    WriteNativeCsv(trace, path);
  } catch (const InputError&) {
    return;  // a job the native format cannot hold (a line break in a text field): refused
  }
  Trace back;
  try {
    back = LoadTrace(path, "native");
  } catch (const InputError& e) {
    Finding("the native CSV written for a " + trace.format +
            " trace does not read back: " + e.what());
  }
  if (back.jobs.size() != trace.jobs.size()) {
    Finding("native round trip: " + std::to_string(trace.jobs.size()) + " jobs became " +
            std::to_string(back.jobs.size()));
  }
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const Job& a = trace.jobs[i];
    const Job& b = back.jobs[i];
    const bool same = a.id == b.id && a.submit_time == b.submit_time && a.gpus == b.gpus &&
                      a.duration == b.duration &&
                      (a.walltime == b.walltime || (a.walltime < 0 && b.walltime < 0)) &&
                      a.gpu_type == b.gpu_type && a.user == b.user && a.vc == b.vc &&
                      a.priority == b.priority && a.model == b.model &&
                      a.batch_size == b.batch_size && a.trace_status == b.trace_status &&
                      SameRecorded(a.recorded_start, b.recorded_start) &&
                      SameRecorded(a.recorded_end, b.recorded_end);
    if (!same) {
      Finding("native round trip changed job " + std::to_string(i) + " \"" + a.id + "\" (" +
              trace.format + ") into \"" + b.id + "\"");
    }
  }
}

// Reads the trace file `path` as `format` (empty = detect) and runs everything `trace stats` and
// `trace convert` run on it.
void ReadTrace(const std::string& path, const std::string& format) {
  Trace trace;
  try {
    trace = LoadTrace(path, format);
  } catch (const InputError&) {
    return;
  }
  CheckJobs(trace);
  FormatTraceStats(ComputeTraceStats(trace));
  CheckTraceSanity(trace, &DefaultCluster()).ToText();
  CheckNativeRoundTrip(trace);
}

template <const char* kFileName, const char* kFormat>
void ReaderTarget(std::string_view input) {
  ReadTrace(Dir().Write(kFileName, input), kFormat);
}

// pai2020 reads two files: the input is the job table, then kPaiTaskTableMarker, then the task
// table (no marker: an empty task table).
void Pai2020Target(std::string_view input) {
  const size_t at = input.find(kPaiTaskTableMarker);
  const std::string_view jobs = input.substr(0, at);
  const std::string_view tasks = at == std::string_view::npos
                                     ? std::string_view()
                                     : input.substr(at + kPaiTaskTableMarker.size());
  Dir().Write("pai_task_table.csv", tasks);
  ReadTrace(Dir().Write("pai_job_table.csv", jobs), "pai2020");
}

// Auto-detection looks at the file name too (.json, pai_job_table.csv): the first byte of the
// input picks one (its low two bits), the rest is the file.
void AutodetectTarget(std::string_view input) {
  static const char* const kNames[] = {"trace.csv", "trace.json", "pai_job_table.csv", "trace.swf"};
  if (input.empty()) return;
  const std::string name = kNames[static_cast<unsigned char>(input[0]) & 3];
  Dir().Write("pai_task_table.csv", "");
  ReadTrace(Dir().Write(name, input.substr(1)), "");
}

int64_t TotalGpus(const ClusterSpec& spec) {
  int64_t total = 0;
  for (const NodeGroupSpec& g : spec.groups) total += int64_t{g.node_count()} * g.gpus_per_node;
  return total;
}

// Expands a parsed spec as `run` and `cluster show` do, within the size limits above: nodes and
// GPUs, then the topology and the ring bandwidth of one whole node per group.
void ExpandCluster(const ClusterSpec& spec, const HardwareCatalog& catalog) {
  const int64_t total = TotalGpus(spec);
  if (total <= 0) Finding("a cluster spec with no GPUs was accepted");
  if (total > kMaxExpandedGpus) return;
  const Cluster cluster(spec, catalog);
  if (cluster.total_gpus() != total) Finding("cluster GPU count differs from its spec");
  if (total > kMaxTopologyGpus) return;
  const Topology topology(cluster);
  int first_node = 0;
  for (const NodeGroupSpec& group : spec.groups) {
    const Node& node = cluster.node(first_node);
    std::vector<int> gpus;
    for (int i = 0; i < node.gpu_count; ++i) gpus.push_back(node.first_gpu + i);
    const double gbps = topology.RingBandwidthGbps(gpus);
    if (gpus.size() >= 2 && !(std::isfinite(gbps) && gbps > 0)) {
      Finding("ring bandwidth of a " + std::to_string(gpus.size()) + "-GPU " + group.gpu_type +
              " node is " + std::to_string(gbps));
    }
    first_node += group.node_count();
  }
}

void OpenbNodesTarget(std::string_view input) {
  const std::string path = Dir().Write("openb_node_list.csv", input);
  OpenbClusterResult result;
  try {
    result = OpenbNodeListToClusterSpec(path, {{"G2", "A100-40GB"}, {"G3", "V100-32GB"}},
                                        HardwareCatalog::Default());
  } catch (const InputError&) {
    return;
  }
  // `trace cluster-from` writes this spec for `run --cluster`: it must load.
  ClusterSpec spec;
  try {
    spec = ClusterSpec::FromJsonText(result.spec_json, "cluster-from output",
                                     HardwareCatalog::Default());
  } catch (const InputError& e) {
    Finding(std::string("the spec cluster-from wrote does not load: ") + e.what());
  }
  if (TotalGpus(spec) != result.gpus) Finding("cluster-from GPU count differs from its spec");
  ExpandCluster(spec, HardwareCatalog::Default());
}

void ClusterSpecTarget(std::string_view input) {
  ClusterSpec spec;
  try {
    spec =
        ClusterSpec::FromJsonText(std::string(input), "cluster.json", HardwareCatalog::Default());
  } catch (const InputError&) {
    return;
  }
  ExpandCluster(spec, HardwareCatalog::Default());
}

// A catalog is loaded, then every GPU type (the first 16) is used in a cluster of one 8-GPU node
// of its default topology, as a spec naming it would.
void HardwareCatalogTarget(std::string_view input) {
  HardwareCatalog catalog;
  try {
    catalog = HardwareCatalog::FromJsonText(std::string(input), "gpus.json");
  } catch (const InputError&) {
    return;
  }
  if (catalog.gpus().empty() || !catalog.Find(catalog.reference())) {
    Finding("a catalog without its reference type was accepted");
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t i = 0; i < catalog.gpus().size() && i < 16; ++i) {
    nodes.push_back({{"count", 1}, {"gpu_type", catalog.gpus()[i].name}, {"gpus_per_node", 8}});
  }
  ClusterSpec spec;
  try {
    spec = ClusterSpec::FromJsonText(nlohmann::json{{"nodes", nodes}}.dump(), "cluster", catalog);
  } catch (const InputError& e) {
    Finding(std::string("a cluster of the catalog's own types does not load: ") + e.what());
  }
  ExpandCluster(spec, catalog);
}

// A run config as `run --config` applies it, then checked as `run` checks options, with the
// policy and placement built from its names and params (the files it names are not opened).
void RunConfigTarget(std::string_view input) {
  const std::string path = Dir().Write("run.json", input);
  RunConfig config;
  try {
    ApplyRunConfigFile(path, {}, &config);
    const PolicyEntry& policy = FindPolicy(config.policy);
    const PlacementEntry& placement = FindPlacement(config.placement);
    static const Cluster& cluster = DefaultCluster();
    static const Topology topology(cluster);
    const std::string runtime_name = config.runtime_model.empty() ? "trace" : config.runtime_model;
    const auto runtime = MakeRuntimeModel(runtime_name, cluster, topology);
    placement.make(PlacementEnv{&cluster, &topology, runtime.get()}, config.params);
    policy.make(config.params);
    config.params.RejectUnused("policy " + config.policy + " with placement " + config.placement);
  } catch (const InputError&) {
    return;
  }
}

// Keeps a fuzzed run config from opening files: a cluster that is not a preset becomes the
// default preset, and the catalogs, model catalog and failure trace go (a fuzzed path may name
// /dev/zero, which never ends).
void KeepToPresets(RunConfig* config) {
  if (ClusterSpec::PresetText(config->cluster).empty()) config->cluster = "default";
  config->cluster_json.clear();
  config->hardware_path.clear();
  config->models.catalog_path.clear();
  config->failure_trace.clear();
  config->trace_path.clear();
}

// Command-line words, one per line (the first the command: run, compare or validate): parsed by
// the option groups every replaying command shares (app/replay_options.h) with --trace, --policy
// or --policies, --placement(s), --runtime-model, --param, --out, --mkdir and the progress
// options, then checked as the commands check them before any work: option values, filters,
// progress, --param scopes against the runs' policies and placements, and every run's settings
// against its cluster (CheckRunConfig; files are not opened, KeepToPresets). Boost's own errors
// (a missing or malformed value) are expected outcomes, as InputError is: main answers both with
// exit code 2.
void OptionsTarget(std::string_view input) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start <= input.size() && words.size() < 64) {
    const size_t end = std::min(input.find('\n', start), input.size());
    words.emplace_back(input.substr(start, end - start));
    start = end + 1;
  }
  if (words.empty()) return;
  const std::string command = words.front();
  words.erase(words.begin());
  if (command != "run" && command != "compare" && command != "validate") return;
  RunConfig config;
  FilterArgs filter_args;
  ProgressOptions progress;
  std::vector<std::string> params;
  std::string policies = "fcfs", placements = "first-fit";
  bool mkdir = false;
  namespace po = boost::program_options;
  po::options_description desc;
  desc.add_options()("trace", po::value(&config.trace_path))(
      command == "compare" ? "policies" : "policy", po::value(&policies))(
      command == "compare" ? "placements" : "placement", po::value(&placements))(
      "runtime-model", po::value(&config.runtime_model))("param", po::value(&params)->composing())(
      "out", po::value(&config.out))("mkdir", po::bool_switch(&mkdir));
  AddProgressOptions(desc, &progress);
  AddReplayOptions(desc, config);
  AddFilterOptions(desc, filter_args);
  AddModelOptions(desc, config.models);
  try {
    po::variables_map vm;
    StoreOptions(words, desc, &vm, command);
    po::notify(vm);
    CheckReplayOptions(config);
    config.filter = MakeFilter(filter_args);
    ResolveProgress(progress, false);
    const std::map<std::string, std::string> given = ParseParamOptions(params);
    std::vector<std::string> policy_names, placement_names;
    for (const auto& [text, names] :
         {std::pair{&policies, &policy_names}, std::pair{&placements, &placement_names}}) {
      std::string rest = *text;
      while (!rest.empty() && names->size() < 8) {
        const size_t comma = std::min(rest.find(','), rest.size());
        names->push_back(rest.substr(0, comma));
        rest = comma < rest.size() ? rest.substr(comma + 1) : "";
      }
    }
    if (policy_names.empty() || placement_names.empty()) return;
    CheckParamScopes(given, policy_names, placement_names, "--param");
    KeepToPresets(&config);
    config.validate = command == "validate";
    for (const std::string& policy : policy_names) {
      for (const std::string& placement : placement_names) {
        RunConfig run = config;
        run.policy = policy;
        run.placement = placement;
        run.params = ParamsForRun(given, policy, placement);
        CheckRunConfig(run);
      }
    }
  } catch (const InputError&) {
    return;
  } catch (const boost::program_options::error&) {
    return;
  }
}

// A sweep spec, loaded and expanded (the traces and cluster files it names are not opened until
// runs execute): indices, keys and file names must be unique, every key must parse back, and a
// run's parameters must name none of another policy's scopes.
void SweepSpecTarget(std::string_view input) {
  const std::string path = Dir().Write("spec.json", input);
  SweepSpec spec;
  try {
    spec = LoadSweepSpec(path);
  } catch (const InputError&) {
    return;
  }
  std::set<std::string> keys, files;
  for (size_t i = 0; i < spec.runs.size(); ++i) {
    const SweepRun& run = spec.runs[i];
    if (run.index != i)
      Finding("sweep run " + std::to_string(i) + " has index " + std::to_string(run.index));
    if (!keys.insert(run.key_json).second) Finding("two sweep runs share the key " + run.key_json);
    if (!files.insert(run.file_name).second) Finding("two sweep runs share " + run.file_name);
    if (nlohmann::json::parse(run.key_json, nullptr, false).is_discarded()) {
      Finding("a sweep run's key is not JSON: " + run.key_json);
    }
    for (const auto& [key, value] : run.config.params.values()) {
      if (key.find(':') != std::string::npos) Finding("a scoped key reached a run: " + key);
    }
  }
}

// The Python module's clustersim.run(**kwargs) as its C++ side sees them: a JSON object of
// keyword arguments routed as python/clustersim/_run.py routes them (trace filter options to
// command-line words, the rest to a run config file), then checked as a run checks them before
// its trace is read (files are not opened, KeepToPresets).
void PythonArgsTarget(std::string_view input) {
  const nlohmann::json kwargs = nlohmann::json::parse(input, nullptr, false);
  if (!kwargs.is_object()) return;
  static const std::set<std::string> filters = [] {
    FilterArgs args;
    boost::program_options::options_description desc;
    AddFilterOptions(desc, args);
    std::set<std::string> names;
    for (const auto& option : desc.options()) names.insert(option->long_name());
    return names;
  }();
  nlohmann::json config = nlohmann::json::object();
  std::vector<std::string> filter_args;
  for (const auto& [key, value] : kwargs.items()) {
    std::string option = key;
    std::replace(option.begin(), option.end(), '_', '-');
    if (key == "check" || key == "allow_duplicate") continue;
    if (filters.count(option)) {
      std::string text;
      if (value.is_array()) {
        for (const auto& v : value) {
          text += (text.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
        }
      } else {
        text = value.is_string() ? value.get<std::string>() : value.dump();
      }
      filter_args.push_back("--" + option + "=" + text);
    } else {
      config[key] = value;
    }
  }
  const std::string path = Dir().Write("kwargs.json", config.dump());
  try {
    RunConfig run;
    ApplyRunConfigFile(path, {}, &run);
    FilterArgs args;
    boost::program_options::options_description desc;
    AddFilterOptions(desc, args);
    boost::program_options::variables_map vm;
    StoreOptions(filter_args, desc, &vm, "run");
    boost::program_options::notify(vm);
    run.filter = MakeFilter(args);
    KeepToPresets(&run);
    CheckRunConfig(run);
  } catch (const InputError&) {
    return;
  } catch (const boost::program_options::error&) {
    return;
  }
}

// A whole simulation of a fuzzed native trace: the first byte picks the policy, the second the
// placement, the runtime model and whether the run is model-aware (models and batches assigned,
// memory, OOM retries, shares, model-sized checkpoints), the rest is the CSV. One input stays fast:
// at most kMaxSimulatedJobs jobs are kept, and the clock stops at kMaxSimulatedSeconds (as --until
// does), because a round-based policy (gavel, cosched) fires a timer every round while a job runs,
// and a fuzzed duration of 1e19 s would take the clock to the timeseries' limit (a million
// intervals, 3e8 s) through 800,000 rounds, each checked with --check (tens of seconds under the
// sanitizers). Run on the default heterogeneous preset (four GPU types) with --check, so a broken
// engine invariant or an invalid policy decision (InternalError) is a finding; an InputError (a
// job naming an unknown GPU type) is an expected outcome.
constexpr size_t kMaxSimulatedJobs = 200;
constexpr double kMaxSimulatedSeconds = 1e6;  // 11.6 days

void SimulateTarget(std::string_view input) {
  if (input.size() < 2) return;
  const std::vector<const PolicyEntry*> policies = Policies();
  const std::vector<const PlacementEntry*> placements = Placements();
  const PolicyEntry& policy_entry =
      *policies[static_cast<unsigned char>(input[0]) % policies.size()];
  const unsigned char second = static_cast<unsigned char>(input[1]);
  const PlacementEntry& placement_entry = *placements[second % placements.size()];
  const char* runtime_name = (second / placements.size()) % 2 ? "hardware" : "trace";
  const bool model_aware = (second / placements.size() / 2) % 2;
  Trace trace;
  try {
    trace = LoadTrace(Dir().Write("trace.csv", input.substr(2)), "native");
  } catch (const InputError&) {
    return;
  }
  CheckJobs(trace);
  if (trace.jobs.size() > kMaxSimulatedJobs) trace.jobs.resize(kMaxSimulatedJobs);
  const Cluster& cluster = DefaultCluster();
  static const Topology topology(cluster);
  try {
    const auto runtime = MakeRuntimeModel(runtime_name, cluster, topology);
    const Params params;
    const auto placement =
        placement_entry.make(PlacementEnv{&cluster, &topology, runtime.get()}, params);
    const auto policy = policy_entry.make(params);
    EngineOptions options;
    options.check_invariants = true;
    options.record_allocations = true;  // --check then verifies the allocation log too
    options.stop_time = kMaxSimulatedSeconds;
    std::unique_ptr<ModelRuntime> models;
    if (model_aware) {
      AssignModels(trace.jobs, second);
      ModelRuntimeOptions model_options;
      model_options.storage_gbps = 1;
      models = std::make_unique<ModelRuntime>(trace, cluster.catalog(), ModelCatalog::Default(),
                                              model_options);
      options.models = models.get();
    }
    Engine engine(trace, cluster, *placement, *runtime, *policy, policy_entry.name, options);
    engine.Run();
    ComputeSummary(engine);
    // A trace with a recorded schedule (the native recorded_start / recorded_end columns) is
    // compared with it, as `clustersim validate` does.
    const bool recorded = std::any_of(trace.jobs.begin(), trace.jobs.end(), [](const Job& job) {
      return job.has_recorded_start() || job.has_recorded_end();
    });
    if (recorded) ComputeValidation(engine, 300);
  } catch (const InputError&) {
    return;
  }
}

constexpr char kCsv[] = "trace.csv";
constexpr char kJson[] = "trace.json";
constexpr char kSwfName[] = "trace.swf";
constexpr char kPhillyJsonName[] = "cluster_job_log";
constexpr char kNative[] = "native";
constexpr char kNativeJson[] = "native-json";
constexpr char kPhillyCsv[] = "philly-csv";
constexpr char kPhillyJson[] = "philly-json";
constexpr char kHelios[] = "helios";
constexpr char kAcme[] = "acme";
constexpr char kOpenb[] = "openb";
constexpr char kSwf[] = "swf";
constexpr char kSacctName[] = "sacct.txt";
constexpr char kSacct[] = "sacct";

}  // namespace

const std::vector<FuzzTarget>& FuzzTargets() {
  static const std::vector<FuzzTarget> targets = {
      {"native-csv", "a native CSV trace, read as native", ReaderTarget<kCsv, kNative>},
      {"native-json", "a native JSON trace, read as native-json", ReaderTarget<kJson, kNativeJson>},
      {"philly-csv", "a derived Philly CSV, read as philly-csv", ReaderTarget<kCsv, kPhillyCsv>},
      {"philly-json", "a Philly cluster_job_log, read as philly-json",
       ReaderTarget<kPhillyJsonName, kPhillyJson>},
      {"helios", "a Helios cluster_log.csv, read as helios", ReaderTarget<kCsv, kHelios>},
      {"acme", "an Acme trace_*.csv, read as acme", ReaderTarget<kCsv, kAcme>},
      {"pai2020", "a PAI 2020 job table, the marker line, its task table; read as pai2020",
       Pai2020Target},
      {"openb", "an openb pod list, read as openb", ReaderTarget<kCsv, kOpenb>},
      {"openb-nodes", "an openb node list, through trace cluster-from, loaded back as a cluster",
       OpenbNodesTarget},
      {"swf", "a Standard Workload Format log, read as swf", ReaderTarget<kSwfName, kSwf>},
      {"sacct", "Slurm sacct -P output, read as sacct", ReaderTarget<kSacctName, kSacct>},
      {"autodetect", "a file-name selector byte, then any trace, format detected",
       AutodetectTarget},
      {"cluster-spec", "a cluster spec JSON, loaded and expanded", ClusterSpecTarget},
      {"hardware-catalog", "a hardware catalog JSON, loaded and used", HardwareCatalogTarget},
      {"run-config", "a run config JSON, applied, with its policy and placement built",
       RunConfigTarget},
      {"simulate", "a policy byte, a placement byte, a native CSV trace; simulated with --check",
       SimulateTarget},
      {"options",
       "a command (run, compare, validate) and its options, one word per line; parsed "
       "and checked as the command checks them",
       OptionsTarget},
      {"sweep-spec", "a sweep spec JSON, loaded and expanded", SweepSpecTarget},
      {"python-args",
       "clustersim.run's keyword arguments as a JSON object, routed and checked "
       "as the Python module does",
       PythonArgsTarget},
  };
  return targets;
}

const FuzzTarget* FindFuzzTarget(std::string_view name) {
  for (const FuzzTarget& t : FuzzTargets()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

}  // namespace clustersim::fuzz
