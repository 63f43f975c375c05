// Tests of the topology graph and its ring queries. Every expected figure is worked out by hand
// from spec-sheet values, with the arithmetic next to it:
// - NVLink per direction = catalog nvlink_gbps / 2 (A100 600 -> 300, H100 900 -> 450, V100 300 ->
//   150 over 6 links = 25 per link).
// - PCIe x16 per direction: gen3 8 GT/s x 16 x 128/130 / 8 = 15.75 GB/s, gen4 31.5, gen5 63.
// - CPU interconnect per direction: gen3 era 2 QPI x 9.6 GT/s x 2 B = 38.4 GB/s.
// - NIC per direction = nic_gbps / 8 (Gbit/s to GB/s).
// Latencies are the model's chosen per-edge figures (topology.cc): GPU-NVSwitch 0.35 us, PCIe
// edge 0.5 us, socket link 1 us, network edge network.latency_us / 4 (default 5 us -> 1.25 us).
#include "sim/hardware/topology.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "sim/hardware/cluster.h"
#include "sim/hardware/hardware.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

// A cluster and its topology; the topology points into the cluster, so neither moves.
struct Fixture {
  explicit Fixture(ClusterSpec spec)
      : cluster(std::move(spec), HardwareCatalog::Default()), topology(cluster) {}
  static ClusterSpec Preset(const std::string& name) {
    return ClusterSpec::Load(name, HardwareCatalog::Default());
  }
  static ClusterSpec Json(const std::string& text) {
    return ClusterSpec::FromJsonText(text, "topology_test", HardwareCatalog::Default());
  }
  Cluster cluster;
  Topology topology;
};

std::vector<int> Range(int first, int count) {
  std::vector<int> gpus(count);
  std::iota(gpus.begin(), gpus.end(), first);
  return gpus;
}

constexpr double kUs = 1e-6;

// ---- Single node, NVSwitch ----

TEST(Topology, DgxA100RingOfEightGpusRunsAtNvlinkPerDirection) {
  const Fixture dgx(Fixture::Preset("dgx-a100"));
  // A100 SXM4: 600 GB/s NVLink both directions -> 300 per direction on each GPU's NVSwitch edge.
  // Every GPU sends once and receives once, so each GPU edge carries one hop per direction.
  EXPECT_DOUBLE_EQ(dgx.topology.RingBandwidthGbps(Range(0, 8)), 300.0);
}

TEST(Topology, DgxA100PairOfGpusRunsAtNvlinkPerDirection) {
  const Fixture dgx(Fixture::Preset("dgx-a100"));
  // 2 -> NVSwitch -> 5 and back: the two hops use each edge in opposite directions: 300.
  const std::vector<int> gpus = {2, 5};
  EXPECT_DOUBLE_EQ(dgx.topology.RingBandwidthGbps(gpus), 300.0);
}

TEST(Topology, DgxH100RingOfEightGpusRunsAtNvlinkPerDirection) {
  const Fixture dgx(Fixture::Preset("dgx-h100"));
  // H100 SXM5: 900 GB/s NVLink both directions -> 450 per direction.
  EXPECT_DOUBLE_EQ(dgx.topology.RingBandwidthGbps(Range(0, 8)), 450.0);
}

TEST(Topology, DgxA100HopLatencyIsTwoNvSwitchEdges) {
  const Fixture dgx(Fixture::Preset("dgx-a100"));
  // GPU -> NVSwitch -> GPU: 0.35 + 0.35 = 0.7 us.
  EXPECT_NEAR(dgx.topology.RingHopLatencySeconds(Range(0, 8)), 0.7 * kUs, 1e-12);
}

// ---- Single node, DGX-1 hybrid cube-mesh ----

