#include "cli/validate_command.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <set>

#include "app/calibrate.h"
#include "app/options.h"
#include "app/param_scopes.h"
#include "app/progress.h"
#include "app/replay_options.h"
#include "app/run.h"
#include "app/sweep.h"
#include "policies/registry.h"
#include "sim/output/merge.h"
#include "sim/util/error.h"
#include "sim/util/output_path.h"
#include "sim/util/suggest.h"
#include "sim/util/temporary_files.h"

namespace po = boost::program_options;

namespace clustersim {
namespace {

namespace fs = std::filesystem;

// The distances --rank-by accepts (all: lower is closer to the record).
constexpr const char* kRankMetrics[] = {"wait_wasserstein_hours", "wait_ks",
                                        "start_error_abs_mean_hours", "utilization_mae",
                                        "queue_length_mae"};

std::string Cell(double v, const char* format) {
  if (!std::isfinite(v)) return "-";
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

double Field(const ValidationReport& r, const std::string& scope, const char* metric,
             double ValidationRow::*field) {
  const ValidationRow* row = r.Find(scope, metric);
  return row ? row->*field : std::nan("");
}
double Value(const ValidationReport& r, const std::string& scope, const char* metric) {
  return Field(r, scope, metric, &ValidationRow::value);
}
double Sim(const ValidationReport& r, const std::string& scope, const char* metric) {
  return Field(r, scope, metric, &ValidationRow::simulated);
}
double Rec(const ValidationReport& r, const std::string& scope, const char* metric) {
  return Field(r, scope, metric, &ValidationRow::recorded);
}

void PrintValidation(const RunConfig& config, const RunOutcome& o) {
  const ValidationReport& r = o.validation;
  std::printf(
      "\nclustersim validate, run %s: %s (%zu jobs, %s) x %s (%d GPUs), %s / %s, runtime %s\n",
      o.run_id >= 0 ? std::to_string(o.run_id).c_str() : "-", config.trace_path.c_str(), o.jobs,
      o.trace_format.c_str(), config.cluster.c_str(), o.gpus, config.policy.c_str(),
      config.placement.c_str(), o.runtime_model.c_str());
  std::printf(
      "  jobs: %lld with a record, %lld of them started in both (compared); %lld rejected "
      "by the simulation (left out); %lld without a record\n",
      static_cast<long long>(r.jobs_recorded), static_cast<long long>(r.jobs_compared),
      static_cast<long long>(r.jobs_rejected),
      static_cast<long long>(r.jobs - r.jobs_rejected - r.jobs_recorded));
  std::printf("\n  %-24s %10s %10s %10s\n", "", "simulated", "recorded", "sim - rec");
  auto line = [&](const char* label, const char* metric, double scale, const char* format) {
    const double s = Sim(r, "all", metric) * scale;
    const double c = Rec(r, "all", metric) * scale;
    const double d = Value(r, "all", metric) * scale;
    std::string signed_format = std::string("%+") + (format + 1);
    std::printf("  %-24s %10s %10s %10s\n", label, Cell(s, format).c_str(), Cell(c, format).c_str(),
                Cell(d, signed_format.c_str()).c_str());
  };
  line("wait mean (h)", "wait_mean_hours", 1, "%.3f");
  line("wait p50 (h)", "wait_p50_hours", 1, "%.3f");
  line("wait p95 (h)", "wait_p95_hours", 1, "%.3f");
  line("wait p99 (h)", "wait_p99_hours", 1, "%.3f");
  line("utilization mean (%)", "utilization_mean", 100, "%.1f");
  line("queue length mean (jobs)", "queue_length_mean", 1, "%.2f");
  std::printf("\n  %-24s KS %s   Wasserstein %s h\n", "wait distributions",
              Cell(Value(r, "all", "wait_ks"), "%.3f").c_str(),
              Cell(Value(r, "all", "wait_wasserstein_hours"), "%.4f").c_str());
  std::printf("  %-24s mean %s   mean |error| %s   p5 %s   p50 %s   p95 %s\n", "start error (h)",
              Cell(Value(r, "all", "start_error_mean_hours"), "%+.3f").c_str(),
              Cell(Value(r, "all", "start_error_abs_mean_hours"), "%.3f").c_str(),
              Cell(Value(r, "all", "start_error_p5_hours"), "%+.3f").c_str(),
              Cell(Value(r, "all", "start_error_p50_hours"), "%+.3f").c_str(),
              Cell(Value(r, "all", "start_error_p95_hours"), "%+.3f").c_str());
  std::printf("  %-24s correlation %s   MAE %s %% of the GPUs (%g s intervals)\n",
              "utilization series",
              Cell(Value(r, "all", "utilization_correlation"), "%.3f").c_str(),
              Cell(100 * Value(r, "all", "utilization_mae"), "%.2f").c_str(),
              config.engine.timeseries_interval_seconds);
  std::printf("  %-24s correlation %s   MAE %s jobs\n", "queue length series",
              Cell(Value(r, "all", "queue_length_correlation"), "%.3f").c_str(),
              Cell(Value(r, "all", "queue_length_mae"), "%.2f").c_str());

  auto scope_table = [&](const std::vector<std::string>& scopes, bool series) {
    std::printf("  %-16s %7s %17s %17s %6s %8s", "", "jobs", "wait mean (h)", "wait p95 (h)", "KS",
                "W1 (h)");
    if (series) std::printf(" %10s %9s", "util corr", "util MAE%");
    std::printf("\n  %-16s %7s %17s %17s\n", "", "", "sim / rec", "sim / rec");
    for (const std::string& scope : scopes) {
      const std::string name = scope.substr(scope.find(':') + 1);
      std::printf("  %-16.16s %7s %8s/%-8s %8s/%-8s %6s %8s", name.c_str(),
                  Cell(Value(r, scope, "jobs"), "%.0f").c_str(),
                  Cell(Sim(r, scope, "wait_mean_hours"), "%.3f").c_str(),
                  Cell(Rec(r, scope, "wait_mean_hours"), "%.3f").c_str(),
                  Cell(Sim(r, scope, "wait_p95_hours"), "%.3f").c_str(),
                  Cell(Rec(r, scope, "wait_p95_hours"), "%.3f").c_str(),
                  Cell(Value(r, scope, "wait_ks"), "%.3f").c_str(),
                  Cell(Value(r, scope, "wait_wasserstein_hours"), "%.3f").c_str());
      if (series) {
        std::printf(" %10s %9s", Cell(Value(r, scope, "utilization_correlation"), "%.3f").c_str(),
                    Cell(100 * Value(r, scope, "utilization_mae"), "%.2f").c_str());
      }
      std::printf("\n");
    }
  };
  std::vector<std::string> sizes;
  std::vector<std::pair<double, std::string>> users;
  for (const ValidationRow& row : r.rows) {
    if (row.metric != "jobs") continue;
    if (row.scope.rfind("size:", 0) == 0) sizes.push_back(row.scope);
    if (row.scope.rfind("user:", 0) == 0) users.emplace_back(-row.value, row.scope);
  }
  std::printf("\n  by size class (GPUs requested; jobs = compared)\n");
  scope_table(sizes, true);
  if (!users.empty()) {
    std::stable_sort(users.begin(), users.end());  // most compared jobs first, then by name
    const size_t shown = std::min<size_t>(users.size(), 10);
    std::printf(
        "\n  by user (the %zu of %zu users with the most compared jobs; all in the "
        "validation table)\n",
        shown, users.size());
    std::vector<std::string> scopes;
    for (size_t k = 0; k < shown; ++k) scopes.push_back(users[k].second);
    scope_table(scopes, false);
  }
  std::printf("\n  %-14s %s   events %llu   wall %.2f s\n", "fingerprint",
              HexFingerprint(o.fingerprint).c_str(), static_cast<unsigned long long>(o.events),
              o.wall_seconds);
  if (!config.out.empty()) std::printf("  %-14s %s\n", "written to", config.out.c_str());
}

struct Candidate {
  RunConfig config;
  std::string label;
  RunOutcome outcome;
  std::exception_ptr error;
  int64_t run_id = -1;
};

int RunSearch(const RunConfig& base, const std::map<std::string, std::string>& base_params,
              const std::vector<CalibrationAxis>& axes, const std::string& rank_by, int jobs,
              bool mkdir, const ProgressStyle& progress_style) {
  // The cross product, the last axis varying fastest.
  std::vector<Candidate> candidates(1);
  candidates[0].config = base;
  std::vector<std::map<std::string, std::string>> params(1, base_params);
  for (const CalibrationAxis& axis : axes) {
    std::vector<Candidate> next;
    std::vector<std::map<std::string, std::string>> next_params;
    for (size_t c = 0; c < candidates.size(); ++c) {
      for (const std::string& value : axis.values) {
        Candidate candidate = candidates[c];
        std::map<std::string, std::string> p = params[c];
        if (axis.key == "policy") {
          FindPolicy(value);
          candidate.config.policy = value;
        } else if (axis.key == "placement") {
          FindPlacement(value);
          candidate.config.placement = value;
        } else if (axis.key == "runtime-model") {
          candidate.config.runtime_model = value;
        } else {
          p[axis.key] = value;
        }
        if (axis.key != "policy" && axis.key != "placement") {
          candidate.label += " " + axis.key + "=" + value;
        }
        next.push_back(std::move(candidate));
        next_params.push_back(std::move(p));
      }
    }
    candidates = std::move(next);
    params = std::move(next_params);
  }
  // Every NAME:key must name a policy or placement the search runs.
  std::vector<std::string> policies, placements;
  for (const Candidate& c : candidates) {
    if (std::find(policies.begin(), policies.end(), c.config.policy) == policies.end()) {
      policies.push_back(c.config.policy);
    }
    if (std::find(placements.begin(), placements.end(), c.config.placement) == placements.end()) {
      placements.push_back(c.config.placement);
    }
  }
  for (const CalibrationAxis& axis : axes) {
    if (axis.key == "policy" || axis.key == "placement" || axis.key == "runtime-model") continue;
    if (const std::string problem = ParamScopeProblem(axis.key, policies, placements);
        !problem.empty()) {
      throw InputError("--search " + axis.key + "=...: " + problem);
    }
  }
  CheckParamScopes(base_params, policies, placements, "--param");
  for (size_t c = 0; c < candidates.size(); ++c) {
    candidates[c].label =
        candidates[c].config.policy + "/" + candidates[c].config.placement + candidates[c].label;
    candidates[c].config.params =
        ParamsForRun(params[c], candidates[c].config.policy, candidates[c].config.placement);
  }
  // Every configuration's names, parameters and settings, before any simulates.
  for (const Candidate& c : candidates) {
    try {
      CheckRunConfig(c.config);
    } catch (const InputError& e) {
      std::string hint = " (a parameter for some policies only: --search NAME:key=values)";
      for (const CalibrationAxis& axis : axes) {
        const std::string near = NearestName(axis.key, {"policy", "placement", "runtime-model"});
        if (!near.empty() && near != axis.key &&
            std::string(e.what()).find(axis.key) != std::string::npos) {
          hint = " (--search " + axis.key + "=...: did you mean --search " + near + "=...?)";
        }
      }
      throw InputError("--search configuration " + c.label + ": " + e.what() + hint);
    }
  }
  // Each run writes its own database in a private folder; they are merged into the output only
  // when every run succeeded, so a failing run leaves nothing behind. The folder of the default
  // output (results/) is made; a folder the user named must exist.
  PrepareOutputFolder(base.out, "--out", mkdir);
  const std::string scratch = base.out + ".validate-tmp-" + std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(scratch, ec);
  if (!fs::create_directories(scratch, ec)) {
    throw InputError(scratch, 0, 0, "cannot create a temporary directory");
  }
  const RemoveOnSignal remove_on_signal(scratch, true);
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } cleanup{scratch};
  {
    BatchProgress progress("configurations", candidates.size(), progress_style, false,
                           "clustersim validate");
    // The trace's sanity report and the settings' warnings are the same for every
    // configuration: shown once, after the runs, not once per configuration.
    const spdlog::level::level_enum level = spdlog::get_level();
    spdlog::set_level(std::max(level, spdlog::level::err));
    ParallelFor(candidates.size(), jobs, [&](size_t i) {
      Candidate& c = candidates[i];
      c.config.out = scratch + "/run-" + std::to_string(i) + ".sqlite";
      c.config.engine.interrupt = StopFlag();
      const int slot = progress.Begin();
      if (progress.enabled()) {
        c.config.engine.progress = [&progress, slot](const EngineProgress& p) {
          progress.Update(slot, RunProgressFraction(p));
        };
      }
      try {
        c.outcome = ExecuteRun(c.config);
      } catch (...) {
        c.error = std::current_exception();
      }
      progress.End(slot);
    });
    spdlog::set_level(level);
  }
  if (spdlog::should_log(spdlog::level::warn)) {
    std::set<std::string> warned;
    for (const Candidate& c : candidates) {
      for (const auto* list : {&c.outcome.trace_warnings, &c.outcome.warnings}) {
        for (const std::string& warning : *list) {
          if (warned.insert(warning).second) spdlog::warn("{}", warning);
        }
      }
    }
  }
  for (const Candidate& c : candidates) {
    if (!c.error) continue;
    try {
      std::rethrow_exception(c.error);
    } catch (const InputError& e) {
      throw InputError("--search configuration " + c.label + ": " + e.what() +
                       " (a parameter for some policies only: --search NAME:key=values)");
    }
  }
  std::vector<std::string> files;
  for (const Candidate& c : candidates) files.push_back(c.config.out);
  MergeOptions merge_options;
  merge_options.reject_duplicates = false;
  const MergeResult merged = MergeDatabases(base.out, files, merge_options);
  bool interrupted = false;
  for (size_t i = 0; i < candidates.size(); ++i) {
    candidates[i].run_id = merged.new_run_ids[i];
    interrupted = interrupted || candidates[i].outcome.status != RunStatus::kComplete;
  }
  // Closest first; a configuration without the distance (NaN) last.
  std::vector<size_t> order(candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto distance = [&](size_t i) {
    const double d = Value(candidates[i].outcome.validation, "all", rank_by.c_str());
    return std::isfinite(d) ? d : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return distance(a) < distance(b); });
  const RunOutcome& first = candidates.front().outcome;
  std::printf(
      "clustersim validate --search: %s (%zu jobs, %s) x %s (%d GPUs): %zu configurations "
      "ranked by %s\n",
      base.trace_path.c_str(), first.jobs, first.trace_format.c_str(), base.cluster.c_str(),
      first.gpus, candidates.size(), rank_by.c_str());
  std::printf("%4s %4s  %-36s %8s %6s %10s %10s %9s %9s\n", "rank", "run", "configuration",
              "W1 (h)", "KS", "wait mean", "(rec)", "util corr", "util MAE%");
  for (size_t k = 0; k < order.size(); ++k) {
    const Candidate& c = candidates[order[k]];
    const ValidationReport& r = c.outcome.validation;
    std::printf("%4zu %4lld  %-36.36s %8s %6s %10s %10s %9s %9s%s\n", k + 1,
                static_cast<long long>(c.run_id), c.label.c_str(),
                Cell(Value(r, "all", "wait_wasserstein_hours"), "%.4f").c_str(),
                Cell(Value(r, "all", "wait_ks"), "%.3f").c_str(),
                Cell(Sim(r, "all", "wait_mean_hours"), "%.4f").c_str(),
                Cell(Rec(r, "all", "wait_mean_hours"), "%.4f").c_str(),
                Cell(Value(r, "all", "utilization_correlation"), "%.3f").c_str(),
                Cell(100 * Value(r, "all", "utilization_mae"), "%.2f").c_str(),
                c.outcome.status == RunStatus::kComplete ? "" : "  (interrupted)");
  }
  std::printf(
      "waits in hours; W1 = Wasserstein distance of the wait distributions; written to %s "
      "(runs %lld-%lld)\n",
      base.out.c_str(), static_cast<long long>(candidates.front().run_id),
      static_cast<long long>(candidates.back().run_id));
  return interrupted ? 130 : 0;
}

// The search table and the held-out validation of `validate --calibrate`.
void PrintCalibration(const CalibrationConfig& config, const CalibrationResult& result) {
  const RunOutcome& first = result.trials.front().outcome;
  std::printf(
      "clustersim validate --calibrate: %s x %s: calibrated on the %lld jobs submitted before "
      "t = %.0f s (--split %g), compared on the other %lld\n",
      config.base.trace_path.c_str(), config.base.cluster.c_str(),
      static_cast<long long>(result.calibration_jobs), result.split_time, config.split,
      static_cast<long long>(result.held_out_jobs));
  std::printf("search: %zu configurations (coordinate descent over %zu axes), objective %s, on "
              "the calibration part (%zu jobs replayed)\n",
              result.trials.size(), config.axes.size(), config.objective.c_str(), first.jobs);
  std::vector<size_t> order(result.trials.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return result.trials[a].objective < result.trials[b].objective;
  });
  // The configuration column is as wide as its longest label: a value is never cut.
  int width = static_cast<int>(std::string("configuration").size());
  for (const CalibrationTrial& t : result.trials) {
    width = std::max(width, static_cast<int>(t.label.empty() ? 10 : t.label.size()));
  }
  std::printf("%4s %4s  %-*s %8s %6s %10s %10s %9s\n", "rank", "run", width, "configuration",
              config.objective == "fit" ? "fit" : "distance", "KS", "wait mean", "(rec)",
              "util corr");
  const size_t shown = std::min<size_t>(order.size(), 15);
  for (size_t k = 0; k < shown; ++k) {
    const CalibrationTrial& t = result.trials[order[k]];
    const ValidationReport& r = t.outcome.validation;
    std::printf("%4zu %4lld  %-*s %8s %6s %10s %10s %9s%s\n", k + 1,
                static_cast<long long>(t.run_id), width,
                t.label.empty() ? "(as given)" : t.label.c_str(), Cell(t.objective, "%.3f").c_str(),
                Cell(Value(r, "all", "wait_ks"), "%.3f").c_str(),
                Cell(Sim(r, "all", "wait_mean_hours"), "%.3f").c_str(),
                Cell(Rec(r, "all", "wait_mean_hours"), "%.3f").c_str(),
                Cell(Value(r, "all", "utilization_correlation"), "%.3f").c_str(),
                order[k] == result.chosen ? "  <- chosen" : "");
  }
  if (shown < order.size()) std::printf("  ... %zu more in the database\n", order.size() - shown);
  std::printf("\nheld-out part: the chosen configuration on the whole log, compared on the %lld "
              "jobs submitted from t = %.0f s on (series from that day on)\n",
              static_cast<long long>(result.held_out_jobs), result.split_time);
  PrintValidation(result.evaluation_config, result.evaluation);
  const double fit = CalibrationObjective(result.evaluation.validation, "fit");
  std::printf("  %-14s %s (<= 1: KS <= 0.15, mean wait within 25 %%, utilization correlation "
              ">= 0.8)\n",
              "held-out fit", Cell(fit, "%.3f").c_str());
}

}  // namespace

