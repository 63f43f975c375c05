// Arrival-only placement (docs/engine.md#arrival-only-placement): --on-no-fit skip,
// --no-departures and the placement curve, with schedules and curve values computed by hand.
#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::Nodes;
using testing::TestSim;

EngineOptions ArrivalOnly(bool skip, bool no_departures) {
  EngineOptions options;
  options.skip_no_fit = skip;
  options.no_departures = no_departures;
  return options;
}

// One node of 2 GPUs: a (2 GPUs, 10 s) at 0; b (1 GPU) at 1 finds nothing free; c (1 GPU) at 20.
std::vector<Job> ThreeJobs() {
  return {MakeJob("a", 0, 2, 10), MakeJob("b", 1, 1, 5), MakeJob("c", 20, 1, 5)};
}

TEST(ArrivalOnly, WaitingIsTheDefaultAJobQueuesUntilGpusFree) {
  TestSim sim(Nodes(1, 2), ThreeJobs());
  sim.Run();
  testing::ExpectInterval(sim.Of("b"), 10, 15);
}

TEST(ArrivalOnly, SkipRejectsAJobThatDoesNotStartWhenItArrivesAndGoesOn) {
  TestSim sim(Nodes(1, 2), ThreeJobs(), "fcfs", "first-fit", ArrivalOnly(true, false));
  sim.Run();
  testing::ExpectInterval(sim.Of("a"), 0, 10);
  EXPECT_EQ(sim.Of("b").state, JobState::kRejected);
  EXPECT_EQ(sim.ReasonOf("b"), "no fit");
  EXPECT_DOUBLE_EQ(sim.Of("b").end_time, 1);
  testing::ExpectInterval(sim.Of("c"), 20, 25);  // a has left by 20
}

TEST(ArrivalOnly, NoDeparturesKeepsEveryStartedJobToTheLastArrival) {
  TestSim sim(Nodes(1, 2), ThreeJobs(), "fcfs", "first-fit", ArrivalOnly(true, true));
  const Engine& engine = sim.Run();
  EXPECT_EQ(sim.Of("a").state, JobState::kUnfinished);
  EXPECT_DOUBLE_EQ(sim.Of("a").first_start, 0);
  EXPECT_EQ(sim.ReasonOf("b"), "no fit");
  EXPECT_EQ(sim.ReasonOf("c"), "no fit");  // a never leaves
  EXPECT_DOUBLE_EQ(engine.metrics().last_time(), 20);
  // a held 2 GPUs from 0 to the end at 20.
  EXPECT_DOUBLE_EQ(engine.metrics().busy_gpu_seconds(), 40);
}

TEST(ArrivalOnly, SkipPlacesJobsArrivingTogetherOneByOne) {
  // Same second: x (2 GPUs) cannot fit beside w, y (1 GPU) still can. fcfs without skip would
  // block y behind x; with skip x is rejected in its own pass and y is placed in its own.
  std::vector<Job> jobs = {MakeJob("w", 0, 1, 100), MakeJob("x", 0, 2, 100),
                           MakeJob("y", 0, 1, 100)};
  TestSim sim(Nodes(1, 2), jobs, "fcfs", "first-fit", ArrivalOnly(true, true));
  sim.Run();
  EXPECT_EQ(sim.ReasonOf("x"), "no fit");
  EXPECT_EQ(sim.Of("y").state, JobState::kUnfinished);
  EXPECT_DOUBLE_EQ(sim.Of("y").first_start, 0);
}

TEST(ArrivalOnly, RunsThatRejectDifferentJobsHaveDifferentFingerprints) {
  // Without departures the events are the three arrivals in both runs. On one node of 2 GPUs,
  // "first" (2 GPUs, then 1, then 1) rejects its second and third jobs; "last" (1, 1, 2)
  // rejects only its third. A fingerprint of the events alone would be equal.
  auto run = [](int g0, int g1, int g2) {
    TestSim sim(Nodes(1, 2), {MakeJob("p", 0, g0, 5), MakeJob("q", 1, g1, 5),
                              MakeJob("r", 2, g2, 5)},
                "fcfs", "first-fit", ArrivalOnly(true, true));
    const Engine& engine = sim.Run();
    EXPECT_EQ(engine.events_processed(), 3u);
    return std::make_pair(engine.fingerprint(), sim.ReasonOf("q"));
  };
  const auto first = run(2, 1, 1);
  const auto last = run(1, 1, 2);
  EXPECT_EQ(first.second, "no fit");
  EXPECT_EQ(last.second, "");
  EXPECT_NE(first.first, last.first);
  EXPECT_EQ(first.first, run(2, 1, 1).first);
}

