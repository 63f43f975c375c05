#include "app/calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "app/sweep.h"
#include "policies/registry.h"
#include "sim/output/merge.h"
#include "sim/util/error.h"
#include "sim/util/json_file.h"
#include "workloads/reader.h"
#include "workloads/transforms.h"

namespace clustersim {
namespace {

namespace fs = std::filesystem;
constexpr double kInf = std::numeric_limits<double>::infinity();

bool IsClusterPath(const std::string& key) {
  return key.rfind("site.", 0) == 0 || key == "site" || key.rfind("nodes[", 0) == 0 ||
         key.rfind("network.", 0) == 0;
}

// Sets the value at `path` ("site.user_limits[0].max_running_jobs") in `doc`, creating missing
// object members; `null` removes it. Throws InputError for an index that does not exist or a
// step into something that is not an object or array.
void SetAtPath(nlohmann::json* doc, const std::string& path, const std::string& text) {
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    value = text;  // "4h", "Mon-Fri": a string
  }
  nlohmann::json* at = doc;
  nlohmann::json* parent = nullptr;
  std::string last_key;
  size_t begin = 0;
  auto fail = [&](const std::string& why) {
    throw InputError("--calibrate axis " + path + ": " + why);
  };
  while (begin < path.size()) {
    size_t end = path.find_first_of(".[", begin);
    if (end == std::string::npos) end = path.size();
    if (end > begin) {
      const std::string key = path.substr(begin, end - begin);
      if (!at->is_object()) {
        if (!at->is_null()) fail("\"" + key + "\" is a member of something that is not an object");
        *at = nlohmann::json::object();
      }
      parent = at;
      last_key = key;
      at = &(*at)[key];
    }
    if (end < path.size() && path[end] == '[') {
      const size_t close = path.find(']', end);
      if (close == std::string::npos) fail("an unclosed [");
      const int index = std::atoi(path.substr(end + 1, close - end - 1).c_str());
      if (!at->is_array() || index < 0 || index >= static_cast<int>(at->size())) {
        fail("no element [" + std::to_string(index) + "]");
      }
      parent = nullptr;
      at = &(*at)[static_cast<size_t>(index)];
      end = close + 1;
    }
    begin = end < path.size() && path[end] == '.' ? end + 1 : end;
  }
  if (value.is_null() && parent != nullptr) {
    parent->erase(last_key);
  } else {
    *at = value;
  }
}

std::string BaseClusterText(const RunConfig& config) {
  if (!config.cluster_json.empty()) return config.cluster_json;
  if (std::string text = ClusterSpec::PresetText(config.cluster); !text.empty()) return text;
  return ReadFileText(config.cluster);
}

}  // namespace

CalibrationAxis ParseCalibrationAxis(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw InputError("--search " + text + ": expected key=value1,value2,...");
  }
  CalibrationAxis axis;
  axis.key = text.substr(0, eq);
  if (axis.key == "runtime_model") axis.key = "runtime-model";
  size_t start = eq + 1;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string value =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (value.empty()) throw InputError("--search " + text + ": an empty value");
    if (std::find(axis.values.begin(), axis.values.end(), value) != axis.values.end()) {
      throw InputError("--search " + text + ": " + value + " is listed twice");
    }
    axis.values.push_back(std::move(value));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return axis;
}

const std::vector<std::string>& CalibrationObjectives() {
  static const std::vector<std::string> names = {
      "fit", "wait_wasserstein_hours", "wait_ks", "start_error_abs_mean_hours", "utilization_mae",
      "queue_length_mae"};
  return names;
}

double CalibrationObjective(const ValidationReport& report, const std::string& objective) {
  auto value = [&](const char* metric) {
    const ValidationRow* row = report.Find("all", metric);
    return row ? row->value : std::nan("");
  };
  if (objective == "fit") {
    const double ks = value("wait_ks");
    const ValidationRow* mean = report.Find("all", "wait_mean_hours");
    const double corr = value("utilization_correlation");
    if (!std::isfinite(ks) || mean == nullptr) return kInf;
    const double relative = mean->recorded > 0
                                ? std::abs(mean->simulated - mean->recorded) / mean->recorded
                                : (mean->simulated > 0 ? kInf : 0.0);
    const double series = std::isfinite(corr) ? (1 - corr) / 0.2 : 1 / 0.2;
    return std::max({ks / 0.15, relative / 0.25, series});
  }
  const double v = value(objective.c_str());
  return std::isfinite(v) ? v : kInf;
}

