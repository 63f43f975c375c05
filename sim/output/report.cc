#include "sim/output/report.h"

#include <sqlite3.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>

#include "sim/engine/summary.h"
#include "sim/engine/wait_reasons.h"
#include "sim/output/comparison.h"
#include "sim/output/merge.h"
#include "sim/output/sqlite_statement.h"
#include "sim/output/sqlite_writer.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// Metric indices, in ReportMetrics() order.
enum Metric {
  kJobs,
  kCompleted,
  kTimeout,
  kUnfinished,
  kGpuHours,
  kUtilization,
  kCost,
  kWaitMean,
  kWaitP95,
  kQueuedMean,
  kJctMean,
  kBsldMean,
  kPreemptions,
  kPreemptionGpuHours,
  kBorrowedGpuHours,
  kOomFailures,
  kMetricCount
};
// Sums count 0 for a group absent from a run; means are left out then.
constexpr bool kIsSum[kMetricCount] = {true,  true,  true,  true,  true, true, true, false, false,
                                       false, false, false, true,  true, true, true};

double Real(sqlite3_stmt* stmt, int column) {
  return sqlite3_column_type(stmt, column) == SQLITE_NULL ? kNan
                                                          : sqlite3_column_double(stmt, column);
}

bool HasColumn(sqlite3* db, const std::string& path, const std::string& table,
               const std::string& column) {
  Statement s = Prepare(
      db, path, "SELECT 1 FROM pragma_table_info('" + table + "') WHERE name = '" + column + "'");
  return sqlite3_step(s.get()) == SQLITE_ROW;
}

struct RunInfo {
  int64_t run_id = 0;
  std::string status;
  int64_t seed = 0;
  std::string config_key;                     // identity key without the seeds
  std::map<std::string, std::string> fields;  // for labels
};

// The identity key columns but the seed; in `models`, the model-assignment seed is dropped.
std::string ConfigKey(sqlite3_stmt* stmt, int first_column) {
  std::string key;
  int c = first_column;
  for (const std::string_view column : kRunKeyColumns) {
    const int index = c++;
    if (column == "seed") continue;
    std::string value =
        sqlite3_column_type(stmt, index) == SQLITE_NULL ? std::string("\x01") : Text(stmt, index);
    if (column == "models" && !value.empty() && value[0] == '{') {
      nlohmann::json models = nlohmann::json::parse(value, nullptr, false);
      if (models.is_object()) {
        models.erase("assign_seed");
        value = models.dump();
      }
    }
    key += value;
    key += '\x00';
  }
  return key;
}

// Per run and group: the jobs' figures gathered for ReportMetrics().
struct Accumulator {
  double jobs = 0, completed = 0, timeout = 0, unfinished = 0, gpu_hours = 0, cost = 0;
  double preemptions = 0, oom = 0;
  double preemption_gpu_hours = 0, borrowed_gpu_hours = 0;
  bool has_gpu_hours = false, has_cost = false, has_preemption = false, has_borrowed = false;
  std::vector<double> waits;
  double queued_sum = 0, jct_sum = 0, bsld_sum = 0;
  int64_t queued_n = 0, jct_n = 0, bsld_n = 0;

  // `capacity_gpu_hours`: the cluster's GPU-hours over the shared horizon (0: unknown).
  std::vector<double> Values(double capacity_gpu_hours) {
    std::vector<double> v(kMetricCount, kNan);
    v[kJobs] = jobs;
    v[kCompleted] = completed;
    v[kTimeout] = timeout;
    v[kUnfinished] = unfinished;
    v[kGpuHours] = has_gpu_hours ? gpu_hours : kNan;
    if (has_gpu_hours && capacity_gpu_hours > 0) v[kUtilization] = gpu_hours / capacity_gpu_hours;
    v[kCost] = has_cost ? cost : kNan;
    if (!waits.empty()) {
      double sum = 0;
      for (double w : waits) sum += w;
      v[kWaitMean] = sum / waits.size();
      v[kWaitP95] = Percentile(waits, 0.95);
    }
    if (queued_n > 0) v[kQueuedMean] = queued_sum / queued_n;
    if (jct_n > 0) v[kJctMean] = jct_sum / jct_n;
    if (bsld_n > 0) v[kBsldMean] = bsld_sum / bsld_n;
    v[kPreemptions] = preemptions;
    v[kPreemptionGpuHours] = has_preemption ? preemption_gpu_hours : kNan;
    v[kBorrowedGpuHours] = has_borrowed ? borrowed_gpu_hours : kNan;
    v[kOomFailures] = oom;
    return v;
  }
};

