// Placement strategies on hand-built free states (docs/policies.md#placement).
#include <gtest/gtest.h>

#include "policies/registry.h"
#include "sim/engine/runtime_model.h"
#include "sim/hardware/topology.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

class PlacementTest : public ::testing::Test {
 protected:
  explicit PlacementTest(const std::string& spec = testing::Nodes(4, 4))
      : cluster_(ClusterSpec::FromJsonText(spec, "p", HardwareCatalog::Default()),
                 HardwareCatalog::Default()),
        resources_(cluster_) {}

  std::vector<int> Place(const std::string& strategy, int gpus,
                         uint64_t mask = ~uint64_t{0}) {
    const auto placement = FindPlacement(strategy).make({&cluster_, nullptr, nullptr}, {});
    Allocation out;
    PlacementRequest request;
    request.gpus = gpus;
    request.type_mask = mask;
    if (!placement->Find(resources_, request, &out)) return {};
    return out.gpus;
  }
  void Busy(std::vector<int> gpus) { resources_.Allocate(gpus); }

  Cluster cluster_;
  Resources resources_;
};

// 4 nodes x 4 GPUs: node k holds GPUs 4k..4k+3. Occupy: node 0 {0,1,2} (1 free), node 1 {4,5}
// (2 free), node 2 nothing (4 free), node 3 {12} (3 free).
class FragmentedCluster : public PlacementTest {
 protected:
  FragmentedCluster() {
    Busy({0, 1, 2});
    Busy({4, 5});
    Busy({12});
  }
};

TEST_F(FragmentedCluster, FirstFitTakesTheLowestIndexNodeWithEnoughFree) {
  EXPECT_EQ(Place("first-fit", 1), (std::vector<int>{3}));          // node 0
  EXPECT_EQ(Place("first-fit", 2), (std::vector<int>{6, 7}));       // node 1
  EXPECT_EQ(Place("first-fit", 3), (std::vector<int>{8, 9, 10}));   // node 2 (node 3 also fits)
  EXPECT_EQ(Place("first-fit", 4), (std::vector<int>{8, 9, 10, 11}));
}

TEST_F(FragmentedCluster, BestFitTakesTheNodeWithFewestFreeThatFits) {
  EXPECT_EQ(Place("best-fit", 1), (std::vector<int>{3}));           // node 0, 1 free
  EXPECT_EQ(Place("best-fit", 2), (std::vector<int>{6, 7}));        // node 1, 2 free
  EXPECT_EQ(Place("best-fit", 3), (std::vector<int>{13, 14, 15}));  // node 3, 3 free beats 4
}

