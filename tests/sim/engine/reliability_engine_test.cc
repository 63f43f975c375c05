// Failure models, checkpoint policies, hot spares and tensor-parallel placement in the engine
// (docs/reliability.md), worked by hand: a failure of each domain hits exactly the jobs on it,
// Young's and Daly's intervals on a stated rate and cost, spare swaps (at once, and a spare owed
// until one is usable), asynchronous checkpoints, detection overlapping the wait, checkpoint time
// from a model's state and the cluster's storage, tensor-parallel groups within a node.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "sim/engine/summary.h"
#include "sim/models/failure_catalog.h"
#include "sim/models/model_catalog.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::ExpectInterval;
using testing::MakeJob;
using testing::Nodes;
using testing::TestSim;

FailureRecord NodeFailure(double time, int node, double duration) {
  FailureRecord r;
  r.time = time;
  r.node = node;
  r.duration = duration;
  return r;
}

// A catalog of one cause (docs/reliability.md#failure-models).
FailureCatalog OneCause(const std::string& per, const std::string& domain, double rate_per_hour,
                        double detection = 0, double restart = 0) {
  return FailureCatalog::FromJsonText(
      R"({"name":"test","causes":[{"name":"c","per":")" + per + R"(","domain":")" + domain +
          R"(","rate_per_hour":)" + std::to_string(rate_per_hour) + R"(,"detection_seconds":)" +
          std::to_string(detection) + R"(,"restart_seconds":)" + std::to_string(restart) + "}]}",
      "test");
}

// 4 nodes of 8 GPUs, 2 nodes per rack. x holds nodes 0-1 (GPUs 0-15), y node 2 (16-23), z half
// of node 3 (24-27): first-fit in submission order.
constexpr const char* kFourNodes =
    R"({"nodes":[{"count":4,"gpu_type":"A100-80GB","gpus_per_node":8}],)"
    R"("network":{"nodes_per_rack":2}})";

std::vector<Job> ThreeJobs() {
  return {MakeJob("x", 0, 16, 1e7), MakeJob("y", 0, 8, 1e7), MakeJob("z", 0, 4, 1e7)};
}

// The jobs the first logged failure hit, by trace id.
std::set<std::string> FirstHit(const Engine& engine, const FailureEvent** event) {
  const FailureLog& log = engine.failure_log();
  *event = log.events().empty() ? nullptr : &log.events().front();
  std::set<std::string> ids;
  if (*event == nullptr) return ids;
  for (uint32_t k = 0; k < (*event)->jobs_hit; ++k) {
    ids.insert(engine.trace().jobs[log.job_ids()[(*event)->jobs_begin + k]].id);
  }
  return ids;
}

// Runs the three jobs under a one-cause model with seeds 0..9 (so that different units are
// struck) and checks the first failure's jobs against `expected(first_gpu, first_node)`.
template <typename Expected>
void ExpectEachStrikeHits(const std::string& per, const std::string& domain, int gpus_out,
                          Expected expected) {
  const FailureCatalog catalog = OneCause(per, domain, 50);
  std::set<int> struck;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    EngineOptions options;
    options.faults.failure_model = &catalog;
    options.faults.seed = seed;
    options.stop_time = 3600;
    TestSim sim(kFourNodes, ThreeJobs(), "fcfs", "first-fit", options);
    Engine& engine = sim.Run();
    const FailureEvent* event = nullptr;
    const std::set<std::string> hit = FirstHit(engine, &event);
    ASSERT_NE(event, nullptr) << "seed " << seed;
    EXPECT_EQ(hit, expected(event->first_gpu, event->first_node))
        << domain << " failure at GPU " << event->first_gpu << ", node " << event->first_node;
    EXPECT_EQ(event->gpus_out, gpus_out) << domain;
    struck.insert(event->first_gpu);
  }
  if (per != "cluster") {
    EXPECT_GT(struck.size(), 1u) << "the seeds should strike other units";
  }
}

std::set<std::string> OnGpu(int gpu) {
  if (gpu < 16) return {"x"};
  if (gpu < 24) return {"y"};
  if (gpu < 28) return {"z"};
  return {};
}

TEST(FailureDomains, AGpuFailureHitsTheJobOnThatGpuOnly) {
  ExpectEachStrikeHits("gpu", "gpu", 1, [](int gpu, int) { return OnGpu(gpu); });
}

