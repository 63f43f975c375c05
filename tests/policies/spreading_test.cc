// Anti-affinity and kube-scheduler's default scoring (docs/spreading.md), on hand-worked cases:
// jobs of one group kept one per node or per rack, the third waiting for the first to end (with
// its wait reason), the rule honoured by a backfilling planner and every placement; the
// LeastAllocated and BalancedAllocation formulas on hand-made nodes, and the node k8s-default
// then chooses, with GPUs only, with host resources, and for a job larger than a node.
#include <gtest/gtest.h>

#include <map>

#include "policies/k8s_scores.h"
#include "policies/registry.h"
#include "sim/engine/wait_reasons.h"
#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::ExpectInterval;
using testing::MakeJob;
using testing::Nodes;
using testing::ReasonsOf;
using testing::TestSim;

struct Jobs {
  std::vector<Job> jobs;
  std::vector<JobConstraints> constraints;
  Job& Add(const std::string& id, double submit, int gpus, double duration) {
    jobs.push_back(MakeJob(id, submit, gpus, duration));
    return jobs.back();
  }
  // Puts the last job added in `group`, spread over `domain`.
  void Group(const std::string& group, SpreadDomain domain) {
    constraints.emplace_back();
    constraints.back().group = group;
    constraints.back().spread = domain;
    jobs.back().constraints = static_cast<uint32_t>(constraints.size());
  }
};

TestSim Sim(const std::string& cluster, const Jobs& jobs, const std::string& policy = "fcfs",
            const std::string& placement = "first-fit") {
  EngineOptions options;
  options.record_allocations = true;
  options.wait_reasons = true;
  return TestSim(cluster, jobs.jobs, policy, placement, options, "trace",
                 Params(std::map<std::string, std::string>{{"walltime", "exact"}}), nullptr, {},
                 jobs.constraints);
}

std::vector<int> GpusOf(TestSim& sim, const std::string& id) {
  const AllocationLog& log = sim.engine().allocations();
  for (const AllocationInterval& interval : log.intervals) {
    if (interval.job != sim.IndexOf(id)) continue;
    return std::vector<int>(log.gpus.begin() + interval.gpu_offset,
                            log.gpus.begin() + interval.gpu_offset + interval.gpu_count);
  }
  return {};
}

// Three 1-GPU jobs of group g (spread node) at t = 0, 100 s each, on two nodes of 4 GPUs.
Jobs ThreeOfOneGroup(SpreadDomain domain) {
  Jobs j;
  for (const char* id : {"A", "B", "C"}) {
    j.Add(id, 0, 1, 100);
    j.Group("g", domain);
  }
  return j;
}

TEST(Spread, TwoJobsOfAGroupRunOnTwoNodesAndTheThirdWaitsForTheFirstToEnd) {
  // First-fit puts A on node 0 (GPU 0); B may not join it: node 1 (GPU 4). C fits nowhere its
  // group does not run: it waits until A and B end at 100, then takes node 0: 100-200. Its 100 s
  // of waiting are `spread` (6 GPUs were free all along).
  TestSim sim = Sim(Nodes(2, 4), ThreeOfOneGroup(SpreadDomain::kNode));
  sim.Run();
  ExpectInterval(sim.Of("A"), 0, 100);
  ExpectInterval(sim.Of("B"), 0, 100);
  ExpectInterval(sim.Of("C"), 100, 200);
  EXPECT_EQ(GpusOf(sim, "A"), std::vector<int>{0});
  EXPECT_EQ(GpusOf(sim, "B"), std::vector<int>{4});
  EXPECT_EQ(GpusOf(sim, "C"), std::vector<int>{0});
  EXPECT_EQ(ReasonsOf(sim, "C"), (std::map<std::string, double>{{"spread", 100}}));
  // Without the group the three pack on node 0 at t = 0.
  Jobs plain;
  for (const char* id : {"A", "B", "C"}) plain.Add(id, 0, 1, 100);
  TestSim packed = Sim(Nodes(2, 4), plain);
  packed.Run();
  ExpectInterval(packed.Of("C"), 0, 100);
  EXPECT_EQ(GpusOf(packed, "C"), std::vector<int>{2});
}

TEST(Spread, AJobOutsideTheGroupStillPacksNextToIt) {
  // D (no group) at t = 1 goes where first-fit puts it, next to A on node 0 (GPU 1).
  Jobs j = ThreeOfOneGroup(SpreadDomain::kNode);
  j.Add("D", 1, 1, 10);
  TestSim sim = Sim(Nodes(2, 4), j, "easy");
  sim.Run();
  EXPECT_EQ(GpusOf(sim, "D"), std::vector<int>{1});
  ExpectInterval(sim.Of("C"), 100, 200);
}

