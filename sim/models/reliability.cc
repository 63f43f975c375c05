#include "sim/models/reliability.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace clustersim {

double JobInterruptionsPerHour(const FailureCause& cause, const JobFootprint& job, int cluster_gpus,
                               int cluster_nodes) {
  double units = 0;
  if (cause.domain == FailureDomain::kCluster) {
    units = cause.per == FailureUnit::kGpu    ? cluster_gpus
            : cause.per == FailureUnit::kNode ? cluster_nodes
                                              : 1;
  } else if (cause.per == FailureUnit::kGpu) {
    units = job.gpus;
  } else if (cause.per == FailureUnit::kNode) {
    units = cause.domain == FailureDomain::kRack ? job.rack_nodes : job.nodes;
  }
  return cause.rate_per_unit_hour * units;
}

double JobInterruptionsPerHour(const FailureCatalog& catalog, const JobFootprint& job,
                               int cluster_gpus, int cluster_nodes) {
  double total = 0;
  for (const FailureCause& cause : catalog.causes()) {
    total += JobInterruptionsPerHour(cause, job, cluster_gpus, cluster_nodes);
  }
  return total;
}

double YoungIntervalSeconds(double checkpoint_seconds, double mtbf_seconds) {
  return std::sqrt(2 * checkpoint_seconds * mtbf_seconds);
}

double DalyIntervalSeconds(double checkpoint_seconds, double mtbf_seconds) {
  const double c = checkpoint_seconds;
  const double m = mtbf_seconds;
  if (!(c > 0) || c >= 2 * m) return m;
  const double x = c / (2 * m);
  return std::sqrt(2 * c * m) * (1 + std::sqrt(x) / 3 + x / 9) - c;
}

const char* CheckpointRuleName(CheckpointRule rule) {
  switch (rule) {
    case CheckpointRule::kFixed:
      return "fixed";
    case CheckpointRule::kYoung:
      return "young";
    case CheckpointRule::kDaly:
      return "daly";
  }
  return "?";
}

bool ParseCheckpointRule(const std::string& text, CheckpointRule* rule) {
  for (CheckpointRule r : {CheckpointRule::kFixed, CheckpointRule::kYoung, CheckpointRule::kDaly}) {
    if (text == CheckpointRuleName(r)) {
      *rule = r;
      return true;
    }
  }
  return false;
}

CheckpointPlan PlanCheckpoints(const CheckpointSettings& settings, double fixed_interval_seconds,
                               double save_seconds, double mtbf_seconds) {
  CheckpointPlan plan;
  plan.pause_seconds = save_seconds;
  if (settings.async) {
    plan.pause_seconds =
        settings.async_blocking * save_seconds + settings.async_slowdown * save_seconds;
    plan.lag_seconds = save_seconds;
  }
  plan.interval_seconds = fixed_interval_seconds;
  if (settings.rule != CheckpointRule::kFixed && std::isfinite(mtbf_seconds)) {
    plan.interval_seconds = settings.rule == CheckpointRule::kYoung
                                ? YoungIntervalSeconds(plan.pause_seconds, mtbf_seconds)
                                : DalyIntervalSeconds(plan.pause_seconds, mtbf_seconds);
    if (settings.async) plan.interval_seconds = std::max(plan.interval_seconds, save_seconds);
    // A save of no time: nothing is gained by checkpointing rarely, and an interval of 0 would
    // never compute; Young gives 0 then, Daly M.
    if (!(plan.interval_seconds > 0)) plan.interval_seconds = mtbf_seconds;
  }
  return plan;
}

double ExpectedEttr(double failures_per_second, double hold_seconds, double wait_seconds,
                    const CheckpointPlan& plan) {
  const double tau = plan.interval_seconds;
  if (!std::isfinite(tau)) return std::numeric_limits<double>::quiet_NaN();
  const double lost =
      failures_per_second * (hold_seconds + (tau + plan.pause_seconds) / 2 + plan.lag_seconds);
  const double ettr =
      (1 - lost) / ((1 + plan.pause_seconds / tau) * (1 + failures_per_second * wait_seconds));
  return std::clamp(ettr, 0.0, 1.0);
}

namespace {

// P(N = k), P(N >= k) and P(N > k) for N ~ Poisson(a). Below the mean (k <= a) the tail is
// 1 - the terms below k; beyond it the tail is summed term by term (the terms then fall at least
// geometrically), since 1 - (a sum within 1e-16 of 1) would leave rounding noise for a tail of,
// say, 1e-36 (32 spares with one node under repair on average).
void PoissonAt(int k, double a, double* at, double* at_least, double* above) {
  double term = std::exp(-a);  // P(N = 0)
  double below = 0;
  for (int j = 0; j < k; ++j) {
    below += term;
    term *= a / (j + 1);
  }
  *at = term;
  if (k <= a) {
    *at_least = std::max(0.0, 1 - below);
    *above = std::max(0.0, *at_least - term);
    return;
  }
  double tail = 0;
  double t = term * a / (k + 1);  // P(N = k + 1)
  for (int j = k + 1; t > 0 && t > tail * 1e-17; ++j) {
    tail += t;
    t *= a / (j + 1);
  }
  *above = tail;
  *at_least = term + tail;
}

}  // namespace

double SpareShortageProbability(int spares, double failures_per_second, double repair_seconds) {
  double at = 0, at_least = 0, above = 0;
  PoissonAt(std::max(0, spares), failures_per_second * repair_seconds, &at, &at_least, &above);
  return at_least;
}

double ExpectedCapacityWaitSeconds(int spares, double failures_per_second, double repair_seconds) {
  const int k = std::max(0, spares);
  const double a = failures_per_second * repair_seconds;
  if (!(a > 0)) return k == 0 ? repair_seconds : 0.0;
  if (k == 0) return std::expm1(a) / failures_per_second;  // the busy period
  double at = 0, at_least = 0, above = 0;
  PoissonAt(k, a, &at, &at_least, &above);
  return at > 0 ? at_least * above / (failures_per_second * at) : repair_seconds;
}

}  // namespace clustersim
