// In-process simulation for tests: a cluster from JSON text, a trace from a list of jobs, a
// registered policy and placement, and the engine — the same objects ExecuteRun builds.
#ifndef CLUSTERSIM_TESTS_TEST_UTIL_H_
#define CLUSTERSIM_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "policies/registry.h"
#include "sim/engine/engine.h"
#include "sim/engine/model_runtime.h"
#include "sim/engine/wait_reasons.h"
#include "sim/hardware/topology.h"

namespace clustersim::testing {

// A file name in the test temporary folder that no other test process uses: ctest runs each test
// case as its own process, and parameterised cases of one test would otherwise write and read the
// same file at once.
inline std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(getpid()) + "." + name;
}

inline Job MakeJob(const std::string& id, double submit, int gpus, double duration) {
  Job job;
  job.id = id;
  job.submit_time = submit;
  job.gpus = gpus;
  job.duration = duration;
  return job;
}

inline std::string Nodes(int count, int gpus_per_node, const std::string& type = "A100-80GB") {
  return R"({"nodes":[{"count":)" + std::to_string(count) + R"(,"gpu_type":")" + type +
         R"(","gpus_per_node":)" + std::to_string(gpus_per_node) + "}]}";
}

// Two nodes of 8 A100s with 32 CPUs and 256 GiB of host memory each (host-resource tests).
inline constexpr const char* kTwoHostNodes =
    R"({"nodes":[{"count":2,"gpu_type":"A100-80GB","gpus_per_node":8,"cpus":32,)"
    R"("host_memory_gib":256}]})";

class TestSim {
 public:
  TestSim(const std::string& cluster_json, std::vector<Job> jobs,
          const std::string& policy = "fcfs", const std::string& placement = "first-fit",
          EngineOptions options = {}, const std::string& runtime = "trace",
          Params params = Params(), const ModelCatalog* models = nullptr,
          ModelRuntimeOptions model_options = {}, std::vector<JobConstraints> constraints = {})
      : cluster_(
            ClusterSpec::FromJsonText(cluster_json, "test-cluster", HardwareCatalog::Default()),
            HardwareCatalog::Default()),
        topology_(cluster_),
        runtime_(MakeRuntimeModel(runtime, cluster_, topology_)),
        placement_(FindPlacement(placement).make(
            PlacementEnv{&cluster_, &topology_, runtime_.get()}, params)),
        policy_(FindPolicy(policy).make(params)) {
    trace_.path = "test-trace";
    trace_.jobs = std::move(jobs);
    trace_.constraints = std::move(constraints);  // indexed by Job::constraints
    std::stable_sort(trace_.jobs.begin(), trace_.jobs.end(),
                     [](const Job& a, const Job& b) { return a.submit_time < b.submit_time; });
    options.check_invariants = true;
    KeepEnded(&options);
    if (models != nullptr) {
      models_ = std::make_unique<ModelRuntime>(trace_, cluster_.catalog(), *models, model_options);
      options.models = models_.get();
    }
    engine_ = std::make_unique<Engine>(trace_, cluster_, *placement_, *runtime_, *policy_, policy,
                                       options);
  }
  // Uses a policy object owned by the test instead of a registered one.
  TestSim(const std::string& cluster_json, std::vector<Job> jobs, std::unique_ptr<Policy> policy,
          EngineOptions options = {}, const ModelCatalog* models = nullptr,
          std::vector<JobConstraints> constraints = {})
      : cluster_(
            ClusterSpec::FromJsonText(cluster_json, "test-cluster", HardwareCatalog::Default()),
            HardwareCatalog::Default()),
        topology_(cluster_),
        runtime_(MakeRuntimeModel("trace", cluster_, topology_)),
        placement_(FindPlacement("first-fit")
                       .make(PlacementEnv{&cluster_, &topology_, runtime_.get()}, Params())),
        policy_(std::move(policy)) {
    trace_.path = "test-trace";
    trace_.jobs = std::move(jobs);
    trace_.constraints = std::move(constraints);
    options.check_invariants = true;
    KeepEnded(&options);
    if (models != nullptr) {
      models_ = std::make_unique<ModelRuntime>(trace_, cluster_.catalog(), *models,
                                               ModelRuntimeOptions{});
      options.models = models_.get();
    }
    engine_ = std::make_unique<Engine>(trace_, cluster_, *placement_, *runtime_, *policy_,
                                       "test-policy", options);
  }

