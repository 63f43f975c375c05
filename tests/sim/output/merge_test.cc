// End-to-end tests of `clustersim merge` (sim/output/merge.h): duplicate runs and foreign or
// invalid databases are refused and nothing is written. Inputs: tests/app/sweep_test_util.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/app/sweep_test_util.h"

namespace clustersim::testing {
namespace {

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

// A merge copies rows 32 to an INSERT statement, the last few one at a time: runs of 70 jobs
// (two full statements and a tail of 6) must arrive whole, equal to what the runs wrote
// themselves, each run's jobs in job_index order.
TEST(Merge, CopiesEveryRowOfRunsLongerThanOneInsertStatement) {
  TempDir dir;
  const std::string trace = dir.File("seventy.csv");
  ASSERT_EQ(RunCli({"trace", "generate", "--jobs", "70", "--gpus", "8", "--load", "0.9", "--seed",
                    "3", "--out", trace})
                .exit_code,
            0);
  const std::string cluster = TestData("tiny_cluster.json");
  std::vector<std::string> sources;
  for (const char* policy : {"fcfs", "easy"}) {
    sources.push_back(dir.File(std::string(policy) + ".sqlite"));
    const std::vector<std::string> args = {"run",      "--trace",         trace,  "--cluster",
                                           cluster,    "--policy",        policy, "--out",
                                           sources.back(), "--no-progress"};
    const CliResult r = RunCli(args);
    ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  }
  const std::string merged = dir.File("merged.sqlite");
  const CliResult m = RunCli({"merge", merged, sources[0], sources[1]});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  Database db(merged);
  EXPECT_EQ(db.Number("SELECT count(*) FROM jobs"), 140);
  for (const char* table : {"jobs", "timeseries", "summary"}) {
    std::vector<std::string> expected = RowsByRunKey(sources[0], table);
    const std::vector<std::string> second = RowsByRunKey(sources[1], table);
    expected.insert(expected.end(), second.begin(), second.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(RowsByRunKey(merged, table), expected) << table;
  }
  std::string in_order;
  for (int i = 0; i < 70; ++i) in_order += (i > 0 ? "," : "") + std::to_string(i);
  for (int run = 1; run <= 2; ++run) {
    EXPECT_EQ(db.Value("SELECT group_concat(job_index) FROM (SELECT job_index FROM jobs WHERE "
                       "run_id = " + std::to_string(run) + " ORDER BY rowid)"),
              in_order);
  }
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

}  // namespace
}  // namespace clustersim::testing
