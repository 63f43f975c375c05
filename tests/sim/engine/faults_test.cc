// Failures and checkpoints (docs/engine.md#failures): hand-computed schedules, the failure process
// against renewal theory, determinism, and every policy under failures with the invariant checker.
#include "sim/engine/faults.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "sim/engine/summary.h"
#include "sim/util/error.h"
#include "tests/test_util.h"
#include "workloads/failure_trace.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::Nodes;
using testing::TestSim;
using testing::TempPath;

FailureRecord NodeFailure(double time, int node, double duration, int gpu = -1) {
  FailureRecord r;
  r.time = time;
  r.node = node;
  r.gpu = gpu;
  r.duration = duration;
  return r;
}

TEST(Faults, FailureCostsExactlyTheWorkSinceTheLastCheckpoint) {
  // One GPU; a 1000 s job checkpoints every 300 s of computing, each save taking 10 s; a restart
  // restores for 20 s. The node fails at 700 s for 100 s.
  //   0-300 compute, 300-310 save (300 s of work durable), 310-610 compute, 610-620 save (600
  //   durable), 620-700 compute: 80 s of work lost, 400 s left.
  //   700-800 node down; 800-820 restore; 820-1120 compute, 1120-1130 save, 1130-1230 compute.
  EngineOptions options;
  options.faults.checkpoint_interval_seconds = 300;
  options.faults.checkpoint_cost_seconds = 10;
  options.faults.restore_cost_seconds = 20;
  options.faults.trace = {NodeFailure(700, 0, 100)};
  TestSim sim(Nodes(1, 1), {MakeJob("a", 0, 1, 1000)}, "fcfs", "first-fit", options);
  Engine& engine = sim.Run();
  const JobRun& a = sim.Of("a");
  EXPECT_EQ(a.state, JobState::kCompleted);
  EXPECT_DOUBLE_EQ(a.first_start, 0);
  EXPECT_DOUBLE_EQ(sim.ActiveOf("a").last_start, 800);
  EXPECT_DOUBLE_EQ(a.end_time, 1230);
  const JobCosts& costs = sim.CostsOf("a");
  EXPECT_EQ(costs.restarts, 1);
  EXPECT_DOUBLE_EQ(costs.lost_gpu_seconds, 80);
  EXPECT_DOUBLE_EQ(costs.checkpoint_seconds, 30);
  EXPECT_DOUBLE_EQ(costs.overhead_seconds, 20);
  EXPECT_DOUBLE_EQ(a.run_seconds, 700 + 430);
  EXPECT_EQ(engine.failures(), 1);
  EXPECT_DOUBLE_EQ(engine.down_gpu_seconds(), 100);
  EXPECT_DOUBLE_EQ(engine.down_node_seconds(), 100);
  EXPECT_DOUBLE_EQ(engine.lost_gpu_seconds(), 80);
  EXPECT_DOUBLE_EQ(engine.checkpoint_gpu_seconds(), 30);
  const auto summary = ComputeSummary(engine);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "lost_gpu_hours"), 80.0 / 3600);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "node_hours_down"), 100.0 / 3600);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "restarts"), 1);
}

TEST(Faults, TheRestoreBeforeTheFirstCheckpointIsOverheadNotLostWork) {
  // One GPU; checkpoints every 300 s of computing (saves 10 s), restores 50 s. The node fails
  // at 100 (a loses 100 s: no checkpoint yet) and again at 220, each time for 10 s:
  //   0-100 compute (lost); 100-110 down; 110-160 restore; 160-220 compute (lost: 60 s, no
  //   checkpoint since the restore); 220-230 down; 230-280 restore; then 1,000 s of computing
  //   with a 10 s save after each 300 s (three saves): ends at 280 + 1,030 = 1310.
  // Lost: 100 + 60 = 160 GPU-s; the two restores (100 s) are restart overhead. (Before, the
  // second failure counted its interval's restore as lost too: 210.)
  EngineOptions options;
  options.faults.checkpoint_interval_seconds = 300;
  options.faults.checkpoint_cost_seconds = 10;
  options.faults.restore_cost_seconds = 50;
  options.faults.trace = {NodeFailure(100, 0, 10), NodeFailure(220, 0, 10)};
  TestSim sim(Nodes(1, 1), {MakeJob("a", 0, 1, 1000)}, "fcfs", "first-fit", options);
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("a").end_time, 1310);
  EXPECT_DOUBLE_EQ(sim.CostsOf("a").lost_gpu_seconds, 160);
  EXPECT_DOUBLE_EQ(sim.CostsOf("a").overhead_seconds, 100);
  EXPECT_EQ(sim.CostsOf("a").restarts, 2);
}

