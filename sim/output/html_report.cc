#include "sim/output/html_report.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "sim/engine/wait_reasons.h"
#include "sim/output/echarts_js.h"
#include "sim/output/report.h"
#include "sim/output/report_page.h"
#include "sim/output/sqlite_statement.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

using json = nlohmann::json;
using Database = std::unique_ptr<sqlite3, int (*)(sqlite3*)>;

Database Open(const std::string& path) {
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    const std::string message = raw ? sqlite3_errmsg(raw) : "out of memory";
    sqlite3_close(raw);
    throw InputError(path, 0, 0, "cannot open database: " + message);
  }
  return Database(raw, sqlite3_close);
}

// A prepared statement, or none when the table (or a column) is missing from an older database.
Statement TryPrepare(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    sqlite3_finalize(raw);
    raw = nullptr;
  }
  return Statement(raw, sqlite3_finalize);
}

bool IsNull(sqlite3_stmt* stmt, int column) {
  return sqlite3_column_type(stmt, column) == SQLITE_NULL;
}

// A figure as JSON: null when it is not a number.
json Number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json Value(const ReportValue& v) {
  return json{{"mean", Number(v.mean)}, {"ci", Number(v.half_width)}, {"n", v.n}};
}

// The ECDF of `values` as [x, F(x)] points: every value up to kCdfExactJobs values, else the
// order statistic of rank max(1, ceil(q n)) for q = 0, 1/kCdfQuantiles, ..., 1 (see the header).
json Cdf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  json points = json::array();
  const size_t n = values.size();
  if (n <= static_cast<size_t>(kCdfExactJobs)) {
    for (size_t i = 0; i < n; ++i) {
      points.push_back(json::array({values[i], static_cast<double>(i + 1) / n}));
    }
    return points;
  }
  size_t last = 0;
  for (int k = 0; k <= kCdfQuantiles; ++k) {
    const double q = static_cast<double>(k) / kCdfQuantiles;
    const size_t rank = std::clamp<size_t>(static_cast<size_t>(std::ceil(q * n)), 1, n);
    if (rank == last) continue;
    last = rank;
    points.push_back(json::array({values[rank - 1], static_cast<double>(rank) / n}));
  }
  return points;
}

// One timeseries column downsampled to at most kMaxSeriesPoints points [t_mid, value]: buckets
// of `b` consecutive intervals, each the time-weighted mean of its intervals (every row is an
// exact time average over its interval, so the bucket's is exact too).
json Series(const std::vector<double>& start, const std::vector<double>& end,
            const std::vector<double>& value) {
  json points = json::array();
  const size_t n = value.size();
  const size_t b = (n + kMaxSeriesPoints - 1) / kMaxSeriesPoints;
  for (size_t i = 0; i < n; i += std::max<size_t>(b, 1)) {
    const size_t stop = std::min(n, i + std::max<size_t>(b, 1));
    double weighted = 0;
    double seconds = 0;
    bool any = false;
    for (size_t k = i; k < stop; ++k) {
      if (std::isnan(value[k])) continue;
      weighted += value[k] * (end[k] - start[k]);
      seconds += end[k] - start[k];
      any = true;
    }
    const double mid = (start[i] + end[stop - 1]) / 2;
    points.push_back(
        json::array({mid, any && seconds > 0 ? json(weighted / seconds) : json(nullptr)}));
  }
  return points;
}

// "0-3,8,10-11" -> [[0, 4], [8, 9], [10, 12]]: contiguous GPU runs, end exclusive.
std::vector<std::pair<int, int>> GpuRuns(const std::string& text) {
  std::vector<std::pair<int, int>> runs;
  size_t i = 0;
  while (i < text.size()) {
    size_t comma = text.find(',', i);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(i, comma - i);
    const size_t dash = item.find('-');
    try {
      const int first = std::stoi(item.substr(0, dash));
      const int last = dash == std::string::npos ? first : std::stoi(item.substr(dash + 1));
      if (!runs.empty() && runs.back().second == first) {
        runs.back().second = last + 1;
      } else {
        runs.emplace_back(first, last + 1);
      }
    } catch (const std::exception&) {
      // Not a GPU list: nothing drawn for it.
    }
    i = comma + 1;
  }
  return runs;
}