using Database = std::unique_ptr<sqlite3, int (*)(sqlite3*)>;

// Opens `path` read-only and checks that it is a clustersim database.
Database OpenDatabase(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) {
    throw InputError(path, 0, 0, "no such database file");
  }
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    const std::string message = raw ? sqlite3_errmsg(raw) : "out of memory";
    sqlite3_close(raw);
    throw InputError(path, 0, 0, "cannot open database: " + message);
  }
  Database owner(raw, sqlite3_close);
  sqlite3* db = owner.get();
  std::string problem;
  try {
    problem = SchemaProblem(db);
  } catch (const InputError& e) {
    problem = std::string("not a SQLite database (") + e.what() + ")";
  }
  if (!problem.empty()) throw InputError(path, 0, 0, "not a clustersim database: " + problem);
  return owner;
}

std::string Basename(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// GPUs of a cluster spec's JSON text (sum of count x gpus_per_node over its node groups); 0 when
// it cannot be read.
double ClusterGpus(const std::string& spec) {
  const nlohmann::json doc = nlohmann::json::parse(spec, nullptr, false);
  if (!doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array()) return 0;
  double gpus = 0;
  for (const nlohmann::json& group : doc["nodes"]) {
    if (!group.is_object() || !group.contains("count") || !group.contains("gpus_per_node") ||
        !group["count"].is_number() || !group["gpus_per_node"].is_number()) {
      return 0;
    }
    // Every node the group can hold, as the summary's gpu_utilization counts them: a pool at
    // its max, a fixed group with its hot spares (docs/autoscaling.md#output).
    double nodes = group["count"].get<double>();
    if (group.contains("spares") && group["spares"].is_number()) nodes += group["spares"].get<double>();
    if (group.contains("autoscale") && group["autoscale"].is_object() &&
        group["autoscale"].contains("max") && group["autoscale"]["max"].is_number()) {
      nodes = group["autoscale"]["max"].get<double>();
    }
    gpus += nodes * group["gpus_per_node"].get<double>();
  }
  return gpus;
}

}  // namespace

ReportGroupBy ParseReportGroupBy(const std::string& text) {
  if (text == "user") return ReportGroupBy::kUser;
  if (text == "vc") return ReportGroupBy::kVc;
  if (text == "gpu_type") return ReportGroupBy::kGpuType;
  if (text == "priority") return ReportGroupBy::kPriority;
  if (text == "policy") return ReportGroupBy::kPolicy;
  throw InputError("--by " + text + ": expected user, vc, gpu_type, priority or policy");
}

const std::vector<ReportMetric>& ReportMetrics() {
  static const std::vector<ReportMetric> metrics = {
      {"jobs", "jobs", ReportUnit::kCount},
      {"completed", "completed", ReportUnit::kCount},
      {"timeout", "timeout", ReportUnit::kCount},
      {"unfinished", "unfinished", ReportUnit::kCount},
      {"gpu_hours", "GPU-h", ReportUnit::kGpuHours},
      {"utilization", "util %", ReportUnit::kPercent},
      {"cost_usd", "cost $", ReportUnit::kDollars},
      {"wait_mean_seconds", "wait mean", ReportUnit::kSeconds},
      {"wait_p95_seconds", "wait p95", ReportUnit::kSeconds},
      {"queued_mean_seconds", "queued mean", ReportUnit::kSeconds},
      {"jct_mean_seconds", "JCT mean", ReportUnit::kSeconds},
      {"bsld_mean", "bsld mean", ReportUnit::kRatio},
      {"preemptions", "preempt", ReportUnit::kCount},
      {"preemption_gpu_hours", "preempt GPU-h", ReportUnit::kGpuHours},
      {"borrowed_gpu_hours", "borrowed GPU-h", ReportUnit::kGpuHours},
      {"oom_failures", "OOM", ReportUnit::kCount},
  };
  return metrics;
}