TEST(Faults, APreemptionDuringARestartIsNotCountedAsTheFailuresOverhead) {
  // One GPU, srtf, restores 50 s, preemptions cost 30 s. a (1000 s) fails at 100 (node down
  // for 10 s) and restarts at 110, restoring until 160; b (50 s) arrives at 120 and preempts it
  // after 10 s of its restore. b runs [120, 170]; a then pays the 40 s of restore left and the
  // preemption's 30 s, 170-240, and computes until 1240. Restart overhead of the failure: 50
  // GPU-s (10 + 40); the 30 s are the preemption's. (Before, they counted for the failure too:
  // 80.)
  EngineOptions options;
  options.faults.restore_cost_seconds = 50;
  options.preemption_cost_seconds = 30;
  options.faults.trace = {NodeFailure(100, 0, 10)};
  TestSim sim(Nodes(1, 1), {MakeJob("a", 0, 1, 1000), MakeJob("b", 120, 1, 50)}, "srtf",
              "first-fit", options);
  Engine& engine = sim.Run();
  testing::ExpectInterval(sim.Of("b"), 120, 170);
  EXPECT_DOUBLE_EQ(sim.Of("a").end_time, 1240);
  const JobReliability* rel = engine.failure_log().find(0);
  ASSERT_NE(rel, nullptr);
  EXPECT_DOUBLE_EQ(rel->restart_gpu_seconds, 50);
  ASSERT_EQ(engine.failure_log().totals().size(), 1u);
  EXPECT_DOUBLE_EQ(engine.failure_log().totals()[0].restart_gpu_seconds, 50);
}

TEST(Faults, TheSummarysEttrWeightsAShareByItsFractionOfAGpu) {
  // Two nodes of one A100-40GB, frag-aware (it shares GPUs). a holds 100 thousandths of GPU 0
  // and b all of GPU 1, both 100 s from 0. Node 0 fails at 50 for 10 s: a loses its 50 s and
  // runs again [60, 160] (ETTR 100 / 160); b 1. Weighted by the GPUs held: (0.1 x 100 + 1 x
  // 100) / (0.1 x 160 + 1 x 100) = 110 / 116 (before: each weighted as one GPU, 200 / 260).
  EngineOptions options;
  options.faults.trace = {NodeFailure(50, 0, 10)};
  std::vector<Job> jobs = {MakeJob("a", 0, 1, 100), MakeJob("b", 0, 1, 100)};
  jobs[0].gpu_milli = 100;
  TestSim sim(R"({"nodes":[{"count":2,"gpu_type":"A100-40GB","gpus_per_node":1}]})",
              std::move(jobs), "fcfs", "frag-aware", options);
  Engine& engine = sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("a").end_time, 160);
  EXPECT_DOUBLE_EQ(sim.Of("b").end_time, 100);
  EXPECT_NEAR(SummaryValue(ComputeSummary(engine), "ettr"), 110.0 / 116, 1e-12);
}

TEST(Faults, FailureDuringASaveLosesTheUnfinishedCheckpoint) {
  // Interval 300, save 10: a failure at 305 is inside the first save, so nothing is durable and
  // all 305 s are lost; the job restarts from 0 at the repair (no restore cost) and runs 0-300,
  // saves 300-310, computes 310-410 again: ends at 305 + 50 + 410 = 765.
  EngineOptions options;
  options.faults.checkpoint_interval_seconds = 300;
  options.faults.checkpoint_cost_seconds = 10;
  options.faults.trace = {NodeFailure(305, 0, 50)};
  TestSim sim(Nodes(1, 1), {MakeJob("a", 0, 1, 400)}, "fcfs", "first-fit", options);
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.CostsOf("a").lost_gpu_seconds, 305);
  EXPECT_DOUBLE_EQ(sim.Of("a").end_time, 765);
  EXPECT_DOUBLE_EQ(sim.CostsOf("a").checkpoint_seconds, 5 + 10);
}

TEST(Faults, GpuFailureTakesOnlyThatGpuAndItsJob) {
  // One node of 2 GPUs. a (2 GPUs, 500 s) runs from 0; GPU 1 fails at 100 for 50 s: without
  // checkpoints a loses 2 x 100 GPU-s and restarts from the beginning at the repair (150), ending
  // at 650. b (1 GPU, 30 s, submitted at 120) queues behind a under fcfs although GPU 0 is free,
  // and runs 650-680.
  EngineOptions options;
  options.faults.trace = {NodeFailure(100, 0, 50, /*gpu=*/1)};
  TestSim sim(Nodes(1, 2), {MakeJob("a", 0, 2, 500), MakeJob("b", 120, 1, 30)}, "fcfs", "first-fit",
              options);
  Engine& engine = sim.Run();
  EXPECT_DOUBLE_EQ(sim.CostsOf("a").lost_gpu_seconds, 200);
  EXPECT_DOUBLE_EQ(sim.ActiveOf("a").last_start, 150);
  EXPECT_DOUBLE_EQ(sim.Of("a").end_time, 650);
  EXPECT_DOUBLE_EQ(sim.Of("b").first_start, 650);
  EXPECT_DOUBLE_EQ(sim.Of("b").end_time, 680);
  EXPECT_DOUBLE_EQ(engine.down_gpu_seconds(), 50);
  EXPECT_DOUBLE_EQ(engine.down_node_seconds(), 0);
}

