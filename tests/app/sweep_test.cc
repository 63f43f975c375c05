// End-to-end tests of `clustersim sweep` (app/sweep.h): expansion, shards, resume, failed runs
// and bad specs. The inputs and hand-computed schedules are in tests/app/sweep_test_util.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/app/sweep_test_util.h"

namespace clustersim::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// sweep

TEST(Sweep, TwoPoliciesTwoSeedsTwoLoadsGiveEightCompleteRuns) {
  TempDir dir;
  const std::string spec = EightRunSpec(dir);
  const std::string out = dir.File("out");
  const std::vector<std::string> args = {"sweep", spec, "--out", out, "--jobs", "2"};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const auto files = RunFiles(out);
  ASSERT_EQ(files.size(), 8u) << Describe(args, r);
  for (size_t i = 0; i < files.size(); ++i) {
    // run-<4-digit index>-<8 hex>.sqlite, indices 0..7.
    char prefix[32];
    std::snprintf(prefix, sizeof prefix, "run-%04zu-", i);
    EXPECT_EQ(files[i].rfind(prefix, 0), 0u) << files[i];
    EXPECT_EQ(files[i].size(), std::string("run-0000-12345678.sqlite").size()) << files[i];
    EXPECT_EQ(Statuses(out + "/" + files[i]), std::vector<std::string>{"complete"}) << files[i];
  }
  EXPECT_TRUE(Exists(out + "/sweep.json"));
  EXPECT_NE(r.out.find("8 complete now, 0 already complete, 0 failed"), std::string::npos) << r.out;
  // Index 2 is fcfs, load factor 2, seed 0 (policy, load, seed; seed fastest).
  Database db(out + "/" + files[2]);
  EXPECT_EQ(db.Value("SELECT policy || ' ' || seed FROM runs"), "fcfs 0");
  EXPECT_EQ(db.Number("SELECT value FROM summary WHERE metric = 'wait_seconds_mean'"), 52);
  EXPECT_EQ(db.Number("SELECT submit_time FROM jobs WHERE job_id = 'f'"), 400);
  EXPECT_EQ(db.Number("SELECT count(*) FROM jobs"), 6);
}

TEST(Sweep, ShardsAreDisjointAndTogetherComplete) {
  TempDir dir;
  const std::string spec = EightRunSpec(dir);
  const std::string all = dir.File("all");
  const std::string sharded = dir.File("sharded");
  ASSERT_EQ(RunCli({"sweep", spec, "--out", all, "--jobs", "2"}).exit_code, 0);
  const CliResult shard0 =
      RunCli({"sweep", spec, "--out", sharded, "--shard", "0/2", "--jobs", "1"});
  ASSERT_EQ(shard0.exit_code, 0) << shard0.err;
  const auto after0 = RunFiles(sharded);
  const CliResult shard1 =
      RunCli({"sweep", spec, "--out", sharded, "--shard", "1/2", "--jobs", "1"});
  ASSERT_EQ(shard1.exit_code, 0) << shard1.err;
  const auto after1 = RunFiles(sharded);
  // Shard 0 of 2 holds the even indices, shard 1 the odd ones: 4 each, nothing twice.
  ASSERT_EQ(after0.size(), 4u);
  for (const auto& name : after0) {
    EXPECT_EQ((name[7] - '0') % 2, 0) << name;
  }
  EXPECT_EQ(after1.size(), 8u);
  EXPECT_NE(shard1.out.find("4 complete now, 0 already complete"), std::string::npos) << shard1.out;
  // The same names (stable keys) as the single-process sweep.
  EXPECT_EQ(after1, RunFiles(all));
}

