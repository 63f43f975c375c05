// Node pools under --autoscaler cluster-autoscaler and none (docs/autoscaling.md), worked by hand
// on one fixed node of 8 GPUs and a pool of 0-4 nodes of 8 (provision 300 s, idle 600 s), scans
// every 10 s from the first arrival.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "policies/registry.h"
#include "sim/engine/summary.h"
#include "sim/util/error.h"
#include "tests/sim/engine/pool_test_util.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::Events;
using testing::Summary;
using testing::TestSim;

std::string PoolCluster(int count = 0, int min = 0) {
  return R"({"nodes":[{"name":"fixed","count":1,"gpu_type":"A100-80GB","gpus_per_node":8},)"
         R"({"name":"pool","count":)" +
         std::to_string(count) + R"(,"gpu_type":"A100-80GB","gpus_per_node":8,)"
         R"("autoscale":{"min":)" +
         std::to_string(min) +
         R"(,"max":4,"provision_seconds":300,"idle_seconds":600}}]})";
}

std::vector<Job> EightGpuJobs(int n, double duration) {
  std::vector<Job> jobs;
  for (int i = 0; i < n; ++i) jobs.push_back(MakeJob("j" + std::to_string(i), 0, 8, duration));
  return jobs;
}

double StartOf(const Engine& engine, const std::string& id) {
  for (size_t i = 0; i < engine.trace().jobs.size(); ++i) {
    if (engine.trace().jobs[i].id == id) return engine.runs()[i].first_start;
  }
  return -1;
}

struct Scaled {
  std::unique_ptr<Autoscaler> autoscaler;
  std::unique_ptr<TestSim> sim;
  Engine& Run(const std::string& cluster, std::vector<Job> jobs,
              const std::string& name = "cluster-autoscaler", const Params& params = Params(),
              std::vector<JobConstraints> constraints = {}) {
    autoscaler = FindAutoscaler(name).make(params);
    EngineOptions options;
    options.autoscaler = autoscaler.get();
    sim =
        std::make_unique<TestSim>(cluster, std::move(jobs), "fcfs", "first-fit", options, "trace",
                                  Params(), nullptr, ModelRuntimeOptions{}, std::move(constraints));
    return sim->Run();
  }
};

// j0 holds the fixed node (node 0) [0, 1000]; j1 (8 GPUs) has its data on node 0 only (the
// default --locality-alpha 1: every GPU there), so no pool node can ever run it.
std::vector<Job> HeldOffThePool(std::vector<JobConstraints>* constraints) {
  std::vector<Job> jobs = EightGpuJobs(2, 1000);
  constraints->emplace_back();
  constraints->back().data_nodes = "0";
  jobs[1].constraints = 1;
  return jobs;
}

// The issue's example. t=0: j0 takes the fixed node; j1 and j2 do not fit, and the scan after
// the pass bin-packs them onto 2 new nodes (nodes 1 and 2), ready at 300, where both start.
// They end at 1300, a scan time, so that scan finds the two nodes empty; 600 s later, at the
// scan of 1900, they have been empty for idle_seconds and are released (highest index first).
// Billed: 2 nodes x 8 GPUs x 1,900 s.
TEST(ClusterAutoscaler, GrowsForWaitingJobsAndReleasesNodesIdleForIdleSeconds) {
  Scaled s;
  const Engine& engine = s.Run(PoolCluster(), EightGpuJobs(3, 1000));
  EXPECT_DOUBLE_EQ(StartOf(engine, "j0"), 0);
  EXPECT_DOUBLE_EQ(StartOf(engine, "j1"), 300);
  EXPECT_DOUBLE_EQ(StartOf(engine, "j2"), 300);
  EXPECT_EQ(Events(engine),
            (std::vector<std::string>{"0 1 requested", "0 2 requested", "300 1 ready",
                                      "300 2 ready", "1900 2 released", "1900 1 released"}));
  EXPECT_NEAR(Summary(engine, "billed_gpu_hours", "group:pool"), 2 * 8 * 1900 / 3600.0, 1e-9);
  EXPECT_NEAR(Summary(engine, "billed_gpu_hours", "group:fixed"), 8 * 1900 / 3600.0, 1e-9);
  // 5.12 USD per GPU-hour: the A100-80GB catalog price.
  EXPECT_NEAR(Summary(engine, "billed_cost_usd", "group:pool"), 2 * 8 * 1900 / 3600.0 * 5.12,
              1e-9);
  // Busy 3 x 8 x 1,000 GPU-s of 3 x 8 x 1,900 billed.
  EXPECT_NEAR(Summary(engine, "billed_gpu_utilization", "all"), 1000.0 / 1900, 1e-12);
}

