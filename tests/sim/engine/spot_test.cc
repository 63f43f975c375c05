// Spot capacity (docs/autoscaling.md#spot-capacity), worked by hand: interruptions from an
// interruptions file at known times, the failure machinery's checkpoints (interval, save and
// restore seconds), the notice, the replacement of a fixed spot node and the autoscaler's new
// request for a pool's; and the drawn interruptions against their rate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
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
using testing::TempPath;
using testing::Events;
using testing::Summary;
using testing::TestSim;

std::string WriteInterruptions(const std::string& name, const std::string& rows) {
  const std::string path = TempPath(name);
  std::ofstream(path) << "time,node\n" << rows;
  return path;
}

// One group of one 8-GPU node on spot at $2 per GPU-hour; `extra` goes into its spot object.
std::string SpotCluster(const std::string& extra, const std::string& autoscale = "") {
  return R"({"nodes":[{"name":"spot","count":1,"gpu_type":"A100-80GB","gpus_per_node":8,)" +
         autoscale + R"("spot":{"price_per_gpu_hour":2,)" + extra + "}}]}";
}

// Checkpoints every 200 s of computing, each save 10 s, a restore 20 s (docs/engine.md#failures).
EngineOptions Checkpointed() {
  EngineOptions options;
  options.faults.checkpoint_interval_seconds = 200;
  options.faults.checkpoint_cost_seconds = 10;
  options.faults.restore_cost_seconds = 20;
  return options;
}

// One 8-GPU job of 1,000 s at t = 0 on the one fixed spot node; the interruptions file takes
// the node at 520 (its notice; notice_seconds 30 by default).
// - 0-200 computes, 200-210 saves (checkpoint 1: 200 s of work), 210-410 computes, 410-420 saves
//   (checkpoint 2: 400 s), 420-550 computes 130 s that no checkpoint covers.
// - 550: the notice is over, the node is gone: the job goes back to the queue with 1,000 - 400
//   = 600 s of work left, having lost 130 s x 8 GPUs = 1,040 GPU-s; the node is replaced,
//   requested at 550 and ready 300 s later, at 850.
// - 850: the job restarts, pays its 20 s restore (to 870), then computes 600 s with a save after
//   each full 200 s but the last: 870 + 600 + 2 x 10 = 1,490.
// Billed: the fixed group's node for the whole run, 8 GPUs x 1,490 s at $2 per GPU-hour.
TEST(Spot, AnInterruptionSendsTheJobBackToItsLastCheckpointAndTheFixedNodeIsReplaced) {
  const std::string file = WriteInterruptions("fixed.csv", "520,0\n");
  TestSim sim(SpotCluster(R"("interruptions":")" + file + "\""), {MakeJob("j", 0, 8, 1000)},
              "fcfs", "first-fit", Checkpointed());
  const Engine& engine = sim.Run();
  const JobRun& run = engine.runs()[0];
  EXPECT_DOUBLE_EQ(run.first_start, 0);
  EXPECT_DOUBLE_EQ(run.end_time, 1490);
  EXPECT_EQ(run.state, JobState::kCompleted);
  EXPECT_EQ(engine.costs(0).restarts, 1);
  EXPECT_DOUBLE_EQ(engine.costs(0).lost_gpu_seconds, 130 * 8);
  EXPECT_EQ(Events(engine), (std::vector<std::string>{"520 0 interrupted", "550 0 released",
                                                      "550 0 requested", "850 0 ready"}));
  EXPECT_NEAR(Summary(engine, "billed_gpu_hours", "group:spot"), 8 * 1490 / 3600.0, 1e-9);
  EXPECT_NEAR(Summary(engine, "billed_cost_usd", "group:spot"), 8 * 1490 / 3600.0 * 2, 1e-9);
}

// The same job and interruption on a spot pool of 0-1 nodes (provision 300 s, idle 600 s) under
// cluster-autoscaler: at 550 the node goes back to off (released, billing stops); the scan of
// 550 sees the job waiting and requests the node again, ready at 850, where the job restarts
// and ends at 1,490 as above. The scan of 1,490 finds the node empty, and it is released 600 s
// later, at 2,090. Billed: 8 x (550 - 0) + 8 x (2,090 - 550) = 8 x 2,090 GPU-s.
TEST(Spot, AnInterruptedPoolNodeGoesBackToOffAndTheAutoscalerRequestsItAgain) {
  const std::string file = WriteInterruptions("pool.csv", "520,0\n");
  auto autoscaler = FindAutoscaler("cluster-autoscaler").make(Params());
  EngineOptions options = Checkpointed();
  options.autoscaler = autoscaler.get();
  TestSim sim(SpotCluster(R"("interruptions":")" + file + "\"",
                          R"("autoscale":{"min":0,"max":1,"provision_seconds":300,)"
                          R"("idle_seconds":600},)"),
              {MakeJob("j", 0, 8, 1000)}, "fcfs", "first-fit", options);
  const Engine& engine = sim.Run();
  EXPECT_DOUBLE_EQ(engine.runs()[0].end_time, 1490);
  EXPECT_EQ(Events(engine),
            (std::vector<std::string>{"520 0 interrupted", "550 0 released", "550 0 requested",
                                      "850 0 ready", "2090 0 released"}));
  EXPECT_NEAR(Summary(engine, "billed_gpu_hours", "group:spot"), 8 * 2090 / 3600.0, 1e-9);
}

