#include "sim/util/statistics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace clustersim {
namespace {

// The definition, by a full sort: the value at rank q (n - 1), interpolated between the two
// closest ranks.
std::vector<double> SortedPercentiles(std::vector<double> values, const std::vector<double>& qs) {
  std::sort(values.begin(), values.end());
  std::vector<double> out;
  for (double q : qs) {
    const double rank = q * static_cast<double>(values.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(rank));
    out.push_back(lo + 1 >= values.size()
                      ? values[lo]
                      : values[lo] + (rank - std::floor(rank)) * (values[lo + 1] - values[lo]));
  }
  return out;
}

// Both passes over `values`, the second in another order (any order will do).
std::vector<double> TwoPasses(TwoPassPercentiles& p, const std::vector<double>& values) {
  for (double x : values) p.Count(x);
  if (p.NeedsCollect()) {
    for (size_t i = values.size(); i-- > 0;) p.Collect(values[i]);
  }
  return p.Get();
}

TEST(TwoPassPercentiles, HandWorkedInBuckets) {
  // direct_limit 0: counted in buckets from the first value. 1000, 1000.5 and 1001 share a
  // bucket (a sixteenth of [512, 1024) is 32 wide), so its values are collected again.
  // Sorted: 1, 2, 1000, 1000.5, 1001 (n = 5). q 0.5: rank 2 = 1000. q 0.95: rank 3.8 =
  // 1000.5 + 0.8 x 0.5 = 1000.9. q 0.99: rank 3.96 = 1000.98. q 1: 1001.
  TwoPassPercentiles p({0.5, 0.95, 0.99, 1.0}, 0);
  const std::vector<double> got = TwoPasses(p, {1001, 2, 1000.5, 1, 1000});
  ASSERT_EQ(got.size(), 4u);
  EXPECT_DOUBLE_EQ(got[0], 1000);
  EXPECT_DOUBLE_EQ(got[1], 1000.9);
  EXPECT_DOUBLE_EQ(got[2], 1000.98);
  EXPECT_DOUBLE_EQ(got[3], 1001);
  EXPECT_EQ(p.size(), 5);
  EXPECT_DOUBLE_EQ(p.sum(), 1001 + 2 + 1000.5 + 1 + 1000);
}

TEST(TwoPassPercentiles, OneValueBucketsNeedNoSecondPass) {
  // 10,000 zero waits and ten of one hour: every asked rank is in a bucket of one value.
  TwoPassPercentiles p({0.5, 0.95, 0.99, 1.0}, 100);
  for (int i = 0; i < 10000; ++i) p.Count(0.0);
  for (int i = 0; i < 10; ++i) p.Count(3600.0);
  EXPECT_FALSE(p.NeedsCollect());
  const std::vector<double> got = p.Get();
  // Ranks 5004.5, 9500.55 and 9899.91 of 0..10009 are zeros; the largest is 3600.
  EXPECT_EQ(got, (std::vector<double>{0, 0, 0, 3600}));
}

TEST(TwoPassPercentiles, MatchesTheSortedDefinitionExactly) {
  // Values as a run's distributions hold them, and worse: many equal ones, zeros of both signs,
  // negatives, a span of 30 powers of ten; below and above the direct limit.
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> jct(8, 2);
  std::uniform_int_distribution<int> kind(0, 9);
  for (size_t n : {1, 2, 3, 17, 1000, 60000}) {
    std::vector<double> values;
    for (size_t i = 0; i < n; ++i) {
      const int k = kind(rng);
      values.push_back(k < 3    ? 0.0
                       : k == 3 ? -0.0
                       : k == 4 ? -jct(rng)
                       : k == 5 ? std::round(jct(rng))
                       : k == 6 ? jct(rng) * 1e-15
                                : jct(rng));
    }
    const std::vector<double> qs = {0.0, 0.25, 0.5, 0.95, 0.99, 0.999, 1.0};
    const std::vector<double> want = SortedPercentiles(values, qs);
    for (size_t limit : {size_t{0}, size_t{500}, size_t{1} << 18}) {
      TwoPassPercentiles p(qs, limit);
      const std::vector<double> got = TwoPasses(p, values);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < qs.size(); ++i) {
        EXPECT_EQ(got[i], want[i]) << "n " << n << " limit " << limit << " q " << qs[i];
      }
      double sum = 0;
      for (double x : values) sum += x;
      EXPECT_EQ(p.sum(), sum);  // added in the order counted
      EXPECT_EQ(p.size(), static_cast<int64_t>(n));
    }
  }
}

}  // namespace
}  // namespace clustersim
