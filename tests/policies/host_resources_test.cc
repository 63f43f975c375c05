// CPUs and host memory as resources (docs/resources.md): the charge rule, placements that skip
// nodes short of CPUs, rejection naming the dimension, and the metrics of real allocations, each
// against a hand computation.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "policies/node_placement.h"
#include "sim/engine/fragmentation.h"
#include "sim/engine/resources.h"
#include "sim/engine/summary.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::TestSim;

using testing::kTwoHostNodes;  // 2 x 8 A100s, 32 CPUs and 256 GiB each

Job WithHost(Job job, double cpus, double memory_gib = 0) {
  job.cpu_milli = static_cast<int>(std::lround(cpus * 1000));
  job.memory_mib = static_cast<int>(std::lround(memory_gib * 1024));
  return job;
}

Cluster MakeCluster(const char* json) {
  return Cluster(ClusterSpec::FromJsonText(json, "test", HardwareCatalog::Default()),
                 HardwareCatalog::Default());
}

TEST(HostCharge, StatedDemandsSplitByGpusUnstatedOnesFollowTheNodeShare) {
  const Cluster cluster = MakeCluster(kTwoHostNodes);
  const Node& node = cluster.node(0);  // 32,000 milli-cores, 262,144 MiB, 8 GPUs
  // Unstated: the node's share of 2 of its 8 GPUs.
  HostCharge c = HostChargeOn(node, HostDemand{}, 2, 2, 0);
  EXPECT_EQ(c.cpu_milli, 8000);
  EXPECT_EQ(c.memory_mib, 65536);
  // Unstated, a share of 250 thousandths of one GPU: 32,000 x 250 / 8,000 = 1,000.
  c = HostChargeOn(node, HostDemand{}, 1, 1, 250);
  EXPECT_EQ(c.cpu_milli, 1000);
  // Stated 10 cores over 4 GPUs, 3 of them here: ceil(10,000 x 3 / 4) = 7,500.
  c = HostChargeOn(node, HostDemand{10000, 1000}, 3, 4, 0);
  EXPECT_EQ(c.cpu_milli, 7500);
  EXPECT_EQ(c.memory_mib, 750);
  // ceil(1,001 x 1 / 2) = 501: the split rounds up.
  EXPECT_EQ(HostChargeOn(node, HostDemand{1001, 0}, 1, 2, 0).cpu_milli, 501);
  // A node that declares no CPUs is never charged.
  const Cluster bare = MakeCluster(testing::Nodes(1, 8).c_str());
  EXPECT_EQ(HostChargeOn(bare.node(0), HostDemand{10000, 0}, 1, 1, 0).cpu_milli, 0);
}

TEST(HostCharge, ResourcesTrackTheChargesOnlyWhenLimitsAreOn) {
  const Cluster cluster = MakeCluster(kTwoHostNodes);
  Resources resources(cluster);
  EXPECT_FALSE(resources.host_limited());
  EXPECT_TRUE(resources.HostFitsJob(0, HostDemand{100000, 0}, 1, 1));  // nothing tracked
  resources.EnableHostLimits();
  EXPECT_EQ(resources.free_cpu_milli(1), 32000);
  EXPECT_EQ(resources.free_memory_mib(1), 262144);
  const std::vector<int> gpus = {0, 1};  // node 0
  resources.AllocateJob(HostDemand{30000, 1024}, gpus, 0);
  EXPECT_EQ(resources.free_cpu_milli(0), 2000);
  EXPECT_EQ(resources.free_memory_mib(0), 262144 - 1024);
  EXPECT_FALSE(resources.HostFitsJob(0, HostDemand{3000, 0}, 1, 1));
  EXPECT_TRUE(resources.HostFitsJob(0, HostDemand{2000, 0}, 1, 1));
  // An unstated 1-GPU job needs 4,000 here: does not fit although 6 GPUs are free.
  EXPECT_FALSE(resources.HostFitsJob(0, HostDemand{}, 1, 1));
  resources.ReleaseJob(HostDemand{30000, 1024}, gpus, 0);
  EXPECT_EQ(resources.free_cpu_milli(0), 32000);
  EXPECT_EQ(resources.total_free(), 16);
}