// Jobs of 1,005 s end at 1305, between scans: the scan of 1310 is the first to find the nodes
// empty, so they go at the scan of 1910 (1910 - 1310 = 600), billed to 1910.
TEST(ClusterAutoscaler, TheIdleClockStartsAtTheFirstScanThatFindsTheNodeEmpty) {
  Scaled s;
  const Engine& engine = s.Run(PoolCluster(), EightGpuJobs(3, 1005));
  const std::vector<std::string> events = Events(engine);
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[4], "1910 2 released");
  EXPECT_EQ(events[5], "1910 1 released");
  EXPECT_NEAR(Summary(engine, "billed_gpu_hours", "group:pool"), 2 * 8 * 1910 / 3600.0, 1e-9);
}

// Six jobs: one on the fixed node, five waiting, but the pool stops at max = 4 nodes; the fifth
// waiting job starts on the fixed node when j0 ends at 1000.
TEST(ClusterAutoscaler, NeverGrowsAPoolBeyondItsMax) {
  Scaled s;
  const Engine& engine = s.Run(PoolCluster(), EightGpuJobs(6, 1000));
  int requested = 0;
  for (const NodeEvent& e : engine.node_pools().events()) {
    requested += e.kind == NodeEventKind::kRequested;
  }
  EXPECT_EQ(requested, 4);
  for (const char* id : {"j1", "j2", "j3", "j4"}) EXPECT_DOUBLE_EQ(StartOf(engine, id), 300) << id;
  EXPECT_DOUBLE_EQ(StartOf(engine, "j5"), 1000);
}

// A pool of min 1 that starts with node 1: j1 runs there from 0 to 1000, j2 waits for node 2
// (requested at 0, ready at 300, runs to 1300). Node 1 is empty from the scan of 1000 and goes
// at 1600; node 2, empty from 1300, would go at 1900 but is then the pool's last node (min 1),
// so it stays. Nothing is left to do after 1600, where the run ends: billed 2 nodes x 8 GPUs x
// 1,600 s (node 1 from the start, node 2 from its request).
TEST(ClusterAutoscaler, NeverShrinksAPoolBelowItsMin) {
  Scaled s;
  const Engine& engine = s.Run(PoolCluster(1, 1), EightGpuJobs(3, 1000));
  EXPECT_DOUBLE_EQ(StartOf(engine, "j1"), 0);  // on the pool's start node
  EXPECT_DOUBLE_EQ(StartOf(engine, "j2"), 300);
  EXPECT_EQ(Events(engine), (std::vector<std::string>{"0 2 requested", "300 2 ready",
                                                      "1600 1 released"}));
  EXPECT_EQ(engine.node_pools().provisioned(1), 1);
  EXPECT_NEAR(Summary(engine, "billed_gpu_hours", "group:pool"), 2 * 8 * 1600 / 3600.0, 1e-9);
}

// A 16-GPU job needs two 8-GPU nodes: the estimator asks for both at once.
TEST(ClusterAutoscaler, AJobWiderThanANodeGetsAllTheNodesItNeeds) {
  Scaled s;
  const Engine& engine = s.Run(PoolCluster(), {MakeJob("wide", 0, 16, 1000)});
  EXPECT_DOUBLE_EQ(StartOf(engine, "wide"), 300);
  EXPECT_EQ(engine.node_pools().events().size(), 6u);  // 2 x requested, ready, released
}

