// Wait reasons (docs/metrics.md#wait-reasons): the ledger's integration, hand-worked waits of
// each kind on small clusters, and every job's reasons adding up to its queued time.
#include "sim/engine/wait_reasons.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>

#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::Nodes;
using testing::PolicySim;
using testing::ReasonsOf;
using testing::TestSim;

using Seconds = std::map<std::string, double>;

TEST(WaitLedger, SplitsAGroupMembersTimeOverTheGroupsReasons) {
  // Group 0 waits for queue_head from 0, capacity from 10, reservation from 25. Job 0 waits
  // [0, 40]: queue_head 10, capacity 15, reservation 15. Job 1 waits [12, 30]: capacity 13,
  // reservation 5.
  WaitLedger ledger;
  ledger.Resize(2);
  ledger.Enter(0, 0, 0.0);
  ledger.SetGroup(0, WaitReason::kCapacity, 10.0);
  ledger.Enter(1, 0, 12.0);
  ledger.SetGroup(0, WaitReason::kReservation, 25.0);
  ledger.Leave(1, 12.0, 30.0);
  ledger.Leave(0, 0.0, 40.0);
  using R = WaitReason;
  EXPECT_EQ(ledger.Seconds(0), (std::vector<std::pair<R, double>>{
                                   {R::kCapacity, 15}, {R::kQueueHead, 10}, {R::kReservation, 15}}));
  EXPECT_EQ(ledger.Seconds(1),
            (std::vector<std::pair<R, double>>{{R::kCapacity, 13}, {R::kReservation, 5}}));
  EXPECT_DOUBLE_EQ(ledger.totals()[static_cast<int>(R::kCapacity)], 28);
}

TEST(WaitLedger, GroupsBeyondSixteenBitsKeepTheirOwnReasons) {
  // A policy with more request classes than 65,536 (EASY's, one per request shape): job 0 in
  // group 70,000 waits [0, 10] for capacity from 4; job 1 in group 70,000 - 65,536 = 4,464 (the
  // same group if the number were cut to 16 bits) waits [0, 10] for queue_head throughout.
  WaitLedger ledger;
  ledger.Resize(2);
  ledger.Enter(0, 70000, 0.0);
  ledger.Enter(1, 70000 - 65536, 0.0);
  ledger.SetGroup(70000, WaitReason::kCapacity, 4.0);
  ledger.Leave(0, 0.0, 10.0);
  ledger.Leave(1, 0.0, 10.0);
  using R = WaitReason;
  EXPECT_EQ(ledger.Seconds(0),
            (std::vector<std::pair<R, double>>{{R::kCapacity, 6}, {R::kQueueHead, 4}}));
  EXPECT_EQ(ledger.Seconds(1), (std::vector<std::pair<R, double>>{{R::kQueueHead, 10}}));
}

TEST(WaitLedger, AnOwnReasonOverridesTheGroupUntilCleared) {
  // Job 0 enters at 0 (group: queue_head), is given capacity at 5, quota at 8, is cleared at 20
  // while the group says priority (since 15), leaves at 30: queue_head 5, capacity 3, quota 12,
  // priority 10. Queued again at 50 and leaving at 60 adds 10 of priority.
  WaitLedger ledger;
  ledger.Resize(1);
  ledger.Enter(0, 0, 0.0);
  ledger.SetOwn(0, WaitReason::kCapacity, false, 0.0, 5.0);
  ledger.SetOwn(0, WaitReason::kQuota, false, 0.0, 8.0);
  ledger.SetGroup(0, WaitReason::kPriority, 15.0);
  ledger.ClearOwn(0, 0.0, 20.0);
  ledger.Leave(0, 0.0, 30.0);
  ledger.Enter(0, 0, 50.0);
  ledger.Leave(0, 50.0, 60.0);
  using R = WaitReason;
  EXPECT_EQ(ledger.Seconds(0), (std::vector<std::pair<R, double>>{{R::kCapacity, 3},
                                                                   {R::kQueueHead, 5},
                                                                   {R::kQuota, 12},
                                                                   {R::kPriority, 20}}));
}

TEST(WaitReasons, TheHeadWaitsForFragmentationAndTheJobBehindItForTheHead) {
  // 2 nodes x 4 GPUs, fcfs, first-fit. A (2 GPUs, 100 s) at 0 -> node 0 {0,1}; B (3 GPUs, 50 s)
  // at 0 -> node 1 {4,5,6}. Free: 2 on node 0, 1 on node 1.
  // C (3 GPUs) at 10: 3 free in total, but no node has 3: fragmentation_gpus until B ends at
  // 50 and C takes node 1. D (1 GPU) at 20 waits behind C (queue_head) and starts at 50 too.
  TestSim sim = PolicySim(Nodes(2, 4),
                          {MakeJob("A", 0, 2, 100), MakeJob("B", 0, 3, 50),
                           MakeJob("C", 10, 3, 10), MakeJob("D", 20, 1, 5)},
                          "fcfs");
  sim.Run();
  EXPECT_EQ(ReasonsOf(sim, "C"), (Seconds{{"fragmentation_gpus", 40}}));
  EXPECT_EQ(ReasonsOf(sim, "D"), (Seconds{{"queue_head", 30}}));
  EXPECT_TRUE(ReasonsOf(sim, "A").empty());
  EXPECT_DOUBLE_EQ(sim.Of("C").queued_seconds, 40);
}

