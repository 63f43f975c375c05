#include "cli/report_command.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "app/options.h"
#include "sim/output/html_report.h"
#include "sim/output/report.h"
#include "sim/util/error.h"

namespace po = boost::program_options;

namespace clustersim {
namespace {

std::string Join(const std::vector<int64_t>& values, const char* separator = ",") {
  std::string text;
  for (int64_t v : values) text += (text.empty() ? "" : separator) + std::to_string(v);
  return text;
}

// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string Number(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

void PrintCsv(const Report& report) {
  // Run ids and seeds separated by spaces: no quoting needed.
  std::printf("config,run_ids,seeds,group,runs");
  for (const ReportMetric& m : ReportMetrics()) std::printf(",%s,%s_ci95", m.name, m.name);
  std::printf("\n");
  for (const ReportRow& row : report.rows) {
    const ReportConfig& config = report.configs[row.config];
    std::printf("%s,%s,%s,%s,%zu", CsvField(config.label).c_str(),
                Join(config.run_ids, " ").c_str(), Join(config.seeds, " ").c_str(),
                CsvField(row.group).c_str(), config.run_ids.size());
    for (const ReportValue& v : row.values) {
      for (double x : {v.mean, v.half_width}) {
        if (std::isnan(x)) {
          std::printf(",");
        } else {
          std::printf(",%.10g", x);
        }
      }
    }
    std::printf("\n");
  }
}

size_t MetricIndex(const std::string& name) {
  for (size_t m = 0; m < ReportMetrics().size(); ++m) {
    if (ReportMetrics()[m].name == name) return m;
  }
  throw InternalError("report: no figure " + name);
}

void PrintTable(const Report& report, const std::string& path, const std::string& by) {
  // Times in hours when any JCT reaches an hour, else seconds (small test traces).
  bool hours = false;
  for (const ReportRow& row : report.rows) {
    for (size_t m = 0; m < ReportMetrics().size(); ++m) {
      if (ReportMetrics()[m].unit == ReportUnit::kSeconds && row.values[m].mean >= 3600) {
        hours = true;
      }
    }
  }
  bool intervals = false;
  for (const ReportConfig& config : report.configs) intervals |= config.run_ids.size() > 1;
  std::printf("clustersim report: %s, by %s; times in %s%s\n", path.c_str(), by.c_str(),
              hours ? "hours" : "seconds",
              intervals ? "; mean ± half-width of the 95 % confidence interval over the seeds "
                          "(Student t)"
                        : "");
  const std::vector<ReportMetric>& metrics = ReportMetrics();
  auto cell = [&](const ReportMetric& m, const ReportValue& v) {
    if (std::isnan(v.mean)) return std::string("-");
    double scale = 1;
    int decimals = 0;
    switch (m.unit) {
      case ReportUnit::kCount:
        decimals = v.mean == std::floor(v.mean) ? 0 : 1;
        break;
      case ReportUnit::kGpuHours:
        decimals = std::abs(v.mean) < 10 ? 1 : 0;  // small preemption and borrowing figures
        break;
      case ReportUnit::kDollars:
        decimals = 0;
        break;
      case ReportUnit::kSeconds:
        scale = hours ? 3600 : 1;
        decimals = 2;
        break;
      case ReportUnit::kRatio:
        decimals = 2;
        break;
      case ReportUnit::kPercent:
        scale = 0.01;
        decimals = 1;
        break;
    }
    std::string text = Number(v.mean / scale, decimals);
    // The same in every seed: no interval to show.
    if (!std::isnan(v.half_width) && v.half_width > 0) {
      text += " ± " + Number(v.half_width / scale, decimals);
    }
    return text;
  };
  // Display width: "±" is two bytes in UTF-8 but one column.
  auto width = [](const std::string& s) {
    size_t n = 0;
    for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
    return n;
  };
  auto print = [&](const std::vector<std::vector<std::string>>& table) {
    std::vector<size_t> widths(table.front().size(), 0);
    for (const auto& line : table) {
      for (size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], width(line[i]));
    }
    for (const auto& line : table) {
      std::string text = "  ";
      for (size_t i = 0; i < line.size(); ++i) {
        const std::string pad(widths[i] - width(line[i]), ' ');
        // Text columns (the group, and runs by policy) left-aligned, figures right-aligned.
        const bool text_column = i == 0 || (by == "policy" && i == 1);
        text += i == 0 ? line[i] + pad : "  " + (text_column ? line[i] + pad : pad + line[i]);
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      std::printf("%s\n", text.c_str());
    }
  };
  // The preemption-cost and borrowing columns only when some row has a non-zero figure: most
  // runs have neither (no preemption cost, no quotas). --csv always has every figure.
  std::vector<bool> shown(metrics.size(), true);
  for (size_t m = 0; m < metrics.size(); ++m) {
    const std::string name = metrics[m].name;
    if (name != "preemption_gpu_hours" && name != "borrowed_gpu_hours") continue;
    shown[m] = false;
    for (const ReportRow& row : report.rows) {
      if (row.values[m].mean != 0 && !std::isnan(row.values[m].mean)) shown[m] = true;
    }
  }
  auto titles = [&](std::vector<std::string>* heading) {
    for (size_t m = 0; m < metrics.size(); ++m) {
      if (shown[m]) heading->push_back(metrics[m].title);
    }
  };
  auto figures = [&](const ReportRow& row, std::vector<std::string>* line) {
    for (size_t m = 0; m < metrics.size(); ++m) {
      if (shown[m]) line->push_back(cell(metrics[m], row.values[m]));
    }
  };
  // A configuration's node pools: what was billed, beside the jobs' figures
  // (docs/autoscaling.md#output).
  auto billed = [&](size_t c, const std::string& prefix) {
    for (const ReportBilled& b : report.billed) {
      if (b.config != c) continue;
      std::printf("  %snode pools billed %s GPU-h, $%s; %s %% of the billed GPU-hours busy\n",
                  prefix.c_str(), cell({"", "", ReportUnit::kGpuHours}, b.gpu_hours).c_str(),
                  cell({"", "", ReportUnit::kDollars}, b.cost_usd).c_str(),
                  cell({"", "", ReportUnit::kPercent}, b.utilization).c_str());
    }
  };
  if (by == "policy") {
    // One configuration, one row: a single table.
    std::vector<std::vector<std::string>> table;
    std::vector<std::string> heading = {"configuration", "runs (seeds)"};
    titles(&heading);
    table.push_back(heading);
    for (const ReportRow& row : report.rows) {
      const ReportConfig& config = report.configs[row.config];
      std::vector<std::string> line = {config.label,
                                       Join(config.run_ids) + " (" + Join(config.seeds) + ")"};
      figures(row, &line);
      table.push_back(std::move(line));
    }
    std::printf("\n");
    print(table);
    for (size_t c = 0; c < report.configs.size(); ++c) billed(c, report.configs[c].label + ": ");
  } else {
    for (size_t c = 0; c < report.configs.size(); ++c) {
      const ReportConfig& config = report.configs[c];
      std::printf("\n%s: run%s %s (seed%s %s)\n", config.label.c_str(),
                  config.run_ids.size() > 1 ? "s" : "", Join(config.run_ids).c_str(),
                  config.seeds.size() > 1 ? "s" : "", Join(config.seeds).c_str());
      std::vector<std::vector<std::string>> table;
      std::vector<std::string> heading = {by};
      titles(&heading);
      table.push_back(heading);
      for (const ReportRow& row : report.rows) {
        if (row.config != c) continue;
        std::vector<std::string> line = {row.group};
        figures(row, &line);
        table.push_back(std::move(line));
      }
      print(table);
      billed(c, "");
    }
  }
  std::printf(
      "\ntimeout: jobs killed at their requested wall time; unfinished: still queued or running "
      "when the run stopped; GPU-h: GPU-hours held; util: those hours / the cluster's GPU-hours "
      "over the runs' shared horizon (%.2f h, first submission to the last run's end); cost: "
      "the GPU-hours at their GPU type's price; wait: first-start wait; queued: all time "
      "waiting, after preemptions too; wait, queued and JCT over every job that arrived (a "
      "killed one to its kill time, an unfinished one to its run's end: a lower bound); bsld "
      "(bounded slowdown): jobs that ended; preempt, OOM: preemptions and out-of-memory "
      "failures%s%s\n",
      report.horizon_seconds / 3600,
      shown[MetricIndex("preemption_gpu_hours")]
          ? "; preempt GPU-h: GPU time paid for checkpoint save + restore after preemptions"
          : "",
      shown[MetricIndex("borrowed_gpu_hours")]
          ? "; borrowed GPU-h: GPU time run beyond the virtual cluster's quota"
          : "");
  if (!report.billed.empty()) {
    std::printf(
        "node pools: util counts every node a pool can hold (its max) for the whole horizon; "
        "billed: the GPU-hours and cost from each pool node's request to its release, busy: "
        "GPU-hours held by jobs over those billed (docs/autoscaling.md#output)\n");
  }
  for (const std::string& note : report.notes) std::printf("note: %s\n", note.c_str());
}

// The wait-reason table (--by reason, user,reason or vc,reason; docs/metrics.md#wait-reasons).
void PrintWaitTable(const Report& report, const WaitReport& waits, const std::string& path,
                    const std::string& by_group) {
  bool intervals = false;
  for (const ReportConfig& config : report.configs) intervals |= config.run_ids.size() > 1;
  std::printf("clustersim report: %s, wait reasons%s; hours of queued time%s\n", path.c_str(),
              by_group.empty() ? "" : (" by " + by_group).c_str(),
              intervals ? "; mean ± half-width of the 95 % confidence interval over the seeds "
                          "(Student t)"
                        : "");
  auto cell = [](const ReportValue& v, int decimals, double scale) {
    if (std::isnan(v.mean)) return std::string("-");
    std::string text = Number(v.mean * scale, decimals);
    if (!std::isnan(v.half_width) && v.half_width > 0) {
      text += " ± " + Number(v.half_width * scale, decimals);
    }
    return text;
  };
  auto width = [](const std::string& text) {
    size_t n = 0;
    for (unsigned char ch : text) n += (ch & 0xC0) != 0x80;
    return n;
  };
  for (size_t c = 0; c < report.configs.size(); ++c) {
    const ReportConfig& config = report.configs[c];
    std::printf("\n%s: run%s %s (seed%s %s)\n", config.label.c_str(),
                config.run_ids.size() > 1 ? "s" : "", Join(config.run_ids).c_str(),
                config.seeds.size() > 1 ? "s" : "", Join(config.seeds).c_str());
    std::vector<std::vector<std::string>> table;
    std::vector<std::string> heading;
    if (!by_group.empty()) heading.push_back(by_group);
    for (const char* title : {"reason", "jobs", "hours", "share %"}) heading.push_back(title);
    table.push_back(heading);
    for (const WaitReportRow& row : waits.rows) {
      if (row.config != c) continue;
      std::vector<std::string> line;
      if (!by_group.empty()) line.push_back(row.group);
      line.push_back(row.reason);
      line.push_back(cell(row.jobs, row.jobs.mean == std::floor(row.jobs.mean) ? 0 : 1, 1));
      line.push_back(cell(row.hours, 2, 1));
      line.push_back(cell(row.share, 1, 100));
      table.push_back(std::move(line));
    }
    if (table.size() == 1) {
      std::printf("  no job waited\n");
      continue;
    }
    std::vector<size_t> widths(heading.size(), 0);
    for (const auto& line : table) {
      for (size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], width(line[i]));
    }
    const size_t text_columns = by_group.empty() ? 1 : 2;
    for (const auto& line : table) {
      std::string text;
      for (size_t i = 0; i < line.size(); ++i) {
        const std::string pad(widths[i] - width(line[i]), ' ');
        text += "  " + (i < text_columns ? line[i] + pad : pad + line[i]);
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      std::printf("%s\n", text.c_str());
    }
  }
  std::printf(
      "\njobs: jobs that waited for the reason; hours: their queued time for it; share: of all "
      "the queued time%s (docs/metrics.md#wait-reasons defines each reason)\n",
      by_group.empty() ? "" : (" of the " + by_group).c_str());
  for (const std::string& note : report.notes) std::printf("note: %s\n", note.c_str());
  for (const std::string& note : waits.notes) std::printf("note: %s\n", note.c_str());
}

void PrintWaitCsv(const Report& report, const WaitReport& waits) {
  std::printf("config,run_ids,seeds,group,reason,runs");
  for (const char* name : {"jobs", "hours", "share"}) std::printf(",%s,%s_ci95", name, name);
  std::printf("\n");
  for (const WaitReportRow& row : waits.rows) {
    const ReportConfig& config = report.configs[row.config];
    std::printf("%s,%s,%s,%s,%s,%zu", CsvField(config.label).c_str(),
                Join(config.run_ids, " ").c_str(), Join(config.seeds, " ").c_str(),
                CsvField(row.group).c_str(), row.reason.c_str(), config.run_ids.size());
    for (const ReportValue* v : {&row.jobs, &row.hours, &row.share}) {
      for (double x : {v->mean, v->half_width}) {
        if (std::isnan(x)) {
          std::printf(",");
        } else {
          std::printf(",%.10g", x);
        }
      }
    }
    std::printf("\n");
  }
}

// "3", "3-5", "1,4-6": the run ids, in order. Throws InputError naming --run.
std::vector<int64_t> ParseRunIds(const std::string& text) {
  std::vector<int64_t> ids;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const size_t dash = item.find('-', 1);
    auto number = [&](const std::string& digits) {
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || v < 1) {
        throw InputError("--run " + text + ": expected run ids (ID or FIRST-LAST, ids >= 1)");
      }
      return v;
    };
    const int64_t first = number(item.substr(0, dash));
    const int64_t last = dash == std::string::npos ? first : number(item.substr(dash + 1));
    if (last < first || last - first > 1000000) {
      throw InputError("--run " + text + ": expected FIRST-LAST with FIRST <= LAST");
    }
    for (int64_t id = first; id <= last; ++id) ids.push_back(id);
    start = comma + 1;
  }
  return ids;
}

}  // namespace

