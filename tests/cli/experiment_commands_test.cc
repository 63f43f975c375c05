// End-to-end tests of `clustersim compare`. The inputs and hand-computed schedules are in
// tests/app/sweep_test_util.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/app/sweep_test_util.h"

namespace clustersim::testing {
namespace {

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
                                         "--param",
                                         "easy:walltime=exact",
                                         "--out",
                                         out};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  Database db(out);
  EXPECT_EQ(db.Value("SELECT group_concat(policy || ':' || placement || ':' || status, ' ') FROM "
                     "(SELECT * FROM runs ORDER BY run_id)"),
            "fcfs:first-fit:complete easy:first-fit:complete sjf:first-fit:complete");
  // One table row per run: "<run id>  <policy> first-fit ...", with the hand-computed mean waits
  // in seconds (every makespan is under an hour; easy with exact estimates): fcfs 66, easy 18,
  // sjf 18.
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
