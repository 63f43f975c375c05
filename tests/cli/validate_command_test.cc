// `clustersim validate` and the allocation log through the real binary: the comparison of a tiny
// trace worked out by hand, --search ranking, refusals, and the `allocations` table checked
// against the `jobs` and `summary` tables of a run with preemptions, failures and OOM restarts.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/cli/cli_test_util.h"

namespace clustersim {
namespace {

using testing::CliResult;
using testing::Database;
using testing::Describe;
using testing::Exists;
using testing::RunCli;
using testing::TempDir;
using testing::WriteFile;

const std::string kSourceDir = CLUSTERSIM_SOURCE_DIR;
const char* const kOneNode = R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}]})";

CliResult RunOk(const std::vector<std::string>& args) {
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  return r;
}

// The trace of Validation.ComparesWithTheRecordJobByJobAsDistributionsAndAsSeries
// (tests/sim/engine/validation_test.cc), in the native format, on 1 node x 4 GPUs: fcfs gives
// waits {0, 90, 80} s against the recorded {0, 90, 130}.
const char* const kRecordedTrace =
    "job_id,submit_time,gpus,duration,user,recorded_start,recorded_end\n"
    "J0,0,4,100,a,0,100\n"
    "J1,10,2,50,b,100,150\n"
    "J2,20,2,100,b,150,250\n";

TEST(ValidateCommand, WritesAndPrintsTheHandComputedComparison) {
  TempDir dir;
  const std::string trace = dir.File("t.csv");
  const std::string cluster = dir.File("c.json");
  const std::string out = dir.File("v.sqlite");
  WriteFile(trace, kRecordedTrace);
  WriteFile(cluster, kOneNode);
  const CliResult r = RunOk({"validate", "--trace", trace, "--cluster", cluster, "--interval", "50",
                             "--out", out, "--check"});
  // W1 = 50/3 s = 0.00463 h; KS = 1/3; mean waits 170/3 and 220/3 s (0.016, 0.020 h).
  EXPECT_NE(r.out.find("KS 0.333   Wasserstein 0.0046 h"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wait mean (h)"), std::string::npos) << r.out;
  Database db(out);
  const double h = 3600;
  EXPECT_NEAR(db.Number("SELECT value FROM validation WHERE scope = 'all' AND "
                        "metric = 'wait_wasserstein_hours'"),
              50.0 / 3 / h, 1e-12);
  EXPECT_NEAR(db.Number("SELECT recorded FROM validation WHERE scope = 'all' AND "
                        "metric = 'wait_p95_hours'"),
              126 / h, 1e-12);
  EXPECT_NEAR(db.Number("SELECT value FROM validation WHERE scope = 'all' AND "
                        "metric = 'utilization_mae'"),
              0.2, 1e-12);
  EXPECT_NEAR(db.Number("SELECT value FROM validation WHERE scope = 'user:b' AND "
                        "metric = 'wait_wasserstein_hours'"),
              25 / h, 1e-12);
  // 5 buckets of 50 s for `all` and for the one size class.
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM validation_series WHERE scope = 'all'"), 5);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM validation_series WHERE scope = 'size:2-4'"), 5);
  EXPECT_EQ(db.Number("SELECT recorded_queue_length FROM validation_series WHERE scope = 'all' "
                      "AND t_start = 100"),
            1);
  // The record is in `jobs`; the allocation log has one row per start.
  EXPECT_EQ(db.Number("SELECT recorded_start FROM jobs WHERE job_id = 'J2'"), 150);
  EXPECT_EQ(db.Number("SELECT recorded_end FROM jobs WHERE job_id = 'J2'"), 250);
  EXPECT_FALSE(db.Value("SELECT recorded_attempts FROM jobs WHERE job_id = 'J2'").has_value());
  EXPECT_EQ(db.Query("SELECT job_index, start_time, end_time, reason, gpus, nodes, gpu_indexes "
                     "FROM allocations ORDER BY start_time, job_index"),
            (std::vector<Database::Row>{{"0", "0", "100", "finish", "4", "0", "0-3"},
                                        {"1", "100", "150", "finish", "2", "0", "0-1"},
                                        {"2", "100", "200", "finish", "2", "0", "2-3"}}));
}