// best-fit's node search under host limits steps over the nodes of a free-GPU count whose free
// CPUs cannot take the job (Partition::cpu_by_free). Five nodes of 8 A100s and 32 CPUs (GPUs
// 8k..8k+7) and a sixth that declares no CPUs (GPUs 40-47), all in one partition. Held:
// node 0 6 GPUs and 30 CPUs (2 free GPUs, 2 CPUs), node 1 6 and 31 (2, 1), node 2 5 and 28
// (3, 4), node 3 5 and 20 (3, 12). A job of 2 GPUs and 8 CPUs: the fewest free GPUs that fit are
// node 0's and node 1's 2, short of CPUs; then node 2's 3, short; then node 3's 3 with 12 CPUs:
// GPUs 29 and 30. Fails if the index skips a node that fits or keeps a node's old bucket or CPUs.
TEST(HostLimits, BestFitStepsOverNodesWithTheGpusButNotTheCpus) {
  const Cluster cluster = MakeCluster(
      R"({"nodes":[{"count":5,"gpu_type":"A100-80GB","gpus_per_node":8,"cpus":32,)"
      R"("host_memory_gib":256},{"count":1,"gpu_type":"A100-80GB","gpus_per_node":8}]})");
  Resources resources(cluster);
  resources.EnableHostLimits();
  const auto hold = [&](int first_gpu, int gpus, int cpus) {
    std::vector<int> held;
    for (int g = first_gpu; g < first_gpu + gpus; ++g) held.push_back(g);
    resources.AllocateJob(HostDemand{cpus * 1000, 0}, held, 0);
    return held;
  };
  hold(0, 6, 30);
  hold(8, 6, 31);
  const std::vector<int> on_node2 = hold(16, 5, 28);
  hold(24, 5, 20);
  PlacementRequest request;
  request.gpus = 2;
  request.host = HostDemand{8000, 0};
  Allocation out;
  ASSERT_TRUE(PlaceOnNodes(resources, request, NodeRule::kBestFit, &out));
  EXPECT_EQ(out.gpus, (std::vector<int>{29, 30}));
  // Node 2's job ends and one of 6 GPUs and 20 CPUs starts there: 2 free GPUs and 12 CPUs, the
  // fewest free GPUs that take the job: GPUs 22 and 23.
  resources.ReleaseJob(HostDemand{28000, 0}, on_node2, 0);
  hold(16, 6, 20);
  ASSERT_TRUE(PlaceOnNodes(resources, request, NodeRule::kBestFit, &out));
  EXPECT_EQ(out.gpus, (std::vector<int>{22, 23}));
  // 40 CPUs: more than any node declares; only node 5, whose CPUs are not counted, takes it.
  request.host = HostDemand{40000, 0};
  ASSERT_TRUE(PlaceOnNodes(resources, request, NodeRule::kBestFit, &out));
  EXPECT_EQ(out.gpus, (std::vector<int>{40, 41}));
}

// Hand schedule under fcfs / first-fit: A takes 30 of node 0's 32 CPUs with 1 GPU; B (1 GPU, 8
// CPUs) fits node 0's GPUs but not its 2 CPUs left, so it goes to node 1; C (4 GPUs, 30 CPUs)
// fits neither node's CPUs (2 and 24 left) and waits for A's end at 100.
TEST(HostLimits, CpusNotGpusBlockAJob) {
  std::vector<Job> jobs = {WithHost(MakeJob("A", 0, 1, 100), 30),
                           WithHost(MakeJob("B", 1, 1, 200), 8),
                           WithHost(MakeJob("C", 2, 4, 50), 30)};
  TestSim sim(kTwoHostNodes, jobs);
  Engine& engine = sim.Run();
  ASSERT_TRUE(engine.host_limited());
  testing::ExpectInterval(sim.Of("A"), 0, 100);
  testing::ExpectInterval(sim.Of("B"), 1, 201);
  testing::ExpectInterval(sim.Of("C"), 100, 150);
  const Metrics& m = engine.metrics();
  // CPU-stranded GPUs: the smallest stated demand per GPU is C's 7,500 milli-cores. Node 0 has
  // 2,000 free while A runs (7 idle GPUs, [0, 100)) and while C runs (4 idle GPUs, [100, 150));
  // node 1 keeps 24,000 free: never stranded. 7 x 100 + 4 x 50 = 900 GPU-seconds over [0, 201].
  EXPECT_DOUBLE_EQ(m.cpu_stranded_gpu_seconds(), 900);
  // CPU cores held: 30 on [0,1), 38 on [1,150), 8 on [150,201): 30 + 149 x 38 + 51 x 8 = 6,100.
  EXPECT_DOUBLE_EQ(m.cpu_used_core_seconds(), 6100);
  EXPECT_DOUBLE_EQ(m.cpu_capacity_cores(), 64);
  const auto summary = ComputeSummary(engine);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "cpu_stranded_gpus_mean"), 900.0 / 201);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "cpu_utilization"), 6100.0 / (64 * 201));
}