TEST(ArrivalOnly, PlacementCurveHasOneRowPerPercentWithTheStateAfterTheArrival) {
  // One node of 4 GPUs (capacity 4000 milli). j0 1 GPU at 0 (arrived 25 %), j1 2 GPUs at 1
  // (75 %), j2 2 GPUs at 2 (125 %, no fit). The workload's classes: 1 GPU (weight 1/3), 2 GPUs
  // (2/3). After j1 one GPU is free: the 1-GPU class uses it (fragment 0), the 2-GPU class
  // cannot (fragment 1000), so FGD's expected fragmentation is 2/3 x 1000 milli: 2/3 of the idle
  // capacity and 1/6 of the total.
  std::vector<Job> jobs = {MakeJob("j0", 0, 1, 100), MakeJob("j1", 1, 2, 100),
                           MakeJob("j2", 2, 2, 100)};
  TestSim sim(Nodes(1, 4), jobs, "fcfs", "first-fit", ArrivalOnly(true, true));
  const Engine& engine = sim.Run();
  const auto& curve = engine.placement_curve();
  ASSERT_EQ(curve.size(), 126u);  // 0 .. 125 %
  for (size_t p = 0; p < curve.size(); ++p) EXPECT_EQ(curve[p].percent, static_cast<int>(p));
  // 0..25: after j0. One GPU held, three free: both classes fit on the free GPUs, nothing is
  // fragmented.
  EXPECT_DOUBLE_EQ(curve[0].arrived_share, 0.25);
  EXPECT_DOUBLE_EQ(curve[25].allocated_share, 0.25);
  EXPECT_DOUBLE_EQ(curve[25].frag_idle_share, 0);
  // 26..75: after j1.
  EXPECT_DOUBLE_EQ(curve[26].arrived_share, 0.75);
  EXPECT_DOUBLE_EQ(curve[75].allocated_share, 0.75);
  EXPECT_DOUBLE_EQ(curve[75].unallocated_share, 0);
  EXPECT_NEAR(curve[75].frag_idle_share, 2.0 / 3, 1e-12);
  EXPECT_NEAR(curve[75].frag_total_share, 1.0 / 6, 1e-12);
  EXPECT_EQ(curve[75].failed_jobs, 0);
  // 76..125: after j2 failed.
  EXPECT_DOUBLE_EQ(curve[76].arrived_share, 1.25);
  EXPECT_DOUBLE_EQ(curve[125].allocated_share, 0.75);
  EXPECT_DOUBLE_EQ(curve[125].unallocated_share, 0.5);
  EXPECT_EQ(curve[125].failed_jobs, 1);
}

TEST(ArrivalOnly, PlacementCurveCountsAShareByItsMilli) {
  // gpu_milli 250 on a node of 4 GPUs is 1/16 of the capacity: percents 0..6.
  Job share = MakeJob("s", 0, 1, 100);
  share.gpu_milli = 250;
  TestSim sim(Nodes(1, 4), {share}, "fcfs", "frag-aware", ArrivalOnly(true, true));
  const Engine& engine = sim.Run();
  ASSERT_EQ(engine.placement_curve().size(), 7u);
  EXPECT_DOUBLE_EQ(engine.placement_curve().back().arrived_share, 0.0625);
  EXPECT_DOUBLE_EQ(engine.placement_curve().back().allocated_share, 0.0625);
}

TEST(ArrivalOnly, NoCurveWithoutArrivalOnlySettings) {
  TestSim sim(Nodes(1, 2), ThreeJobs());
  EXPECT_TRUE(sim.Run().placement_curve().empty());
}

}  // namespace
}  // namespace clustersim
