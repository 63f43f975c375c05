// The GPU-type choice of node-aware placements (type_order, policies/node_placement.h) against
// hand computations from the GPU catalog (sim/data/gpus.json). A 1-GPU job without a model is in
// the "other" family and has no all-reduce, so its rate on a type is that type's speedup:
// V100-32GB 1.0, A100-80GB 2.1, H100-80GB 3.4.
#include <gtest/gtest.h>

#include "policies/node_placement.h"
#include "policies/registry.h"
#include "sim/engine/runtime_model.h"
#include "sim/hardware/topology.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

constexpr const char* kThreeTypes = R"({"nodes":[
  {"count":1,"gpu_type":"V100-32GB","gpus_per_node":8},
  {"count":1,"gpu_type":"A100-80GB","gpus_per_node":8},
  {"count":1,"gpu_type":"H100-80GB","gpus_per_node":8}]})";

class TypeOrderTest : public ::testing::Test {
 protected:
  TypeOrderTest()
      : cluster_(ClusterSpec::FromJsonText(kThreeTypes, "t", HardwareCatalog::Default()),
                 HardwareCatalog::Default()),
        topology_(cluster_),
        runtime_(MakeRuntimeModel("hardware", cluster_, topology_)),
        resources_(cluster_) {}

  // The GPU type `placement` with `order` picks for a 1-GPU job on the current state.
  std::string Pick(const std::string& placement, const std::string& order) {
    const auto strategy = FindPlacement(placement).make(
        PlacementEnv{&cluster_, &topology_, runtime_.get()},
        Params(std::map<std::string, std::string>{{"type_order", order}}));
    PlacementRequest request;
    request.gpus = 1;
    request.job = &job_;
    Allocation out;
    if (!strategy->Find(resources_, request, &out)) return "none";
    return cluster_.catalog().gpu(out.gpu_type).name;
  }

  Cluster cluster_;
  Topology topology_;
  std::unique_ptr<RuntimeModel> runtime_;
  Resources resources_;
  Job job_;
};

TEST_F(TypeOrderTest, EachOrderPicksItsTypeOnTheEmptyCluster) {
  for (const char* placement : {"first-fit", "best-fit", "pool", "frag-aware"}) {
    // listed: the spec's first group.
    EXPECT_EQ(Pick(placement, "listed"), "V100-32GB") << placement;
    EXPECT_EQ(Pick(placement, "fastest"), "H100-80GB") << placement;
    // cheapest: price per GPU-hour / rate: V100 3.90 / 1.0 = 3.90, A100 5.12 / 2.1 = 2.44,
    // H100 12.29 / 3.4 = 3.61.
    EXPECT_EQ(Pick(placement, "cheapest"), "A100-80GB") << placement;
    // least-loaded: every type idle, ties in listed order.
    EXPECT_EQ(Pick(placement, "least-loaded"), "V100-32GB") << placement;
  }
  // topology scores by rate first: with `listed` it already picks the fastest type.
  EXPECT_EQ(Pick("topology", "listed"), "H100-80GB");
  EXPECT_EQ(Pick("topology", "cheapest"), "A100-80GB");
}

TEST_F(TypeOrderTest, LeastLoadedFollowsTheBusyShare) {
  const std::vector<int> v100 = {0, 1, 2, 3};  // half the V100s busy
  const std::vector<int> a100 = {8};           // 1/8 of the A100s
  resources_.Allocate(v100);
  resources_.Allocate(a100);
  EXPECT_EQ(Pick("first-fit", "least-loaded"), "H100-80GB");
  const std::vector<int> h100 = {16, 17};  // 2/8 of the H100s: A100 is now least loaded
  resources_.Allocate(h100);
  EXPECT_EQ(Pick("first-fit", "least-loaded"), "A100-80GB");
}

TEST_F(TypeOrderTest, AFullTypeFallsThroughToTheNext) {
  const std::vector<int> h100 = {16, 17, 18, 19, 20, 21, 22, 23};
  resources_.Allocate(h100);
  EXPECT_EQ(Pick("best-fit", "fastest"), "A100-80GB");
  EXPECT_EQ(Pick("pool", "fastest"), "A100-80GB");
}

TEST_F(TypeOrderTest, AnUnknownOrderIsAnError) {
  try {
    Pick("first-fit", "slowest");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("expected listed, fastest, cheapest or least-loaded"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace clustersim