CalibrationResult Calibrate(const CalibrationConfig& config) {
  CheckSplitShare(config.split);
  const auto& objectives = CalibrationObjectives();
  if (std::find(objectives.begin(), objectives.end(), config.objective) == objectives.end()) {
    std::string list;
    for (const std::string& o : objectives) list += (list.empty() ? "" : ", ") + o;
    throw InputError("--rank-by " + config.objective + ": expected one of " + list);
  }
  if (config.rounds < 1) throw InputError("--rounds: expected a count >= 1");
  if (config.base.out.empty()) throw InputError("--calibrate needs an output database (--out)");
  if (config.base.filter.load_factor != 1) {
    throw InputError("--load-factor: validate compares with the record, which a load factor moves");
  }
  for (const CalibrationAxis& axis : config.axes) {
    if (axis.key == "policy") {
      for (const std::string& v : axis.values) FindPolicy(v);
    } else if (axis.key == "placement") {
      for (const std::string& v : axis.values) FindPlacement(v);
    }
  }
  const nlohmann::json base_cluster =
      ParseJsonText(BaseClusterText(config.base), config.base.cluster);

  // The split: the submit time of the first held-out job.
  CalibrationResult result;
  {
    const Trace trace = LoadTrace(config.base.trace_path, config.base.trace_format,
                                  config.base.filter);
    result.split_time = SplitTime(trace, config.split, config.base.trace_path);
    // Jobs submitted at the split time belong to the held-out part.
    for (const Job& job : trace.jobs) {
      (job.submit_time < result.split_time ? result.calibration_jobs : result.held_out_jobs)++;
    }
  }

  // A configuration of the search as a run config.
  auto make = [&](const std::vector<size_t>& choice, std::string* label) {
    RunConfig run = config.base;
    std::map<std::string, std::string> params = config.params;
    nlohmann::json cluster = base_cluster;
    bool cluster_changed = false;
    label->clear();
    for (size_t a = 0; a < config.axes.size(); ++a) {
      const CalibrationAxis& axis = config.axes[a];
      const std::string& value = axis.values[choice[a]];
      *label += (label->empty() ? "" : " ") + axis.key + "=" + value;
      if (axis.key == "policy") {
        run.policy = value;
      } else if (axis.key == "placement") {
        run.placement = value;
      } else if (axis.key == "runtime-model") {
        run.runtime_model = value;
      } else if (IsClusterPath(axis.key)) {
        SetAtPath(&cluster, axis.key, value);
        cluster_changed = true;
      } else {
        params[axis.key] = value;
      }
    }
    if (cluster_changed) run.cluster_json = cluster.dump();
    run.params = ParamsForRun(params, run.policy, run.placement);
    run.validate = true;
    return run;
  };

  // Scratch databases, merged into the output once every run succeeded.
  const fs::path out_path(config.base.out);
  if (!out_path.parent_path().empty()) {
    std::error_code ec;
    fs::create_directories(out_path.parent_path(), ec);
  }
  const std::string scratch = config.base.out + ".calibrate-tmp-" + std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(scratch, ec);
  if (!fs::create_directories(scratch, ec)) {
    throw InputError(scratch, 0, 0, "cannot create a temporary directory");
  }
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } cleanup{scratch};

  std::map<std::vector<size_t>, size_t> tried;  // choice -> index into trials
  // Runs the configurations not run yet, in parallel; returns their trial indices.
  auto run_all = [&](const std::vector<std::vector<size_t>>& choices) {
    std::vector<size_t> fresh;
    for (const auto& choice : choices) {
      if (tried.count(choice)) continue;
      CalibrationTrial trial;
      trial.choice = choice;
      tried[choice] = result.trials.size();
      fresh.push_back(result.trials.size());
      result.trials.push_back(std::move(trial));
    }
    std::vector<RunConfig> runs(fresh.size());
    for (size_t k = 0; k < fresh.size(); ++k) {
      CalibrationTrial& trial = result.trials[fresh[k]];
      runs[k] = make(trial.choice, &trial.label);
      runs[k].filter.window_end = std::min(runs[k].filter.window_end, result.split_time);
      runs[k].out = scratch + "/trial-" + std::to_string(fresh[k]) + ".sqlite";
      runs[k].allow_duplicate = true;
    }
    std::vector<std::exception_ptr> errors(fresh.size());
    ParallelFor(fresh.size(), config.jobs, [&](size_t k) {
      try {
        result.trials[fresh[k]].outcome = ExecuteRun(runs[k]);
      } catch (...) {
        errors[k] = std::current_exception();
      }
      if (config.on_trial) config.on_trial(fresh[k] + 1);
    });
    for (size_t k = 0; k < fresh.size(); ++k) {
      if (!errors[k]) continue;
      try {
        std::rethrow_exception(errors[k]);
      } catch (const InputError& e) {
        throw InputError("--calibrate configuration " + result.trials[fresh[k]].label + ": " +
                         e.what());
      }
    }
    for (size_t index : fresh) {
      CalibrationTrial& trial = result.trials[index];
      trial.objective = CalibrationObjective(trial.outcome.validation, config.objective);
    }
  };

  // Coordinate descent.
  std::vector<size_t> current(config.axes.size(), 0);
  run_all({current});
  for (int round = 0; round < config.rounds; ++round) {
    bool changed = false;
    for (size_t a = 0; a < config.axes.size(); ++a) {
      std::vector<std::vector<size_t>> choices;
      for (size_t v = 0; v < config.axes[a].values.size(); ++v) {
        std::vector<size_t> choice = current;
        choice[a] = v;
        choices.push_back(choice);
      }
      run_all(choices);
      size_t best = current[a];
      // The best of the axis (the minimum, first listed on ties).
      double best_value = result.trials[tried[current]].objective;
      for (size_t v = 0; v < config.axes[a].values.size(); ++v) {
        std::vector<size_t> choice = current;
        choice[a] = v;
        const double o = result.trials[tried[choice]].objective;
        if (o < best_value - 1e-12) {
          best_value = o;
          best = v;
        }
      }
      if (best != current[a]) {
        current[a] = best;
        changed = true;
      }
    }
    if (!changed) break;
  }
  result.chosen = tried[current];

  // Every search run into the output, then the evaluation run last.
  std::vector<std::string> files;
  for (size_t k = 0; k < result.trials.size(); ++k) {
    files.push_back(scratch + "/trial-" + std::to_string(k) + ".sqlite");
  }
  MergeOptions merge_options;
  merge_options.reject_duplicates = false;
  const MergeResult merged = MergeDatabases(config.base.out, files, merge_options);
  for (size_t k = 0; k < result.trials.size(); ++k) result.trials[k].run_id = merged.new_run_ids[k];
  std::string label;
  result.evaluation_config = make(current, &label);
  result.evaluation_config.validate_from = result.split_time;
  result.evaluation_config.allow_duplicate = true;
  result.evaluation = ExecuteRun(result.evaluation_config);
  return result;
}

}  // namespace clustersim