TEST(FailureDomains, ANodeFailureHitsTheJobsOnThatNode) {
  ExpectEachStrikeHits("node", "node", 8, [](int, int node) {
    return node < 2    ? std::set<std::string>{"x"}
           : node == 2 ? std::set<std::string>{"y"}
                       : std::set<std::string>{"z"};
  });
}

TEST(FailureDomains, ARackFailureHitsEveryJobUnderItsSwitch) {
  // Racks of 2 nodes: rack 0 holds x; rack 1 holds y and z.
  ExpectEachStrikeHits("node", "rack", 16, [](int, int first_node) {
    return first_node == 0 ? std::set<std::string>{"x"} : std::set<std::string>{"y", "z"};
  });
}

TEST(FailureDomains, AJobFailureHitsTheJobOnTheStruckGpuAndTakesNothingOut) {
  // Strikes on the 4 idle GPUs of node 3 hit no job: not failures, not logged.
  ExpectEachStrikeHits("gpu", "job", 0, [](int gpu, int) { return OnGpu(gpu); });
}

TEST(FailureDomains, AClusterFailureHitsEveryRunningJob) {
  ExpectEachStrikeHits("cluster", "cluster", 0, [](int, int) {
    return std::set<std::string>{"x", "y", "z"};
  });
}

TEST(FailureDomains, AFailureThatTakesNothingOutRestartsTheJobWhereItWas) {
  // One job on one node, a cluster-wide failure (no hardware out) with 600 s of detection and 60
  // s of restart; checkpoints every 100 s of computing at no cost. At the first failure, t, the
  // job loses t - 100 floor(t / 100) and restarts at once, paying 660 s before it computes:
  // it ends at D + lost + 660 if that was the only failure.
  const FailureCatalog catalog = OneCause("cluster", "cluster", 0.5, 600, 60);
  const double d = 5000;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    EngineOptions options;
    options.faults.failure_model = &catalog;
    options.faults.seed = seed;
    options.faults.checkpoint_interval_seconds = 100;
    TestSim sim(Nodes(1, 8), {MakeJob("a", 0, 8, d)}, "fcfs", "first-fit", options);
    Engine& engine = sim.Run();
    if (engine.failure_log().events().size() != 1) continue;  // the case worked out below
    const double t = engine.failure_log().events()[0].time;
    const double lost = t - 100 * std::floor(t / 100);
    EXPECT_NEAR(sim.Of("a").end_time, d + lost + 660, 1e-6) << "seed " << seed;
    EXPECT_NEAR(sim.ActiveOf("a").last_start, t, 1e-9);  // restarted at once
    const JobReliability* rel = engine.failure_log().find(0);
    ASSERT_NE(rel, nullptr);
    EXPECT_NEAR(rel->restart_gpu_seconds, 660 * 8, 1e-6);
    EXPECT_EQ(rel->wait_gpu_seconds, 0);
    EXPECT_NEAR(engine.Ettr(0), d / sim.Of("a").end_time, 1e-12);
    return;
  }
  FAIL() << "no seed in 0..39 gives exactly one failure";
}

