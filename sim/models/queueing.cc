#include "sim/models/queueing.h"

#include <climits>
#include <cmath>
#include <limits>

#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Erlang C from Erlang B on the same servers: C = c B / (c - a (1 - B)) (Cooper, Introduction to
// Queueing Theory, eq. 2.3 of ch. 3; follows from dividing the C formula's terms by sum_{k<=c}).
double CFromB(int servers, double erlangs, double b) {
  return servers * b / (servers - erlangs * (1 - b));
}

double MeanWait(int servers, double lambda, double mu, double c) {
  return c / (servers * mu - lambda);
}

}  // namespace

double ErlangB(int servers, double erlangs) {
  CHECK(servers >= 0 && erlangs >= 0, "ErlangB: servers and load must be >= 0");
  double b = 1;
  for (int k = 1; k <= servers; ++k) b = erlangs * b / (k + erlangs * b);
  return b;
}

double ErlangC(int servers, double erlangs) {
  CHECK(servers >= 1 && erlangs >= 0, "ErlangC: need servers >= 1 and load >= 0");
  if (erlangs >= servers) return 1;
  return CFromB(servers, erlangs, ErlangB(servers, erlangs));
}

double MmcFigures::WaitQuantile(double q) const {
  CHECK(q > 0 && q < 1, "WaitQuantile: q must be in (0, 1)");
  if (!stable) return kInf;
  if (wait_probability <= 1 - q) return 0;
  return std::log(wait_probability / (1 - q)) / (servers * mu - lambda);
}

MmcFigures SolveMmc(double lambda, double mu, int servers) {
  CHECK(lambda > 0 && mu > 0 && servers >= 1, "SolveMmc: need lambda, mu > 0 and servers >= 1");
  MmcFigures f;
  f.lambda = lambda;
  f.mu = mu;
  f.servers = servers;
  f.offered_load = lambda / mu;
  f.utilization = f.offered_load / servers;
  f.stable = f.utilization < 1;
  if (!f.stable) {
    f.wait_probability = 1;
    f.mean_wait = f.mean_response = f.mean_queue_length = f.mean_in_system = kInf;
    return f;
  }
  f.wait_probability = ErlangC(servers, f.offered_load);
  f.mean_wait = MeanWait(servers, lambda, mu, f.wait_probability);
  f.mean_response = f.mean_wait + 1 / mu;
  f.mean_queue_length = lambda * f.mean_wait;
  f.mean_in_system = lambda * f.mean_response;
  return f;
}

namespace {

// The smallest stable c for which `meets(c, C(c))` holds, walking c upwards with the Erlang B
// recursion so the whole search is linear in the answer.
template <typename Meets>
int SmallestServers(double lambda, double mu, Meets meets) {
  CHECK(lambda > 0 && mu > 0, "need lambda > 0 and mu > 0");
  const double a = lambda / mu;
  double b = 1;
  for (int c = 1; c < INT_MAX; ++c) {
    b = a * b / (c + a * b);
    if (a >= c) continue;
    if (meets(c, CFromB(c, a, b))) return c;
  }
  CHECK(false, "no server count up to INT_MAX meets the target");
  return -1;
}

}  // namespace

int ServersForMeanWait(double lambda, double mu, double max_mean_wait) {
  CHECK(max_mean_wait > 0, "ServersForMeanWait: the target must be > 0");
  return SmallestServers(lambda, mu, [&](int c, double erlang_c) {
    return MeanWait(c, lambda, mu, erlang_c) <= max_mean_wait;
  });
}

int ServersForWaitQuantile(double lambda, double mu, double q, double max_wait) {
  CHECK(q > 0 && q < 1 && max_wait >= 0, "ServersForWaitQuantile: need 0 < q < 1, max >= 0");
  return SmallestServers(lambda, mu, [&](int c, double erlang_c) {
    if (erlang_c <= 1 - q) return true;
    return std::log(erlang_c / (1 - q)) / (c * mu - lambda) <= max_wait;
  });
}

}  // namespace clustersim