// A pool of min 1 taken below its min by an interruption: under cluster-autoscaler the node stays
// off until a job waits (none does after the job ends), and --check (on in every TestSim run)
// accepts it. The job of 400 s at t = 0 ends at 400; the interruption at 600 finds the node
// empty; at 630 it is released and stays off.
TEST(Spot, AnInterruptionMayTakeAPoolBelowItsMinAndTheNodeStaysOffWhileNoJobWaits) {
  const std::string file = WriteInterruptions("min.csv", "600,0\n");
  auto autoscaler = FindAutoscaler("cluster-autoscaler").make(Params());
  EngineOptions options;
  options.autoscaler = autoscaler.get();
  TestSim sim(SpotCluster(R"("interruptions":")" + file + "\"",
                          R"("autoscale":{"min":1,"max":1},)"),
              {MakeJob("j", 0, 8, 400), MakeJob("k", 1000, 8, 100)}, "fcfs", "first-fit",
              options);
  const Engine& engine = sim.Run();
  // k arrives at 1,000 to an empty pool: the scan of 1,000 requests the node, ready at 1,300.
  EXPECT_DOUBLE_EQ(engine.runs()[1].first_start, 1300);
  EXPECT_EQ(Events(engine),
            (std::vector<std::string>{"600 0 interrupted", "630 0 released", "1000 0 requested",
                                      "1300 0 ready"}));
}

// Under --autoscaler none a pool keeps its size: an interrupted pool node is replaced like a
// fixed group's (requested at the end of the notice, ready 300 s later).
TEST(Spot, UnderNoAutoscalerAnInterruptedPoolNodeIsReplaced) {
  const std::string file = WriteInterruptions("none.csv", "520,0\n");
  TestSim sim(SpotCluster(R"("interruptions":")" + file + "\"",
                          R"("autoscale":{"min":0,"max":1},)"),
              {MakeJob("j", 0, 8, 1000)}, "fcfs", "first-fit", Checkpointed());
  const Engine& engine = sim.Run();
  EXPECT_DOUBLE_EQ(engine.runs()[0].end_time, 1490);
  EXPECT_EQ(Events(engine), (std::vector<std::string>{"520 0 interrupted", "550 0 released",
                                                      "550 0 requested", "850 0 ready"}));
}

// Without checkpoints the job loses all of its 550 s (8 x 550 GPU-s) and restarts from the
// beginning at 850, with no restore to pay: it ends at 850 + 1,000 = 1,850.
TEST(Spot, WithoutCheckpointsAnInterruptedJobStartsOver) {
  const std::string file = WriteInterruptions("nockpt.csv", "520,0\n");
  TestSim sim(SpotCluster(R"("interruptions":")" + file + "\""), {MakeJob("j", 0, 8, 1000)});
  const Engine& engine = sim.Run();
  EXPECT_DOUBLE_EQ(engine.runs()[0].end_time, 1850);
  EXPECT_DOUBLE_EQ(engine.costs(0).lost_gpu_seconds, 550 * 8);
  // Reported as failures are, though no failure or checkpoint option is set: one interruption
  // of cause spot, its 550 s x 8 GPUs recomputed, and ETTR = 1,000 productive s / 1,850 s
  // (before, none of these rows was written).
  EXPECT_EQ(Summary(engine, "interruptions", "cause:spot"), 1);
  EXPECT_NEAR(Summary(engine, "recompute_gpu_hours", "cause:spot"), 550 * 8 / 3600.0, 1e-9);
  EXPECT_NEAR(Summary(engine, "ettr", "all"), 1000.0 / 1850, 1e-12);
}

// A CPU-only job on the spot node (its 8 CPUs, host limits) is interrupted with it, as a GPU job
// is: 4 CPUs for 1,000 s from 0, the node gone at 550, replaced at 850, the job starts over:
// [850, 1850] (before, it ran on through the node's absence and the run stopped at the hold-out).
TEST(Spot, AnInterruptionSendsACpuOnlyJobOnTheNodeBackToTheQueue) {
  const std::string file = WriteInterruptions("cpu_only.csv", "520,0\n");
  Job job = MakeJob("c", 0, 0, 1000);
  job.cpu_milli = 4000;
  TestSim sim(R"({"nodes":[{"name":"spot","count":1,"gpu_type":"A100-80GB","gpus_per_node":8,)"
              R"("cpus":8,"spot":{"price_per_gpu_hour":2,"interruptions":")" +
                  file + "\"}}]}",
              {job});
  const Engine& engine = sim.Run();
  EXPECT_DOUBLE_EQ(engine.runs()[0].end_time, 1850);
  EXPECT_EQ(engine.costs(0).restarts, 1);
}

