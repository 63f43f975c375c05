#include "cli/experiment_commands.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <set>

#include "app/options.h"
#include "app/progress.h"
#include "app/replay_options.h"
#include "app/run.h"
#include "app/sweep.h"
#include "policies/registry.h"
#include "sim/output/comparison.h"
#include "sim/output/merge.h"
#include "sim/util/duration.h"
#include "sim/util/error.h"
#include "sim/util/output_path.h"
#include "sim/util/temporary_files.h"

namespace po = boost::program_options;

namespace clustersim {
namespace {

namespace fs = std::filesystem;


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
// While it exists, a signal that stops the process removes it (sim/util/temporary_files.h).
class ScopedDirectory {
 public:
  explicit ScopedDirectory(std::string path)
      : path_(std::move(path)), remove_on_signal_(path_, true) {
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
  RemoveOnSignal remove_on_signal_;
};

// The headline metrics of compare, in table and CSV order.
struct Column {
  const char* metric;  // summary metric
  const char* title;   // table heading
  enum Kind { kCount, kTime, kPercent, kRatio, kDollars } kind;
  bool only_if_nonzero = false;  // in the table only when some run has a value other than 0
};
// Killed (timeout) and unfinished jobs stand beside the completed ones whatever their number: the
// time figures count them (docs/metrics.md#jobs), and a reader must see how many there are.
constexpr Column kColumns[] = {
    {"jobs_completed", "completed", Column::kCount},
    {"jobs_rejected", "rejected", Column::kCount, true},
    {"jobs_timeout", "timeout", Column::kCount},
    {"jobs_unfinished", "unfinished", Column::kCount},
    {"jct_seconds_mean", "JCT mean", Column::kTime},
    {"jct_seconds_p95", "JCT p95", Column::kTime},
    {"wait_seconds_mean", "1st wait", Column::kTime},
    {"queued_seconds_mean", "queued", Column::kTime},
    {"queued_seconds_p95", "queued p95", Column::kTime},
    {"bsld_mean", "bsld", Column::kRatio},
    {"preemptions_per_job", "preempt/job", Column::kRatio},
    {"gpu_utilization", "util %", Column::kPercent},
    {"cost_usd", "cost $", Column::kDollars},
    {"makespan_seconds", "makespan", Column::kTime},
};
// CSV only.
constexpr const char* kCsvExtra[] = {"wait_seconds_p95",
                                     "queued_seconds_p50",
                                     "queued_seconds_p99",
                                     "bsld_p50",
                                     "bsld_p95",
                                     "bsld_p99",
                                     "bsld_threshold_seconds",
                                     "slowdown_mean",
                                     "preemptions",
                                     "throughput_jobs_per_hour",
                                     "stranded_gpus_mean",
                                     "energy_kwh",
                                     "horizon_seconds"};

struct CompareRun {
  RunConfig config;
  RunOutcome outcome;
  std::exception_ptr error;
  int64_t run_id = -1;
  ComparedRun seen;  // what it saw and its figures over its own span (sim/output/comparison.h)
  // Over the runs' shared horizon: utilization, the cluster's cost, the horizon itself.
  double utilization = 0, cost_usd = 0, horizon_seconds = 0;
};

// A figure of the table: the summary's, with utilization and cost over the shared horizon.
double Figure(const CompareRun& run, const std::string& metric) {
  if (metric == "gpu_utilization") return run.utilization;
  if (metric == "cost_usd") return run.cost_usd;
  if (metric == "horizon_seconds") return run.horizon_seconds;
  return SummaryValue(run.outcome.summary, metric);
}

void PrintCompareTable(const std::vector<CompareRun>& runs, bool seeds) {
  // Times in hours when any makespan reaches an hour, else in seconds (small test traces).
  bool hours = false;
  for (const CompareRun& run : runs) {
    hours = hours || SummaryValue(run.outcome.summary, "makespan_seconds") >= 3600;
  }
  const double time_unit = hours ? 3600 : 1;
  std::vector<const Column*> columns;
  for (const Column& c : kColumns) {
    bool shown = !c.only_if_nonzero;
    for (const CompareRun& run : runs) {
      const double v = Figure(run, c.metric);
      shown = shown || (!std::isnan(v) && v != 0);
    }
    if (shown) columns.push_back(&c);
  }
  std::printf("%4s  %-12s %-10s", "run", "policy", "placement");
  if (seeds) std::printf(" %4s", "seed");
  for (const Column* c : columns) std::printf(" %*s", std::max<int>(8, strlen(c->title)), c->title);
  std::printf("\n");
  for (const CompareRun& run : runs) {
    std::printf("%4lld  %-12s %-10s", static_cast<long long>(run.run_id), run.config.policy.c_str(),
                run.config.placement.c_str());
    if (seeds) std::printf(" %4lld", static_cast<long long>(run.config.seed));
    for (const Column* c : columns) {
      const int width = std::max<int>(8, strlen(c->title));
      const double v = Figure(run, c->metric);
      if (std::isnan(v)) {
        std::printf(" %*s", width, "-");
      } else if (c->kind == Column::kCount) {
        std::printf(" %*.0f", width, v);
      } else if (c->kind == Column::kTime) {
        std::printf(" %*.2f", width, v / time_unit);
      } else if (c->kind == Column::kPercent) {
        std::printf(" %*.1f", width, 100 * v);
      } else if (c->kind == Column::kDollars) {
        std::printf(" %*.0f", width, v);
      } else {
        std::printf(" %*.2f", width, v);
      }
    }
    if (run.outcome.status != RunStatus::kComplete) std::printf("  (interrupted)");
    std::printf("\n");
  }
  const double threshold = SummaryValue(runs.front().outcome.summary, "bsld_threshold_seconds");
  std::printf(
      "times (JCT, waits, makespan) in %s; JCT and 1st wait over every job that arrived: a "
      "killed one (timeout) to its kill time, an unfinished one to the end of its run (a lower "
      "bound); 1st wait = submission to first start; queued = all time waiting, after "
      "preemptions too; bsld = bounded slowdown max(1, JCT / max(run time, %g s)), jobs that "
      "ended; preempt/job = preemptions per started job; util and cost (the whole cluster at "
      "list prices) over the runs' shared horizon, %.2f %s from the first submission to the "
      "last run's end\n",
      hours ? "hours" : "seconds", threshold, runs.front().horizon_seconds / time_unit,
      hours ? "h" : "s");
}

void PrintCompareCsv(const std::vector<CompareRun>& runs) {
  std::printf("run_id,policy,placement,seed,status");
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
    std::printf("%lld,%s,%s,%lld,%s", static_cast<long long>(run.run_id), run.config.policy.c_str(),
                run.config.placement.c_str(), static_cast<long long>(run.config.seed),
                run.outcome.status == RunStatus::kComplete ? "complete" : "interrupted");
    for (const Column& c : kColumns) value(Figure(run, c.metric));
    for (const char* metric : kCsvExtra) value(Figure(run, metric));
    std::printf(",%s\n", HexFingerprint(run.outcome.fingerprint).c_str());
  }
}

// "0,1,2": distinct integers in the order given. Throws InputError naming --seeds.
std::vector<int64_t> ParseSeeds(const std::string& text) {
  std::vector<int64_t> seeds;
  for (const std::string& item : SplitNames(text, "--seeds")) {
    int64_t seed = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), seed);
    if (ec != std::errc() || end != item.data() + item.size()) {
      throw InputError("--seeds " + text + ": \"" + item + "\" is not an integer");
    }
    seeds.push_back(seed);
  }
  return seeds;
}

}  // namespace