TEST(Topology, Dgx1GivesEveryGpuSixNvlinksOf25GbpsPerDirection) {
  const Fixture dgx1(Fixture::Preset("dgx1-v100"));
  // V100: 300 GB/s over 6 NVLink2 links -> 150 per direction per GPU, 25 per link.
  const TopologyGraph& graph = dgx1.topology.graph();
  for (int gpu = 0; gpu < 8; ++gpu) {
    double nvlink_gbps = 0;
    const auto v = dgx1.topology.GpuVertex(gpu);
    for (auto [e, end] = boost::out_edges(v, graph); e != end; ++e) {
      if (graph[boost::target(*e, graph)].kind == VertexKind::kGpu) {
        nvlink_gbps += graph[*e].gbps_per_direction;
      }
    }
    EXPECT_DOUBLE_EQ(nvlink_gbps, 150.0) << "GPU " << gpu;
  }
}

TEST(Topology, Dgx1RingOfEightGpusUsesOnlyDoubleNvlinks) {
  const Fixture dgx1(Fixture::Preset("dgx1-v100"));
  // Ring 0-3-2-1-5-6-7-4-0: every pair is a double link, 2 x 25 = 50 GB/s per direction, each
  // used by one hop per direction. No ring can beat 50: no GPU pair has more than two links.
  EXPECT_DOUBLE_EQ(dgx1.topology.RingBandwidthGbps(Range(0, 8)), 50.0);
}

TEST(Topology, Dgx1FirstFourGpusRunAtASingleLink) {
  const Fixture dgx1(Fixture::Preset("dgx1-v100"));
  // Among {0,1,2,3} the double links are 0-3, 1-2, 2-3 (a path, not a cycle), the single ones
  // 0-1, 0-2, 1-3. Each of the three 4-cycles {01,12,23,30}, {02,21,13,30}, {01,13,32,20} uses a
  // single link: 25 GB/s. (A PCIe detour would be 15.75, narrower.)
  const std::vector<int> gpus = {0, 1, 2, 3};
  EXPECT_DOUBLE_EQ(dgx1.topology.RingBandwidthGbps(gpus), 25.0);
}

TEST(Topology, Dgx1GpusWithoutNvlinkTalkOverPcieAndTheSocketLink) {
  const Fixture dgx1(Fixture::Preset("dgx1-v100"));
  // GPUs 0 and 5 share no NVLink. Path 0 -> pcie0 -> cpu0 -> cpu1 -> pcie2 -> 5 (switches 0,1
  // under socket 0, 2,3 under socket 1): min(15.75, 15.75, 38.4, 15.75, 15.75) = 15.75 GB/s;
  // the return hop uses the same links in the other direction. Forwarding through GPU 4
  // (0-4 double, 4-5 single) would give 25, so 15.75 also shows GPUs are never transit.
  const std::vector<int> gpus = {0, 5};
  EXPECT_DOUBLE_EQ(dgx1.topology.RingBandwidthGbps(gpus), 15.75);
  // Latency: four PCIe edges and the socket link: 4 x 0.5 + 1 = 3 us.
  EXPECT_NEAR(dgx1.topology.RingHopLatencySeconds(gpus), 3.0 * kUs, 1e-12);
}

// ---- Single node, PCIe ----

TEST(Topology, PcieBoxRingOfEightGpusRunsAtPcieGen3) {
  const Fixture box(Fixture::Preset("pcie-v100"));
  // Switches: pcie0 {0,1}, pcie1 {2,3} under cpu0; pcie2 {4,5}, pcie3 {6,7} under cpu1.
  // Ring 0-1-...-7-0: 0->1 and 2->3, 4->5, 6->7 stay under one switch; 1->2 uses pcie0->cpu0 and
  // cpu0->pcie1; 3->4 uses pcie1->cpu0, cpu0->cpu1, cpu1->pcie2; 5->6 uses pcie2->cpu1,
  // cpu1->pcie3; 7->0 uses pcie3->cpu1, cpu1->cpu0, cpu0->pcie0. No directed link is shared:
  // the socket link is crossed once each way (38.4 GB/s, not binding); every GPU edge carries one
  // hop each way. Gen3 x16 = 15.75 GB/s, and no GPU has a wider link, so 15.75 is the best ring.
  EXPECT_DOUBLE_EQ(box.topology.RingBandwidthGbps(Range(0, 8)), 15.75);
}

