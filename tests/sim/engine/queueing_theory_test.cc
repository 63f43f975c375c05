// Validation against queueing theory (docs/metrics.md#erlang-c): an M/M/c queue is fcfs
// with Poisson arrivals, exponential durations and one-GPU jobs on c GPUs. Its mean wait is given
// by Erlang C; Little's law ties the time-averaged queue length to the mean wait.
//
// Erlang C comes from sim/models/queueing.h (its own unit tests are in queueing_test.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "sim/engine/summary.h"
#include "sim/models/queueing.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

// Exponential variates by inversion, so the test does not depend on the standard library's
// distribution algorithms.
double Exponential(std::mt19937_64& rng, double mean) {
  const double u = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;  // (0, 1)
  return -mean * std::log(u);
}

struct QueueRun {
  double mean_wait = 0;
  double queue_length_seconds = 0;
  double sum_wait = 0;
  double mean_queue_length = 0;
  double arrival_rate = 0;
};

QueueRun SimulateMmc(int c, double rho, int jobs, uint64_t seed, int warmup) {
  const double mean_service = 1000;
  const double lambda = rho * c / mean_service;
  std::mt19937_64 rng(seed);
  std::vector<Job> trace;
  trace.reserve(jobs);
  double t = 0;
  for (int i = 0; i < jobs; ++i) {
    t += Exponential(rng, 1 / lambda);
    trace.push_back(testing::MakeJob(std::to_string(i), t, 1, Exponential(rng, mean_service)));
  }
  EngineOptions options;
  options.timeseries_interval_seconds = 1e9;
  const auto& catalog = HardwareCatalog::Default();
  const Cluster cluster(ClusterSpec::FromJsonText(testing::Nodes(1, c), "mmc", catalog), catalog);
  const Topology topology(cluster);
  const auto runtime = MakeRuntimeModel("trace", cluster, topology);
  const auto placement = FindPlacement("pool").make({&cluster, &topology, runtime.get()}, {});
  const auto policy = FindPolicy("fcfs").make({});
  Trace tr;
  tr.jobs = std::move(trace);
  Engine engine(tr, cluster, *placement, *runtime, *policy, "fcfs", options);
  engine.Run();
  QueueRun out;
  double sum_after_warmup = 0;
  for (int i = 0; i < jobs; ++i) {
    const JobRun& run = engine.runs()[i];
    EXPECT_EQ(run.state, JobState::kCompleted);
    const double wait = run.first_start - tr.jobs[i].submit_time;
    out.sum_wait += wait;
    if (i >= warmup) sum_after_warmup += wait;
  }
  out.mean_wait = sum_after_warmup / (jobs - warmup);
  out.queue_length_seconds = engine.metrics().queue_length_seconds();
  const double span = engine.metrics().last_time() - engine.metrics().start_time();
  out.mean_queue_length = out.queue_length_seconds / span;
  out.arrival_rate = jobs / span;
  return out;
}

class MmcQueue : public ::testing::TestWithParam<double> {};

TEST_P(MmcQueue, MeanWaitIsWithinFivePercentOfErlangC) {
  const double rho = GetParam();
  // c = 4 GPUs and 1,000,000 jobs (the first 20,000 discarded as warm-up): over six seeds the
  // simulated/Erlang-C ratio had a spread of about 1.2% (largest deviation 3.1%), so a 5%
  // tolerance tests the engine, not the luck of the seed.
  const int c = 4;
  const double mu = 1 / 1000.0;
  const double lambda = rho * c * mu;
  const double expected = SolveMmc(lambda, mu, c).mean_wait;
  const QueueRun run = SimulateMmc(c, rho, 1'000'000, 20261122, 20'000);
  std::printf("M/M/%d rho %.1f: mean wait %.2f s simulated, %.2f s Erlang C (ratio %.4f)\n", c, rho,
              run.mean_wait, expected, run.mean_wait / expected);
  EXPECT_NEAR(run.mean_wait / expected, 1.0, 0.05)
      << "rho " << rho << ": simulated " << run.mean_wait << " s, Erlang C " << expected << " s";
}

INSTANTIATE_TEST_SUITE_P(Loads, MmcQueue, ::testing::Values(0.5, 0.8, 0.9));

TEST(LittlesLaw, TimeAveragedQueueLengthEqualsArrivalRateTimesMeanWait) {
  // Over a run that starts and ends empty, the integral of the queue length over time equals the
  // sum of the waits exactly, so L = lambda W with lambda = N / T and W = sum / N.
  const int jobs = 50'000;
  const QueueRun run = SimulateMmc(8, 0.85, jobs, 42, 0);
  EXPECT_NEAR(run.queue_length_seconds / run.sum_wait, 1.0, 1e-9);
  EXPECT_NEAR(run.mean_queue_length / (run.arrival_rate * run.sum_wait / jobs), 1.0, 1e-9);
}

}  // namespace
}  // namespace clustersim
