// The general rules every registered policy must follow, on every registered placement
// (STYLE.md: a new policy is tested without editing this file): no over-commit (the engine's
// --check invariants run after every pass), every job accounted for (ends in a terminal state),
// and determinism (same inputs -> same fingerprint and the same per-job outcome).
#include <gtest/gtest.h>

#include <random>

#include "tests/test_util.h"
#include "workloads/model_assignment.h"

namespace clustersim {
namespace {

std::vector<Job> RandomTrace(uint64_t seed, int jobs) {
  std::mt19937_64 rng(seed);
  std::vector<Job> out;
  double t = 0;
  const int sizes[] = {1, 1, 1, 1, 2, 2, 4, 8, 16, 24};
  for (int i = 0; i < jobs; ++i) {
    t += static_cast<double>(rng() % 600);
    // One draw at a time, the duration first as g++ drew them: the order of two draws in one
    // argument list is unspecified, and the suite must see the same jobs with g++ and clang.
    const double duration = static_cast<double>(1 + rng() % 7200);
    const int gpus = sizes[rng() % 10];
    Job job = testing::MakeJob("j" + std::to_string(i), t, gpus, duration);
    if (rng() % 5 == 0) job.walltime = job.duration * (rng() % 2 ? 2 : 0.5);
    job.user = "u" + std::to_string(rng() % 4);
    out.push_back(job);
  }
  out.push_back(testing::MakeJob("too-big", t, 1000, 1));  // rejected on this cluster
  return out;
}

constexpr const char* kCluster = R"({"nodes":[
  {"count":2,"gpu_type":"V100-32GB","gpus_per_node":8},
  {"count":3,"gpu_type":"A100-80GB","gpus_per_node":4}]})";
// The same GPUs with CPUs and host memory, for traces that state host demands
// (docs/resources.md): placements and plans must honour them too.
constexpr const char* kHostCluster = R"({"nodes":[
  {"count":2,"gpu_type":"V100-32GB","gpus_per_node":8,"cpus":40,"host_memory_gib":256},
  {"count":3,"gpu_type":"A100-80GB","gpus_per_node":4,"cpus":64,"host_memory_gib":512}]})";

// RandomTrace with CPU and memory demands on two thirds of the jobs (between 2 and 12 cores and
// 8 and 40 GiB per GPU; some jobs thus fit only where few CPUs are taken).
std::vector<Job> RandomHostTrace(uint64_t seed, int jobs) {
  std::vector<Job> out = RandomTrace(seed, jobs);
  std::mt19937_64 rng(seed ^ 0x5eed);
  for (Job& job : out) {
    if (rng() % 3 == 0 || job.gpus > 64) continue;
    job.cpu_milli = static_cast<int>(job.gpus * (2 + rng() % 11) * 1000);
    job.memory_mib = static_cast<int>(job.gpus * (8 + rng() % 33) * 1024);
  }
  return out;
}

using Combination = std::tuple<std::string, std::string>;

class Conformance : public ::testing::TestWithParam<Combination> {};

TEST_P(Conformance, NoOverCommitEveryJobAccountedForAndDeterministic) {
  const auto& [policy, placement] = GetParam();
  const auto jobs = RandomTrace(99, 400);
  testing::TestSim a(kCluster, jobs, policy, placement);  // TestSim runs with --check on
  testing::TestSim b(kCluster, jobs, policy, placement);
  a.Run();
  b.Run();
  EXPECT_EQ(a.engine().fingerprint(), b.engine().fingerprint());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobRun& ra = a.engine().runs()[i];
    const JobRun& rb = b.engine().runs()[i];
    EXPECT_TRUE(ra.state == JobState::kCompleted || ra.state == JobState::kTimeout ||
                ra.state == JobState::kRejected)
        << jobs[i].id << " ended " << JobStateName(ra.state);
    EXPECT_EQ(ra.state, rb.state);
    EXPECT_EQ(ra.first_start, rb.first_start);
    EXPECT_EQ(ra.end_time, rb.end_time);
    if (ra.state != JobState::kRejected) {
      EXPECT_GE(ra.first_start, jobs[i].submit_time);
    }
  }
  EXPECT_EQ(a.Of("too-big").state, JobState::kRejected);
}