// Host limits: nodes of 8 A100s and 64 CPUs. Each job here states its CPUs only.
Job WithCpus(Job job, int cpus) {
  job.cpu_milli = cpus * 1000;
  return job;
}

TEST(WaitReasons, AGpuJobShortOfCpusWaitsForCpusThoughItStatesNoMemory) {
  // c (CPU-only, 60 CPUs, 100 s) holds the node's CPUs from 0; g (1 GPU, 8 CPUs) finds all 8
  // GPUs free but 4 CPUs: fragmentation_cpus until c ends at 100. Its unstated memory is charged
  // the node's share (1/8), which fits. (Before: fragmentation_gpus, since the test of "its GPUs
  // alone" still charged an unstated CPU share, 8 CPUs, which did not fit either.)
  const std::string node = R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":8,)"
                           R"("cpus":64,"host_memory_gib":512}]})";
  TestSim sim = PolicySim(
      node, {WithCpus(MakeJob("c", 0, 0, 100), 60), WithCpus(MakeJob("g", 0, 1, 10), 8)}, "fcfs");
  sim.Run();
  EXPECT_EQ(ReasonsOf(sim, "g"), (Seconds{{"fragmentation_cpus", 100}}));
}

TEST(WaitReasons, ACpuOnlyJobWaitsForCapacityOrForCpusOnOneNode) {
  // Two nodes of 64 CPUs; c0 and c1 (CPU-only, 60 CPUs, 100 s) hold 60 on each from 0. A job of
  // 10 CPUs at 1: 8 free in all, fewer than it states: capacity until c0 ends at 100 (99 s).
  // (Before: fragmentation_cpus.) The control, 6 CPUs instead: 8 free in all but 4 on each
  // node: fragmentation_cpus for 99 s.
  const std::string nodes = R"({"nodes":[{"count":2,"gpu_type":"A100-80GB","gpus_per_node":8,)"
                            R"("cpus":64}]})";
  // The reasons of a third CPU-only job of `cpus` CPUs at 1, beside c0 and c1.
  const auto third = [&](int cpus) {
    TestSim sim =
        PolicySim(nodes,
                  {WithCpus(MakeJob("c0", 0, 0, 100), 60), WithCpus(MakeJob("c1", 0, 0, 100), 60),
                   WithCpus(MakeJob("c", 1, 0, 10), cpus)},
                  "fcfs");
    sim.Run();
    return ReasonsOf(sim, "c");
  };
  EXPECT_EQ(third(10), (Seconds{{"capacity", 99}}));
  EXPECT_EQ(third(6), (Seconds{{"fragmentation_cpus", 99}}));
}

TEST(WaitReasons, TooFewFreeGpusInTheWholeClusterIsCapacity) {
  // 2 nodes x 4 GPUs, fcfs. A (6 GPUs, 30 s) at 0; B (4 GPUs) at 5: 2 free < 4: capacity until
  // A ends at 30.
  TestSim sim = PolicySim(Nodes(2, 4), {MakeJob("A", 0, 6, 30), MakeJob("B", 5, 4, 10)}, "fcfs");
  sim.Run();
  EXPECT_EQ(ReasonsOf(sim, "B"), (Seconds{{"capacity", 25}}));
}

TEST(WaitReasons, AJobThatWouldDelayTheHeadsReservationWaitsForTheReservation) {
  // 1 node x 4 GPUs, easy with walltime=exact, pool. At 0: A (2 GPUs, 100 s) starts; B (4 GPUs,
  // 50 s) is the blocked head (2 free): capacity, reserved at 100 when A ends. C (2 GPUs,
  // 200 s) fits now but would run past 100 on the head's GPUs: reservation. D (1 GPU, 50 s)
  // ends by 100: backfilled at 0. At 50 D ends; C still may not start (reservation). At 100 A
  // ends, B starts (to 150) and C, now first and with nothing free, waits for capacity until
  // 150. So C: reservation 100 s, capacity 50 s; B: capacity 100 s.
  TestSim sim = PolicySim(Nodes(1, 4),
                          {MakeJob("A", 0, 2, 100), MakeJob("B", 0, 4, 50),
                           MakeJob("C", 0, 2, 200), MakeJob("D", 0, 1, 50)},
                          "easy", "pool", {{"walltime", "exact"}});
  sim.Run();
  testing::ExpectInterval(sim.Of("D"), 0, 50);
  testing::ExpectInterval(sim.Of("B"), 100, 150);
  testing::ExpectInterval(sim.Of("C"), 150, 350);
  EXPECT_EQ(ReasonsOf(sim, "B"), (Seconds{{"capacity", 100}}));
  EXPECT_EQ(ReasonsOf(sim, "C"), (Seconds{{"capacity", 50}, {"reservation", 100}}));
  EXPECT_TRUE(ReasonsOf(sim, "D").empty());
}

