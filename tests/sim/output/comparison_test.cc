// Comparisons that cannot mislead (sim/output/comparison.h): runs that did not see the same jobs
// are refused by `compare` and `report` (and named, job kind by job kind), utilization and cost
// are taken over one horizon shared by the compared runs, and `report` names priority classes.
// Expected values are worked by hand from tiny traces below.
#include "sim/output/comparison.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "sim/hardware/hardware.h"
#include "sim/output/report.h"
#include "sim/util/error.h"
#include "tests/cli/cli_test_util.h"

namespace clustersim {
namespace {

using testing::Database;
using testing::Describe;
using testing::Exists;
using testing::Lines;
using testing::RunCli;
using testing::SplitCsvLine;
using testing::TempDir;
using testing::TestData;
using testing::WriteFile;

constexpr int kExitBadInput = 2;

ComparedRun Compared(int64_t id, const std::string& name, std::vector<RejectedJob> rejected) {
  ComparedRun run;
  run.run_id = id;
  run.name = name;
  run.trace_path = "t.csv";
  run.trace_sha256 = "ab";
  run.trace_filter = "{}";
  run.jobs = 10;
  run.rejected = std::move(rejected);
  return run;
}

TEST(JobSets, DifferencesNameTheRunsTheCountAndTheKindOfJobs) {
  // Run 3 rejects jobs 1, 4 and 6 (two CPU-only pods with different demands, one 64-GPU job);
  // run 1 rejects job 6 only. So run 3 rejected 3 - 1 = 2 jobs that run 1 accepted, both of one
  // kind once their numbers are blanked.
  const ComparedRun fcfs = Compared(1, "fcfs/frag-aware", {{6, "p6", "requests 64 GPUs"}});
  const ComparedRun easy =
      Compared(3, "easy/frag-aware",
          {{1, "p1", "requests 0 GPUs with 2 CPUs; policy easy does not place CPU-only jobs"},
           {4, "p4", "requests 0 GPUs with 4.5 CPUs; policy easy does not place CPU-only jobs"},
           {6, "p6", "requests 64 GPUs"}});
  const std::vector<std::string> differences = JobSetDifferences({fcfs, easy});
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_EQ(differences[0],
            "run 3 (easy/frag-aware) rejected 2 jobs that run 1 (fcfs/frag-aware) accepted: 2 "
            "like \"requests 0 GPUs with 2 CPUs; policy easy does not place CPU-only jobs\" (jobs "
            "p1, p4)");
  // Both ways: the first run's own rejections the other accepted.
  const std::vector<std::string> both = JobSetDifferences({easy, fcfs});
  ASSERT_EQ(both.size(), 1u);
  EXPECT_NE(both[0].find("run 3 (easy/frag-aware) rejected 2 jobs that run 1"), std::string::npos);
  EXPECT_TRUE(JobSetDifferences({fcfs, fcfs}).empty());
  EXPECT_EQ(WithThousands(1088), "1,088");
  EXPECT_EQ(WithThousands(1234567), "1,234,567");
}

TEST(JobSets, AnotherTraceOrOtherFiltersAreDifferentJobs) {
  ComparedRun a = Compared(1, "fcfs/first-fit", {});
  ComparedRun b = Compared(2, "fcfs/first-fit", {});
  b.trace_sha256 = "cd";
  b.trace_path = "u.csv";
  std::vector<std::string> d = JobSetDifferences({a, b});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].find("run 2 (fcfs/first-fit) replayed u.csv"), std::string::npos) << d[0];
  EXPECT_NE(d[0].find("different traces"), std::string::npos) << d[0];
  b = Compared(2, "fcfs/first-fit", {});
  b.trace_filter = R"({"first":5})";
  d = JobSetDifferences({a, b});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].find(R"(with the filters {"first":5})"), std::string::npos) << d[0];
}

