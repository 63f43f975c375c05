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

#include <cstddef>
#include <cstdint>
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

// Percentiles(values, qs) and the values' sum without keeping the values, for a sequence that can
// be produced twice (a run's ten million JCTs are 80 MB). Count every value (the sum is added in
// that order), then, if NeedsCollect(), Collect the same values again in any order; Get gives
// exactly what Percentiles would (the interpolation between the same two order statistics).
//
// The first `direct_limit` values are kept as they come; past that they are counted in 65,536
// buckets by the top 16 bits of an order-preserving key (sign, exponent and 4 bits of mantissa:
// a sixteenth of a power of two each), and the second pass keeps only the values of the buckets
// that hold an asked rank, unless a bucket holds one value throughout (a run's zero waits). At
// most what the values took in memory, usually a few MB.
class TwoPassPercentiles {
 public:
  // REQUIRES: qs ascending in [0, 1].
  explicit TwoPassPercentiles(std::vector<double> qs, size_t direct_limit = size_t{1} << 18);

  void Count(double x);
  // After the last Count: true if Get needs the values again (Collect each, then Get).
  bool NeedsCollect();
  void Collect(double x);
  // REQUIRES: size() > 0; after NeedsCollect (and the second pass, if it said so).
  std::vector<double> Get();

  int64_t size() const { return size_; }
  double sum() const { return sum_; }

 private:
  static constexpr int kBucketBits = 16;
  static uint32_t BucketOf(double x);
  // The lower of the two ranks q's value lies between (Percentiles' rank q (size - 1)).
  int64_t LowRank(double q) const;
  void StartCounting();  // moves the kept values into the buckets
  void AddToBucket(double x);

  std::vector<double> qs_;
  size_t direct_limit_;
  int64_t size_ = 0;
  double sum_ = 0;
  std::vector<double> direct_;  // the values while size_ <= direct_limit_
  bool bucketed_ = false;
  std::vector<int64_t> counts_;  // per bucket
  std::vector<double> first_;    // per bucket: its first value
  std::vector<uint8_t> mixed_;   // per bucket: holds two different values
  // The order statistics Get needs (ranks lo and lo + 1 of each q): where each is found.
  struct Needed {
    int64_t rank = 0;
    uint32_t bucket = 0;
    int64_t offset = 0;  // rank among the bucket's values
    double value = 0;    // when known without collecting
    bool known = false;
  };
  std::vector<Needed> needed_;
  std::vector<int16_t> slot_;  // per bucket: index in collected_, or -1
  std::vector<std::vector<double>> collected_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_STATISTICS_H_