TEST(WaitReasons, AJobBeyondItsVirtualClustersQuotaWaitsForTheQuota) {
  // 1 node x 4 GPUs, priority with quota a:2, b:2, pool. B1 and B2 (vc b, 2 GPUs, 1000 s) at 0:
  // B1 within b's quota, B2 borrows the 2 idle GPUs. A1 (vc a, 3 GPUs, 100 s) at 10 exceeds a's
  // quota of 2, so it may only borrow idle GPUs (none) and may not reclaim B2's borrowed ones,
  // which a request within the quota could: it waits for the quota until B1 and B2 end at 1000.
  std::vector<Job> jobs = {MakeJob("B1", 0, 2, 1000), MakeJob("B2", 0, 2, 1000),
                           MakeJob("A1", 10, 3, 100)};
  jobs[0].vc = Symbol("b");
  jobs[1].vc = Symbol("b");
  jobs[2].vc = Symbol("a");
  TestSim sim = PolicySim(Nodes(1, 4), jobs, "priority", "pool", {{"quota", "a:2,b:2"}});
  sim.Run();
  testing::ExpectInterval(sim.Of("A1"), 1000, 1100);
  EXPECT_EQ(ReasonsOf(sim, "A1"), (Seconds{{"quota", 990}}));
}

TEST(WaitReasons, AJobThatFitsOnlyWithFailedGpusWaitsForNodesDown) {
  // 2 nodes x 4 GPUs, fcfs, first-fit; node 1 fails at 0 (failure trace) for 100 s. A (4 GPUs,
  // 20 s) at 0 takes node 0; B (4 GPUs) at 1: 0 free, 4 out of service would make up the
  // count: nodes_down until node 1 is repaired at 100.
  EngineOptions options;
  options.faults.trace.push_back(FailureRecord{0, 1, -1, 100});
  TestSim sim(Nodes(2, 4), {MakeJob("A", 0, 4, 20), MakeJob("B", 1, 4, 10)}, "fcfs", "first-fit",
              options);
  sim.Run();
  testing::ExpectInterval(sim.Of("B"), 20, 30);
  EXPECT_EQ(ReasonsOf(sim, "B"), (Seconds{{"nodes_down", 19}}));
}

// Every registered policy on an overloaded synthetic trace: each job's reason seconds add up to
// its queued time (the engine also checks it under --check, which TestSim turns on).
class WaitReasonSums : public ::testing::TestWithParam<std::string> {};

TEST_P(WaitReasonSums, EveryJobsReasonSecondsAddUpToItsQueuedTime) {
  // 300 jobs of 1, 2, 4 or 8 GPUs arriving every 20 s on average, running 50-1,000 s: about
  // twice what 16 GPUs serve. Draws from std::mt19937_64's raw output (the same everywhere).
  std::mt19937_64 random(7);
  auto uniform = [&] { return (random() >> 11) * 0x1.0p-53; };
  std::vector<Job> jobs;
  double t = 0;
  for (int i = 0; i < 300; ++i) {
    t += -20 * std::log(1 - uniform());
    const int gpus = 1 << (random() % 4);
    jobs.push_back(MakeJob("j" + std::to_string(i), std::floor(t), gpus, 50 + 950 * uniform()));
  }
  TestSim sim = PolicySim(Nodes(2, 8), jobs, GetParam());
  sim.Run();
  const Engine& engine = sim.engine();
  double queued_total = 0;
  int waited = 0;
  for (JobId id = 0; id < static_cast<JobId>(engine.runs().size()); ++id) {
    double sum = 0;
    for (const auto& [reason, seconds] : engine.wait_reasons().Seconds(id)) {
      EXPECT_GT(seconds, 0);
      sum += seconds;
    }
    const double queued = engine.runs()[id].queued_seconds;
    EXPECT_NEAR(sum, queued, 1e-9 * std::max(1.0, queued)) << "job " << id;
    queued_total += queued;
    waited += queued > 0;
  }
  EXPECT_GT(waited, 0) << "the trace must make jobs wait";
  double reasons_total = 0;
  for (double seconds : engine.wait_reasons().totals()) reasons_total += seconds;
  EXPECT_NEAR(reasons_total, queued_total, 1e-9 * queued_total);
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, WaitReasonSums,
                         ::testing::Values("fcfs", "sjf", "easy", "conservative", "fair-share",
                                           "srtf", "las", "priority", "gavel", "least-loaded",
                                           "cosched"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace clustersim