double StudentT975(int df) {
  if (df < 1) throw InternalError("StudentT975: degrees of freedom < 1");
  const boost::math::students_t distribution(df);
  return boost::math::quantile(boost::math::complement(distribution, 0.025));
}

ReportValue MeanWithInterval(const std::vector<double>& values) {
  ReportValue v;
  v.n = static_cast<int>(values.size());
  v.mean = kNan;
  v.half_width = kNan;
  if (values.empty()) return v;
  double sum = 0;
  for (double x : values) sum += x;
  v.mean = sum / v.n;
  if (v.n < 2) return v;
  double squares = 0;
  for (double x : values) squares += (x - v.mean) * (x - v.mean);
  const double s = std::sqrt(squares / (v.n - 1));
  v.half_width = StudentT975(v.n - 1) * s / std::sqrt(static_cast<double>(v.n));
  return v;
}

namespace {

std::string Shortened(const std::string& text, size_t limit) {
  return text.size() <= limit ? text : text.substr(0, limit - 3) + "...";
}

// key=value pairs of a settings column's JSON object, nested keys joined by '.'; counts that
// are results rather than settings (jobs kept by the filters) and the seed of model assignment
// (it follows the run's seed) left out.
void FlattenSettings(const nlohmann::json& value, const std::string& prefix,
                     const std::string& word,
                     std::vector<std::pair<std::string, std::string>>* out) {
  if (value.is_object()) {
    for (const auto& [key, inner] : value.items()) {
      if (key == "jobs_before" || key == "jobs_kept" || key == "jobs_inflated" ||
          key == "assign_seed") {
        continue;
      }
      FlattenSettings(inner, prefix.empty() ? key : prefix + "." + key, word, out);
    }
    return;
  }
  std::string text;
  if (value.is_string()) {
    text = value.get<std::string>();
  } else if (value.is_array()) {
    for (const auto& v : value)
      text += (text.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
  } else {
    text = value.dump();
  }
  out->emplace_back(word + prefix, word + prefix + "=" + Shortened(text, 32));
}

// What sets a run's configuration apart, as (name, words) in label order.
std::vector<std::pair<std::string, std::string>> LabelItems(const RunInfo& run) {
  std::vector<std::pair<std::string, std::string>> items;
  std::string cluster = run.fields.at("cluster");
  if (cluster.rfind("preset:", 0) == 0) cluster = cluster.substr(7);
  cluster = std::filesystem::path(cluster).stem().string().empty()
                ? cluster
                : std::filesystem::path(cluster).stem().string();
  items.emplace_back("cluster", "on " + Shortened(cluster, 32));
  items.emplace_back("trace", Shortened(run.fields.at("trace"), 32));
  items.emplace_back("runtime", "runtime " + run.fields.at("runtime"));
  for (const auto& [column, word] : {std::pair<const char*, const char*>{"params", ""},
                                     {"trace_filter", "filter "},
                                     {"faults", "faults "},
                                     {"models", "models "}}) {
    const nlohmann::json value = nlohmann::json::parse(run.fields.at(column), nullptr, false);
    if (value.is_discarded()) {
      items.emplace_back(column, std::string(word) + Shortened(run.fields.at(column), 32));
    } else {
      FlattenSettings(value, "", word, &items);
    }
  }
  auto seconds = [](const std::string& text) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", std::atof(text.c_str()));
    return std::string(buffer);
  };
  items.emplace_back("interval",
                     "interval " + seconds(run.fields.at("timeseries_interval_seconds")) + " s");
  const std::string cost = seconds(run.fields.at("preemption_cost_seconds"));
  items.emplace_back("preemption_cost", cost == "0" ? "" : "preemption cost " + cost + " s");
  return items;
}

}  // namespace