TEST(FailureDomains, DetectionGoesOnWhileTheJobWaitsForTheRepair) {
  // One node of 8, one job of 8: a node failure (detection 600 s, restart 60 s) requeues the job
  // until the node is back. Repaired after 1000 s the detection is over by then: it restarts
  // paying only 60 s. Repaired after 100 s it still has 500 s of detection to go: 560 s.
  for (const double repair : {1000.0, 100.0}) {
    const FailureCatalog catalog = OneCause("node", "node", 0.2, 600, 60);
    const double d = 5000;
    bool checked = false;
    for (uint64_t seed = 0; seed < 40 && !checked; ++seed) {
      EngineOptions options;
      options.faults.failure_model = &catalog;
      options.faults.seed = seed;
      options.faults.mttr_seconds = repair;
      options.faults.checkpoint_interval_seconds = 100;
      TestSim sim(Nodes(1, 8), {MakeJob("a", 0, 8, d)}, "fcfs", "first-fit", options);
      Engine& engine = sim.Run();
      if (engine.failure_log().events().size() != 1) continue;
      const double t = engine.failure_log().events()[0].time;
      const double lost = t - 100 * std::floor(t / 100);
      const double overhead = 60 + std::max(0.0, 600 - repair);
      EXPECT_NEAR(sim.ActiveOf("a").last_start, t + repair, 1e-6);
      EXPECT_NEAR(sim.Of("a").end_time, d + lost + repair + overhead, 1e-6) << "seed " << seed;
      const JobReliability* rel = engine.failure_log().find(0);
      ASSERT_NE(rel, nullptr);
      EXPECT_NEAR(rel->wait_gpu_seconds, repair * 8, 1e-6);
      EXPECT_NEAR(rel->restart_gpu_seconds, overhead * 8, 1e-6);
      const CauseTotals& totals = engine.failure_log().totals()[0];
      EXPECT_EQ(totals.interruptions, 1);
      EXPECT_NEAR(totals.recompute_gpu_seconds, lost * 8, 1e-6);
      checked = true;
    }
    EXPECT_TRUE(checked) << "no seed in 0..39 gives exactly one failure (repair " << repair << ")";
  }
}

TEST(CheckpointPolicy, YoungSetsTheIntervalFromTheJobsRateAndCost) {
  // One node with a node MTBF of 10^6 s and a save of 1 s: Young's interval sqrt(2 x 1 x 10^6) =
  // 1,414.21 s. A job of 10.5 intervals saves 10 times: it ends at 10.5 tau + 10 s.
  const double m = 1e6;
  const double tau = std::sqrt(2 * 1 * m);
  EngineOptions options;
  options.faults.node_mtbf_seconds.assign(HardwareCatalog::Default().gpus().size(), m);
  options.faults.checkpoint_cost_seconds = 1;
  options.faults.checkpoint.rule = CheckpointRule::kYoung;
  TestSim sim(Nodes(1, 8), {MakeJob("a", 0, 8, 10.5 * tau)}, "fcfs", "first-fit", options);
  Engine& engine = sim.Run();
  ASSERT_EQ(engine.failures(), 0) << "the case worked out assumes no failure in the job's span";
  EXPECT_NEAR(sim.Of("a").end_time, 10.5 * tau + 10, 1e-6);
  EXPECT_NEAR(sim.CostsOf("a").checkpoint_seconds, 10, 1e-9);
  EXPECT_NEAR(engine.Ettr(0), 10.5 * tau / (10.5 * tau + 10), 1e-12);
}

TEST(CheckpointPolicy, DalySetsTheIntervalFromTheJobsRateAndCost) {
  // Two nodes of one job, each with an MTBF of 2 x 10^6 s: the job's M is 10^6 s. Save 100 s:
  // C / 2M = 5e-5, tau = sqrt(2 x 100 x 10^6) (1 + sqrt(5e-5) / 3 + 5e-5 / 9) - 100
  // = 14,142.14 x 1.0023626 - 100 = 14,075.55 s.
  const double tau = std::sqrt(2e8) * (1 + std::sqrt(5e-5) / 3 + 5e-5 / 9) - 100;
  EngineOptions options;
  options.faults.node_mtbf_seconds.assign(HardwareCatalog::Default().gpus().size(), 2e6);
  options.faults.checkpoint_cost_seconds = 100;
  options.faults.checkpoint.rule = CheckpointRule::kDaly;
  TestSim sim(Nodes(2, 8), {MakeJob("a", 0, 16, 3.5 * tau)}, "fcfs", "first-fit", options);
  Engine& engine = sim.Run();
  ASSERT_EQ(engine.failures(), 0) << "the case worked out assumes no failure in the job's span";
  EXPECT_NEAR(sim.Of("a").end_time, 3.5 * tau + 3 * 100, 1e-6);
}

