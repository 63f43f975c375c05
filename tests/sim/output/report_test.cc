// `clustersim report` (sim/output/report.h), `compare --seeds`, duplicate runs and the warnings
// for settings with nothing to act on. The report's figures are checked against sums and means
// this test computes itself from the jobs table with SQL, its GPU-hours against the summary's
// exact integral of busy GPUs, its confidence intervals against Student t values from a printed
// table (t(0.975, 2) = 4.303).
#include "sim/output/report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "app/run.h"
#include "sim/hardware/hardware.h"
#include "sim/util/error.h"
#include "tests/cli/cli_test_util.h"

namespace clustersim {
namespace {

using testing::Database;
using testing::Describe;
using testing::Lines;
using testing::ReadFile;
using testing::RunCli;
using testing::SplitCsvLine;
using testing::TempDir;
using testing::TestData;
using testing::WriteFile;

constexpr int kExitBadInput = 2;

// 48 jobs over 4 hours from four users in two virtual clusters with three priorities: enough
// to queue on the 8 GPUs of tests/data/tiny_cluster.json and to preempt under las.
std::string WriteTrace(const TempDir& dir) {
  std::string text = "job_id,submit_time,gpus,duration,user,vc,priority\n";
  const int gpus[] = {1, 2, 4, 1, 8, 2};
  for (int i = 0; i < 48; ++i) {
    text += "j" + std::to_string(i) + "," + std::to_string(300 * i) + "," +
            std::to_string(gpus[i % 6]) + "," + std::to_string(600 + 970 * (i % 7)) + ",u" +
            std::to_string(i % 4) + ",vc" + std::to_string(i % 2) + "," + std::to_string(i % 3) +
            "\n";
  }
  const std::string path = dir.File("users.csv");
  WriteFile(path, text);
  return path;
}

RunConfig BaseConfig(const std::string& trace, const std::string& out) {
  RunConfig config;
  config.trace_path = trace;
  config.cluster = TestData("tiny_cluster.json");
  config.out = out;
  return config;
}

// Runs 1-3: las with node failures (MTBF 3 h per node, MTTR 30 min), seeds 0, 1, 2: the seeds
// draw different failure times, so the runs differ. Run 4: fcfs, seed 0, no failures.
struct Fixture {
  TempDir dir;
  std::string trace = WriteTrace(dir);
  std::string db = dir.File("runs.sqlite");
  std::vector<std::string> fingerprints;