TEST(Spread, ARackDomainKeepsTheGroupOnePerRack) {
  // Four nodes of 2 GPUs, two per rack: racks {0, 1} and {2, 3}. A takes node 0; B may use
  // neither node of rack 0 (node 1 is free but in A's rack): node 2 (GPU 4). C waits for 100.
  const std::string cluster =
      R"({"nodes":[{"count":4,"gpu_type":"A100-80GB","gpus_per_node":2}],)"
      R"("network":{"nodes_per_rack":2}})";
  TestSim sim = Sim(cluster, ThreeOfOneGroup(SpreadDomain::kRack));
  sim.Run();
  EXPECT_EQ(GpusOf(sim, "A"), std::vector<int>{0});
  EXPECT_EQ(GpusOf(sim, "B"), std::vector<int>{4});
  ExpectInterval(sim.Of("C"), 100, 200);
}

TEST(Spread, EveryPlacementAndPlanningPolicyHonoursIt) {
  // Six jobs of group g (spread node, 1-2 GPUs, staggered) and filler jobs on three nodes of 4
  // GPUs: under every placement and several planners, the run's --check (on in TestSim) stops
  // any start that puts two of g on one node, and at most three of g ever run at once.
  Jobs j;
  for (int i = 0; i < 6; ++i) {
    j.Add("g" + std::to_string(i), i * 7.0, 1 + i % 2, 50 + 10 * i);
    j.Group("g", SpreadDomain::kNode);
    j.Add("f" + std::to_string(i), i * 5.0, 1 + i % 3, 40);
  }
  for (const PlacementEntry* entry : Placements()) {
    const std::string placement = entry->name;
    for (const char* policy : {"fcfs", "easy", "conservative", "sjf", "las", "srtf", "fair-share",
                                "multifactor", "edf"}) {
      SCOPED_TRACE(placement + " / " + policy);
      TestSim sim = Sim(Nodes(3, 4), j, policy, placement);
      sim.Run();
      for (int i = 0; i < 6; ++i) {
        EXPECT_EQ(sim.Of("g" + std::to_string(i)).state, JobState::kCompleted);
      }
    }
  }
}

TEST(Spread, JobsOfOneGroupMustStateTheSameDomain) {
  Jobs j;
  j.Add("A", 0, 1, 10);
  j.Group("g", SpreadDomain::kNode);
  j.Add("B", 0, 1, 10);
  j.Group("g", SpreadDomain::kRack);
  try {
    Sim(Nodes(2, 4), j);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("job B: group g spreads over nodes"), std::string::npos)
        << e.what();
  }
}

// kube-scheduler's formulas (policies/k8s_scores.h) on hand-made nodes.
TEST(K8sScores, LeastAllocatedAndBalancedAllocationMatchTheFormulas) {
  // GPUs only, 8 per node, a 1-GPU job. Node A holds 2: requested 3,
  // (8 - 3) x 100 / 8 = 62.5 -> 62. Node B holds 6: (8 - 7) x 100 / 8 = 12.5 -> 12.
  EXPECT_EQ(LeastAllocatedScore({{8, 3, 1}}), 62);
  EXPECT_EQ(LeastAllocatedScore({{8, 7, 1}}), 12);
  // One resource: no deviation, 100.
  EXPECT_EQ(BalancedAllocationScore({{8, 7, 1}}), 100);
  // GPUs 3 of 8 and CPUs 20 of 32 cores: LeastAllocated (62 + 37) / 2 = 49 (37.5 -> 37, 49.5 ->
  // 49); fractions 0.375 and 0.625, std = 0.25 / 2 = 0.125, (1 - 0.125) x 100 = 87.5 -> 87.
  EXPECT_EQ(LeastAllocatedScore({{8, 3, 1}, {32000, 20000, 1}}), 49);
  EXPECT_EQ(BalancedAllocationScore({{8, 3, 1}, {32000, 20000, 1}}), 87);
  // Three resources, fractions 0.5, 0.25 and 1 (6 of 4 is capped at 1): mean 7/12, squared
  // deviations 1/144 + 16/144 + 25/144 = 42/144, / 3 = 0.09722, std = 0.31180, score 68.8 -> 68.
  // LeastAllocated: 50, 75 and 0 (requested above allocatable): 125 / 3 = 41.
  EXPECT_EQ(BalancedAllocationScore({{4, 2, 1}, {4, 1, 1}, {4, 6, 1}}), 68);
  EXPECT_EQ(LeastAllocatedScore({{4, 2, 1}, {4, 1, 1}, {4, 6, 1}}), 41);
  // Weights: (100 x 3 + 0 x 1) / 4 = 75. A resource with nothing allocatable is left out.
  EXPECT_EQ(LeastAllocatedScore({{4, 0, 3}, {4, 4, 1}}), 75);
  EXPECT_EQ(LeastAllocatedScore({{4, 0, 1}, {0, 5, 1}}), 100);
}

