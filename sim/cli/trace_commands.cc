#include "sim/cli/trace_commands.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "sim/cli/options.h"
#include "sim/engine/priority_class.h"
#include "sim/hardware/cluster.h"
#include "sim/util/duration.h"
#include "sim/util/error.h"
#include "workloads/generator.h"
#include "workloads/openb_cluster.h"
#include "workloads/reader.h"

namespace po = boost::program_options;

namespace clustersim {
namespace {

constexpr const char* kTraceUsage =
    "usage: clustersim trace stats FILE [--format F] [--cluster C] [filters]\n"
    "       clustersim trace convert FILE --to native --out OUT.csv [--format F] [filters]\n"
    "       clustersim trace generate --out OUT.csv [--jobs N] [--gpus G] [--load L] [--seed S]\n"
    "              [--arrivals poisson|diurnal] [--curve CSV] [--durations exponential|philly]\n"
    "              [--mean-duration S] [--models name:weight,...]\n"
    "       clustersim trace cluster-from openb_node_list.csv [--map-gpu G2=TYPE,...] [--out spec.json]\n"
    "(clustersim trace SUBCOMMAND --help for details)\n";

int Stats(int argc, char** argv) {
  std::string path, format, cluster_name;
  FilterArgs filter_args;
  po::options_description desc(
      "clustersim trace stats FILE: jobs, span, GPUs per job, duration percentiles, arrival rate,\n"
      "offered load, and the sanity report\n\noptions");
  desc.add_options()("help,h", "show this help")("trace", po::value(&path), "trace file")(
      "format", po::value(&format), "trace format (default: detect)")(
      "cluster", po::value(&cluster_name),
      "also give the offered load relative to this cluster and check jobs against it (spec "
      "file or preset)");
  AddFilterOptions(desc, filter_args);
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  RejectRemovedOptions(argc, argv);
  po::store(po::command_line_parser(argc, argv).options(desc).positional(positional).run(), vm);
  po::notify(vm);
  if (vm.count("help") || path.empty()) {
    std::cout << desc << "\n";
    return path.empty() && !vm.count("help") ? 2 : 0;
  }
  FilterCounts counts;
  Trace trace = LoadTrace(path, format, MakeFilter(filter_args), &counts);
  std::unique_ptr<Cluster> cluster;
  if (!cluster_name.empty()) {
    cluster = std::make_unique<Cluster>(ClusterSpec::Load(cluster_name, HardwareCatalog::Default()),
                                        HardwareCatalog::Default());
  }
  std::printf("trace           %s (%s format, sha256 %s)\n", path.c_str(), trace.format.c_str(),
              trace.sha256.substr(0, 16).c_str());
  if (counts.kept != counts.before) {
    std::printf("filter          kept %lld of %lld jobs\n", static_cast<long long>(counts.kept),
                static_cast<long long>(counts.before));
  }
  std::cout << FormatTraceStats(ComputeTraceStats(trace), cluster ? cluster->total_gpus() : 0);
  std::cout << CheckTraceSanity(trace, cluster.get()).ToText();
  return 0;
}

int Convert(int argc, char** argv) {
  std::string path, format, to = "native", out;
  FilterArgs filter_args;
  po::options_description desc("clustersim trace convert FILE --to native --out OUT.csv\n\noptions");
  desc.add_options()("help,h", "show this help")("trace", po::value(&path), "trace file")(
      "format", po::value(&format), "input format (default: detect)")(
      "to", po::value(&to)->default_value("native"), "output format: native")(
      "out", po::value(&out), "output CSV file");
  AddFilterOptions(desc, filter_args);
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm, &positional)) return 0;
  if (path.empty() || out.empty()) throw InputError("trace convert: expected FILE and --out OUT.csv");
  if (to != "native") throw InputError("--to " + to + ": expected native");
  Trace trace = LoadTrace(path, format, MakeFilter(filter_args));
  WriteNativeCsv(trace, out);
  std::printf("wrote %zu jobs to %s\n", trace.jobs.size(), out.c_str());
  return 0;
}

int Generate(int argc, char** argv) {
  GeneratorOptions options;
  std::string out, models;
  po::options_description desc(
      "clustersim trace generate: a seeded synthetic trace in the native format\n\noptions");
  desc.add_options()("help,h", "show this help")("out", po::value(&out), "output CSV file")(
      "jobs", po::value(&options.jobs)->default_value(options.jobs), "number of jobs")(
      "gpus", po::value(&options.cluster_gpus)->default_value(options.cluster_gpus),
      "GPUs the offered load is computed on")(
      "load", po::value(&options.load)->default_value(options.load, "0.9"),
      "target offered load: GPU-seconds demanded / GPU-seconds of --gpus over the arrival span")(
      "seed", po::value(&options.seed)->default_value(options.seed), "random seed")(
      "arrivals", po::value(&options.arrivals)->default_value(options.arrivals),
      "poisson | diurnal (rate follows the Helios Venus 10-minute curve)")(
      "curve", po::value(&options.curve_path), "diurnal curve CSV (default: bundled Helios)")(
      "durations", po::value(&options.durations)->default_value(options.durations),
      "exponential | philly (the Philly empirical distribution)")(
      "mean-duration",
      DurationValue("--mean-duration", &options.mean_duration_seconds)->default_value("3600"),
      "mean of exponential durations (a duration: 3600, 1h)")(
      "models", po::value(&models), "model mix name:weight,... (adds a model column)");
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm)) return 0;
  if (out.empty()) throw InputError("trace generate: expected --out FILE");
  if (!models.empty()) options.models = ParseModelMix(models);
  const GeneratedTrace made = WriteSyntheticTrace(options, out);
  std::printf(
      "wrote %lld jobs to %s: span %.2f days, %.4f jobs/s, offered load %.3f on %lld "
      "GPUs (target %g)\n",
      static_cast<long long>(made.jobs), out.c_str(),
      (made.last_submit_seconds - made.first_submit_seconds) / 86400, made.arrivals_per_second,
      made.offered_load, static_cast<long long>(options.cluster_gpus), options.load);
  return 0;
}

