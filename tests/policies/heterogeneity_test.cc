// Heterogeneity-aware scheduling: Gavel's allocation LP (policies/gavel_lp.h) on a hand-solved
// example, the gavel policy's rounds under the paper's priority rule, and least-loaded's dispatch
// by expected finish time, each against a hand computation.
#include <gtest/gtest.h>

#include "policies/gavel_lp.h"
#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::TestSim;

// Three 1-GPU jobs, two types of one GPU each. Jobs 0 and 1 run at 1 on type A and 0.5 on B; job
// 2 at 1 on both. Equal shares (M = 3 >= 2 GPUs): T_eq = (T_A + T_B) / 3 = 0.5, 0.5, 2/3.
// Normalized throughputs: jobs 0, 1: 2 X_A + X_B; job 2: 1.5 (X_A + X_B).
// Hand solution: a dual bound with prices p_A = 0.75, p_B = 0.375 (job weights 0.375, 0.375,
// 0.25) gives t <= p_A + p_B = 1.125, and X_0 = (0.5, 0.125), X_1 = (0.5, 0.125),
// X_2 = (0, 0.75) reaches it: 2 x 0.5 + 0.125 = 1.125 = 1.5 x 0.75. By complementary slackness
// job 2 gets nothing on A (1.5 x 0.25 < p_A) and exactly 0.75 on B; jobs 0 and 1 fill A and
// share the rest of B (only their sums are determined).
GavelProblem ThreeJobsTwoTypes() {
  GavelProblem p;
  p.gpus_per_type = {1, 1};
  p.scale = {1, 1, 1};
  p.throughput = {{1, 0.5}, {1, 0.5}, {1, 1}};
  return p;
}

TEST(GavelLp, MaxMinFairnessMatchesTheHandSolution) {
  const GavelProblem p = ThreeJobsTwoTypes();
  EXPECT_DOUBLE_EQ(EqualShareThroughput(p, 0), 0.5);
  EXPECT_DOUBLE_EQ(EqualShareThroughput(p, 2), 2.0 / 3);
  const GavelAllocation a = SolveGavel(p, GavelObjective::kMaxMinFairness);
  ASSERT_TRUE(a.optimal);
  EXPECT_NEAR(a.objective, 1.125, 1e-9);
  EXPECT_NEAR(a.x[2][0], 0.0, 1e-7);
  EXPECT_NEAR(a.x[2][1], 0.75, 1e-6);
  EXPECT_NEAR(a.x[0][0] + a.x[1][0], 1.0, 1e-6);
  EXPECT_NEAR(a.x[0][1] + a.x[1][1], 0.25, 1e-6);
  for (int m = 0; m < 2; ++m) EXPECT_GE(2 * a.x[m][0] + a.x[m][1], 1.125 - 1e-6);
  for (int j = 0; j < 2; ++j) EXPECT_LE(a.x[0][j] + a.x[1][j] + a.x[2][j], 1 + 1e-9);
}

// Jobs 0 and 1 are identical, so they get one allocation. The second LP then fixes it: with A
// and B both full, the work rate is 2 - X_0B (X_0B the share on B of each of jobs 0 and 1), and
// their minimum X_0A + X_0B / 2 >= 0.5625 with X_0A <= 1/2 (A's one GPU) needs X_0B >= 1/8:
// X_0 = X_1 = (1/2, 1/8), and X_2 = (0, 3/4) takes what is left of B.
TEST(GavelLp, IdenticalJobsGetOneAllocation) {
  const GavelAllocation a = SolveGavel(ThreeJobsTwoTypes(), GavelObjective::kMaxMinFairness);
  ASSERT_TRUE(a.optimal);
  EXPECT_EQ(a.x[0], a.x[1]);
  EXPECT_NEAR(a.x[0][0], 0.5, 1e-6);
  EXPECT_NEAR(a.x[0][1], 0.125, 1e-6);
  EXPECT_NEAR(a.x[2][1], 0.75, 1e-6);
}