TEST(HostLimits, WithoutStatedDemandsNothingChanges) {
  // The same GPU requests with no CPUs stated: no limits, and the hand schedule of GPUs alone
  // (C starts at 2 on node 0 beside A).
  std::vector<Job> jobs = {MakeJob("A", 0, 1, 100), MakeJob("B", 1, 1, 200),
                           MakeJob("C", 2, 4, 50)};
  TestSim sim(kTwoHostNodes, jobs);
  Engine& engine = sim.Run();
  EXPECT_FALSE(engine.host_limited());
  testing::ExpectInterval(sim.Of("C"), 2, 52);
  // CPU utilization still follows the default charge: 4,000 milli-cores per GPU held.
  // GPUs held: 1 on [0,1), 2 on [1,2), 6 on [2,52), 2 on [52,100), 1 on [100,201).
  const double gpu_seconds = 1 + 2 + 6 * 50 + 2 * 48 + 1 * 101;
  EXPECT_DOUBLE_EQ(engine.metrics().cpu_used_core_seconds(), 4 * gpu_seconds);
  EXPECT_TRUE(std::isnan(SummaryValue(ComputeSummary(engine), "cpu_stranded_gpus_mean")));
}

TEST(HostLimits, AnUnstatedJobIsChargedItsShareOfTheNode) {
  // A holds 30 CPUs of node 0; D states nothing and needs 32 / 8 = 4 CPUs for its GPU: node 1.
  std::vector<Job> jobs = {WithHost(MakeJob("A", 0, 1, 100), 30), MakeJob("D", 1, 1, 10)};
  EngineOptions options;
  options.stop_time = 5;  // D still runs: its allocation is held
  TestSim sim(kTwoHostNodes, jobs, "fcfs", "first-fit", options);
  sim.Run();
  ASSERT_EQ(sim.ActiveOf("D").allocation.gpus.size(), 1u);
  EXPECT_EQ(sim.cluster().NodeOfGpu(sim.ActiveOf("D").allocation.gpus[0]), 1);
}

TEST(HostLimits, AJobNoNodeCanHoldIsRejectedNamingTheDimension) {
  std::vector<Job> jobs = {WithHost(MakeJob("cpu", 0, 1, 10), 40),
                           WithHost(MakeJob("memory", 0, 1, 10), 1, 300),
                           WithHost(MakeJob("both", 0, 1, 10), 33, 257),
                           // 16 GPUs on two nodes: 64 CPUs are 32 per node (fits), 66 are 33.
                           WithHost(MakeJob("wide-fits", 1, 16, 10), 64),
                           WithHost(MakeJob("wide-too-many", 1, 16, 10), 66)};
  TestSim sim(kTwoHostNodes, jobs);
  sim.Run();
  EXPECT_EQ(sim.Of("cpu").state, JobState::kRejected);
  EXPECT_EQ(sim.ReasonOf("cpu"),
            "requests 1 GPUs with 40 CPUs (at most 32 per node of an allowed type); no placement "
            "exists on this cluster");
  EXPECT_NE(sim.ReasonOf("memory").find("300 GiB of host memory (at most 256 GiB"),
            std::string::npos)
      << sim.ReasonOf("memory");
  EXPECT_NE(sim.ReasonOf("both").find("33 CPUs"), std::string::npos);
  EXPECT_NE(sim.ReasonOf("both").find("257 GiB"), std::string::npos);
  EXPECT_EQ(sim.Of("wide-fits").state, JobState::kCompleted);
  EXPECT_EQ(sim.Of("wide-too-many").state, JobState::kRejected);
}

// Node imbalance F from the real vectors: A alone on node 0 of two holds u = 1/8 of the GPUs and
// GPU memory, 30/32 of the CPUs and no network: mean 0.296875, population variance
// (2 x 0.171875^2 + 0.640625^2 + 0.296875^2) / 4 = 0.139404296875; node 1 idle; F = std / 2.
TEST(HostLimits, NodeImbalanceReadsTheCpusHeld) {
  TestSim sim(kTwoHostNodes, {WithHost(MakeJob("A", 0, 1, 100), 30)});
  const Engine& engine = sim.Run();
  EXPECT_NEAR(engine.metrics().node_imbalance_seconds() / 100, std::sqrt(0.139404296875) / 2,
              1e-12);
}