TEST(ValidateCommand, SearchRanksTheConfigurationThatReproducesTheRecordFirst) {
  // 1 node x 4 GPUs. A t=0 4 GPUs 100 s; B t=1 4 GPUs 50 s; C t=2 2 GPUs 10 s; recorded as fcfs
  // runs them: A [0,100), B [100,150), C [150,160). sjf starts C first at 100: C [100,110),
  // B [110,160): waits {0,109,98} against {0,99,148}: W1 = (0 + 1 + 39) / 3 s. fcfs: 0.
  TempDir dir;
  const std::string trace = dir.File("t.csv");
  const std::string cluster = dir.File("c.json");
  const std::string out = dir.File("v.sqlite");
  WriteFile(trace,
            "job_id,submit_time,gpus,duration,recorded_start,recorded_end\n"
            "A,0,4,100,0,100\nB,1,4,50,100,150\nC,2,2,10,150,160\n");
  WriteFile(cluster, kOneNode);
  const CliResult r = RunOk({"validate", "--trace", trace, "--cluster", cluster, "--out", out,
                             "--search", "policy=sjf,fcfs", "--jobs", "2"});
  const size_t first = r.out.find("\n   1 ");
  const size_t second = r.out.find("\n   2 ");
  ASSERT_NE(first, std::string::npos) << r.out;
  ASSERT_NE(second, std::string::npos) << r.out;
  EXPECT_NE(r.out.substr(first, second - first).find("fcfs/first-fit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.substr(second).find("sjf/first-fit"), std::string::npos) << r.out;
  Database db(out);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM runs"), 2);
  EXPECT_NEAR(db.Number("SELECT v.value FROM validation v JOIN runs r USING (run_id) WHERE "
                        "r.policy = 'sjf' AND v.scope = 'all' AND "
                        "v.metric = 'wait_wasserstein_hours'"),
              40.0 / 3 / 3600, 1e-12);
  EXPECT_EQ(db.Number("SELECT v.value FROM validation v JOIN runs r USING (run_id) WHERE "
                      "r.policy = 'fcfs' AND v.scope = 'all' AND "
                      "v.metric = 'wait_wasserstein_hours'"),
            0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM allocations"), 6);
}

TEST(ValidateCommand, RefusesATraceWithoutARecordAndALoadScale) {
  TempDir dir;
  const std::string out = dir.File("v.sqlite");
  const std::string tiny = std::string(CLUSTERSIM_TEST_DATA) + "/tiny_trace.csv";
  std::vector<std::string> args = {"validate", "--trace", tiny, "--out", out};
  CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 2) << Describe(args, r);
  EXPECT_NE(r.err.find("records no start or end times to validate against"), std::string::npos)
      << r.err;
  EXPECT_FALSE(Exists(out));
  const std::string trace = dir.File("t.csv");
  WriteFile(trace, kRecordedTrace);
  args = {"validate", "--trace", trace, "--out", out, "--load-factor", "2"};
  r = RunCli(args);
  EXPECT_EQ(r.exit_code, 2) << Describe(args, r);
  EXPECT_NE(r.err.find("--load-factor: validation compares"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(out));
  args = {"validate", "--trace", trace, "--out", out, "--search", "policy"};
  r = RunCli(args);
  EXPECT_EQ(r.exit_code, 2) << Describe(args, r);
  EXPECT_NE(r.err.find("expected key=value1,value2"), std::string::npos) << r.err;
}

TEST(AllocationsTable, AgreesWithTheJobsAndTheBusyGpuHours) {
  // srtf preempts, node failures restart jobs, assigned models make some starts run out of
  // memory; --check has the engine verify the log after every pass and at the end. Hourly
  // checkpoints let the two-week jobs finish: without them a node failing every 50 h on average
  // restarts them from scratch about as often as they run.
  TempDir dir;
  const std::string out = dir.File("a.sqlite");
  RunOk({"run", "--trace", kSourceDir + "/traces/philly_default.csv", "--first", "1500", "--policy",
         "srtf", "--node-mtbf", "50", "--checkpoint-interval", "1h", "--assign-models",
         "--record-allocations", "--check", "--out", out, "--no-progress"});
  Database db(out);
  for (const char* reason : {"finish", "preempt", "failure", "oom"}) {
    EXPECT_GT(
        db.Number(std::string("SELECT COUNT(*) FROM allocations WHERE reason = '") + reason + "'"),
        0)
        << reason;
  }
  // One row per start: the first start, and one more per preemption, failure and OOM failure
  // that sent the job back to the queue (the last OOM failure of an oom-failed job does not).
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs j WHERE (SELECT COUNT(*) FROM allocations a "
                      "WHERE a.run_id = j.run_id AND a.job_index = j.job_index) != CASE WHEN "
                      "j.start_time IS NULL THEN 0 ELSE 1 + j.preemptions + j.restarts + "
                      "j.oom_failures - (j.status = 'oom-failed') END"),
            0);
  EXPECT_GT(db.Number("SELECT COUNT(*) FROM jobs WHERE status = 'oom-failed'"), 0);
  // Per job, the intervals add up to its running time and start at its first start.
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs j WHERE j.start_time IS NOT NULL AND "
                      "(abs((SELECT SUM(end_time - start_time) FROM allocations a WHERE "
                      "a.job_index = j.job_index) - j.run_time) > 1e-6 * (1 + j.run_time) OR "
                      "(SELECT MIN(start_time) FROM allocations a WHERE a.job_index = "
                      "j.job_index) != j.start_time)"),
            0);
  // Their GPU-seconds are the busy GPU-seconds the metrics integrated.
  const double logged = db.Number(
      "SELECT SUM((end_time - start_time) * gpus * coalesce(gpu_milli, 1000) / 1000.0) FROM "
      "allocations");
  const double busy = 3600 * db.Number(
                                 "SELECT value FROM summary WHERE metric = 'busy_gpu_hours' AND "
                                 "scope = 'all'");
  EXPECT_NEAR(logged, busy, 1e-9 * busy);
  // GPU and node ranges parse and match the GPU count.
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM allocations WHERE gpu_indexes = '' OR nodes = ''"), 0);
}