int CommandReport(int argc, char** argv) {
  std::string path;
  std::vector<std::string> run_texts;
  std::string by = "user";
  std::string html;
  int top = 0;
  bool allow_different_jobs = false;
  po::options_description desc(
      "clustersim report DB: per-group accounting of the runs in a results database\n\n"
      "Per user, virtual cluster, GPU type, priority class or policy: jobs (completed, killed,\n"
      "unfinished), GPU-hours, utilization, cost, first-start wait, queued time, JCT, bounded\n"
      "slowdown, preemptions and OOM failures, like Slurm's sreport and sacct. Runs that differ\n"
      "only in their seed (clustersim compare --seeds 0,1,2) are pooled: mean and 95 % confidence\n"
      "interval (Student t) over the seeds. The runs must have seen the same jobs.\n\noptions");
  desc.add_options()("help,h", "show this help")("db", po::value(&path), "results database")(
      "run", po::value(&run_texts)->multitoken()->composing(),
      "run ids to report: ID, FIRST-LAST or lists of them (default: every complete run)")(
      "by", po::value(&by)->default_value("user"),
      "user | vc | gpu_type | priority | policy | reason | user,reason | vc,reason (wait "
      "reasons, docs/metrics.md#wait-reasons)")(
      "top", po::value(&top)->default_value(0),
      "only the N groups with the most GPU-hours per configuration (0 = all)")(
      "allow-different-jobs", po::bool_switch(&allow_different_jobs),
      "report runs that did not see the same jobs (a different trace or filters, or jobs some "
      "rejected and others accepted); by default refused, naming the jobs")(
      "csv", "print CSV (one line per configuration and group, SI units) instead of the table")(
      "html", po::value(&html),
      "write the report as one self-contained HTML page to this file instead (charts, tables, "
      "wait reasons, allocation log; docs/comparing.md#the-html-report)");
  po::positional_options_description positional;
  positional.add("db", 1);
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm, &positional)) return 0;
  if (path.empty()) throw InputError("report: missing DB (see clustersim report --help)");
  if (top < 0) throw InputError("--top: expected a count >= 0");
  ReportOptions options;
  for (const std::string& text : run_texts) {
    for (int64_t id : ParseRunIds(text)) options.run_ids.push_back(id);
  }
  if (!html.empty()) {
    HtmlReportOptions html_options;
    html_options.run_ids = options.run_ids;
    html_options.allow_different_jobs = allow_different_jobs;
    WriteHtmlReport(path, html, html_options);
    std::printf("wrote %s\n", html.c_str());
    return 0;
  }
  // Wait reasons: by reason alone or within users or VCs.
  std::string by_group;
  const bool reasons = by == "reason" || by == "user,reason" || by == "vc,reason";
  if (reasons) {
    by_group = by == "reason" ? "" : by.substr(0, by.find(','));
    options.by = ReportGroupBy::kPolicy;
  } else {
    try {
      options.by = ParseReportGroupBy(by);
    } catch (const InputError&) {
      throw InputError("--by " + by +
                       ": expected user, vc, gpu_type, priority, policy, reason, user,reason or "
                       "vc,reason");
    }
  }
  options.top = top;
  options.allow_different_jobs = allow_different_jobs;
  const Report report = BuildReport(path, options);
  if (reasons) {
    const ReportGroupBy group = by_group.empty() ? ReportGroupBy::kPolicy
                                : by_group == "user" ? ReportGroupBy::kUser
                                                     : ReportGroupBy::kVc;
    const WaitReport waits = BuildWaitReport(path, report.configs, group);
    if (vm.count("csv")) {
      PrintWaitCsv(report, waits);
    } else {
      PrintWaitTable(report, waits, path, by_group);
    }
    return 0;
  }
  if (vm.count("csv")) {
    PrintCsv(report);
    for (const std::string& note : report.notes) {
      std::fprintf(stderr, "clustersim report: note: %s\n", note.c_str());
    }
  } else {
    PrintTable(report, path, by);
  }
  return 0;
}

}  // namespace clustersim