// Drawn interruptions: a 1-GPU job of 200 h with 60 s checkpoints keeps the node busy; at
// 2 interruptions per node-hour the number of interruptions in the node's ready time T is
// Poisson with mean 2 T / 3,600 s. The count must be within 4 standard deviations of it, and the
// same seed must give the same events.
TEST(Spot, DrawnInterruptionsFollowTheirRatePerReadyNodeHour) {
  EngineOptions options;
  options.faults.checkpoint_interval_seconds = 60;
  options.seed = 7;
  auto run = [&](uint64_t seed) {
    EngineOptions o = options;
    o.seed = seed;
    auto sim = std::make_unique<TestSim>(SpotCluster(R"("interruptions_per_hour":2)"),
                                         std::vector<Job>{MakeJob("j", 0, 1, 200 * 3600.0)},
                                         "fcfs", "first-fit", o);
    sim->Run();
    return sim;
  };
  const auto sim = run(7);
  const Engine& engine = sim->engine();
  double ready = 0;
  double since = 0;
  int interruptions = 0;
  for (const NodeEvent& e : engine.node_pools().events()) {
    if (e.kind == NodeEventKind::kReleased) ready += e.time - since;
    if (e.kind == NodeEventKind::kReady) since = e.time;
    interruptions += e.kind == NodeEventKind::kInterrupted;
  }
  ready += engine.runs()[0].end_time - since;
  const double mean = 2 * ready / 3600;
  EXPECT_GT(interruptions, 100);
  EXPECT_LT(std::abs(interruptions - mean), 4 * std::sqrt(mean));
  EXPECT_EQ(Events(run(7)->engine()), Events(engine));
  EXPECT_NE(Events(run(8)->engine()), Events(engine));
}

// Placement (docs/autoscaling.md#spot-placement): an on-demand node and a spot node of 8 A100
// GPUs each, in the order `order` gives ("od,spot" or "spot,od"); no interruptions.
std::string MixedCluster(const std::string& order) {
  const std::string od =
      R"({"name":"od","count":1,"gpu_type":"A100-80GB","gpus_per_node":8})";
  const std::string spot =
      R"({"name":"spot","count":1,"gpu_type":"A100-80GB","gpus_per_node":8,)"
      R"("spot":{"price_per_gpu_hour":2,"interruptions_per_hour":0}})";
  return R"({"nodes":[)" + (order == "od,spot" ? od + "," + spot : spot + "," + od) + "]}";
}

// The node of each start, in start order (the allocation log).
std::vector<int> StartNodes(const Engine& engine) {
  std::vector<std::pair<double, int>> starts;
  const AllocationLog& log = engine.allocations();
  for (const auto& interval : log.intervals) {
    starts.emplace_back(interval.start, engine.cluster().NodeOfGpu(log.gpus[interval.gpu_offset]));
  }
  std::sort(starts.begin(), starts.end());
  std::vector<int> nodes;
  for (const auto& [time, node] : starts) nodes.push_back(node);
  return nodes;
}

Engine& RunMixed(std::unique_ptr<TestSim>* sim, const std::string& order, std::vector<Job> jobs,
                 std::vector<JobConstraints> constraints = {}) {
  EngineOptions options;
  options.record_allocations = true;
  *sim = std::make_unique<TestSim>(MixedCluster(order), std::move(jobs), "fcfs", "first-fit",
                                   options, "trace", Params(), nullptr, ModelRuntimeOptions{},
                                   std::move(constraints));
  return (*sim)->Run();
}

// The spot node is node 1 (od first). a takes node 0 at t = 0 under first-fit; b (spot_ok = 0)
// must not take the free spot node: it waits for node 0 and starts there at 1,000.
TEST(Spot, AJobWithSpotOkZeroNeverRunsOnSpotNodes) {
  std::vector<Job> jobs = {MakeJob("a", 0, 8, 1000), MakeJob("b", 0, 8, 100)};
  jobs[1].constraints = 1;
  JobConstraints no_spot;
  no_spot.spot_ok = false;
  std::unique_ptr<TestSim> sim;
  const Engine& engine = RunMixed(&sim, "od,spot", jobs, {no_spot});
  EXPECT_DOUBLE_EQ(engine.runs()[1].first_start, 1000);
  EXPECT_EQ(StartNodes(engine), (std::vector<int>{0, 0}));
}