// Provisioning times drawn from a range (docs/autoscaling.md#the-cluster-spec): 1,000 waiting
// 8-GPU jobs make cluster-autoscaler request 1,000 pool nodes at 0 (one job takes the fixed
// node). Every node is ready within [200, 400] s of its request; the times differ; their mean is
// 300 s within 10 s (the mean of 1,000 uniform draws on [200, 400] has a standard deviation of
// 200 / sqrt(12) / sqrt(1000) = 1.8 s); the same seed repeats them and another seed does not.
TEST(ClusterAutoscaler, ProvisioningTimesFromARangeAreDrawnPerRequestFromTheRunsSeed) {
  const std::string cluster =
      R"({"nodes":[{"name":"fixed","count":1,"gpu_type":"A100-80GB","gpus_per_node":8},)"
      R"({"name":"pool","count":0,"gpu_type":"A100-80GB","gpus_per_node":8,)"
      R"("autoscale":{"min":0,"max":1000,"provision_seconds":{"uniform":[200,400]}}}]})";
  auto ready_times = [&](uint64_t seed) {
    std::unique_ptr<Autoscaler> autoscaler = FindAutoscaler("cluster-autoscaler").make(Params());
    EngineOptions options;
    options.autoscaler = autoscaler.get();
    options.seed = seed;
    TestSim sim(cluster, EightGpuJobs(1001, 100), "fcfs", "first-fit", options);
    const Engine& engine = sim.Run();
    std::vector<double> ready;
    for (const NodeEvent& e : engine.node_pools().events()) {
      if (e.kind == NodeEventKind::kRequested) {
        EXPECT_EQ(e.time, 0);
      } else if (e.kind == NodeEventKind::kReady) {
        ready.push_back(e.time);
      }
    }
    return ready;
  };
  const std::vector<double> ready = ready_times(7);
  ASSERT_EQ(ready.size(), 1000u);
  double sum = 0;
  for (double t : ready) {
    EXPECT_GE(t, 200);
    EXPECT_LE(t, 400);
    sum += t;
  }
  EXPECT_NEAR(sum / 1000, 300, 10);
  EXPECT_GT(*std::max_element(ready.begin(), ready.end()) -
                *std::min_element(ready.begin(), ready.end()),
            150);
  EXPECT_EQ(ready_times(7), ready);
  EXPECT_NE(ready_times(8), ready);
}

// --autoscaler none: the pool keeps its start size; nothing is requested or released and the
// waiting jobs run on the nodes there are.
TEST(ClusterAutoscaler, NoneKeepsEveryPoolAtItsStartSize) {
  Scaled s;
  const Engine& engine = s.Run(PoolCluster(1), EightGpuJobs(3, 1000), "none");
  EXPECT_EQ(s.autoscaler, nullptr);
  EXPECT_TRUE(engine.node_pools().events().empty());
  EXPECT_DOUBLE_EQ(StartOf(engine, "j0"), 0);
  EXPECT_DOUBLE_EQ(StartOf(engine, "j1"), 0);
  EXPECT_DOUBLE_EQ(StartOf(engine, "j2"), 1000);
  EXPECT_NEAR(Summary(engine, "billed_gpu_hours", "group:pool"), 8 * 2000 / 3600.0, 1e-9);
}

Params OneParam(const std::string& key, const std::string& value) {
  Params params;
  params.AddAssignment(key + "=" + value);
  return params;
}

// --autoscaler target-utilization (docs/autoscaling.md#target-utilization) on the same example,
// scans every 15 s from 0, target 1 (the default). t=0: j0 holds the fixed node's 8 GPUs and j1,
// j2 wait for 16: demand 24 GPUs against 8 provisioned, 3x the target, so the desired capacity
// is ceil(24 / 1) = 24 GPUs, 16 beyond the fixed node: 2 pool nodes, requested at once. From
// 300 demand = capacity = 24 (within the 0.1 tolerance: each scan recommends the 2 there are).
// j0 ends at 1000; the scan of 1005 sees 16 of 24 (0.67): 16 - 8 fixed = 8 GPUs, 1 node. The
// scans of 1005-1290 recommend 1, but scale-down takes the highest recommendation of the last
// 300 s, which holds 2 until the 2s of the scans up to 990 have left it: at 1290 the window
// (990, 1290] holds only 1s, but both pool nodes run j1 and j2 until 1300. The scan of 1305
// releases one (window (1005, 1305]: 1s and the 0 of 1305), node 2, the highest index; the scan
// of 1590 (window (1290, 1590]: only 0s) the other. Billed: 8 GPUs x (1,305 + 1,590) s.
TEST(TargetUtilization, ProvisionsTheDemandOverTheTargetAndShrinksToTheWindowsHighest) {
  Scaled s;
  const Engine& engine = s.Run(PoolCluster(), EightGpuJobs(3, 1000), "target-utilization");
  EXPECT_DOUBLE_EQ(StartOf(engine, "j1"), 300);
  EXPECT_DOUBLE_EQ(StartOf(engine, "j2"), 300);
  EXPECT_EQ(Events(engine),
            (std::vector<std::string>{"0 1 requested", "0 2 requested", "300 1 ready",
                                      "300 2 ready", "1305 2 released", "1590 1 released"}));
  EXPECT_NEAR(Summary(engine, "billed_gpu_hours", "group:pool"), 8 * (1305 + 1590) / 3600.0,
              1e-9);
}

