// The failure catalog and the closed-form reliability model (docs/reliability.md): the fleet
// catalog against the Llama 3 table it comes from, Young's and Daly's intervals against their
// papers' own examples, checkpoint plans, ETTR and the spare formulas worked by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/models/failure_catalog.h"
#include "sim/models/reliability.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

// Llama 3 405B's job (Dubey et al. 2024, section 3.3): 16,384 GPUs in 2,048 servers, over the
// 54-day snapshot of Table 5.
constexpr int kLlamaGpus = 16384;
constexpr int kLlamaNodes = 2048;
constexpr double kSnapshotHours = 54 * 24;

TEST(FailureCatalog, FleetHoldsTheLlama3TableCountByCount) {
  const FailureCatalog& fleet = FailureCatalog::Fleet();
  ASSERT_EQ(fleet.causes().size(), 18u);
  double events = 0;
  for (const FailureCause& c : fleet.causes()) events += c.events;
  EXPECT_EQ(events, 419);  // Table 5's unexpected interruptions
  const FailureCause& gpu = fleet.causes()[fleet.Find("faulty-gpu")];
  EXPECT_EQ(gpu.events, 148);
  EXPECT_EQ(gpu.per, FailureUnit::kGpu);
  EXPECT_EQ(gpu.domain, FailureDomain::kGpu);
  EXPECT_DOUBLE_EQ(gpu.rate_per_unit_hour, 148.0 / (16384.0 * 1296));
  const FailureCause& switches = fleet.causes()[fleet.Find("network-switch-cable")];
  EXPECT_EQ(switches.domain, FailureDomain::kRack);
  EXPECT_DOUBLE_EQ(switches.rate_per_unit_hour, 35.0 / (2048.0 * 1296));
  const FailureCause& software = fleet.causes()[fleet.Find("software-bug")];
  EXPECT_EQ(software.domain, FailureDomain::kJob);
  EXPECT_FALSE(software.TakesHardwareOut());
  EXPECT_EQ(software.RepairSeconds(4 * 3600.0), 0);
  EXPECT_DOUBLE_EQ(gpu.RepairSeconds(4 * 3600.0), 4 * 3600.0);  // the run's MTTR
  // MegaScale's detection bound and the 11-minute retry interval (detection + restart).
  EXPECT_EQ(gpu.detection_seconds, 600);
  EXPECT_EQ(gpu.detection_seconds + gpu.restart_seconds, 11 * 60);
}

TEST(FailureCatalog, TheLlamaJobMeetsExactlyItsOwn419InterruptionsIn54Days) {
  // The calibration identity: every cause's rate times the units of the job that reach it, over
  // the snapshot, gives back Table 5's count (the rack causes' racks are the job's own).
  JobFootprint llama;
  llama.gpus = kLlamaGpus;
  llama.nodes = kLlamaNodes;
  llama.rack_nodes = kLlamaNodes;
  const double per_hour =
      JobInterruptionsPerHour(FailureCatalog::Fleet(), llama, kLlamaGpus, kLlamaNodes);
  EXPECT_NEAR(per_hour * kSnapshotHours, 419, 1e-9);
  EXPECT_NEAR(1 / per_hour, 1296.0 / 419, 1e-12);  // 3.09 h between interruptions
}

TEST(FailureCatalog, RackFailuresReachAJobThroughEveryNodeOfItsRacks) {
  // One 8-GPU node in a rack of 32: a switch failure anywhere in the rack interrupts it, so its
  // rate from that cause is 32 x the per-node rate, while a node's own causes count once.
  const FailureCatalog& fleet = FailureCatalog::Fleet();
  JobFootprint one;
  one.gpus = 8;
  one.nodes = 1;
  one.rack_nodes = 32;
  const FailureCause& switches = fleet.causes()[fleet.Find("network-switch-cable")];
  const FailureCause& nic = fleet.causes()[fleet.Find("nic")];
  EXPECT_DOUBLE_EQ(JobInterruptionsPerHour(switches, one, 1024, 128), 32 * 35.0 / (2048.0 * 1296));
  EXPECT_DOUBLE_EQ(JobInterruptionsPerHour(nic, one, 1024, 128), 7.0 / (2048.0 * 1296));
}

