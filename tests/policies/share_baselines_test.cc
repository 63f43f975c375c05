// The FGD paper's GPU-sharing baselines (policies/share_baselines.cc) on hand-built states; every
// score below is computed by hand from the rules in docs/policies.md#gpu-sharing-baselines.
#include <gtest/gtest.h>

#include <set>

#include "policies/registry.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

// 3 nodes x 4 A100-80GB. Node 0: GPU 0 has a 500-milli share held (500 free), GPUs 1-3 free
// (3500 milli free, 3 whole). Node 1: GPUs 4, 5 held whole by one 2-GPU job, 6, 7 free (2000).
// Node 2: all free (4000). The jobs' kinds are counted, as the engine does for gpu-clustering.
class ShareBaselinesTest : public ::testing::Test {
 protected:
  ShareBaselinesTest()
      : cluster_(ClusterSpec::FromJsonText(testing::Nodes(3, 4), "b", HardwareCatalog::Default()),
                 HardwareCatalog::Default()),
        resources_(cluster_) {
    resources_.EnableJobKinds();
    resources_.AllocateJob({}, std::vector<int>{0}, 500);
    resources_.AllocateJob({}, std::vector<int>{4, 5}, 0);
  }

  std::vector<int> Place(const std::string& strategy, int gpus, int milli = 0, int64_t seed = 0) {
    PlacementEnv env{&cluster_, nullptr, nullptr, nullptr, nullptr, seed};
    const auto placement = FindPlacement(strategy).make(env, {});
    PlacementRequest request;
    request.gpus = gpus;
    request.milli = milli;
    Allocation out;
    if (!placement->Find(resources_, request, &out)) return {};
    EXPECT_EQ(out.milli, milli);
    return out.gpus;
  }

  Cluster cluster_;
  Resources resources_;
};

TEST_F(ShareBaselinesTest, AllShareGpus) {
  for (const char* name :
       {"share-best-fit", "gpu-packing", "gpu-clustering", "dot-product", "random-fit"}) {
    PlacementEnv env{&cluster_, nullptr, nullptr};
    EXPECT_TRUE(FindPlacement(name).make(env, {})->SharesGpus()) << name;
  }
}

// A share of 300 milli. best-fit raw scores int(100 (1 - 0.5 (free - 300) / 8000)): node 0
// 3200 -> 80, node 1 1700 -> 89 (89.375), node 2 3700 -> 76 (76.875); normalized over 76..89:
// 30, 100, 0. Node 1; its GPU with the least free that fits: GPU 6 (1000; 4 and 5 have none).
TEST_F(ShareBaselinesTest, BestFitTakesTheNodeWithLeastLeftAndTheTightestGpu) {
  EXPECT_EQ(Place("share-best-fit", 1, 300), std::vector<int>{6});
}

// Packing, 300 milli: node 0 can use its partly used GPU 0 (500 free): 100 - int(500 x 100 /
// 1000) / 10 = 95; node 1 needs a whole free GPU of a used node: max(50 - 1, 33) = 49; node 2 is
// free: max(33 - 4, 4) = 29. Node 0, GPU 0.
TEST_F(ShareBaselinesTest, PackingPutsAShareOnAPartlyUsedGpu) {
  EXPECT_EQ(Place("gpu-packing", 1, 300), std::vector<int>{0});
}

// Packing, 2 whole GPUs: node 0 uses 2 whole free GPUs of a used node (GPU 0 has too little):
// 50 - 2 = 48; node 1 the same, 48; node 2 29. Tie: node 0, its lowest free GPUs 1, 2.
TEST_F(ShareBaselinesTest, PackingBreaksTiesByNodeIndex) {
  EXPECT_EQ(Place("gpu-packing", 2), (std::vector<int>{1, 2}));
}

// Clustering, b = 25 x (8000 - free) / 8000 in integers: node 0 14, node 1 18, node 2 12.
// A share: node 0 holds only shares: 75 + 14 = 89; node 1 only whole GPUs: 18; node 2 empty:
// 25 + 12 = 37. Node 0 (GPU 0: least free that fits).
TEST_F(ShareBaselinesTest, ClusteringPutsAShareWithShares) {
  EXPECT_EQ(Place("gpu-clustering", 1, 300), std::vector<int>{0});
}

