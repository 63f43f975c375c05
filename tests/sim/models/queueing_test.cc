// Erlang B / Erlang C and the M/M/c figures of sim/models/queueing.h against values computed by
// hand (the M/M/1 and M/M/2 closed forms), published tables, and an independent log-space
// evaluation of the textbook formula for a large c where the naive form overflows.
#include "sim/models/queueing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace clustersim {
namespace {

// M/M/1, lambda = 0.3, mu = 0.5: rho = 0.6, P(wait) = rho, W_q = rho / (mu - lambda) = 3,
// W = 1 / (mu - lambda) = 5, L_q = rho^2 / (1 - rho) = 0.9, L = rho / (1 - rho) = 1.5,
// P(W_q > t) = rho exp(-(mu - lambda) t), so the 95th percentile is ln(0.6 / 0.05) / 0.2.
TEST(Mmc, OneServerReducesToMm1) {
  const MmcFigures f = SolveMmc(0.3, 0.5, 1);
  EXPECT_TRUE(f.stable);
  EXPECT_NEAR(f.offered_load, 0.6, 1e-15);
  EXPECT_NEAR(f.utilization, 0.6, 1e-15);
  EXPECT_NEAR(f.wait_probability, 0.6, 1e-15);
  EXPECT_NEAR(f.mean_wait, 3.0, 1e-12);
  EXPECT_NEAR(f.mean_response, 5.0, 1e-12);
  EXPECT_NEAR(f.mean_queue_length, 0.9, 1e-12);
  EXPECT_NEAR(f.mean_in_system, 1.5, 1e-12);
  EXPECT_NEAR(f.WaitQuantile(0.95), std::log(12.0) / 0.2, 1e-12);
  // P(wait > 0) = 0.6 <= 1 - 0.3: the 30th percentile wait is 0.
  EXPECT_EQ(f.WaitQuantile(0.3), 0.0);
}

// M/M/2 closed form: P0 = (1 - rho) / (1 + rho), C = 2 rho^2 / (1 + rho),
// W_q = rho^2 / (mu (1 - rho^2)), L_q = 2 rho^3 / (1 - rho^2).
// lambda = 1.5, mu = 1: rho = 0.75, C = 9/14, W_q = 9/7, L_q = 27/14.
TEST(Mmc, TwoServersMatchTheClosedForm) {
  const MmcFigures f = SolveMmc(1.5, 1.0, 2);
  EXPECT_NEAR(f.wait_probability, 9.0 / 14, 1e-14);
  EXPECT_NEAR(f.mean_wait, 9.0 / 7, 1e-13);
  EXPECT_NEAR(f.mean_queue_length, 27.0 / 14, 1e-13);
  EXPECT_NEAR(f.mean_response, 9.0 / 7 + 1, 1e-13);
  // c = 2, a = 1 (rho = 0.5): C = (1/2 * 2) / (1 + 1 + 1) = 1/3.
  EXPECT_NEAR(ErlangC(2, 1.0), 1.0 / 3, 1e-14);
}

TEST(ErlangB, MatchesThePublishedTable) {
  // Erlang B tables: 10 Erlangs offered to 10 trunks block 21.46% of calls.
  EXPECT_NEAR(ErlangB(10, 10.0), 0.2146, 5e-5);
  // By hand: B(1, a) = a / (1 + a); B(2, a) = (a^2 / 2) / (1 + a + a^2 / 2).
  EXPECT_NEAR(ErlangB(1, 3.0), 0.75, 1e-15);
  EXPECT_NEAR(ErlangB(2, 2.0), 2.0 / 5, 1e-15);
  EXPECT_EQ(ErlangB(0, 5.0), 1.0);
}

TEST(ErlangC, MatchesThePublishedCallCentreExample) {
  // The classic Erlang-C worked example (erlang.com, "The Erlang-C formula"): 360 calls per half
  // hour, 4-minute calls, 55 agents. Traffic 48 Erlangs, occupancy 87.3%, probability of waiting
  // 23.87%, average speed of answer 8.2 s, 84.6% of calls answered within 15 s.
  const double lambda = 360.0 / 1800;  // calls per second
  const double mu = 1.0 / 240;         // per agent per second
  const MmcFigures f = SolveMmc(lambda, mu, 55);
  EXPECT_NEAR(f.offered_load, 48.0, 1e-9);
  EXPECT_NEAR(f.utilization, 0.873, 5e-4);
  EXPECT_NEAR(f.wait_probability, 0.2387, 5e-5);
  EXPECT_NEAR(f.mean_wait, 8.2, 0.05);
  const double answered_within_15s = 1 - f.wait_probability * std::exp(-(55 * mu - lambda) * 15);
  EXPECT_NEAR(answered_within_15s, 0.846, 5e-4);
}

// The textbook form evaluated in log space with long double: a^k / k! = exp(k ln a - lgamma(k+1)),
// so nothing overflows. Independent of the library's Erlang B recursion.
double ErlangCLogSpace(int c, double a) {
  long double max_log = -std::numeric_limits<long double>::infinity();
  for (int k = 0; k <= c; ++k) {
    max_log = std::max(max_log, k * std::log((long double)a) - std::lgamma((long double)k + 1));
  }
  long double head = 0;  // sum_{k<c} a^k / k!, scaled by exp(-max_log)
  for (int k = 0; k < c; ++k) {
    head += std::exp(k * std::log((long double)a) - std::lgamma((long double)k + 1) - max_log);
  }
  const long double tail =
      std::exp(c * std::log((long double)a) - std::lgamma((long double)c + 1) - max_log) * c /
      (c - a);
  return static_cast<double>(tail / (head + tail));
}

TEST(ErlangC, StaysAccurateForThousandsOfServers) {
  // a^c / c! overflows a double for c > 170; the recursion must not.
  for (const auto& [c, a] : {std::pair{200, 180.0}, {2000, 1950.0}, {10000, 9900.0}}) {
    const double value = ErlangC(c, a);
    ASSERT_TRUE(std::isfinite(value)) << c;
    EXPECT_GT(value, 0.0);
    EXPECT_LT(value, 1.0);
    EXPECT_NEAR(value / ErlangCLogSpace(c, a), 1.0, 1e-9) << "c " << c << " a " << a;
  }
  // Small cases agree with the textbook form too.
  EXPECT_NEAR(ErlangC(11, 10.0) / ErlangCLogSpace(11, 10.0), 1.0, 1e-12);
}

TEST(Mmc, UnstableQueueHasInfiniteWaits) {
  const MmcFigures f = SolveMmc(2.0, 1.0, 2);  // rho = 1
  EXPECT_FALSE(f.stable);
  EXPECT_EQ(f.wait_probability, 1.0);
  EXPECT_TRUE(std::isinf(f.mean_wait));
  EXPECT_TRUE(std::isinf(f.WaitQuantile(0.95)));
}

TEST(ServersFor, MeanWaitTargetPicksTheSmallestCount) {
  // M/M/1 above has W_q = 3; with two servers rho = 0.3 and W_q = 0.09 / (0.5 x 0.91) = 0.198.
  EXPECT_EQ(ServersForMeanWait(0.3, 0.5, 3.0), 1);
  EXPECT_EQ(ServersForMeanWait(0.3, 0.5, 2.9), 2);
  EXPECT_EQ(ServersForMeanWait(0.3, 0.5, 0.19), 3);
  // No wait target: the smallest stable count, floor(a) + 1.
  EXPECT_EQ(ServersForMeanWait(4.0, 1.0, std::numeric_limits<double>::infinity()), 5);
  // Consistent with SolveMmc at the boundary, for a large offered load.
  const double lambda = 0.2, mu = 1.0 / 240, target = 15;
  const int c = ServersForMeanWait(lambda, mu, target);
  EXPECT_LE(SolveMmc(lambda, mu, c).mean_wait, target);
  EXPECT_GT(SolveMmc(lambda, mu, c - 1).mean_wait, target);
}

TEST(ServersFor, WaitQuantileTargetPicksTheSmallestCount) {
  // M/M/1: p95 wait = ln(12) / 0.2 = 12.42.
  EXPECT_EQ(ServersForWaitQuantile(0.3, 0.5, 0.95, 12.5), 1);
  EXPECT_EQ(ServersForWaitQuantile(0.3, 0.5, 0.95, 12.0), 2);
  // A zero target asks for P(wait > 0) <= 5%.
  const int c = ServersForWaitQuantile(0.2, 1.0 / 240, 0.95, 0.0);
  EXPECT_LE(ErlangC(c, 48.0), 0.05);
  EXPECT_GT(ErlangC(c - 1, 48.0), 0.05);
}

}  // namespace
}  // namespace clustersim
