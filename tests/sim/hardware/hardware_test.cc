// The hardware catalog and cluster specs.
#include "sim/hardware/hardware.h"

#include <gtest/gtest.h>

#include "sim/hardware/cluster.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

TEST(HardwareCatalog, HoldsTheRequiredGpuTypesWithSpecSheetFigures) {
  const HardwareCatalog& catalog = HardwareCatalog::Default();
  for (const char* name : {"V100-16GB", "V100-32GB", "V100-PCIe-16GB", "V100-PCIe-32GB",
                           "A100-40GB", "A100-80GB", "H100-80GB", "H100-PCIe-80GB"}) {
    EXPECT_TRUE(catalog.Find(name).has_value()) << name;
  }
  // Vendor data sheets (docs/cluster.md#hardware-catalog): V100 SXM2 125 TFLOP/s, 900 GB/s, NVLink2
  // 300 GB/s, 300 W; A100 SXM4 80GB 312 TFLOP/s, 2,039 GB/s, NVLink3 600 GB/s, 400 W;
  // H100 SXM5 989 TFLOP/s, 3,350 GB/s, NVLink4 900 GB/s, 700 W.
  const GpuSpec& v100 = catalog.gpu(*catalog.Find("V100-16GB"));
  EXPECT_EQ(v100.fp16_tflops, 125);
  EXPECT_EQ(v100.memory_bandwidth_gbps, 900);
  EXPECT_EQ(v100.nvlink_gbps, 300);
  EXPECT_EQ(v100.tdp_watts, 300);
  const GpuSpec& a100 = catalog.gpu(*catalog.Find("A100-80GB"));
  EXPECT_EQ(a100.fp16_tflops, 312);
  EXPECT_EQ(a100.memory_bandwidth_gbps, 2039);
  EXPECT_EQ(a100.nvlink_gbps, 600);
  EXPECT_EQ(a100.tdp_watts, 400);
  EXPECT_EQ(a100.memory_gib, 80);
  const GpuSpec& h100 = catalog.gpu(*catalog.Find("H100-80GB"));
  EXPECT_EQ(h100.fp16_tflops, 989);
  EXPECT_EQ(h100.memory_bandwidth_gbps, 3350);
  EXPECT_EQ(h100.nvlink_gbps, 900);
  EXPECT_EQ(h100.tdp_watts, 700);
  for (const GpuSpec& g : catalog.gpus()) EXPECT_FALSE(g.source.empty()) << g.name;
}

TEST(HardwareCatalog, UnknownGpuTypeErrorListsTheValidNames) {
  try {
    HardwareCatalog::Default().Require("B200", "spec.json", "nodes[0].gpu_type");
    FAIL();
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("B200"), std::string::npos);
    EXPECT_NE(what.find("A100-80GB"), std::string::npos);
    EXPECT_NE(what.find("H100-80GB"), std::string::npos);
  }
}

TEST(ClusterSpec, TheMinimalPoolSpecIsValid) {
  const auto& catalog = HardwareCatalog::Default();
  const Cluster cluster(ClusterSpec::FromJsonText(
                            R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":32}]})",
                            "pool.json", catalog),
                        catalog);
  EXPECT_EQ(cluster.node_count(), 1);
  EXPECT_EQ(cluster.total_gpus(), 32);
  EXPECT_FALSE(cluster.IsHeterogeneous());
}

// A spot group beside an on-demand group of its GPU type gets a copy of the type
// (docs/autoscaling.md#spot-placement): two types, one kind of hardware, so runs keep the trace
// runtime model by default as on the same cluster without spot.
TEST(ClusterSpec, ACopyOfAGpuTypeIsNotAnotherKindOfHardware) {
  const auto& catalog = HardwareCatalog::Default();
  const Cluster cluster(
      ClusterSpec::FromJsonText(
          R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":8},
              {"count":1,"gpu_type":"A100-80GB","gpus_per_node":8,
               "spot":{"price_per_gpu_hour":1.5,"interruptions_per_hour":0.1}}]})",
          "spot.json", catalog),
      catalog);
  EXPECT_EQ(cluster.gpu_types().size(), 2u);
  EXPECT_FALSE(cluster.IsHeterogeneous());
}