TEST(K8sDefault, TakesTheNodeWithTheMostFreeGpus) {
  // Two nodes of 8 GPUs. X (2 GPUs) at t = 0: both nodes score 75 + 100 (requested 2 of 8), tie
  // -> node 0 (GPUs 0, 1). Y (6 GPUs) at t = 1: node 0 requested 8 -> 0 + 100; node 1 requested
  // 6 -> 25 + 100 = 125: node 1 (GPUs 8-13). Z (1 GPU) at t = 2: node A = node 0 (2 used):
  // 62 + 100 = 162; node B = node 1 (6 used): 12 + 100 = 112: node 0, its lowest free GPU 2.
  Jobs j;
  j.Add("X", 0, 2, 100);
  j.Add("Y", 1, 6, 100);
  j.Add("Z", 2, 1, 100);
  TestSim k8s = Sim(Nodes(2, 8), j, "fcfs", "k8s-default");
  k8s.Run();
  EXPECT_EQ(GpusOf(k8s, "X"), (std::vector<int>{0, 1}));
  EXPECT_EQ(GpusOf(k8s, "Y"), (std::vector<int>{8, 9, 10, 11, 12, 13}));
  EXPECT_EQ(GpusOf(k8s, "Z"), std::vector<int>{2});
}

TEST(K8sDefault, ScoresCpusAndMemoryWhenTheClusterModelsThem) {
  // Two nodes of 8 GPUs, 32 CPUs and 256 GiB (262144 MiB). X (1 GPU, 28 CPUs, memory unstated:
  // charged 262144 x 1/8 = 32768 MiB) ties -> node 0. W (3 GPUs, 1 CPU; 98304 MiB charged) goes
  // to node 1 (node 0 would be at 4/8 GPUs and 29/32 CPUs). Z (1 GPU, 1 CPU, 1 GiB):
  // node 0: GPUs 2/8, CPUs 29000/32000, memory 33792/262144.
  //   LeastAllocated (75 + 9 + 87) / 3 = 57 (9.375 -> 9, 87.1 -> 87).
  //   Balanced: fractions 0.25, 0.90625, 0.12891; std 0.34150; 65.8 -> 65. Total 122.
  // node 1: GPUs 4/8, CPUs 2000/32000, memory 99328/262144.
  //   LeastAllocated (50 + 93 + 62) / 3 = 68 (93.75 -> 93, 62.1 -> 62).
  //   Balanced: fractions 0.5, 0.0625, 0.37891; std 0.18445; 81.6 -> 81. Total 149.
  // Z goes to node 1 (GPU 11), where GPUs alone (75 vs 50 for LeastAllocated) would pick node 0.
  Jobs j;
  Job& x = j.Add("X", 0, 1, 100);
  x.cpu_milli = 28000;
  Job& w = j.Add("W", 1, 3, 100);
  w.cpu_milli = 1000;
  Job& z = j.Add("Z", 2, 1, 100);
  z.cpu_milli = 1000;
  z.memory_mib = 1024;
  TestSim sim = Sim(testing::kTwoHostNodes, j, "fcfs", "k8s-default");
  sim.Run();
  EXPECT_EQ(GpusOf(sim, "X"), std::vector<int>{0});
  EXPECT_EQ(GpusOf(sim, "W"), (std::vector<int>{8, 9, 10}));
  EXPECT_EQ(GpusOf(sim, "Z"), std::vector<int>{11});
}