int CommandValidate(int argc, char** argv) {
  RunConfig config;
  FilterArgs filter_args;
  std::vector<std::string> params;
  std::vector<std::string> searches;
  std::string rank_by = "wait_wasserstein_hours";
  std::string log_level = "warn";
  int jobs = DefaultJobCount();
  bool calibrate = false;
  double split = 0.5;
  int rounds = 3;
  bool mkdir = false;
  ProgressOptions progress_options;
  po::options_description desc(
      "clustersim validate --trace F --cluster C --policy P [run options]: replay a trace that\n"
      "records its real schedule and compare the simulation with it (docs/validation.md)\n\n"
      "Job by job (start-time error), wait distributions (mean, p50, p95, p99, "
      "Kolmogorov-Smirnov,\n"
      "Wasserstein distance in hours), utilization and queue-length series (correlation, mean\n"
      "absolute error), overall, per size class and per user. Printed, and written with the run\n"
      "(tables validation, validation_series, allocations). --search key=v1,v2 (repeatable; keys\n"
      "policy, placement, runtime-model or a [NAME:]parameter) runs the cross product and ranks\n"
      "the configurations by --rank-by.\n\noptions");
  desc.add_options()("help,h", "show this help")("trace", po::value(&config.trace_path),
                                                 "trace file with a recorded schedule (required)")(
      "policy", po::value(&config.policy)->default_value("fcfs"), "ordering policy")(
      "placement", po::value(&config.placement)->default_value("first-fit"), "placement strategy")(
      "runtime-model", po::value(&config.runtime_model)->default_value("trace"),
      "trace | hardware (default trace: jobs run their recorded durations)")(
      "param", po::value(&params)->composing(), "[NAME:]key=value policy parameter (repeatable)")(
      "out", po::value(&config.out)->default_value("results/validate.sqlite"),
      "SQLite database to append the run(s) to")(
      "search", po::value(&searches)->composing(),
      "key=v1,v2,...: try each value (repeatable: the cross product)")(
      "rank-by", po::value(&rank_by)->default_value(rank_by),
      "distance ranking --search: wait_wasserstein_hours, wait_ks, start_error_abs_mean_hours, "
      "utilization_mae, queue_length_mae")(
      "jobs,j", po::value(&jobs), "--search runs in parallel (default: the number of cores)")(
      "calibrate", po::bool_switch(&calibrate),
      "search the --search axes (also site.<path> of the cluster spec) by coordinate descent on "
      "the jobs before --split, then replay the whole log and compare the rest (the held-out "
      "part); objective --rank-by (default fit)")(
      "split", po::value(&split)->default_value(0.5),
      "--calibrate: share of the jobs, by submit time, to calibrate on")(
      "rounds", po::value(&rounds)->default_value(3),
      "--calibrate: sweeps of the coordinate descent at most")(
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
  mkdir = mkdir || vm["out"].defaulted();
  if (config.trace_path.empty()) {
    throw InputError("validate: expected --trace FILE (a trace that records its schedule)");
  }
  CheckReplayOptions(config);
  if (jobs < 1) throw InputError("--jobs: expected a count >= 1");
  if (calibrate) {
    if (vm["rank-by"].defaulted()) rank_by = "fit";
    config.filter = MakeFilter(filter_args);
    config.validate = true;
    CatchStopSignals();
    CalibrationConfig calibration;
    calibration.base = config;
    calibration.base.engine.interrupt = StopFlag();
    for (const std::string& p : params) {
      Params parsed;
      parsed.AddAssignment(p);
      calibration.params.insert(parsed.values().begin(), parsed.values().end());
    }
    std::set<std::string> keys;
    for (const std::string& text : searches) {
      calibration.axes.push_back(ParseCalibrationAxis(text));
      if (!keys.insert(calibration.axes.back().key).second) {
        throw InputError("--search: the key " + calibration.axes.back().key + " is given twice");
      }
    }
    calibration.split = split;
    calibration.objective = rank_by;
    calibration.jobs = jobs;
    calibration.rounds = rounds;
    const CalibrationResult result = Calibrate(calibration);
    PrintCalibration(calibration, result);
    return result.evaluation.status == RunStatus::kComplete ? 0 : 130;
  }
  if (!vm["split"].defaulted() || !vm["rounds"].defaulted()) {
    spdlog::warn("--split and --rounds have nothing to act on without --calibrate");
  }
  if (std::find(std::begin(kRankMetrics), std::end(kRankMetrics), rank_by) ==
      std::end(kRankMetrics)) {
    throw InputError("--rank-by " + rank_by +
                     ": expected wait_wasserstein_hours, wait_ks, start_error_abs_mean_hours, "
                     "utilization_mae or queue_length_mae" +
                     DidYouMean(rank_by, std::vector<std::string>(std::begin(kRankMetrics),
                                                                  std::end(kRankMetrics))));
  }
  if (searches.empty() && !vm["rank-by"].defaulted()) {
    spdlog::warn("--rank-by has nothing to rank without --search");
  }
  config.filter = MakeFilter(filter_args);
  config.validate = true;
  CatchStopSignals();
  const std::map<std::string, std::string> given = ParseParamOptions(params);
  if (!searches.empty()) {
    std::vector<CalibrationAxis> axes;
    std::set<std::string> keys;
    for (const std::string& text : searches) {
      axes.push_back(ParseCalibrationAxis(text));
      if (!keys.insert(axes.back().key).second) {
        throw InputError("--search: the key " + axes.back().key + " is given twice");
      }
    }
    return RunSearch(config, given, axes, rank_by, jobs, mkdir, progress_style);
  }
  CheckParamScopes(given, {config.policy}, {config.placement}, "--param");
  config.params = ParamsForRun(given, config.policy, config.placement);
  PrepareOutputFolder(config.out, "--out", mkdir);
  config.engine.interrupt = StopFlag();
  RunOutcome outcome;
  {
    TaskProgress progress("clustersim validate", progress_style);
    if (progress.enabled()) {
      config.engine.progress = [&progress](const EngineProgress& p) {
        progress.Update(RunProgressFraction(p), RunProgressDetail(p));
      };
    }
    outcome = ExecuteRun(config);
  }
  PrintValidation(config, outcome);
  return outcome.status == RunStatus::kComplete ? 0 : 130;
}

}  // namespace clustersim
