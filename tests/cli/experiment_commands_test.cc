// End-to-end tests of `clustersim compare`, `clustersim sweep` and `clustersim merge`.
//
// Inputs: tests/data/tiny_trace.csv on tests/data/tiny_cluster.json (two nodes of 4 A100-80GB,
// node 0 = GPUs 0-3, node 1 = GPUs 4-7; runtime model `trace` as the cluster is homogeneous):
//   job  submit gpus duration walltime
//   a      0     4    100      -
//   b     10     8     50      -
//   c     20     2     30      -
//   007   30    16     10      -      more GPUs than the cluster: rejected at arrival
//   e     40     1     10      -
//   f    200     1    100     40      killed at its wall time (timeout) unless walltime=exact
//
// Hand-computed schedules used below (wait = start - submit, over the 5 jobs that start):
//   fcfs: a 0-100; b (8 GPUs) waits for the whole cluster, 100-150; c and e wait behind it
//     (strict blocking): c 150-180, e 150-160; f 200-240 (timeout).
//     waits 0, 90, 130, 110, 0 -> mean 66 s.
//   easy (walltime from the trace; a job without one is planned with its true duration): at 10
//     b is blocked with a reservation at 100 (when a ends) and no extra GPUs; c (ends 50 <= 100)
//     starts at 20 and e (ends 50) at 40 on node 1; b 100-150; f 200-240 (timeout).
//     waits 0, 90, 0, 0, 0 -> mean 18 s. With walltime=exact f runs its 100 s and completes.
//   sjf (shortest first, blocking): at 20 c (30 s) is ahead of b (50 s) and fits: 20-50; at 40
//     e (10 s) is the head and fits: 40-50; b 100-150: the same waits as easy, mean 18 s.
//   fcfs with load factor 2 (inter-arrival gaps doubled: submits 0, 20, 40, 60, 80, 400):
//     a 0-100, b 100-150, c 150-180, e 150-160, f 400-440; waits 0, 80, 110, 70, 0 -> mean 52 s.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/cli/cli_test_util.h"

namespace clustersim::testing {
namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitRunsFailed = 1;

// Copies the tiny trace and cluster into `dir` and writes a spec naming them relatively (so the
// spec's folder, not the working directory, must be what relative paths are resolved against).
std::string WriteSpec(const TempDir& dir, const std::string& name, const std::string& rest) {
  WriteFile(dir.File("tiny_trace.csv"), ReadFile(TestData("tiny_trace.csv")));
  WriteFile(dir.File("tiny_cluster.json"), ReadFile(TestData("tiny_cluster.json")));
  const std::string path = dir.File(name);
  WriteFile(path,
            R"({"traces": ["tiny_trace.csv"], "clusters": ["tiny_cluster.json"])" + rest + "}");
  return path;
}

// The 2 policies x 2 seeds x 2 load factors spec: 8 runs (load factor 0.5: half the arrival
// rate, gaps twice as long). Index order (the last list varies fastest): policy, load factor,
// seed.
std::string EightRunSpec(const TempDir& dir) {
  return WriteSpec(dir, "spec.json",
                   R"(, "policies": ["fcfs", "easy"], "load_factor": [1, 0.5], "seeds": [0, 1])");
}

std::vector<std::string> RunFiles(const std::string& dir) {
  std::vector<std::string> files = EntriesContaining(dir, ".sqlite");
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> Statuses(const std::string& path) {
  Database db(path);
  std::vector<std::string> out;
  for (const auto& row : db.Query("SELECT status FROM runs ORDER BY run_id"))
    out.push_back(*row[0]);
  return out;
}

// Every row of `table`, each prefixed by its run's identity instead of its run_id, sorted:
// equal results for equal runs whatever the run ids and the order the runs were written in.
std::vector<std::string> RowsByRunKey(const std::string& path, const std::string& table) {
  Database db(path);
  std::vector<std::string> names;
  const auto rows = db.Query(
      "SELECT r.policy, r.placement, r.params, r.seed, r.trace_filter, t.* "
      "FROM " +
          table + " t JOIN runs r ON r.run_id = t.run_id",
      &names);
  std::vector<std::string> out;
  for (const auto& row : rows) {
    std::string text;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c >= 5 && names[c] == "run_id") continue;
      text += (row[c] ? *row[c] : "NULL") + "|";
    }
    out.push_back(text);
  }
  std::sort(out.begin(), out.end());
  return out;
}

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