TEST(AllocationsTable, MergeCopiesItAndAcceptsDatabasesWithoutIt) {
  TempDir dir;
  const std::string trace = dir.File("t.csv");
  const std::string cluster = dir.File("c.json");
  const std::string validated = dir.File("v.sqlite");
  WriteFile(trace, kRecordedTrace);
  WriteFile(cluster, kOneNode);
  RunOk({"validate", "--trace", trace, "--cluster", cluster, "--out", validated});
  // An older database: the same kind of run, without the three tables.
  const std::string older = dir.File("old.sqlite");
  RunOk({"run", "--trace", trace, "--cluster", cluster, "--policy", "sjf", "--out", older,
         "--no-progress"});
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(older.c_str(), &raw), SQLITE_OK);
    for (const char* table : {"allocations", "validation", "validation_series"}) {
      EXPECT_EQ(sqlite3_exec(raw, (std::string("DROP TABLE ") + table).c_str(), nullptr, nullptr,
                             nullptr),
                SQLITE_OK);
    }
    sqlite3_close(raw);
  }
  const std::string merged = dir.File("m.sqlite");
  RunOk({"merge", merged, validated, older});
  Database m(merged);
  Database v(validated);
  EXPECT_EQ(m.Number("SELECT COUNT(*) FROM runs"), 2);
  for (const char* table : {"allocations", "validation", "validation_series"}) {
    const std::string count = std::string("SELECT COUNT(*) FROM ") + table;
    EXPECT_EQ(m.Number(count), v.Number(count)) << table;
    EXPECT_GT(m.Number(count), 0) << table;
  }
}

}  // namespace
}  // namespace clustersim