TEST(JobSets, RunsOfOtherSeedsMayDrawOtherJobsButReplayTheSameTrace) {
  // Seeds are replications: --inflate draws another workload per seed (another count of jobs),
  // assigned models may make other jobs too large for their GPUs. Within a seed the jobs must
  // match; across seeds only the trace and the filters, without what the seed drew.
  ComparedRun a = Compared(1, "fcfs/first-fit", {{2, "j2", "model x needs 9 GPUs"}});
  a.trace_filter = R"({"inflate":1.2,"jobs_inflated":30})";
  ComparedRun b = Compared(2, "fcfs/first-fit", {});
  b.seed = 1;
  b.trace_filter = R"({"inflate":1.2,"jobs_inflated":32})";
  EXPECT_TRUE(JobSetDifferences({a, b}).empty());
  ComparedRun c = b;  // seed 1 again, another policy that rejected j5
  c.run_id = 3;
  c.name = "easy/first-fit";
  c.rejected = {{5, "j5", "requests 0 GPUs"}};
  const std::vector<std::string> d = JobSetDifferences({a, b, c});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].find("run 3 (easy/first-fit) rejected 1 job that run 2 (fcfs/first-fit)"),
            std::string::npos)
      << d[0];
  b.trace_filter = R"({"inflate":1.5,"jobs_inflated":32})";  // another factor: other jobs
  EXPECT_EQ(JobSetDifferences({a, b}).size(), 1u);
}

TEST(Horizon, TwoRunsWithDifferentMakespansShareOneHorizon) {
  // 2 GPUs. Run A ends at 500 s, run B at 400 s; both held 600 GPU-seconds. Own utilizations:
  // 600 / (2 x 500) = 0.6 and 600 / (2 x 400) = 0.75; over the shared horizon [0, 500]: 0.6
  // both. The cluster costs $1 per second: $500 and $400 over their own spans, $500 both.
  ComparedRun a = Compared(1, "fcfs/first-fit", {});
  a.first_submit_seconds = 0;
  a.end_seconds = a.span_seconds = 500;
  a.gpu_utilization = 0.6;
  a.cost_usd = 500;
  ComparedRun b = a;
  b.run_id = 2;
  b.end_seconds = b.span_seconds = 400;
  b.gpu_utilization = 0.75;
  b.cost_usd = 400;
  const Horizon horizon = SharedHorizon({a, b});
  EXPECT_DOUBLE_EQ(horizon.seconds(), 500);
  EXPECT_DOUBLE_EQ(UtilizationOver(a, horizon), 0.6);
  EXPECT_DOUBLE_EQ(UtilizationOver(b, horizon), 0.6);
  EXPECT_DOUBLE_EQ(CostOver(a, horizon), 500);
  EXPECT_DOUBLE_EQ(CostOver(b, horizon), 500);
}

// One node of 2 A100s. a: 1 GPU for 300 s at 0; b: 2 GPUs for 100 s at 1; c: 1 GPU for 100 s at
// 2. fcfs: a 0-300, b blocks c, b 300-400, c 400-500: the run ends at 500. easy with exact
// estimates: b's reservation is at 300, c ends by 2 + 100 = 102 <= 300 and runs 2-102, b
// 300-400: the run ends at 400. Both hold 300 + 2 x 100 + 100 = 600 GPU-seconds: own
// utilization 0.6 and 0.75, over the shared horizon [0, 500] 0.6 both; the cluster's cost over
// 500 s for both (2 GPUs x price x 500 / 3600).
struct BlockingCase {
  TempDir dir;
  std::string trace = dir.File("t.csv");
  std::string cluster = dir.File("c.json");
  BlockingCase() {
    WriteFile(trace, "job_id,submit_time,gpus,duration\na,0,1,300\nb,1,2,100\nc,2,1,100\n");
    WriteFile(cluster, R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":2}]})");
  }
};

