#include "sim/output/comparison.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "sim/output/sqlite_statement.h"
#include "sim/output/sqlite_writer.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// "run 3 (easy/first-fit)", or the name alone for a run outside a database.
std::string Named(const ComparedRun& run) {
  if (run.run_id < 0) return run.name;
  return "run " + std::to_string(run.run_id) + " (" + run.name + ")";
}

// A reason with its numbers blanked, so that jobs rejected for the same cause with different
// demands ("requests 0 GPUs with 2 CPUs", "... with 4 CPUs") fall in one kind.
std::string KindOf(const std::string& reason) {
  std::string kind;
  for (size_t i = 0; i < reason.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(reason[i]))) {
      while (i + 1 < reason.size() &&
             (std::isdigit(static_cast<unsigned char>(reason[i + 1])) || reason[i + 1] == '.')) {
        ++i;
      }
      kind += '#';
    } else {
      kind += reason[i];
    }
  }
  return kind;
}

// "N like "REASON" (jobs a, b, c, ...)" per kind, the most frequent first.
std::string DescribeJobs(const std::vector<const RejectedJob*>& jobs) {
  struct Kind {
    const RejectedJob* first = nullptr;
    std::vector<const RejectedJob*> jobs;
  };
  std::map<std::string, Kind> kinds;
  for (const RejectedJob* job : jobs) {
    Kind& kind = kinds[KindOf(job->reason)];
    if (kind.first == nullptr) kind.first = job;
    kind.jobs.push_back(job);
  }
  std::vector<const Kind*> order;
  for (const auto& [key, kind] : kinds) order.push_back(&kind);
  std::stable_sort(order.begin(), order.end(), [](const Kind* a, const Kind* b) {
    if (a->jobs.size() != b->jobs.size()) return a->jobs.size() > b->jobs.size();
    return a->first->index < b->first->index;
  });
  constexpr size_t kKindsShown = 3;
  constexpr size_t kIdsShown = 3;
  std::string text;
  for (size_t k = 0; k < order.size() && k < kKindsShown; ++k) {
    const Kind& kind = *order[k];
    if (!text.empty()) text += "; ";
    const std::string& reason = kind.first->reason;
    text += WithThousands(static_cast<int64_t>(kind.jobs.size())) + " like \"" +
            (reason.empty() ? std::string("(no reason recorded)") : reason) + "\" (job" +
            (kind.jobs.size() > 1 ? "s " : " ");
    for (size_t i = 0; i < kind.jobs.size() && i < kIdsShown; ++i) {
      text += (i > 0 ? ", " : "") + kind.jobs[i]->id;
    }
    text += kind.jobs.size() > kIdsShown ? ", ...)" : ")";
  }
  if (order.size() > kKindsShown) {
    int64_t rest = 0;
    for (size_t k = kKindsShown; k < order.size(); ++k) {
      rest += static_cast<int64_t>(order[k]->jobs.size());
    }
    text += "; and " + WithThousands(rest) + " of " + std::to_string(order.size() - kKindsShown) +
            " other kinds";
  }
  return text;
}

// Jobs `a` rejected and `b` did not, by index.
std::vector<const RejectedJob*> RejectedOnlyBy(const ComparedRun& a, const ComparedRun& b) {
  std::vector<const RejectedJob*> only;
  auto other = b.rejected.begin();
  for (const RejectedJob& job : a.rejected) {
    while (other != b.rejected.end() && other->index < job.index) ++other;
    if (other == b.rejected.end() || other->index != job.index) only.push_back(&job);
  }
  return only;
}

}  // namespace

std::string WithThousands(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

ComparedRun ReadComparedRun(sqlite3* db, const std::string& path, int64_t run_id) {
  ComparedRun run;
  run.run_id = run_id;
  {
    Statement s = Prepare(db, path,
                          "SELECT policy, placement, trace_path, trace_sha256, trace_filter, seed "
                          "FROM runs WHERE run_id = ?");
    sqlite3_bind_int64(s.get(), 1, run_id);
    if (sqlite3_step(s.get()) != SQLITE_ROW) {
      throw InputError(path, 0, 0, "no run " + std::to_string(run_id));
    }
    run.name = Text(s.get(), 0) + "/" + Text(s.get(), 1);
    run.trace_path = Text(s.get(), 2);
    run.trace_sha256 = Text(s.get(), 3);
    run.trace_filter = Text(s.get(), 4);
    run.seed = sqlite3_column_int64(s.get(), 5);
  }
  {
    Statement s = Prepare(db, path,
                          "SELECT job_index, job_id, status, reason, submit_time FROM jobs WHERE "
                          "run_id = ? ORDER BY job_index");
    sqlite3_bind_int64(s.get(), 1, run_id);
    double first = std::numeric_limits<double>::infinity();
    int rc = 0;
    while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
      ++run.jobs;
      first = std::min(first, sqlite3_column_double(s.get(), 4));
      if (Text(s.get(), 2) == "rejected") {
        run.rejected.push_back({sqlite3_column_int64(s.get(), 0), Text(s.get(), 1),
                                Text(s.get(), 3)});
      }
    }
    if (rc != SQLITE_DONE) throw InputError(path, 0, 0, std::string("SQLite: ") + sqlite3_errmsg(db));
    run.first_submit_seconds = run.jobs > 0 ? first : 0;
  }
  std::map<std::string, double> summary;
  {
    Statement s = Prepare(db, path,
                          "SELECT metric, value FROM summary WHERE run_id = ? AND scope = 'all' AND "
                          "metric IN ('simulated_seconds', 'gpu_utilization', 'cost_usd', "
                          "'end_seconds')");
    sqlite3_bind_int64(s.get(), 1, run_id);
    while (sqlite3_step(s.get()) == SQLITE_ROW) {
      summary[Text(s.get(), 0)] =
          sqlite3_column_type(s.get(), 1) == SQLITE_NULL ? kNan : sqlite3_column_double(s.get(), 1);
    }
  }
  auto value = [&](const char* metric) {
    const auto it = summary.find(metric);
    return it == summary.end() ? kNan : it->second;
  };
  run.span_seconds = std::isnan(value("simulated_seconds")) ? 0 : value("simulated_seconds");
  run.gpu_utilization = value("gpu_utilization");
  run.cost_usd = value("cost_usd");
  // A database of an older clustersim has no end_seconds: its span began at the first arrival.
  run.end_seconds = std::isnan(value("end_seconds")) ? run.first_submit_seconds + run.span_seconds
                                                     : value("end_seconds");
  return run;
}

