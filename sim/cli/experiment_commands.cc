#include "sim/cli/experiment_commands.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <boost/program_options.hpp>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <set>

#include "policies/registry.h"
#include "sim/cli/options.h"
#include "sim/cli/run.h"
#include "sim/cli/sweep.h"
#include "sim/cli/trace_commands.h"
#include "sim/output/merge.h"
#include "sim/util/error.h"

namespace po = boost::program_options;

namespace clustersim {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

void CatchSignals() {
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
}

// "a,b,c" in the order given; an empty item or a repeated one is an error naming the option.
std::vector<std::string> SplitNames(const std::string& text, const std::string& option) {
  std::vector<std::string> names;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma - start);
    if (name.empty()) throw InputError(option + " " + text + ": expected NAME[,NAME...]");
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      throw InputError(option + " " + text + ": " + name + " is listed twice");
    }
    names.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return names;
}

// Removes a folder and its contents when it goes out of scope.
class ScopedDirectory {
 public:
  explicit ScopedDirectory(std::string path) : path_(std::move(path)) {
    std::error_code ec;
    fs::remove_all(path_, ec);
    if (!fs::create_directories(path_, ec)) {
      throw InputError(path_, 0, 0, "cannot create a temporary directory");
    }
  }
  ~ScopedDirectory() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScopedDirectory(const ScopedDirectory&) = delete;
  ScopedDirectory& operator=(const ScopedDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The headline metrics of compare, in table and CSV order.
struct Column {
  const char* metric;  // summary metric
  const char* title;   // table heading
  enum Kind { kCount, kTime, kPercent, kRatio } kind;
};
constexpr Column kColumns[] = {
    {"jobs_completed", "completed", Column::kCount},
    {"jobs_rejected", "rejected", Column::kCount},
    {"jobs_timeout", "timeout", Column::kCount},
    {"jct_seconds_mean", "JCT mean", Column::kTime},
    {"jct_seconds_p95", "JCT p95", Column::kTime},
    {"wait_seconds_mean", "wait mean", Column::kTime},
    {"wait_seconds_p95", "wait p95", Column::kTime},
    {"slowdown_mean", "slowdown", Column::kRatio},
    {"gpu_utilization", "util %", Column::kPercent},
    {"makespan_seconds", "makespan", Column::kTime},
};
// CSV only.
constexpr const char* kCsvExtra[] = {"jobs_unfinished", "throughput_jobs_per_hour",
                                     "stranded_gpus_mean", "energy_kwh"};

struct CompareRun {
  RunConfig config;
  RunOutcome outcome;
  std::exception_ptr error;
  int64_t run_id = -1;
};

void PrintCompareTable(const std::vector<CompareRun>& runs) {
  // Times in hours when any makespan reaches an hour, else in seconds (small test traces).
  bool hours = false;
  for (const CompareRun& run : runs) {
    hours = hours || SummaryValue(run.outcome.summary, "makespan_seconds") >= 3600;
  }
  const double time_unit = hours ? 3600 : 1;
  std::printf("%4s  %-12s %-10s", "run", "policy", "placement");
  for (const Column& c : kColumns) std::printf(" %9s", c.title);
  std::printf("\n");
  for (const CompareRun& run : runs) {
    std::printf("%4lld  %-12s %-10s", static_cast<long long>(run.run_id), run.config.policy.c_str(),
                run.config.placement.c_str());
    for (const Column& c : kColumns) {
      const double v = SummaryValue(run.outcome.summary, c.metric);
      if (std::isnan(v)) {
        std::printf(" %9s", "-");
      } else if (c.kind == Column::kCount) {
        std::printf(" %9.0f", v);
      } else if (c.kind == Column::kTime) {
        std::printf(" %9.2f", v / time_unit);
      } else if (c.kind == Column::kPercent) {
        std::printf(" %9.1f", 100 * v);
      } else {
        std::printf(" %9.2f", v);
      }
    }
    if (run.outcome.status != RunStatus::kComplete) std::printf("  (interrupted)");
    std::printf("\n");
  }
  std::printf(
      "times (JCT, wait, makespan) in %s; slowdown = JCT / run time; util = GPU "
      "utilization\n",
      hours ? "hours" : "seconds");
}

void PrintCompareCsv(const std::vector<CompareRun>& runs) {
  std::printf("run_id,policy,placement,status");
  for (const Column& c : kColumns) std::printf(",%s", c.metric);
  for (const char* metric : kCsvExtra) std::printf(",%s", metric);
  std::printf(",fingerprint\n");
  auto value = [](double v) {
    if (std::isnan(v)) {
      std::printf(",");
    } else {
      std::printf(",%.10g", v);
    }
  };
  for (const CompareRun& run : runs) {
    std::printf("%lld,%s,%s,%s", static_cast<long long>(run.run_id), run.config.policy.c_str(),
                run.config.placement.c_str(),
                run.outcome.status == RunStatus::kComplete ? "complete" : "interrupted");
    for (const Column& c : kColumns) value(SummaryValue(run.outcome.summary, c.metric));
    for (const char* metric : kCsvExtra) value(SummaryValue(run.outcome.summary, metric));
    std::printf(",%s\n", HexFingerprint(run.outcome.fingerprint).c_str());
  }
}

}  // namespace

int CommandCompare(int argc, char** argv) {
  RunConfig base;
  FilterArgs filter_args;
  std::vector<std::string> params;
  std::string policies_text;
  std::string placements_text;
  std::string log_level;
  int jobs = DefaultJobCount();
  po::options_description desc(
      "clustersim compare: several policies (x placements) on one trace and cluster, side by "
      "side\n\n"
      "Every run goes into one database; a table of headline metrics (one row per run) is\n"
      "printed, or CSV with --csv. --param NAME:key=value applies only to runs whose policy or\n"
      "placement is NAME (e.g. --param easy:walltime=exact); a plain key=value to every run.\n\n"
      "options");
  desc.add_options()("help,h", "show this help")("trace", po::value(&base.trace_path),
                                                 "trace file (default: the bundled Philly window)")(
      "format", po::value(&base.trace_format), "trace format (default: detect from the header)")(
      "cluster", po::value(&base.cluster)->default_value("default"),
      "cluster spec JSON file or preset name")("hardware", po::value(&base.hardware_path),
                                               "hardware catalog JSON (default: built in)")(
      "policies", po::value(&policies_text)->default_value("fcfs,easy"),
      "comma-separated ordering policies")("placements",
                                           po::value(&placements_text)->default_value("first-fit"),
                                           "comma-separated placement strategies")(
      "runtime-model", po::value(&base.runtime_model),
      "trace | hardware (default: hardware on a heterogeneous cluster, else trace)")(
      "param", po::value(&params)->composing(),
      "[NAME:]key=value policy or placement parameter (repeatable)")(
      "seed", po::value(&base.seed)->default_value(0), "random seed")(
      "interval",
      DurationValue("--interval", &base.engine.timeseries_interval_seconds)->default_value("300"),
      "timeseries interval (durations: seconds, or with s, min, h, d: 300, 5min, 1h)")(
      "stop-time", DurationValue("--stop-time", &base.engine.stop_time),
      "stop the clock at this simulated time (a duration: 100h, 3d)")(
      "preemption-cost",
      DurationValue("--preemption-cost", &base.engine.preemption_cost_seconds)->default_value("0"),
      "checkpoint save + restore paid by each preempted job (a duration)")(
      "out", po::value(&base.out)->default_value("results/compare.sqlite"),
      "SQLite database to append the runs to")(
      "csv", "print CSV (one line per run, SI units) instead of the table")(
      "jobs,j", po::value(&jobs), "runs in parallel (default: the number of cores)")(
      "log-level", po::value(&log_level)->default_value("error"),
      "trace|debug|info|warn|error (warn shows each run's trace sanity report)");
  AddFilterOptions(desc, filter_args);
  AddModelOptions(desc, base.models);
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm)) return 0;
  SetLogLevel(log_level);
  if (base.engine.preemption_cost_seconds < 0) {
    throw InputError("--preemption-cost: expected a number of seconds >= 0");
  }
  if (!(base.engine.timeseries_interval_seconds > 0)) {
    throw InputError("--interval: expected a positive number of seconds");
  }
  if (jobs < 1) throw InputError("--jobs: expected a count >= 1");
  base.filter = MakeFilter(filter_args);
  std::map<std::string, std::string> given;
  for (const std::string& p : params) {
    Params parsed;
    parsed.AddAssignment(p);
    given.insert(parsed.values().begin(), parsed.values().end());
  }
  const std::vector<std::string> policies = SplitNames(policies_text, "--policies");
  const std::vector<std::string> placements = SplitNames(placements_text, "--placements");
  for (const auto& name : policies) FindPolicy(name);
  for (const auto& name : placements) FindPlacement(name);

  std::vector<CompareRun> runs;
  for (const auto& policy : policies) {
    for (const auto& placement : placements) {
      CompareRun run;
      run.config = base;
      run.config.policy = policy;
      run.config.placement = placement;
      run.config.params = ParamsForRun(given, policy, placement);
      runs.push_back(std::move(run));
    }
  }
  // Each run writes its own database in a private folder beside the output; they are copied
  // into the output only when every run has succeeded, so a failing run leaves nothing behind.
  const fs::path out_path(base.out);
  if (!out_path.parent_path().empty()) {
    std::error_code ec;
    fs::create_directories(out_path.parent_path(), ec);
  }
  const ScopedDirectory scratch(base.out + ".compare-tmp-" + std::to_string(::getpid()));
  CatchSignals();
  ParallelFor(runs.size(), jobs, [&](size_t i) {
    CompareRun& run = runs[i];
    run.config.out = scratch.path() + "/run-" + std::to_string(i) + ".sqlite";
    run.config.engine.interrupt = &g_stop;
    try {
      run.outcome = ExecuteRun(run.config);
    } catch (...) {
      run.error = std::current_exception();
    }
  });
  for (const CompareRun& run : runs) {
    if (!run.error) continue;
    try {
      std::rethrow_exception(run.error);
    } catch (const InputError& e) {
      const std::string message = e.what();
      if (message.find("unknown parameter") == std::string::npos) throw;
      throw InputError(message + " (a parameter for some runs only: --param NAME:key=value)");
    }
  }
  std::vector<std::string> files;
  for (const CompareRun& run : runs) files.push_back(run.config.out);
  MergeOptions merge_options;
  merge_options.reject_duplicates = false;  // like `run`, compare appends even a repeated run
  const MergeResult merged = MergeDatabases(base.out, files, merge_options);
  bool interrupted = false;
  for (size_t i = 0; i < runs.size(); ++i) {
    runs[i].run_id = merged.new_run_ids[i];
    interrupted = interrupted || runs[i].outcome.status != RunStatus::kComplete;
  }
  if (vm.count("csv")) {
    PrintCompareCsv(runs);
  } else {
    const RunOutcome& first = runs.front().outcome;
    std::printf(
        "clustersim compare: %s (%zu jobs) x %s (%d GPUs), runtime %s, seed %lld\n",
        base.trace_path.empty() ? "bundled traces/philly_default.csv" : base.trace_path.c_str(),
        first.jobs, base.cluster.c_str(), first.gpus, first.runtime_model.c_str(),
        static_cast<long long>(base.seed));
    PrintCompareTable(runs);
    std::printf("written to %s (runs %lld-%lld)\n", base.out.c_str(),
                static_cast<long long>(runs.front().run_id),
                static_cast<long long>(runs.back().run_id));
  }
  return interrupted ? 130 : 0;
}

