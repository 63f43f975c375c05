// The model of users' runtime estimates (policies/user_estimates.h) against the constants and
// rules of Tsafrir, Etsion and Feitelson, "Modeling User Runtime Estimates" (JSSPP 2005) as the
// authors' code states them, worked by hand below.
#include "policies/user_estimates.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr int64_t kMin = 60;
constexpr int64_t kHour = 3600;

TEST(UserEstimates, ValueCountFollowsThePiecewiseLinearModel) {
  // Through (0,0), (20,10), (200,20), (1000,35), (10000,90), (70000,340), (250000,565).
  EXPECT_EQ(EstimateValueCount(20), 10);
  EXPECT_EQ(EstimateValueCount(1000), 35);
  // 500 jobs: 20 + round(300 x 15 / 800) = 20 + round(5.625) = 26.
  EXPECT_EQ(EstimateValueCount(500), 26);
  // 11,160 jobs (the bundled Philly window): 90 + round(1160 x 250 / 60000) = 90 + 5 = 95.
  EXPECT_EQ(EstimateValueCount(11160), 95);
  EXPECT_EQ(EstimateValueCount(1000000), 565);
}

TEST(UserEstimates, HeadHoldsTheMaximumTheJointValuesAndRoundOnes) {
  // M = 24 h: the 15 joint values are all below it; then 20 h and 15 h (multiples of 10 h and
  // 5 h counting down from 20 h), 22 h and 16 h (multiples of 2 h from 24 h, 20 h and 18 h
  // already taken).
  const std::vector<int64_t> expected = {
      24 * kHour, 5 * kMin,   10 * kMin,  15 * kMin,  20 * kMin,  30 * kMin,  1 * kHour,
      2 * kHour,  3 * kHour,  4 * kHour,  5 * kHour,  6 * kHour,  8 * kHour,  10 * kHour,
      12 * kHour, 15 * kHour, 16 * kHour, 18 * kHour, 20 * kHour, 22 * kHour};
  EXPECT_EQ(HeadEstimates(24 * kHour), expected);
  // M = 1 h: 5, 10, 15, 20, 30 min, then 40 min (20-minute steps), 50 min (10), 25, 35, 45 and
  // 55 min (5): twelve values, fewer than 20.
  const std::vector<int64_t> hour = {kHour,    5 * kMin,  10 * kMin, 15 * kMin,
                                     20 * kMin, 25 * kMin, 30 * kMin, 35 * kMin,
                                     40 * kMin, 45 * kMin, 50 * kMin, 55 * kMin};
  EXPECT_EQ(HeadEstimates(kHour), hour);
}

TEST(UserEstimates, HistogramGivesTheMaximumItsShareAndTheHead89Percent) {
  // Ranks 2..20 take sum 14.0491 e^(-0.177531 x) + 0.462513 = 67.27 %; the maximum (rank 1) the
  // rest of 89 %: 21.73 %. The 20 head values together 89 %, the tail 11 %.
  double ranks = 0;
  for (int x = 2; x <= 20; ++x) ranks += 14.0491 * std::exp(-0.177531 * x) + 0.462513;
  const double max_share = (89 - ranks) / 100;
  EXPECT_NEAR(max_share, 0.2173, 0.0001);
  std::mt19937_64 rng(1);
  const int64_t jobs = 100000;
  const std::vector<EstimateBin> bins = EstimateHistogram(jobs, 48 * kHour, rng);
  int64_t total = 0, at_max = 0, head = 0;
  const std::vector<int64_t> head_values = HeadEstimates(48 * kHour);
  for (const EstimateBin& bin : bins) {
    total += bin.jobs;
    if (bin.seconds == 48 * kHour) at_max = bin.jobs;
    if (std::find(head_values.begin(), head_values.end(), bin.seconds) != head_values.end()) {
      head += bin.jobs;
    }
    EXPECT_GT(bin.seconds, 0);
    EXPECT_LE(bin.seconds, 48 * kHour);
  }
  EXPECT_EQ(total, jobs);
  // K = 340 + round(30000 x 225 / 180000) = 378 values.
  EXPECT_EQ(bins.size(), 378u);
  // Counts are rounded (at least one job per value) and then adjusted to sum to n: within 1 %.
  EXPECT_NEAR(static_cast<double>(at_max) / jobs, max_share, 0.01);
  EXPECT_NEAR(static_cast<double>(head) / jobs, 0.89, 0.01);
}

TEST(UserEstimates, NoEstimateIsBelowItsRunTimeAndTheHistogramIsKept) {
  std::mt19937_64 draws(7);
  std::vector<double> runs;
  for (int i = 0; i < 5000; ++i) {
    runs.push_back(std::floor(-1800 * std::log1p(-std::uniform_real_distribution<>(0, 1)(draws))));
  }
  runs[17] = 30 * kHour + 5;  // the longest: M = 31 h
  const UserEstimates model = ModelUserEstimates(runs, 3);
  EXPECT_EQ(model.max_seconds, 31 * kHour);
  EXPECT_EQ(model.moved_to_max, 0);
  ASSERT_EQ(model.seconds.size(), runs.size());
  std::map<int64_t, int64_t> dealt;
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_GE(model.seconds[i], runs[i]) << i;
    ++dealt[static_cast<int64_t>(model.seconds[i])];
  }
  // Every estimate of the histogram was dealt once: the same draws give the same histogram.
  std::mt19937_64 rng(3 ^ 0x7E57AF1E2005ull);
  std::map<int64_t, int64_t> histogram;
  for (const EstimateBin& bin : EstimateHistogram(5000, 31 * kHour, rng)) {
    if (bin.jobs > 0) histogram[bin.seconds] = bin.jobs;
  }
  EXPECT_EQ(dealt, histogram);
  // Deterministic for a seed, different for another.
  EXPECT_EQ(ModelUserEstimates(runs, 3).seconds, model.seconds);
  EXPECT_NE(ModelUserEstimates(runs, 4).seconds, model.seconds);
}

TEST(UserEstimates, TooManyLongJobsMoveTheFewestNeededToTheMaximum) {
  // 100 jobs all of 10 h: M = 10 h, and the histogram holds far fewer values >= 10 h than 100,
  // so every job ends up at the maximum (the authors' code would stop with an error).
  const std::vector<double> runs(100, 10.0 * kHour);
  const UserEstimates model = ModelUserEstimates(runs, 0);
  EXPECT_EQ(model.max_seconds, 10 * kHour);
  for (double e : model.seconds) EXPECT_EQ(e, 10.0 * kHour);
  EXPECT_GT(model.moved_to_max, 0);
  EXPECT_LT(model.moved_to_max, 100);  // some were at the maximum already
}

TEST(UserEstimates, ARunTimeBeyondAHundredYearsIsRefusedNotOverflowed) {
  // 100 years is 3.156e9 s; M in whole hours must stay a 64-bit integer, so a run time of 1e148 s
  // (a number a trace may hold) is an input error, never an undefined conversion.
  EXPECT_NO_THROW(ModelUserEstimates({100.0 * 365 * 86400}, 0));
  EXPECT_THROW(ModelUserEstimates({100.0, 2.8e148}, 0), InputError);
  EXPECT_THROW(ModelUserEstimates({std::numeric_limits<double>::infinity()}, 0), InputError);
}

}  // namespace
}  // namespace clustersim
