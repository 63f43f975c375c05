// Headline figures of a run (docs/metrics.md, the `summary` table): computed once at the end from
// the jobs' outcomes and the metrics' exact integrals. results/README.md lists every metric.
#ifndef CLUSTERSIM_SIM_ENGINE_SUMMARY_H_
#define CLUSTERSIM_SIM_ENGINE_SUMMARY_H_

#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/util/statistics.h"  // Percentile, Percentiles

namespace clustersim {

struct SummaryRow {
  std::string metric;
  // "all", a GPU type name, "priority:LEVEL" or "vc:NAME" (per-group figures)
  std::string scope;
  double value = 0;
};

// Jain's fairness index (sum x)^2 / (n sum x^2) over the values; 1 for an empty list.
double JainIndex(const std::vector<double>& values);

// Bounded slowdown of a job that ended (docs/metrics.md#jobs; Feitelson et al., "Theory and
// Practice in Parallel Job Scheduling", JSSPP 1997, LNCS 1291): max(1, jct / max(run, threshold)),
// all in seconds. The threshold keeps jobs of a few seconds from dominating the mean: a 1 s job
// that waited a minute has slowdown 61 but, with the usual threshold of 10 s, bounded slowdown 6.1.
// REQUIRES: threshold_seconds > 0.
inline constexpr double kDefaultBsldThresholdSeconds = 10;
double BoundedSlowdown(double jct_seconds, double run_seconds, double threshold_seconds);

struct SummaryOptions {
  double bsld_threshold_seconds = kDefaultBsldThresholdSeconds;  // > 0
};

std::vector<SummaryRow> ComputeSummary(const Engine& engine, const SummaryOptions& options = {});

// Returns the value of `metric` in scope "all", or NaN.
double SummaryValue(const std::vector<SummaryRow>& rows, const std::string& metric);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_SUMMARY_H_