TEST(CompareCli, UtilizationAndCostOfRunsWithDifferentMakespansAreOverTheSharedHorizon) {
  BlockingCase c;
  const std::string db = c.dir.File("r.sqlite");
  const std::vector<std::string> args = {"compare", "--trace", c.trace, "--cluster", c.cluster,
                                         "--policies", "fcfs,easy", "--param",
                                         "easy:walltime=exact", "--out", db, "--csv"};
  const auto r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  const auto header = SplitCsvLine(lines[0]);
  auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<size_t>(it - header.begin());
  };
  const double price = HardwareCatalog::Default()
                           .gpu(*HardwareCatalog::Default().Find("A100-80GB"))
                           .price_per_gpu_hour;
  for (size_t i = 1; i < 3; ++i) {
    const auto fields = SplitCsvLine(lines[i]);
    EXPECT_NEAR(std::stod(fields[column("gpu_utilization")]), 0.6, 1e-9) << lines[i];
    EXPECT_NEAR(std::stod(fields[column("horizon_seconds")]), 500, 1e-9) << lines[i];
    EXPECT_NEAR(std::stod(fields[column("cost_usd")]), 2 * price * 500 / 3600, 1e-6) << lines[i];
  }
  // The makespans differ (500 and 400 s) and the summaries keep each run's own figures.
  Database out(db);
  EXPECT_DOUBLE_EQ(out.Number("SELECT value FROM summary WHERE run_id = 1 AND metric = "
                              "'makespan_seconds' AND scope = 'all'"),
                   500);
  EXPECT_DOUBLE_EQ(out.Number("SELECT value FROM summary WHERE run_id = 2 AND metric = "
                              "'makespan_seconds' AND scope = 'all'"),
                   400);
  EXPECT_NEAR(out.Number("SELECT value FROM summary WHERE run_id = 2 AND metric = "
                         "'gpu_utilization' AND scope = 'all'"),
              0.75, 1e-12);
  // The report's utilization, by policy, is over the same horizon: 600 GPU-s / (2 x 500 s).
  ReportOptions options;
  options.by = ReportGroupBy::kPolicy;
  const Report report = BuildReport(db, options);
  ASSERT_EQ(report.rows.size(), 2u);
  for (const ReportRow& row : report.rows) {
    EXPECT_NEAR(row.values[5].mean, 0.6, 1e-9) << row.group;  // "utilization"
  }
  EXPECT_STREQ(ReportMetrics()[5].name, "utilization");
  EXPECT_DOUBLE_EQ(report.horizon_seconds, 500);
}