// weighted's batch allocator counts GPUs only. Two nodes of 8 GPUs and 32 CPUs. A (2 GPUs,
// 30 CPUs, t=0) takes node 0, the fullest (ties: lower index), leaving it 6 GPUs and 2 CPUs; Q
// (4 GPUs, 4 CPUs, t=1) takes node 1 (8 free against 6), leaving 4 GPUs and 28 CPUs. B (1 GPU,
// 8 CPUs, t=2): first-fit decreasing puts it on the fullest node, node 0, whose 2 CPUs cannot
// take it; the run's placement then finds node 1, and B starts at once. (Skipped instead, B
// would wait for A's end at 100, the allocator choosing node 0 at every pass.)
TEST(HostLimits, WeightedPlacesAJobItsAllocatorPutOnANodeShortOfCpus) {
  std::vector<Job> jobs = {WithHost(MakeJob("A", 0, 2, 100), 30),
                           WithHost(MakeJob("Q", 1, 4, 100), 4),
                           WithHost(MakeJob("B", 2, 1, 10), 8)};
  EngineOptions options;
  options.stop_time = 5;  // while all three run
  TestSim sim(kTwoHostNodes, jobs, "weighted", "first-fit", options, "trace",
              Params(std::map<std::string, std::string>{{"allocator", "greedy"}}));
  sim.Run();
  const Cluster& cluster = sim.cluster();
  EXPECT_EQ(cluster.NodeOfGpu(sim.ActiveOf("A").allocation.gpus[0]), 0);
  EXPECT_EQ(cluster.NodeOfGpu(sim.ActiveOf("Q").allocation.gpus[0]), 1);
  EXPECT_EQ(sim.Of("B").first_start, 2);
  ASSERT_EQ(sim.ActiveOf("B").allocation.gpus.size(), 1u);
  EXPECT_EQ(cluster.NodeOfGpu(sim.ActiveOf("B").allocation.gpus[0]), 1);
}

class HostPlacement : public ::testing::TestWithParam<std::string> {};

// Every placement skips a node short of CPUs: A (14 of 16 CPUs) leaves its node 2 CPUs, so B
// (4 CPUs) must go to the other node whatever the placement's rule; C (20 CPUs) fits nowhere.
TEST_P(HostPlacement, SkipsNodesShortOfCpus) {
  constexpr const char* kSmall =
      R"({"nodes":[{"count":2,"gpu_type":"A100-80GB","gpus_per_node":4,"cpus":16}]})";
  std::vector<Job> jobs = {WithHost(MakeJob("A", 0, 1, 100), 14),
                           WithHost(MakeJob("B", 1, 1, 100), 4),
                           WithHost(MakeJob("C", 2, 1, 100), 20)};
  // Stopped at 50, while A and B run: their allocations are still held.
  EngineOptions options;
  options.stop_time = 50;
  TestSim sim(kSmall, jobs, "fcfs", GetParam(), options);
  sim.Run();
  const Cluster& cluster = sim.cluster();
  ASSERT_EQ(sim.ActiveOf("A").allocation.gpus.size(), 1u);
  ASSERT_EQ(sim.ActiveOf("B").allocation.gpus.size(), 1u) << GetParam();
  EXPECT_EQ(sim.Of("B").first_start, 1);
  EXPECT_NE(cluster.NodeOfGpu(sim.ActiveOf("A").allocation.gpus[0]),
            cluster.NodeOfGpu(sim.ActiveOf("B").allocation.gpus[0]))
      << GetParam();
  EXPECT_EQ(sim.Of("C").state, JobState::kRejected);
}