TEST_P(Conformance, HostLimitedRunsHonourCpusAndMemory) {
  const auto& [policy, placement] = GetParam();
  const auto jobs = RandomHostTrace(7, 300);
  testing::TestSim a(kHostCluster, jobs, policy, placement);  // --check on
  testing::TestSim b(kHostCluster, jobs, policy, placement);
  a.Run();
  b.Run();
  ASSERT_TRUE(a.engine().host_limited());
  EXPECT_EQ(a.engine().fingerprint(), b.engine().fingerprint());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobRun& run = a.engine().runs()[i];
    EXPECT_TRUE(run.state == JobState::kCompleted || run.state == JobState::kTimeout ||
                run.state == JobState::kRejected)
        << jobs[i].id << " ended " << JobStateName(run.state);
  }
}

// MIG (docs/mig.md): a third of the 1-GPU jobs name a profile; the A100-80GB group is in MIG
// mode. Every policy and placement must keep the layouts valid (--check) and end every job.
TEST_P(Conformance, MigLayoutsStayValidAndEveryJobEnds) {
  const auto& [policy, placement] = GetParam();
  auto jobs = RandomTrace(5, 200);
  const char* profiles[] = {"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", "1g.20gb"};
  std::mt19937_64 rng(5);
  for (Job& job : jobs) {
    if (job.gpus == 1 && rng() % 3 == 0) job.mig_profile = MigProfileId(profiles[rng() % 6]);
  }
  constexpr const char* kMigCluster = R"({"nodes":[
    {"count":2,"gpu_type":"V100-32GB","gpus_per_node":8},
    {"count":3,"gpu_type":"A100-80GB","gpus_per_node":4,"mig":true}]})";
  testing::TestSim a(kMigCluster, jobs, policy, placement);  // --check on
  a.Run();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobRun& run = a.engine().runs()[i];
    EXPECT_TRUE(run.state == JobState::kCompleted || run.state == JobState::kTimeout ||
                run.state == JobState::kRejected)
        << jobs[i].id << " ended " << JobStateName(run.state);
  }
}

// Model-aware runs: cosched grows jobs on plans of its own and starts them elastically; fcfs and
// easy share GPUs under frag-aware. Host demands must hold there too.
TEST(ConformanceModels, HostLimitedModelAwareRunsHonourCpusAndMemory) {
  auto jobs = RandomHostTrace(11, 200);
  AssignModels(jobs, 5);
  for (const char* policy : {"cosched", "fcfs", "easy"}) {
    for (const char* placement : {"first-fit", "frag-aware"}) {
      testing::TestSim sim(kHostCluster, jobs, policy, placement, EngineOptions(), "hardware",
                           Params(), &ModelCatalog::Default());
      sim.Run();  // --check on
      ASSERT_TRUE(sim.engine().host_limited());
      for (size_t i = 0; i < jobs.size(); ++i) {
        const JobState state = sim.engine().runs()[i].state;
        EXPECT_TRUE(state == JobState::kCompleted || state == JobState::kTimeout ||
                    state == JobState::kRejected || state == JobState::kOomFailed)
            << policy << " " << placement << " " << jobs[i].id << " " << JobStateName(state);
      }
    }
  }
}

std::vector<Combination> AllCombinations() {
  std::vector<Combination> out;
  for (const PolicyEntry* p : Policies()) {
    for (const PlacementEntry* q : Placements()) out.emplace_back(p->name, q->name);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(EveryPolicyAndPlacement, Conformance,
                         ::testing::ValuesIn(AllCombinations()),
                         [](const ::testing::TestParamInfo<Combination>& info) {
                           std::string name = std::get<0>(info.param) + "_" +
                                              std::get<1>(info.param);
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace clustersim
