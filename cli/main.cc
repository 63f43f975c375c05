// clustersim command line (README): `clustersim <command> [options]`, --help everywhere,
// --version.
// Bad input is an InputError caught here: printed, exit code 2. A bug (InternalError) exits 3.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "app/options.h"
#include "app/progress.h"
#include "app/replay_options.h"
#include "app/run.h"
#include "cli/advise_command.h"
#include "cli/allocate_bench_command.h"
#include "cli/experiment_commands.h"
#include "cli/plan_command.h"
#include "cli/reliability_command.h"
#include "cli/queueing_command.h"
#include "cli/report_command.h"
#include "cli/trace_commands.h"
#include "cli/site_command.h"
#include "cli/validate_command.h"
#include "cli/validate_models_command.h"
#include "policies/registry.h"
#include "sim/hardware/topology.h"
#include "sim/util/duration.h"
#include "sim/util/error.h"
#include "sim/util/output_path.h"
#include "sim/util/suggest.h"
#include "workloads/reader.h"

#ifndef CLUSTERSIM_VERSION
#define CLUSTERSIM_VERSION "0.0.0"
#endif

namespace po = boost::program_options;

namespace clustersim {
namespace {

constexpr const char* kUsage =
    R"(clustersim: a discrete-event simulator of GPU clusters for deep-learning training

usage: clustersim <command> [options]      (clustersim <command> --help for its options)
       clustersim --version

commands:
  run             replay a trace on a cluster under a policy; write results to SQLite
  compare         several policies (x placements) on one trace and cluster, side by side
  sweep           run the cross product of a JSON sweep spec in parallel (--shard for Slurm)
  merge           join result databases into one
  report          per user, vc, GPU type, priority or policy: jobs, GPU-hours, cost, waits, JCT
  validate        replay a trace that records its real schedule and compare (--search ranks configs,
                  --calibrate fits the site on one part of a log and reports the rest)
  site-from       infer a starting site model (partitions, sizes, downtime, limits) from a log
  trace           stats | convert | generate: inspect, convert and synthesize traces
  cluster show    print a cluster spec or preset (nodes, GPUs, topology); --dot for Graphviz
  advise          memory, largest batch, throughput and goodput of a model on a GPU type
  validate-models the memory and throughput models against published measurements
  list            list policies | placements | autoscalers | gpus | models | clusters | formats
  plan            capacity planning: smallest cluster per node type and cheapest mix meeting an SLO
  queueing        M/M/c (Erlang C) figures: utilization, P(wait), mean and p95 wait, queue length
  allocate-bench  the batch allocators (FFD, GA, DP) against the exact optimum, and their time
  reliability     a training job's interruptions, checkpoint interval and ETTR: model and simulation
)";

void PrintSummary(const RunConfig& config, const RunOutcome& o) {
  auto v = [&](const char* metric) { return SummaryValue(o.summary, metric); };
  std::printf("\nclustersim run %s: %s / %s / runtime %s on %s (%zu jobs) x %s (%d GPUs)\n",
              o.run_id >= 0 ? std::to_string(o.run_id).c_str() : "-", config.policy.c_str(),
              config.placement.c_str(), o.runtime_model.c_str(),
              (config.trace_path.empty() ? "bundled traces/philly_default.csv"
                                         : config.trace_path.c_str()),
              o.jobs,
              config.cluster.c_str(), o.gpus);
  // Labels are 20 columns wide: "first-start wait (h)" is the longest.
  std::printf("  %-20s %s\n", "status",
              o.status == RunStatus::kComplete ? "complete" : "interrupted (partial results)");
  std::printf("  %-20s completed %.0f   rejected %.0f   timeout %.0f   unfinished %.0f\n", "jobs",
              v("jobs_completed"), v("jobs_rejected"), v("jobs_timeout"), v("jobs_unfinished"));
  auto dist = [&](const char* label, const std::string& name, bool hours) {
    const double mean = SummaryValue(o.summary, name + "_mean");
    if (std::isnan(mean)) return;
    auto f = [&](const std::string& suffix) {
      const double x = SummaryValue(o.summary, name + suffix);
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.2f", hours ? x / 3600.0 : x);
      return std::string(buffer);
    };
    std::printf("  %-20s mean %s   p50 %s   p95 %s   p99 %s\n", label, f("_mean").c_str(),
                f("_p50").c_str(), f("_p95").c_str(), f("_p99").c_str());
  };
  dist("JCT (h)", "jct_seconds", true);
  dist("first-start wait (h)", "wait_seconds", true);
  dist("queued (h)", "queued_seconds", true);
  char bsld_label[48];
  std::snprintf(bsld_label, sizeof bsld_label, "bsld (%g s bound)", v("bsld_threshold_seconds"));
  dist(bsld_label, "bsld", false);
  std::printf("  %-20s %.0f (%.3f per started job)   restarts after failures %.0f\n", "preemptions",
              v("preemptions"), v("preemptions_per_job"), v("restarts"));
  // What a preemption, resize or migration costs (docs/engine.md#preemption-cost), and what the
  // moves cost in all.
  const bool model_sized = (config.models.enabled || config.models.assign) &&
                           config.models.options.storage_gbps > 0;
  std::printf("  %-20s %g s per preemption, resize or migration%s   paid %.2f GPU-h\n",
              "preemption cost", config.engine.preemption_cost_seconds,
              model_sized ? " (model-sized checkpoints for modelled jobs)" : "",
              v("preemption_gpu_hours"));
  if (config.engine.defrag) {  // docs/defragmentation.md
    std::printf("  %-20s migrations %.0f   paid %.2f GPU-h\n", "defragmentation",
                v("migrations"), v("migration_gpu_hours"));
  }
  std::printf("  %-20s %.2f h   throughput %.2f jobs/h\n", "makespan", v("makespan_seconds") / 3600,
              v("throughput_jobs_per_hour"));
  std::printf("  %-20s %.1f %%   queue %.1f jobs (mean)\n", "utilization",
              100 * v("gpu_utilization"), v("queue_length_mean"));
  std::printf("  %-20s stranded GPUs %.2f   I_frag %.3f   node imbalance F %.3f\n", "fragmentation",
              v("stranded_gpus_mean"), v("i_frag_mean"), v("node_imbalance_mean"));
  std::printf("  %-20s %.0f kWh   cost $%.0f (used $%.0f)", "energy/cost", v("energy_kwh"),
              v("cost_usd"), v("used_cost_usd"));
  // Jain's index only where there are users to be fair between.
  if (v("users") > 0) {
    std::printf("   Jain (%.0f users) %.3f", v("users"), v("jain_index_users"));
  }
  std::printf("\n");
  if (!std::isnan(v("billed_gpu_hours"))) {  // node pools (docs/autoscaling.md)
    std::printf("  %-20s %s   billed %.2f GPU-h   cost $%.2f   utilization of billed %.1f %%\n",
                "node pools", config.autoscaler.c_str(), v("billed_gpu_hours"),
                v("billed_cost_usd"), 100 * v("billed_gpu_utilization"));
  }
  if (v("failures") > 0 || v("checkpoint_gpu_hours") > 0) {
    std::printf(
        "  %-20s %.0f (restarts %.0f)   lost %.1f GPU-h   down %.1f GPU-h   "
        "checkpointing %.1f GPU-h\n",
        "failures", v("failures"), v("restarts"), v("lost_gpu_hours"), v("gpu_hours_down"),
        v("checkpoint_gpu_hours"));
  }
  if (!std::isnan(v("sla_jobs"))) {  // some job has a deadline (docs/deadlines.md)
    std::printf("  %-20s met %.0f of %.0f (%.1f %% violated)   late %.0f   rejected %.0f   "
                "lateness mean %.2f h\n",
                "SLA", v("sla_met"), v("sla_jobs"), 100 * v("sla_violation_rate"), v("sla_late"),
                v("sla_rejected"),
                std::isnan(v("sla_lateness_seconds_mean")) ? 0.0
                                                           : v("sla_lateness_seconds_mean") / 3600);
  }
  if (config.models.enabled || config.models.assign) {
    std::printf(
        "  %-20s memory utilization %.1f %%   OOM rate %.2f %% (%.0f failures, "
        "%.1f GPU-h wasted)   oom-failed %.0f\n",
        "memory", 100 * v("memory_utilization"), 100 * v("oom_rate"), v("oom_failures"),
        v("oom_wasted_gpu_hours"), v("jobs_failed"));
  }
  if (!std::isnan(v("cpu_stranded_gpus_mean"))) {  // host limits on (docs/resources.md)
    std::printf("  %-20s CPU utilization %.1f %%   host memory %.1f %%   CPU-stranded GPUs %.2f\n",
                "host", 100 * v("cpu_utilization"), 100 * v("host_memory_utilization"),
                v("cpu_stranded_gpus_mean"));
  }
  std::printf("  %-20s %s   events %llu   wall %.2f s\n", "fingerprint",
              HexFingerprint(o.fingerprint).c_str(), static_cast<unsigned long long>(o.events),
              o.wall_seconds);
  if (!o.planning_estimates.empty()) {
    std::printf("  %-20s %s\n", "planned run times", o.planning_estimates.c_str());
  }
  for (const std::string& warning : o.warnings) {
    std::printf("  %-20s %s\n", "warning", warning.c_str());
  }
  if (!config.out.empty()) std::printf("  %-20s %s\n", "written to", config.out.c_str());
}

int CommandRun(int argc, char** argv) {
  RunConfig config;
  std::string on_no_fit;
  double inflate = 0;  // trace filter, set after MakeFilter (0 = off)
  FilterArgs filter_args;
  std::vector<std::string> params;
  std::string log_level = "warn";
  bool mkdir = false;
  ProgressOptions progress_options;
  po::options_description desc(
      "clustersim run: replay a trace on a cluster under a policy\n\n"
      "With no options: the bundled Philly-derived trace on the default cluster with fcfs,\n"
      "written to results/clustersim.sqlite.\n\noptions");
  desc.add_options()("help,h", "show this help")("trace", po::value(&config.trace_path),
                                                 "trace file (default: the bundled Philly window)")(
      "policy", po::value(&config.policy)->default_value("fcfs"), "ordering policy")(
      "placement", po::value(&config.placement)->default_value("first-fit"),
      "placement strategy: pool, first-fit, best-fit, ...")(
      "runtime-model", po::value(&config.runtime_model),
      "trace | hardware (default: hardware on a heterogeneous cluster, else trace)")(
      "param", po::value(&params)->composing(), "policy parameter key=value (repeatable)")(
      "out", po::value(&config.out)->default_value("results/clustersim.sqlite"),
      "SQLite database to append the run to")(
      "allow-duplicate", po::bool_switch(&config.allow_duplicate),
      "append the run even if --out already holds the same run (same inputs and seed)")(
      "config", po::value<std::string>(),
      "run config JSON (keys as these options; params as an object); the command line wins")(
      "record-allocations", po::bool_switch(&config.engine.record_allocations),
      "write the allocations table: one row per running interval of a job")(
      "on-no-fit", po::value(&on_no_fit)->default_value("wait"),
      "wait | skip: skip rejects a job that cannot start when it arrives (\"no fit\"), fcfs "
      "only; arrival-only placement, docs/engine.md")(
      "no-departures", po::bool_switch(&config.engine.no_departures),
      "started jobs never finish (arrival-only placement); records the placement_curve table")(
      "inflate", po::value(&inflate),
      "F: shuffle the jobs (run seed), add jobs drawn with replacement until they request F x "
      "the cluster's GPUs, one arrival a second (docs/workloads.md)")(
      "mkdir", po::bool_switch(&mkdir), "create --out's folder if it does not exist")(
      "log-level", po::value(&log_level)->default_value("warn"), "trace|debug|info|warn|error");
  AddProgressOptions(desc, &progress_options);
  AddReplayOptions(desc, config);
  AddFilterOptions(desc, filter_args);
  AddModelOptions(desc, config.models);
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm)) return 0;
  SetLogLevel(log_level);
  const ProgressStyle progress_style = ResolveProgress(progress_options);
  for (const auto& p : params) config.params.AddAssignment(p);
  config.filter = MakeFilter(filter_args);
  config.filter.inflate = inflate;
  if (vm.count("inflate") && !(inflate > 0)) {
    throw InputError("--inflate: expected a factor > 0 (1.3 = 130 % of the cluster's GPUs)");
  }
  const std::optional<bool> skip_no_fit = SkipNoFitFromName(on_no_fit);
  if (!skip_no_fit) {
    throw InputError("--on-no-fit " + on_no_fit + ": expected wait or skip" +
                     DidYouMean(on_no_fit, {"wait", "skip"}));
  }
  config.engine.skip_no_fit = *skip_no_fit;
  if (vm.count("config")) {
    std::set<std::string> given;
    for (const auto& [name, value] : vm) {
      if (!value.defaulted()) given.insert(name);
    }
    ApplyRunConfigFile(vm["config"].as<std::string>(), given, &config);
  }
  CheckReplayOptions(config);
  // The folder of the default output (results/) is made; a folder the user named must exist.
  if (!config.out.empty()) PrepareOutputFolder(config.out, "--out", mkdir || vm["out"].defaulted());
  config.engine.interrupt = StopFlag();
  CatchStopSignals();
  RunOutcome outcome;
  {
    TaskProgress progress("clustersim run", progress_style);
    if (progress.enabled()) {
      config.engine.progress = [&progress](const EngineProgress& p) {
        progress.Update(RunProgressFraction(p), RunProgressDetail(p));
      };
    }
    outcome = ExecuteRun(config);
  }
  PrintSummary(config, outcome);
  return outcome.status == RunStatus::kComplete ? 0 : 130;
}