TEST(Topology, PcieBoxRingAvoidsSharingASwitchUplink) {
  const Fixture box(Fixture::Preset("pcie-v100"));
  // {0,1,4,5}: the interleaved ring 0-4-1-5-0 would send 0->4 and 1->5 both up pcie0->cpu0:
  // 15.75 / 2 = 7.875 GB/s. The ring 0-1-4-5-0 crosses each switch uplink once per direction:
  // 15.75.
  const std::vector<int> gpus = {0, 1, 4, 5};
  EXPECT_DOUBLE_EQ(box.topology.RingBandwidthGbps(gpus), 15.75);
}

// ---- Other GPU counts ----

TEST(Topology, NodesWithOtherGpuCountsStillRoute) {
  // 3 PCIe GPUs: switches pcie0 {0,1} under cpu0, pcie1 {2} under cpu1. Ring 0-1-2-0: 1->2 goes
  // up pcie0 and across cpu0->cpu1, 2->0 comes back cpu1->cpu0 and down: each directed link
  // once: 15.75.
  const Fixture three(Fixture::Json(
      R"({"nodes":[{"count":1,"gpu_type":"V100-PCIe-32GB","gpus_per_node":3,"topology":"pcie"}]})"));
  EXPECT_DOUBLE_EQ(three.topology.RingBandwidthGbps(Range(0, 3)), 15.75);

  // 4 A100 on an NVSwitch: 300.
  const Fixture four(Fixture::Json(
      R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4,"topology":"nvswitch"}]})"));
  EXPECT_DOUBLE_EQ(four.topology.RingBandwidthGbps(Range(0, 4)), 300.0);

  // 16 PCIe GPUs (more than 8: index order): 8 switches, pcie0..3 (GPUs 0-7) under cpu0,
  // pcie4..7 under cpu1. The ring crosses the socket link at 7->8 and 15->0, once each way, and
  // each switch uplink once each way: 15.75.
  const Fixture sixteen(Fixture::Json(
      R"({"nodes":[{"count":1,"gpu_type":"V100-PCIe-32GB","gpus_per_node":16,"topology":"pcie"}]})"));
  EXPECT_DOUBLE_EQ(sixteen.topology.RingBandwidthGbps(Range(0, 16)), 15.75);

  // A single node of 32 A100 on an NVSwitch: all 32 and any 8 of them run at 300.
  const Fixture pool(Fixture::Json(
      R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":32,"topology":"nvswitch"}]})"));
  EXPECT_DOUBLE_EQ(pool.topology.RingBandwidthGbps(Range(0, 32)), 300.0);
  const std::vector<int> spread = {1, 5, 9, 13, 17, 21, 25, 31};
  EXPECT_DOUBLE_EQ(pool.topology.RingBandwidthGbps(spread), 300.0);
}

TEST(Topology, TwoSingleGpuNodesAreLimitedByTheNic) {
  // One A100 per node, 200 Gb/s NIC = 25 GB/s; the GPU's PCIe gen4 x16 (31.5) is wider.
  const Fixture pair(Fixture::Json(
      R"({"nodes":[{"count":2,"gpu_type":"A100-80GB","gpus_per_node":1,"topology":"nvswitch",
          "nic_gbps":200}]})"));
  EXPECT_DOUBLE_EQ(pair.topology.RingBandwidthGbps(Range(0, 2)), 25.0);
}

// ---- Across nodes ----

TEST(Topology, TwoDgxA100NodesAreLimitedByTheNic) {
  const Fixture dgx(Fixture::Preset("dgx-a100"));  // 8 nodes per rack: nodes 0 and 1 share a leaf
  // NIC: 1600 Gb/s / 8 = 200 GB/s per direction. The ring n0 -> n1 -> n0 crosses each NIC-leaf
  // link once per direction. The hop leaving a node spreads over its 8 GPUs' PCIe gen4 links
  // (8 x 31.5 = 252 > 200), and the NVLink segments run at 300, so the NIC binds: 200.
  EXPECT_DOUBLE_EQ(dgx.topology.RingBandwidthGbps(Range(0, 16)), 200.0);
}