// Clustering, 2 whole GPUs: node 0 holds only shares: 14; node 1 only whole GPUs: 75 + 18 = 93;
// node 2: 37. Node 1, GPUs 6, 7.
TEST_F(ShareBaselinesTest, ClusteringPutsWholeGpusWithWholeGpus) {
  EXPECT_EQ(Place("gpu-clustering", 2), (std::vector<int>{6, 7}));
}

// Clustering tells jobs apart by GPU count, as the artifact's "n-gpu" kinds do: a 1-GPU job is
// of another kind than node 1's 2-GPU job. Node 0 (shares only) 14, node 1 (another kind only)
// 18, node 2 (no job) 25 + 12 = 37. Node 2, GPU 8.
TEST_F(ShareBaselinesTest, ClusteringTellsOneGpuJobsFromTwoGpuJobs) {
  EXPECT_EQ(Place("gpu-clustering", 1), std::vector<int>{8});
}

// The kinds follow jobs as they start and end: with the 2-GPU job gone and a 1-GPU job on GPU
// 4, node 1 runs only the 1-GPU kind: 75 + 25 x 5000 / 8000 (in integers: 25 x 5000 / 8000 =
// 15) = 90, above node 2's 37. Node 1, GPU 5.
TEST_F(ShareBaselinesTest, ClusteringCountsKindsAsJobsStartAndEnd) {
  resources_.ReleaseJob({}, std::vector<int>{4, 5}, 0);
  resources_.AllocateJob({}, std::vector<int>{4}, 0);
  EXPECT_EQ(Place("gpu-clustering", 1), std::vector<int>{5});
}

// Dot product, 2 GPUs (2000 milli), no CPUs: int(100 (1 - free/8000 x 2000/8000 / 2)): node 0
// 3500 -> 94 (94.53), node 1 2000 -> 96 (96.875), node 2 4000 -> 93 (93.75). Node 1.
TEST_F(ShareBaselinesTest, DotProductPrefersTheSmallestProductOfFreeAndAsked) {
  EXPECT_EQ(Place("dot-product", 2), (std::vector<int>{6, 7}));
}

// Best-fit, 2 GPUs: node 0 (3500 - 2000) -> int(100 x (1 - 0.09375)) = 90, node 1 100, node 2
// 87. Node 1.
TEST_F(ShareBaselinesTest, BestFitWholeGpus) {
  EXPECT_EQ(Place("share-best-fit", 2), (std::vector<int>{6, 7}));
}

TEST_F(ShareBaselinesTest, NothingFitsNothingIsPlaced) {
  // Larger than a node: first-fit's rule, the whole free node 2 and the remainder on the
  // lowest-index node with a whole free GPU (node 0).
  EXPECT_EQ(Place("gpu-packing", 5), (std::vector<int>{1, 8, 9, 10, 11}));
  for (int i = 8; i < 12; ++i) resources_.AllocateShare(i, 900);
  for (int i = 1; i < 4; ++i) resources_.AllocateShare(i, 900);
  resources_.Allocate(std::vector<int>{6, 7});
  // Free milli left: GPU 0 500, GPUs 1-3 and 8-11 100 each: a 600 share fits nowhere.
  EXPECT_TRUE(Place("share-best-fit", 1, 600).empty());
  EXPECT_EQ(Place("share-best-fit", 1, 500), std::vector<int>{0});
}

// Random-fit: every feasible node is drawn for some seed, never an infeasible one; the same seed
// gives the same choice. For 3 whole GPUs only node 0 (3 free) and node 2 (4) fit.
TEST_F(ShareBaselinesTest, RandomFitDrawsAmongFeasibleNodesBySeed) {
  std::set<int> nodes;
  for (int64_t seed = 0; seed < 40; ++seed) {
    const std::vector<int> gpus = Place("random-fit", 3, 0, seed);
    ASSERT_EQ(gpus.size(), 3u);
    nodes.insert(cluster_.NodeOfGpu(gpus[0]));
    EXPECT_EQ(Place("random-fit", 3, 0, seed), gpus);
  }
  EXPECT_EQ(nodes, (std::set<int>{0, 2}));
}