TEST(CheckpointPolicy, LostWorkAndEttrMatchTheRenewalFormulaForPoissonFailures) {
  // One job of 8 GPUs hit by a software-like cause (domain job: nothing taken out, no detection,
  // no restart) at 0.5 / 8 per GPU-hour: lambda = 0.5 per hour. It checkpoints every
  // tau = 1 h at no cost and restarts at once, its checkpoint clock starting again. The time X
  // from a restart to the next failure is exponential (memoryless), and an interruption loses
  // Y = X mod tau. Exactly:
  //   E[Y] = 1 / lambda - tau e^(-lambda tau) / (1 - e^(-lambda tau))
  //        = 2 - 0.606531 / 0.393469 = 0.458506 h, sd(Y) = 0.286888 h (integrated by hand),
  // and by renewal-reward the share of time kept is ETTR = 1 - lambda E[Y] = 0.770747.
  // 2,000 h of work: ~1,297 interruptions, so the mean loss has a standard error of
  // 0.0080 h; over seeds the ETTR of such a job has sd 0.0068 (400 replications in Python).
  // Tolerances: about 4 standard errors.
  const double lambda = 0.5, tau = 1.0;
  const double lost_hours = 1 / lambda - tau * std::exp(-lambda * tau) / -std::expm1(-lambda * tau);
  EXPECT_NEAR(lost_hours, 0.458506, 1e-6);
  const FailureCatalog catalog = OneCause("gpu", "job", lambda / 8);
  EngineOptions options;
  options.faults.failure_model = &catalog;
  options.faults.checkpoint_interval_seconds = tau * 3600;
  options.faults.seed = 3;
  TestSim sim(Nodes(1, 8), {MakeJob("a", 0, 8, 2000 * 3600.0)}, "fcfs", "first-fit", options);
  Engine& engine = sim.Run();
  const JobCosts& costs = sim.CostsOf("a");
  ASSERT_GT(costs.restarts, 1100);
  ASSERT_LT(costs.restarts, 1500);
  EXPECT_NEAR(costs.lost_gpu_seconds / 8 / 3600 / costs.restarts, lost_hours, 0.032);
  EXPECT_NEAR(engine.Ettr(0), 1 - lambda * lost_hours, 0.025);
  // The elapsed time is the work plus what was lost, and nothing else (no costs).
  EXPECT_NEAR(sim.Of("a").end_time, 2000 * 3600.0 + costs.lost_gpu_seconds / 8, 1e-3);
}

TEST(CheckpointPolicy, AnAsynchronousCheckpointCountsOnlyOnceWritten) {
  // Save 100 s written asynchronously: a 10 s copy and 10 % slowdown over the write = 20 s of
  // pause, usable 100 s after the pause. Every 300 s: compute 0-300, pause 300-320 (usable at
  // 420), compute 320-620, pause 620-640 (usable at 740). A failure at 700 finds only the first
  // usable: 300 s of work kept, 700 - 320 = 380 s lost (a synchronous save would keep 600).
  // After 50 s of repair: 700 s left, 750 + 700 + 2 pauses = 1,490.
  EngineOptions options;
  options.faults.checkpoint_interval_seconds = 300;
  options.faults.checkpoint_cost_seconds = 100;
  options.faults.checkpoint.async = true;
  options.faults.checkpoint.async_blocking = 0.1;
  options.faults.checkpoint.async_slowdown = 0.1;
  options.faults.trace = {NodeFailure(700, 0, 50)};
  TestSim sim(Nodes(1, 1), {MakeJob("a", 0, 1, 1000)}, "fcfs", "first-fit", options);
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.CostsOf("a").lost_gpu_seconds, 380);
  EXPECT_DOUBLE_EQ(sim.Of("a").end_time, 1490);
  EXPECT_DOUBLE_EQ(sim.CostsOf("a").checkpoint_seconds, 40 + 40);
}