TEST(ClusterSpec, NodesAndGpusAreIndexedInSpecOrder) {
  const auto& catalog = HardwareCatalog::Default();
  const Cluster cluster(ClusterSpec::FromJsonText(R"({"nodes":[
        {"count":2,"gpu_type":"H100-80GB","gpus_per_node":8},
        {"count":1,"gpu_type":"V100-32GB","gpus_per_node":4}],
        "network":{"nodes_per_rack":2}})",
                                                  "mixed.json", catalog),
                        catalog);
  ASSERT_EQ(cluster.node_count(), 3);
  EXPECT_EQ(cluster.node(0).gpu_type, *catalog.Find("H100-80GB"));
  EXPECT_EQ(cluster.node(2).gpu_type, *catalog.Find("V100-32GB"));
  EXPECT_EQ(cluster.node(2).first_gpu, 16);
  EXPECT_EQ(cluster.NodeOfGpu(15), 1);
  EXPECT_EQ(cluster.NodeOfGpu(19), 2);
  EXPECT_EQ(cluster.node(2).rack, 1);
  EXPECT_EQ(cluster.rack_count(), 2);
  EXPECT_TRUE(cluster.IsHeterogeneous());
  EXPECT_EQ(cluster.GpusOfType(*catalog.Find("H100-80GB")), 16);
  // SXM5 defaults to NVSwitch; V100 SXM2 with 4 GPUs is not a DGX-1 cube-mesh.
  EXPECT_EQ(cluster.node(0).topology, NodeTopology::kNvSwitch);
}

TEST(ClusterSpec, PresetsLoadByName) {
  const auto& catalog = HardwareCatalog::Default();
  for (const auto& name : ClusterSpec::PresetNames()) {
    const Cluster cluster(ClusterSpec::Load(name, catalog), catalog);
    EXPECT_GT(cluster.total_gpus(), 0) << name;
  }
  const Cluster dgx1(ClusterSpec::Load("dgx1-v100", catalog), catalog);
  EXPECT_EQ(dgx1.node(0).topology, NodeTopology::kHybridCubeMesh);
  EXPECT_TRUE(ClusterSpec::Load("default", catalog).groups.size() > 1);
}

TEST(ClusterSpec, BadSpecsNameTheProblem) {
  const auto& catalog = HardwareCatalog::Default();
  auto error_of = [&](const std::string& text) -> std::string {
    try {
      ClusterSpec::FromJsonText(text, "c.json", catalog);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB"}]})").find("gpus_per_node"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"nodes":[{"count":0,"gpu_type":"A100-80GB","gpus_per_node":8}]})")
                .find("positive integer"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"nodes":[]})").find("non-empty"), std::string::npos);
  EXPECT_NE(error_of(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":8,
              "topology":"torus"}]})")
                .find("torus"),
            std::string::npos);
  // Syntax error on line 2, column 3.
  const std::string syntax = error_of("{\"nodes\":\n  ]");
  EXPECT_NE(syntax.find("c.json:2:3"), std::string::npos) << syntax;
}

// Node pools (docs/autoscaling.md#the-cluster-spec): a pool expands into `max` nodes of which
// the first `count` start provisioned; prices default to the GPU type's catalog price.
TEST(ClusterSpec, APoolExpandsIntoItsMaxNodesWithTheFirstCountProvisioned) {
  const auto& catalog = HardwareCatalog::Default();
  const Cluster cluster(
      ClusterSpec::FromJsonText(
          R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":8},
              {"count":1,"gpu_type":"A100-80GB","gpus_per_node":8,"price_per_gpu_hour":2.5,
               "autoscale":{"min":0,"max":3,"provision_seconds":"5min"}}]})",
          "c.json", catalog),
      catalog);
  ASSERT_EQ(cluster.node_count(), 4);  // 1 fixed + 3 pool nodes
  EXPECT_TRUE(cluster.has_pools());
  EXPECT_FALSE(cluster.node(0).pool);
  EXPECT_TRUE(cluster.node(1).pool && cluster.node(1).starts_provisioned);
  EXPECT_TRUE(cluster.node(2).pool && !cluster.node(2).starts_provisioned);
  EXPECT_FALSE(cluster.node(3).starts_provisioned);
  const AutoscaleSpec& a = cluster.spec().groups[1].autoscale;
  EXPECT_DOUBLE_EQ(a.provision_seconds, 300);
  EXPECT_DOUBLE_EQ(a.idle_seconds, 600);  // CA's scale-down-unneeded-time default
  EXPECT_DOUBLE_EQ(cluster.GroupPrice(1), 2.5);
  EXPECT_DOUBLE_EQ(cluster.GroupPrice(0), 5.12);  // gpus.json: AWS p4de.24xlarge / 8 GPUs
}