TEST(K8sDefault, PlacesAJobLargerThanANodePodByPod) {
  // Three nodes of 4 GPUs. A (1 GPU) -> node 0 (tie). B (3 GPUs): node 0 requested 4 -> 0 + 100,
  // node 1 requested 3 -> 25 + 100: node 1 (GPUs 4-6). J (6 GPUs) pod by pod: node 0 (pod of 3,
  // requested 4: 100), node 1 (pod of 1, requested 4: 100), node 2 (pod of 4, requested 4: 100)
  // tie -> node 0 (GPUs 1-3); then 3 left: node 1 (pod of 1: 100) or node 2 (pod of 3, requested
  // 3: 125) -> node 2 (GPUs 8-10).
  Jobs j;
  j.Add("A", 0, 1, 100);
  j.Add("B", 1, 3, 100);
  j.Add("J", 2, 6, 100);
  TestSim sim = Sim(Nodes(3, 4), j, "fcfs", "k8s-default");
  sim.Run();
  EXPECT_EQ(GpusOf(sim, "B"), (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(GpusOf(sim, "J"), (std::vector<int>{1, 2, 3, 8, 9, 10}));
}

TEST(K8sDefault, SpreadsAGroupByItsOwnScoresAmongTheNodesLeftOpen) {
  // Three nodes of 4 GPUs. F (3 GPUs, no group) -> node 0. A (1 GPU, group g) scores node 0
  // (requested 4: 100) below nodes 1 and 2 (requested 1: 75 + 100): node 1 (tie, lower).
  // B (1 GPU, group g) may not use node 1: node 2 (175) over node 0 (100): GPU 8.
  Jobs j;
  j.Add("F", 0, 3, 100);
  j.Add("A", 1, 1, 100);
  j.Group("g", SpreadDomain::kNode);
  j.Add("B", 2, 1, 100);
  j.Group("g", SpreadDomain::kNode);
  TestSim sim = Sim(Nodes(3, 4), j, "fcfs", "k8s-default");
  sim.Run();
  EXPECT_EQ(GpusOf(sim, "A"), std::vector<int>{4});
  EXPECT_EQ(GpusOf(sim, "B"), std::vector<int>{8});
}

// weighted starts a job on the nodes its allocator chose only when nothing but GPUs and host
// resources decides: two nodes of 4 GPUs, A (1 GPU, group g spread node) on node 0 at 0, F (4
// GPUs) fills node 1 at 5, B (1 GPU, group g) at 10 has only node 0 with room, where A runs: it
// waits for A, [100, 200] (before, the allocator's choice of node 0 stopped the run at B's start).
TEST(Spread, WeightedKeepsAGroupApart) {
  Jobs j;
  j.Add("A", 0, 1, 100);
  j.Group("g", SpreadDomain::kNode);
  j.Add("F", 5, 4, 300);
  j.Add("B", 10, 1, 100);
  j.Group("g", SpreadDomain::kNode);
  TestSim sim = Sim(Nodes(2, 4), j, "weighted");
  sim.Run();
  ExpectInterval(sim.Of("A"), 0, 100);
  ExpectInterval(sim.Of("B"), 100, 200);
}

TEST(Spread, MigInstancesOfAGroupTakeTwoNodesAndTheThirdWaitsForSpread) {
  // Two nodes of one A100-80GB in MIG mode; A, B, C 1g.10gb of group g (spread node), 100 s each
  // at t = 0. A takes node 0's GPU; B may not join it, though its GPU has free slices: node 1. C
  // waits for A and B to end: 100-200, its 100 s `spread`.
  Jobs j = ThreeOfOneGroup(SpreadDomain::kNode);
  for (Job& job : j.jobs) job.mig_profile = MigProfileId("1g.10gb");
  TestSim sim = Sim(R"({"nodes":[{"count":2,"gpu_type":"A100-80GB","gpus_per_node":1,
                        "mig":true}]})",
                    j);
  sim.Run();
  ExpectInterval(sim.Of("A"), 0, 100);
  ExpectInterval(sim.Of("B"), 0, 100);
  ExpectInterval(sim.Of("C"), 100, 200);
  EXPECT_EQ(GpusOf(sim, "A"), std::vector<int>{0});
  EXPECT_EQ(GpusOf(sim, "B"), std::vector<int>{1});
  EXPECT_EQ(ReasonsOf(sim, "C"), (std::map<std::string, double>{{"spread", 100}}));
}

TEST(Spread, SrtfKeepsAnEvictedJobOnlyWhereItsGroupStillAllowsIt) {
  // Two nodes of 8 GPUs. A (g, 2 GPUs, 500 s) and X (1 GPU, 200 s) start at 0 on node 0. B (g,
  // 8 GPUs, 100 s) arrives at 190: node 1. C (g, 1 GPU, 10 s) arrives at 220: every node holds
  // a job of g; srtf evicts the one with the most left, A (280 s), and C takes node 0. A may not
  // stay beside C on node 0, and node 1 holds B: A is preempted (not kept where it ran). C runs
  // [220, 230], B [190, 290].
  Jobs j;
  j.Add("A", 0, 2, 500);
  j.Group("g", SpreadDomain::kNode);
  j.Add("X", 0, 1, 200);
  j.Add("B", 190, 8, 100);
  j.Group("g", SpreadDomain::kNode);
  j.Add("C", 220, 1, 10);
  j.Group("g", SpreadDomain::kNode);
  TestSim sim = Sim(Nodes(2, 8), j, "srtf");
  sim.Run();
  ExpectInterval(sim.Of("X"), 0, 200);
  ExpectInterval(sim.Of("B"), 190, 290);
  ExpectInterval(sim.Of("C"), 220, 230);
  EXPECT_EQ(sim.Of("A").preemptions, 1);
  EXPECT_EQ(sim.Of("A").state, JobState::kCompleted);
}

}  // namespace
}  // namespace clustersim