TEST(HotSpares, AFailedNodeIsSwappedForASpareAfterTheSwapTime) {
  // Nodes 0 and 1 in service, node 2 a spare (swap 120 s). One job of 16 GPUs, 3,000 s,
  // checkpointing every 300 s at no cost. Node 1 fails at 1,000 s for 4 h: 100 s of work lost;
  // the spare enters service and the job restarts at once on nodes 0 and 2 after 120 s: it ends
  // at 1,000 + 120 + 2,100 = 3,220. Node 1 joins the pool, down.
  const std::string spare =
      R"({"nodes":[{"count":2,"gpu_type":"A100-80GB","gpus_per_node":8,"spares":1,)"
      R"("swap_seconds":120}]})";
  EngineOptions options;
  options.faults.checkpoint_interval_seconds = 300;
  options.faults.trace = {NodeFailure(1000, 1, 14400)};
  TestSim sim(spare, {MakeJob("a", 0, 16, 3000)}, "fcfs", "first-fit", options);
  Engine& engine = sim.Run();
  const JobRun& a = sim.Of("a");
  EXPECT_DOUBLE_EQ(sim.ActiveOf("a").last_start, 1000);
  EXPECT_DOUBLE_EQ(a.end_time, 3220);
  EXPECT_EQ(sim.CostsOf("a").restarts, 1);
  EXPECT_DOUBLE_EQ(sim.CostsOf("a").lost_gpu_seconds, 100 * 16);
  const JobReliability* rel = engine.failure_log().find(0);
  ASSERT_NE(rel, nullptr);
  EXPECT_DOUBLE_EQ(rel->restart_gpu_seconds, 120 * 16);
  EXPECT_DOUBLE_EQ(rel->wait_gpu_seconds, 0);
  ASSERT_EQ(engine.failure_log().events().size(), 1u);
  EXPECT_EQ(engine.failure_log().events()[0].spares_used, 1);
  EXPECT_EQ(engine.failure_log().totals()[0].swaps, 1);
  // Node 1 (GPUs 8-15) is out of service, down and in the pool; node 2 is in service.
  std::vector<int> out;
  for (int g = 8; g < 16; ++g) out.push_back(g);
  EXPECT_EQ(engine.failed_gpus(), out);
  // ETTR: 3,000 s of kept work over 3,220 s.
  EXPECT_DOUBLE_EQ(engine.Ettr(0), 3000.0 / 3220);
  const auto summary = ComputeSummary(engine);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "spare_swaps"), 1);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "ettr"), 3000.0 / 3220);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "restart_gpu_hours"), 120.0 * 16 / 3600);
}

TEST(HotSpares, WithoutASpareTheJobWaitsForTheRepair) {
  // The same without the spare: the job waits from 1,000 s to the repair at 15,400 s, then has
  // 2,100 s left: it ends at 17,500; 14,400 s x 16 GPUs waited for capacity.
  EngineOptions options;
  options.faults.checkpoint_interval_seconds = 300;
  options.faults.trace = {NodeFailure(1000, 1, 14400)};
  TestSim sim(Nodes(2, 8), {MakeJob("a", 0, 16, 3000)}, "fcfs", "first-fit", options);
  Engine& engine = sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("a").end_time, 17500);
  EXPECT_DOUBLE_EQ(engine.failure_log().find(0)->wait_gpu_seconds, 14400.0 * 16);
  EXPECT_DOUBLE_EQ(SummaryValue(ComputeSummary(engine), "capacity_wait_gpu_hours"),
                   14400.0 * 16 / 3600);
}

TEST(HotSpares, AFailedNodeWithoutAUsableSpareGetsTheNextOne) {
  // Nodes 0-1 and spare node 2 (swap 120 s); one job of 16 GPUs, 3,000 s, checkpoints every
  // 300 s at no cost. Node 0 fails at 1,000 for 5,000 s: 900 s kept, spare 2 swapped in, the job
  // runs on nodes 1-2 from 1,000 (120 s swap, then computing from 1,120; saved at 1,420).
  // Node 2 fails at 1,500 for 5,000 s: 1,200 s kept, 80 s lost; node 0, the only pool node, is
  // down: no usable spare, node 2 is owed one. At 6,000 node 0 is repaired, usable, and goes to
  // node 2's place: the job restarts on nodes 0-1 with 1,800 s to go and ends at 7,800.
  const std::string spare =
      R"({"nodes":[{"count":2,"gpu_type":"A100-80GB","gpus_per_node":8,"spares":1,)"
      R"("swap_seconds":120}]})";
  EngineOptions options;
  options.faults.checkpoint_interval_seconds = 300;
  options.faults.trace = {NodeFailure(1000, 0, 5000), NodeFailure(1500, 2, 5000)};
  TestSim sim(spare, {MakeJob("a", 0, 16, 3000)}, "fcfs", "first-fit", options);
  Engine& engine = sim.Run();
  const JobRun& a = sim.Of("a");
  EXPECT_DOUBLE_EQ(sim.ActiveOf("a").last_start, 6000);
  EXPECT_DOUBLE_EQ(a.end_time, 7800);
  EXPECT_EQ(sim.CostsOf("a").restarts, 2);
  EXPECT_DOUBLE_EQ(sim.CostsOf("a").lost_gpu_seconds, (100 + 80) * 16);
  const JobReliability* rel = engine.failure_log().find(0);
  ASSERT_NE(rel, nullptr);
  EXPECT_DOUBLE_EQ(rel->wait_gpu_seconds, 4500.0 * 16);
  EXPECT_DOUBLE_EQ(rel->restart_gpu_seconds, 120.0 * 16);  // the first restart's swap only
  ASSERT_EQ(engine.failure_log().events().size(), 2u);
  EXPECT_EQ(engine.failure_log().events()[0].spares_used, 1);
  EXPECT_EQ(engine.failure_log().events()[1].spares_used, 0);
  EXPECT_EQ(engine.failure_log().totals()[0].swaps, 2);  // the owed one counts at 6,000
  // At the end (7,800) node 2, in the pool since 6,000 and repaired at 6,500, is the spare:
  // out of service are its GPUs only.
  std::vector<int> out;
  for (int g = 16; g < 24; ++g) out.push_back(g);
  EXPECT_EQ(engine.failed_gpus(), out);
}