// Target 0.8: at 0 the desired capacity is ceil(24 / 0.8) = 30 GPUs, 22 beyond the fixed node:
// 3 nodes. From 300, 24 of 32 GPUs are needed: 24 / (0.8 x 32) = 0.94, within the tolerance, so
// the idle third node stays (spare capacity is what the target asks for). From 1005, 16 of 32:
// 0.625, recommending ceil((16 / 0.8 - 8) / 8) = 2; at 1290 the window (990, 1290] holds only
// 2s and the idle node 3 goes. From 1305 nothing is needed (recommendation 0, the pool's min);
// the 2s leave the window at 1590, when nodes 2 and 1 go. Billed: 8 x 1,290 + 2 x 8 x 1,590.
TEST(TargetUtilization, ATargetBelowOneKeepsSpareCapacityWithinTheTolerance) {
  Scaled s;
  const Engine& engine = s.Run(PoolCluster(), EightGpuJobs(3, 1000), "target-utilization",
                               OneParam("target_utilization", "0.8"));
  EXPECT_EQ(Events(engine), (std::vector<std::string>{
                                "0 1 requested", "0 2 requested", "0 3 requested", "300 1 ready",
                                "300 2 ready", "300 3 ready", "1290 3 released",
                                "1590 2 released", "1590 1 released"}));
  EXPECT_NEAR(Summary(engine, "billed_gpu_hours", "group:pool"),
              (8 * 1290 + 2 * 8 * 1590) / 3600.0, 1e-9);
}

TEST(TargetUtilization, RefusesATargetOutsideZeroToOneAndANegativeWindow) {
  for (const char* bad : {"0", "1.5", "-0.2"}) {
    EXPECT_THROW(FindAutoscaler("target-utilization").make(OneParam("target_utilization", bad)),
                 InputError)
        << bad;
  }
  EXPECT_THROW(
      FindAutoscaler("target-utilization").make(OneParam("scale_down_stabilization", "-1")),
      InputError);
}

// A job that no pool node could run does not make a pool grow: CA asks its predicates of the
// template node first. j1 waits for the fixed node and starts there at 1000; nothing is
// requested or billed in the pool (before, a node was requested at 0 that j1 could not use).
TEST(ClusterAutoscaler, DoesNotGrowAPoolForAJobWhoseDataKeepsItOff) {
  for (const char* name : {"cluster-autoscaler", "target-utilization"}) {
    Scaled s;
    std::vector<JobConstraints> constraints;
    std::vector<Job> jobs = HeldOffThePool(&constraints);
    const Engine& engine = s.Run(PoolCluster(), std::move(jobs), name, Params(), constraints);
    EXPECT_DOUBLE_EQ(StartOf(engine, "j1"), 1000) << name;
    EXPECT_TRUE(Events(engine).empty()) << name;
    EXPECT_NEAR(Summary(engine, "billed_gpu_hours", "group:pool"), 0, 1e-12) << name;
  }
}

// The fixed node has 512 GiB of host memory, the pool's nodes 128. j1 (1 GPU, 256 GiB) fits
// only the fixed node, which j0 holds [0, 1000]: no pool node is requested, j1 starts at 1000.
TEST(ClusterAutoscaler, DoesNotGrowAPoolWhoseNodesHaveTooLittleMemoryForTheJob) {
  const std::string cluster =
      R"({"nodes":[{"name":"fixed","count":1,"gpu_type":"A100-80GB","gpus_per_node":8,)"
      R"("host_memory_gib":512},{"name":"pool","count":0,"gpu_type":"A100-80GB",)"
      R"("gpus_per_node":8,"host_memory_gib":128,)"
      R"("autoscale":{"min":0,"max":4,"provision_seconds":300,"idle_seconds":600}}]})";
  std::vector<Job> jobs = EightGpuJobs(1, 1000);
  jobs.push_back(MakeJob("j1", 0, 1, 100));
  jobs.back().memory_mib = 256 * 1024;
  Scaled s;
  const Engine& engine = s.Run(cluster, std::move(jobs));
  EXPECT_DOUBLE_EQ(StartOf(engine, "j1"), 1000);
  EXPECT_TRUE(Events(engine).empty());
}