TEST(Faults, JobsOnOtherNodesAndFailedNodesPlacementAreHonoured) {
  // Two 1-GPU nodes. a (node 0) and b (node 1) start at 0 for 100 s; node 1 fails at 50 for
  // 1000 s. b restarts on node 0 after a ends (first-fit: node 1 is out of placement), 100-200.
  EngineOptions options;
  options.faults.trace = {NodeFailure(50, 1, 1000)};
  TestSim sim(Nodes(2, 1), {MakeJob("a", 0, 1, 100), MakeJob("b", 0, 1, 100)}, "fcfs", "first-fit",
              options);
  Engine& engine = sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("a").end_time, 100);
  EXPECT_EQ(sim.CostsOf("a").restarts, 0);
  EXPECT_EQ(sim.CostsOf("b").restarts, 1);
  EXPECT_DOUBLE_EQ(sim.Of("b").end_time, 200);
  EXPECT_EQ(sim.ActiveOf("b").allocation.gpus.size(), 0u);  // released at the end
  // The run ends with the last job; the node is still down then: 200 - 50 s.
  EXPECT_DOUBLE_EQ(engine.down_node_seconds(), 150);
}

TEST(Faults, WithoutFailuresOrCheckpointsNothingChanges) {
  std::vector<Job> jobs;
  for (int i = 0; i < 200; ++i) {
    jobs.push_back(MakeJob("j" + std::to_string(i), i * 7.0, 1 + i % 4, 50 + i % 13));
  }
  TestSim plain(Nodes(2, 4), jobs);
  EngineOptions options;
  options.faults.mttr_seconds = 99;  // settings that do nothing without failures
  options.faults.restore_cost_seconds = 5;
  TestSim same(Nodes(2, 4), jobs, "fcfs", "first-fit", options);
  EXPECT_EQ(plain.Run().fingerprint(), same.Run().fingerprint());
}

TEST(Faults, RandomFailuresFollowRenewalTheoryAndTheSeed) {
  // 200 one-GPU nodes, node MTBF 10 h, MTTR 1 h, one job keeping the run going for 2,000 h
  // (checkpointing every second, so it makes progress through failures). Each node alternates
  // up ~Exp(10 h) and down 1 h: over T the expected failures are about 200 T / 11 h and the
  // node-hours down about 200 T / 11 (edge effects < 1 cycle per node).
  auto run = [](uint64_t seed) {
    EngineOptions options;
    options.faults.node_mtbf_seconds.assign(HardwareCatalog::Default().gpus().size(), 36000);
    options.faults.mttr_seconds = 3600;
    options.faults.checkpoint_interval_seconds = 1;
    options.faults.seed = seed;
    auto sim = std::make_unique<TestSim>(Nodes(200, 1),
                                         std::vector<Job>{MakeJob("long", 0, 1, 2000 * 3600.0)},
                                         "fcfs", "first-fit", options);
    sim->Run();
    return sim;
  };
  auto a = run(1);
  const Engine& e = a->engine();
  const double span_hours = e.runs()[0].end_time / 3600;
  ASSERT_GT(span_hours, 2000);
  const double expected = 200 * span_hours / 11;
  EXPECT_NEAR(e.failures() / expected, 1.0, 0.03) << e.failures() << " vs " << expected;
  EXPECT_NEAR(e.down_node_seconds() / 3600 / expected, 1.0, 0.03);
  EXPECT_EQ(e.down_gpu_seconds(), e.down_node_seconds());  // one GPU per node
  // Same seed, same failures; another seed, others.
  EXPECT_EQ(run(1)->engine().fingerprint(), e.fingerprint());
  EXPECT_NE(run(2)->engine().fingerprint(), e.fingerprint());
}

TEST(Faults, MtbfOptionsAndFailureTraceParse) {
  const HardwareCatalog& catalog = HardwareCatalog::Default();
  const auto all = ParseMtbfHours("2.5", catalog, "--node-mtbf");
  for (double v : all) EXPECT_DOUBLE_EQ(v, 9000);
  const auto some = ParseMtbfHours("A100-80GB=10,H100-80GB=20", catalog, "--node-mtbf");
  EXPECT_DOUBLE_EQ(some[*catalog.Find("A100-80GB")], 36000);
  EXPECT_DOUBLE_EQ(some[*catalog.Find("H100-80GB")], 72000);
  EXPECT_TRUE(std::isinf(some[*catalog.Find("V100-16GB")]));
  EXPECT_THROW(ParseMtbfHours("0", catalog, "--node-mtbf"), InputError);
  EXPECT_THROW(ParseMtbfHours("Z100=3", catalog, "--node-mtbf"), InputError);

  const Cluster cluster(ClusterSpec::FromJsonText(Nodes(2, 4), "c", catalog), catalog);
  const std::string path = TempPath("failures.csv");
  std::ofstream(path) << "node,time,duration,gpu\n1,10,5,\n0,3,7,2\n";
  const auto records = LoadFailureTrace(path, cluster);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].node, 1);
  EXPECT_EQ(records[0].gpu, -1);
  EXPECT_DOUBLE_EQ(records[1].time, 3);
  EXPECT_EQ(records[1].gpu, 2);
  std::ofstream(path) << "time,node,duration\n10,2,5\n";  // node 2 does not exist
  try {
    LoadFailureTrace(path, cluster);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("failures.csv:2:4"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace clustersim