FailureRecord GpuFailure(double time, int node, int gpu, double duration) {
  FailureRecord r = NodeFailure(time, node, duration);
  r.gpu = gpu;
  return r;
}

TEST(HotSpares, AJobHitOnANodeAlreadyInThePoolUsesNoSpare) {
  // Node 0 in service, nodes 1 and 2 spares. a holds GPUs 0-3, b GPUs 4-7 (1,000 s each,
  // checkpoints every 100 s at no cost). At 150 GPU 0 fails (until 1,150): a loses 50 s, spare 1
  // enters service and a restarts there at once (GPUs 8-11); node 0 enters the pool while b still
  // runs on it. At 160 spare 2 loses GPU 16 until 360. At 250 GPU 4 fails: b, on pool node 0,
  // loses 50 s and restarts on node 1 (GPUs 12-15); node 0 is already out of service, so no spare
  // is used and none is owed: at 360, when node 2 is usable again, it stays a spare. Both end at
  // 150 + 900 = 250 + 800 = 1,050. At the end nodes 0 and 2 are the pool: GPUs 0-7 and 16-23.
  const std::string spares =
      R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":8,"spares":2}]})";
  EngineOptions options;
  options.faults.checkpoint_interval_seconds = 100;
  options.faults.trace = {GpuFailure(150, 0, 0, 1000), GpuFailure(160, 2, 0, 200),
                          GpuFailure(250, 0, 4, 2000)};
  TestSim sim(spares, {MakeJob("a", 0, 4, 1000), MakeJob("b", 0, 4, 1000)}, "fcfs", "first-fit",
              options);
  Engine& engine = sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("a").end_time, 1050);
  EXPECT_DOUBLE_EQ(sim.Of("b").end_time, 1050);
  EXPECT_DOUBLE_EQ(sim.CostsOf("a").lost_gpu_seconds, 50 * 4);
  EXPECT_DOUBLE_EQ(sim.CostsOf("b").lost_gpu_seconds, 50 * 4);
  const FailureLog& log = engine.failure_log();
  ASSERT_EQ(log.events().size(), 3u);
  EXPECT_EQ(log.events()[0].spares_used, 1);
  EXPECT_EQ(log.events()[2].jobs_hit, 1u);
  EXPECT_EQ(log.events()[2].spares_used, 0);
  int swaps = 0;
  for (const CauseTotals& t : log.totals()) swaps += t.swaps;
  EXPECT_EQ(swaps, 1);
  std::vector<int> out;
  for (int g = 0; g < 8; ++g) out.push_back(g);
  for (int g = 16; g < 24; ++g) out.push_back(g);
  EXPECT_EQ(engine.failed_gpus(), out);
}

