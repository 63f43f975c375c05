// Defragmentation by migration (--defrag, docs/defragmentation.md), on hand-worked cases: one
// migration lets an 8-GPU job start at its arrival instead of waiting for a 4-GPU job to end, the
// moved job paying the preemption cost; a migration that would not pay is not made; summary rows
// only with --defrag; policies that do not serve the queue head are refused.
#include <gtest/gtest.h>

#include <map>

#include "policies/defrag.h"
#include "policies/registry.h"
#include "sim/engine/summary.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::Nodes;
using testing::TestSim;

// Two nodes of 8 GPUs (first-fit). t = 0: A (4 GPUs, `a_seconds`) takes node 0's GPUs 0-3, F
// (4 GPUs, 10 s) its GPUs 4-7, B (4 GPUs, 2000 s) node 1's GPUs 8-11. At 10 F ends: 4 GPUs free on
// each node, 8 in all, but no node has 8. At 20 L (8 GPUs, 500 s) arrives.
std::vector<Job> Fragmented(double a_seconds) {
  return {MakeJob("A", 0, 4, a_seconds), MakeJob("F", 0, 4, 10), MakeJob("B", 0, 4, 2000),
          MakeJob("L", 20, 8, 500)};
}

TestSim Sim(std::vector<Job> jobs, bool defrag) {
  EngineOptions options;
  options.record_allocations = true;
  options.defrag = defrag;
  std::unique_ptr<Policy> policy = FindPolicy("fcfs").make(Params());
  if (defrag) policy = MakeDefragmenter(std::move(policy));
  return TestSim(Nodes(2, 8), std::move(jobs), std::move(policy), options);
}

std::vector<int> LastGpusOf(TestSim& sim, const std::string& id) {
  const AllocationLog& log = sim.engine().allocations();
  std::vector<int> gpus;
  for (const AllocationInterval& interval : log.intervals) {
    if (interval.job != sim.IndexOf(id)) continue;
    gpus.assign(log.gpus.begin() + interval.gpu_offset,
                log.gpus.begin() + interval.gpu_offset + interval.gpu_count);
  }
  return gpus;
}

TEST(Defrag, WithoutItTheLargeJobWaitsUntilAFourGpuJobEnds) {
  TestSim sim = Sim(Fragmented(1000), false);
  sim.Run();
  // Node 0 frees at 1000 (A ends), node 1 at 2000 (B): L runs 1000-1500.
  EXPECT_DOUBLE_EQ(sim.Of("L").first_start, 1000);
  EXPECT_DOUBLE_EQ(sim.Of("L").end_time, 1500);
  EXPECT_DOUBLE_EQ(sim.Of("A").end_time, 1000);
  const auto rows = ComputeSummary(sim.engine());
  EXPECT_TRUE(std::isnan(SummaryValue(rows, "migrations")));  // no row without --defrag
}

TEST(Defrag, OneMigrationLetsTheLargeJobStartAtItsArrivalAndTheMovedJobPaysTheCost) {
  TestSim sim = Sim(Fragmented(1000), true);
  sim.Run();
  // At 20 node 0 needs 4 GPUs more: moving A (4 GPUs) to node 1's free GPUs 12-15 gives them; so
  // would moving B to node 0's 4-7. One move each, same cost (4 x 30 = 120 GPU-s): node 0 wins
  // the tie (lower index). Gain: L's 8 GPUs x (1000 - 20) = 7840 GPU-s > 120: it pays.
  EXPECT_DOUBLE_EQ(sim.Of("L").first_start, 20);
  EXPECT_DOUBLE_EQ(sim.Of("L").end_time, 520);
  EXPECT_EQ(LastGpusOf(sim, "L"), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(LastGpusOf(sim, "A"), (std::vector<int>{12, 13, 14, 15}));
  // A computed 0-20 (20 s of its 1000), pays 30 s of save + restore on its new GPUs, then its
  // remaining 980 s: 20 + 30 + 980 = 1030.
  EXPECT_DOUBLE_EQ(sim.Of("A").end_time, 1030);
  EXPECT_DOUBLE_EQ(sim.Of("B").end_time, 2000);
  EXPECT_EQ(sim.CostsOf("A").migrations, 1);
  EXPECT_DOUBLE_EQ(sim.CostsOf("A").migration_gpu_seconds, 120);
  EXPECT_EQ(sim.CostsOf("B").migrations, 0);
  // The allocation log ends A's first interval at 20 with "migrate".
  const AllocationLog& log = sim.engine().allocations();
  bool migrated = false;
  for (const AllocationInterval& interval : log.intervals) {
    if (interval.job == sim.IndexOf("A") && interval.why == IntervalEnd::kMigrate) {
      EXPECT_DOUBLE_EQ(interval.end, 20);
      migrated = true;
    }
  }
  EXPECT_TRUE(migrated);
  const auto rows = ComputeSummary(sim.engine());
  EXPECT_DOUBLE_EQ(SummaryValue(rows, "migrations"), 1);
  EXPECT_DOUBLE_EQ(SummaryValue(rows, "migration_gpu_hours"), 120.0 / 3600);
}

TEST(Defrag, AMigrationThatDoesNotPayIsNotMade) {
  // A ends at 30: at 20 L would otherwise wait 10 s, a gain of 8 x 10 = 80 GPU-s; any move costs
  // 4 x 30 = 120 GPU-s. Nothing moves; L starts at 30 when A ends.
  TestSim sim = Sim(Fragmented(30), true);
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("L").first_start, 30);
  EXPECT_DOUBLE_EQ(sim.Of("A").end_time, 30);
  EXPECT_EQ(sim.CostsOf("A").migrations, 0);
  EXPECT_EQ(sim.CostsOf("B").migrations, 0);
  const auto rows = ComputeSummary(sim.engine());
  EXPECT_DOUBLE_EQ(SummaryValue(rows, "migrations"), 0);
  EXPECT_DOUBLE_EQ(SummaryValue(rows, "migration_gpu_hours"), 0);
}

TEST(Defrag, JustAboveTheBreakEvenTheMigrationIsMade) {
  // A ends at 36: gain 8 x (36 - 20) = 128 GPU-s > 120: A moves and ends at 20 + 30 + 16 = 66.
  TestSim sim = Sim(Fragmented(36), true);
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("L").first_start, 20);
  EXPECT_DOUBLE_EQ(sim.Of("A").end_time, 66);
}

TEST(Defrag, NothingMovesWhenTheMovedJobWouldFitNowhereElse) {
  // Node 1 full (B 8 GPUs): A cannot leave node 0, nor B node 1; L waits for A (1000).
  std::vector<Job> jobs = {MakeJob("A", 0, 4, 1000), MakeJob("F", 0, 4, 10),
                           MakeJob("B", 0, 8, 2000), MakeJob("L", 20, 8, 500)};
  TestSim sim = Sim(std::move(jobs), true);
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("L").first_start, 1000);
  EXPECT_EQ(sim.CostsOf("A").migrations, 0);
}

TEST(Defrag, IsRefusedForAPolicyThatDoesNotServeTheQueueHead) {
  EXPECT_EQ(DefragProblem(*FindPolicy("fcfs").make(Params()), "fcfs"), "");
  for (const char* name : {"sjf", "easy", "las"}) {
    const std::string problem = DefragProblem(*FindPolicy(name).make(Params()), name);
    EXPECT_NE(problem.find("--defrag: policy " + std::string(name)), std::string::npos) << problem;
  }
}

}  // namespace
}  // namespace clustersim