// PoolCluster() with 8 CPUs on every node (host limits).
constexpr const char* kEightCpuPool =
    R"({"nodes":[{"name":"fixed","count":1,"gpu_type":"A100-80GB","gpus_per_node":8,"cpus":8},)"
    R"({"name":"pool","count":0,"gpu_type":"A100-80GB","gpus_per_node":8,"cpus":8,)"
    R"("autoscale":{"min":0,"max":4,"provision_seconds":300,"idle_seconds":600}}]})";

// Host limits: every node has 8 GPUs and 8 CPUs. j0 (1 GPU, 8 CPUs) holds the fixed node's CPUs
// [0, 2000]; j1, a CPU-only job of 4 CPUs, arrives at 1 and fits nowhere. The scan of 10 packs
// its 4 CPUs onto a new node (node 1), ready at 310, where j1 runs [310, 410]; the scan of 410
// finds the node empty and it goes at 1010. Billed: 8 GPUs x 1,000 s. (Before, CPU-only jobs
// were left out: j1 waited for j0, [2000, 2100], and no node was requested.)
TEST(ClusterAutoscaler, GrowsAPoolForACpuOnlyJobShortOfCpus) {
  std::vector<Job> jobs = {MakeJob("j0", 0, 1, 2000), MakeJob("j1", 1, 0, 100)};
  jobs[0].cpu_milli = 8000;
  jobs[1].cpu_milli = 4000;
  Scaled s;
  const Engine& engine = s.Run(kEightCpuPool, std::move(jobs));
  EXPECT_DOUBLE_EQ(StartOf(engine, "j1"), 310);
  EXPECT_EQ(Events(engine),
            (std::vector<std::string>{"10 1 requested", "310 1 ready", "1010 1 released"}));
  EXPECT_NEAR(Summary(engine, "billed_gpu_hours", "group:pool"), 8 * 1000 / 3600.0, 1e-9);
}

// Host CPUs bound the packing: three 1-GPU jobs of 6 CPUs each wait (the fixed node's 8 CPUs
// are held by j0 [0, 1000]); a node of 8 CPUs takes one of them, so 3 nodes are requested at 0
// (by GPUs alone, 3 GPUs would pack onto one node).
TEST(ClusterAutoscaler, PacksByCpusAsWellAsGpus) {
  std::vector<Job> jobs = {MakeJob("j0", 0, 1, 1000)};
  jobs[0].cpu_milli = 8000;
  for (int i = 1; i <= 3; ++i) {
    jobs.push_back(MakeJob("j" + std::to_string(i), 0, 1, 100));
    jobs.back().cpu_milli = 6000;
  }
  Scaled s;
  const Engine& engine = s.Run(kEightCpuPool, std::move(jobs));
  int requested = 0;
  for (const NodeEvent& e : engine.node_pools().events()) {
    requested += e.kind == NodeEventKind::kRequested && e.time == 0;
  }
  EXPECT_EQ(requested, 3);
  for (const char* id : {"j1", "j2", "j3"}) EXPECT_DOUBLE_EQ(StartOf(engine, id), 300) << id;
}

// A pool node that is off draws no power. A fixed node and a pool of 1 to 2 nodes (A100-80GB:
// 400 W busy, 50 W idle), no autoscaler: node 1 is provisioned, node 2 never. j (8 GPUs) runs
// [1000, 1100], the run's span: 8 GPUs busy and 8 idle for 100 s, node 2's 8 draw nothing:
// 8 x 100 x 400 + 8 x 100 x 50 = 360,000 J = 0.1 kWh (before: 0.111, node 2 counted idle).
TEST(ClusterAutoscaler, APoolNodeThatIsOffDrawsNoPower) {
  const std::string cluster =
      R"({"nodes":[{"name":"fixed","count":1,"gpu_type":"A100-80GB","gpus_per_node":8},)"
      R"({"name":"pool","count":1,"gpu_type":"A100-80GB","gpus_per_node":8,)"
      R"("autoscale":{"min":0,"max":2,"provision_seconds":300,"idle_seconds":600}}]})";
  Scaled s;
  const Engine& engine = s.Run(cluster, {MakeJob("j", 1000, 8, 100)}, "none");
  EXPECT_NEAR(Summary(engine, "energy_kwh", "all"), 0.1, 1e-12);
  double power = -1;
  for (const TimeseriesRow& row : engine.metrics().rows()) {
    if (row.gpu_type == -1) power = row.power_watts;
  }
  EXPECT_NEAR(power, 8 * 400 + 8 * 50, 1e-9);
}

