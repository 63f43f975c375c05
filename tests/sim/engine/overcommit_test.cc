// GPU memory over-commit (docs/overcommit.md): the reservation of a share under a factor F, and
// which shares one GPU admits, with start and end times computed by hand.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sim/engine/overcommit.h"
#include "sim/engine/summary.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::Nodes;
using testing::TestSim;

TEST(Overcommit, AShareReservesItsMilliDividedByTheFactorRoundedUp) {
  EXPECT_EQ(ReservedMilli(600, 1.0), 600);   // no over-commit: the share itself
  EXPECT_EQ(ReservedMilli(600, 1.5), 400);   // 600 / 1.5 = 400 exactly, not rounded up
  EXPECT_EQ(ReservedMilli(600, 1.25), 480);  // 600 / 1.25 = 480
  EXPECT_EQ(ReservedMilli(500, 1.5), 334);   // 333.33 -> 334
  EXPECT_EQ(ReservedMilli(999, 1.1), 909);   // 908.18 -> 909
  EXPECT_EQ(ReservedMilli(1, 4.0), 1);       // 0.25 -> 1: a share never reserves nothing
}

Job Share(const std::string& id, double submit, int milli, double duration) {
  Job job = MakeJob(id, submit, 1, duration);
  job.gpu_milli = static_cast<int16_t>(milli);
  return job;
}

EngineOptions Overcommit(double factor) {
  EngineOptions options;
  options.memory_overcommit = factor;
  options.check_invariants = true;
  return options;
}

// One GPU; a asks 600 thousandths at 0 for 100 s, b 600 at 10 for 100 s. Without over-commit
// 600 + 600 = 1200 > 1000: b waits for a's end at 100 and ends at 200. With F = 1.5 each reserves
// 400 (600 of requested memory within 1.5 x 1000): b starts on arrival at 10 and, running at its
// share's speed, ends at 110.
std::vector<Job> TwoShares() { return {Share("a", 0, 600, 100), Share("b", 10, 600, 100)}; }

TEST(Overcommit, FactorOneRejectsTheSecondShareUntilTheFirstLeavesAsWithoutOvercommit) {
  TestSim sim(Nodes(1, 1), TwoShares(), "fcfs", "frag-aware", Overcommit(1.0));
  sim.Run();
  testing::ExpectInterval(sim.Of("a"), 0, 100);
  testing::ExpectInterval(sim.Of("b"), 100, 200);
}

TEST(Overcommit, FactorOneAndAHalfAdmitsBothSharesOnOneGpu) {
  TestSim sim(Nodes(1, 1), TwoShares(), "fcfs", "frag-aware", Overcommit(1.5));
  sim.Run();
  testing::ExpectInterval(sim.Of("a"), 0, 100);
  testing::ExpectInterval(sim.Of("b"), 10, 110);
}

TEST(Overcommit, AdmissionStopsAtTheFactorTimesTheGpusMemory) {
  // A third share of 600 at 20: 3 x 600 = 1800 > 1.5 x 1000 (reserved 3 x 400 = 1200 > 1000), so
  // it waits for a's end at 100 and ends at 200.
  std::vector<Job> jobs = TwoShares();
  jobs.push_back(Share("c", 20, 600, 100));
  TestSim sim(Nodes(1, 1), jobs, "fcfs", "frag-aware", Overcommit(1.5));
  sim.Run();
  testing::ExpectInterval(sim.Of("b"), 10, 110);
  testing::ExpectInterval(sim.Of("c"), 100, 200);
}

TEST(Overcommit, FactorTwoAdmitsThreeSharesWhoseMemorySumsToAtMostTwoGpus) {
  // 3 x 600 = 1800 <= 2 x 1000 (reserved 3 x 300 = 900): c starts on arrival at 20.
  std::vector<Job> jobs = TwoShares();
  jobs.push_back(Share("c", 20, 600, 100));
  TestSim sim(Nodes(1, 1), jobs, "fcfs", "frag-aware", Overcommit(2.0));
  sim.Run();
  testing::ExpectInterval(sim.Of("c"), 20, 120);
}

