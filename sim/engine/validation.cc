#include "sim/engine/validation.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/engine/summary.h"
#include "sim/util/error.h"
#include "sim/util/statistics.h"

namespace clustersim {
namespace {

constexpr double kHour = 3600.0;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Time averages of a sum of weighted intervals over fixed buckets [t0 + k dt, t0 + (k+1) dt):
// the edges of an interval add their overlap directly, the buckets it covers whole go through a
// difference array, so adding an interval costs O(1) whatever its length.
class GridSeries {
 public:
  GridSeries(double t0, double dt, size_t buckets)
      : t0_(t0), dt_(dt), partial_(buckets, 0.0), whole_(buckets + 1, 0.0) {}

  // Adds `weight` over [a, b) (nothing when b <= a). REQUIRES: the interval lies in the grid.
  void Add(double a, double b, double weight) {
    if (!(b > a) || weight == 0) return;
    const size_t ka = Bucket(a);
    const size_t kb = Bucket(b);
    if (ka == kb) {
      partial_[ka] += weight * (b - a);
      return;
    }
    partial_[ka] += weight * (t0_ + (ka + 1) * dt_ - a);
    partial_[kb] += weight * (b - (t0_ + kb * dt_));
    whole_[ka + 1] += weight;
    whole_[kb] -= weight;
  }

  std::vector<double> Averages() const {
    std::vector<double> out(partial_.size());
    double covering = 0;
    for (size_t k = 0; k < out.size(); ++k) {
      covering += whole_[k];
      out[k] = partial_[k] / dt_ + covering;
    }
    return out;
  }

 private:
  size_t Bucket(double t) const {
    const double k = std::floor((t - t0_) / dt_);
    if (!(k > 0)) return 0;
    return std::min(static_cast<size_t>(k), partial_.size() - 1);
  }