// Three identical 1-GPU jobs, rate 1 on both types, 2 GPUs of A and 1 of B. T_eq = 3 / 3 = 1; the
// minimum 1 needs each job's shares to sum to 1, so the class's allocation is (2/3, 1/3), forced
// by capacity. On types of equal rate its time is dealt out whole, in job order: A's 2 job-rounds
// to jobs 0 and 1, B's 1 to job 2; each job keeps its throughput, each type its load.
TEST(GavelLp, AClassMixedOverTypesOfEqualRateRunsEachJobOnOneType) {
  GavelProblem p;
  p.gpus_per_type = {2, 1};
  p.scale = {1, 1, 1};
  p.throughput = {{1, 1}, {1, 1}, {1, 1}};
  const GavelAllocation a = SolveGavel(p, GavelObjective::kMaxMinFairness);
  ASSERT_TRUE(a.optimal);
  EXPECT_NEAR(a.objective, 1.0, 1e-9);
  const std::vector<std::vector<double>> whole = {{1, 0}, {1, 0}, {0, 1}};
  for (int m = 0; m < 3; ++m) {
    for (int j = 0; j < 2; ++j) {
      if (whole[m][j] == 0) {
        EXPECT_EQ(a.x[m][j], 0.0) << m << " " << j;
      } else {
        EXPECT_NEAR(a.x[m][j], 1.0, 1e-8) << m << " " << j;
      }
    }
  }
  // One GPU of each: each job's shares sum to 2/3 (T_eq = 2/3, the minimum 1), the class's
  // allocation is (1/3, 1/3): 1 job-round of each type to deal. Job 0 takes 2/3 of A, job 1 the
  // 1/3 left of A and 1/3 of B, job 2 the rest of B.
  p.gpus_per_type = {1, 1};
  const GavelAllocation b = SolveGavel(p, GavelObjective::kMaxMinFairness);
  ASSERT_TRUE(b.optimal);
  const double third = 1.0 / 3;
  EXPECT_NEAR(b.x[0][0], 2 * third, 1e-8);
  EXPECT_EQ(b.x[0][1], 0.0);
  EXPECT_NEAR(b.x[1][0], third, 1e-8);
  EXPECT_NEAR(b.x[1][1], third, 1e-8);
  EXPECT_EQ(b.x[2][0], 0.0);
  EXPECT_NEAR(b.x[2][1], 2 * third, 1e-8);
}

TEST(GavelLp, MaxThroughputFillsEachTypeWithItsBestUse) {
  // Total work rate: type B is worth 1 to job 2 and 0.5 to the others, type A 1 to anyone: 2.
  const GavelAllocation a = SolveGavel(ThreeJobsTwoTypes(), GavelObjective::kMaxThroughput);
  ASSERT_TRUE(a.optimal);
  EXPECT_NEAR(a.objective, 2.0, 1e-9);
  EXPECT_NEAR(a.x[2][1], 1.0, 1e-9);
}

TEST(GavelLp, ScaleFactorsCountAgainstCapacityAndJobsThatFitNowhereAreLeftOut) {
  // A 2-GPU job on 3 GPUs of one type and a 4-GPU job that fits nowhere (T = 0).
  GavelProblem p;
  p.gpus_per_type = {3};
  p.scale = {2, 4};
  p.throughput = {{1}, {0}};
  const GavelAllocation a = SolveGavel(p, GavelObjective::kMaxMinFairness);
  ASSERT_TRUE(a.optimal);
  EXPECT_NEAR(a.x[0][0], 1.0, 1e-9);  // 2 x 1 <= 3
  EXPECT_EQ(a.x[1][0], 0.0);
}

constexpr const char* kOneGpu =
    R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":1}]})";

// Two identical jobs of 720 s on one GPU, rounds of 360 s: X = 1/2 each. Round 0: both unrun,
// priorities tie, the lower index (a) runs. Round 1 (360): a ran 1 of 1 round, priority 0.5; b
// unrun, 0.5e9: b runs, a is preempted. Round 2 (720): both 0.5 / 0.5 = 1, a (lower index) runs
// its last 360 s and ends at 1080; b then runs alone from the 1080 round and ends at 1440.
TEST(GavelPolicy, RoundsFollowThePriorityRule) {
  EngineOptions free;  // the rule's schedule with free preemption (--preemption-cost 0)
  free.preemption_cost_seconds = 0;
  TestSim sim(kOneGpu, {MakeJob("a", 0, 1, 720), MakeJob("b", 0, 1, 720)}, "gavel", "first-fit",
              free);
  sim.Run();
  testing::ExpectInterval(sim.Of("a"), 0, 1080);
  testing::ExpectInterval(sim.Of("b"), 360, 1440);
  EXPECT_EQ(sim.Of("a").preemptions, 1);
  EXPECT_EQ(sim.Of("b").preemptions, 1);
}

// 100 identical jobs of 720 s on one GPU, rounds of 360 s, free preemption: X = 1/100 each, so
// from round 1 on the job that ran is preempted at every boundary and goes back to the queue in
// front of up to 99 jobs of higher index. That is beyond the engine's short walk from the
// queue's tail (64 steps), so its ordered index of the queue takes over; the test harness checks
// the queue's order and index after every pass (Engine::CheckInvariants). The GPU is never idle:
// the last job ends at 100 x 720 s.
TEST(GavelPolicy, ManyPreemptedJobsReturnToTheQueueInJobIdOrder) {
  EngineOptions free;
  free.preemption_cost_seconds = 0;
  std::vector<Job> jobs;
  for (int i = 0; i < 100; ++i) jobs.push_back(MakeJob("j" + std::to_string(i), 0, 1, 720));
  TestSim sim(kOneGpu, jobs, "gavel", "first-fit", free);
  sim.Run();
  double last = 0;
  int preemptions = 0;
  for (int i = 0; i < 100; ++i) {
    const JobRun& run = sim.Of("j" + std::to_string(i));
    ASSERT_EQ(run.state, JobState::kCompleted);
    last = std::max(last, run.end_time);
    preemptions += run.preemptions;
  }
  EXPECT_DOUBLE_EQ(last, 72000);
  EXPECT_GE(preemptions, 99);  // every job but the last to start is stopped at least once
}