// Memory over time (docs/overcommit.md#memory-over-time), on one A100-40GB (40 GB; a thousandth
// is 40 MB) with peaks of 10 s every 100 s and a steady level of half the request. a asks 600
// (24 GB) at 0 for 300 s, b 600 at 5 for 150 s; F = 1.5 admits both (1200 <= 1500). Steady they
// hold 300 + 300 = 600 (24 GB); one in a peak 600 + 300 = 900 (36 GB) fits; both 1200 (48 GB)
// does not. A job's peaks begin one period after its start and every period after:
//   a: [100, 110), [200, 210), [300, ...)   b (started at 5): [105, 115), [205, 215), ...
// At 105 b's peak begins inside a's: 1200 > 1000, and b, whose peak began last (105 > 100), runs
// out of memory. Without checkpoints it loses all 100 s it ran, on its reserved 400 thousandths:
// 0.4 x 100 = 40 GPU-seconds. It goes back to the queue and restarts at once (restore 0 s) at
// 105; its peaks now begin at 205, 305, ...: at 205 a's peak [200, 210) is on, and b runs out of
// memory again (40 more GPU-seconds lost). Restarted at 205, its next peak would begin at 305,
// after a has ended at 300: b runs its 150 s to 355, with 2 restarts.
PeakModel TenSecondsEveryHundred() {
  PeakModel peaks;
  peaks.period_seconds = 100;
  peaks.length_seconds = 10;
  peaks.steady_share = 0.5;
  return peaks;
}

EngineOptions WithPeaks(double factor) {
  EngineOptions options = Overcommit(factor);
  options.peaks = TenSecondsEveryHundred();
  return options;
}

TEST(Overcommit, NextOverflowIsTheFirstPeakStartWhereCoincidingPeaksExceedTheGpu) {
  SharedGpuMemory memory(1, TenSecondsEveryHundred());
  memory.Add(0, 0, 600, 0);
  memory.Add(0, 1, 600, 5);
  EXPECT_DOUBLE_EQ(memory.MemoryAt(0, 50), 600);   // both steady
  EXPECT_DOUBLE_EQ(memory.MemoryAt(0, 100), 900);  // a in its first peak
  EXPECT_DOUBLE_EQ(memory.MemoryAt(0, 105), 1200);
  EXPECT_DOUBLE_EQ(memory.NextOverflow(0, 5, false), 105);
  EXPECT_EQ(memory.Victims(0, 105), std::vector<JobId>{1});
}

TEST(Overcommit, PeaksThatNeverOverlapNeverOverflow) {
  // b started at 35: its peaks [135, 145), [235, 245) fall between a's [100, 110), [200, 210).
  SharedGpuMemory memory(1, TenSecondsEveryHundred());
  memory.Add(0, 0, 600, 0);
  memory.Add(0, 1, 600, 35);
  EXPECT_EQ(memory.NextOverflow(0, 35, false), std::numeric_limits<double>::infinity());
}

TEST(Overcommit, TheJobWhosePeakBeganLastRunsOutOfMemoryEvenIfItStartedFirst) {
  // b started at 95 peaks from 195; a's peak begins at 200, inside b's: a is the victim.
  SharedGpuMemory memory(1, TenSecondsEveryHundred());
  memory.Add(0, 0, 600, 0);
  memory.Add(0, 1, 600, 95);
  EXPECT_DOUBLE_EQ(memory.NextOverflow(0, 95, false), 200);
  EXPECT_EQ(memory.Victims(0, 200), std::vector<JobId>{0});
}

TEST(Overcommit, TiedPeaksTakeTheLaterStartedJobFirst) {
  // Both started at 0 (a first in the trace): their peaks begin together at 100.
  SharedGpuMemory memory(1, TenSecondsEveryHundred());
  memory.Add(0, 0, 600, 0);
  memory.Add(0, 1, 600, 0);
  EXPECT_DOUBLE_EQ(memory.NextOverflow(0, 0, false), 100);
  EXPECT_EQ(memory.Victims(0, 100), std::vector<JobId>{1});  // same start: the larger id
}

