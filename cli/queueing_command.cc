#include "cli/queueing_command.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "app/options.h"
#include "sim/models/queueing.h"
#include "sim/util/error.h"

namespace po = boost::program_options;

namespace clustersim {

int CommandQueueing(int argc, char** argv) {
  double lambda = 0;
  double mu = 0;
  int servers = 0;
  double quantile = 0.95;
  po::options_description desc(
      "clustersim queueing: M/M/c figures from Erlang C (docs/metrics.md#erlang-c)\n\n"
      "Poisson arrivals at rate lambda, c servers each serving at rate mu (exponential service),\n"
      "first come first served. Rates in any one time unit; times are printed in that unit.\n"
      "For a GPU cluster: lambda = one-GPU jobs per hour, 1/mu = mean job hours, c = GPUs.\n\n"
      "options");
  desc.add_options()("help,h", "show this help")("lambda", po::value(&lambda)->required(),
                                                 "arrival rate (per time unit), > 0")(
      "mu", po::value(&mu)->required(), "service rate of one server (per time unit), > 0")(
      "c", po::value(&servers)->required(), "number of servers, >= 1")(
      "quantile", po::value(&quantile)->default_value(0.95, "0.95"),
      "which wait quantile to print, 0 < q < 1");
  po::variables_map vm;
  if (!ParseOptions(argc, argv, desc, &vm)) return 0;
  if (!(lambda > 0) || !std::isfinite(lambda)) throw InputError("--lambda: expected a rate > 0");
  if (!(mu > 0) || !std::isfinite(mu)) throw InputError("--mu: expected a rate > 0");
  if (servers < 1) throw InputError("--c: expected a number of servers >= 1");
  if (!(quantile > 0 && quantile < 1)) throw InputError("--quantile: expected 0 < q < 1");

  const MmcFigures f = SolveMmc(lambda, mu, servers);
  std::printf("M/M/%d queue: lambda %.6g, mu %.6g per server (times in the rates' unit)\n", servers,
              lambda, mu);
  std::printf("  %-32s %.6g Erlangs\n", "offered load a = lambda/mu", f.offered_load);
  std::printf("  %-32s %.6g\n", "utilization rho = a/c", f.utilization);
  if (!f.stable) {
    std::printf(
        "  unstable: rho >= 1, the queue and the waits grow without bound "
        "(at least %d servers are needed)\n",
        static_cast<int>(std::floor(f.offered_load)) + 1);
    return 0;
  }
  const int percent = static_cast<int>(std::lround(quantile * 100));
  char quantile_label[64];
  if (std::fabs(quantile * 100 - percent) < 1e-9) {
    std::snprintf(quantile_label, sizeof quantile_label, "p%d wait", percent);
  } else {
    std::snprintf(quantile_label, sizeof quantile_label, "wait quantile %.6g", quantile);
  }
  std::printf("  %-32s %.6g\n", "P(wait) (Erlang C)", f.wait_probability);
  std::printf("  %-32s %.6g\n", "mean wait Wq = C/(c mu - lambda)", f.mean_wait);
  std::printf("  %-32s %.6g\n", "mean response W = Wq + 1/mu", f.mean_response);
  std::printf("  %-32s %.6g\n", "mean queue length Lq = lambda Wq", f.mean_queue_length);
  std::printf("  %-32s %.6g\n", "mean in system L = lambda W", f.mean_in_system);
  std::printf("  %-32s %.6g   (P(Wq > t) = C exp(-(c mu - lambda) t))\n", quantile_label,
              f.WaitQuantile(quantile));
  return 0;
}

}  // namespace clustersim