TEST(Topology, OneGpuOnEachOfTwoDgxA100NodesIsLimitedByItsPcieLink) {
  const Fixture dgx(Fixture::Preset("dgx-a100"));
  // GPU 0 of node 0 and GPU 0 of node 1 (global 8): each node's traffic leaves through one GPU's
  // PCIe gen4 x16 link, 31.5 GB/s, narrower than the 200 GB/s NIC.
  const std::vector<int> gpus = {0, 8};
  EXPECT_DOUBLE_EQ(dgx.topology.RingBandwidthGbps(gpus), 31.5);
  // Latency: GPU0 -> pcie0 -> NIC (2 x 0.5 us), NIC -> leaf -> NIC (2 x 5/4 us), NIC -> pcie0 ->
  // GPU0 (2 x 0.5 us): 1 + 2.5 + 1 = 4.5 us.
  EXPECT_NEAR(dgx.topology.RingHopLatencySeconds(gpus), 4.5 * kUs, 1e-12);
}

TEST(Topology, NodesInDifferentRacksAreLimitedByTheOversubscribedUplink) {
  const Fixture racks(Fixture::Json(
      R"({"nodes":[{"count":2,"gpu_type":"A100-80GB","gpus_per_node":8,"topology":"nvswitch",
          "nic_gbps":1600}],"network":{"nodes_per_rack":1,"oversubscription":4}})"));
  // One node per rack: each leaf's uplink is 1600 / 8 / 4 = 50 GB/s. The ring crosses
  // leaf0 -> spine -> leaf1 once and back once, so each uplink carries one hop per direction:
  // min(NIC 200, uplink 50) = 50.
  EXPECT_DOUBLE_EQ(racks.topology.RingBandwidthGbps(Range(0, 16)), 50.0);
  // Latency of the cross hop between GPU 0s: 1 us to the NIC, NIC -> leaf -> spine -> leaf -> NIC
  // = 4 x 1.25 = 5 us, 1 us from the NIC: 7 us.
  const std::vector<int> gpus = {0, 8};
  EXPECT_NEAR(racks.topology.RingHopLatencySeconds(gpus), 7.0 * kUs, 1e-12);
}

TEST(Topology, NodesInOneRackAreNotLimitedByTheUplink) {
  const Fixture rack(Fixture::Json(
      R"({"nodes":[{"count":2,"gpu_type":"A100-80GB","gpus_per_node":8,"topology":"nvswitch",
          "nic_gbps":1600}],"network":{"nodes_per_rack":2,"oversubscription":4}})"));
  // Both NICs on one leaf: traffic never reaches the spine, so the NIC binds: 1600 / 8 = 200.
  EXPECT_DOUBLE_EQ(rack.topology.RingBandwidthGbps(Range(0, 16)), 200.0);
}

TEST(Topology, SixtyFourGpusOverEightDgxA100NodesRunAtTheNic) {
  const Fixture dgx(Fixture::Preset("dgx-a100"));
  // Nodes 0-7 fill rack 0. The ring visits them in order, each NIC-leaf link carries one hop per
  // direction: 200 GB/s.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_DOUBLE_EQ(dgx.topology.RingBandwidthGbps(Range(0, 64)), 200.0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(Topology, DefaultMixedClusterRingIsLimitedByTheSlowestNic) {
  const Fixture mixed(Fixture::Preset("default"));
  // All 144 GPUs. Per node: DGX-1 segments 50 (double links), PCIe segments 15.75, A100 300,
  // H100 450. NICs: DGX-1 400/8 = 50, PCIe box 100/8 = 12.5, A100 200, H100 400. Uplinks
  // (6 nodes per rack, oversubscription 2): rack0 6 x 50 / 2 = 150, rack1 (4 x 12.5 + 2 x 200) / 2
  // = 225, rack2 (4 x 200 + 2 x 400) / 2 = 800, each crossed once per direction. Minimum: 12.5.
  EXPECT_DOUBLE_EQ(mixed.topology.RingBandwidthGbps(Range(0, 144)), 12.5);
}

