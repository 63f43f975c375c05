// scripts/plot.py on a database holding several runs: every figure is written as a valid PNG
// (signature, an IHDR chunk with sensible dimensions) and a valid PDF (%PDF- header, %%EOF
// trailer), each of non-trivial size; a missing database or an unknown run id is exit code 2.
// Labels name what differs between the runs, seeds are pooled, failed and interrupted runs are
// left out, panels without data are left out, --format, --label and --style paper are honoured.
// Runs /usr/bin/python3 (Debian's, with python3-matplotlib: scripts/install_deps.sh).
#include <gtest/gtest.h>

#include "tests/cli/cli_test_util.h"

namespace clustersim::testing {
namespace {

const char* kPython = "/usr/bin/python3";
const char* kFigures[] = {"jct_cdf", "wait_cdf", "timelines", "gpu_type_utilization", "headline"};

// Runs `python3 scripts/plot.py args...` with stdout and stderr captured.
CliResult RunPlot(const std::vector<std::string>& args) {
  TempDir capture;
  const std::string out_path = capture.File("stdout"), err_path = capture.File("stderr");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> all = {kPython, std::string(CLUSTERSIM_SOURCE_DIR) + "/scripts/plot.py"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  CliResult result;
  const int rc = posix_spawn(&pid, kPython, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    result.err = std::string("posix_spawn ") + kPython + " failed: " + std::strerror(rc);
    return result;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  return result;
}

uint32_t BigEndian32(const std::string& bytes, size_t at) {
  return (uint32_t(uint8_t(bytes[at])) << 24) | (uint32_t(uint8_t(bytes[at + 1])) << 16) |
         (uint32_t(uint8_t(bytes[at + 2])) << 8) | uint32_t(uint8_t(bytes[at + 3]));
}

class PlotScript : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    // Three runs in one database from `clustersim compare`: fcfs, easy and sjf.
    const std::vector<std::string> args = {"compare",  "--first",  "800",
                                           "--policies", "fcfs,easy,sjf",
                                           "--param",  "easy:walltime=exact",
                                           "--out",    Db()};
    const CliResult r = RunCli(args);
    ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string Db() { return dir_->File("runs.sqlite"); }
  static TempDir* dir_;
};
TempDir* PlotScript::dir_ = nullptr;

TEST_F(PlotScript, WritesEveryFigureAsValidPngAndPdf) {
  const std::string out = dir_->File("figures");
  // --run with every id: the selection path, and one rendering only (matplotlib is slow).
  const CliResult r = RunPlot({Db(), "--out", out, "--run", "1", "2", "3", "--dpi", "60"});
  ASSERT_EQ(r.exit_code, 0) << "plot.py failed:\n" << r.out << r.err;
  for (const char* name : kFigures) {
    const std::string png = ReadFile(out + "/" + name + ".png");
    ASSERT_GT(png.size(), 5000u) << name << ".png missing or tiny";
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << name;
    // The first chunk is IHDR: length 13, type, then width and height (big-endian).
    EXPECT_EQ(BigEndian32(png, 8), 13u) << name;
    EXPECT_EQ(png.substr(12, 4), "IHDR") << name;
    const uint32_t width = BigEndian32(png, 16), height = BigEndian32(png, 20);
    EXPECT_GE(width, 200u) << name;
    EXPECT_GE(height, 150u) << name;
    EXPECT_LE(width, 5000u) << name;
    EXPECT_LE(height, 5000u) << name;

    const std::string pdf = ReadFile(out + "/" + name + ".pdf");
    ASSERT_GT(pdf.size(), 3000u) << name << ".pdf missing or tiny";
    EXPECT_EQ(pdf.substr(0, 5), "%PDF-") << name;
    EXPECT_NE(pdf.find("%%EOF", pdf.size() - 32), std::string::npos) << name;
    EXPECT_NE(r.out.find(std::string(name) + ".png"), std::string::npos) << r.out;
  }
}

// Runs without an allocation log or a validation get none of those figures.
TEST_F(PlotScript, AllocationAndValidationFiguresOnlyForRunsThatHaveTheRows) {
  const std::string out = dir_->File("figures-none");
  const CliResult r = RunPlot({Db(), "--out", out, "--run", "1", "--dpi", "40"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("occupancy"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("validation"), std::string::npos) << r.out;
}

TEST_F(PlotScript, DrawsOccupancyQqAndSeriesOfAValidateRun) {
  TempDir dir;
  const std::string trace = dir.File("t.csv");
  const std::string db = dir.File("v.sqlite");
  WriteFile(trace,
            "job_id,submit_time,gpus,duration,user,recorded_start,recorded_end\n"
            "J0,0,4,100,a,0,100\nJ1,10,2,50,b,100,150\nJ2,20,2,100,b,150,250\n"
            "J3,30,8,60,c,250,310\nJ4,40,1,30,a,40,70\n");
  const std::vector<std::string> args = {"validate", "--trace", trace, "--interval", "20",
                                         "--out", db};
  const CliResult v = RunCli(args);
  ASSERT_EQ(v.exit_code, 0) << Describe(args, v);
  const std::string out = dir.File("figures");
  const CliResult r = RunPlot({db, "--out", out, "--dpi", "50", "--occupancy-by", "nodes",
                               "--occupancy-colour", "user", "--occupancy-window", "0:0.05"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* name : {"occupancy_run1", "validation_qq_run1", "validation_series_run1"}) {
    const std::string png = ReadFile(out + "/" + name + ".png");
    ASSERT_GT(png.size(), 3000u) << name;
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << name;
  }
  const CliResult bad = RunPlot({db, "--out", out, "--occupancy-window", "5:1"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("END must be after START"), std::string::npos) << bad.err;
}

// Arrival-only runs (placement_curve rows): two seeds of one setting are one curve; runs without
// the rows (the compare database) get no such figure.
TEST_F(PlotScript, DrawsThePlacementCurveOfArrivalOnlyRuns) {
  TempDir dir;
  const std::string trace = dir.File("t.csv");
  const std::string db = dir.File("a.sqlite");
  WriteFile(trace,
            "job_id,submit_time,gpus,duration\nJ0,0,4,100\nJ1,1,2,50\nJ2,2,8,100\n"
            "J3,3,8,60\nJ4,4,1,30\nJ5,5,16,30\n");
  for (const char* seed : {"1", "2"}) {
    const std::vector<std::string> args = {
        "run",       "--trace", trace,    "--on-no-fit", "skip",  "--no-departures",
        "--inflate", "1.2",     "--seed", seed,          "--out", db};
    const CliResult v = RunCli(args);
    ASSERT_EQ(v.exit_code, 0) << Describe(args, v);
  }
  const std::string out = dir.File("figures");
  const CliResult r = RunPlot({db, "--out", out, "--dpi", "50", "--format", "png"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string png = ReadFile(out + "/placement_curve.png");
  ASSERT_GT(png.size(), 3000u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // Arrival-only runs never end their jobs: no empty JCT panel, one configuration of two seeds.
  EXPECT_NE(r.err.find("jct_cdf left out: no job ended in the plotted runs"), std::string::npos)
      << r.err;
  EXPECT_FALSE(Exists(out + "/jct_cdf.png"));
  EXPECT_NE(r.err.find("(2 seeds)"), std::string::npos) << r.err;
  const CliResult none = RunPlot({Db(), "--out", dir.File("none"), "--run", "1", "--dpi", "40"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out.find("placement_curve"), std::string::npos) << none.out;
}

// Seeds are pooled: runs differing only in their seed are one configuration (one curve with a
// band, one bar with an error bar), labelled with the policy, its parameters in words and the
// seed count.
TEST(PlotPooling, ThreePoliciesByThreeSeedsAreThreeLabelledConfigurations) {
  TempDir dir;
  const std::string db = dir.File("seeds.sqlite");
  // Failures drawn from each seed make the seeds' runs differ.
  const std::vector<std::string> args = {
      "compare", "--first",     "400", "--policies", "fcfs,easy,las",       "--seeds",
      "0,1,2",   "--node-mtbf", "200", "--param",    "easy:walltime=exact", "--out",
      db};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const CliResult p = RunPlot({db, "--out", dir.File("figures"), "--dpi", "40", "--format", "png"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  for (const char* line : {"run 1: fcfs (3 seeds)\n", "run 3: fcfs (3 seeds)\n",
                           "run 4: easy walltime=exact (3 seeds)\n", "run 9: las (3 seeds)\n"}) {
    EXPECT_NE(p.err.find(line), std::string::npos) << line << " in\n" << p.err;
  }
  for (const char* name : kFigures) EXPECT_TRUE(Exists(dir.File("figures") + "/" + name + ".png"));
  // --no-pool: one line per run, the seed in the label.
  const CliResult unpooled =
      RunPlot({db, "--out", dir.File("unpooled"), "--dpi", "40", "--format", "png", "--no-pool"});
  ASSERT_EQ(unpooled.exit_code, 0) << unpooled.err;
  EXPECT_NE(unpooled.err.find("run 2: fcfs seed 1\n"), std::string::npos) << unpooled.err;
}

// An interrupted run is left out as `clustersim report` leaves it out; named with --run it is an
// error, and --include-interrupted plots it marked.
TEST_F(PlotScript, LeavesOutAnInterruptedRunAsReportDoes) {
  TempDir dir;
  const std::string db = dir.File("copy.sqlite");
  WriteFile(db, ReadFile(Db()));
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "UPDATE runs SET status = 'interrupted' WHERE run_id = 2", nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(raw);
  }
  const CliResult r = RunPlot({db, "--out", dir.File("a"), "--dpi", "40", "--format", "png"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("run 2 left out (status interrupted"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("run 2: "), std::string::npos) << r.err;
  const CliResult named = RunPlot({db, "--out", dir.File("b"), "--run", "2"});
  EXPECT_EQ(named.exit_code, 2);
  EXPECT_NE(named.err.find("run 2 has status interrupted"), std::string::npos) << named.err;
  const CliResult included = RunPlot(
      {db, "--out", dir.File("c"), "--dpi", "40", "--format", "png", "--include-interrupted"});
  ASSERT_EQ(included.exit_code, 0) << included.err;
  EXPECT_NE(included.err.find("run 2: easy walltime=exact (interrupted)"), std::string::npos)
      << included.err;
}

// An occupancy chart of more jobs than colours can tell apart is coloured by size class (the
// bundled trace names no users) instead of by job.
TEST(PlotOccupancy, ManyJobsAreColouredBySizeInsteadOfByJob) {
  TempDir dir;
  const std::string db = dir.File("alloc.sqlite");
  const std::vector<std::string> args = {"run",   "--first", "600", "--record-allocations",
                                         "--out", db};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  const CliResult p = RunPlot({db, "--out", dir.File("figures"), "--dpi", "40", "--format", "png"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.err.find("occupancy_run1: 600 jobs in the window, more than 200: coloured by size"),
            std::string::npos)
      << p.err;
  EXPECT_TRUE(Exists(dir.File("figures") + "/occupancy_run1.png"));
}

// Runs that did not see the same jobs (an 8-GPU job rejected on a 4-GPU cluster, run on an
// 8-GPU one) are not plotted side by side unless asked: the script names the job and stops.
TEST(PlotJobSets, RunsThatSawDifferentJobsAreRefusedUnlessAllowed) {
  TempDir dir;
  const std::string trace = dir.File("t.csv");
  WriteFile(trace, "job_id,submit_time,gpus,duration\nsmall,0,1,100\nbig,5,8,100\n");
  const std::string small = dir.File("small.json");
  WriteFile(small, R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}]})");
  const std::string db = dir.File("r.sqlite");
  for (const std::string& cluster : {TestData("tiny_cluster.json"), small}) {
    const CliResult r = RunCli({"run", "--trace", trace, "--cluster", cluster, "--out", db});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const std::string out = dir.File("figures");
  const CliResult refused = RunPlot({db, "--out", out, "--dpi", "40", "--format", "png"});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("run 2 (fcfs/first-fit) rejected 1 job that run 1 (fcfs/first-fit) "
                             "accepted: 1 like \"requests 8 GPUs"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("(job big)"), std::string::npos) << refused.err;
  EXPECT_FALSE(Exists(out + "/headline.png"));
  const CliResult allowed =
      RunPlot({db, "--out", out, "--dpi", "40", "--format", "png", "--allow-different-jobs"});
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_NE(allowed.err.find("warning: the runs saw different jobs"), std::string::npos)
      << allowed.err;
  EXPECT_TRUE(Exists(out + "/headline.png"));
}

TEST_F(PlotScript, BadDatabaseOrRunIsExitCode2) {
  const CliResult missing = RunPlot({dir_->File("nope.sqlite"), "--out", dir_->File("x")});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("no such database"), std::string::npos) << missing.err;
  const CliResult bad_run = RunPlot({Db(), "--out", dir_->File("y"), "--run", "99"});
  EXPECT_EQ(bad_run.exit_code, 2) << bad_run.err;
  EXPECT_NE(bad_run.err.find("no run 99"), std::string::npos) << bad_run.err;
}

TEST(PlotLabels, NameWhatDiffersLeaveOutFailedRunsAndFollowTheOptions) {
  TempDir dir;
  // A sweep of fcfs and easy, each without parameters (complete) and with walltime=nonsense
  // (failed: fcfs takes no walltime, easy no such value), merged into one database: runs 1 fcfs,
  // 2 fcfs failed, 3 easy, 4 easy failed.
  const std::string spec = dir.File("spec.json");
  WriteFile(spec,
            R"({"traces": [")" + TestData("tiny_trace.csv") + R"("], "clusters": [")" +
                TestData("tiny_cluster.json") +
                R"("], "policies": ["fcfs", "easy"], "params": [{}, {"walltime": "nonsense"}]})");
  RunCli({"sweep", spec, "--out", dir.File("sweep")});
  const std::string db = dir.File("runs.sqlite");
  const CliResult merged = RunCli({"merge", db, dir.File("sweep")});
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  const std::string out = dir.File("figures");
  const CliResult r = RunPlot({db, "--out", out, "--dpi", "40", "--format", "svg"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // The complete runs differ in their policy only: that is their label.
  EXPECT_NE(r.err.find("run 1: fcfs\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("run 3: easy\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("run 2 left out (status failed, 0 jobs)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("run 4 left out (status failed, 0 jobs)"), std::string::npos) << r.err;
  for (const char* name : kFigures) {
    // One GPU type (the tiny cluster): its utilization is the headline's, no figure of its own.
    if (std::string(name) == "gpu_type_utilization") {
      EXPECT_FALSE(Exists(out + "/" + name + ".svg"));
      EXPECT_NE(r.err.find("gpu_type_utilization left out: the plotted runs have one GPU type"),
                std::string::npos)
          << r.err;
      continue;
    }
    const std::string svg = ReadFile(out + "/" + name + ".svg");
    EXPECT_NE(svg.find("<svg"), std::string::npos) << name;
    EXPECT_FALSE(Exists(out + "/" + name + ".png")) << name;  // --format svg only
  }
  // --label and --style paper.
  const CliResult paper =
      RunPlot({db, "--out", dir.File("paper"), "--dpi", "40", "--run", "1", "3", "--label",
               "{policy} seed {seed}", "--style", "paper", "--format", "png"});
  ASSERT_EQ(paper.exit_code, 0) << paper.err;
  EXPECT_NE(paper.err.find("run 1: fcfs seed 0"), std::string::npos) << paper.err;
  EXPECT_TRUE(Exists(dir.File("paper") + "/wait_cdf.png"));
  const CliResult bad = RunPlot({db, "--out", dir.File("bad"), "--format", "gif"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--format gif: expected png, pdf or svg"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace clustersim::testing