int CommandClusterShow(int argc, char** argv) {
  std::string spec_name = "default";
  std::string dot_path;
  std::string hardware_path;
  bool mkdir = false;
  po::options_description desc("clustersim cluster show [SPEC]: print a cluster\n\noptions");
  desc.add_options()("help,h", "show this help")(
      "spec", po::value(&spec_name)->default_value("default"), "cluster spec JSON or preset")(
      "dot", po::value(&dot_path),
      "write the topology graph as Graphviz to this file (- = stdout)")(
      "hardware", po::value(&hardware_path), "hardware catalog JSON")(
      "mkdir", po::bool_switch(&mkdir), "create --dot's folder if it does not exist");
  po::positional_options_description positional;
  positional.add("spec", 1);
  po::variables_map vm;
  StoreOptions(argc, argv, desc, &vm, &positional);
  if (vm.count("help")) {
    std::cout << desc << "\npresets:";
    for (const auto& name : ClusterSpec::PresetNames()) std::cout << " " << name;
    std::cout << "\n";
    return 0;
  }
  po::notify(vm);
  HardwareCatalog custom;
  const HardwareCatalog* catalog = &HardwareCatalog::Default();
  if (!hardware_path.empty()) {
    custom = HardwareCatalog::FromFile(hardware_path);
    catalog = &custom;
  }
  const Cluster cluster(ClusterSpec::Load(spec_name, *catalog), *catalog);
  const Topology topology(cluster);
  if (!dot_path.empty()) {
    if (dot_path == "-") {
      topology.WriteDot(std::cout);
      return 0;
    }
    PrepareOutputFolder(dot_path, "--dot", mkdir);
    RemoveTemporariesOnSignal();
    std::ostringstream dot;
    topology.WriteDot(dot);
    WriteTextFile(dot_path, dot.str());
  }
  std::printf("cluster %s: %d nodes, %d GPUs, %d racks\n", cluster.spec().origin.c_str(),
              cluster.node_count(), cluster.total_gpus(), cluster.rack_count());
  std::printf("  %-6s %-5s %-16s %-5s %-17s %6s %8s %10s  %s\n", "group", "nodes", "gpu_type",
              "gpus", "topology", "cpus", "mem_gib", "nic_gbps", "ring GB/s (full node)");
  int first_node = 0;
  for (size_t g = 0; g < cluster.spec().groups.size(); ++g) {
    const NodeGroupSpec& group = cluster.spec().groups[g];
    const Node& node = cluster.node(first_node);
    std::vector<int> gpus;
    for (int i = 0; i < node.gpu_count; ++i) gpus.push_back(node.first_gpu + i);
    std::printf("  %-6zu %-5d %-16s %-5d %-17s %6d %8.0f %10.0f  %.1f\n", g, group.count,
                group.gpu_type.c_str(), group.gpus_per_node, NodeTopologyName(group.topology),
                group.cpus, group.host_memory_gib, group.nic_gbps,
                topology.RingBandwidthGbps(gpus));
    first_node += group.count;
  }
  std::printf("  network: %d nodes per rack (leaf), oversubscription %.1f:1, %.1f us per hop\n",
              cluster.spec().network.nodes_per_rack, cluster.spec().network.oversubscription,
              cluster.spec().network.latency_us);
  for (int type : cluster.gpu_types()) {
    const GpuSpec& gpu = cluster.catalog().gpu(type);  // with its aliases
    std::printf("  %-16s %5d GPUs  %4.0f GiB  %6.1f TFLOP/s fp16  %5.0f GB/s mem  $%.2f/GPU-h\n",
                gpu.name.c_str(), cluster.GpusOfType(type), gpu.memory_gib, gpu.fp16_tflops,
                gpu.memory_bandwidth_gbps, gpu.price_per_gpu_hour);
  }
  if (!dot_path.empty()) std::printf("  topology graph written to %s\n", dot_path.c_str());
  return 0;
}