TEST_F(FragmentedCluster, MultiNodeJobsTakeWholeFreeNodesPlusTheRemainder) {
  // 6 GPUs = 1 whole node + 2. The only whole free node is node 2. Remainder 2:
  // first-fit: lowest other node with >= 2 free = node 1 {6,7};
  // best-fit: fewest free >= 2 = node 1 (2 free) as well.
  EXPECT_EQ(Place("first-fit", 6), (std::vector<int>{6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(Place("best-fit", 6), (std::vector<int>{6, 7, 8, 9, 10, 11}));
  // 7 GPUs = 1 whole + 3: first-fit -> node 3 {13,14,15} (the only other node with >= 3).
  EXPECT_EQ(Place("first-fit", 7), (std::vector<int>{8, 9, 10, 11, 13, 14, 15}));
  // 8 GPUs needs two whole free nodes: only one exists -> does not fit now.
  EXPECT_TRUE(Place("first-fit", 8).empty());
  EXPECT_TRUE(Place("best-fit", 8).empty());
}

TEST_F(FragmentedCluster, PoolTakesTheLowestIndexFreeGpusAnywhere) {
  // Free GPUs: 3, 6, 7, 8..11, 13, 14, 15 (10 in all).
  EXPECT_EQ(Place("pool", 3), (std::vector<int>{3, 6, 7}));
  EXPECT_EQ(Place("pool", 8), (std::vector<int>{3, 6, 7, 8, 9, 10, 11, 13}));
  EXPECT_EQ(Place("pool", 10).size(), 10u);
  EXPECT_TRUE(Place("pool", 11).empty());
}

class MixedCluster : public PlacementTest {
 protected:
  // Node 0: 2 x V100-32GB (GPUs 0,1); node 1: 4 x A100-80GB (GPUs 2..5).
  MixedCluster()
      : PlacementTest(R"({"nodes":[{"count":1,"gpu_type":"V100-32GB","gpus_per_node":2},
                                  {"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}]})") {}
  uint64_t Mask(const char* type) {
    return uint64_t{1} << *HardwareCatalog::Default().Find(type);
  }
};

TEST_F(MixedCluster, AllowedGpuTypesRestrictEveryStrategy) {
  for (const char* s : {"first-fit", "best-fit", "pool"}) {
    EXPECT_EQ(Place(s, 1, Mask("A100-80GB")), (std::vector<int>{2})) << s;
    EXPECT_EQ(Place(s, 2, Mask("V100-32GB")), (std::vector<int>{0, 1})) << s;
    EXPECT_TRUE(Place(s, 3, Mask("V100-32GB")).empty()) << s;
  }
}

TEST_F(MixedCluster, AJobUsesOneGpuTypeEvenWhenTheSumWouldFit) {
  // 5 GPUs: 2 V100 + 4 A100 = 6 free, but no single type has 5.
  for (const char* s : {"first-fit", "best-fit", "pool"}) EXPECT_TRUE(Place(s, 5).empty()) << s;
  // Pool with 3 GPUs: the first type in spec order with enough free is A100 (V100 has 2).
  EXPECT_EQ(Place("pool", 3), (std::vector<int>{2, 3, 4}));
}

TEST(PlacementAtScale, FindingANodeDoesNotScanTheCluster) {
  // 12,500 nodes x 8 GPUs (100,000 GPUs), all busy but the last node: first-fit and best-fit
  // must find it through their indexes. (A correctness check; speed is in bench/.)
  const Cluster cluster(ClusterSpec::FromJsonText(testing::Nodes(12500, 8), "big",
                                                  HardwareCatalog::Default()),
                        HardwareCatalog::Default());
  Resources resources(cluster);
  std::vector<int> busy(99992);
  for (int i = 0; i < 99992; ++i) busy[i] = i;
  resources.Allocate(busy);
  for (const char* s : {"first-fit", "best-fit", "pool"}) {
    const auto placement = FindPlacement(s).make({&cluster, nullptr, nullptr}, {});
    Allocation out;
    PlacementRequest request;
    request.gpus = 8;
    ASSERT_TRUE(placement->Find(resources, request, &out)) << s;
    EXPECT_EQ(out.gpus.front(), 99992) << s;
  }
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

class TopologyPlacementTest : public ::testing::Test {
 protected:
  explicit TopologyPlacementTest(const std::string& spec)
      : cluster_(ClusterSpec::Load(spec, HardwareCatalog::Default()), HardwareCatalog::Default()),
        topology_(cluster_),
        runtime_(MakeRuntimeModel("trace", cluster_, topology_)),
        resources_(cluster_) {}
  std::vector<int> Place(const std::string& strategy, int gpus) {
    const auto placement =
        FindPlacement(strategy).make({&cluster_, &topology_, runtime_.get()}, {});
    Allocation out;
    PlacementRequest request;
    request.gpus = gpus;
    if (!placement->Find(resources_, request, &out)) return {};
    return out.gpus;
  }
  Cluster cluster_;
  Topology topology_;
  std::unique_ptr<RuntimeModel> runtime_;
  Resources resources_;
};

class Dgx1Topology : public TopologyPlacementTest {
 protected:
  Dgx1Topology() : TopologyPlacementTest("dgx1-v100") {}
};

TEST_F(Dgx1Topology, APairGoesOnADoubleNvlinkWhereFirstFitTakesASingleOne) {
  // DGX-1V: GPUs 0-1 share one NVLink (25 GB/s per direction), 0-3 two (50 GB/s). First-fit
  // takes the lowest GPUs {0,1}; topology takes the lowest pair with two links, {0,3}.
  EXPECT_EQ(Place("first-fit", 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(Place("topology", 2), (std::vector<int>{0, 3}));
}

TEST_F(Dgx1Topology, FourGpusTieAtASingleLinkAndTakeTheLowestIndices) {
  // The double NVLinks of a DGX-1V form one 8-cycle, 0-3-2-1-5-6-7-4-0, which contains no
  // 4-cycle: every ring over 4 GPUs uses at least one single link, so at best 25 GB/s.
  // {0,1,2,3} reaches it (ring 0-3-2-1-0: three double links and the single 1-0), and among the
  // tied subsets it has the lowest indices.
  EXPECT_EQ(Place("topology", 4), (std::vector<int>{0, 1, 2, 3}));
}

class RackTopology : public TopologyPlacementTest {
 protected:
  // 4 DGX A100 nodes, 2 per rack, uplinks oversubscribed 4:1. Node 1 (rack 0) has one GPU busy,
  // so the whole free nodes are 0 (rack 0), 2 and 3 (rack 1).
  RackTopology()
      : TopologyPlacementTest(WriteSpec()) {
    std::vector<int> busy = {8};
    resources_.Allocate(busy);
  }
  static std::string WriteSpec() {
    const std::string path = testing::TempPath("racks.json");
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(R"({"nodes":[{"count":4,"gpu_type":"A100-80GB","gpus_per_node":8}],
                  "network":{"nodes_per_rack":2,"oversubscription":4}})",
               f);
    std::fclose(f);
    return path;
  }
};

TEST_F(RackTopology, ASixteenGpuJobStaysUnderOneLeafSwitch) {
  // First-fit takes the two lowest whole free nodes, 0 and 2, across racks; topology takes 2 and
  // 3 in rack 1, whose ring crosses no oversubscribed uplink.
  const auto ff = Place("first-fit", 16);
  ASSERT_EQ(ff.size(), 16u);
  EXPECT_EQ(ff.front(), 0);
  EXPECT_EQ(ff.back(), 23);
  const auto topo = Place("topology", 16);
  ASSERT_EQ(topo.size(), 16u);
  EXPECT_EQ(topo.front(), 16);
  EXPECT_EQ(topo.back(), 31);
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

// fastest-type: a V100 node (GPUs 0-3) listed before an H100 node (GPUs 4-7). Under the
// `hardware` runtime model an H100 runs every model family faster than a V100 (the catalog's
// per-family speedups, sim/data/gpus.json), so the job goes to the H100 node while it has room,
// where first-fit takes the V100 node; with the H100 node full it falls back to the V100s.
class FastestTypeTest : public ::testing::Test {
 protected:
  FastestTypeTest()
      : cluster_(ClusterSpec::FromJsonText(
                     R"({"nodes":[{"count":1,"gpu_type":"V100-16GB","gpus_per_node":4},
                                  {"count":1,"gpu_type":"H100-80GB","gpus_per_node":4}]})",
                     "mixed", HardwareCatalog::Default()),
                 HardwareCatalog::Default()),
        topology_(cluster_),
        runtime_(MakeRuntimeModel("hardware", cluster_, topology_)),
        resources_(cluster_) {
    job_.id = "j";
    job_.gpus = 2;
    job_.model = "BERT-large";
  }
  std::vector<int> Place(const std::string& strategy) {
    const auto placement =
        FindPlacement(strategy).make({&cluster_, &topology_, runtime_.get()}, {});
    Allocation out;
    PlacementRequest request;
    request.gpus = 2;
    request.job = &job_;
    if (!placement->Find(resources_, request, &out)) return {};
    return out.gpus;
  }
  Cluster cluster_;
  Topology topology_;
  std::unique_ptr<RuntimeModel> runtime_;
  Resources resources_;
  Job job_;
};

TEST_F(FastestTypeTest, TakesTheFasterTypeWhileItHasRoomAndFallsBackOtherwise) {
  EXPECT_EQ(Place("first-fit"), (std::vector<int>{0, 1}));
  EXPECT_EQ(Place("fastest-type"), (std::vector<int>{4, 5}));
  resources_.Allocate(std::vector<int>{4, 5, 6});  // one H100 left: not enough for 2
  EXPECT_EQ(Place("fastest-type"), (std::vector<int>{0, 1}));
  resources_.Allocate(std::vector<int>{0, 1, 2});  // one GPU of each type left: no room anywhere
  EXPECT_EQ(Place("fastest-type"), (std::vector<int>{}));
}

// Nodes of 100 GPUs span 64-bit words of the free bits: node 0 holds GPUs 0..99 (words 0 and 1),
// node 1 GPUs 100..199 (words 1, 2 and 3, starting mid-word).
class WideNodes : public PlacementTest {
 protected:
  WideNodes() : PlacementTest(testing::Nodes(2, 100)) {}
  std::vector<int> Lowest(int node, int count) {
    std::vector<int> out = {-1};  // appended after what is there
    resources_.AppendLowestFreeGpus(node, count, &out);
    return out;
  }
  static std::vector<int> Range(int from, int to) {  // from..to-1
    std::vector<int> out;
    for (int g = from; g < to; ++g) out.push_back(g);
    return out;
  }
};

TEST_F(WideNodes, LowestFreeGpusCrossWordsAndStopAtTheNodesEnd) {
  std::vector<int> expected = {-1};
  for (int g : Range(0, 70)) expected.push_back(g);  // a whole word, then 6 of the next
  EXPECT_EQ(Lowest(0, 70), expected);
  // Node 1 starts at bit 36 of word 1: the bits of node 0 below it are not its GPUs.
  expected = {-1};
  for (int g : Range(100, 200)) expected.push_back(g);
  EXPECT_EQ(Lowest(1, 100), expected);
}

TEST_F(WideNodes, LowestFreeGpusSkipTakenOnesInAndAcrossWords) {
  Busy(Range(0, 64));    // word 0 whole
  Busy({64, 66, 99});    // in word 1
  Busy(Range(128, 192)); // node 1: word 2 whole
  std::vector<int> expected = {-1, 65};
  for (int g : Range(67, 99)) expected.push_back(g);  // 65, 67..98: 33 GPUs, all node 0 has
  EXPECT_EQ(Lowest(0, 33), expected);
  expected = {-1};
  for (int g : Range(100, 128)) expected.push_back(g);
  for (int g : Range(192, 200)) expected.push_back(g);  // 28 + 8: node 1's 36 free GPUs
  EXPECT_EQ(Lowest(1, 36), expected);
  expected = {-1};
  for (int g : Range(100, 110)) expected.push_back(g);
  EXPECT_EQ(Lowest(1, 10), expected);
}

TEST_F(WideNodes, TheVersionChangesWithEveryChangeOfTheFreeState) {
  const uint64_t start = resources_.version();
  Busy({3});
  const uint64_t after_allocate = resources_.version();
  EXPECT_NE(after_allocate, start);
  const std::vector<int> three = {3};
  resources_.Release(three);
  EXPECT_NE(resources_.version(), after_allocate);
  const uint64_t before_query = resources_.version();
  Lowest(0, 5);  // queries leave it alone
  EXPECT_EQ(resources_.version(), before_query);
}

}  // namespace
}  // namespace clustersim
