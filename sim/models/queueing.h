// The M/M/c queue (docs/metrics.md#erlang-c): Poisson arrivals at rate lambda, c
// identical servers, exponential service times of rate mu per server, first come first served,
// unlimited waiting room. `clustersim queueing` prints these figures, `clustersim plan` uses them
// for its starting bracket, and the queueing-theory test compares the engine with them.
//
// With a = lambda / mu (offered load, Erlangs) and rho = a / c (utilization), stable iff rho < 1:
//   Erlang B  B(c, a) = (a^c / c!) / sum_{k=0..c} a^k / k!,
//   Erlang C  C(c, a) = P(wait > 0) = c B / (c - a (1 - B))
//                     = (a^c / c! * c / (c - a)) / (sum_{k<c} a^k / k! + a^c / c! * c / (c - a)),
//   W_q = C / (c mu - lambda),  W = W_q + 1 / mu,  L_q = lambda W_q,  L = lambda W (Little),
//   P(W_q > t) = C exp(-(c mu - lambda) t)  (the wait of a delayed customer is exponential).
// Some write W_q with an extra factor 1/mu; that is dimensionally a typo: with mu in jobs
// per hour, C / (c mu - lambda) is already in hours.
//
// Numerics: B is computed by the recursion B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1)), which
// stays in (0, 1] for every k, so c in the tens of thousands is exact to rounding where the
// textbook form overflows a^c / c! (c > 170 in double). O(c) time.
//
// Units: any time unit, as long as lambda and mu use the same one; times come out in it.
#ifndef CLUSTERSIM_SIM_MODELS_QUEUEING_H_
#define CLUSTERSIM_SIM_MODELS_QUEUEING_H_

namespace clustersim {

// Returns Erlang B for `servers` >= 0 servers and offered load `erlangs` >= 0.
double ErlangB(int servers, double erlangs);

// Returns Erlang C, the probability that an arrival waits. REQUIRES servers >= 1 and
// 0 <= erlangs < servers (stable); returns 1 when erlangs >= servers.
double ErlangC(int servers, double erlangs);

struct MmcFigures {
  double lambda = 0;
  double mu = 0;
  int servers = 0;
  double offered_load = 0;       // a = lambda / mu, Erlangs (busy servers on average)
  double utilization = 0;        // rho = a / c
  bool stable = false;           // rho < 1; every figure below is +inf when not stable
  double wait_probability = 0;   // Erlang C
  double mean_wait = 0;          // W_q
  double mean_response = 0;      // W = W_q + 1 / mu
  double mean_queue_length = 0;  // L_q = lambda W_q
  double mean_in_system = 0;     // L = lambda W

  // Returns the q-quantile of the wait, 0 < q < 1: 0 if P(wait > 0) <= 1 - q, else
  // ln(C / (1 - q)) / (c mu - lambda). +inf when not stable.
  double WaitQuantile(double q) const;
};

// REQUIRES lambda > 0, mu > 0, servers >= 1.
MmcFigures SolveMmc(double lambda, double mu, int servers);

// Returns the smallest number of servers whose mean wait W_q <= `max_mean_wait` (>= 0), or
// the smallest stable count if max_mean_wait is +inf. Linear in the answer. REQUIRES lambda,
// mu > 0.
int ServersForMeanWait(double lambda, double mu, double max_mean_wait);

// Returns the smallest number of servers whose q-quantile of the wait is <= `max_wait`.
int ServersForWaitQuantile(double lambda, double mu, double q, double max_wait);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_MODELS_QUEUEING_H_