int CommandList(int argc, char** argv) {
  std::string what;
  po::options_description desc(
      "clustersim list policies|placements|autoscalers|gpus|models|clusters|formats\n\noptions");
  std::string models_path;
  desc.add_options()("help,h", "show this help")("what", po::value(&what), "what to list")(
      "verbose,v", "with parameters and sources")(
      "models", po::value(&models_path), "model catalog JSON for `list models`");
  po::positional_options_description positional;
  positional.add("what", 1);
  po::variables_map vm;
  StoreOptions(argc, argv, desc, &vm, &positional);
  po::notify(vm);
  if (vm.count("help") || what.empty()) {
    std::cout << desc << "\n";
    return what.empty() && !vm.count("help") ? 2 : 0;
  }
  const bool verbose = vm.count("verbose") > 0;
  if (what == "policies") {
    for (const PolicyEntry* p : Policies()) {
      std::printf("%-14s %s\n", p->name.c_str(), p->summary.c_str());
      if (verbose) {
        std::printf("%-14s parameters: %s\n", "",
                    p->parameters.empty() ? "none" : p->parameters.c_str());
      }
    }
  } else if (what == "placements") {
    for (const PlacementEntry* p : Placements()) {
      std::printf("%-14s %s\n", p->name.c_str(), p->summary.c_str());
    }
  } else if (what == "autoscalers") {
    for (const AutoscalerEntry* a : Autoscalers()) {
      std::printf("%-18s %s\n", a->name.c_str(), a->summary.c_str());
    }
  } else if (what == "gpus") {
    std::printf("%-16s %-5s %7s %10s %10s %9s %8s %6s %6s %8s\n", "name", "form", "mem_gib",
                "fp16_tflops", "fp32_tflops", "mem_GB/s", "nvlink", "tdp_w", "idle_w", "usd/h");
    for (const GpuSpec& g : HardwareCatalog::Default().gpus()) {
      std::printf("%-16s %-5s %7.0f %10.1f %10.1f %9.0f %8.0f %6.0f %6.0f %8.2f\n", g.name.c_str(),
                  g.form_factor.c_str(), g.memory_gib, g.fp16_tflops, g.fp32_tflops,
                  g.memory_bandwidth_gbps, g.nvlink_gbps, g.tdp_watts, g.idle_watts,
                  g.price_per_gpu_hour);
      if (verbose) std::printf("    source: %s\n", g.source.c_str());
    }
  } else if (what == "models") {
    PrintModelList(models_path.empty() ? nullptr : models_path.c_str(), verbose);
  } else if (what == "clusters") {
    for (const auto& name : ClusterSpec::PresetNames()) {
      const Cluster c(ClusterSpec::Load(name, HardwareCatalog::Default()),
                      HardwareCatalog::Default());
      std::printf("%-12s %4d nodes %6d GPUs\n", name.c_str(), c.node_count(), c.total_gpus());
    }
  } else if (what == "formats") {
    for (const TraceReaderEntry* r : TraceReaders()) {
      std::printf("%-14s %s\n", r->name.c_str(), r->summary.c_str());
    }
  } else {
    throw InputError(
        "list " + what + ": expected policies, placements, gpus, models, clusters " + "or formats" +
        DidYouMean(what, {"policies", "placements", "autoscalers", "gpus", "models", "clusters",
                          "formats"}));
  }
  return 0;
}