TEST(Overcommit, CoincidingPeaksRunTheLastPeakingJobOutOfMemoryAndRequeueIt) {
  TestSim sim(Nodes(1, 1, "A100-40GB"), {Share("a", 0, 600, 300), Share("b", 5, 600, 150)},
              "fcfs", "frag-aware", WithPeaks(1.5));
  const Engine& engine = sim.Run();
  testing::ExpectInterval(sim.Of("a"), 0, 300);
  EXPECT_DOUBLE_EQ(sim.Of("b").first_start, 5);
  EXPECT_DOUBLE_EQ(sim.Of("b").end_time, 355);
  const JobId b = 1;
  EXPECT_EQ(engine.costs(b).restarts, 2);
  EXPECT_DOUBLE_EQ(engine.costs(b).lost_gpu_seconds, 80);
  const FailureLog& log = engine.failure_log();
  ASSERT_EQ(log.causes().size(), 1u);
  EXPECT_EQ(log.causes()[0].name, "gpu-memory");
  EXPECT_EQ(log.totals()[0].interruptions, 2);
  EXPECT_DOUBLE_EQ(log.totals()[0].recompute_gpu_seconds, 80);
  ASSERT_EQ(log.events().size(), 2u);
  EXPECT_DOUBLE_EQ(log.events()[0].time, 105);
  EXPECT_DOUBLE_EQ(log.events()[1].time, 205);
  std::map<std::string, double> summary;
  for (const SummaryRow& row : ComputeSummary(engine, SummaryOptions{})) {
    if (row.scope == "all") summary[row.metric] = row.value;
  }
  EXPECT_DOUBLE_EQ(summary.at("oom_kills"), 2);
  EXPECT_DOUBLE_EQ(summary.at("oom_kill_lost_gpu_hours"), 80.0 / 3600);
}

TEST(Overcommit, AShareRunOutOfMemoryPastItsResubmissionsEndsOomFailed) {
  // One A100-40GB, F = 2: a (800 thousandths, 1,000 s) at 0 and b (800, 500 s) at 5 each reserve
  // 400; steady they hold 400 each, and either's peak makes 1,200 > 1,000. Peaks of 10 s every
  // 100 s from each start. a's peak at 100 runs a out of memory; it restarts at once, and b's
  // peak at 105 runs b out; so on every 100 s. With 4 resubmissions (--oom-retries' default) the
  // fifth run-out, a's at 500, ends a oom-failed. Alone, b (restarted at 405) runs its 500 s:
  // [405, 905]. (Before, the two ran each other out of memory for ever, until the clock limit.)
  TestSim sim(Nodes(1, 1, "A100-40GB"), {Share("a", 0, 800, 1000), Share("b", 5, 800, 500)}, "fcfs",
              "frag-aware", WithPeaks(2.0));
  const Engine& engine = sim.Run();
  EXPECT_EQ(sim.Of("a").state, JobState::kOomFailed);
  EXPECT_DOUBLE_EQ(sim.Of("a").end_time, 500);
  EXPECT_NE(sim.ReasonOf("a").find("5 times"), std::string::npos) << sim.ReasonOf("a");
  testing::ExpectInterval(sim.Of("b"), 5, 905);
  EXPECT_EQ(engine.costs(0).restarts, 4);
  EXPECT_EQ(engine.costs(1).restarts, 4);
  EXPECT_EQ(engine.failure_log().events().size(), 9u);
  std::map<std::string, double> summary;
  for (const SummaryRow& row : ComputeSummary(engine, SummaryOptions{})) {
    if (row.scope == "all") summary[row.metric] = row.value;
  }
  EXPECT_DOUBLE_EQ(summary.at("oom_kills"), 9);  // a's 5 run-outs and b's 4
}

TEST(Overcommit, WithoutOvercommitTheSameJobsNeverShareAndNeverRunOutOfMemory) {
  TestSim sim(Nodes(1, 1, "A100-40GB"), {Share("a", 0, 600, 300), Share("b", 5, 600, 150)},
              "fcfs", "frag-aware", WithPeaks(1.0));
  const Engine& engine = sim.Run();
  testing::ExpectInterval(sim.Of("b"), 300, 450);  // waits for a: 1200 > 1000
  EXPECT_TRUE(engine.failure_log().causes().empty());
}

TEST(Overcommit, ArrivalOnlyRunsEndAtTheLastArrivalWithoutLaterOverflows) {
  // No job leaves: a and b would ping-pong for ever. The last arrival is b's at 5; the overflow
  // at 105 is after it and never comes.
  EngineOptions options = WithPeaks(1.5);
  options.skip_no_fit = true;
  options.no_departures = true;
  TestSim sim(Nodes(1, 1, "A100-40GB"), {Share("a", 0, 600, 300), Share("b", 5, 600, 150)},
              "fcfs", "frag-aware", options);
  const Engine& engine = sim.Run();
  EXPECT_EQ(sim.Of("b").state, JobState::kUnfinished);
  EXPECT_TRUE(engine.failure_log().events().empty());
  EXPECT_DOUBLE_EQ(engine.metrics().last_time(), 5);
}

}  // namespace
}  // namespace clustersim