int CommandCompare(int argc, char** argv) {
  RunConfig base;
  FilterArgs filter_args;
  std::vector<std::string> params;
  std::string policies_text;
  std::string placements_text;
  std::string seeds_text;
  std::string log_level;
  bool allow_different_jobs = false;
  int jobs = DefaultJobCount();
  bool mkdir = false;
  ProgressOptions progress_options;
  po::options_description desc(
      "clustersim compare: several policies (x placements) on one trace and cluster, side by "
      "side\n\n"
      "Every run goes into one database; a table of headline metrics (one row per run) is\n"
      "printed, or CSV with --csv. --param NAME:key=value applies only to runs whose policy or\n"
      "placement is NAME (e.g. --param easy:walltime=exact); a plain key=value to every run.\n\n"
      "options");
  desc.add_options()("help,h", "show this help")("trace", po::value(&base.trace_path),
                                                 "trace file (default: the bundled Philly window)")(
      "policies", po::value(&policies_text)->default_value("fcfs,easy"),
      "comma-separated ordering policies")("placements",
                                           po::value(&placements_text)->default_value("first-fit"),
                                           "comma-separated placement strategies")(
      "runtime-model", po::value(&base.runtime_model),
      "trace | hardware (default: hardware on a heterogeneous cluster, else trace)")(
      "param", po::value(&params)->composing(),
      "[NAME:]key=value policy or placement parameter (repeatable)")(
      "seeds", po::value(&seeds_text),
      "comma-separated seeds: every policy x placement once per seed (clustersim report pools "
      "them: mean and 95 % confidence interval)")(
      "out", po::value(&base.out)->default_value("results/compare.sqlite"),
      "SQLite database to append the runs to")(
      "allow-duplicate", po::bool_switch(&base.allow_duplicate),
      "append runs even if --out already holds the same run (same inputs and seed)")(
      "mkdir", po::bool_switch(&mkdir), "create --out's folder if it does not exist")(
      "allow-different-jobs", po::bool_switch(&allow_different_jobs),
      "write and compare runs that did not see the same jobs (some rejected jobs others "
      "accepted); by default such a comparison is refused, naming the jobs")(
      "record-allocations", po::bool_switch(&base.engine.record_allocations),
      "write each run's allocations table (the occupancy view of report --html)")(
      "csv", "print CSV (one line per run, SI units) instead of the table")(
      "jobs,j", po::value(&jobs), "runs in parallel (default: the number of cores)")(
      "log-level", po::value(&log_level)->default_value("error"),
      "trace|debug|info|warn|error (warn shows each run's trace sanity report)");
  AddProgressOptions(desc, &progress_options);
  AddReplayOptions(desc, base);
  AddFilterOptions(desc, filter_args);
  AddModelOptions(desc, base.models);
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm)) return 0;
  SetLogLevel(log_level);
  const ProgressStyle progress_style = ResolveProgress(progress_options);
  CheckReplayOptions(base);
  if (jobs < 1) throw InputError("--jobs: expected a count >= 1");
  base.filter = MakeFilter(filter_args);
  const std::map<std::string, std::string> given = ParseParamOptions(params);
  const std::vector<std::string> policies = SplitNames(policies_text, "--policies");
  const std::vector<std::string> placements = SplitNames(placements_text, "--placements");
  for (const auto& name : policies) FindPolicy(name);
  for (const auto& name : placements) FindPlacement(name);
  CheckParamScopes(given, policies, placements, "--param");
  std::vector<int64_t> seeds = {base.seed};
  if (vm.count("seeds")) {
    if (!vm["seed"].defaulted()) throw InputError("--seed and --seeds: give one of them");
    seeds = ParseSeeds(seeds_text);
  }

  std::vector<CompareRun> runs;
  for (const auto& policy : policies) {
    for (const auto& placement : placements) {
      for (const int64_t seed : seeds) {
        CompareRun run;
        run.config = base;
        run.config.policy = policy;
        run.config.placement = placement;
        run.config.seed = seed;
        run.config.params = ParamsForRun(given, policy, placement);
        // Refused before simulating when the output already holds it (unless allowed).
        run.config.duplicates_of = base.out;
        runs.push_back(std::move(run));
      }
    }
  }
  // Every run's names, parameters and settings against the cluster, before any simulates.
  for (const CompareRun& run : runs) {
    try {
      CheckRunConfig(run.config);
    } catch (const InputError& e) {
      const std::string message = e.what();
      if (message.find("unknown parameter") == std::string::npos) throw;
      throw InputError(message + " (a parameter for some runs only: --param NAME:key=value)");
    }
  }
  // Each run writes its own database in a private folder beside the output; they are copied
  // into the output only when every run has succeeded, so a failing run leaves nothing behind.
  // The folder of the default output (results/) is made; a folder the user named must exist.
  PrepareOutputFolder(base.out, "--out", mkdir || vm["out"].defaulted());
  const ScopedDirectory scratch(base.out + ".compare-tmp-" + std::to_string(::getpid()));
  CatchStopSignals();
  {
    BatchProgress progress("runs", runs.size(), progress_style, false, "clustersim compare");
    ParallelFor(runs.size(), jobs, [&](size_t i) {
      CompareRun& run = runs[i];
      run.config.out = scratch.path() + "/run-" + std::to_string(i) + ".sqlite";
      run.config.engine.interrupt = StopFlag();
      const int slot = progress.Begin();
      if (progress.enabled()) {
        run.config.engine.progress = [&progress, slot](const EngineProgress& p) {
          progress.Update(slot, RunProgressFraction(p));
        };
      }
      try {
        run.outcome = ExecuteRun(run.config);
      } catch (...) {
        run.error = std::current_exception();
      }
      progress.End(slot);
    });
  }
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
  // The runs must have seen the same jobs (sim/output/comparison.h); checked before anything is
  // written, so a refused comparison leaves --out as it was.
  std::vector<ComparedRun> seen;
  for (CompareRun& run : runs) {
    run.seen = ReadComparedRun(run.config.out, run.outcome.run_id);
    run.seen.run_id = -1;  // not in --out yet: named by policy and placement
    if (seeds.size() > 1) run.seen.name += " seed " + std::to_string(run.config.seed);
    seen.push_back(run.seen);
  }
  // An interrupted run did not see the jobs after its stop: its rejections are not comparable,
  // and what was simulated is written as interrupted.
  const bool interrupted = std::any_of(runs.begin(), runs.end(), [](const CompareRun& run) {
    return run.outcome.status != RunStatus::kComplete;
  });
  const std::vector<std::string> differences =
      interrupted ? std::vector<std::string>{} : JobSetDifferences(seen);
  if (!differences.empty() && !allow_different_jobs) {
    throw InputError(DifferentJobsMessage(
        differences, "Nothing was written; --allow-different-jobs writes and compares them "
                     "anyway (docs/metrics.md#comparing-runs)"));
  }
  const Horizon horizon = SharedHorizon(seen);
  for (CompareRun& run : runs) {
    run.utilization = UtilizationOver(run.seen, horizon);
    run.cost_usd = CostOver(run.seen, horizon);
    run.horizon_seconds = horizon.seconds();
  }
  std::vector<std::string> files;
  for (const CompareRun& run : runs) files.push_back(run.config.out);
  MergeOptions merge_options;
  merge_options.reject_duplicates = !base.allow_duplicate;
  const MergeResult merged = MergeDatabases(base.out, files, merge_options);
  for (size_t i = 0; i < runs.size(); ++i) runs[i].run_id = merged.new_run_ids[i];
  if (vm.count("csv")) {
    PrintCompareCsv(runs);
  } else {
    const RunOutcome& first = runs.front().outcome;
    std::string seed_text;
    for (const int64_t seed : seeds)
      seed_text += (seed_text.empty() ? "" : ",") + std::to_string(seed);
    std::printf(
        "clustersim compare: %s (%zu jobs) x %s (%d GPUs), runtime %s, seed%s %s\n",
        base.trace_path.empty() ? "bundled traces/philly_default.csv" : base.trace_path.c_str(),
        first.jobs, base.cluster.c_str(), first.gpus, first.runtime_model.c_str(),
        seeds.size() > 1 ? "s" : "", seed_text.c_str());
    PrintCompareTable(runs, seeds.size() > 1);
    std::printf("written to %s (runs %lld-%lld)\n", base.out.c_str(),
                static_cast<long long>(runs.front().run_id),
                static_cast<long long>(runs.back().run_id));
    if (seeds.size() > 1) {
      std::printf(
          "per seed; mean and 95 %% confidence interval over the seeds: clustersim report "
          "%s --by policy --run %lld-%lld\n",
          base.out.c_str(), static_cast<long long>(runs.front().run_id),
          static_cast<long long>(runs.back().run_id));
    }
  }
  for (const std::string& difference : differences) {
    std::fprintf(stderr,
                 "clustersim compare: warning: the runs saw different jobs (--allow-different-jobs): "
                 "%s\n",
                 difference.c_str());
  }
  // What each policy planned run times with, once per distinct text.
  std::set<std::string> planned;
  for (const CompareRun& run : runs) {
    if (!vm.count("csv") && !run.outcome.planning_estimates.empty() &&
        planned.insert(run.config.policy + "\n" + run.outcome.planning_estimates).second) {
      std::printf("planned run times (%s): %s\n", run.config.policy.c_str(),
                  run.outcome.planning_estimates.c_str());
    }
  }
  // Settings with nothing to act on, once each (the runs' log level hides their own warnings).
  std::set<std::string> warned;
  for (const CompareRun& run : runs) {
    for (const std::string& warning : run.outcome.warnings) {
      if (warned.insert(warning).second) {
        std::fprintf(stderr, "clustersim compare: warning: %s\n", warning.c_str());
      }
    }
  }
  return interrupted ? 130 : 0;
}