int Main(int argc, char** argv) {
  auto logger = spdlog::stderr_color_mt("clustersim");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::warn);
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" ||
      std::string(argv[1]) == "help") {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  if (command == "--version" || command == "version") {
    std::printf("clustersim %s\n", CLUSTERSIM_VERSION);
    return 0;
  }
  try {
    if (command == "run") return CommandRun(argc - 1, argv + 1);
    if (command == "compare") return CommandCompare(argc - 1, argv + 1);
    if (command == "sweep") return CommandSweep(argc - 1, argv + 1);
    if (command == "merge") return CommandMerge(argc - 1, argv + 1);
    if (command == "report") return CommandReport(argc - 1, argv + 1);
    if (command == "cluster") {
      if (argc < 3 || std::string(argv[2]) != "show") {
        if (argc >= 3 && (std::string(argv[2]) == "--help" || std::string(argv[2]) == "-h")) {
          std::cout << "usage: clustersim cluster show [SPEC] [--dot FILE]\n";
          return 0;
        }
        throw InputError("usage: clustersim cluster show [SPEC] [--dot FILE]");
      }
      return CommandClusterShow(argc - 2, argv + 2);
    }
    if (command == "list") return CommandList(argc - 1, argv + 1);
    if (command == "trace") return CommandTrace(argc - 1, argv + 1);
    if (command == "advise") return CommandAdvise(argc - 1, argv + 1);
    if (command == "validate-models") return CommandValidateModels(argc - 1, argv + 1);
    if (command == "plan") return CommandPlan(argc - 1, argv + 1);
    if (command == "queueing") return CommandQueueing(argc - 1, argv + 1);
    if (command == "allocate-bench") return CommandAllocateBench(argc - 1, argv + 1);
    if (command == "reliability") return CommandReliability(argc - 1, argv + 1);
    if (command == "site-from") return CommandSiteFrom(argc - 1, argv + 1);
    if (command == "validate") return CommandValidate(argc - 1, argv + 1);
    const std::vector<std::string> commands = {
        "run",     "compare", "sweep",           "merge", "report", "validate",      "trace",
        "cluster", "advise",  "validate-models", "list",  "plan",   "queueing", "allocate-bench",
        "site-from", "reliability"};
    throw InputError("unknown command \"" + command + "\"" + DidYouMean(command, commands) +
                     "; valid: run, compare, sweep, merge, report, validate, trace, cluster "
                     "show, advise, validate-models, list, plan, queueing, allocate-bench, "
                     "site-from, reliability");
  } catch (const InputError& e) {
    std::fprintf(stderr, "clustersim: error: %s\n", e.what());
    return 2;
  } catch (const po::error& e) {
    std::fprintf(stderr, "clustersim: error: %s (see clustersim %s --help)\n", e.what(),
                 command.c_str());
    return 2;
  } catch (const InternalError& e) {
    std::fprintf(stderr, "clustersim: internal error (a bug): %s\n", e.what());
    return 3;
  }
}

}  // namespace
}  // namespace clustersim

int main(int argc, char** argv) { return clustersim::Main(argc, argv); }
