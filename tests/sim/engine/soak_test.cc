// Soak: every registered policy replays a synthetic trace on a cluster whose nodes and GPUs fail
// and get repaired, with checkpoints, restore and preemption costs, under the invariant checker
// (TestSim turns --check on: no GPU held twice or while failed, busy + free + failed = total,
// every job in exactly one state, busy GPU-seconds integrated = jobs' GPU-seconds, after every
// pass). Kept small for CI; scripts/soak.sh runs the 200,000-job version.
#include <gtest/gtest.h>

#include "sim/engine/summary.h"
#include "tests/test_util.h"
#include "workloads/generator.h"
#include "workloads/model_assignment.h"
#include "workloads/reader.h"

namespace clustersim {
namespace {

using testing::Nodes;
using testing::TestSim;

class Soak : public ::testing::TestWithParam<std::string> {};

TEST_P(Soak, FailuresAndPreemptionsKeepEveryInvariantAndEveryJobFinishes) {
  GeneratorOptions generator;
  generator.jobs = 10000;
  generator.cluster_gpus = 128;
  generator.load = 0.9;
  generator.durations = "philly";
  generator.seed = 7;
  const std::string path = ::testing::TempDir() + "/soak_" + GetParam() + ".csv";
  WriteSyntheticTrace(generator, path);
  const Trace trace = LoadTrace(path);

  EngineOptions options;
  options.preemption_cost_seconds = 30;
  // Per node about one failure a week, per GPU one a month, repaired in 2 h: over the trace's
  // span (weeks) every node fails several times.
  options.faults.node_mtbf_seconds.assign(HardwareCatalog::Default().gpus().size(), 7 * 86400.0);
  options.faults.gpu_mtbf_seconds.assign(HardwareCatalog::Default().gpus().size(), 30 * 86400.0);
  options.faults.mttr_seconds = 7200;
  options.faults.checkpoint_interval_seconds = 1800;
  options.faults.checkpoint_cost_seconds = 20;
  options.faults.restore_cost_seconds = 60;
  options.faults.seed = 11;
  auto run = [&] {
    auto sim =
        std::make_unique<TestSim>(Nodes(16, 8), trace.jobs, GetParam(), "first-fit", options);
    sim->Run();
    return sim;
  };
  const auto sim = run();
  const Engine& engine = sim->engine();
  int64_t finished = 0, restarts = 0;
  for (const JobRun& r : engine.runs()) {
    finished += r.state == JobState::kCompleted || r.state == JobState::kRejected;
    restarts += r.restarts;
  }
  EXPECT_EQ(finished, static_cast<int64_t>(trace.jobs.size()));
  EXPECT_GT(engine.failures(), 50);
  EXPECT_GT(restarts, 0);
  EXPECT_GT(engine.lost_gpu_seconds(), 0);
  EXPECT_GT(engine.checkpoint_gpu_seconds(), 0);
  EXPECT_EQ(run()->engine().fingerprint(), engine.fingerprint());
}

class ModelSoak : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelSoak, ModelAwareRunsKeepEveryInvariantWithOomFailuresAndFailures) {
  // The same with models and batches assigned (the documented rule, seed 3): memory per GPU,
  // OOM failures with half-batch retries, batch-aware rates and model-sized checkpoints, on a
  // mixed cluster (V100-16GB, A100-40GB, H100-80GB) so that a batch that fits one type fails on
  // another. Every job either finishes, is rejected (a model too large for its GPUs) or ends
  // oom-failed; some OOM failures happen.
  GeneratorOptions generator;
  generator.jobs = 3000;
  generator.cluster_gpus = 96;
  generator.load = 0.9;
  generator.durations = "philly";
  generator.seed = 5;
  const std::string path = ::testing::TempDir() + "/model_soak_" + GetParam() + ".csv";
  WriteSyntheticTrace(generator, path);
  Trace trace = LoadTrace(path);
  AssignModels(trace.jobs, 3);

  EngineOptions options;
  options.preemption_cost_seconds = 30;
  options.faults.node_mtbf_seconds.assign(HardwareCatalog::Default().gpus().size(), 7 * 86400.0);
  options.faults.mttr_seconds = 7200;
  options.faults.checkpoint_interval_seconds = 1800;
  options.faults.seed = 11;
  ModelRuntimeOptions model_options;
  model_options.storage_gbps = 2;
  const std::string cluster = R"({"nodes":[{"count":4,"gpu_type":"V100-16GB","gpus_per_node":8},)"
                              R"({"count":4,"gpu_type":"A100-40GB","gpus_per_node":8},)"
                              R"({"count":4,"gpu_type":"H100-80GB","gpus_per_node":8}]})";
  auto run = [&] {
    auto sim =
        std::make_unique<TestSim>(cluster, trace.jobs, GetParam(), "first-fit", options, "hardware",
                                  Params(), &ModelCatalog::Default(), model_options);
    sim->Run();
    return sim;
  };
  const auto sim = run();
  int64_t ended = 0, oom_failures = 0;
  const Engine& engine = sim->engine();
  for (JobId id = 0; id < static_cast<JobId>(engine.runs().size()); ++id) {
    const JobState state = engine.run(id).state;
    ended += state == JobState::kCompleted || state == JobState::kRejected ||
             state == JobState::kOomFailed;
    oom_failures += engine.model_run(id).oom_failures;
  }
  EXPECT_EQ(ended, static_cast<int64_t>(trace.jobs.size()));
  if (sim->engine().policy_is_elastic()) {
    EXPECT_EQ(oom_failures, 0);  // an elastic policy picks batches that fit
  } else {
    EXPECT_GT(oom_failures, 0);
  }
  EXPECT_EQ(run()->engine().fingerprint(), sim->engine().fingerprint());
}

std::vector<std::string> PolicyNames() {
  std::vector<std::string> names;
  for (const PolicyEntry* entry : Policies()) names.push_back(entry->name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(EveryPolicy, ModelSoak, ::testing::ValuesIn(PolicyNames()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

INSTANTIATE_TEST_SUITE_P(EveryPolicy, Soak, ::testing::ValuesIn(PolicyNames()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace clustersim