INSTANTIATE_TEST_SUITE_P(EveryPlacement, HostPlacement,
                         ::testing::Values("first-fit", "best-fit", "pool", "topology",
                                           "frag-aware"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

// 3 nodes x 8 A100s with 32 CPUs each. C (no GPUs, 20 CPUs, 100 s) at 0 holds 20 CPUs of node 0,
// whose GPUs stay free. J (16 GPUs, 32 CPUs, 100 s) at 1 needs two whole nodes with 16 CPUs free
// each (its CPUs split by its GPUs): node 0 has 12, so J takes nodes 1 and 2 (GPUs 8-23) at once.
// K (8 GPUs, 16 CPUs, 10 s) at 2 finds node 0's GPUs free but not its CPUs: it starts when C ends,
// [100, 110] on node 0.
TEST(HostLimits, AJobAcrossNodesStepsOverFreeNodesShortOfCpus) {
  const char* cluster =
      R"({"nodes":[{"count":3,"gpu_type":"A100-80GB","gpus_per_node":8,"cpus":32,)"
      R"("host_memory_gib":256}]})";
  const std::vector<Job> jobs = {WithHost(MakeJob("C", 0, 0, 100), 20),
                                 WithHost(MakeJob("J", 1, 16, 100), 32),
                                 WithHost(MakeJob("K", 2, 8, 10), 16)};
  for (const char* placement : {"first-fit", "best-fit", "frag-aware"}) {
    EngineOptions options;
    options.stop_time = 5;  // while C and J run
    TestSim early(cluster, jobs, "fcfs", placement, options);
    early.Run();
    EXPECT_EQ(early.Of("J").first_start, 1) << placement;
    const std::vector<int>& gpus = early.ActiveOf("J").allocation.gpus;
    ASSERT_EQ(gpus.size(), 16u) << placement;
    EXPECT_EQ(gpus.front(), 8) << placement;
    EXPECT_EQ(gpus.back(), 23) << placement;
    TestSim sim(cluster, jobs, "fcfs", placement);
    sim.Run();
    testing::ExpectInterval(sim.Of("J"), 1, 101);
    testing::ExpectInterval(sim.Of("K"), 100, 110);
  }
}

// FGD counting CPUs as the paper's artifact does (GetNodePodFrag): a node of 4 free GPUs with
// 2,000 of 16,000 milli-cores free. Class "needs 4 cores" lacks CPUs: all 4,000 idle milli are
// its fragment; class "needs 1 core" fits and finds no partly used GPU: 0. Weights 1/2 each.
TEST(HostFgd, AClassShortOfCpusFindsTheWholeNodeFragmented) {
  const std::vector<int> free = {1000, 1000, 1000, 1000};
  const std::vector<TaskClass> classes = {TaskClass{1, 0, 0.5, 4000}, TaskClass{1, 0, 0.5, 1000}};
  EXPECT_DOUBLE_EQ(NodeFragmentation(free, classes, NodeCpu{2000, 16000}), 2000);
  EXPECT_DOUBLE_EQ(NodeFragmentation(free, classes), 0);  // CPUs not limited
  // A class that states no CPUs needs the node's share: 2 GPUs of 4 -> 8,000 > 2,000.
  EXPECT_DOUBLE_EQ(ClassFragment(free, TaskClass{2, 0, 1, 0}, NodeCpu{2000, 16000}), 4000);
  EXPECT_DOUBLE_EQ(ClassFragment(free, TaskClass{2, 0, 1, 0}, NodeCpu{8000, 16000}), 0);
  // The incremental view agrees: one GPU goes from 1000 to 0 free and 1,500 CPUs are taken.
  const NodeFragmentationView view(free, classes, NodeCpu{2000, 16000});
  EXPECT_DOUBLE_EQ(view.current(), 2000);
  const std::vector<int> after = {0, 1000, 1000, 1000};
  EXPECT_DOUBLE_EQ(view.AfterChange(1000, 0, 500),
                   NodeFragmentation(after, classes, NodeCpu{500, 16000}));
  EXPECT_DOUBLE_EQ(view.AfterChange(1000, 0, 500), 0.5 * 3000 + 0.5 * 3000);
}

TEST(HostFgd, WorkloadClassesKeepCpuDemandsWhenAsked) {
  Trace trace;
  trace.jobs = {WithHost(MakeJob("a", 0, 1, 1), 4), WithHost(MakeJob("b", 0, 1, 1), 4),
                WithHost(MakeJob("c", 0, 1, 1), 8)};
  const auto with = WorkloadClasses(trace, 32, true, true);
  ASSERT_EQ(with.size(), 2u);
  EXPECT_EQ(with[0].cpu_milli, 4000);
  EXPECT_DOUBLE_EQ(with[0].weight, 2.0 / 3);
  EXPECT_EQ(with[1].cpu_milli, 8000);
  const auto without = WorkloadClasses(trace, 32, true, false);
  ASSERT_EQ(without.size(), 1u);
  EXPECT_EQ(without[0].cpu_milli, 0);
  // Folded to one class: the tail goes to the nearest GPU demand (equal), then CPUs.
  const auto folded = WorkloadClasses(trace, 1, true, true);
  ASSERT_EQ(folded.size(), 1u);
  EXPECT_EQ(folded[0].cpu_milli, 4000);
  EXPECT_DOUBLE_EQ(folded[0].weight, 1.0);
}

}  // namespace
}  // namespace clustersim