int CommandSweep(int argc, char** argv) {
  std::string spec_path;
  std::string out_dir;
  std::string shard_text = "0/1";
  std::string log_level;
  int jobs = DefaultJobCount();
  po::options_description desc(
      "clustersim sweep SPEC.json --out DIR: run the cross product of a sweep spec\n\n"
      "One database per run in DIR (run-<index>-<key hash>.sqlite) and DIR/sweep.json listing\n"
      "every run. Runs already complete in DIR are skipped (resume). A failing run is recorded\n"
      "with status failed and its error; the others go on; the exit code is then 1.\n"
      "Join the databases with: clustersim merge OUT.sqlite DIR\n\noptions");
  desc.add_options()("help,h", "show this help")("spec", po::value(&spec_path),
                                                 "sweep spec JSON (README.md, \"Sweeps\")")(
      "out,o", po::value(&out_dir), "directory for the run databases (required)")(
      "jobs,j", po::value(&jobs), "runs in parallel (default: the number of cores)")(
      "shard", po::value(&shard_text)->default_value("0/1"),
      "i/N: run only the runs whose index mod N is i (a Slurm array task)")(
      "dry-run", "check the spec, list the shard's runs (file and description) and exit")(
      "log-level", po::value(&log_level)->default_value("error"),
      "trace|debug|info|warn|error (warn shows each run's trace sanity report)");
  po::positional_options_description positional;
  positional.add("spec", 1);
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm, &positional)) return 0;
  SetLogLevel(log_level);
  if (spec_path.empty()) throw InputError("sweep: missing SPEC.json (see clustersim sweep --help)");
  if (out_dir.empty()) throw InputError("sweep: missing --out DIR (see clustersim sweep --help)");
  if (jobs < 1) throw InputError("--jobs: expected a count >= 1");
  SweepOptions options;
  options.shard = ParseShard(shard_text);
  options.out_dir = out_dir;
  options.jobs = jobs;
  options.interrupt = &g_stop;
  const SweepSpec spec = LoadSweepSpec(spec_path);
  if (vm.count("dry-run")) {
    for (const SweepRun& run : spec.runs) {
      if (options.shard.Contains(run.index)) {
        std::printf("%s  %s\n", run.file_name.c_str(), run.label.c_str());
      }
    }
    return 0;
  }
  CatchSignals();
  const SweepReport report = RunSweep(spec, options);
  std::printf(
      "sweep: shard %d/%d: %lld runs: %lld complete now, %lld already complete, %lld "
      "failed, %lld interrupted; databases in %s\n",
      options.shard.index, options.shard.count, static_cast<long long>(report.in_shard),
      static_cast<long long>(report.complete), static_cast<long long>(report.skipped),
      static_cast<long long>(report.failed), static_cast<long long>(report.interrupted),
      out_dir.c_str());
  if (report.interrupted > 0) return 130;
  return report.failed > 0 ? 1 : 0;
}

