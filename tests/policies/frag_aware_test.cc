// frag-aware placement (policies/frag_aware.cc) on hand-built states, deltas computed by hand
// with the measure of sim/engine/fragmentation.h.
#include <gtest/gtest.h>

#include "policies/registry.h"
#include "sim/engine/fragmentation.h"
#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

// 4 nodes x 4 A100-80GB: node k holds GPUs 4k..4k+3.
class FragAwareTest : public ::testing::Test {
 protected:
  FragAwareTest()
      : cluster_(ClusterSpec::FromJsonText(testing::Nodes(4, 4), "f", HardwareCatalog::Default()),
                 HardwareCatalog::Default()),
        resources_(cluster_) {}

  // Places a request; returns the GPUs (empty if it does not fit) and sets *milli.
  std::vector<int> Place(const std::string& strategy, int gpus, int milli = 0,
                         int* out_milli = nullptr) {
    PlacementEnv env{&cluster_, nullptr, nullptr, &workload_};
    const auto placement = FindPlacement(strategy).make(env, {});
    PlacementRequest request;
    request.gpus = gpus;
    request.milli = milli;
    Allocation out;
    if (!placement->Find(resources_, request, &out)) return {};
    if (out_milli != nullptr) *out_milli = out.milli;
    return out.gpus;
  }
  void Busy(std::vector<int> gpus) { resources_.Allocate(gpus); }

  Cluster cluster_;
  Resources resources_;
  std::vector<TaskClass> workload_;
};

TEST_F(FragAwareTest, SharesGpus) {
  PlacementEnv env{&cluster_, nullptr, nullptr, &workload_};
  EXPECT_TRUE(FindPlacement("frag-aware").make(env, {})->SharesGpus());
}

// Free whole GPUs: node 0 has 2 (GPUs 2, 3), node 1 has 4, node 2 has 3 (9, 10, 11), node 3 none.
// Workload: half 2-GPU tasks, half 4-GPU tasks. A 1-GPU job's growth of expected fragmentation:
//   node 0: 2 -> 1 free: the 2-GPU class stops fitting, its 1000 left is a fragment: +0.5 x 1000;
//           the 4-GPU class did not fit before (2000) nor after (1000): -0.5 x 1000. Total 0.
//   node 1: 4 -> 3: 2-GPU class still fits (0); 4-GPU class stops fitting: +0.5 x 3000 = +1500.
//   node 2: 3 -> 2: 2-GPU class still fits (0); 4-GPU class 3000 -> 2000: -500.
// FGD takes node 2; first-fit and best-fit both take node 0.
class WholeGpuChoice : public FragAwareTest {
 protected:
  WholeGpuChoice() {
    Busy({0, 1});
    Busy({8});
    Busy({12, 13, 14, 15});
    workload_ = {{2, 0, 0.5}, {4, 0, 0.5}};
  }
};

TEST_F(WholeGpuChoice, FgdPicksTheNodeOfLeastGrowthWhereFirstAndBestFitDiffer) {
  EXPECT_EQ(Place("first-fit", 1), (std::vector<int>{2}));
  EXPECT_EQ(Place("best-fit", 1), (std::vector<int>{2}));
  EXPECT_EQ(Place("frag-aware", 1), (std::vector<int>{9}));
}

// One placement object asked again after a node changed: frag-aware remembers each node's
// fragmentation until the node's state changes, so this fails if it kept node 2's old values.
// First node 2 (as above); then GPU 9 is taken and node 2 has 2 free like node 0: a 1-GPU job
// grows node 0 and node 2 alike by 0 (the 2-GPU class stops fitting, +500; the 4-GPU class
// 2000 -> 1000, -500), node 1 by +1500, so the lower index wins: node 0, GPU 2. With node 2's
// old values (3 free: -500) it would take GPU 10.
TEST_F(WholeGpuChoice, AskedAgainAfterANodeChangedItScoresTheNodeAsItIsNow) {
  PlacementEnv env{&cluster_, nullptr, nullptr, &workload_};
  const auto placement = FindPlacement("frag-aware").make(env, {});
  PlacementRequest request;
  request.gpus = 1;
  Allocation out;
  ASSERT_TRUE(placement->Find(resources_, request, &out));
  EXPECT_EQ(out.gpus, (std::vector<int>{9}));
  Busy({9});
  ASSERT_TRUE(placement->Find(resources_, request, &out));
  EXPECT_EQ(out.gpus, (std::vector<int>{2}));
  // GPU 2 taken too: node 0 has 1 free, and a 1-GPU job there leaves none: each class's
  // fragment 1000 -> 0, -0.5 x 1000 twice = -1000, below node 2's 0: GPU 3.
  Busy({2});
  ASSERT_TRUE(placement->Find(resources_, request, &out));
  EXPECT_EQ(out.gpus, (std::vector<int>{3}));
}

TEST_F(WholeGpuChoice, TheRemainderOfALargeJobGoesWhereFragmentationGrowsLeast) {
  // 6 GPUs: node 1 (the only completely free node) plus 2 more. For 2 GPUs:
  //   node 0: 2 -> 0 free: 2-GPU class 0 -> 0; 4-GPU class 2000 -> 0: -1000.
  //   node 2: 3 -> 1 free: 2-GPU class 0 -> 1000 (+500); 4-GPU class 3000 -> 1000 (-1000): -500.
  EXPECT_EQ(Place("frag-aware", 6), (std::vector<int>{2, 3, 4, 5, 6, 7}));
  // 8 GPUs need two completely free nodes; there is one.
  EXPECT_TRUE(Place("frag-aware", 8).empty());
}