TEST(Sweep, MergedShardsEqualASingleProcessSweep) {
  TempDir dir;
  const std::string spec = EightRunSpec(dir);
  ASSERT_EQ(RunCli({"sweep", spec, "--out", dir.File("all"), "--jobs", "2"}).exit_code, 0);
  ASSERT_EQ(
      RunCli({"sweep", spec, "--out", dir.File("s0"), "--shard", "0/2", "--jobs", "1"}).exit_code,
      0);
  ASSERT_EQ(
      RunCli({"sweep", spec, "--out", dir.File("s1"), "--shard", "1/2", "--jobs", "1"}).exit_code,
      0);
  const std::string single = dir.File("single.sqlite");
  const std::string merged = dir.File("merged.sqlite");
  const CliResult m1 = RunCli({"merge", single, dir.File("all")});
  ASSERT_EQ(m1.exit_code, 0) << m1.err;
  // Shard 1 first: the order of inputs changes run ids, not results.
  const CliResult m2 = RunCli({"merge", merged, dir.File("s1"), dir.File("s0")});
  ASSERT_EQ(m2.exit_code, 0) << m2.err;
  EXPECT_NE(m2.out.find("merged 8 runs from 8 databases"), std::string::npos) << m2.out;
  Database db(merged);
  EXPECT_EQ(db.Number("SELECT count(*) FROM runs"), 8);
  EXPECT_EQ(db.Number("SELECT count(*) FROM runs WHERE status = 'complete'"), 8);
  EXPECT_EQ(db.Value("SELECT group_concat(run_id) FROM (SELECT run_id FROM runs ORDER BY 1)"),
            "1,2,3,4,5,6,7,8");
  EXPECT_EQ(db.Number("SELECT count(*) FROM jobs"), 8 * 6);
  // Every job, timeseries and summary row belongs to a run of this database.
  for (const char* table : {"jobs", "timeseries", "summary"}) {
    EXPECT_EQ(db.Number(std::string("SELECT count(*) FROM ") + table +
                        " WHERE run_id NOT IN (SELECT run_id FROM runs)"),
              0)
        << table;
    EXPECT_EQ(RowsByRunKey(merged, table), RowsByRunKey(single, table)) << table;
  }
  EXPECT_EQ(RowsByRunKey(merged, "jobs").size(), 48u);
  // The two fcfs load-1 runs (seeds 0 and 1) have the hand-computed mean wait of 66 s.
  const auto fcfs_load1 = db.Query(
      "SELECT value FROM summary s JOIN runs r USING (run_id) WHERE metric = 'wait_seconds_mean' "
      "AND scope = 'all' AND policy = 'fcfs' AND trace_filter NOT LIKE '%load_factor%'");
  ASSERT_EQ(fcfs_load1.size(), 2u);
  for (const auto& row : fcfs_load1) EXPECT_EQ(std::stod(*row[0]), 66);
}

TEST(Sweep, ResumeSkipsFinishedRunsAndRedoesMissingOnes) {
  TempDir dir;
  const std::string spec = EightRunSpec(dir);
  const std::string out = dir.File("out");
  ASSERT_EQ(RunCli({"sweep", spec, "--out", out}).exit_code, 0);
  const CliResult again = RunCli({"sweep", spec, "--out", out});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("8 already complete, 0 to run"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("0 complete now, 8 already complete"), std::string::npos) << again.out;
  // A lost database and a leftover temporary file of a killed writer: only that run is redone.
  const auto files = RunFiles(out);
  std::filesystem::remove(out + "/" + files[5]);
  WriteFile(out + "/" + files[5] + ".tmp-99999", "partial");
  const CliResult third = RunCli({"sweep", spec, "--out", out});
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_NE(third.out.find("1 complete now, 7 already complete"), std::string::npos) << third.out;
  EXPECT_NE(third.out.find(files[5]), std::string::npos) << third.out;
  EXPECT_EQ(RunFiles(out), files);
  EXPECT_TRUE(EntriesContaining(out, ".tmp-").empty());
}

TEST(Sweep, ARunWithABadParameterIsRecordedAsFailedWhileTheOthersFinish) {
  TempDir dir;
  // Indices: params[0] seeds 0, 1 -> 0, 1; params[1] seeds 0, 1 -> 2, 3 (failing).
  const std::string spec = WriteSpec(
      dir, "spec.json",
      R"(, "policies": ["easy"], "params": [{}, {"walltime": "nonsense"}], "seeds": [0, 1])");
  const std::string out = dir.File("out");
  const std::vector<std::string> args = {"sweep", spec, "--out", out};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, kExitRunsFailed) << Describe(args, r);
  EXPECT_NE(r.out.find("2 complete now, 0 already complete, 2 failed"), std::string::npos) << r.out;
  const auto files = RunFiles(out);
  ASSERT_EQ(files.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    Database db(out + "/" + files[i]);
    if (i < 2) {
      EXPECT_EQ(db.Value("SELECT status FROM runs"), "complete") << files[i];
      EXPECT_EQ(db.Number("SELECT count(*) FROM jobs"), 6);
    } else {
      EXPECT_EQ(db.Value("SELECT status FROM runs"), "failed") << files[i];
      const auto error = db.Value("SELECT error FROM runs");
      ASSERT_TRUE(error.has_value());
      EXPECT_NE(error->find("walltime=nonsense"), std::string::npos) << *error;
      EXPECT_EQ(db.Value("SELECT params FROM runs"), R"({"walltime":"nonsense"})");
      EXPECT_EQ(db.Number("SELECT count(*) FROM jobs"), 0);
    }
  }
  // Resume retries failed runs (they fail again) and skips the complete ones.
  const CliResult again = RunCli(args);
  EXPECT_EQ(again.exit_code, kExitRunsFailed);
  EXPECT_NE(again.out.find("0 complete now, 2 already complete, 2 failed"), std::string::npos)
      << again.out;
}