TEST(TensorParallel, GroupsStayWithinANode) {
  // Two nodes of 8. b holds GPUs 0-1; c (8 GPUs, tp 4) needs two groups of 4, each within a
  // node: GPUs 2-5 on node 0 and 8-11 on node 1 (first-fit alone would give 2-7 and 8-9).
  Job b = MakeJob("b", 0, 2, 100);
  Job c = MakeJob("c", 1, 8, 100);
  c.tensor_parallel = 4;
  // The allocation is cleared at the end: the allocation log keeps it.
  TestSim logged(Nodes(2, 8), {b, c}, "fcfs", "first-fit", [] {
    EngineOptions o;
    o.record_allocations = true;
    return o;
  }());
  const Engine& e = logged.Run();
  const AllocationLog& log = e.allocations();
  ASSERT_EQ(log.intervals.size(), 2u);
  const std::span<const int32_t> gpus = log.GpusOf(log.intervals[1]);
  EXPECT_EQ(std::vector<int32_t>(gpus.begin(), gpus.end()),
            (std::vector<int32_t>{2, 3, 4, 5, 8, 9, 10, 11}));
}

TEST(TensorParallel, AGroupLargerThanAnyNodeIsRejectedWithAReason) {
  Job c = MakeJob("c", 0, 16, 100);
  c.tensor_parallel = 16;
  TestSim sim(Nodes(2, 8), {c});
  sim.Run();
  EXPECT_EQ(sim.Of("c").state, JobState::kRejected);
  EXPECT_NE(sim.ReasonOf("c").find("tensor-parallel"), std::string::npos) << sim.ReasonOf("c");
}

TEST(TensorParallel, ARequestOfTheSameGpusWithoutAGroupIsJudgedApart) {
  // Two nodes of 4. a (8 GPUs) fits across both nodes; b (8 GPUs, tp 8) needs one node of 8 and
  // fits nowhere: rejected, whichever comes first, and c (1 GPU) runs after a. An arrival check
  // that took b's answer for a's (or a's for b's) would queue b for ever or reject a.
  Job a = MakeJob("a", 0, 8, 100);
  Job b = MakeJob("b", 1, 8, 100);
  b.tensor_parallel = 8;
  Job c = MakeJob("c", 2, 1, 10);
  TestSim a_first(Nodes(2, 4), {a, b, c});
  a_first.Run();
  ExpectInterval(a_first.Of("a"), 0, 100);
  EXPECT_EQ(a_first.Of("b").state, JobState::kRejected);
  ExpectInterval(a_first.Of("c"), 100, 110);
  a.submit_time = 1;
  b.submit_time = 0;
  TestSim b_first(Nodes(2, 4), {b, a, c});
  b_first.Run();
  EXPECT_EQ(b_first.Of("b").state, JobState::kRejected);
  ExpectInterval(b_first.Of("a"), 1, 101);
  ExpectInterval(b_first.Of("c"), 101, 111);
}

TEST(CheckpointCost, ComesFromTheModelsStateAndTheClustersStorage) {
  // Llama-3-8B's checkpoint: 8e9 parameters x 14 bytes (16-bit weights, FP32 master copy, Adam's
  // two moments) = 1.12e11 bytes. Storage 100 GB/s at most 10 GB/s per node: a job on 2 nodes
  // writes at 20 GB/s, 5.6 s per save. Every 1,000 s of a 2,500 s job: 2 saves, ends at 2,511.2.
  const std::string cluster = R"({"nodes":[{"count":2,"gpu_type":"H100-80GB","gpus_per_node":8}],)"
                              R"("storage":{"write_gbps":100,"node_gbps":10}})";
  Job a = MakeJob("a", 0, 16, 2500);
  a.model = "Llama-3-8B";
  EngineOptions options;
  options.faults.checkpoint_interval_seconds = 1000;
  TestSim sim(cluster, {a}, "fcfs", "first-fit", options, "trace", Params(),
              &ModelCatalog::Default());
  sim.Run();
  EXPECT_NEAR(sim.Of("a").end_time, 2500 + 2 * 1.12e11 / 20e9, 1e-9);
}

TEST(Reliability, OffByDefaultNothingIsLogged) {
  TestSim sim(Nodes(2, 8), ThreeJobs());
  Engine& engine = sim.Run();
  EXPECT_TRUE(engine.failure_log().productive_seconds().empty());
  EXPECT_TRUE(std::isnan(engine.Ettr(0)));
  EXPECT_TRUE(std::isnan(SummaryValue(ComputeSummary(engine), "ettr")));
}

}  // namespace
}  // namespace clustersim