// The template with each marker replaced by its text. Markers are found in the template only,
// so nothing inserted (a label, the library) can be taken for one.
std::string Assemble(const std::string& page,
                     const std::vector<std::pair<std::string, std::string>>& fills) {
  std::vector<std::pair<size_t, size_t>> at;  // (position in the template, fill)
  for (size_t f = 0; f < fills.size(); ++f) {
    const size_t position = page.find(fills[f].first);
    CHECK(position != std::string::npos, "html report: the page template has no " + fills[f].first);
    at.emplace_back(position, f);
  }
  std::sort(at.begin(), at.end());
  std::string out;
  size_t from = 0;
  for (const auto& [position, f] : at) {
    out.append(page, from, position - from);
    out += fills[f].second;
    from = position + fills[f].first.size();
  }
  out.append(page, from, std::string::npos);
  return out;
}

std::string EscapeHtml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON for a <script type="application/json"> element: "<" as \u003c, so no "</script>" or
// "<!--" can appear inside it.
std::string ScriptJson(const json& value) {
  const std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

// Everything the page shows of one run (besides the pooled tables).
class RunReader {
 public:
  RunReader(sqlite3* db, const std::string& /*path*/) : db_(db) {}

  json RunInfo(int64_t run_id) {
    Statement s = TryPrepare(
        db_,
        "SELECT run_id, trace_path, cluster_spec, policy, placement, params, runtime_model, seed, "
        "version, wall_seconds, events, status, fingerprint, timeseries_interval_seconds, "
        "preemption_cost_seconds, trace_filter, faults, models FROM runs WHERE run_id = ?");
    CHECK(s != nullptr, "html report: cannot read the runs table");
    sqlite3_bind_int64(s.get(), 1, run_id);
    json info = json::object();
    if (sqlite3_step(s.get()) == SQLITE_ROW) {
      const char* names[] = {"run_id",      "trace",        "cluster", "policy",       "placement",
                             "params",      "runtime",      "seed",    "version",      "wall_seconds",
                             "events",      "status",       "fingerprint", "interval_seconds",
                             "preemption_cost_seconds", "trace_filter", "faults", "models"};
      for (int c = 0; c < 18; ++c) {
        if (IsNull(s.get(), c)) {
          info[names[c]] = nullptr;
        } else if (sqlite3_column_type(s.get(), c) == SQLITE_INTEGER) {
          info[names[c]] = sqlite3_column_int64(s.get(), c);
        } else if (sqlite3_column_type(s.get(), c) == SQLITE_FLOAT) {
          info[names[c]] = sqlite3_column_double(s.get(), c);
        } else {
          info[names[c]] = Text(s.get(), c);
        }
      }
    }
    return info;
  }

  // Ended jobs' JCT and started jobs' first-start wait, appended; the run's first submission.
  void Times(int64_t run_id, std::vector<double>* jct, std::vector<double>* wait,
             double* first_submit) {
    Statement s = TryPrepare(db_, "SELECT jct, wait_time, submit_time FROM jobs WHERE run_id = ?");
    CHECK(s != nullptr, "html report: cannot read the jobs table");
    sqlite3_bind_int64(s.get(), 1, run_id);
    while (sqlite3_step(s.get()) == SQLITE_ROW) {
      if (!IsNull(s.get(), 0)) jct->push_back(sqlite3_column_double(s.get(), 0));
      if (!IsNull(s.get(), 1)) wait->push_back(sqlite3_column_double(s.get(), 1));
      *first_submit = std::min(*first_submit, sqlite3_column_double(s.get(), 2));
    }
  }

  // The whole-cluster timeseries: utilization, queue, stranded GPUs, I_frag, FGD fragmented GPUs.
  json Timeseries(int64_t run_id) {
    Statement s = TryPrepare(
        db_,
        "SELECT t_start, t_end, utilization, queue_length, stranded_gpus, i_frag, "
        "fgd_fragmented_gpus FROM timeseries WHERE run_id = ? AND gpu_type = 'all' "
        "ORDER BY t_start");
    json out = json::object();
    if (!s) return out;
    sqlite3_bind_int64(s.get(), 1, run_id);
    std::vector<double> start, end;
    std::vector<std::vector<double>> columns(5);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    bool fgd = false;
    while (sqlite3_step(s.get()) == SQLITE_ROW) {
      start.push_back(sqlite3_column_double(s.get(), 0));
      end.push_back(sqlite3_column_double(s.get(), 1));
      for (int c = 0; c < 5; ++c) {
        const bool null = IsNull(s.get(), c + 2);
        columns[c].push_back(null ? nan : sqlite3_column_double(s.get(), c + 2));
        if (c == 4 && !null) fgd = true;
      }
    }
    out["intervals"] = start.size();
    out["utilization"] = Series(start, end, columns[0]);
    out["queue"] = Series(start, end, columns[1]);
    out["stranded_gpus"] = Series(start, end, columns[2]);
    out["i_frag"] = Series(start, end, columns[3]);
    if (fgd) out["fgd_fragmented_gpus"] = Series(start, end, columns[4]);
    return out;
  }

  // The allocation log as rectangles [start, end, first GPU, end GPU (exclusive), job index],
  // cut to the lowest GPU indexes when there are more than kMaxGanttRects (see the header).
  json Allocations(int64_t run_id, int total_gpus) {
    Statement s = TryPrepare(
        db_,
        "SELECT start_time, end_time, gpu_indexes, job_index FROM allocations WHERE run_id = ? "
        "ORDER BY rowid");
    json out = json::object();
    if (!s) return out;
    sqlite3_bind_int64(s.get(), 1, run_id);
    struct Rect {
      double start, end;
      int first, stop;
      int64_t job;
    };
    std::vector<Rect> rects;
    int64_t intervals = 0;
    while (sqlite3_step(s.get()) == SQLITE_ROW) {
      ++intervals;
      const double start = sqlite3_column_double(s.get(), 0);
      const double end = sqlite3_column_double(s.get(), 1);
      const int64_t job = sqlite3_column_int64(s.get(), 3);
      for (const auto& [first, stop] : GpuRuns(Text(s.get(), 2))) {
        rects.push_back(Rect{start, end, first, stop, job});
      }
    }
    if (intervals == 0) return out;
    int shown_gpus = total_gpus;
    if (rects.size() > static_cast<size_t>(kMaxGanttRects)) {
      // The largest GPU count g whose rectangles (clipped to GPUs below g) number at most the
      // limit: rectangles by first GPU, the k-th smallest first GPU bounds g.
      std::vector<int> firsts;
      for (const Rect& r : rects) firsts.push_back(r.first);
      std::nth_element(firsts.begin(), firsts.begin() + kMaxGanttRects, firsts.end());
      shown_gpus = std::max(1, firsts[kMaxGanttRects]);
    }
    json data = json::array();
    for (const Rect& r : rects) {
      if (r.first >= shown_gpus) continue;
      data.push_back(json::array({r.start, r.end, r.first, std::min(r.stop, shown_gpus), r.job}));
    }
    out["intervals"] = intervals;
    out["gpus"] = total_gpus;
    out["shown_gpus"] = shown_gpus;
    out["rects"] = std::move(data);
    return out;
  }

  // `validate` runs: the recorded and simulated series of the whole cluster (scope "all", else
  // the first scope).
  json Validation(int64_t run_id) {
    Statement s = TryPrepare(
        db_,
        "SELECT scope, t_start, t_end, simulated_utilization, recorded_utilization, "
        "simulated_queue_length, recorded_queue_length FROM validation_series WHERE run_id = ? "
        "ORDER BY (scope <> 'all'), scope, t_start");
    json out = json::object();
    if (!s) return out;
    sqlite3_bind_int64(s.get(), 1, run_id);
    std::string scope;
    std::vector<double> start, end;
    std::vector<std::vector<double>> columns(4);
    while (sqlite3_step(s.get()) == SQLITE_ROW) {
      const std::string row_scope = Text(s.get(), 0);
      if (scope.empty()) scope = row_scope;
      if (row_scope != scope) break;
      start.push_back(sqlite3_column_double(s.get(), 1));
      end.push_back(sqlite3_column_double(s.get(), 2));
      for (int c = 0; c < 4; ++c) columns[c].push_back(sqlite3_column_double(s.get(), c + 3));
    }
    if (start.empty()) return out;
    out["scope"] = scope;
    out["simulated_utilization"] = Series(start, end, columns[0]);
    out["recorded_utilization"] = Series(start, end, columns[1]);
    out["simulated_queue"] = Series(start, end, columns[2]);
    out["recorded_queue"] = Series(start, end, columns[3]);
    return out;
  }

  // The run's summary figures, scope "all".
  std::map<std::string, double> Summary(int64_t run_id) {
    std::map<std::string, double> values;
    Statement s = TryPrepare(
        db_, "SELECT metric, value FROM summary WHERE run_id = ? AND scope = 'all'");
    if (!s) return values;
    sqlite3_bind_int64(s.get(), 1, run_id);
    while (sqlite3_step(s.get()) == SQLITE_ROW) {
      if (!IsNull(s.get(), 1)) values[Text(s.get(), 0)] = sqlite3_column_double(s.get(), 1);
    }
    return values;
  }

  int TotalGpus(int64_t run_id) {
    Statement s = TryPrepare(db_, "SELECT cluster_json FROM runs WHERE run_id = ?");
    if (!s) return 0;
    sqlite3_bind_int64(s.get(), 1, run_id);
    if (sqlite3_step(s.get()) != SQLITE_ROW) return 0;
    const json cluster = json::parse(Text(s.get(), 0), nullptr, false);
    int gpus = 0;
    if (cluster.is_object() && cluster.contains("nodes") && cluster["nodes"].is_array()) {
      for (const json& group : cluster["nodes"]) {
        if (!group.is_object()) continue;
        gpus += group.value("count", 1) * group.value("gpus_per_node", 0);
      }
    }
    return gpus;
  }

 private:
  sqlite3* db_;
};

}  // namespace

