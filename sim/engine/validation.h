// Comparison of a simulated schedule with the schedule a trace records (`clustersim validate`,
// docs/validation.md): job by job, as distributions, and as series over time, overall, per size
// class and per user. Computed once after a run from the trace, the engine's job outcomes and its
// allocation log (EngineOptions::record_allocations must have been set).
//
// Which jobs take part: jobs the simulation rejected (they can never run on the simulated cluster)
// are left out of everything and counted. A job "has a record" when the trace gives its recorded
// start or end (Job::recorded_start / recorded_end); the job-by-job figures and the wait
// distributions use the jobs with both a recorded start and a simulated start (a paired sample),
// the series use the jobs with a record, simulated and recorded alike, so both sides count the
// same jobs.
//
// Series, on a grid of `interval_seconds` buckets aligned to multiples of the interval from the
// earliest submission to the last simulated or recorded event, each bucket the exact time average
// of a piecewise-constant count (as the timeseries table):
// - utilization = GPUs held / cluster GPUs. Simulated: the allocation log's intervals (a GPU share
//   counts its fraction). Recorded: the job's recorded attempts, or [recorded_start, recorded_end)
//   (recorded_start + duration when the end is not recorded), holding gpus x (gpu_milli / 1000 for
//   a fractional request);
// - queue length = jobs waiting. Simulated: from submission to leaving (end, or the end of the run)
//   minus the running intervals. Recorded: from submission to the recorded start (or to the
//   recorded end for a job that never started), plus the gaps between recorded attempts.
// Size classes by requested GPUs: "<1" (a share of one GPU), "1", "2-4", "5-8", "9-32", "33+".
#ifndef CLUSTERSIM_SIM_ENGINE_VALIDATION_H_
#define CLUSTERSIM_SIM_ENGINE_VALIDATION_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/engine/engine.h"

namespace clustersim {

// One figure of the comparison (the `validation` table). Metrics whose name ends in `_hours` are
// in hours; `simulated` / `recorded` are the two sides (NaN when a metric has none) and `value`
// the comparison: their difference (simulated - recorded) or a distance.
struct ValidationRow {
  std::string scope;   // "all", "size:<class>", "user:<name>"
  std::string metric;  // e.g. "wait_mean_hours", "wait_ks", "utilization_correlation"
  double simulated = std::numeric_limits<double>::quiet_NaN();
  double recorded = std::numeric_limits<double>::quiet_NaN();
  double value = std::numeric_limits<double>::quiet_NaN();
};

// The series of one scope on the common grid (the `validation_series` table).
struct ValidationSeries {
  std::string scope;  // "all" or "size:<class>"
  double t0 = 0;      // start of the first bucket, seconds
  double interval_seconds = 300;
  std::vector<double> simulated_utilization, recorded_utilization;
  std::vector<double> simulated_queue, recorded_queue;
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  std::vector<ValidationSeries> series;
  int64_t jobs = 0;           // in the trace
  int64_t jobs_rejected = 0;  // by the simulation; left out
  int64_t jobs_recorded = 0;  // not rejected, with a recorded start or end
  int64_t jobs_compared = 0;  // recorded start and simulated start

  // The row of (scope, metric), or nullptr.
  const ValidationRow* Find(const std::string& scope, const std::string& metric) const;
};

// The size class of a job's request (see the header comment).
std::string SizeClass(const Job& job);

// Compares the run with the trace's record. `interval_seconds` > 0 is the series' bucket width.
// With `compare_from` finite only the jobs submitted at or after it are compared (the counts, the
// job-level figures and the scopes), and the series start at the bucket holding it (every job's
// intervals count in those buckets): `validate --calibrate` reports the held-out part of a log so.
// Throws InputError when no job has a recorded start or end, or when the grid would exceed
// kMaxTimeseriesIntervals buckets. REQUIRES: the engine has run with record_allocations.
ValidationReport ComputeValidation(
    const Engine& engine, double interval_seconds,
    double compare_from = -std::numeric_limits<double>::infinity());

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_VALIDATION_H_