  Fixture() {
    for (int seed = 0; seed < 3; ++seed) {
      RunConfig config = BaseConfig(trace, db);
      config.policy = "las";
      config.seed = seed;
      config.node_mtbf = "3";
      config.engine.faults.mttr_seconds = 1800;
      fingerprints.push_back(HexFingerprint(ExecuteRun(config).fingerprint));
    }
    RunConfig config = BaseConfig(trace, db);
    config.policy = "fcfs";
    ExecuteRun(config);
  }
};

Fixture& Shared() {
  static Fixture* fixture = new Fixture();
  return *fixture;
}

size_t MetricIndex(const std::string& name) {
  const auto& metrics = ReportMetrics();
  for (size_t i = 0; i < metrics.size(); ++i) {
    if (metrics[i].name == name) return i;
  }
  throw std::out_of_range(name);
}

double Get(const ReportRow& row, const std::string& metric) {
  return row.values[MetricIndex(metric)].mean;
}

TEST(StudentT, MatchesAPrintedTable) {
  // Two-sided 95 % (t_0.975) from a standard t table, three decimals.
  const std::map<int, double> table = {{1, 12.706}, {2, 4.303},  {3, 3.182},  {4, 2.776},
                                       {9, 2.262},  {29, 2.045}, {120, 1.980}};
  for (const auto& [df, t] : table) EXPECT_NEAR(StudentT975(df), t, 5e-4) << "df " << df;
}

TEST(StudentT, IntervalOfThreeValuesByHand) {
  // 10, 12, 14: mean 12, s = sqrt((4 + 0 + 4) / 2) = 2, half-width 4.303 x 2 / sqrt(3) = 4.9687.
  const ReportValue v = MeanWithInterval({10, 12, 14});
  EXPECT_EQ(v.n, 3);
  EXPECT_DOUBLE_EQ(v.mean, 12);
  EXPECT_NEAR(v.half_width, 4.9687, 1e-3);
  // One value: no interval.
  EXPECT_TRUE(std::isnan(MeanWithInterval({5}).half_width));
}

// A quota run worked out by hand (the schedule of tests/policies/priority_test.cc's reclaim case
// on 2 nodes x 4 GPUs, first-fit, preemption cost 10 s). Quota a:4, b:4. VC b submits B1..B4
// (level 2, 2 GPUs, 1000 s) at 0..3: B1, B2 within b's quota, B3 and B4 borrow. At 100 A1 and
// A2 (VC a, level 0, 2 GPUs, 100 s) are within a's quota: they reclaim B4, then B3 (newest
// first) and run [100,200]. B3 and B4 resume at 200, pay 10 s of save + restore and end at 1112
// and 1113. Preemption GPU-seconds: 2 x 10 s for each of B3 and B4 = 40. Borrowed: B3 from 2 to
// 100 and from 200 until B1 ends at 1000 (98 + 800 s), B4 from 3 to 100 and from 200 until B2
// ends at 1001 (97 + 801 s): 2 GPUs x 898 s each = 3592 GPU-seconds, all of VC b.
TEST(Report, ByVcAndPriorityShowPreemptionAndBorrowedGpuHoursOfAQuotaRun) {
  TempDir dir;
  const std::string trace = dir.File("quota.csv");
  WriteFile(trace,
            "job_id,submit_time,gpus,duration,vc,priority\n"
            "B1,0,2,1000,b,2\nB2,1,2,1000,b,2\nB3,2,2,1000,b,2\nB4,3,2,1000,b,2\n"
            "A1,100,2,100,a,0\nA2,100,2,100,a,0\n");
  const std::string out = dir.File("quota.sqlite");
  RunConfig config = BaseConfig(trace, out);
  config.policy = "priority";
  config.params = Params(std::map<std::string, std::string>{{"quota", "a:4,b:4"}});
  config.engine.preemption_cost_seconds = 10;
  ExecuteRun(config);
  Database db(out);
  EXPECT_EQ(db.Number("SELECT end_time FROM jobs WHERE job_id = 'B3'"), 1112);
  EXPECT_EQ(db.Number("SELECT end_time FROM jobs WHERE job_id = 'B4'"), 1113);
  EXPECT_EQ(db.Number("SELECT preemption_gpu_seconds FROM jobs WHERE job_id = 'B4'"), 20);
  EXPECT_EQ(db.Number("SELECT borrowed_gpu_seconds FROM jobs WHERE job_id = 'B3'"), 1796);
  EXPECT_EQ(db.Number("SELECT SUM(borrowed_gpu_seconds) FROM jobs WHERE vc = 'a'"), 0);
  for (const auto by : {ReportGroupBy::kVc, ReportGroupBy::kPriority}) {
    ReportOptions options;
    options.by = by;
    const Report report = BuildReport(out, options);
    std::map<std::string, const ReportRow*> rows;
    for (const ReportRow& row : report.rows) rows[row.group] = &row;
    const std::string b = by == ReportGroupBy::kVc ? "b" : "2";
    const std::string a = by == ReportGroupBy::kVc ? "a" : "0";
    ASSERT_TRUE(rows.count(a) && rows.count(b) && rows.count("(all)"));
    EXPECT_DOUBLE_EQ(Get(*rows[b], "preemptions"), 2);
    EXPECT_NEAR(Get(*rows[b], "preemption_gpu_hours"), 40.0 / 3600, 1e-12);
    EXPECT_NEAR(Get(*rows[b], "borrowed_gpu_hours"), 3592.0 / 3600, 1e-12);
    EXPECT_DOUBLE_EQ(Get(*rows[a], "preemption_gpu_hours"), 0);
    EXPECT_DOUBLE_EQ(Get(*rows[a], "borrowed_gpu_hours"), 0);
    EXPECT_DOUBLE_EQ(Get(*rows[a], "wait_mean_seconds"), 0);
    EXPECT_NEAR(Get(*rows["(all)"], "borrowed_gpu_hours"), 3592.0 / 3600, 1e-12);
  }
  // The summary's per-VC rows agree.
  EXPECT_NEAR(db.Number("SELECT value FROM summary WHERE metric = 'borrowed_gpu_hours' AND "
                        "scope = 'vc:b'"),
              3592.0 / 3600, 1e-12);
  EXPECT_NEAR(db.Number("SELECT value FROM summary WHERE metric = 'preemption_gpu_hours' AND "
                        "scope = 'priority:2'"),
              40.0 / 3600, 1e-12);
}

// A node pool under target-utilization (tests/policies/cluster_autoscaler_test.cc works the
// schedule by hand): one fixed node of 8 GPUs and a pool of 0-4 nodes of 8, three 8-GPU jobs of
// 1,000 s at 0. Pool nodes 1 and 2 are billed from 0 to 1,590 and 1,305 s, the fixed node to
// 1,590 s, the run's end. util counts the cluster at its largest (8 + 4 x 8 = 40 GPUs) over
// the horizon, 0-1,590 s; the billed line is the pools' summary rows.
TEST(Report, AutoscaledRunsCountPoolsAtTheirMaxAndShowWhatWasBilled) {
  TempDir dir;
  const std::string out = dir.File("pool.sqlite");
  RunConfig config = BaseConfig(TestData("autoscaling/three_jobs.csv"), out);
  config.cluster = TestData("autoscaling/pool.json");
  config.autoscaler = "target-utilization";
  ExecuteRun(config);
  const Report report = BuildReport(out, ReportOptions());
  const ReportRow& all = report.rows.back();
  ASSERT_EQ(all.group, "(all)");
  EXPECT_NEAR(Get(all, "utilization"), 3 * 8 * 1000.0 / (40 * 1590), 1e-9);
  ASSERT_EQ(report.billed.size(), 1u);
  const double billed = 8 * (1590 + 1590 + 1305) / 3600.0;
  EXPECT_NEAR(report.billed[0].gpu_hours.mean, billed, 1e-9);
  EXPECT_NEAR(report.billed[0].cost_usd.mean, billed * 5.12, 1e-6);  // the A100-80GB price
  EXPECT_NEAR(report.billed[0].utilization.mean, 3 * 8 * 1000.0 / 3600 / billed, 1e-9);
}

TEST(Report, PerUserFiguresEqualSumsAndMeansOfTheJobsTable) {
  Fixture& f = Shared();
  ReportOptions options;
  options.run_ids = {1};
  options.by = ReportGroupBy::kUser;
  const Report report = BuildReport(f.db, options);
  ASSERT_EQ(report.configs.size(), 1u);
  EXPECT_EQ(report.configs[0].label, "las/first-fit");
  ASSERT_EQ(report.rows.size(), 5u);  // u0..u3 and (all)
  Database db(f.db);
  EXPECT_GT(db.Number("SELECT SUM(preemptions) FROM jobs WHERE run_id = 1"), 0);
  std::set<std::string> seen;
  for (const ReportRow& row : report.rows) {
    seen.insert(row.group);
    const std::string where =
        "run_id = 1" + (row.group == "(all)" ? "" : " AND user = '" + row.group + "'");
    auto sql = [&](const std::string& expression, const std::string& extra = "") {
      return db.Number("SELECT " + expression + " FROM jobs WHERE " + where + extra);
    };
    EXPECT_DOUBLE_EQ(Get(row, "jobs"), sql("COUNT(*)")) << row.group;
    EXPECT_DOUBLE_EQ(Get(row, "completed"), sql("COUNT(*)", " AND status = 'completed'"));
    EXPECT_NEAR(Get(row, "gpu_hours"), sql("SUM(gpu_hours)"), 1e-9);
    EXPECT_NEAR(Get(row, "cost_usd"), sql("SUM(cost_usd)"), 1e-9);
    EXPECT_NEAR(Get(row, "wait_mean_seconds"), sql("AVG(wait_time)", " AND wait_time IS NOT NULL"),
                1e-6);
    EXPECT_NEAR(Get(row, "queued_mean_seconds"), sql("AVG(queued_time)", " AND jct IS NOT NULL"),
                1e-6);
    EXPECT_NEAR(Get(row, "jct_mean_seconds"), sql("AVG(jct)"), 1e-6);
    EXPECT_NEAR(Get(row, "bsld_mean"), sql("AVG(bsld)"), 1e-9);
    EXPECT_DOUBLE_EQ(Get(row, "preemptions"), sql("SUM(preemptions)"));
    EXPECT_DOUBLE_EQ(Get(row, "oom_failures"), sql("SUM(oom_failures)"));
    // p95 of the waits by linear interpolation between closest ranks, computed here.
    std::vector<double> waits;
    for (const auto& r : db.Query("SELECT wait_time FROM jobs WHERE " + where +
                                  " AND wait_time IS NOT NULL ORDER BY wait_time")) {
      waits.push_back(std::stod(*r[0]));
    }
    const double rank = 0.95 * (waits.size() - 1);
    const size_t lo = static_cast<size_t>(rank);
    const double p95 =
        lo + 1 < waits.size() ? waits[lo] + (rank - lo) * (waits[lo + 1] - waits[lo]) : waits[lo];
    EXPECT_NEAR(Get(row, "wait_p95_seconds"), p95, 1e-6) << row.group;
    // One run: no interval.
    EXPECT_TRUE(std::isnan(row.values[MetricIndex("jct_mean_seconds")].half_width));
  }
  EXPECT_EQ(seen, (std::set<std::string>{"u0", "u1", "u2", "u3", "(all)"}));
  // GPU-hours: every job held its GPUs for its run time (no resizes), and all jobs together held
  // what the metrics integrated as busy; cost is GPU-hours at the A100-80GB price.
  EXPECT_NEAR(db.Number("SELECT SUM(ABS(gpu_hours - run_time * gpus_allocated / 3600.0)) FROM jobs "
                        "WHERE run_id = 1 AND run_time IS NOT NULL"),
              0, 1e-9);
  const ReportRow& all = report.rows.back();
  EXPECT_EQ(all.group, "(all)");
  EXPECT_NEAR(Get(all, "gpu_hours"),
              db.Number("SELECT value FROM summary WHERE run_id = 1 AND metric = 'busy_gpu_hours' "
                        "AND scope = 'all'"),
              1e-6);
  const HardwareCatalog& catalog = HardwareCatalog::Default();
  const double price = catalog.gpu(*catalog.Find("A100-80GB")).price_per_gpu_hour;
  EXPECT_NEAR(Get(all, "cost_usd"), Get(all, "gpu_hours") * price, 1e-6);
  // Queued time of a job that ended is its JCT minus its run time.
  EXPECT_NEAR(db.Number("SELECT MAX(ABS(queued_time + run_time - jct)) FROM jobs WHERE run_id = 1 "
                        "AND jct IS NOT NULL"),
              0, 1e-6);
  // Groups by GPU-hours, most first.
  for (size_t i = 1; i + 1 < report.rows.size(); ++i) {
    EXPECT_GE(Get(report.rows[i - 1], "gpu_hours"), Get(report.rows[i], "gpu_hours"));
  }
}

TEST(Report, RunsDifferingOnlyInTheirSeedArePooledWithAStudentTInterval) {
  Fixture& f = Shared();
  EXPECT_EQ(std::set<std::string>(f.fingerprints.begin(), f.fingerprints.end()).size(), 3u)
      << "the seeds must give different runs";
  ReportOptions options;
  options.by = ReportGroupBy::kPolicy;
  const Report report = BuildReport(f.db, options);
  ASSERT_EQ(report.configs.size(), 2u);
  EXPECT_EQ(report.configs[0].run_ids, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(report.configs[0].seeds, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(report.configs[1].run_ids, (std::vector<int64_t>{4}));
  // The labels name what differs, in words: the policy and each fault setting as key=value
  // (node_mtbf = "3" hours, mttr 1800 s), never the faults column's JSON; the run without
  // faults is its policy alone.
  EXPECT_NE(report.configs[0].label.find("las/first-fit"), std::string::npos);
  EXPECT_NE(report.configs[0].label.find("faults node_mtbf_hours=3"), std::string::npos)
      << report.configs[0].label;
  EXPECT_EQ(report.configs[0].label.find_first_of("{}\""), std::string::npos)
      << report.configs[0].label;
  EXPECT_LT(report.configs[0].label.size(), 160u) << report.configs[0].label;
  EXPECT_EQ(report.configs[1].label.find("faults"), std::string::npos) << report.configs[1].label;
  Database db(f.db);
  for (const std::string metric : {"jct_mean_seconds", "queued_mean_seconds", "preemptions"}) {
    const std::string expression = metric == "jct_mean_seconds"      ? "AVG(jct)"
                                   : metric == "queued_mean_seconds" ? "AVG(queued_time)"
                                                                     : "SUM(preemptions)";
    std::vector<double> x;
    for (int run = 1; run <= 3; ++run) {
      x.push_back(db.Number("SELECT " + expression + " FROM jobs WHERE run_id = " +
                            std::to_string(run) + " AND jct IS NOT NULL"));
    }
    const double mean = (x[0] + x[1] + x[2]) / 3;
    const double s = std::sqrt(((x[0] - mean) * (x[0] - mean) + (x[1] - mean) * (x[1] - mean) +
                                (x[2] - mean) * (x[2] - mean)) /
                               2);
    const double half_width = 4.303 * s / std::sqrt(3.0);
    // By policy each configuration is one row (no total: it would repeat it).
    ASSERT_EQ(report.rows.size(), 2u);
    {
      const ReportRow& row = report.rows[0];
      ASSERT_EQ(row.config, 0u);
      EXPECT_EQ(row.group, "las/first-fit");
      const ReportValue& v = row.values[MetricIndex(metric)];
      EXPECT_EQ(v.n, 3);
      EXPECT_NEAR(v.mean, mean, 1e-6 * std::max(1.0, mean)) << metric;
      EXPECT_NEAR(v.half_width, half_width, 1e-3 * std::max(1.0, half_width)) << metric;
    }
  }
  EXPECT_GT(report.rows[0].values[MetricIndex("jct_mean_seconds")].half_width, 0);
  // fcfs: a single run, no interval.
  EXPECT_TRUE(std::isnan(report.rows[1].values[MetricIndex("jct_mean_seconds")].half_width));
}

TEST(Report, GroupsByVcGpuTypeAndPriorityCoverEveryJob) {
  Fixture& f = Shared();
  Database db(f.db);
  const double jobs = db.Number("SELECT COUNT(*) FROM jobs WHERE run_id = 4");
  for (const auto& [by, groups] : std::vector<std::pair<ReportGroupBy, std::set<std::string>>>{
           {ReportGroupBy::kVc, {"vc0", "vc1", "(all)"}},
           {ReportGroupBy::kGpuType, {"A100-80GB", "(all)"}},
           {ReportGroupBy::kPriority, {"0", "1", "2", "(all)"}}}) {
    ReportOptions options;
    options.run_ids = {4};
    options.by = by;
    const Report report = BuildReport(f.db, options);
    std::set<std::string> seen;
    double sum = 0;
    for (const ReportRow& row : report.rows) {
      seen.insert(row.group);
      if (row.group != "(all)") sum += Get(row, "jobs");
    }
    EXPECT_EQ(seen, groups);
    EXPECT_DOUBLE_EQ(sum, jobs);
  }
  // Priority 1: the jobs j1, j4, j7, ... (i % 3 == 1): 16 of them.
  ReportOptions options;
  options.run_ids = {4};
  options.by = ReportGroupBy::kPriority;
  for (const ReportRow& row : BuildReport(f.db, options).rows) {
    if (row.group == "1") {
      EXPECT_DOUBLE_EQ(Get(row, "jobs"), 16);
    }
  }
}

TEST(Report, RejectsUnknownRunsForeignFilesAndBadOptions) {
  Fixture& f = Shared();
  ReportOptions options;
  options.run_ids = {9};
  try {
    BuildReport(f.db, options);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no run 9 (the database holds 4 runs, ids 1-4)"),
              std::string::npos)
        << e.what();
  }
  TempDir dir;
  WriteFile(dir.File("x.sqlite"), "not a database at all, just text\n");
  EXPECT_THROW(BuildReport(dir.File("x.sqlite"), {}), InputError);
  EXPECT_THROW(BuildReport(dir.File("missing.sqlite"), {}), InputError);
  EXPECT_THROW(ParseReportGroupBy("account"), InputError);
  const auto r = RunCli({"report", f.db, "--by", "account"});
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_NE(r.err.find("--by account: expected user, vc, gpu_type, priority, policy, reason, "
                       "user,reason or vc,reason"),
            std::string::npos)
      << r.err;
}

TEST(ReportCli, CsvHasOneLinePerGroupWithIntervalColumnsAndTheTableShowsThem) {
  Fixture& f = Shared();
  const std::vector<std::string> args = {"report", f.db, "--run", "1-3", "--by", "user", "--csv"};
  const auto r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 6u) << r.out;  // header, u0..u3, (all)
  const auto header = SplitCsvLine(lines[0]);
  auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<size_t>(it - header.begin());
  };
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto fields = SplitCsvLine(lines[i]);
    ASSERT_EQ(fields.size(), header.size()) << lines[i];
    EXPECT_EQ(fields[column("runs")], "3");
    EXPECT_EQ(fields[column("seeds")], "0 1 2");
    EXPECT_EQ(fields[column("run_ids")], "1 2 3");
    EXPECT_FALSE(fields[column("jct_mean_seconds_ci95")].empty()) << lines[i];
  }
  const std::vector<std::string> table = {"report", f.db, "--run", "1", "2", "3"};
  const auto t = RunCli(table);
  ASSERT_EQ(t.exit_code, 0) << Describe(table, t);
  EXPECT_NE(t.out.find("95 % confidence interval"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find(" ± "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("runs 1,2,3 (seeds 0,1,2)"), std::string::npos) << t.out;
}

// ---------------------------------------------------------------------------------------------
// compare --seeds

TEST(CompareSeeds, RunsEveryPolicyOncePerSeedAndTheReportPoolsThem) {
  TempDir dir;
  const std::string out = dir.File("c.sqlite");
  const std::vector<std::string> args = {"compare",
                                         "--trace",
                                         TestData("tiny_trace.csv"),
                                         "--cluster",
                                         TestData("tiny_cluster.json"),
                                         "--policies",
                                         "fcfs,las",
                                         "--seeds",
                                         "0,1,2",
                                         "--out",
                                         out};
  const auto r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  Database db(out);
  EXPECT_EQ(*db.Value("SELECT group_concat(policy || ':' || seed, ' ') FROM (SELECT * FROM runs "
                      "ORDER BY run_id)"),
            "fcfs:0 fcfs:1 fcfs:2 las:0 las:1 las:2");
  EXPECT_NE(r.out.find("seeds 0,1,2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("clustersim report " + out + " --by policy --run 1-6"), std::string::npos)
      << r.out;
  ReportOptions options;
  options.by = ReportGroupBy::kPolicy;
  const Report report = BuildReport(out, options);
  ASSERT_EQ(report.configs.size(), 2u);
  EXPECT_EQ(report.configs[0].seeds, (std::vector<int64_t>{0, 1, 2}));
  // The trace runtime and no failures: the seed changes nothing, so the interval is 0.
  EXPECT_DOUBLE_EQ(report.rows[0].values[MetricIndex("jct_mean_seconds")].half_width, 0);

  const auto both = RunCli({"compare", "--seed", "1", "--seeds", "0,1", "--out", out});
  EXPECT_EQ(both.exit_code, kExitBadInput);
  EXPECT_NE(both.err.find("--seed and --seeds: give one of them"), std::string::npos) << both.err;
}

TEST(CompareSeeds, FailureOptionsApplyToEveryRunAndEachSeedDrawsItsOwnFailures) {
  TempDir dir;
  const std::string out = dir.File("f.sqlite");
  // Node MTBF 0.05 h = 3 min per node on a trace of about 5 min: failures, at other times per seed.
  const std::vector<std::string> args = {"compare",
                                         "--trace",
                                         TestData("tiny_trace.csv"),
                                         "--cluster",
                                         TestData("tiny_cluster.json"),
                                         "--policies",
                                         "fcfs",
                                         "--seeds",
                                         "0,1,2",
                                         "--node-mtbf",
                                         "0.05",
                                         "--mttr",
                                         "0.01",
                                         "--csv",
                                         "--out",
                                         out};
  const auto r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  Database db(out);
  EXPECT_EQ(db.Number("SELECT COUNT(DISTINCT faults) FROM runs"), 1);
  EXPECT_NE(db.Value("SELECT faults FROM runs LIMIT 1")->find("\"node_mtbf_hours\":0.05"),
            std::string::npos);
  EXPECT_EQ(db.Number("SELECT COUNT(DISTINCT fingerprint) FROM runs"), 3);
  EXPECT_GT(db.Number("SELECT SUM(value) FROM summary WHERE metric = 'failures'"), 0);
}

// ---------------------------------------------------------------------------------------------
// duplicate runs

TEST(DuplicateRuns, RunRefusesToAppendTheSameRunUnlessAllowed) {
  TempDir dir;
  const std::string out = dir.File("d.sqlite");
  const std::vector<std::string> args = {"run",
                                         "--trace",
                                         TestData("tiny_trace.csv"),
                                         "--cluster",
                                         TestData("tiny_cluster.json"),
                                         "--out",
                                         out,
                                         "--no-progress"};
  ASSERT_EQ(RunCli(args).exit_code, 0);
  const std::string before = ReadFile(out);
  const auto again = RunCli(args);
  EXPECT_EQ(again.exit_code, kExitBadInput);
  EXPECT_NE(again.err.find(out + ": already holds this run as run 1"), std::string::npos)
      << again.err;
  EXPECT_NE(again.err.find("--allow-duplicate"), std::string::npos) << again.err;
  EXPECT_EQ(ReadFile(out), before);  // nothing written
  // Another seed is another run.
  std::vector<std::string> seeded = args;
  seeded.insert(seeded.end(), {"--seed", "1"});
  EXPECT_EQ(RunCli(seeded).exit_code, 0);
  std::vector<std::string> allowed = args;
  allowed.push_back("--allow-duplicate");
  EXPECT_EQ(RunCli(allowed).exit_code, 0);
  Database db(out);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM runs"), 3);
}

TEST(DuplicateRuns, CompareRefusesBeforeSimulatingAndMergeCanSkipThem) {
  TempDir dir;
  const std::string out = dir.File("c.sqlite");
  const std::vector<std::string> args = {"compare",
                                         "--trace",
                                         TestData("tiny_trace.csv"),
                                         "--cluster",
                                         TestData("tiny_cluster.json"),
                                         "--policies",
                                         "fcfs,easy",
                                         "--out",
                                         out};
  ASSERT_EQ(RunCli(args).exit_code, 0);
  const auto again = RunCli(args);
  EXPECT_EQ(again.exit_code, kExitBadInput);
  EXPECT_NE(again.err.find("already holds this run as run 1"), std::string::npos) << again.err;
  {
    Database db(out);
    EXPECT_EQ(db.Number("SELECT COUNT(*) FROM runs"), 2);
  }
  // merge: the same runs again are an error, or left out with --skip-duplicates.
  const std::string merged = dir.File("m.sqlite");
  ASSERT_EQ(RunCli({"merge", merged, out}).exit_code, 0);
  const auto refused = RunCli({"merge", merged, out});
  EXPECT_EQ(refused.exit_code, kExitBadInput);
  EXPECT_NE(refused.err.find("--skip-duplicates"), std::string::npos) << refused.err;
  const auto skipped = RunCli({"merge", merged, out, "--skip-duplicates"});
  ASSERT_EQ(skipped.exit_code, 0) << skipped.err;
  EXPECT_NE(skipped.out.find("merged 0 runs"), std::string::npos) << skipped.out;
  EXPECT_NE(skipped.out.find("skipped 2 duplicate runs"), std::string::npos) << skipped.out;
  EXPECT_NE(skipped.out.find(out + " (run 1) = " + merged + " (run 1)"), std::string::npos)
      << skipped.out;
  Database db(merged);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM runs"), 2);
}

// ---------------------------------------------------------------------------------------------
// settings with nothing to act on

TEST(Warnings, NameTheFixWhenAPolicyOrOptionHasNothingToActOn) {
  TempDir dir;
  // No user column, two virtual clusters.
  const std::string no_users = dir.File("no_users.csv");
  WriteFile(no_users,
            "job_id,submit_time,gpus,duration,vc\na,0,4,100,x\nb,10,4,50,y\nc,20,2,30,x\n");
  int outputs = 0;
  auto run = [&](const std::string& trace, std::vector<std::string> extra) {
    std::vector<std::string> args = {"run",
                                     "--trace",
                                     trace,
                                     "--cluster",
                                     TestData("tiny_cluster.json"),
                                     "--out",
                                     dir.File("run" + std::to_string(++outputs) + ".sqlite"),
                                     "--no-progress"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCli(args);
  };
  const auto fair = run(no_users, {"--policy", "fair-share"});
  ASSERT_EQ(fair.exit_code, 0) << fair.err;
  EXPECT_NE(fair.err.find("fair-share by=user: every job of the trace is charged to one user"),
            std::string::npos)
      << fair.err;
  EXPECT_NE(fair.err.find("--param by=vc shares between its 2 virtual clusters"), std::string::npos)
      << fair.err;
  EXPECT_EQ(fair.out.find("Jain"), std::string::npos) << fair.out;  // no users: no index
  EXPECT_EQ(run(no_users, {"--policy", "fair-share", "--param", "by=vc"}).err.find("fair-share"),
            std::string::npos);
  const auto with_users = run(TestData("tiny_trace.csv"), {"--policy", "fair-share"});
  EXPECT_EQ(with_users.err.find("fair-share by="), std::string::npos) << with_users.err;
  // alice, bob and carol; dave's only job is rejected (16 GPUs on 8).
  EXPECT_NE(with_users.out.find("Jain (3 users)"), std::string::npos) << with_users.out;

  const auto cosched = run(no_users, {"--policy", "cosched"});
  ASSERT_EQ(cosched.exit_code, 0) << cosched.err;
  EXPECT_NE(cosched.err.find("cosched: no job has model information"), std::string::npos)
      << cosched.err;
  EXPECT_NE(cosched.err.find("--assign-models"), std::string::npos) << cosched.err;
  const auto model_aware = run(no_users, {"--model-aware"});
  ASSERT_EQ(model_aware.exit_code, 0) << model_aware.err;
  EXPECT_NE(model_aware.err.find("--model-aware: no job of the trace names a model"),
            std::string::npos)
      << model_aware.err;
  EXPECT_NE(model_aware.err.find("add --assign-models"), std::string::npos) << model_aware.err;
  const auto assigned = run(no_users, {"--policy", "cosched", "--assign-models"});
  EXPECT_EQ(assigned.err.find("warning"), std::string::npos) << assigned.err;
  // compare shows each warning once, though its runs log errors only.
  const auto compare =
      RunCli({"compare", "--trace", no_users, "--cluster", TestData("tiny_cluster.json"),
              "--policies", "fair-share,cosched", "--out", dir.File("w.sqlite")});
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_NE(compare.err.find("clustersim compare: warning: fair-share by=user"), std::string::npos)
      << compare.err;
  EXPECT_NE(compare.err.find("clustersim compare: warning: cosched"), std::string::npos)
      << compare.err;
}

}  // namespace
}  // namespace clustersim
