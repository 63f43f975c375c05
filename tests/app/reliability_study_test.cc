// `clustersim reliability`'s study (app/reliability_study.h): the model's columns worked by hand
// on a one-cause failure model, the simulation against the model where the model's assumptions
// hold, and bad settings.
#include "app/reliability_study.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

std::string WriteCatalog(const std::string& name, const std::string& text) {
  const std::string path = testing::TempPath(name);
  std::ofstream(path) << text;
  return path;
}

TEST(ReliabilityStudy, ModelColumnsWorkedByHand) {
  // One cause: a node failure, 0.01 per node-hour, detected in 600 s, restarted in 60 s, repaired
  // in 2 h. A job of 16 GPUs on 2 nodes: lambda = 0.02 per hour (MTBF 50 h, 0.48 a day).
  // Checkpoints: Young with a 36 s save: tau = sqrt(2 x 36 x 180,000) = 3,600 s; restore 10 s.
  // No spare: every failure waits for the nodes under repair to clear, a busy period of
  // (e^a - 1) / lambda_cluster with a = 0.02 / h x 2 h = 0.04: 2.0403 h = 7,345.1 s, during
  // which the detection ends: u_hold = 60 + 10 = 70 s, u_wait = 7,345.1 s.
  // ETTR = (1 - lambda (70 + 3,636 / 2)) / ((1 + 36 / 3,600)(1 + lambda x 7,345.1)).
  ReliabilityStudySettings s;
  s.gpus = {16};
  s.spares = {0};
  s.failure_model = WriteCatalog("one_cause.json", R"({"name":"one","causes":[{"name":"node",
      "per":"node","domain":"node","rate_per_hour":0.01,"detection_seconds":600,
      "restart_seconds":60}]})");
  s.mttr_seconds = 7200;
  s.checkpoint.rule = CheckpointRule::kYoung;
  s.save_seconds = 36;
  s.restore_seconds = 10;
  s.seeds = 0;
  const std::vector<ReliabilityRow> rows = RunReliabilityStudy(s, false);
  ASSERT_EQ(rows.size(), 1u);
  const ReliabilityRow& r = rows[0];
  const double lambda = 0.02 / 3600;
  EXPECT_NEAR(r.interruptions_per_day, 0.48, 1e-12);
  EXPECT_NEAR(r.mtbf_hours, 50, 1e-9);
  EXPECT_NEAR(r.plan.interval_seconds, 3600, 1e-9);
  EXPECT_EQ(r.shortage_probability, 1);
  const double busy = std::expm1(0.04) / lambda;
  EXPECT_NEAR(r.hold_seconds, 70, 1e-9);
  EXPECT_NEAR(r.wait_seconds, busy, 1e-6);
  EXPECT_NEAR(r.ettr, (1 - lambda * (70 + 3636.0 / 2)) / (1.01 * (1 + lambda * busy)), 1e-12);

  // With 4 spares the shortage is P(Poisson(a) >= 4) where the spares
  // fail too: a = 0.01 per node-hour x 6 nodes x 2 h = 0.12; and when there is a spare the
  // job holds its GPUs through detection and swap (0 s here): u_hold = 60 + 10 + 600 (1 - P).
  s.spares = {4};
  const ReliabilityRow spared = RunReliabilityStudy(s, false)[0];
  const double a = 0.12;
  const double p = 1 - std::exp(-a) * (1 + a + a * a / 2 + a * a * a / 6);
  EXPECT_NEAR(spared.shortage_probability, p, 1e-12);
  EXPECT_NEAR(spared.hold_seconds, 70 + 600 * (1 - p), 1e-6);
}

TEST(ReliabilityStudy, SimulationAgreesWithTheModelWhenSparesAreAmple) {
  // The fleet model on a 1,024-GPU job with 8 spares (shortage ~0): the model's assumptions hold
  // (no waits, independent failures) and its ETTR is within the spread of 10 seeds of 30 days.
  ReliabilityStudySettings s;
  s.gpus = {1024};
  s.spares = {8};
  s.days = 30;
  s.seeds = 10;
  s.threads = 2;
  s.model = "Llama-3-405B";
  s.storage.write_gbps = s.storage.read_gbps = 2000;
  const ReliabilityRow r = RunReliabilityStudy(s, true)[0];
  ASSERT_EQ(r.sim_ettr.size(), 10u);
  double ettr = 0, per_day = 0;
  for (int k = 0; k < 10; ++k) {
    ettr += r.sim_ettr[k] / 10;
    per_day += r.sim_interruptions_per_day[k] / 10;
  }
  // Llama 3's rates on 1,024 GPUs: 419 / 54 days x 1,024 / 16,384 = 0.485 a day (the rack
  // causes over 64 racks of 2, spares aside).
  EXPECT_NEAR(r.interruptions_per_day, 419.0 / 54 / 16, 0.01);
  // 10 seeds x 30 days see ~145 interruptions: the mean rate within 3 standard errors
  // (sqrt(145) / 300 days = 0.04 a day).
  EXPECT_NEAR(per_day, r.interruptions_per_day, 0.12);
  EXPECT_NEAR(ettr, r.ettr, 0.005);
}

TEST(ReliabilityStudy, BadSettingsAreInputErrors) {
  ReliabilityStudySettings s;
  s.gpus = {12};  // not a multiple of 8
  EXPECT_THROW(RunReliabilityStudy(s, false), InputError);
  s.gpus = {16};
  s.spares = {-1};
  EXPECT_THROW(RunReliabilityStudy(s, false), InputError);
  s.spares = {0};
  s.gpu_type = "H200-NVL-X";
  EXPECT_THROW(RunReliabilityStudy(s, false), InputError);
  s.gpu_type = "H100-80GB";
  s.failure_model = "fleat";
  EXPECT_THROW(RunReliabilityStudy(s, false), InputError);
}

}  // namespace
}  // namespace clustersim