int ClusterFrom(int argc, char** argv) {
  std::string path, out, map_gpu;
  po::options_description desc(
      "clustersim trace cluster-from NODE_LIST.csv: a cluster spec from an Alibaba openb node list\n"
      "\noptions");
  desc.add_options()("help,h", "show this help")("nodes", po::value(&path), "node list CSV")(
      "map-gpu", po::value(&map_gpu), "GPU models without a catalog entry: MODEL=TYPE,...")(
      "out", po::value(&out), "write the spec here (default: standard output)");
  po::positional_options_description positional;
  positional.add("nodes", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(desc).positional(positional).run(), vm);
  po::notify(vm);
  if (vm.count("help") || path.empty()) {
    std::cout << desc << "\n";
    return path.empty() && !vm.count("help") ? 2 : 0;
  }
  const OpenbClusterResult result = OpenbNodeListToClusterSpec(
      path, map_gpu.empty() ? std::map<std::string, std::string>() : ParseGpuMap(map_gpu),
      HardwareCatalog::Default());
  if (out.empty()) {
    std::cout << result.spec_json << "\n";
  } else {
    std::ofstream file(out);
    file << result.spec_json << "\n";
    if (!file) throw InputError(out, 0, 0, "cannot write file");
  }
  std::fprintf(stderr, "%lld GPU nodes, %lld GPUs; %lld nodes without GPUs left out\n",
               static_cast<long long>(result.gpu_nodes), static_cast<long long>(result.gpus),
               static_cast<long long>(result.cpu_only_nodes));
  return 0;
}

}  // namespace

void AddReplayOptions(po::options_description& desc, RunConfig& config) {
  po::options_description group("replay: cluster, clock, preemption cost, failures and checkpoints");
  group.add_options()(
      "format", po::value(&config.trace_format), "trace format (default: detect from the header)")(
      "cluster", po::value(&config.cluster)->default_value("default"),
      "cluster spec JSON file or preset name")("hardware", po::value(&config.hardware_path),
                                               "hardware catalog JSON (default: built in)")(
      "seed", po::value(&config.seed)->default_value(0), "random seed")(
      "interval",
      DurationValue("--interval", &config.engine.timeseries_interval_seconds)->default_value("300"),
      "timeseries interval (durations: seconds, or with s, min, h, d: 300, 5min, 1h)")(
      "stop-time", DurationValue("--stop-time", &config.engine.stop_time),
      "stop the clock at this simulated time (a duration: 100h, 3d)")(
      "preemption-cost",
      DurationValue("--preemption-cost", &config.engine.preemption_cost_seconds)
          ->default_value("0"),
      "checkpoint save + restore paid by each preempted job (a duration)")(
      "bsld-threshold", po::value(&config.bsld_threshold_seconds)->default_value(10),
      "bounded slowdown max(1, JCT / max(run time, T)): T in seconds")(
      "node-mtbf", po::value(&config.node_mtbf),
      "node failures: mean time between failures per node, \"T\" or \"TYPE=T,...\"; a plain "
      "number is hours (2000 = 2000h; 90d); each seed draws other failure times")(
      "gpu-mtbf", po::value(&config.gpu_mtbf),
      "single-GPU failures: mean time between failures per GPU (same forms; plain = hours)")(
      "mttr", DurationValue("--mttr", &config.engine.faults.mttr_seconds, kSecondsPerHour),
      "time until a failed node or GPU is repaired; a plain number is hours (default 4 = 4h)")(
      "failure-trace", po::value(&config.failure_trace),
      "failures from a CSV file: time,node,duration[,gpu] (seconds)")(
      "checkpoint-interval",
      DurationValue("--checkpoint-interval", &config.engine.faults.checkpoint_interval_seconds),
      "computing time between a job's checkpoints (a duration; default: none, a failure loses "
      "all)")("checkpoint-cost",
              DurationValue("--checkpoint-cost", &config.engine.faults.checkpoint_cost_seconds)
                  ->default_value("0"),
              "time each checkpoint save takes, without progress (a duration)")(
      "restore-cost",
      DurationValue("--restore-cost", &config.engine.faults.restore_cost_seconds)
          ->default_value("0"),
      "time a job restarted after a failure spends restoring its checkpoint (a duration)")(
      "check", po::bool_switch(&config.engine.check_invariants),
      "verify engine invariants after every pass (slow)");
  desc.add(group);
}