// With host limits (two nodes of 4 GPUs and 64 cores; node 0 holds a 1-GPU job with 32 cores):
// a 1-GPU job with 8 cores. best-fit: node 0 int(100 (1 - (0.5 x 24000/128000 + 0.5 x
// 2000/8000))) = int(78.125) = 78, node 1 int(100 (1 - (0.5 x 56000/128000 + 0.5 x
// 3000/8000))) = int(59.375) = 59; normalized 100 and 0: node 0, GPU 1. With 40 cores node 0
// cannot take it (32 free): node 1.
TEST(ShareBaselinesHost, BestFitCountsCpusAndSkipsNodesShortOfThem) {
  const Cluster cluster(
      ClusterSpec::FromJsonText(
          R"({"nodes":[{"count":2,"gpu_type":"A100-80GB","gpus_per_node":4,"cpus":64}]})", "h",
          HardwareCatalog::Default()),
      HardwareCatalog::Default());
  Resources resources(cluster);
  resources.EnableHostLimits();
  resources.AllocateJob(HostDemand{32000, 0}, std::vector<int>{0}, 0);
  PlacementEnv env{&cluster, nullptr, nullptr};
  const auto placement = FindPlacement("share-best-fit").make(env, {});
  PlacementRequest request;
  request.gpus = 1;
  request.host.cpu_milli = 8000;
  Allocation out;
  ASSERT_TRUE(placement->Find(resources, request, &out));
  EXPECT_EQ(out.gpus, std::vector<int>{1});
  request.host.cpu_milli = 40000;
  ASSERT_TRUE(placement->Find(resources, request, &out));
  EXPECT_EQ(out.gpus, std::vector<int>{4});
}

// gpu-clustering in the engine, on 2 nodes x 8 A100s, fcfs, with the invariant checks on (they
// compare each node's kind counts with the running jobs after every pass). Scores by hand, b =
// 25 (8000 - free milli) / 8000:
// - t = 0, A (2 GPUs, 10 s): both nodes have no GPU job, 25 each; the tie goes to node 0: GPUs 0-1.
// - t = 0, B (1 GPU, 100 s): node 0 holds only another kind (A's 2): b = 6.25; node 1 none: 25.
//   Node 1, GPU 8.
// - t = 20, C (1 GPU, 10 s): A has ended, node 0 is empty: 25; node 1 holds only C's kind (B):
//   75 + 3.125. Node 1, GPU 9.
// - t = 40, D (a 500-milli share, 10 s): node 0 empty: 25; node 1 holds only another kind (B's
//   1): 3.125. Node 0. Had A's kind not been released at its end, node 0 would score 0 and D
//   would go to node 1.
TEST(ShareBaselinesEngine, ClusteringFollowsKindsAsJobsStartAndEnd) {
  Job d = testing::MakeJob("D", 40, 1, 10);
  d.gpu_milli = 500;
  EngineOptions options;
  options.record_allocations = true;  // a finished job's GPUs are in the allocation log
  testing::TestSim sim(testing::Nodes(2, 8),
                       {testing::MakeJob("A", 0, 2, 10), testing::MakeJob("B", 0, 1, 100),
                        testing::MakeJob("C", 20, 1, 10), d},
                       "fcfs", "gpu-clustering", options);
  const AllocationLog& log = sim.Run().allocations();
  const auto gpus_of = [&](const std::string& id) {
    for (const AllocationInterval& interval : log.intervals) {
      if (interval.job == sim.IndexOf(id)) {
        return std::vector<int>(log.gpus.begin() + interval.gpu_offset,
                                log.gpus.begin() + interval.gpu_offset + interval.gpu_count);
      }
    }
    return std::vector<int>{};
  };
  EXPECT_EQ(gpus_of("A"), (std::vector<int>{0, 1}));
  EXPECT_EQ(gpus_of("B"), std::vector<int>{8});
  EXPECT_EQ(gpus_of("C"), std::vector<int>{9});
  ASSERT_EQ(gpus_of("D").size(), 1u);
  EXPECT_LT(gpus_of("D")[0], 8);
  EXPECT_EQ(log.intervals.size(), 4u);
  for (const char* id : {"A", "B", "C", "D"}) {
    EXPECT_EQ(sim.Of(id).state, JobState::kCompleted) << id;
  }
}

}  // namespace
}  // namespace clustersim