Report BuildReport(const std::string& path, const ReportOptions& options) {
  const Database owner = OpenDatabase(path);
  sqlite3* db = owner.get();

  Report report;
  // The runs and their configurations.
  std::string sql =
      "SELECT run_id, status, seed, trace_path, cluster_spec, policy, placement, params, "
      "runtime_model";
  constexpr int kFirstKeyColumn = 9;
  for (const char* column : kRunKeyColumns) sql += std::string(", \"") + column + "\"";
  sql += " FROM runs ORDER BY run_id";
  std::vector<RunInfo> all_runs;
  {
    Statement s = Prepare(db, path, sql);
    while (sqlite3_step(s.get()) == SQLITE_ROW) {
      RunInfo run;
      run.run_id = sqlite3_column_int64(s.get(), 0);
      run.status = Text(s.get(), 1);
      run.seed = sqlite3_column_int64(s.get(), 2);
      run.fields["trace"] = Basename(Text(s.get(), 3));
      run.fields["cluster"] = Text(s.get(), 4);
      run.fields["policy"] = Text(s.get(), 5) + "/" + Text(s.get(), 6);
      run.fields["params"] = Text(s.get(), 7);
      run.fields["runtime"] = Text(s.get(), 8);
      int c = kFirstKeyColumn;
      for (const char* column : kRunKeyColumns) {
        const std::string name = column;
        if (name == "trace_filter" || name == "timeseries_interval_seconds" ||
            name == "preemption_cost_seconds" || name == "faults" || name == "models") {
          run.fields[name] = Text(s.get(), c);
        }
        ++c;
      }
      run.config_key = ConfigKey(s.get(), kFirstKeyColumn);
      all_runs.push_back(std::move(run));
    }
  }
  std::vector<const RunInfo*> selected;
  if (options.run_ids.empty()) {
    for (const RunInfo& run : all_runs) {
      if (run.status == "complete") {
        selected.push_back(&run);
      } else {
        report.notes.push_back("run " + std::to_string(run.run_id) + " left out: status " +
                               run.status);
      }
    }
    if (selected.empty()) throw InputError(path, 0, 0, "no complete run to report");
  } else {
    for (int64_t id : options.run_ids) {
      const auto it = std::find_if(all_runs.begin(), all_runs.end(),
                                   [&](const RunInfo& r) { return r.run_id == id; });
      if (it == all_runs.end()) {
        throw InputError(
            path, 0, 0,
            "no run " + std::to_string(id) + " (the database holds " +
                std::to_string(all_runs.size()) + " runs" +
                (all_runs.empty() ? ""
                                  : ", ids " + std::to_string(all_runs.front().run_id) + "-" +
                                        std::to_string(all_runs.back().run_id)) +
                ")");
      }
      if (it->status != "complete") {
        throw InputError(path, 0, 0,
                         "run " + std::to_string(id) + " has status " + it->status +
                             "; a report covers complete runs only");
      }
      if (std::find(selected.begin(), selected.end(), &*it) == selected.end()) {
        selected.push_back(&*it);
      }
    }
    std::sort(selected.begin(), selected.end(),
              [](const RunInfo* a, const RunInfo* b) { return a->run_id < b->run_id; });
  }

  // Configurations in order of their first run; one run per seed.
  std::map<std::string, size_t> config_of_key;
  std::vector<std::vector<const RunInfo*>> config_runs;
  for (const RunInfo* run : selected) {
    auto [it, inserted] = config_of_key.emplace(run->config_key, config_runs.size());
    if (inserted) {
      config_runs.emplace_back();
      report.configs.emplace_back();
    }
    ReportConfig& config = report.configs[it->second];
    if (std::find(config.seeds.begin(), config.seeds.end(), run->seed) != config.seeds.end()) {
      report.notes.push_back(
          "run " + std::to_string(run->run_id) + " left out: it repeats seed " +
          std::to_string(run->seed) + " of run " +
          std::to_string(
              config.run_ids[std::find(config.seeds.begin(), config.seeds.end(), run->seed) -
                             config.seeds.begin()]));
      continue;
    }
    config.run_ids.push_back(run->run_id);
    config.seeds.push_back(run->seed);
    config_runs[it->second].push_back(run);
  }
  // Labels: policy/placement, then whatever else differs between the configurations, each
  // setting in words (key=value), never a settings column's raw JSON.
  std::vector<std::vector<std::pair<std::string, std::string>>> items;
  for (const auto& runs : config_runs) items.push_back(LabelItems(*runs.front()));
  for (size_t c = 0; c < report.configs.size(); ++c) {
    std::string label = config_runs[c].front()->fields.at("policy");
    for (const auto& [name, text] : items[c]) {
      const std::string& key = name;  // a lambda may not capture a structured binding (clang 14)
      bool varies = false;
      for (const auto& other : items) {
        const auto it = std::find_if(other.begin(), other.end(),
                                     [&](const auto& item) { return item.first == key; });
        varies = varies || it == other.end() || it->second != text;
      }
      if (varies && !text.empty()) label += " " + text;
    }
    report.configs[c].label = label;
  }

  // The runs put side by side must have seen the same jobs; utilization is over the horizon
  // they share (sim/output/comparison.h).
  std::map<int64_t, ComparedRun> seen;
  {
    std::vector<ComparedRun> all;
    for (const auto& runs : config_runs) {
      for (const RunInfo* run : runs) all.push_back(ReadComparedRun(db, path, run->run_id));
    }
    const std::vector<std::string> differences = JobSetDifferences(all);
    if (!differences.empty()) {
      if (!options.allow_different_jobs) {
        throw InputError(path, 0, 0,
                         DifferentJobsMessage(differences,
                                              "--allow-different-jobs reports them anyway; --run "
                                              "picks runs that saw the same jobs"));
      }
      for (const std::string& d : differences) report.notes.push_back("different jobs: " + d);
    }
    report.horizon_seconds = SharedHorizon(all).seconds();
    for (ComparedRun& run : all) seen.emplace(run.run_id, std::move(run));
  }
  // Per run: its cluster's GPUs and the trace's class names per priority level.
  std::map<int64_t, double> cluster_gpus;
  std::map<int, std::string> class_names;
  {
    const bool has_classes = HasColumn(db, path, "runs", "priority_classes");
    Statement s = Prepare(db, path,
                          std::string("SELECT cluster_json, ") +
                              (has_classes ? "priority_classes" : "NULL") +
                              " FROM runs WHERE run_id = ?");
    for (const auto& [run_id, run] : seen) {
      sqlite3_reset(s.get());
      sqlite3_bind_int64(s.get(), 1, run_id);
      if (sqlite3_step(s.get()) != SQLITE_ROW) continue;
      cluster_gpus[run_id] = ClusterGpus(Text(s.get(), 0));
      const nlohmann::json names = nlohmann::json::parse(Text(s.get(), 1), nullptr, false);
      if (!names.is_object()) continue;
      for (const auto& [level, name] : names.items()) {
        if (name.is_string()) class_names.emplace(std::atoi(level.c_str()), name.get<std::string>());
      }
    }
  }

  // Columns of later versions may be missing in an older database.
  std::string select = "SELECT ";
  switch (options.by) {
    case ReportGroupBy::kUser:
      select += "user";
      break;
    case ReportGroupBy::kVc:
      select += "vc";
      break;
    case ReportGroupBy::kGpuType:
      select += "gpu_type";
      break;
    case ReportGroupBy::kPriority:
      if (!HasColumn(db, path, "jobs", "priority")) {
        throw InputError(path, 0, 0,
                         "--by priority: the jobs table has no priority column (written by an "
                         "older clustersim); run the simulations again");
      }
      select += "CAST(priority AS TEXT)";
      break;
    case ReportGroupBy::kPolicy:
      select += "NULL";
      break;
  }
  select += ", status, wait_time, jct, preemptions, oom_failures, submit_time";
  std::vector<std::string> missing;
  for (const char* column : {"queued_time", "bsld", "gpu_hours", "cost_usd",
                             "preemption_gpu_seconds", "borrowed_gpu_seconds"}) {
    if (HasColumn(db, path, "jobs", column)) {
      select += std::string(", ") + column;
    } else {
      select += ", NULL";
      missing.push_back(column);
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
    report.notes.push_back("the database lacks the jobs columns " + list +
                           " (written by an older clustersim): shown as -");
  }
  select += " FROM jobs WHERE run_id = ?";

  Statement jobs = Prepare(db, path, select);
  for (size_t c = 0; c < report.configs.size(); ++c) {
    // Per group, per run of the configuration: the figures.
    std::map<std::string, std::vector<std::vector<double>>> per_group;
    std::vector<std::vector<double>> totals;
    const size_t runs = config_runs[c].size();
    for (size_t r = 0; r < runs; ++r) {
      const RunInfo& run = *config_runs[c][r];
      const double end = seen.at(run.run_id).end_seconds;
      const double capacity = cluster_gpus[run.run_id] * report.horizon_seconds / 3600;
      std::map<std::string, Accumulator> groups;
      Accumulator total;
      sqlite3_reset(jobs.get());
      sqlite3_bind_int64(jobs.get(), 1, run.run_id);
      int rc = 0;
      while ((rc = sqlite3_step(jobs.get())) == SQLITE_ROW) {
        sqlite3_stmt* s = jobs.get();
        std::string group;
        if (options.by == ReportGroupBy::kPolicy) {
          group = run.fields.at("policy");
        } else if (sqlite3_column_type(s, 0) == SQLITE_NULL || Text(s, 0).empty()) {
          group = options.by == ReportGroupBy::kGpuType ? "(not started)" : "(none)";
        } else {
          group = Text(s, 0);
        }
        const std::string status = Text(s, 1);
        const double wait = Real(s, 2);
        const double jct = Real(s, 3);
        const double preemptions = Real(s, 4);
        const double oom = Real(s, 5);
        const double submit = Real(s, 6);
        const double queued = Real(s, 7);
        const double bsld = Real(s, 8);
        const double gpu_hours = Real(s, 9);
        const double cost = Real(s, 10);
        const double preemption_gpu_seconds = Real(s, 11);
        const double borrowed_gpu_seconds = Real(s, 12);
        // An unfinished job that arrived counts up to the run's end (docs/metrics.md#jobs).
        const bool censored = status == "unfinished" && submit <= end;
        for (Accumulator* a : {&groups[group], &total}) {
          a->jobs += 1;
          a->completed += status == "completed";
          a->timeout += status == "timeout";
          a->unfinished += status == "unfinished";
          if (!std::isnan(gpu_hours)) {
            a->gpu_hours += gpu_hours;
            a->has_gpu_hours = true;
          }
          if (!std::isnan(cost)) {
            a->cost += cost;
            a->has_cost = true;
          }
          if (!std::isnan(preemption_gpu_seconds)) {
            a->preemption_gpu_hours += preemption_gpu_seconds / 3600;
            a->has_preemption = true;
          }
          if (!std::isnan(borrowed_gpu_seconds)) {
            a->borrowed_gpu_hours += borrowed_gpu_seconds / 3600;
            a->has_borrowed = true;
          }
          if (!std::isnan(wait)) {
            a->waits.push_back(wait);
          } else if (censored) {
            a->waits.push_back(end - submit);
          }
          if (!std::isnan(jct) || censored) {
            a->jct_sum += std::isnan(jct) ? end - submit : jct;
            ++a->jct_n;
            if (!std::isnan(queued)) {
              a->queued_sum += queued;
              ++a->queued_n;
            }
          }
          if (!std::isnan(bsld)) {
            a->bsld_sum += bsld;
            ++a->bsld_n;
          }
          if (!std::isnan(preemptions)) a->preemptions += preemptions;
          if (!std::isnan(oom)) a->oom += oom;
        }
      }
      if (rc != SQLITE_DONE)
        throw InputError(path, 0, 0, std::string("SQLite: ") + sqlite3_errmsg(db));
      for (auto& [name, accumulator] : groups) {
        auto& slot = per_group[name];
        if (slot.empty()) slot.assign(runs, std::vector<double>());
        slot[r] = accumulator.Values(capacity);
      }
      totals.push_back(total.Values(capacity));
    }
    auto combine = [&](const std::vector<std::vector<double>>& by_run) {
      std::vector<ReportValue> values;
      for (int m = 0; m < kMetricCount; ++m) {
        std::vector<double> samples;
        for (const std::vector<double>& v : by_run) {
          if (v.empty()) {
            if (kIsSum[m]) samples.push_back(0);  // the group had no job in this run
          } else if (!std::isnan(v[m])) {
            samples.push_back(v[m]);
          }
        }
        values.push_back(MeanWithInterval(samples));
      }
      return values;
    };
    std::vector<ReportRow> rows;
    for (const auto& [name, by_run] : per_group) {
      ReportRow row;
      row.config = c;
      row.group = name;
      row.values = combine(by_run);
      rows.push_back(std::move(row));
    }
    // Most GPU-hours first (jobs where GPU-hours are unknown), then by name.
    std::stable_sort(rows.begin(), rows.end(), [](const ReportRow& a, const ReportRow& b) {
      auto weight = [](const ReportRow& row) {
        const double h = row.values[kGpuHours].mean;
        return std::isnan(h) ? row.values[kJobs].mean : h;
      };
      return weight(a) > weight(b);
    });
    if (options.top > 0 && rows.size() > static_cast<size_t>(options.top)) {
      report.notes.push_back(report.configs[c].label + ": " +
                             std::to_string(rows.size() - options.top) +
                             " more groups not shown (--top)");
      rows.resize(options.top);
    }
    if (options.by == ReportGroupBy::kPriority) {
      // Classes by level, the most urgent first (the order a priority policy serves them in),
      // named as the trace names them: "LS (2)".
      std::stable_sort(rows.begin(), rows.end(), [](const ReportRow& a, const ReportRow& b) {
        return std::atoi(a.group.c_str()) > std::atoi(b.group.c_str());
      });
      for (ReportRow& row : rows) {
        const auto name = class_names.find(std::atoi(row.group.c_str()));
        if (name != class_names.end()) row.group = name->second + " (" + row.group + ")";
      }
    }
    // By policy a configuration is one group: its total would repeat it.
    if (options.by != ReportGroupBy::kPolicy) {
      ReportRow total;
      total.config = c;
      total.group = "(all)";
      total.values = combine(totals);
      rows.push_back(std::move(total));
    }
    report.rows.insert(report.rows.end(), rows.begin(), rows.end());
  }
  // What node pools were billed, per configuration whose runs have them (the summary's rows).
  Statement billed_rows = Prepare(db, path,
                                  "SELECT metric, value FROM summary WHERE run_id = ? AND scope = "
                                  "'all' AND metric LIKE 'billed_%'");
  for (size_t c = 0; c < report.configs.size(); ++c) {
    std::vector<double> hours, cost, utilization;
    for (const RunInfo* run : config_runs[c]) {
      sqlite3_reset(billed_rows.get());
      sqlite3_bind_int64(billed_rows.get(), 1, run->run_id);
      while (sqlite3_step(billed_rows.get()) == SQLITE_ROW) {
        const std::string metric = Text(billed_rows.get(), 0);
        const double value = sqlite3_column_double(billed_rows.get(), 1);
        if (metric == "billed_gpu_hours") hours.push_back(value);
        if (metric == "billed_cost_usd") cost.push_back(value);
        if (metric == "billed_gpu_utilization") utilization.push_back(value);
      }
    }
    if (hours.empty()) continue;
    report.billed.push_back({c, MeanWithInterval(hours), MeanWithInterval(cost),
                             MeanWithInterval(utilization)});
  }
  return report;
}

WaitReport BuildWaitReport(const std::string& path, const std::vector<ReportConfig>& configs,
                           ReportGroupBy by) {
  const Database owner = OpenDatabase(path);
  sqlite3* db = owner.get();
  WaitReport report;
  const bool has_table =
      sqlite3_exec(db, "SELECT 1 FROM wait_reasons LIMIT 0", nullptr, nullptr, nullptr) ==
      SQLITE_OK;
  std::string group_column = "NULL";
  if (by == ReportGroupBy::kUser) group_column = "user";
  if (by == ReportGroupBy::kVc) group_column = "vc";
  CHECK(by == ReportGroupBy::kUser || by == ReportGroupBy::kVc || by == ReportGroupBy::kPolicy,
        "BuildWaitReport: group by user, vc or policy (reasons alone)");
  // The jobs' groups and queued time (rows in job_index order), then their wait reasons.
  Statement jobs = Prepare(db, path,
                           "SELECT job_index, " + group_column +
                               ", queued_time FROM jobs WHERE run_id = ? ORDER BY job_index");
  std::optional<Statement> waits;
  if (has_table) {
    waits.emplace(Prepare(db, path,
                          "SELECT job_index, reason, seconds FROM wait_reasons WHERE run_id = ?"));
  }
  for (size_t c = 0; c < configs.size(); ++c) {
    const size_t runs = configs[c].run_ids.size();
    // Per (group, reason), per run: jobs, seconds; per group, per run: queued seconds.
    struct Figures {
      std::vector<double> jobs, seconds;
    };
    std::map<std::pair<std::string, std::string>, Figures> per;
    std::map<std::string, std::vector<double>> queued;
    for (size_t r = 0; r < runs; ++r) {
      const int64_t run_id = configs[c].run_ids[r];
      std::vector<std::string> group_of;
      sqlite3_reset(jobs.get());
      sqlite3_bind_int64(jobs.get(), 1, run_id);
      while (sqlite3_step(jobs.get()) == SQLITE_ROW) {
        const int64_t index = sqlite3_column_int64(jobs.get(), 0);
        std::string group = by == ReportGroupBy::kPolicy ? "(all)" : Text(jobs.get(), 1);
        if (group.empty()) group = "(none)";
        if (index >= static_cast<int64_t>(group_of.size())) group_of.resize(index + 1);
        const double q = Real(jobs.get(), 2);
        auto& slot = queued[group];
        if (slot.empty()) slot.assign(runs, 0.0);
        if (!std::isnan(q)) slot[r] += q;
        group_of[index] = std::move(group);
      }
      if (!waits) continue;
      sqlite3_reset(waits->get());
      sqlite3_bind_int64(waits->get(), 1, run_id);
      while (sqlite3_step(waits->get()) == SQLITE_ROW) {
        const int64_t index = sqlite3_column_int64(waits->get(), 0);
        if (index < 0 || index >= static_cast<int64_t>(group_of.size())) continue;
        Figures& f = per[{group_of[index], Text(waits->get(), 1)}];
        if (f.jobs.empty()) {
          f.jobs.assign(runs, 0.0);
          f.seconds.assign(runs, 0.0);
        }
        f.jobs[r] += 1;
        f.seconds[r] += sqlite3_column_double(waits->get(), 2);
      }
    }
    // Groups by total hours (mean over runs) descending, then name; reasons in WaitReason order.
    std::map<std::string, double> group_hours;
    for (const auto& [key, f] : per) {
      double sum = 0;
      for (double x : f.seconds) sum += x;
      group_hours[key.first] += sum / runs;
    }
    std::vector<std::string> groups;
    for (const auto& [group, hours] : group_hours) groups.push_back(group);
    std::stable_sort(groups.begin(), groups.end(), [&](const std::string& a, const std::string& b) {
      return group_hours[a] > group_hours[b];
    });
    for (const std::string& group : groups) {
      for (int k = 0; k < kWaitReasonCount; ++k) {
        const std::string reason = WaitReasonName(static_cast<WaitReason>(k));
        const auto it = per.find({group, reason});
        if (it == per.end()) continue;
        WaitReportRow row;
        row.config = c;
        row.group = group;
        row.reason = reason;
        std::vector<double> hours, shares;
        for (size_t r = 0; r < runs; ++r) {
          hours.push_back(it->second.seconds[r] / 3600);
          const double total = queued[group][r];
          shares.push_back(total > 0 ? it->second.seconds[r] / total : 0.0);
        }
        row.jobs = MeanWithInterval(it->second.jobs);
        row.hours = MeanWithInterval(hours);
        row.share = MeanWithInterval(shares);
        report.rows.push_back(std::move(row));
      }
    }
  }
  if (!has_table) {
    report.notes.push_back(
        "the database has no wait_reasons table (written by an older clustersim): no wait "
        "reasons to show");
  }
  return report;
}

}  // namespace clustersim