int CommandSweep(int argc, char** argv) {
  std::string spec_path;
  std::string out_dir;
  std::string shard_text = "0/1";
  std::string log_level;
  int jobs = DefaultJobCount();
  bool mkdir = false;
  ProgressOptions progress_options;
  po::options_description desc(
      "clustersim sweep SPEC.json --out DIR: run the cross product of a sweep spec\n\n"
      "One database per run in DIR (run-<index>-<key hash>.sqlite) and DIR/sweep.json listing\n"
      "every run. Runs already complete in DIR are skipped (resume). A failing run is recorded\n"
      "with status failed and its error; the others go on; the exit code is then 1.\n"
      "Join the databases with: clustersim merge OUT.sqlite DIR\n\noptions");
  desc.add_options()("help,h", "show this help")("spec", po::value(&spec_path),
                                                 "sweep spec JSON (docs/sweep.md)")(
      "out,o", po::value(&out_dir), "directory for the run databases (required)")(
      "jobs,j", po::value(&jobs), "runs in parallel (default: the number of cores)")(
      "shard", po::value(&shard_text)->default_value("0/1"),
      "i/N: run only the runs whose index mod N is i (a Slurm array task)")(
      "dry-run", "check the spec, list the shard's runs (file and description) and exit")(
      "mkdir", po::bool_switch(&mkdir), "create the folder --out is in if it does not exist")(
      "log-level", po::value(&log_level)->default_value("error"),
      "trace|debug|info|warn|error (warn shows each run's trace sanity report)");
  AddProgressOptions(desc, &progress_options);
  po::positional_options_description positional;
  positional.add("spec", 1);
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm, &positional)) return 0;
  SetLogLevel(log_level);
  const ProgressStyle progress_style = ResolveProgress(progress_options);
  if (spec_path.empty()) throw InputError("sweep: missing SPEC.json (see clustersim sweep --help)");
  if (out_dir.empty()) throw InputError("sweep: missing --out DIR (see clustersim sweep --help)");
  if (jobs < 1) throw InputError("--jobs: expected a count >= 1");
  SweepOptions options;
  options.shard = ParseShard(shard_text);
  options.out_dir = out_dir;
  options.jobs = jobs;
  options.interrupt = StopFlag();
  options.progress = progress_style;
  const SweepSpec spec = LoadSweepSpec(spec_path);
  if (vm.count("dry-run")) {
    for (const SweepRun& run : spec.runs) {
      if (options.shard.Contains(run.index)) {
        std::printf("%s  %s\n", run.file_name.c_str(), run.label.c_str());
      }
    }
    return 0;
  }
  // --out itself is made; the folder it is in must exist.
  fs::path out_folder = fs::path(out_dir).lexically_normal();
  if (!out_folder.has_filename()) out_folder = out_folder.parent_path();  // "out/"
  PrepareOutputFolder(out_folder.string(), "--out", mkdir);
  CatchStopSignals();
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
      "params, runtime model, seed, trace filter, interval, preemption cost, faults and models)\n"
      "is an error naming both files, and nothing is written; with --skip-duplicates the later\n"
      "copy is left out instead.\n\noptions");
  bool mkdir = false;
  desc.add_options()("help,h", "show this help")("databases", po::value(&arguments)->composing(),
                                                 "OUT.sqlite then the inputs")(
      "skip-duplicates", "leave out runs already in OUT or in an earlier input (listed)")(
      "mkdir", po::bool_switch(&mkdir), "create OUT's folder if it does not exist");
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
  PrepareOutputFolder(out, "merge OUT", mkdir);
  RemoveTemporariesOnSignal();
  const std::vector<std::string> inputs =
      ExpandDatabaseArguments({arguments.begin() + 1, arguments.end()}, out);
  MergeOptions merge_options;
  merge_options.skip_duplicates = vm.count("skip-duplicates") > 0;
  const MergeResult result = MergeDatabases(out, inputs, merge_options);
  std::printf("merged %lld runs from %zu databases into %s", static_cast<long long>(result.runs),
              inputs.size(), out.c_str());
  if (!result.new_run_ids.empty()) {
    std::printf(" (run ids %lld-%lld)", static_cast<long long>(result.new_run_ids.front()),
                static_cast<long long>(result.new_run_ids.back()));
  }
  std::printf("\n");
  if (!result.skipped.empty()) {
    std::printf("skipped %zu duplicate run%s (same identity as a run already there):\n",
                result.skipped.size(), result.skipped.size() == 1 ? "" : "s");
    for (const std::string& skipped : result.skipped) std::printf("  %s\n", skipped.c_str());
  }
  if (result.failed_runs > 0) {
    std::printf("note: %lld of them are not complete (status failed or interrupted)\n",
                static_cast<long long>(result.failed_runs));
  }
  return 0;
}

}  // namespace clustersim
