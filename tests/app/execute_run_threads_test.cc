// ExecuteRun without an output database is called from several threads at once by
// `clustersim plan`. Each call builds its own catalog view, cluster, topology, trace, policy and
// engine; the shared state is read-only after start-up (policy / placement / reader registries,
// the built-in catalog) or guarded (the Symbol pool, spdlog's _mt logger); Params, whose
// bookkeeping of read keys is mutable, is copied per run by the caller. This test runs different
// configurations concurrently and requires exactly the results of running them one by one
// (a ThreadSanitizer build of `clustersim plan` was also clean).
#include <gtest/gtest.h>

#include <thread>

#include "app/run.h"
#include "sim/engine/summary.h"

namespace clustersim {
namespace {

std::vector<RunConfig> Configs() {
  std::vector<RunConfig> configs;
  const char* policies[] = {"fcfs", "easy", "las", "sjf"};
  for (int i = 0; i < 8; ++i) {
    RunConfig c;
    c.policy = policies[i % 4];
    c.placement = i % 2 ? "best-fit" : "first-fit";
    c.filter.first_n = 600 + 50 * i;
    if (i % 2) {
      c.cluster = "in-memory";
      c.cluster_json =
          ClusterSpecJson({NodeGroupSpec{.name = "", .count = 3 + i, .gpu_type = "A100-80GB"}},
                          NetworkSpec{});
    } else {
      c.cluster = "default";  // heterogeneous: the hardware runtime model and the topology
    }
    c.engine.timeseries_interval_seconds = 3600;
    configs.push_back(c);
  }
  return configs;
}

TEST(ExecuteRun, ConcurrentCallsGiveTheSameResultsAsSequentialOnes) {
  const std::vector<RunConfig> configs = Configs();
  std::vector<RunOutcome> sequential;
  for (const RunConfig& c : configs) sequential.push_back(ExecuteRun(c));
  for (int repeat = 0; repeat < 2; ++repeat) {
    std::vector<RunOutcome> parallel(configs.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < configs.size(); ++i) {
      threads.emplace_back([&, i] {
        RunConfig copy = configs[i];
        parallel[i] = ExecuteRun(copy);
      });
    }
    for (std::thread& t : threads) t.join();
    for (size_t i = 0; i < configs.size(); ++i) {
      EXPECT_EQ(parallel[i].fingerprint, sequential[i].fingerprint) << "config " << i;
      ASSERT_EQ(parallel[i].summary.size(), sequential[i].summary.size());
      for (size_t r = 0; r < sequential[i].summary.size(); ++r) {
        const SummaryRow& a = parallel[i].summary[r];
        const SummaryRow& b = sequential[i].summary[r];
        EXPECT_EQ(a.metric, b.metric);
        if (!(std::isnan(a.value) && std::isnan(b.value))) {
          EXPECT_EQ(a.value, b.value) << "config " << i << " " << a.metric;
        }
      }
    }
  }
}

}  // namespace
}  // namespace clustersim