TEST(FailureCatalog, ACustomCatalogIsCheckedKeyByKey) {
  const std::string ok = R"({"name":"spot","causes":[{"name":"reclaim","per":"node",
      "domain":"node","rate_per_hour":0.01,"detection_seconds":"30s","repair":"10min"}]})";
  const FailureCatalog c = FailureCatalog::FromJsonText(ok, "spot.json");
  ASSERT_EQ(c.causes().size(), 1u);
  EXPECT_EQ(c.causes()[0].detection_seconds, 30);
  EXPECT_EQ(c.causes()[0].RepairSeconds(4 * 3600.0), 600);
  EXPECT_EQ(c.causes()[0].restart_seconds, 0);
  auto error = [](const std::string& text) {
    try {
      FailureCatalog::FromJsonText(text, "bad.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error(R"({"name":"x","causes":[{"name":"a","per":"node","domian":"node",
      "rate_per_hour":1}]})")
                .find("did you mean \"domain\""),
            std::string::npos);
  EXPECT_NE(error(R"({"name":"x","causes":[{"name":"a","per":"node","domain":"gpu",
      "rate_per_hour":1}]})")
                .find("domain gpu needs per gpu"),
            std::string::npos);
  EXPECT_NE(error(R"({"name":"x","causes":[{"name":"a","per":"gpu","domain":"gpu",
      "events":3}]})")
                .find("exposure.gpu_hours"),
            std::string::npos);
  EXPECT_NE(error(R"({"name":"x","causes":[{"name":"a","per":"gpu","domain":"gpu",
      "events":3,"rate_per_hour":1}]})")
                .find("exactly one of"),
            std::string::npos);
  // The error names the line of the offending value.
  EXPECT_NE(error("{\"name\":\"x\",\n\"causes\":[{\"name\":\"a\",\"per\":\"rack\"}]}").find(":2:"),
            std::string::npos);
  EXPECT_THROW(FailureCatalog::Load("fleat", "--failure-model"), InputError);
}

TEST(CheckpointInterval, YoungIsTheSquareRootOfTwiceCostTimesMtbf) {
  // C = 60 s, M = 3 h = 10,800 s: sqrt(2 x 60 x 10,800) = sqrt(1,296,000) = 1,138.42 s.
  EXPECT_NEAR(YoungIntervalSeconds(60, 10800), 1138.4199576606, 1e-9);
}

TEST(CheckpointInterval, DalyMatchesTheExamplesOfHisPaper) {
  // Daly (2006), with a 5-minute dump (the restart time does not enter eq. 37): M = 24 h gives
  // 117 min, M = 6 h 57 min, M = 15 min 9.1 min (his figure captions). By hand for 24 h:
  // C / 2M = 300 / 172,800 = 1/576, sqrt(2 C M) = 7,200 s,
  // 7,200 (1 + 1/72 + 1/5,184) - 300 = 7,001.39 s = 116.69 min.
  EXPECT_NEAR(DalyIntervalSeconds(300, 86400), 7200 * (1 + 1.0 / 72 + 1.0 / 5184) - 300, 1e-9);
  EXPECT_NEAR(DalyIntervalSeconds(300, 86400) / 60, 117, 0.5);
  EXPECT_NEAR(DalyIntervalSeconds(300, 6 * 3600) / 60, 57, 0.5);
  EXPECT_NEAR(DalyIntervalSeconds(300, 15 * 60) / 60, 9.1, 0.05);
  // Beyond C >= 2M, eq. 37 checkpoints every M.
  EXPECT_EQ(DalyIntervalSeconds(1000, 400), 400);
}

TEST(CheckpointPlan, AsyncPausesForTheCopyAndTheSlowdownAndCountsOnceWritten) {
  CheckpointSettings settings;
  settings.rule = CheckpointRule::kYoung;
  settings.async = true;
  settings.async_blocking = 0.05;
  settings.async_slowdown = 0.1;
  // Save 100 s: copy 5 s + 10 % of the 100 s write = 15 s of pause; usable 100 s later.
  // Young on the pause with M = 10,000 s: sqrt(2 x 15 x 10,000) = 547.72 s (>= the write).
  const CheckpointPlan plan = PlanCheckpoints(settings, 3600, 100, 10000);
  EXPECT_DOUBLE_EQ(plan.pause_seconds, 15);
  EXPECT_DOUBLE_EQ(plan.lag_seconds, 100);
  EXPECT_NEAR(plan.interval_seconds, std::sqrt(300000.0), 1e-9);
  // A write longer than Young's interval bounds it from below: the next copy waits for it.
  EXPECT_DOUBLE_EQ(PlanCheckpoints(settings, 3600, 100, 50).interval_seconds, 100);
  // No failures: the fixed interval.
  EXPECT_DOUBLE_EQ(PlanCheckpoints(settings, 3600, 100, INFINITY).interval_seconds, 3600);
  CheckpointSettings fixed;
  const CheckpointPlan sync = PlanCheckpoints(fixed, 1800, 40, 10000);
  EXPECT_DOUBLE_EQ(sync.interval_seconds, 1800);
  EXPECT_DOUBLE_EQ(sync.pause_seconds, 40);
  EXPECT_DOUBLE_EQ(sync.lag_seconds, 0);
}

