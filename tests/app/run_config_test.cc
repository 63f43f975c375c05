// Run config JSON files: values fill options not given on the command line.
#include <gtest/gtest.h>

#include <fstream>

#include "app/run.h"
#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

std::string WriteConfig(const std::string& name, const std::string& text) {
  const std::string path = testing::TempPath(name);
  std::ofstream(path) << text;
  return path;
}

TEST(RunConfig, FillsOptionsAndParamsButTheCommandLineWins) {
  const std::string path = WriteConfig("run.json", R"({
      "trace": "t.csv", "cluster": "dgx-a100", "policy": "las", "placement": "pool",
      "runtime_model": "trace", "seed": 7, "interval": 60, "preemption_cost": 12.5,
      "params": {"thresholds": "100,200", "starvation_seconds": 50}})");
  RunConfig config;
  config.policy = "fcfs";
  config.params.AddAssignment("starvation_seconds=9");
  ApplyRunConfigFile(path, {"policy"}, &config);
  EXPECT_EQ(config.trace_path, "t.csv");
  EXPECT_EQ(config.cluster, "dgx-a100");
  EXPECT_EQ(config.policy, "fcfs");  // given on the command line
  EXPECT_EQ(config.placement, "pool");
  EXPECT_EQ(config.runtime_model, "trace");
  EXPECT_EQ(config.seed, 7);
  EXPECT_EQ(config.engine.timeseries_interval_seconds, 60);
  EXPECT_EQ(config.engine.preemption_cost_seconds, 12.5);
  EXPECT_EQ(config.params.values().at("thresholds"), "100,200");
  EXPECT_EQ(config.params.values().at("starvation_seconds"), "9");  // --param wins
}

TEST(RunConfig, UnknownKeysAndWrongTypesAreErrorsNamingTheFile) {
  RunConfig config;
  try {
    ApplyRunConfigFile(WriteConfig("bad.json", R"({"polcy": "fcfs"})"), {}, &config);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("polcy"), std::string::npos);
  }
  EXPECT_THROW(ApplyRunConfigFile(WriteConfig("bad2.json", R"({"seed": "x"})"), {}, &config),
               InputError);
  EXPECT_THROW(ApplyRunConfigFile(WriteConfig("bad3.json", "[1, 2]"), {}, &config), InputError);
}

}  // namespace
}  // namespace clustersim