// ---- Contracts ----

TEST(Topology, FewerThanTwoGpusHaveInfiniteBandwidthAndNoHopLatency) {
  const Fixture dgx(Fixture::Preset("dgx-a100"));
  const std::vector<int> none;
  const std::vector<int> one = {3};
  EXPECT_EQ(dgx.topology.RingBandwidthGbps(none), std::numeric_limits<double>::infinity());
  EXPECT_EQ(dgx.topology.RingBandwidthGbps(one), std::numeric_limits<double>::infinity());
  EXPECT_EQ(dgx.topology.RingHopLatencySeconds(one), 0.0);
}

TEST(Topology, ResultDoesNotDependOnTheOrderTheGpusArePassedIn) {
  const Fixture dgx1(Fixture::Preset("dgx1-v100"));
  const std::vector<int> sorted = {0, 1, 2, 3, 5, 8, 9, 13};
  std::vector<int> shuffled = {13, 5, 0, 9, 3, 8, 1, 2};
  EXPECT_EQ(dgx1.topology.RingBandwidthGbps(sorted), dgx1.topology.RingBandwidthGbps(shuffled));
  EXPECT_EQ(dgx1.topology.RingHopLatencySeconds(sorted),
            dgx1.topology.RingHopLatencySeconds(shuffled));
  std::reverse(shuffled.begin(), shuffled.end());
  EXPECT_EQ(dgx1.topology.RingBandwidthGbps(sorted), dgx1.topology.RingBandwidthGbps(shuffled));
}

TEST(Topology, DuplicateGpuIsABug) {
  const Fixture dgx(Fixture::Preset("dgx-a100"));
  const std::vector<int> gpus = {1, 1};
  EXPECT_THROW(dgx.topology.RingBandwidthGbps(gpus), InternalError);
}

TEST(Topology, DgxA100NodeHasGpusNvSwitchFourPcieSwitchesTwoSocketsAndANic) {
  const Fixture dgx(Fixture::Json(
      R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":8,"topology":"nvswitch"}]})"));
  // 8 GPUs + 1 NVSwitch + 4 PCIe switches + 2 sockets + 1 NIC + 1 leaf + 1 spine = 18 vertices.
  // Edges: 8 NVSwitch + 8 GPU-PCIe + 4 PCIe-socket + 1 socket-socket + 1 NIC-PCIe + 1 NIC-leaf
  // + 1 leaf-spine = 24.
  EXPECT_EQ(boost::num_vertices(dgx.topology.graph()), 18u);
  EXPECT_EQ(boost::num_edges(dgx.topology.graph()), 24u);
}

TEST(Topology, DotOutputLabelsEveryKindOfVertexAndEdgeBandwidths) {
  const Fixture dgx(Fixture::Preset("dgx-a100"));
  std::ostringstream dot;
  dgx.topology.WriteDot(dot);
  const std::string text = dot.str();
  EXPECT_EQ(text.rfind("graph topology {", 0), 0u);
  for (const char* label : {"\"n0/gpu3\"", "\"n1/gpu7\"", "\"n0/nvswitch\"", "\"n0/pcie0\"",
                            "\"n0/cpu1\"", "\"n0/nic\"", "\"rack0/leaf\"", "\"rack1/leaf\"",
                            "\"spine\"", "\"300 GB/s\"", "\"31.5 GB/s\"", "\"200 GB/s\""}) {
    EXPECT_NE(text.find(label), std::string::npos) << label;
  }
  EXPECT_EQ(text.back(), '\n');
  EXPECT_NE(text.find("}\n"), std::string::npos);
}

}  // namespace
}  // namespace clustersim
