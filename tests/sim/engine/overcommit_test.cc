// GPU memory over-commit (docs/overcommit.md): the reservation of a share under a factor F, and
// which shares one GPU admits, with start and end times computed by hand.
#include <gtest/gtest.h>

#include "sim/engine/overcommit.h"
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

}  // namespace
}  // namespace clustersim