// On a cluster of spot nodes only, a spot_ok = 0 job can never run: rejected at arrival with a
// reason, never queued.
TEST(Spot, ASpotOkZeroJobOnAClusterOfSpotNodesOnlyIsRejectedWithAReason) {
  std::vector<Job> jobs = {MakeJob("a", 0, 8, 100)};
  jobs[0].constraints = 1;
  JobConstraints no_spot;
  no_spot.spot_ok = false;
  TestSim sim(SpotCluster(R"("interruptions_per_hour":0)"), jobs, "fcfs", "first-fit",
              EngineOptions{}, "trace", Params(), nullptr, ModelRuntimeOptions{}, {no_spot});
  const Engine& engine = sim.Run();
  EXPECT_EQ(engine.runs()[0].state, JobState::kRejected);
  EXPECT_FALSE(engine.reason(0).empty());
}

// --param spot=allow|avoid|prefer (docs/autoscaling.md#spot-placement), worked by hand on one
// on-demand and one spot node of 8 GPUs and one 8-GPU job: first-fit and best-fit both take the
// lowest-index node that fits when nothing else differs (both nodes are empty), so `allow`
// takes node 0 whichever it is; `prefer` takes the spot node, `avoid` the on-demand node. With
// two jobs under `avoid` the second still starts at once, on the spot node (avoid is an order,
// not a ban). Every policy that places through the placement's type order alike, including
// conservative's per-node fast path.
TEST(Spot, ThePreferenceOrdersSpotAndOnDemandNodesUnderEveryPlacementAndPolicy) {
  auto start_nodes = [](const std::string& order, const std::string& spot,
                        const std::string& policy, const std::string& placement, int jobs) {
    std::vector<Job> list;
    for (int i = 0; i < jobs; ++i) list.push_back(MakeJob("j" + std::to_string(i), 0, 8, 100));
    Params params;
    params.AddAssignment("spot=" + spot);
    EngineOptions options;
    options.record_allocations = true;
    TestSim sim(MixedCluster(order), std::move(list), policy, placement, options, "trace", params);
    const Engine& engine = sim.Run();
    for (const JobRun& run : engine.runs()) EXPECT_EQ(run.first_start, 0);
    return StartNodes(engine);
  };
  for (const char* policy : {"fcfs", "easy", "conservative"}) {
    for (const char* placement : {"first-fit", "best-fit"}) {
      SCOPED_TRACE(std::string(policy) + " " + placement);
      EXPECT_EQ(start_nodes("od,spot", "allow", policy, placement, 1), std::vector<int>{0});
      EXPECT_EQ(start_nodes("od,spot", "prefer", policy, placement, 1), std::vector<int>{1});
      EXPECT_EQ(start_nodes("spot,od", "allow", policy, placement, 1), std::vector<int>{0});
      EXPECT_EQ(start_nodes("spot,od", "avoid", policy, placement, 1), std::vector<int>{1});
      // Both start at 0 (StartNodes lists them by time, then node): one on each node.
      EXPECT_EQ(start_nodes("spot,od", "avoid", policy, placement, 2),
                (std::vector<int>{0, 1}));
    }
  }
}

TEST(Spot, APreferenceWithoutSpotNodesOrAnUnknownOneIsRefused) {
  for (const char* spot : {"prefer", "maybe"}) {
    Params params;
    params.AddAssignment(std::string("spot=") + spot);
    EXPECT_THROW(TestSim(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":8}]})",
                         {MakeJob("a", 0, 8, 100)}, "fcfs", "first-fit", EngineOptions{},
                         "trace", params),
                 InputError)
        << spot;
  }
}

TEST(Spot, BadSpotObjectsAreRefusedNamingTheKey) {
  auto error = [](const std::string& spot) {
    try {
      ClusterSpec::FromJsonText(SpotCluster(spot), "c.json", HardwareCatalog::Default());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error(R"("interruptions_per_hr":1)").find("did you mean \"interruptions_per_hour\""),
            std::string::npos);
  EXPECT_NE(error(R"("interruptions_per_hour":-1)").find("nodes[0].spot.interruptions_per_hour"),
            std::string::npos);
  EXPECT_NE(error(R"("interruptions_per_hour":1e300)").find("from 0 to 3600"), std::string::npos);
  EXPECT_NE(error(R"("notice_seconds":-5,"interruptions_per_hour":1)").find("notice_seconds"),
            std::string::npos);
  EXPECT_NE(error("\"notice_seconds\":30").find("interruptions_per_hour\" (per node-hour) or"),
            std::string::npos);
  const std::string bad = WriteInterruptions("bad.csv", "10,0\n20,1\n");
  const std::string message = error(R"("interruptions":")" + bad + "\"");
  EXPECT_NE(message.find(":3:"), std::string::npos) << message;
  EXPECT_NE(message.find("node (index within the group): expected a number from 0 to 0"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace clustersim