TEST_F(FragAwareTest, AFractionalJobPacksOntoASharedGpuWhoseLeftoverIsAlreadyAFragment) {
  // Workload: 500-milli tasks. GPU 0 has 400 free (a fragment for them: 400 < 500).
  // A 300-milli job: on GPU 0, 400 -> 100: fragment 400 -> 100 (-300); on a whole free GPU,
  // 1000 -> 700 (still holds 500): 0. FGD packs it onto GPU 0.
  workload_ = {{1, 500, 1.0}};
  resources_.AllocateShare(0, 600);
  int milli = 0;
  EXPECT_EQ(Place("frag-aware", 1, 300, &milli), (std::vector<int>{0}));
  EXPECT_EQ(milli, 300);
}

TEST_F(FragAwareTest, AFractionalJobAvoidsLeavingAUselessLeftover) {
  // Same workload; GPU 0 has 700 free. 300 milli there leaves 400 < 500: +400. On a whole free
  // GPU (GPU 1, the lowest of node 0's) 1000 -> 700: 0. FGD takes GPU 1, not the shared GPU.
  workload_ = {{1, 500, 1.0}};
  resources_.AllocateShare(0, 300);
  int milli = 0;
  EXPECT_EQ(Place("frag-aware", 1, 300, &milli), (std::vector<int>{1}));
  EXPECT_EQ(milli, 300);
}

TEST_F(FragAwareTest, WithoutAWorkloadTheRequestItselfIsTheOnlyClass) {
  // Class: 300 milli. GPU 0 has 400 free: 300 there leaves 100 < 300 (+100); node 0's whole GPU 1
  // (1000 -> 700): 0; so GPU 1. With GPU 0 at 300 free: 300 -> 0 leaves no fragment either (0),
  // a tie with GPU 1, which the lower index (GPU 0) wins.
  resources_.AllocateShare(0, 600);
  EXPECT_EQ(Place("frag-aware", 1, 300), (std::vector<int>{1}));
  resources_.AllocateShare(0, 100);
  EXPECT_EQ(Place("frag-aware", 1, 300), (std::vector<int>{0}));
}

TEST_F(FragAwareTest, AJobThatFitsNowhereIsNotPlaced) {
  workload_ = {{1, 500, 1.0}};
  // Every GPU keeps 500 free: no 600-milli share and no whole GPU anywhere.
  for (int g = 0; g < 16; ++g) resources_.AllocateShare(g, 500);
  EXPECT_TRUE(Place("frag-aware", 1, 600).empty());
  EXPECT_TRUE(Place("frag-aware", 1).empty());
  EXPECT_EQ(Place("frag-aware", 1, 500), (std::vector<int>{0}));
  // Type constraint: no allowed type.
  PlacementEnv env{&cluster_, nullptr, nullptr, &workload_};
  PlacementRequest request;
  request.gpus = 1;
  request.milli = 100;
  request.type_mask = 0;
  Allocation out;
  EXPECT_FALSE(FindPlacement("frag-aware").make(env, {})->Find(resources_, request, &out));
}

TEST_F(FragAwareTest, IsDeterministicAndLeavesTheStateUnchanged) {
  workload_ = {{1, 500, 0.6}, {2, 0, 0.3}, {4, 0, 0.1}};
  resources_.AllocateShare(5, 250);
  Busy({0, 9});
  const Resources copy = resources_;
  const auto first = Place("frag-aware", 1, 250);
  const auto whole = Place("frag-aware", 2);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Place("frag-aware", 1, 250), first);
    EXPECT_EQ(Place("frag-aware", 2), whole);
  }
  for (int g = 0; g < 16; ++g) EXPECT_EQ(resources_.free_milli(g), copy.free_milli(g));
}

// score=sigmoid, the artifact's integer score int(100 x sigmoid(-growth / 1000)). Workload:
// shares of 500 and 200 milli, half each. A 300-milli job on a GPU with f in [300, 500) free:
// the 500 class's fragment f -> f - 300 (-150 weighted), the 200 class's 0 -> f - 300
// (+(f - 300) / 2): growth f / 2 - 300. GPU 0 (node 0) with 400 free: -100; GPU 4 (node 1) with
// 380 free: -110; whole free GPUs: 0. Exact: GPU 4 (-110 < -100). Sigmoid: 100 / (1 + e^0.1)
// = 52.50 and 100 / (1 + e^0.11) = 52.75, both 52: a tie, the lower node wins: GPU 0.
TEST_F(FragAwareTest, SigmoidScoreTiesGrowthsOfOneIntegerScoreAndTakesTheLowerNode) {
  workload_ = {{1, 500, 0.5}, {1, 200, 0.5}};
  resources_.AllocateShare(0, 600);
  resources_.AllocateShare(4, 620);
  EXPECT_EQ(Place("frag-aware", 1, 300), (std::vector<int>{4}));
  PlacementEnv env{&cluster_, nullptr, nullptr, &workload_};
  const auto sigmoid =
      FindPlacement("frag-aware")
          .make(env, Params(std::map<std::string, std::string>{{"score", "sigmoid"}}));
  PlacementRequest request;
  request.gpus = 1;
  request.milli = 300;
  Allocation out;
  ASSERT_TRUE(sigmoid->Find(resources_, request, &out));
  EXPECT_EQ(out.gpus, std::vector<int>{0});
  EXPECT_THROW(FindPlacement("frag-aware")
                   .make(env, Params(std::map<std::string, std::string>{{"score", "rounded"}})),
               InputError);
}

}  // namespace
}  // namespace clustersim
