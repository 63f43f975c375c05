// CPU-only jobs (docs/resources.md#cpu-only-jobs): a job of 0 GPUs with a CPU demand holds its
// CPUs on one node and gives them back when it ends; every policy and placement runs them; each
// placement chooses its node by its rule (the FGD paper's by the artifact's score of a pod without
// GPUs); what cannot run is rejected naming why. Every expected value is computed by hand in the
// comments.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "policies/registry.h"
#include "sim/engine/fragmentation.h"
#include "sim/engine/resources.h"
#include "sim/engine/summary.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::TestSim;

using testing::kTwoHostNodes;  // 2 x 8 A100s, 32 CPUs and 256 GiB each

Job WithCpus(Job job, double cpus) {
  job.cpu_milli = static_cast<int>(std::lround(cpus * 1000));
  return job;
}

// fcfs + gpu-packing (a pod without GPUs scores 0 everywhere: the lowest node with room).
// A (0 GPUs, 30 CPUs, 100 s) at 0: node 0, [0, 100).
// B (1 GPU, 8 CPUs, 50 s) at 1: both nodes are completely free (packing 25 each), node 0 has
// 2 CPUs left: node 1, [1, 51).
// C (0 GPUs, 4 CPUs, 10 s) at 2: node 0 has 2 free, node 1 24: node 1, [2, 12).
// D (0 GPUs, 30 CPUs, 20 s) at 3: node 0 has 2 free, node 1 20 (then 24 after C): it waits
// for B's 8 to come back at 51, [51, 71).
TEST(CpuOnlyJobs, HoldTheirCpusOnOneNodeAndGiveThemBack) {
  std::vector<Job> jobs = {WithCpus(MakeJob("A", 0, 0, 100), 30),
                           WithCpus(MakeJob("B", 1, 1, 50), 8), WithCpus(MakeJob("C", 2, 0, 10), 4),
                           WithCpus(MakeJob("D", 3, 0, 20), 30)};
  TestSim sim(kTwoHostNodes, jobs, "fcfs", "gpu-packing");
  Engine& engine = sim.Run();
  ASSERT_TRUE(engine.host_limited());
  testing::ExpectInterval(sim.Of("A"), 0, 100);
  testing::ExpectInterval(sim.Of("B"), 1, 51);
  testing::ExpectInterval(sim.Of("C"), 2, 12);
  testing::ExpectInterval(sim.Of("D"), 51, 71);
  EXPECT_EQ(sim.Of("A").max_gpus, 0);
  EXPECT_EQ(sim.Of("A").max_nodes, 1);
  EXPECT_DOUBLE_EQ(sim.Of("A").gpu_seconds, 0);
  const Metrics& m = engine.metrics();
  // GPUs: only B's one GPU for 50 s.
  EXPECT_DOUBLE_EQ(m.busy_gpu_seconds(), 50);
  // D waits at the head over [3, 51) with 15 GPUs idle, but for CPUs: no GPU is stranded.
  EXPECT_DOUBLE_EQ(m.stranded_gpu_seconds(), 0);
  EXPECT_DOUBLE_EQ(m.i_frag_seconds(), 0);
  // CPU core-seconds: 30 x 100 + 8 x 50 + 4 x 10 + 30 x 20 = 4,040 over [0, 100] on 64 cores.
  EXPECT_DOUBLE_EQ(m.cpu_used_core_seconds(), 4040);
  const auto summary = ComputeSummary(engine);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "cpu_utilization"), 4040.0 / (64 * 100));
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "gpu_utilization"), 50.0 / (16 * 100));
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "jobs_completed"), 4);
  // JCT counts every job: (100 + 50 + 10 + (71 - 3)) / 4 = 57.
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "jct_seconds_mean"), 57);
}

// Fairness is over GPU-seconds: alice's CPU-only job brings no user in, so bob alone is fair (1).
TEST(CpuOnlyJobs, AddNoUserToFairness) {
  Job a = WithCpus(MakeJob("A", 0, 0, 100), 4);
  a.user = Symbol("alice");
  Job b = WithCpus(MakeJob("B", 0, 1, 100), 4);
  b.user = Symbol("bob");
  TestSim sim(kTwoHostNodes, {a, b}, "fcfs", "gpu-packing");
  const auto summary = ComputeSummary(sim.Run());
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "users"), 1);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "jain_index_users"), 1);
}