// Two policies that accept different jobs: deadline-elastic declines at admission a job whose
// deadline cannot be met (100 s of work, deadline 50 s after its submission), which fcfs runs
// late (docs/deadlines.md). compare refuses the pair, naming the job, and writes nothing; with
// --allow-different-jobs it writes both runs and warns.
TEST(CompareCli, RefusesRunsThatSawDifferentJobsNamingThemAndWritesNothing) {
  TempDir dir;
  const std::string trace = dir.File("t.csv");
  WriteFile(trace,
            "job_id,submit_time,gpus,duration,deadline\n"
            "g1,0,1,100,\nlate,1,1,100,+50\ng2,2,2,100,\n");
  const std::string cluster = dir.File("c.json");
  WriteFile(cluster,
            R"({"nodes":[{"count":2,"gpu_type":"A100-80GB","gpus_per_node":8}]})");
  const std::string db = dir.File("r.sqlite");
  std::vector<std::string> args = {"compare", "--trace",    trace, "--cluster",
                                   cluster,   "--policies", "fcfs,deadline-elastic",
                                   "--out",   db};
  const auto refused = RunCli(args);
  EXPECT_EQ(refused.exit_code, kExitBadInput) << Describe(args, refused);
  EXPECT_NE(refused.err.find("did not see the same jobs"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("deadline-elastic/first-fit rejected 1 job that fcfs/first-fit "
                             "accepted: 1 like \"declined at admission"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("(job late)"), std::string::npos) << refused.err;
  EXPECT_FALSE(Exists(db));
  args.push_back("--allow-different-jobs");
  const auto allowed = RunCli(args);
  ASSERT_EQ(allowed.exit_code, 0) << Describe(args, allowed);
  EXPECT_NE(allowed.err.find("warning: the runs saw different jobs"), std::string::npos)
      << allowed.err;
  Database out(db);
  EXPECT_EQ(out.Value("SELECT status FROM jobs WHERE run_id = 2 AND job_id = 'late'"), "rejected");
  EXPECT_EQ(out.Value("SELECT status FROM jobs WHERE run_id = 1 AND job_id = 'late'"),
            "completed");
}

// Two clusters, one trace with an 8-GPU job: on 2 x 4 GPUs it runs, on 1 x 4 GPUs it is
// rejected at arrival. The report of both runs refuses, naming the job; with
// --allow-different-jobs it reports them, with the difference as a note.
TEST(ReportCli, RefusesRunsThatSawDifferentJobsNamingThem) {
  TempDir dir;
  const std::string trace = dir.File("t.csv");
  WriteFile(trace, "job_id,submit_time,gpus,duration\nsmall,0,1,100\nbig,5,8,100\n");
  const std::string small = dir.File("small.json");
  WriteFile(small, R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}]})");
  const std::string db = dir.File("r.sqlite");
  for (const std::string& cluster : {TestData("tiny_cluster.json"), small}) {
    const std::vector<std::string> args = {"run", "--trace", trace, "--cluster", cluster, "--out",
                                           db};
    const auto r = RunCli(args);
    ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  }
  const std::vector<std::string> args = {"report", db, "--by", "policy"};
  const auto refused = RunCli(args);
  EXPECT_EQ(refused.exit_code, kExitBadInput) << Describe(args, refused);
  EXPECT_NE(refused.err.find("did not see the same jobs"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("run 2 (fcfs/first-fit) rejected 1 job that run 1 (fcfs/first-fit) "
                             "accepted: 1 like \"requests 8 GPUs"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("(job big)"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--allow-different-jobs"), std::string::npos) << refused.err;
  EXPECT_TRUE(refused.out.empty()) << refused.out;
  // Each run alone is fine; both with the option, the difference is a note.
  EXPECT_EQ(RunCli({"report", db, "--run", "2"}).exit_code, 0);
  const auto allowed = RunCli({"report", db, "--by", "policy", "--allow-different-jobs"});
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_NE(allowed.out.find("note: different jobs: run 2 (fcfs/first-fit) rejected 1 job"),
            std::string::npos)
      << allowed.out;
}

// An openb pod list names its classes (qos): LS is level 2, BE 0, Guaranteed 3
// (sim/engine/priority_class.h). The report by priority shows them by name, the most urgent
// first.
TEST(ReportCli, NamesPriorityClassesByNameOrderedByLevel) {
  TempDir dir;
  const std::string trace = dir.File("pods.csv");
  WriteFile(trace,
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
            "deletion_time,scheduled_time\n"
            "p0,1000,1024,1,1000,,BE,Running,0,100,0\n"
            "p1,1000,1024,1,1000,,LS,Running,10,200,10\n"
            "p2,1000,1024,2,1000,,Guaranteed,Running,20,300,20\n"
            "p3,1000,1024,1,1000,,BE,Running,30,400,30\n");
  const std::string db = dir.File("r.sqlite");
  const std::vector<std::string> run = {"run", "--trace", trace, "--cluster",
                                        TestData("tiny_cluster.json"), "--out", db};
  const auto r = RunCli(run);
  ASSERT_EQ(r.exit_code, 0) << Describe(run, r);
  ReportOptions options;
  options.by = ReportGroupBy::kPriority;
  const Report report = BuildReport(db, options);
  std::vector<std::string> groups;
  for (const ReportRow& row : report.rows) groups.push_back(row.group);
  EXPECT_EQ(groups, (std::vector<std::string>{"Guaranteed (3)", "LS (2)", "BE (0)", "(all)"}));
  EXPECT_DOUBLE_EQ(report.rows[2].values[0].mean, 2);  // BE: p0 and p3
}

}  // namespace
}  // namespace clustersim