TEST(Ettr, FirstOrderModelWorkedByHand) {
  // lambda = 1 per hour, 0.1 h held per interruption, interval 0.5 h, pause 0.01 h, no wait:
  // (1 - 1 x (0.1 + 0.51 / 2)) / (1 + 0.01 / 0.5) = 0.645 / 1.02 = 0.632353.
  const CheckpointPlan plan{1800, 36, 0};
  EXPECT_NEAR(ExpectedEttr(1.0 / 3600, 360, 0, plan), 0.645 / 1.02, 1e-12);
  // Waiting 1 h per interruption outside the GPUs: divided by 1 + 1 x 1.
  EXPECT_NEAR(ExpectedEttr(1.0 / 3600, 360, 3600, plan), 0.645 / 1.02 / 2, 1e-12);
  // An asynchronous lag adds to the work lost: 0.05 h more per interruption.
  EXPECT_NEAR(ExpectedEttr(1.0 / 3600, 360, 0, {1800, 36, 180}), 0.595 / 1.02, 1e-12);
  EXPECT_EQ(ExpectedEttr(10.0 / 3600, 3600, 0, plan), 0);  // clamped
  EXPECT_TRUE(std::isnan(ExpectedEttr(1.0 / 3600, 360, 0, {INFINITY, 0, 0})));
}

TEST(HotSpares, ShortageAndWaitFollowTheNodesUnderRepair) {
  // a = lambda x repair = 0.5 nodes under repair on average (Poisson).
  const double lambda = 0.5 / 3600;
  const double repair = 3600;
  // No spares: every failure waits for a busy period, (e^0.5 - 1) / lambda = 2,335.9 s.
  EXPECT_EQ(SpareShortageProbability(0, lambda, repair), 1);
  EXPECT_NEAR(ExpectedCapacityWaitSeconds(0, lambda, repair), std::expm1(0.5) * 7200, 1e-9);
  // One spare: short when 1 or more are under repair, P = 1 - e^-0.5 = 0.393469; it then waits
  // for an excursion above 1: P(N > 1) / (lambda P(N = 1)) = (1 - 1.5 e^-0.5) / (lambda 0.5
  // e^-0.5) = 0.090204 / (0.5 / 3600 x 0.303265) = 2,141.7 s.
  const double e = std::exp(-0.5);
  EXPECT_NEAR(SpareShortageProbability(1, lambda, repair), 1 - e, 1e-12);
  EXPECT_NEAR(ExpectedCapacityWaitSeconds(1, lambda, repair),
              (1 - e) * (1 - 1.5 * e) / (lambda * 0.5 * e), 1e-6);
  // Many spares: almost never short.
  EXPECT_LT(SpareShortageProbability(8, lambda, repair), 1e-6);
}

TEST(HotSpares, FarMoreSparesThanNodesUnderRepairGiveATinyShortageAndAShortWait) {
  // a = 1 node under repair on average, 32 spares: P(N >= 32) = e^-1 / 32! (1 + 1/33 + 1/(33 x 34)
  // + ...) = 1.4e-36, far below the rounding of 1 - P(N < 32). The excursion above 32 lasts
  // P(N > 32) / (lambda P(N = 32)) = (1/33 + 1/1,122 + 1/39,270 + ...) / lambda
  // = 0.0312205 / lambda.
  const double lambda = 1.0 / 3600;
  const double at = std::exp(-1.0 - std::lgamma(33.0));
  double ratio = 0, term = 1;
  for (int j = 33; j < 60; ++j) {
    term /= j;
    ratio += term;
  }
  EXPECT_NEAR(ratio, 0.0312205, 1e-7);
  const double shortage = at * (1 + ratio);
  EXPECT_NEAR(SpareShortageProbability(32, lambda, 3600) / shortage, 1, 1e-12);
  EXPECT_NEAR(ExpectedCapacityWaitSeconds(32, lambda, 3600) / (shortage * ratio / lambda), 1,
              1e-12);
}

}  // namespace
}  // namespace clustersim