const char* ChartLibraryVersion() { return kEchartsVersion; }

void WriteHtmlReport(const std::string& db_path, const std::string& out_path,
                     const HtmlReportOptions& options) {
  // The pooled tables (they check the database and the runs).
  ReportOptions report_options;
  report_options.run_ids = options.run_ids;
  report_options.allow_different_jobs = options.allow_different_jobs;
  report_options.by = ReportGroupBy::kPolicy;
  const Report headline = BuildReport(db_path, report_options);
  report_options.top = kTopGroups;
  report_options.by = ReportGroupBy::kUser;
  const Report users = BuildReport(db_path, report_options);
  report_options.by = ReportGroupBy::kVc;
  const Report vcs = BuildReport(db_path, report_options);
  const WaitReport reasons = BuildWaitReport(db_path, headline.configs, ReportGroupBy::kPolicy);
  const WaitReport user_reasons = BuildWaitReport(db_path, headline.configs, ReportGroupBy::kUser);
  const WaitReport vc_reasons = BuildWaitReport(db_path, headline.configs, ReportGroupBy::kVc);

  const Database db = Open(db_path);
  RunReader reader(db.get(), db_path);
  json data = json::object();
  data["database"] = std::filesystem::path(db_path).filename().string();
  data["chart_library"] = {{"name", "Apache ECharts"},
                           {"version", kEchartsVersion},
                           {"license", "Apache-2.0"}};
  data["limits"] = {{"cdf_exact_jobs", kCdfExactJobs},
                    {"cdf_quantiles", kCdfQuantiles},
                    {"series_points", kMaxSeriesPoints},
                    {"gantt_rects", kMaxGanttRects},
                    {"top_groups", kTopGroups}};
  json metrics = json::array();
  for (const ReportMetric& m : ReportMetrics()) {
    metrics.push_back({{"name", m.name}, {"title", m.title}, {"unit", static_cast<int>(m.unit)}});
  }
  data["report_metrics"] = metrics;

  // Configurations: label, runs, pooled figures, summary figures with intervals, CDFs.
  json configs = json::array();
  json runs = json::array();
  double origin = std::numeric_limits<double>::infinity();
  for (size_t c = 0; c < headline.configs.size(); ++c) {
    const ReportConfig& config = headline.configs[c];
    json entry = {{"label", config.label}, {"run_ids", config.run_ids}, {"seeds", config.seeds}};
    for (const ReportRow& row : headline.rows) {
      if (row.config != c) continue;
      json values = json::array();
      for (const ReportValue& v : row.values) values.push_back(Value(v));
      entry["figures"] = values;
    }
    // Summary figures over the seeds.
    const char* kSummary[] = {"gpu_utilization", "queue_length_mean", "stranded_gpus_mean",
                              "i_frag_mean",     "makespan_seconds",  "jct_seconds_p95",
                              "fgd_fragmentation"};
    std::map<std::string, std::vector<double>> samples;
    std::vector<double> jct, wait;
    for (int64_t run_id : config.run_ids) {
      for (const auto& [metric, value] : reader.Summary(run_id)) {
        for (const char* name : kSummary) {
          if (metric == name) samples[metric].push_back(value);
        }
      }
      double first = std::numeric_limits<double>::infinity();
      reader.Times(run_id, &jct, &wait, &first);
      origin = std::min(origin, first);
      json run = reader.RunInfo(run_id);
      run["config"] = c;
      const int gpus = reader.TotalGpus(run_id);
      run["gpus"] = gpus;
      run["timeseries"] = reader.Timeseries(run_id);
      run["allocations"] = reader.Allocations(run_id, gpus);
      run["validation"] = reader.Validation(run_id);
      runs.push_back(std::move(run));
    }
    json summary = json::object();
    for (const auto& [metric, values] : samples) summary[metric] = Value(MeanWithInterval(values));
    entry["summary"] = summary;
    entry["jobs_ended"] = jct.size();
    entry["jobs_started"] = wait.size();
    entry["jct_cdf"] = Cdf(std::move(jct));
    entry["wait_cdf"] = Cdf(std::move(wait));
    json waits = json::array();
    for (const WaitReportRow& row : reasons.rows) {
      if (row.config != c) continue;
      waits.push_back({{"reason", row.reason},
                       {"jobs", Value(row.jobs)},
                       {"hours", Value(row.hours)},
                       {"share", Value(row.share)}});
    }
    entry["wait_reasons"] = waits;
    // Per user and per VC: the report's rows and each group's wait hours by reason.
    for (const auto& [key, report, wait_report] :
         {std::tuple{"users", &users, &user_reasons}, std::tuple{"vcs", &vcs, &vc_reasons}}) {
      json rows = json::array();
      for (const ReportRow& row : report->rows) {
        if (row.config != c) continue;
        json values = json::array();
        for (const ReportValue& v : row.values) values.push_back(Value(v));
        json by_reason = json::object();
        for (const WaitReportRow& w : wait_report->rows) {
          if (w.config == c && w.group == row.group) by_reason[w.reason] = Number(w.hours.mean);
        }
        if (row.group == "(all)") {
          for (const WaitReportRow& w : reasons.rows) {
            if (w.config == c) by_reason[w.reason] = Number(w.hours.mean);
          }
        }
        rows.push_back({{"group", row.group}, {"figures", values}, {"wait_hours", by_reason}});
      }
      entry[key] = rows;
    }
    configs.push_back(std::move(entry));
  }
  data["configs"] = configs;
  data["runs"] = runs;
  data["origin_seconds"] = std::isfinite(origin) ? origin : 0.0;
  json notes = json::array();
  for (const std::string& note : headline.notes) notes.push_back(note);
  for (const std::string& note : reasons.notes) notes.push_back(note);
  data["notes"] = notes;
  json reason_names = json::array();
  for (int r = 0; r < kWaitReasonCount; ++r) {
    reason_names.push_back(WaitReasonName(static_cast<WaitReason>(r)));
  }
  data["reason_names"] = reason_names;

  // The page.
  const std::string library = kEchartsJs;
  CHECK(library.find("</script") == std::string::npos,
        "html report: the charting library holds </script and cannot be inlined");
  const std::string title =
      options.title.empty()
          ? "clustersim report: " + std::filesystem::path(db_path).filename().string()
          : options.title;
  const std::string page = Assemble(kReportPageHtml, {{"__CLUSTERSIM_TITLE__", EscapeHtml(title)},
                                                      {"__CLUSTERSIM_HEADING__", EscapeHtml(title)},
                                                      {"__CLUSTERSIM_DATA__", ScriptJson(data)},
                                                      {"__CLUSTERSIM_ECHARTS__", library},
                                                      {"__CLUSTERSIM_PAGE_JS__", kReportPageJs}});

  // Written beside the target, then renamed: nothing half-written.
  namespace fs = std::filesystem;
  const std::string temporary = out_path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(out_path, 0, 0, "cannot write the HTML report");
    out.write(page.data(), static_cast<std::streamsize>(page.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(temporary, ec);
      throw InputError(out_path, 0, 0, "cannot write the HTML report");
    }
  }
  std::error_code ec;
  fs::rename(temporary, out_path, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw InputError(out_path, 0, 0, "cannot write the HTML report: " + ec.message());
  }
}

}  // namespace clustersim