// ---------------------------------------------------------------------------------------------
// merge

TEST(Merge, RejectsTheSameRunTwiceNamingBothFilesAndWritesNothing) {
  TempDir dir;
  const std::string spec = EightRunSpec(dir);
  const std::string out = dir.File("out");
  ASSERT_EQ(RunCli({"sweep", spec, "--out", out}).exit_code, 0);
  const auto files = RunFiles(out);
  const std::string merged = dir.File("merged.sqlite");
  ASSERT_EQ(RunCli({"merge", merged, out}).exit_code, 0);
  // Appending a run that is already there: an error naming the new file and the output.
  const std::string again = out + "/" + files[3];
  const std::vector<std::string> args = {"merge", merged, again};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(args, r);
  EXPECT_NE(
      r.err.find("duplicate run: " + again + " (run 1) is the same run as " + merged + " (run 4)"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(Database(merged).Number("SELECT count(*) FROM runs"), 8);
  // Two inputs holding the same run: the new output is not created.
  const std::string fresh = dir.File("fresh.sqlite");
  const CliResult r2 =
      RunCli({"merge", fresh, out + "/" + files[0], out + "/" + files[1], out + "/" + files[0]});
  EXPECT_EQ(r2.exit_code, kExitBadInput);
  EXPECT_NE(r2.err.find("is the same run as " + out + "/" + files[0]), std::string::npos) << r2.err;
  EXPECT_FALSE(Exists(fresh));
  EXPECT_TRUE(EntriesContaining(dir.path(), ".tmp-").empty());
}

TEST(Merge, RejectsForeignAndInvalidDatabases) {
  TempDir dir;
  const std::string spec = EightRunSpec(dir);
  ASSERT_EQ(RunCli({"sweep", spec, "--out", dir.File("out")}).exit_code, 0);
  const std::string good = dir.File("out") + "/" + RunFiles(dir.File("out"))[0];
  const std::string text = dir.File("notes.sqlite");
  WriteFile(text, "this is not a database\n");
  const std::string foreign = dir.File("foreign.sqlite");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(foreign.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE runs (id INTEGER, name TEXT)", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  struct Case {
    std::string input;
    std::string expected;
  };
  const Case cases[] = {
      {text, text + ": not a SQLite database"},
      {foreign, foreign + ": not a clustersim database: table runs has no column run_id"},
      {dir.File("missing.sqlite"), dir.File("missing.sqlite") + ": no such database file"},
  };
  for (const Case& c : cases) {
    const std::string out = dir.File("merged.sqlite");
    const std::vector<std::string> args = {"merge", out, good, c.input};
    const CliResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(args, r);
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << Describe(args, r);
    EXPECT_FALSE(Exists(out));
  }
  // The output itself as an input.
  const std::string out = dir.File("self.sqlite");
  ASSERT_EQ(RunCli({"merge", out, good}).exit_code, 0);
  const CliResult self = RunCli({"merge", out, out});
  EXPECT_EQ(self.exit_code, kExitBadInput);
  EXPECT_NE(self.err.find(out + ": is the output database itself"), std::string::npos) << self.err;
}

// ---------------------------------------------------------------------------------------------
// compare

TEST(Compare, PrintsOneRowPerPolicyAndWritesEveryRunToOneDatabase) {
  TempDir dir;
  const std::string out = dir.File("compare.sqlite");
  const std::vector<std::string> args = {"compare",
                                         "--trace",
                                         TestData("tiny_trace.csv"),
                                         "--cluster",
                                         TestData("tiny_cluster.json"),
                                         "--policies",
                                         "fcfs,easy,sjf",
                                         "--out",
                                         out};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  Database db(out);
  EXPECT_EQ(db.Value("SELECT group_concat(policy || ':' || placement || ':' || status, ' ') FROM "
                     "(SELECT * FROM runs ORDER BY run_id)"),
            "fcfs:first-fit:complete easy:first-fit:complete sjf:first-fit:complete");
  // One table row per run: "<run id>  <policy> first-fit ...", with the hand-computed mean waits
  // in seconds (every makespan is under an hour): fcfs 66, easy 18, sjf 18.
  const std::map<std::string, std::string> wait_mean = {
      {"fcfs", "66.00"}, {"easy", "18.00"}, {"sjf", "18.00"}};
  int rows = 0;
  for (const std::string& line : Lines(r.out)) {
    for (const auto& [policy, wait] : wait_mean) {
      if (line.find(" " + policy + " ") == std::string::npos) continue;
      ++rows;
      EXPECT_NE(line.find("first-fit"), std::string::npos) << line;
      EXPECT_NE(line.find(" " + wait + " "), std::string::npos) << policy << ": " << line;
    }
  }
  EXPECT_EQ(rows, 3) << r.out;
  EXPECT_NE(r.out.find("in seconds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("written to " + out + " (runs 1-3)"), std::string::npos) << r.out;
  EXPECT_TRUE(EntriesContaining(dir.path(), "compare-tmp").empty());
}

TEST(Compare, CsvParsesWithOneLinePerRunAndScopedParameters) {
  TempDir dir;
  const std::string out = dir.File("compare.sqlite");
  const std::vector<std::string> args = {"compare",
                                         "--trace",
                                         TestData("tiny_trace.csv"),
                                         "--cluster",
                                         TestData("tiny_cluster.json"),
                                         "--policies",
                                         "fcfs,easy",
                                         "--placements",
                                         "first-fit,best-fit",
                                         "--param",
                                         "easy:walltime=exact",
                                         "--csv",
                                         "--out",
                                         out};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;  // header + 2 policies x 2 placements
  const auto header = SplitCsvLine(lines[0]);
  auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<size_t>(it - header.begin());
  };
  const std::vector<std::vector<std::string>> expected = {
      // run_id, policy, placement, jobs_completed, jobs_timeout, wait_seconds_mean
      // easy with walltime=exact: f is planned with its 100 s and completes (no timeout).
      {"1", "fcfs", "first-fit", "4", "1", "66"},
      {"2", "fcfs", "best-fit", "4", "1", "66"},
      {"3", "easy", "first-fit", "5", "0", "18"},
      {"4", "easy", "best-fit", "5", "0", "18"},
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto fields = SplitCsvLine(lines[i + 1]);
    ASSERT_EQ(fields.size(), header.size()) << lines[i + 1];
    EXPECT_EQ(fields[column("run_id")], expected[i][0]);
    EXPECT_EQ(fields[column("policy")], expected[i][1]);
    EXPECT_EQ(fields[column("placement")], expected[i][2]);
    EXPECT_EQ(fields[column("status")], "complete");
    EXPECT_EQ(fields[column("jobs_completed")], expected[i][3]);
    EXPECT_EQ(fields[column("jobs_timeout")], expected[i][4]);
    EXPECT_EQ(fields[column("jobs_rejected")], "1");
    EXPECT_EQ(std::stod(fields[column("wait_seconds_mean")]), std::stod(expected[i][5]));
  }
  Database db(out);
  EXPECT_EQ(db.Value("SELECT group_concat(params, ' ') FROM (SELECT params FROM runs ORDER BY "
                     "run_id)"),
            R"({} {} {"walltime":"exact"} {"walltime":"exact"})");
}

TEST(Compare, AFailingRunWritesNothingAndExitsTwo) {
  TempDir dir;
  const std::string out = dir.File("compare.sqlite");
  // walltime applies to easy only; given to every run, fcfs rejects it.
  const std::vector<std::string> args = {"compare",
                                         "--trace",
                                         TestData("tiny_trace.csv"),
                                         "--cluster",
                                         TestData("tiny_cluster.json"),
                                         "--policies",
                                         "fcfs,easy",
                                         "--param",
                                         "walltime=exact",
                                         "--out",
                                         out};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(args, r);
  EXPECT_NE(r.err.find("policy fcfs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("walltime"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NAME:key=value"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(out));
  EXPECT_TRUE(EntriesContaining(dir.path(), "compare-tmp").empty());
  const CliResult unknown = RunCli(
      {"compare", "--trace", TestData("tiny_trace.csv"), "--policies", "fcfs,nope", "--out", out});
  EXPECT_EQ(unknown.exit_code, kExitBadInput);
  EXPECT_NE(unknown.err.find("unknown policy \"nope\""), std::string::npos) << unknown.err;
  EXPECT_FALSE(Exists(out));
}

}  // namespace
}  // namespace clustersim::testing