  double t0_;
  double dt_;
  std::vector<double> partial_;  // GPU- (or job-) seconds of intervals' edges per bucket
  std::vector<double> whole_;    // difference array of the weights covering whole buckets
};

// GPUs a job's request holds (a share of one GPU counts its fraction), as the run requested
// them (a site partition may count several of the log's processors per GPU).
double Demand(const Job& job, const PlacementRequest& request) {
  return job.gpus == 1 && job.gpu_milli > 0 ? job.gpu_milli / 1000.0 : request.gpus;
}

struct Paired {
  std::vector<double> simulated_wait, recorded_wait, start_error;  // seconds
  int64_t started = 0;                                             // simulated start
  int64_t recorded = 0;                                            // recorded start
};

struct SeriesSet {
  GridSeries sim_busy, rec_busy, sim_queue, rec_queue;
  SeriesSet(double t0, double dt, size_t k)
      : sim_busy(t0, dt, k), rec_busy(t0, dt, k), sim_queue(t0, dt, k), rec_queue(t0, dt, k) {}
};

void AddPairedRows(const std::string& scope, Paired& p, std::vector<ValidationRow>* rows) {
  auto row = [&](const char* metric, double simulated, double recorded, double value) {
    rows->push_back({scope, metric, simulated, recorded, value});
  };
  row("jobs", static_cast<double>(p.started), static_cast<double>(p.recorded),
      static_cast<double>(p.simulated_wait.size()));
  if (p.simulated_wait.empty()) return;
  auto hours = [](std::vector<double>& v) {
    for (double& x : v) x /= kHour;
  };
  hours(p.simulated_wait);
  hours(p.recorded_wait);
  hours(p.start_error);
  const double sim_mean = Mean(p.simulated_wait);
  const double rec_mean = Mean(p.recorded_wait);
  row("wait_mean_hours", sim_mean, rec_mean, sim_mean - rec_mean);
  for (const auto& [metric, q] :
       {std::pair{"wait_p50_hours", 0.50}, std::pair{"wait_p95_hours", 0.95},
        std::pair{"wait_p99_hours", 0.99}}) {
    const double s = Percentile(p.simulated_wait, q);
    const double r = Percentile(p.recorded_wait, q);
    row(metric, s, r, s - r);
  }
  row("wait_ks", kNaN, kNaN, KolmogorovSmirnov(p.simulated_wait, p.recorded_wait));
  row("wait_wasserstein_hours", kNaN, kNaN, Wasserstein1(p.simulated_wait, p.recorded_wait));
  std::vector<double> absolute;
  absolute.reserve(p.start_error.size());
  for (double e : p.start_error) absolute.push_back(std::abs(e));
  row("start_error_mean_hours", kNaN, kNaN, Mean(p.start_error));
  row("start_error_abs_mean_hours", kNaN, kNaN, Mean(absolute));
  row("start_error_p5_hours", kNaN, kNaN, Percentile(p.start_error, 0.05));
  row("start_error_p50_hours", kNaN, kNaN, Percentile(p.start_error, 0.50));
  row("start_error_p95_hours", kNaN, kNaN, Percentile(p.start_error, 0.95));
}

void AddSeriesRows(const ValidationSeries& s, std::vector<ValidationRow>* rows) {
  auto row = [&](const char* metric, double simulated, double recorded, double value) {
    rows->push_back({s.scope, metric, simulated, recorded, value});
  };
  const double su = Mean(s.simulated_utilization);
  const double ru = Mean(s.recorded_utilization);
  row("utilization_mean", su, ru, su - ru);
  row("utilization_correlation", kNaN, kNaN,
      PearsonCorrelation(s.simulated_utilization, s.recorded_utilization));
  row("utilization_mae", kNaN, kNaN,
      MeanAbsoluteError(s.simulated_utilization, s.recorded_utilization));
  const double sq = Mean(s.simulated_queue);
  const double rq = Mean(s.recorded_queue);
  row("queue_length_mean", sq, rq, sq - rq);
  row("queue_length_correlation", kNaN, kNaN,
      PearsonCorrelation(s.simulated_queue, s.recorded_queue));
  row("queue_length_mae", kNaN, kNaN, MeanAbsoluteError(s.simulated_queue, s.recorded_queue));
}

}  // namespace

const ValidationRow* ValidationReport::Find(const std::string& scope,
                                            const std::string& metric) const {
  for (const ValidationRow& row : rows) {
    if (row.scope == scope && row.metric == metric) return &row;
  }
  return nullptr;
}

std::string SizeClass(const Job& job) {
  if (job.IsShare()) return "<1";
  if (job.gpus <= 1) return std::to_string(job.gpus);
  if (job.gpus <= 4) return "2-4";
  if (job.gpus <= 8) return "5-8";
  if (job.gpus <= 32) return "9-32";
  return "33+";
}

ValidationReport ComputeValidation(const Engine& engine, double interval_seconds,
                                   double compare_from) {
  CHECK(interval_seconds > 0, "validation interval must be positive");
  const Trace& trace = engine.trace();
  const std::vector<JobRun>& runs = engine.runs();
  const AllocationLog& log = engine.allocations();
  const double run_end = engine.metrics().last_time();
  ValidationReport report;
  for (const Job& job : trace.jobs) report.jobs += job.submit_time >= compare_from;

  // Which jobs take part, their class, and the grid's extent.
  std::vector<uint8_t> in_series(trace.jobs.size(), 0);
  std::vector<std::string> job_class(trace.jobs.size());
  double t_min = std::numeric_limits<double>::infinity();
  double t_max = run_end;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const Job& job = trace.jobs[i];
    const bool compared = job.submit_time >= compare_from;
    if (runs[i].state == JobState::kRejected) {
      report.jobs_rejected += compared;
      continue;
    }
    if (!job.has_recorded_start() && !job.has_recorded_end()) continue;
    report.jobs_recorded += compared;
    in_series[i] = 1;
    job_class[i] = SizeClass(job);
    t_min = std::min(t_min, job.submit_time);
    if (job.has_recorded_start()) {
      t_min = std::min(t_min, job.recorded_start);
      t_max = std::max(t_max, job.recorded_start + job.duration);
    }
    if (job.has_recorded_end()) t_max = std::max(t_max, job.recorded_end);
    for (uint32_t a = 0; a < job.recorded_attempt_count; ++a) {
      t_max = std::max(t_max, trace.recorded_attempts[job.recorded_attempt_begin + a].end);
    }
  }
  if (report.jobs_recorded == 0 || !std::isfinite(t_min)) {
    throw InputError(trace.path, 0, 0,
                     "no job the simulation ran has a recorded schedule to compare with (the "
                     "trace records no start or end times; see traces/README.md for what each "
                     "format records, and --submit-is-start for logs whose submit times are start "
                     "times)");
  }
  const double dt = interval_seconds;
  const double t0 = std::floor(t_min / dt) * dt;
  const double buckets_real = std::max(1.0, std::ceil((t_max - t0) / dt));
  if (buckets_real > kMaxTimeseriesIntervals) {
    throw InputError("the validation series would need " + std::to_string(buckets_real) +
                     " intervals of " + std::to_string(dt) + " s (at most " +
                     std::to_string(kMaxTimeseriesIntervals) + "): use a larger --interval");
  }
  const size_t buckets = static_cast<size_t>(buckets_real);

