// Accounting reports over a results database (`clustersim report`): what Slurm's sreport and
// sacct give an operator (docs/metrics.md, "Cost allocation"), per group of jobs — per user,
// virtual cluster, GPU type, priority or policy: jobs, GPU-hours, cost, first-start wait, queued
// time, JCT, bounded slowdown, preemptions and out-of-memory failures. Read back from the `jobs`
// table only (results/README.md), so a report can be made of any database, merged or not.
//
// Runs that differ only in their seed (the same identity key as `clustersim merge` uses, minus
// the seed and the model-assignment seed) form one configuration; a configuration's row shows,
// for each figure, the mean over its runs and, with two runs or more, the half-width of the 95 %
// confidence interval of that mean from Student's t distribution: t(0.975, n-1) x s / sqrt(n),
// s the sample standard deviation over the n runs. The runs are independent replications (one
// seed each), which is what the interval assumes; a configuration holding the same seed twice
// (appended with --allow-duplicate) counts it once.
//
// The report's runs must have seen the same jobs (sim/output/comparison.h): runs that did not
// are refused, naming the jobs, unless ReportOptions::allow_different_jobs.
//
// Figures per run and group (units in the names): jobs (all the group's jobs), completed,
// timeout (killed at their requested wall time), unfinished (still queued or running when the
// run stopped), gpu_hours (the GPU-hours its jobs held), utilization (gpu_hours / the cluster's
// GPU-hours over the runs' shared horizon), cost_usd (those GPU-hours at their GPU type's price:
// cost allocation by use), wait_mean_seconds and wait_p95_seconds (first-start wait),
// queued_mean_seconds and jct_mean_seconds (wait, queued and JCT over every job that arrived: an
// unfinished one up to its run's end, docs/metrics.md#jobs), bsld_mean (jobs that ended), and
// the sums preemptions, preemption_gpu_hours (GPU time paid for checkpoint save + restore, the
// jobs' preemption_gpu_seconds), borrowed_gpu_hours (GPU time run beyond the VC's quota) and
// oom_failures. A group absent from one run of a configuration (a GPU type no job of that seed
// ran on) counts 0 in the sums and is left out of the means. By priority, groups are the
// trace's class names with their level ("LS (2)", runs.priority_classes), the most urgent
// first.
#ifndef CLUSTERSIM_SIM_OUTPUT_REPORT_H_
#define CLUSTERSIM_SIM_OUTPUT_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace clustersim {

// What a report groups jobs by.
enum class ReportGroupBy { kUser, kVc, kGpuType, kPriority, kPolicy };
// Parses user | vc | gpu_type | priority | policy. Throws InputError naming --by.
ReportGroupBy ParseReportGroupBy(const std::string& text);

struct ReportOptions {
  std::vector<int64_t> run_ids;  // empty = every complete run
  ReportGroupBy by = ReportGroupBy::kUser;
  int top = 0;  // > 0: the `top` groups by GPU-hours of each configuration, plus the total
  // Report runs that did not see the same jobs (sim/output/comparison.h) instead of refusing.
  bool allow_different_jobs = false;
};

enum class ReportUnit { kCount, kGpuHours, kDollars, kSeconds, kRatio, kPercent };
struct ReportMetric {
  const char* name;   // CSV column
  const char* title;  // table heading
  ReportUnit unit;
};
// The report's figures, in table and CSV order.
const std::vector<ReportMetric>& ReportMetrics();

// A figure over the runs of a configuration.
struct ReportValue {
  int n = 0;              // runs with a value
  double mean = 0;        // NaN when n = 0
  double half_width = 0;  // 95 % CI half-width; NaN when n < 2
};

struct ReportRow {
  size_t config = 0;                // index in Report::configs
  std::string group;                // the group's name; "(all)" for the configuration's total
  std::vector<ReportValue> values;  // one per ReportMetrics()
};

struct ReportConfig {
  std::string label;             // what sets it apart from the report's other configurations
  std::vector<int64_t> run_ids;  // its runs, ascending
  std::vector<int64_t> seeds;    // their seeds, same order
};

// What a configuration's node pools were billed (docs/autoscaling.md): the summary's
// billed_gpu_hours, billed_cost_usd and billed_gpu_utilization (scope all) over its runs. Only
// for configurations whose runs have node pools.
struct ReportBilled {
  size_t config = 0;
  ReportValue gpu_hours, cost_usd, utilization;
};

struct Report {
  std::vector<ReportConfig> configs;
  std::vector<ReportBilled> billed;  // configurations with node pools, in configuration order
  std::vector<ReportRow> rows;     // per configuration: groups by mean GPU-hours descending, then
                                   // the total row "(all)" (not by policy: one group there)
  std::vector<std::string> notes;  // runs left out and why, missing columns, different jobs
  double horizon_seconds = 0;      // the runs' shared horizon (utilization is over it)
};

// Reads `path` (opened read-only). Throws InputError naming the file for a missing or foreign
// database, an unknown run id or one that is not complete, no complete run to report, or runs
// that did not see the same jobs (unless allowed), naming the jobs.
Report BuildReport(const std::string& path, const ReportOptions& options);

// Wait reasons (`clustersim report --by reason`, docs/metrics.md#wait-reasons): per configuration
// and reason (and per user or virtual cluster, `--by user,reason`), from the `wait_reasons`
// table. Figures per run: jobs (the group's jobs that waited for the reason at all),
// hours (their seconds for it / 3600) and share (those seconds over all the group's queued
// time, jobs.queued_time); pooled over seeds as BuildReport does.
struct WaitReportRow {
  size_t config = 0;   // index in the configurations given
  std::string group;   // user or VC; "(all)" by reason alone
  std::string reason;  // WaitReasonName
  ReportValue jobs, hours, share;
};
struct WaitReport {
  std::vector<WaitReportRow> rows;  // per configuration: groups by their total hours descending
                                    // (by reason alone, one group), reasons in WaitReason order
  std::vector<std::string> notes;   // runs without wait reasons (written by an older clustersim)
};
// `by`: kUser, kVc, or kPolicy for reasons alone. `configs`: from a BuildReport of the same
// database. Throws InputError as BuildReport does.
WaitReport BuildWaitReport(const std::string& path, const std::vector<ReportConfig>& configs,
                           ReportGroupBy by);

// t(0.975, df): the two-sided 95 % quantile of Student's t distribution. REQUIRES: df >= 1.
double StudentT975(int df);

// Mean and 95 % CI half-width of `values` (see above).
ReportValue MeanWithInterval(const std::vector<double>& values);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_OUTPUT_REPORT_H_