// Node imbalance (docs/metrics.md#node-imbalance) under host limits: a node that is off holds
// no CPUs of a job, so its imbalance is 0. The fixed node (8 GPUs, 64 CPUs) runs j (8 GPUs, 32
// CPUs) [0, 100]: (u, memory, CPUs, network) = (1, 1, 0.5, 0), deviation sqrt(0.171875); the
// pool's one node is off: 0. Mean over the two nodes: 0.2072890 (before: 0.4238, the off node's
// held-out CPUs counted as held).
TEST(ClusterAutoscaler, APoolNodeThatIsOffIsNotImbalanced) {
  const std::string cluster =
      R"({"nodes":[{"name":"fixed","count":1,"gpu_type":"A100-80GB","gpus_per_node":8,)"
      R"("cpus":64,"host_memory_gib":512},{"name":"pool","count":0,"gpu_type":"A100-80GB",)"
      R"("gpus_per_node":8,"cpus":64,"host_memory_gib":512,)"
      R"("autoscale":{"min":0,"max":1,"provision_seconds":300,"idle_seconds":600}}]})";
  std::vector<Job> jobs = {MakeJob("j", 0, 8, 100)};
  jobs[0].cpu_milli = 32000;
  Scaled s;
  const Engine& engine = s.Run(cluster, std::move(jobs), "none");
  EXPECT_NEAR(Summary(engine, "node_imbalance_mean", "all"), std::sqrt(0.171875) / 2, 1e-12);
}

// Under host limits a node not provisioned holds out its CPUs and memory too; a job that would
// fit with it up waits for nodes_down. Two fixed nodes and a pool of 0-1 nodes, each 8 GPUs and
// 64 CPUs. a and b (6 GPUs, 4 CPUs) take the fixed nodes; c (4 GPUs, 4 CPUs) finds 2 + 2 free
// GPUs: the scan of 0 requests the pool node, ready at 300, where c starts. c waits nodes_down
// for 300 s (before: fragmentation_gpus, the node's held-out CPUs not given back when asking).
TEST(ClusterAutoscaler, AJobWaitingForANodeNotYetProvisionedWaitsForNodesDown) {
  const std::string cluster =
      R"({"nodes":[{"name":"fixed","count":2,"gpu_type":"A100-80GB","gpus_per_node":8,)"
      R"("cpus":64},{"name":"pool","count":0,"gpu_type":"A100-80GB","gpus_per_node":8,)"
      R"("cpus":64,"autoscale":{"min":0,"max":1,"provision_seconds":300,"idle_seconds":600}}]})";
  std::vector<Job> jobs = {MakeJob("a", 0, 6, 1000), MakeJob("b", 0, 6, 1000),
                           MakeJob("c", 0, 4, 100)};
  for (Job& job : jobs) job.cpu_milli = 4000;
  Scaled s;
  const Engine& engine = s.Run(cluster, std::move(jobs));
  EXPECT_DOUBLE_EQ(StartOf(engine, "c"), 300);
  const auto reasons = engine.wait_reasons().Seconds(2);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(WaitReasonName(reasons[0].first), std::string("nodes_down"));
  EXPECT_DOUBLE_EQ(reasons[0].second, 300);
}

// The engine checks what an autoscaler asks: releasing a node that runs a job is refused.
class ReleasesBusyNodes final : public Autoscaler {
 public:
  double scan_interval_seconds() const override { return 10; }
  void Scan(const SchedulingContext&, const NodePools& pools, ScaleDecision* out) override {
    for (int node : pools.nodes(1)) {
      if (pools.state(node) == PoolNodeState::kReady) out->release.push_back(node);
    }
  }
};

TEST(ClusterAutoscaler, TheEngineRefusesToReleaseANodeThatRunsAJob) {
  ReleasesBusyNodes bad;
  EngineOptions options;
  options.autoscaler = &bad;
  TestSim sim(PoolCluster(1), EightGpuJobs(2, 1000), "fcfs", "first-fit", options);
  EXPECT_THROW(sim.Run(), InternalError);
}

}  // namespace
}  // namespace clustersim