constexpr const char* kV100AndH100 = R"({"nodes":[
  {"count":1,"gpu_type":"V100-32GB","gpus_per_node":1},
  {"count":1,"gpu_type":"H100-80GB","gpus_per_node":1}]})";

// Hardware runtime: rate 1 on the V100, 3.4 on the H100 (1-GPU jobs, "other" family). Two jobs of
// 1000 reference-seconds: T_eq = (1 + 3.4) / 2 = 2.2 each; the max-min optimum X = 1/2 on each
// type for each job is unique (normalized throughputs sum to at most 4.4 / 2.2 = 2). Round 0: all
// four pairs unrun and tied; in (job, listed type) order a takes the V100, b the H100. b finishes
// at 1000 / 3.4 = 294.1 s. Round 1 (360): a alone, X = all of the H100; a (640 left) migrates
// there and ends at 360 + 640 / 3.4.
TEST(GavelPolicy, JobsMoveToTheFasterTypeTheLpGivesThem) {
  EngineOptions free;  // the move itself with free preemption (--preemption-cost 0)
  free.preemption_cost_seconds = 0;
  TestSim sim(kV100AndH100, {MakeJob("a", 0, 1, 1000), MakeJob("b", 0, 1, 1000)}, "gavel",
              "first-fit", free, "hardware");
  sim.Run();
  EXPECT_NEAR(sim.Of("b").end_time, 1000 / 3.4, 1e-9);
  EXPECT_NEAR(sim.Of("a").end_time, 360 + 640 / 3.4, 1e-9);
  EXPECT_EQ(sim.Of("a").preemptions, 1);
  EXPECT_EQ(sim.Of("b").preemptions, 0);
}

TEST(GavelPolicy, ARejectedParameterNamesTheValues) {
  EXPECT_THROW(FindPolicy("gavel").make(
                   Params(std::map<std::string, std::string>{{"objective", "fastest"}})),
               InputError);
  EXPECT_THROW(
      FindPolicy("gavel").make(Params(std::map<std::string, std::string>{{"round_seconds", "0"}})),
      InputError);
}

// least-loaded on one V100 and one H100 GPU, hardware runtime, four 1-GPU jobs of 340
// reference-seconds at 0: run times 340 (V100) and 100 (H100). a: H100 finishes at 100 < 340.
// b: H100 backlog 100 GPU-s -> 100 + 100 = 200 < 340: H100. c: 200 + 100 = 300 < 340: H100.
// d: 300 + 100 = 400 > 340: V100. The H100 then serves a, b, c one after another.
TEST(LeastLoaded, DispatchesByExpectedFinishTime) {
  std::vector<Job> jobs;
  for (const char* id : {"a", "b", "c", "d"}) jobs.push_back(MakeJob(id, 0, 1, 340));
  TestSim sim(kV100AndH100, jobs, "least-loaded", "first-fit", EngineOptions(), "hardware");
  sim.Run();
  EXPECT_NEAR(sim.Of("a").end_time, 100, 1e-9);
  EXPECT_NEAR(sim.Of("b").first_start, 100, 1e-9);
  EXPECT_NEAR(sim.Of("b").end_time, 200, 1e-9);
  EXPECT_NEAR(sim.Of("c").end_time, 300, 1e-9);
  EXPECT_EQ(sim.Of("d").first_start, 0);
  EXPECT_NEAR(sim.Of("d").end_time, 340, 1e-9);
}

// 2 nodes x 4 V100s (listed first), 1 node x 8 A100s; one job of 8 GPUs in one tensor-parallel
// group of 8 (it must share a node: only the A100 node holds it). With the trace's run times both
// types run jobs at 1, so a policy that rates the job 1 on the V100s (8 GPUs spanning their two
// nodes, as placing it without its group would) ties the types and may send it where it can
// never start. Rated 0 there, it runs at once on the A100s: [0, 100].
TEST(TypeRate, AJobWhoseTensorGroupFitsNoNodeOfATypeRatesItZero) {
  const std::string cluster = R"({"nodes":[{"count":2,"gpu_type":"V100-16GB","gpus_per_node":4},)"
                              R"({"count":1,"gpu_type":"A100-80GB","gpus_per_node":8}]})";
  for (const char* policy : {"least-loaded", "gavel"}) {
    Job job = MakeJob("J", 0, 8, 100);
    job.tensor_parallel = 8;
    TestSim sim(cluster, {job}, policy);
    sim.Run();
    testing::ExpectInterval(sim.Of("J"), 0, 100);
  }
}

}  // namespace
}  // namespace clustersim
