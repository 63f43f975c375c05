// Distances between samples and between series, for comparing a simulated schedule with a
// recorded one (sim/engine/validation.h). Pure functions of their arguments.
//
// Definitions (docs/validation.md works them through on small samples):
// - KolmogorovSmirnov(a, b) = sup_x |F_a(x) - F_b(x)| over the two empirical CDFs
// (right-continuous:
//   F(x) = fraction of values <= x), in [0, 1].
// - Wasserstein1(a, b) = integral over x of |F_a(x) - F_b(x)|, in the values' unit; for two
//   samples of equal size n it equals the mean of |a_(i) - b_(i)| over the sorted values.
// - PearsonCorrelation(x, y): the sample correlation coefficient; NaN when fewer than 2 points
//   or either series is constant (the coefficient is undefined).
// - MeanAbsoluteError(x, y) = mean of |x_i - y_i|.
#ifndef CLUSTERSIM_SIM_UTIL_STATISTICS_H_
#define CLUSTERSIM_SIM_UTIL_STATISTICS_H_

#include <vector>

namespace clustersim {

// REQUIRES: both non-empty (else NaN). The arguments are copied and sorted.
double KolmogorovSmirnov(std::vector<double> a, std::vector<double> b);
double Wasserstein1(std::vector<double> a, std::vector<double> b);

// REQUIRES: x.size() == y.size(); NaN when empty.
double PearsonCorrelation(const std::vector<double>& x, const std::vector<double>& y);
double MeanAbsoluteError(const std::vector<double>& x, const std::vector<double>& y);

// Mean of the values, NaN when empty.
double Mean(const std::vector<double>& values);

// Percentile by linear interpolation between closest ranks (q in [0, 1]), found by selection
// (no full sort); reorders `values`. REQUIRES non-empty values.
double Percentile(std::vector<double>& values, double q);
// Percentile(values, q) for each q of `qs` (ascending), the same values, with each selection made
// among the values above the previous one's rank only (for the median, p95 and p99 about half the
// work of three selections); reorders `values`. REQUIRES non-empty values, qs ascending in [0, 1].
std::vector<double> Percentiles(std::vector<double>& values, const std::vector<double>& qs);
// Percentile(values, 0.5): the middle value, or the mean of the two middle values.
double Median(std::vector<double> values);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_STATISTICS_H_