TEST(ClusterSpec, BadPoolsNameTheProblem) {
  const auto& catalog = HardwareCatalog::Default();
  auto error_of = [&](const std::string& group) -> std::string {
    try {
      ClusterSpec::FromJsonText(R"({"nodes":[{"gpu_type":"A100-80GB","gpus_per_node":8,)" +
                                    group + "}]}",
                                "c.json", catalog);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(R"("count":0,"autoscale":{"min":0,"max":2,"idle_secs":5})")
                .find("did you mean \"idle_seconds\""),
            std::string::npos)
      << error_of(R"("count":0,"autoscale":{"min":0,"max":2,"idle_secs":5})");
  EXPECT_NE(error_of(R"("count":3,"autoscale":{"min":0,"max":2})").find("autoscale.max (2)"),
            std::string::npos);
  EXPECT_NE(error_of(R"("count":0,"autoscale":{"min":1,"max":2})").find("autoscale.min (1)"),
            std::string::npos);
  EXPECT_NE(error_of(R"("count":0,"autoscale":{"min":3,"max":2})").find(">= min"),
            std::string::npos);
  EXPECT_NE(error_of(R"("count":0,"autoscale":{"min":0,"max":1e300})").find("1000000"),
            std::string::npos);
  EXPECT_NE(error_of(R"("count":0,"autoscale":{"min":0,"max":2,"provision_seconds":-1})")
                .find("365 days"),
            std::string::npos);
  EXPECT_NE(error_of(R"("count":1,"price_per_gpu_hour":-2)").find("price"), std::string::npos);
  EXPECT_NE(error_of(R"("count":1,"autoscal":{})").find("did you mean \"autoscale\""),
            std::string::npos);
  EXPECT_NE(error_of(R"("count":0,"spares":1,"autoscale":{"min":0,"max":2})").find("hot spares"),
            std::string::npos);
  // A provisioning range: [low, high] durations, low <= high, only "uniform".
  EXPECT_NE(error_of(R"("count":0,"autoscale":{"min":0,"max":2,"provision_seconds":{"uniform":[600,300]}})")
                .find("low <= high"),
            std::string::npos);
  EXPECT_NE(error_of(R"("count":0,"autoscale":{"min":0,"max":2,"provision_seconds":{"uniform":[300]}})")
                .find("[low, high]"),
            std::string::npos);
  EXPECT_NE(error_of(R"("count":0,"autoscale":{"min":0,"max":2,"provision_seconds":{"uniform":[0,1e300]}})")
                .find("365 days"),
            std::string::npos);
  EXPECT_NE(error_of(R"("count":0,"autoscale":{"min":0,"max":2,"provision_seconds":{"unifrom":[1,2]}})")
                .find("did you mean \"uniform\""),
            std::string::npos);
}

TEST(ClusterSpec, AProvisioningRangeKeepsItsBoundsAndRoundTrips) {
  const auto& catalog = HardwareCatalog::Default();
  const ClusterSpec spec = ClusterSpec::FromJsonText(
      R"({"nodes":[{"count":0,"gpu_type":"A100-80GB","gpus_per_node":8,
          "autoscale":{"min":0,"max":3,"provision_seconds":{"uniform":["3min","15min"]}}}]})",
      "c.json", catalog);
  EXPECT_DOUBLE_EQ(spec.groups[0].autoscale.provision_seconds, 180);
  EXPECT_DOUBLE_EQ(spec.groups[0].autoscale.provision_max_seconds, 900);
  const ClusterSpec again = ClusterSpec::FromJsonText(
      ClusterSpecJson(spec.groups, spec.network, spec.storage), "again.json", catalog);
  EXPECT_DOUBLE_EQ(again.groups[0].autoscale.provision_seconds, 180);
  EXPECT_DOUBLE_EQ(again.groups[0].autoscale.provision_max_seconds, 900);
}

}  // namespace
}  // namespace clustersim