  std::map<std::string, SeriesSet> series;  // "all" and "size:<class>"
  auto series_of = [&](const std::string& scope) -> SeriesSet& {
    auto it = series.find(scope);
    if (it == series.end()) it = series.emplace(scope, SeriesSet(t0, dt, buckets)).first;
    return it->second;
  };
  std::map<std::string, Paired> paired;  // every scope
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    if (!in_series[i]) continue;
    const Job& job = trace.jobs[i];
    const JobRun& run = runs[i];
    const std::string size_scope = "size:" + job_class[i];
    // Job-level pairs.
    std::vector<std::string> scopes = {"all", size_scope};
    if (!job.user.empty()) scopes.push_back("user:" + job.user.str());
    for (const std::string& scope : scopes) {
      if (job.submit_time < compare_from) break;  // before the compared part: series only
      Paired& p = paired[scope];
      p.started += run.first_start >= 0;
      p.recorded += job.has_recorded_start();
      if (run.first_start >= 0 && job.has_recorded_start()) {
        p.simulated_wait.push_back(run.first_start - job.submit_time);
        p.recorded_wait.push_back(job.recorded_start - job.submit_time);
        p.start_error.push_back(run.first_start - job.recorded_start);
      }
    }
    // Recorded series.
    const double demand = Demand(job, engine.RequestOf(static_cast<JobId>(i)));
    const double share = job.gpus > 0 ? demand / job.gpus : 0.0;
    for (SeriesSet* s : {&series_of("all"), &series_of(size_scope)}) {
      if (job.recorded_attempt_count > 0) {
        const RecordedAttempt* attempts = &trace.recorded_attempts[job.recorded_attempt_begin];
        std::vector<RecordedAttempt> sorted(attempts, attempts + job.recorded_attempt_count);
        std::sort(
            sorted.begin(), sorted.end(),
            [](const RecordedAttempt& a, const RecordedAttempt& b) { return a.start < b.start; });
        s->rec_queue.Add(job.submit_time, sorted.front().start, 1);
        for (size_t a = 0; a < sorted.size(); ++a) {
          s->rec_busy.Add(sorted[a].start, sorted[a].end, sorted[a].gpus * share);
          if (a + 1 < sorted.size()) s->rec_queue.Add(sorted[a].end, sorted[a + 1].start, 1);
        }
      } else if (job.has_recorded_start()) {
        s->rec_queue.Add(job.submit_time, job.recorded_start, 1);
        const double end =
            job.has_recorded_end() ? job.recorded_end : job.recorded_start + job.duration;
        s->rec_busy.Add(job.recorded_start, end, demand);
      } else {
        s->rec_queue.Add(job.submit_time, job.recorded_end, 1);  // withdrawn before a start
      }
      // Simulated queue: waiting from submission until it left, less its running intervals
      // (subtracted below from the allocation log).
      const double leave = run.end_time >= 0 ? run.end_time : run_end;
      s->sim_queue.Add(job.submit_time, leave, 1);
    }
  }
  for (const AllocationInterval& interval : log.intervals) {
    const size_t i = static_cast<size_t>(interval.job);
    if (!in_series[i]) continue;
    for (SeriesSet* s : {&series_of("all"), &series_of("size:" + job_class[i])}) {
      s->sim_busy.Add(interval.start, interval.end, interval.held_gpus());
      s->sim_queue.Add(interval.start, interval.end, -1);
    }
  }

  const double gpus = engine.cluster().total_gpus();
  // The series of the compared part start at the bucket holding compare_from.
  const size_t first_bucket =
      compare_from > t0 ? std::min(buckets - 1, static_cast<size_t>((compare_from - t0) / dt)) : 0;
  auto from_first = [&](std::vector<double> v) {
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(first_bucket));
    return v;
  };
  auto scope_order = [](const std::string& scope) {
    // all, then size classes from small to large, then users by name.
    static const char* kOrder[] = {"all",      "size:0",   "size:<1",   "size:1",
                                   "size:2-4", "size:5-8", "size:9-32", "size:33+"};
    for (size_t k = 0; k < std::size(kOrder); ++k) {
      if (scope == kOrder[k]) return k;
    }
    return std::size(kOrder);
  };
  std::vector<std::string> scopes;
  for (const auto& [scope, unused] : paired) scopes.push_back(scope);
  std::stable_sort(scopes.begin(), scopes.end(), [&](const std::string& a, const std::string& b) {
    return scope_order(a) < scope_order(b);
  });
  for (const std::string& scope : scopes) {
    AddPairedRows(scope, paired[scope], &report.rows);
    auto it = series.find(scope);
    if (it == series.end()) continue;
    ValidationSeries s;
    s.scope = scope;
    s.t0 = t0 + static_cast<double>(first_bucket) * dt;
    s.interval_seconds = dt;
    s.simulated_utilization = from_first(it->second.sim_busy.Averages());
    s.recorded_utilization = from_first(it->second.rec_busy.Averages());
    for (double& v : s.simulated_utilization) v /= gpus;
    for (double& v : s.recorded_utilization) v /= gpus;
    s.simulated_queue = from_first(it->second.sim_queue.Averages());
    s.recorded_queue = from_first(it->second.rec_queue.Averages());
    AddSeriesRows(s, &report.rows);
    report.series.push_back(std::move(s));
  }
  if (const ValidationRow* jobs = report.Find("all", "jobs")) {
    report.jobs_compared = static_cast<int64_t>(jobs->value);
  }
  report.rows.push_back(
      {"all", "jobs_rejected", kNaN, kNaN, static_cast<double>(report.jobs_rejected)});
  report.rows.push_back(
      {"all", "jobs_recorded", kNaN, kNaN, static_cast<double>(report.jobs_recorded)});
  return report;
}

}  // namespace clustersim