// Every registered placement has a rule for them (docs/resources.md#cpu-only-jobs), so whether a
// CPU-only job runs never depends on the placement of a comparison.
TEST(CpuOnlyJobs, EveryRegisteredPlacementPlacesThem) {
  const Cluster cluster(ClusterSpec::FromJsonText(kTwoHostNodes, "c", HardwareCatalog::Default()),
                        HardwareCatalog::Default());
  for (const PlacementEntry* entry : Placements()) {
    EXPECT_TRUE(entry->make(PlacementEnv{&cluster, nullptr, nullptr}, Params())->PlacesCpuOnly())
        << entry->name;
  }
}

// One job set for every policy: every registered policy with every registered placement runs
// every kind of job the engine accepts to completion on 2 x 8 A100s with 32 CPUs and 256 GiB
// each — CPU-only jobs (by CPUs, by memory alone), a share of one GPU, a 1-GPU job with CPUs, a
// whole node, two whole nodes, a job stating no host demand — with the invariants (and promises)
// checked after every pass. Nothing here can be rejected: each fits the empty cluster.
class EveryKindOfJob
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(EveryKindOfJob, RunsToCompletionUnderEveryPolicyAndPlacement) {
  const auto& [policy, placement] = GetParam();
  Job memory_only = MakeJob("memory-only", 0, 0, 40);
  memory_only.memory_mib = 8 * 1024;
  Job share = WithCpus(MakeJob("share", 1, 1, 30), 1);
  share.gpu_milli = 500;
  const std::vector<Job> jobs = {WithCpus(MakeJob("cpu-only", 0, 0, 100), 4),
                                 memory_only,
                                 WithCpus(MakeJob("one", 0, 1, 60), 2),
                                 share,
                                 WithCpus(MakeJob("node", 2, 8, 50), 16),
                                 WithCpus(MakeJob("two-nodes", 3, 16, 20), 8),
                                 MakeJob("plain", 4, 2, 10),
                                 WithCpus(MakeJob("cpu-only-late", 5, 0, 10), 30)};
  TestSim sim(kTwoHostNodes, jobs, policy, placement);
  Engine& engine = sim.Run();
  ASSERT_TRUE(engine.host_limited());
  for (const Job& job : jobs) {
    EXPECT_EQ(sim.Of(job.id).state, JobState::kCompleted)
        << policy << " / " << placement << ": " << job.id << " " << sim.ReasonOf(job.id);
  }
  EXPECT_EQ(sim.Of("cpu-only").max_gpus, 0);
  EXPECT_EQ(sim.Of("cpu-only").max_nodes, 1);
  EXPECT_EQ(sim.Of("memory-only").max_gpus, 0);
}