ComparedRun ReadComparedRun(const std::string& path, int64_t run_id) {
  if (!std::filesystem::is_regular_file(path)) {
    throw InputError(path, 0, 0, "no such database file");
  }
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    const std::string message = raw ? sqlite3_errmsg(raw) : "out of memory";
    sqlite3_close(raw);
    throw InputError(path, 0, 0, "cannot open database: " + message);
  }
  const std::unique_ptr<sqlite3, int (*)(sqlite3*)> owner(raw, sqlite3_close);
  std::string problem;
  try {
    problem = SchemaProblem(owner.get());
  } catch (const InputError& e) {
    problem = std::string("not a SQLite database (") + e.what() + ")";
  }
  if (!problem.empty()) throw InputError(path, 0, 0, "not a clustersim database: " + problem);
  return ReadComparedRun(owner.get(), path, run_id);
}

std::vector<std::string> JobSetDifferences(const std::vector<ComparedRun>& runs) {
  std::vector<std::string> differences;
  auto jobs = [](const ComparedRun& run) { return WithThousands(run.jobs) + " jobs"; };
  // Trace and filters; across seeds without what the seed draws (the count --inflate made).
  auto same_input = [&](const ComparedRun& run, const ComparedRun& first, bool across_seeds) {
    if (run.trace_sha256 != first.trace_sha256) {
      differences.push_back(Named(run) + " replayed " + run.trace_path + " (sha256 " +
                            run.trace_sha256.substr(0, 16) + ", " + jobs(run) + "), " +
                            Named(first) + " " + first.trace_path + " (sha256 " +
                            first.trace_sha256.substr(0, 16) + ", " + jobs(first) +
                            "): different traces");
      return false;
    }
    auto filters = [&](const std::string& text) {
      if (!across_seeds) return text;
      nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
      if (!json.is_object()) return text;
      json.erase("jobs_inflated");
      return json.dump();
    };
    if (filters(run.trace_filter) != filters(first.trace_filter)) {
      differences.push_back(Named(run) + " read the trace with the filters " + run.trace_filter +
                            " (" + jobs(run) + "), " + Named(first) + " with " +
                            first.trace_filter + " (" + jobs(first) + ")");
      return false;
    }
    return true;
  };
  std::map<int64_t, const ComparedRun*> first_of_seed;
  for (const ComparedRun& run : runs) {
    const auto [it, first] = first_of_seed.emplace(run.seed, &run);
    if (first) {
      if (&run != &runs.front()) same_input(run, runs.front(), true);
      continue;
    }
    const ComparedRun& reference = *it->second;
    if (!same_input(run, reference, false)) continue;
    for (const auto& [rejecter, accepter] :
         {std::pair{&run, &reference}, std::pair{&reference, &run}}) {
      const std::vector<const RejectedJob*> only = RejectedOnlyBy(*rejecter, *accepter);
      if (only.empty()) continue;
      differences.push_back(Named(*rejecter) + " rejected " +
                            WithThousands(static_cast<int64_t>(only.size())) + " job" +
                            (only.size() == 1 ? "" : "s") + " that " + Named(*accepter) +
                            " accepted: " + DescribeJobs(only));
    }
  }
  return differences;
}

std::string DifferentJobsMessage(const std::vector<std::string>& differences,
                                 const std::string& how_to_allow) {
  std::string text = "the compared runs did not see the same jobs, so their figures are not "
                     "comparable: ";
  for (size_t i = 0; i < differences.size(); ++i) text += (i > 0 ? "; " : "") + differences[i];
  return text + ". " + how_to_allow;
}

Horizon SharedHorizon(const std::vector<ComparedRun>& runs) {
  CHECK(!runs.empty(), "SharedHorizon of no runs");
  Horizon horizon{runs.front().first_submit_seconds, runs.front().end_seconds};
  for (const ComparedRun& run : runs) {
    horizon.start_seconds = std::min(horizon.start_seconds, run.first_submit_seconds);
    horizon.end_seconds = std::max(horizon.end_seconds, run.end_seconds);
  }
  return horizon;
}

double UtilizationOver(const ComparedRun& run, const Horizon& horizon) {
  if (std::isnan(run.gpu_utilization) || !(horizon.seconds() > 0)) return kNan;
  return run.gpu_utilization * run.span_seconds / horizon.seconds();
}

double CostOver(const ComparedRun& run, const Horizon& horizon) {
  if (std::isnan(run.cost_usd) || !(run.span_seconds > 0)) return run.cost_usd;
  return run.cost_usd / run.span_seconds * horizon.seconds();
}

}  // namespace clustersim
