#include "cli/trace_commands.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "app/options.h"
#include "app/progress.h"
#include "app/replay_options.h"
#include "sim/engine/priority_class.h"
#include "sim/hardware/cluster.h"
#include "sim/util/duration.h"
#include "sim/util/error.h"
#include "sim/util/output_path.h"
#include "sim/util/suggest.h"
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
    "              [--mean-duration S] [--models name:weight,...] [--walltimes none|modal]\n"
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
  StoreOptions(argc, argv, desc, &vm, &positional);
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
  bool mkdir = false;
  desc.add_options()("help,h", "show this help")("trace", po::value(&path), "trace file")(
      "format", po::value(&format), "input format (default: detect)")(
      "to", po::value(&to)->default_value("native"), "output format: native")(
      "out", po::value(&out), "output CSV file")("mkdir", po::bool_switch(&mkdir),
                                                 "create --out's folder if it does not exist");
  AddFilterOptions(desc, filter_args);
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm, &positional)) return 0;
  if (path.empty() || out.empty()) throw InputError("trace convert: expected FILE and --out OUT.csv");
  if (to != "native")
    throw InputError("--to " + to + ": expected native" + DidYouMean(to, {"native"}));
  PrepareOutputFolder(out, "--out", mkdir);
  RemoveTemporariesOnSignal();
  Trace trace = LoadTrace(path, format, MakeFilter(filter_args));
  WriteNativeCsv(trace, out);
  std::printf("wrote %zu jobs to %s\n", trace.jobs.size(), out.c_str());
  return 0;
}

int Generate(int argc, char** argv) {
  GeneratorOptions options;
  std::string out, models;
  bool mkdir = false;
  ProgressOptions progress_options;
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
      "models", po::value(&models), "model mix name:weight,... (adds a model column)")(
      "walltimes", po::value(&options.walltimes)->default_value(options.walltimes),
      "none | modal: requested wall times, the run time x (1 + an exponential overestimate of "
      "mean 1) rounded up to a popular value (5 min .. 48 h; docs/workloads.md)")(
      "mkdir", po::bool_switch(&mkdir), "create --out's folder if it does not exist");
  AddProgressOptions(desc, &progress_options);
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm)) return 0;
  const ProgressStyle progress_style = ResolveProgress(progress_options);
  if (out.empty()) throw InputError("trace generate: expected --out FILE");
  if (!models.empty()) options.models = ParseModelMix(models);
  PrepareOutputFolder(out, "--out", mkdir);
  RemoveTemporariesOnSignal();
  GeneratedTrace made;
  {
    TaskProgress progress("clustersim trace generate", progress_style);
    const int64_t total = options.jobs;
    if (progress.enabled()) {
      options.progress = [&progress, total](double fraction) {
        progress.Update(fraction, "jobs " + std::to_string(static_cast<int64_t>(fraction * total)) +
                                      "/" + std::to_string(total));
      };
    }
    made = WriteSyntheticTrace(options, out);
  }
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
  bool keep_order = false;
  bool mkdir = false;
  po::options_description desc(
      "clustersim trace cluster-from NODE_LIST.csv: a cluster spec from an Alibaba openb node list\n"
      "\noptions");
  desc.add_options()("help,h", "show this help")("nodes", po::value(&path), "node list CSV")(
      "map-gpu", po::value(&map_gpu), "GPU models without a catalog entry: MODEL=TYPE,...")(
      "out", po::value(&out), "write the spec here (default: standard output)")(
      "keep-order", po::bool_switch(&keep_order),
      "node indices in the list's order (a group per run of equal nodes), for placements that "
      "break ties by node index")("mkdir", po::bool_switch(&mkdir),
                                  "create --out's folder if it does not exist");
  po::positional_options_description positional;
  positional.add("nodes", 1);
  po::variables_map vm;
  StoreOptions(argc, argv, desc, &vm, &positional);
  po::notify(vm);
  if (vm.count("help") || path.empty()) {
    std::cout << desc << "\n";
    return path.empty() && !vm.count("help") ? 2 : 0;
  }
  if (!out.empty()) PrepareOutputFolder(out, "--out", mkdir);
  RemoveTemporariesOnSignal();
  const OpenbClusterResult result = OpenbNodeListToClusterSpec(
      ResolveBundledPath(path),
      map_gpu.empty() ? std::map<std::string, std::string>() : ParseGpuMap(map_gpu),
      HardwareCatalog::Default(), keep_order);
  if (out.empty()) {
    std::cout << result.spec_json << "\n";
  } else {
    WriteTextFile(out, result.spec_json + "\n");
  }
  std::fprintf(stderr, "%lld GPU nodes, %lld GPUs; %lld nodes without GPUs left out\n",
               static_cast<long long>(result.gpu_nodes), static_cast<long long>(result.gpus),
               static_cast<long long>(result.cpu_only_nodes));
  return 0;
}

}  // namespace

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
  throw InputError("unknown trace subcommand \"" + sub + "\"" +
                   DidYouMean(sub, {"stats", "convert", "generate", "cluster-from"}) +
                   "; valid: stats, convert, generate, cluster-from");
}

}  // namespace clustersim