std::vector<std::tuple<std::string, std::string>> AllPoliciesAndPlacements() {
  std::vector<std::tuple<std::string, std::string>> out;
  for (const PolicyEntry* policy : Policies()) {
    for (const PlacementEntry* placement : Placements()) {
      out.emplace_back(policy->name, placement->name);
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Registry, EveryKindOfJob, ::testing::ValuesIn(AllPoliciesAndPlacements()),
    [](const ::testing::TestParamInfo<std::tuple<std::string, std::string>>& info) {
      std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param);
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

TEST(CpuOnlyJobs, WhatCannotRunIsRejectedNamingWhy) {
  const std::vector<Job> one = {WithCpus(MakeJob("X", 0, 0, 10), 4),
                                WithCpus(MakeJob("G", 0, 1, 10), 4)};
  {
    TestSim sim(kTwoHostNodes, {WithCpus(MakeJob("X", 0, 0, 10), 40)}, "fcfs", "dot-product");
    sim.Run();
    EXPECT_EQ(sim.ReasonOf("X"),
              "requests 0 GPUs with 40 CPUs and 0 GiB of host memory; no node of this cluster "
              "can take it (at most 32 CPUs and 256 GiB per node of an allowed type)");
  }
  {
    // No node declares CPUs: nothing tracks what it would hold; the reason GPU-only runs give.
    TestSim sim(testing::Nodes(2, 8), one, "fcfs", "gpu-packing");
    sim.Run();
    EXPECT_EQ(sim.ReasonOf("X"),
              "requests 0 GPUs; no placement exists on this cluster (16 GPUs "
              "of allowed types)");
    testing::ExpectInterval(sim.Of("G"), 0, 10);
  }
}

// One node of 1 GPU and 16 CPUs: A (1 GPU) runs [0, 1000], B (1 GPU) waits for it, C (CPU-only,
// 2 CPUs, 10 s) at 2 fits beside A: multifactor's backfill (at every pass: bf_interval 0)
// starts it at once, [2, 12], though no GPU is free (before, its backfill stopped when no GPU
// was free and C waited for A).
TEST(CpuOnlyJobs, MultifactorBackfillsOneWhileNoGpuIsFree) {
  TestSim sim(
      R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":1,"cpus":16}]})",
      {WithCpus(MakeJob("A", 0, 1, 1000), 2), WithCpus(MakeJob("B", 1, 1, 100), 2),
       WithCpus(MakeJob("C", 2, 0, 10), 2)},
      "multifactor", "first-fit", EngineOptions(), "trace",
      Params(std::map<std::string, std::string>{{"walltime", "exact"}, {"bf_interval", "0"}}));
  sim.Run();
  testing::ExpectInterval(sim.Of("C"), 2, 12);
  testing::ExpectInterval(sim.Of("B"), 1000, 1100);
}

// A fixed node (4 GPUs, 8 CPUs) and a pool of up to 4 such nodes, none on (no autoscaler: the
// pool keeps its size, 0). A (1 GPU, 8 CPUs) holds the fixed node's CPUs [0, 2000]; B (CPU-only,
// 4 CPUs) at 1 has no node with CPUs until A ends: [2000, 2100]. A node that is off holds out
// its CPUs and memory, not only its GPUs (before, B ran at once on a pool node never requested).
TEST(CpuOnlyJobs, DoNotRunOnPoolNodesThatAreOff) {
  const std::string cluster =
      R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4,"cpus":8},)"
      R"({"count":0,"gpu_type":"A100-80GB","gpus_per_node":4,"cpus":8,)"
      R"("autoscale":{"min":0,"max":4,"provision_seconds":300,"idle_seconds":600}}]})";
  TestSim sim(cluster,
              {WithCpus(MakeJob("A", 0, 1, 2000), 8), WithCpus(MakeJob("B", 1, 0, 100), 4)});
  sim.Run();
  testing::ExpectInterval(sim.Of("B"), 2000, 2100);
}

// 3 nodes x 4 A100s with 128 CPUs each. Node 0: GPU 0 held with 32 CPUs (96,000 milli-cores and
// 3,000 GPU milli free). Node 1: a CPU-only job holds 64 CPUs (64,000 free, 4,000 GPU milli).
// Node 2: all free (128,000, 4,000).
class CpuOnlyPlacementTest : public ::testing::Test {
 protected:
  CpuOnlyPlacementTest()
      : cluster_(ClusterSpec::FromJsonText(
                     R"({"nodes":[{"count":3,"gpu_type":"A100-80GB","gpus_per_node":4,)"
                     R"("cpus":128,"host_memory_gib":512}]})",
                     "c", HardwareCatalog::Default()),
                 HardwareCatalog::Default()),
        resources_(cluster_) {
    resources_.EnableHostLimits();
    resources_.AllocateJob(HostDemand{32000, 0}, std::vector<int>{0}, 0);
    resources_.AllocateHostOn(1, HostDemand{64000, 0});
  }

  // The node `strategy` gives a CPU-only request of `cpus` cores; -1 if none.
  int Place(const std::string& strategy, int cpus, int64_t seed = 0,
            const std::vector<TaskClass>* workload = nullptr, Params params = Params()) {
    PlacementEnv env{&cluster_, nullptr, nullptr, workload, nullptr, seed};
    const auto placement = FindPlacement(strategy).make(env, params);
    EXPECT_TRUE(placement->PlacesCpuOnly()) << strategy;
    PlacementRequest request;
    request.gpus = 0;
    request.host = HostDemand{cpus * 1000, 0};
    Allocation out;
    if (!placement->Find(resources_, request, &out)) return -1;
    EXPECT_TRUE(out.gpus.empty());
    EXPECT_EQ(out.milli, 0);
    EXPECT_EQ(out.gpu_type, cluster_.node(out.node).gpu_type);
    return out.node;
  }

  // The node `strategy` gives a request of `gpus` whole GPUs (or one GPU's `milli` share) with
  // `cpus` cores; -1 if none.
  int PlaceGpuJob(const std::string& strategy, int gpus, int milli, int cpus,
                  const std::vector<TaskClass>* workload) {
    PlacementEnv env{&cluster_, nullptr, nullptr, workload, nullptr, 0};
    const auto placement = FindPlacement(strategy).make(env, Params());
    PlacementRequest request;
    request.gpus = gpus;
    request.milli = milli;
    request.host = HostDemand{cpus * 1000, 0};
    Allocation out;
    if (!placement->Find(resources_, request, &out)) return -1;
    EXPECT_EQ(out.gpus.size(), static_cast<size_t>(milli > 0 ? 1 : gpus));
    return cluster_.NodeOfGpu(out.gpus.front());
  }

  Cluster cluster_;
  Resources resources_;
};

// 64 CPUs. best-fit: int(100 (1 - 0.5 (CPU free - 64,000) / 128,000 - 0.5 GPU free / 8,000)):
// node 0: 1 - 0.125 - 0.1875 -> 68; node 1: 1 - 0 - 0.25 -> 75; node 2: 1 - 0.25 - 0.25 -> 50.
// Normalized over 50..75: 72, 100, 0: node 1.
TEST_F(CpuOnlyPlacementTest, BestFitTakesTheNodeLeftWithLeast) {
  EXPECT_EQ(Place("share-best-fit", 64), 1);
}

// dot-product: int(100 (1 - CPU free x 64,000 / 128,000^2 / 2)): node 0 1 - 0.1875 -> 81,
// node 1 1 - 0.125 -> 87, node 2 1 - 0.25 -> 75: node 1.
TEST_F(CpuOnlyPlacementTest, DotProductTakesTheNodeWithFewestFreeCpus) {
  EXPECT_EQ(Place("dot-product", 64), 1);
}

// Packing and clustering score a pod without GPUs 0 everywhere: the lowest node with room. With
// 100 CPUs only node 2 has room.
TEST_F(CpuOnlyPlacementTest, PackingAndClusteringTakeTheLowestNodeWithRoom) {
  EXPECT_EQ(Place("gpu-packing", 64), 0);
  EXPECT_EQ(Place("gpu-clustering", 64), 0);
  EXPECT_EQ(Place("gpu-packing", 100), 2);
  EXPECT_EQ(Place("gpu-clustering", 100), 2);
  EXPECT_EQ(Place("gpu-packing", 129), -1);
}

// The workload is one class of 1 GPU with 40 CPUs. Before: it fits everywhere (no GPU below its
// demand): fragmentation 0. After 64 CPUs: node 0 keeps 32 < 40, all 3,000 idle milli
// fragmented; node 1 keeps 0: 4,000; node 2 keeps 64 >= 40: 0. Least growth: node 2; with the
// sigmoid score node 2 scores 50, the others int(100 sigmoid(-3)) = 4 and int(100 sigmoid(-4))
// = 1.
TEST_F(CpuOnlyPlacementTest, FragAwareKeepsCpusWhereGpusNeedThem) {
  const std::vector<TaskClass> workload = {TaskClass{1, 0, 1.0, 40000}};
  EXPECT_EQ(Place("frag-aware", 64, 0, &workload), 2);
  EXPECT_EQ(Place("frag-aware", 64, 0, &workload,
                  Params(std::map<std::string, std::string>{{"score", "sigmoid"}})),
            2);
  // A CPU-only class alone finds every idle GPU fragmented whatever the CPUs: no growth
  // anywhere, the lowest node.
  EXPECT_EQ(Place("frag-aware", 64), 0);
}

// Nodes 1 and 2 have all their GPUs free and the same capacities, but a CPU-only job holds 64 of
// node 1's CPUs: one cannot stand for the other. The workload is one class of 1 GPU with 40 CPUs;
// the job takes 64 CPUs. Whole GPU: node 0 keeps 2 GPUs and 32 CPUs < 40, growth 2,000; node 1
// keeps 3 GPUs and 0 CPUs, 3,000; node 2 keeps 64 CPUs, 0: node 2. Half a GPU: node 0 leaves
// 2,500 idle milli with 32 CPUs, growth 2,500; node 1 3,500; node 2 only the half GPU's 500 left
// below the class's 1,000: node 2. Half a GPU with 100 CPUs: only node 2 has the CPUs.
TEST_F(CpuOnlyPlacementTest, FragAwareScoresEachIdleNodeWhoseCpusDiffer) {
  const std::vector<TaskClass> workload = {TaskClass{1, 0, 1.0, 40000}};
  EXPECT_EQ(PlaceGpuJob("frag-aware", 1, 0, 64, &workload), 2);
  EXPECT_EQ(PlaceGpuJob("frag-aware", 0, 500, 64, &workload), 2);
  EXPECT_EQ(PlaceGpuJob("frag-aware", 0, 500, 100, &workload), 2);
}

// Which idle node stands for the others is asked among those the job fits. Held besides the
// fixture's: 300 GiB of node 0 (84 GiB left: its GPU job holds a quarter of 512), 400 GiB of
// node 1 (112 left) and 64 of node 2's CPUs. Nodes 1 and 2 have all GPUs free, the same
// capacities and 64 free CPUs; half a GPU with 200 GiB fits node 2 alone.
TEST_F(CpuOnlyPlacementTest, FragAwareTakesTheIdleNodeWhoseMemoryFitsWhenAnotherLikeItDoesNot) {
  resources_.AllocateHostOn(0, HostDemand{0, 300 * 1024});
  resources_.AllocateHostOn(1, HostDemand{0, 400 * 1024});
  resources_.AllocateHostOn(2, HostDemand{64000, 0});
  PlacementEnv env{&cluster_, nullptr, nullptr, nullptr, nullptr, 0};
  const auto placement = FindPlacement("frag-aware").make(env, Params());
  PlacementRequest request;
  request.gpus = 0;
  request.milli = 500;
  request.host = HostDemand{8000, 200 * 1024};
  Allocation out;
  ASSERT_TRUE(placement->Find(resources_, request, &out));
  EXPECT_EQ(cluster_.NodeOfGpu(out.gpus.front()), 2);
}

// 8 CPUs, free 96, 64 and 128 on nodes 0, 1, 2. first-fit, pool, topology, fastest-type: the
// lowest-index node with room, 0. best-fit: the node left with the fewest free CPUs, 64 - 8 = 56
// on node 1 (96 - 8 = 88, 128 - 8 = 120). 100 CPUs: only node 2 has room.
TEST_F(CpuOnlyPlacementTest, NodeAwarePlacementsTakeTheLowestNodeOrTheTightest) {
  for (const char* name : {"first-fit", "pool", "topology", "fastest-type"}) {
    EXPECT_EQ(Place(name, 8), 0) << name;
    EXPECT_EQ(Place(name, 100), 2) << name;
    EXPECT_EQ(Place(name, 129), -1) << name;
  }
  EXPECT_EQ(Place("best-fit", 8), 1);
  EXPECT_EQ(Place("best-fit", 100), 2);
  // Whatever the type order (there is no GPU to rank types by).
  EXPECT_EQ(Place("first-fit", 8, 0, nullptr,
                  Params(std::map<std::string, std::string>{{"type_order", "fastest"}})),
            0);
}

// random-fit draws among the nodes with room: over 60 seeds all three come up for 64 CPUs, only
// node 2 for 100.
TEST_F(CpuOnlyPlacementTest, RandomFitDrawsAmongNodesWithRoom) {
  std::set<int> seen;
  for (int64_t seed = 0; seed < 60; ++seed) {
    seen.insert(Place("random-fit", 64, seed));
    EXPECT_EQ(Place("random-fit", 100, seed), 2);
  }
  EXPECT_EQ(seen, (std::set<int>{0, 1, 2}));
}

// Without host limits no placement takes a CPU-only request (nothing would track it).
TEST(CpuOnlyPlacement, NothingWithoutHostLimits) {
  const Cluster cluster(ClusterSpec::FromJsonText(kTwoHostNodes, "c", HardwareCatalog::Default()),
                        HardwareCatalog::Default());
  const Resources resources(cluster);
  PlacementRequest request;
  request.host = HostDemand{4000, 0};
  for (const PlacementEntry* entry : Placements()) {
    const std::string name = entry->name;
    PlacementEnv env{&cluster, nullptr, nullptr};
    Allocation out;
    EXPECT_FALSE(FindPlacement(name).make(env, {})->Find(resources, request, &out)) << name;
  }
}

}  // namespace
}  // namespace clustersim