int CommandMerge(int argc, char** argv) {
  std::vector<std::string> arguments;
  po::options_description desc(
      "clustersim merge OUT.sqlite IN... : join clustersim databases into one\n\n"
      "Each IN is a database or a directory (its *.sqlite files, by name). Runs get new run ids\n"
      "in OUT (created, or appended to in one transaction); their jobs, timeseries and summary\n"
      "rows follow. The same run twice (same trace and cluster SHA-256, policy, placement,\n"
      "params, runtime model, seed, trace filter, interval and preemption cost) is an error\n"
      "naming both files, and nothing is written.\n\noptions");
  desc.add_options()("help,h", "show this help")("databases", po::value(&arguments)->composing(),
                                                 "OUT.sqlite then the inputs");
  po::positional_options_description positional;
  positional.add("databases", -1);
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm, &positional)) return 0;
  if (arguments.size() < 2) {
    throw InputError(
        "merge: expected OUT.sqlite and at least one input (see clustersim merge "
        "--help)");
  }
  const std::string out = arguments.front();
  const std::vector<std::string> inputs =
      ExpandDatabaseArguments({arguments.begin() + 1, arguments.end()}, out);
  const MergeResult result = MergeDatabases(out, inputs);
  std::printf("merged %lld runs from %zu databases into %s", static_cast<long long>(result.runs),
              inputs.size(), out.c_str());
  if (!result.new_run_ids.empty()) {
    std::printf(" (run ids %lld-%lld)", static_cast<long long>(result.new_run_ids.front()),
                static_cast<long long>(result.new_run_ids.back()));
  }
  std::printf("\n");
  if (result.failed_runs > 0) {
    std::printf("note: %lld of them are not complete (status failed or interrupted)\n",
                static_cast<long long>(result.failed_runs));
  }
  return 0;
}

}  // namespace clustersim
