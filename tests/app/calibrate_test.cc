// `validate --calibrate` (app/calibrate.h) on a log whose machine is known by hand: 200 jobs of
// one processor and 100 s, one every 40 s, recorded on 2 processors under FCFS. Job i then starts
// at start(i) = start(i-2) + 100: job 2k at 100k and job 2k+1 at 100k + 40 (k >= 1; jobs 0 and 1
// at their submission), so job i waits 20 floor(i/2) s. On 1 processor every job waits more; on
// 3 none waits. The search must find the 2 from the first half alone, and the held-out half must
// then match its record exactly.
#include "app/calibrate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/util/error.h"

namespace clustersim {
namespace {

namespace fs = std::filesystem;

class Calibration : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("clustersim_calibrate_" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream log(dir_ / "known.swf");
    log << "; MaxProcs: 2\n";
    for (int i = 0; i < 200; ++i) {
      const int wait = i < 2 ? 0 : 20 * (i / 2);
      // id submit wait run alloc cpu mem req_procs req_time req_mem status user group exe
      // queue partition preceding think
      log << i + 1 << ' ' << 40 * i << ' ' << wait
          << " 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1\n";
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  CalibrationConfig Config() const {
    CalibrationConfig config;
    config.base.trace_path = (dir_ / "known.swf").string();
    config.base.cluster_json =
        R"({"nodes":[{"name":"n","count":3,"gpu_type":"A100-80GB","gpus_per_node":1}]})";
    config.base.cluster = "known.json";
    config.base.policy = "fcfs";
    config.base.out = (dir_ / "out.sqlite").string();
    config.objective = "wait_ks";
    return config;
  }

  fs::path dir_;
};

double Figure(const ValidationReport& r, const std::string& metric, double ValidationRow::*field) {
  const ValidationRow* row = r.Find("all", metric);
  return row ? row->*field : NAN;
}

TEST_F(Calibration, FindsTheRecordedMachineSizeFromTheFirstHalfAndMatchesTheSecondExactly) {
  CalibrationConfig config = Config();
  // The search starts at the first value, 3 processors, a machine where nobody waits.
  config.axes.push_back(ParseCalibrationAxis("nodes[0].count=3,1,2"));
  const CalibrationResult result = Calibrate(config);
  // The split: job 100 (the 101st in submission order) is the first held out, submitted at 4000.
  EXPECT_EQ(result.split_time, 4000);
  EXPECT_EQ(result.calibration_jobs, 100);
  EXPECT_EQ(result.held_out_jobs, 100);
  ASSERT_EQ(result.trials.size(), 3u);  // each value once; the second sweep changes nothing
  const CalibrationTrial& chosen = result.trials[result.chosen];
  EXPECT_EQ(chosen.label, "nodes[0].count=2");
  EXPECT_EQ(chosen.objective, 0);  // the replay is the record: KS 0
  for (const CalibrationTrial& t : result.trials) {
    if (t.label != chosen.label) {
      EXPECT_GT(t.objective, 0.1) << t.label;
    }
  }
  // Held out: jobs 100..199 wait 20 floor(i/2) s, a mean of 20 x 74.5 = 1490 s, in both.
  const ValidationReport& held = result.evaluation.validation;
  EXPECT_EQ(held.jobs_compared, 100);
  EXPECT_EQ(Figure(held, "wait_ks", &ValidationRow::value), 0);
  EXPECT_NEAR(Figure(held, "wait_mean_hours", &ValidationRow::recorded), 1490.0 / 3600, 1e-9);
  EXPECT_NEAR(Figure(held, "wait_mean_hours", &ValidationRow::simulated), 1490.0 / 3600, 1e-9);
  EXPECT_NE(result.evaluation_config.cluster_json.find("\"count\":2"), std::string::npos)
      << result.evaluation_config.cluster_json;
}

TEST_F(Calibration, TheFitObjectiveIsTheWorstTargetInItsUnits) {
  ValidationReport r;
  auto add = [&](const char* metric, double sim, double rec, double value) {
    ValidationRow row;
    row.scope = "all";
    row.metric = metric;
    row.simulated = sim;
    row.recorded = rec;
    row.value = value;
    r.rows.push_back(row);
  };
  add("wait_ks", NAN, NAN, 0.06);                 // 0.06 / 0.15 = 0.4
  add("wait_mean_hours", 3.0, 2.0, 1.0);          // |3 - 2| / (0.25 x 2) = 2
  add("utilization_correlation", NAN, NAN, 0.9);  // (1 - 0.9) / 0.2 = 0.5
  EXPECT_DOUBLE_EQ(CalibrationObjective(r, "fit"), 2.0);
  EXPECT_DOUBLE_EQ(CalibrationObjective(r, "wait_ks"), 0.06);
  // Without a figure the objective cannot be met.
  EXPECT_TRUE(std::isinf(CalibrationObjective(ValidationReport(), "fit")));
}

TEST_F(Calibration, RefusesBadAxesAndAnOutputlessRunBeforeRunningAnything) {
  EXPECT_THROW(ParseCalibrationAxis("=1,2"), InputError);
  EXPECT_THROW(ParseCalibrationAxis("policy=easy,,fcfs"), InputError);
  EXPECT_THROW(ParseCalibrationAxis("policy=easy,easy"), InputError);
  const CalibrationAxis axis = ParseCalibrationAxis("site.scheduler.latency=0,60");
  EXPECT_EQ(axis.key, "site.scheduler.latency");
  EXPECT_EQ(axis.values, (std::vector<std::string>{"0", "60"}));
  CalibrationConfig config = Config();
  config.base.out.clear();
  config.axes.push_back(axis);
  EXPECT_THROW(Calibrate(config), InputError);
  EXPECT_FALSE(fs::exists(dir_ / "out.sqlite"));
}

}  // namespace
}  // namespace clustersim