  Engine& Run() {
    engine_->Run();
    return *engine_;
  }
  Engine& engine() { return *engine_; }
  const Cluster& cluster() const { return cluster_; }
  // The trace the engine runs (jobs sorted by submit time); e.g. to give it recorded attempts
  // before Run.
  Trace& trace() { return trace_; }
  // The run of the job whose trace id is `id`.
  const JobRun& Of(const std::string& id) const { return engine_->runs()[IndexOf(id)]; }
  // The job's request, allocation and progress: the engine's while it is queued or running (or
  // was when the run stopped); as they were at its end once it ended (empty before its arrival).
  const ActiveRun& ActiveOf(const std::string& id) const {
    const JobId job = IndexOf(id);
    if (engine_->run(job).active >= 0) return engine_->active(job);
    static const ActiveRun kNone;
    const auto it = ended_->find(job);
    return it == ended_->end() ? kNone : it->second;
  }
  const JobCosts& CostsOf(const std::string& id) const { return engine_->costs(IndexOf(id)); }
  const ModelRun& ModelOf(const std::string& id) const { return engine_->model_run(IndexOf(id)); }
  const ModelRuntime* models() const { return models_.get(); }
  const std::string& ReasonOf(const std::string& id) const { return engine_->reason(IndexOf(id)); }
  JobId IndexOf(const std::string& id) const {
    for (size_t i = 0; i < trace_.jobs.size(); ++i) {
      if (trace_.jobs[i].id == id) return static_cast<JobId>(i);
    }
    throw std::out_of_range("no job " + id);
  }

 private:
  Cluster cluster_;
  Topology topology_;
  std::unique_ptr<RuntimeModel> runtime_;
  std::unique_ptr<Placement> placement_;
  std::unique_ptr<Policy> policy_;
  Trace trace_;
  std::unique_ptr<ModelRuntime> models_;
  std::unique_ptr<Engine> engine_;
  std::shared_ptr<std::map<JobId, ActiveRun>> ended_ =
      std::make_shared<std::map<JobId, ActiveRun>>();

  void KeepEnded(EngineOptions* options) {
    options->on_job_end = [ended = ended_](JobId id, const ActiveRun& live) {
      (*ended)[id] = live;
    };
  }
};

// A TestSim of the registered `policy` with runtime `trace`, default engine options (invariant
// checks on) and `params`: the fixture of the policies' hand-computed schedules.
inline TestSim PolicySim(const std::string& cluster, std::vector<Job> jobs,
                         const std::string& policy, const std::string& placement = "first-fit",
                         std::map<std::string, std::string> params = {}) {
  return TestSim(cluster, std::move(jobs), policy, placement, EngineOptions(), "trace",
                 Params(std::move(params)));
}

// Expects `run` completed, first started at `start` and ended at `end` (seconds).
inline void ExpectInterval(const JobRun& run, double start, double end) {
  EXPECT_EQ(run.state, JobState::kCompleted) << JobStateName(run.state);
  EXPECT_DOUBLE_EQ(run.first_start, start);
  EXPECT_DOUBLE_EQ(run.end_time, end);
}

// The seconds job `id` waited queued, per wait-reason name (the `wait_reasons` table's rows).
inline std::map<std::string, double> ReasonsOf(TestSim& sim, const std::string& id) {
  std::map<std::string, double> seconds;
  for (const auto& [reason, s] : sim.engine().wait_reasons().Seconds(sim.IndexOf(id))) {
    seconds[WaitReasonName(reason)] = s;
  }
  return seconds;
}

// Expects `run` killed at its requested wall time: first started at `start`, ended at `end`.
inline void ExpectTimeout(const JobRun& run, double start, double end) {
  EXPECT_EQ(run.state, JobState::kTimeout) << JobStateName(run.state);
  EXPECT_DOUBLE_EQ(run.first_start, start);
  EXPECT_DOUBLE_EQ(run.end_time, end);
}

}  // namespace clustersim::testing

#endif  // CLUSTERSIM_TESTS_TEST_UTIL_H_