void CheckReplayOptions(const RunConfig& config) {
  if (config.engine.preemption_cost_seconds < 0) {
    throw InputError("--preemption-cost: expected a number of seconds >= 0");
  }
  if (!(config.engine.timeseries_interval_seconds > 0)) {
    throw InputError("--interval: expected a positive number of seconds");
  }
}

void AddModelOptions(po::options_description& desc, ModelConfig& models) {
  po::options_description group("model-aware simulation (GPU memory, OOM, batch, sharing)");
  group.add_options()(
      "model-aware", po::bool_switch(&models.enabled),
      "simulate GPU memory: OOM failures at the user's batch, batch-aware rates, sharing")(
      "assign-models", po::bool_switch(&models.assign),
      "give jobs without a model one and a batch (seeded by --seed); implies --model-aware")(
      "models", po::value(&models.catalog_path), "model catalog JSON (default: built in)")(
      "oom-startup",
      DurationValue("--oom-startup", &models.options.oom_startup_seconds)->default_value("120"),
      "time a job runs before running out of memory (a duration)")(
      "oom-retries", po::value(&models.options.oom_retries)->default_value(4),
      "resubmissions with half the batch after OOM failures")(
      "colocation-speed", po::value(&models.options.colocation_speed)->default_value(0.7, "0.7"),
      "speed of each of two jobs sharing one GPU, (0, 1]")(
      "storage-gbps", po::value(&models.options.storage_gbps)->default_value(0),
      "checkpoint storage bandwidth, GB/s: a modelled job's save/restore = state bytes / it")(
      "user-batches", po::value(&models.user_batches)->default_value("recipe"),
      "assigned users' per-GPU batches: recipe (the model's published recipe, or half or twice "
      "it), reference (the recipe) or uniform (powers of two over the model's range)")(
      "batch-choice", po::value(&models.batch_choice)->default_value("user"),
      "batch a non-elastic policy starts a modelled job at: user, or optimal (the "
      "goodput-maximizing batch for its allocation)");
  desc.add(group);
}

void AddFilterOptions(po::options_description& desc, FilterArgs& args) {
  desc.add_options()("window", po::value(&args.window),
                     "keep jobs submitted in START:END, durations from the trace's start (either "
                     "may be empty): 0:3600, 2d:3d")("vc", po::value(&args.vc),
                                                     "keep these virtual clusters (comma list)")(
      "user", po::value(&args.user), "keep these users (comma list)")(
      "status", po::value(&args.status), "keep these trace statuses (comma list)")(
      "first", po::value(&args.first), "keep the first N jobs in submission order")(
      "load-factor", po::value(&args.load_factor)->default_value(1.0, "1"),
      "multiply the arrival rate by F (gaps between submissions / F): 2 = twice the load")(
      "map-gpu", po::value(&args.map_gpu), "rename GPU types: OLD=NEW[,OLD=NEW...]")(
      "submit-is-start", po::bool_switch(&args.submit_is_start),
      "the trace's submit times are its recorded start times (a log recording starts, not "
      "waits, e.g. NASA iPSC/860): the recorded schedule of jobs without one")(
      "no-host-demands", po::bool_switch(&args.no_host_demands),
      "drop the jobs' CPU and host-memory demands (GPU-only placement)");
  desc.add_options()("priority-map", po::value(&args.priority_map),
                     "levels of the trace's priority classes (openb qos, SWF queue): "
                     "NAME=LEVEL,... (higher = more urgent; docs/policies.md#priority)");
}

TraceFilter MakeFilter(const FilterArgs& args) {
  TraceFilter filter;
  if (!args.window.empty()) ParseWindow(args.window, &filter);
  filter.vcs = ParseList(args.vc);
  filter.users = ParseList(args.user);
  filter.statuses = ParseList(args.status);
  if (args.first < -1) throw InputError("--first: expected a count >= 0");
  filter.first_n = args.first;
  filter.load_factor = args.load_factor;
  if (!args.map_gpu.empty()) filter.gpu_type_map = ParseGpuMap(args.map_gpu);
  filter.submit_is_start = args.submit_is_start;
  filter.drop_host_demands = args.no_host_demands;
  if (!args.priority_map.empty()) {
    filter.priority_map = ParsePriorityMap(args.priority_map, "--priority-map");
  }
  return filter;
}

int CommandTrace(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cout << kTraceUsage;
    return argc < 2 ? 2 : 0;
  }
  const std::string sub = argv[1];
  if (sub == "stats") return Stats(argc - 1, argv + 1);
  if (sub == "convert") return Convert(argc - 1, argv + 1);
  if (sub == "generate") return Generate(argc - 1, argv + 1);
  if (sub == "cluster-from") return ClusterFrom(argc - 1, argv + 1);
  throw InputError("unknown trace subcommand \"" + sub +
                   "\"; valid: stats, convert, generate, cluster-from");
}

}  // namespace clustersim