TEST(Sweep, ModelSettingsApplyToEveryRunAndAreRecorded) {
  // Models assigned with each run's seed: runs.models records the settings and that seed, and
  // the run key includes them (a sweep without "models" keeps its earlier keys).
  TempDir dir;
  const std::string spec = WriteSpec(
      dir, "spec.json",
      R"(, "policies": ["fcfs", "cosched"], "seeds": [3], )"
      R"("models": {"assign_models": true, "oom_retries": 2, "storage_gbps": 5})");
  const std::string out = dir.File("out");
  const std::vector<std::string> args = {"sweep", spec, "--out", out};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const auto files = RunFiles(out);
  ASSERT_EQ(files.size(), 2u);
  for (const std::string& file : files) {
    Database db(out + "/" + file);
    const std::string models = db.Value("SELECT models FROM runs").value_or("");
    EXPECT_NE(models.find("\"assign_seed\":3"), std::string::npos) << models;
    EXPECT_NE(models.find("\"oom_retries\":2"), std::string::npos) << models;
    EXPECT_NE(models.find("\"storage_gbps\":5"), std::string::npos) << models;
    EXPECT_EQ(db.Number("SELECT count(*) FROM jobs WHERE batch_requested IS NULL"), 0) << file;
  }
  const std::string manifest = ReadFile(out + "/sweep.json");
  EXPECT_NE(manifest.find("assign_models"), std::string::npos);
}

TEST(Sweep, BadSpecsNameTheKeyExitTwoAndWriteNothing) {
  struct Case {
    const char* rest;
    const char* expected;
  };
  const Case cases[] = {
      {R"(, "policies": ["fcfs", "fcfx"])", "policies[1]: unknown policy \"fcfx\""},
      {R"(, "policies": ["fcfs", "fcfs"])", "policies[1]: \"fcfs\" is listed twice"},
      {R"(, "placements": ["first-fit", 3])", "placements[1]"},
      {R"(, "load_factor": [1, 0])", "load_factor[1]: expected a number > 0"},
      {R"(, "load_factor": -2)", "load_factor: expected a number > 0"},
      // The old key, whose factors multiplied the gaps, is refused with the factors to use.
      {R"(, "load_factors": [1, 0.5])",
       "load_factors: was removed: its factors multiplied the gaps between arrivals (0.5 meant "
       "twice the load). Use \"load_factor\": [1, 2]"},
      {R"(, "stop_time": "5x")", "stop_time: unit \"x\": expected s, min, h or d"},
      {R"(, "interval": "-5min")", "interval: expected a positive number of seconds"},
      {R"(, "seeds": [1.5])", "seeds[0]: expected an integer"},
      {R"(, "seed": [1])", "unknown key \"seed\""},
      {R"(, "params": [{"walltime": [1]}])", "params[0].walltime"},
      {R"(, "policies": [])", "policies: expected a non-empty list"},
      {R"(, "models": {"oom_retries": -1})", "models.oom_retries: expected an integer in 0..64"},
      {R"(, "models": {"assign": true})", "unknown key \"models.assign\""},
  };
  for (const Case& c : cases) {
    TempDir dir;
    const std::string spec = WriteSpec(dir, "spec.json", c.rest);
    const std::string out = dir.File("out");
    const std::vector<std::string> args = {"sweep", spec, "--out", out};
    const CliResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(args, r);
    // Every one names the line and column of the offending value (the spec is one line).
    EXPECT_EQ(r.err.find("clustersim: error: " + spec + ":1:"), 0u) << Describe(args, r);
    EXPECT_NE(r.err.find(": " + std::string(c.expected)), std::string::npos) << Describe(args, r);
    EXPECT_FALSE(Exists(out)) << c.rest;
  }
  // A JSON syntax error names line and column: line 2, the ']' after "1," at column 12.
  TempDir dir;
  const std::string spec = dir.File("syntax.json");
  WriteFile(spec, "{\"traces\": [\"t.csv\"],\n \"seeds\": [1,]}\n");
  const CliResult r = RunCli({"sweep", spec, "--out", dir.File("out")});
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_NE(r.err.find(spec + ":2:"), std::string::npos) << r.err;
  const CliResult shard = RunCli({"sweep", spec, "--out", dir.File("out"), "--shard", "2/2"});
  EXPECT_EQ(shard.exit_code, kExitBadInput);
  EXPECT_NE(shard.err.find("--shard 2/2: expected i/N with 0 <= i < N"), std::string::npos)
      << shard.err;
}

}  // namespace
}  // namespace clustersim::testing
