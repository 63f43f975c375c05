// Bad options, absurd sizes and runs that would mislead, through the real clustersim executable:
// one test per case of "No silent surprises" (docs/cli.md#bad-options lists them). Each must be
// refused before any work starts, with an error in the user's terms (the option as typed and the
// nearest valid name), exit code 2 and nothing written; or, where the run is legitimate but
// empty of meaning, warned about loudly.
//
// Set CLUSTERSIM_TEST_BINARY to run these tests against another build of clustersim, and
// CLUSTERSIM_TEST_SOURCE_DIR to read the scripts and docs of another checkout.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "tests/cli/cli_test_util.h"

namespace clustersim::testing {
namespace {

constexpr int kBadInput = 2;

// The repository the tests read files of: $CLUSTERSIM_TEST_SOURCE_DIR when set (to check another
// checkout), else this one.
std::string SourceDir() {
  const char* other = std::getenv("CLUSTERSIM_TEST_SOURCE_DIR");
  return other && *other ? other : CLUSTERSIM_SOURCE_DIR;
}

// The native CSV header alone: a trace of no jobs.
const char* kHeaderOnly = "job_id,submit_time,gpus,duration\n";

// Expects exit code 2, `message` in stderr and no file at `out`.
void ExpectRefused(const std::vector<std::string>& args, const std::string& message,
                   const std::string& out = "") {
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, kBadInput) << Describe(args, r);
  EXPECT_NE(r.err.find(message), std::string::npos) << "expected \"" << message << "\" in\n"
                                                    << Describe(args, r);
  if (!out.empty()) {
    EXPECT_FALSE(Exists(out)) << out << " was written: " << Describe(args, r);
  }
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// --- a typo in a --param prefix, a sweep spec key or an option name ---------------------------

TEST(MisspeltNames, APolicyPrefixTypoInAParamIsRefusedByCompareValidateSearchAndSweep) {
  TempDir dir;
  const std::string out = dir.File("out.sqlite");
  const std::string trace = TestData("tiny_trace.csv"), cluster = TestData("tiny_cluster.json");
  // compare: "eassy" is no policy; the nearest is easy. Before: easy ran with defaults.
  ExpectRefused({"compare", "--trace", trace, "--cluster", cluster, "--policies", "fcfs,easy",
                 "--param", "eassy:walltime=0.5", "--out", out},
                "--param eassy:walltime=0.5: no policy or placement is named \"eassy\"; did you "
                "mean \"easy\"?",
                out);
  // A real policy none of the runs uses: the setting would apply to no run.
  ExpectRefused({"compare", "--trace", trace, "--cluster", cluster, "--policies", "fcfs,sjf",
                 "--param", "easy:walltime=exact", "--out", out},
                "--param easy:walltime=exact: applies to no run", out);
  // validate --search: the typo was ranked as configurations.
  const std::string log = dir.File("log.csv");
  WriteFile(log,
            "job_id,submit_time,gpus,duration,recorded_start,recorded_end\n"
            "a,0,4,100,0,100\nb,10,8,50,100,150\n");
  ExpectRefused({"validate", "--trace", log, "--cluster", cluster, "--search", "policy=fcfs,easy",
                 "--search", "eassy:walltime=0.5,2", "--out", out},
                "no policy or placement is named \"eassy\"; did you mean \"easy\"?", out);
  // A sweep spec's params key.
  const std::string spec = dir.File("spec.json");
  WriteFile(spec,
            R"({"traces": [")" + trace + R"("], "clusters": [")" + cluster +
                R"("], "policies": ["fcfs", "easy"], "params": [{"eassy:walltime": "0.5"}]})");
  ExpectRefused({"sweep", spec, "--out", dir.File("sweep")},
                "params[0].eassy:walltime: no policy or placement is named \"eassy\"; did you "
                "mean \"easy\"?",
                dir.File("sweep"));
  // A misspelt sweep spec key, run config key and option name get the nearest valid one.
  WriteFile(spec, R"({"traces": [")" + trace + R"("], "polices": ["fcfs"]})");
  ExpectRefused({"sweep", spec, "--out", dir.File("sweep")},
                "unknown key \"polices\"; did you mean \"policies\"?");
  ExpectRefused({"run", "--trace", trace, "--cluster", cluster, "--polcy", "easy", "--out", out},
                "unknown option --polcy; did you mean --policy?", out);
  // Abbreviations are not accepted: --pol could mean --policy today and something else later.
  ExpectRefused({"run", "--trace", trace, "--cluster", cluster, "--pol", "easy", "--out", out},
                "unknown option --pol; did you mean --policy?", out);
  ExpectRefused(
      {"compare", "--trace", trace, "--cluster", cluster, "--policies", "fcfs,easyy", "--out", out},
      "unknown policy \"easyy\"; did you mean \"easy\"?", out);
  ExpectRefused({"run", "--trace", trace, "--cluster", cluster, "--param", "walltme=exact",
                 "--policy", "easy", "--out", out},
                "walltme (did you mean walltme -> walltime?)", out);
}

// --- settings that cannot work on the cluster or with each other ------------------------------

TEST(ImpossibleSettings, QuotasBeyondTheClusterAreRefusedBeforeTheTraceIsRead) {
  TempDir dir;
  const std::string out = dir.File("out.sqlite");
  // tests/data/tiny_cluster.json: 2 nodes x 4 GPUs = 8 GPUs.
  const std::vector<std::string> base = {"run",
                                         "--trace",
                                         TestData("tiny_trace.csv"),
                                         "--cluster",
                                         TestData("tiny_cluster.json"),
                                         "--policy",
                                         "priority",
                                         "--out",
                                         out};
  auto with = [&](const std::string& quota) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--param", "quota=" + quota});
    return args;
  };
  ExpectRefused(with("vc1:1200"),
                "parameter quota: virtual cluster \"vc1\" is guaranteed 1200 GPUs, 1192 more than "
                "the cluster's 8",
                out);
  ExpectRefused(with("vc1:6,vc2:5"),
                "parameter quota: the quotas sum to 11 GPUs, 3 more than the cluster's 8", out);
  // compare checks every run's settings before any simulates.
  ExpectRefused(
      {"compare", "--trace", TestData("tiny_trace.csv"), "--cluster", TestData("tiny_cluster.json"),
       "--policies", "fcfs,priority", "--param", "priority:quota=vc1:1200", "--out", out},
      "is guaranteed 1200 GPUs", out);
  // Within the cluster: runs.
  const CliResult ok = RunCli(with("vc1:4,vc2:4"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST(ImpossibleSettings, PlanRefusesAnSloNoClusterCanMeetWithoutSimulating) {
  const std::vector<std::string> base = {
      "plan",        "--trace", TestData("tiny_trace.csv"), "--node-type", "A100-80GBx4",
      "--max-nodes", "8"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  for (const auto& [slo, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--slo", "utilization>=150%"},
            "utilization is busy GPU-time over all GPU-time, at most 100 %, so no cluster "
            "reaches 150 %"},
           {{"--slo", "p95_slowdown<=0.5"}, "a slowdown (JCT / run time) is at least 1"},
           {{"--slo", "p50_wait>=2h", "--slo", "p95_wait<=1h"},
            "contradict each other: p50_wait is never above p95_wait"},
           // The tiny trace's run times (100, 50, 30, 10, 10, 100 s) average 50 s: a mean JCT
           // of at most 20 s cannot be met (a JCT is at least the run time).
           {{"--slo", "mean_jct<=20"}, "the jobs' run times alone give mean_jct = 50 s"},
           // The largest job (16 GPUs) needs 4 nodes of 4 GPUs; --max-nodes 8 allows them, a
           // budget below 4 x 4 GPUs x the A100-80GB price does not.
           {{"--slo", "p95_wait<=1h", "--budget", "1"}, "over the budget of $1.00/h"}}) {
    const CliResult r = RunCli(with(slo));
    EXPECT_EQ(r.exit_code, kBadInput) << Describe(with(slo), r);
    EXPECT_TRUE(Contains(r.err, message)) << message << "\n" << Describe(with(slo), r);
    EXPECT_FALSE(Contains(r.out, "evaluated points")) << "it simulated: " << r.out;
  }
}

// --- absurd sizes and stopped writers ----------------------------------------------------------

// A test of an absurd size or of a stopped writer runs this build's clustersim (never
// $CLUSTERSIM_TEST_BINARY) under a file-size limit: if the check under test were missing, the
// kernel would stop the writer (SIGXFSZ) long before the disk fills.
SpawnLimits Guarded(unsigned long max_file_bytes) {
  SpawnLimits limits;
  limits.own_binary = true;
  limits.max_file_bytes = max_file_bytes;
  return limits;
}

TEST(AbsurdSizes, ATraceLargerThanTheDiskIsRefusedWithItsEstimateAndNothingIsWritten) {
  TempDir dir;
  const std::vector<std::string> args = {"trace",        "generate", "--jobs",
                                         "100000000000", "--out",    dir.File("huge.csv")};
  // Refused before a byte is written: a 1 MB limit is never reached.
  const CliResult r = RunCli(args, Guarded(1ul << 20));
  EXPECT_EQ(r.exit_code, kBadInput) << Describe(args, r);
  // About 38 bytes a line for ids of 11 digits: some 4 TB, beyond any test machine's disk.
  EXPECT_TRUE(Contains(r.err, "--jobs 100000000000: the trace would take about ")) << r.err;
  EXPECT_TRUE(Contains(r.err, " TB, more than the ")) << r.err;
  EXPECT_TRUE(EntriesContaining(dir.path(), "huge").empty());
}

// Waits up to 60 s for `dir` to hold an entry whose name contains `needle`.
bool WaitForEntry(const std::string& dir, const std::string& needle) {
  for (int i = 0; i < 6000; ++i) {
    if (!EntriesContaining(dir, needle).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Waits up to 60 s for the process's stderr to hold `text` (or for the process to end).
bool WaitForErr(BackgroundCli* cli, const std::string& text) {
  for (int i = 0; i < 6000; ++i) {
    if (Contains(cli->ErrSoFar(), text)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(StoppedWriters, SigtermDuringTraceGenerateRemovesThePartialFile) {
  TempDir dir;
  // 8 million jobs: 256 MB of memory while drawing them, about 250 MB of file when finished,
  // some seconds of writing: still writing when the signal comes. The readiness signal is the
  // first progress line (every 10 ms after the first megabyte): it is printed while the .partial
  // file is being written, whatever the machine's load.
  BackgroundCli generate({"trace", "generate", "--jobs", "8000000", "--out", dir.File("t.csv"),
                          "--progress", "always", "--progress-interval", "0.01"},
                         Guarded(512ul << 20));
  ASSERT_TRUE(generate.started());
  ASSERT_TRUE(WaitForErr(&generate, "clustersim trace generate: progress "))
      << generate.ErrSoFar();
  ASSERT_FALSE(EntriesContaining(dir.path(), ".partial").empty()) << generate.ErrSoFar();
  generate.Signal(SIGTERM);
  const CliResult r = generate.Wait();
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  EXPECT_TRUE(EntriesContaining(dir.path(), "t.csv").empty())
      << "left behind: " << EntriesContaining(dir.path(), "").size();
}

// Ctrl-C stops run and compare cleanly: what was simulated is committed as interrupted (exit
// code 130) and no temporary file or folder is left beside the output.
TEST(StoppedWriters, SigintStopsRunAndCompareCleanlyWithoutTemporaryFiles) {
  TempDir dir;
  const std::string trace = dir.File("big.csv");
  ASSERT_EQ(
      RunCli({"trace", "generate", "--jobs", "200000", "--gpus", "144", "--out", trace}).exit_code,
      0);
  for (const std::string command : {"run", "compare"}) {
    const std::string out = dir.File(command + ".sqlite");
    std::vector<std::string> args = {command,      "--trace", trace, "--out", out, "--progress",
                                     "always",     "--progress-interval", "0.01"};
    if (command == "compare") args.insert(args.end(), {"--policies", "fcfs,sjf", "--jobs", "1"});
    BackgroundCli cli(args, Guarded(256ul << 20));
    ASSERT_TRUE(cli.started());
    // Ready when the simulation is under way: its first progress line is printed, and the
    // temporary database (run) or folder of the runs' databases (compare) is there.
    ASSERT_TRUE(WaitForErr(&cli, "clustersim " + command + ": progress ")) << cli.ErrSoFar();
    ASSERT_TRUE(WaitForEntry(dir.path(), command == "run" ? ".tmp-" : ".compare-tmp-"))
        << cli.ErrSoFar();
    cli.Signal(SIGINT);
    const CliResult r = cli.Wait();
    EXPECT_EQ(r.exit_code, 130) << Describe(args, r);
    EXPECT_TRUE(EntriesContaining(dir.path(), ".tmp-").empty()) << command;
    EXPECT_TRUE(EntriesContaining(dir.path(), ".compare-tmp-").empty()) << command;
    ASSERT_TRUE(Exists(out)) << command;
    Database db(out);
    EXPECT_GE(db.Number("SELECT COUNT(*) FROM runs WHERE status = 'interrupted'"), 1) << command;
  }
}

// --- empty traces and runs that start nothing --------------------------------------------------

TEST(EmptyRuns, AHeaderOnlyTraceIsAnErrorForRunCompareValidateAndPlan) {
  TempDir dir;
  const std::string trace = dir.File("empty.csv");
  WriteFile(trace, kHeaderOnly);
  const std::string out = dir.File("out.sqlite");
  const std::string cluster = TestData("tiny_cluster.json");
  const std::string message = "the trace holds no jobs";
  ExpectRefused({"run", "--trace", trace, "--cluster", cluster, "--out", out}, message, out);
  ExpectRefused({"compare", "--trace", trace, "--cluster", cluster, "--out", out}, message, out);
  ExpectRefused({"validate", "--trace", trace, "--cluster", cluster, "--out", out}, message, out);
  ExpectRefused({"plan", "--trace", trace, "--node-type", "A100-80GBx4", "--slo", "p95_wait<=1h"},
                message);
  // A filter that keeps nothing is the same.
  ExpectRefused({"run", "--trace", TestData("tiny_trace.csv"), "--cluster", cluster, "--user",
                 "nobody", "--out", out},
                "no job is left after the trace filters (6 read; excluded: 0 outside the window, "
                "0 other vc, 6 other user",
                out);
}

TEST(EmptyRuns, ARunInWhichNoJobStartsSaysSoAndWhy) {
  TempDir dir;
  const std::string trace = dir.File("too_big.csv");
  WriteFile(trace, std::string(kHeaderOnly) + "a,0,16,100\nb,5,12,100\n");
  const std::vector<std::string> args = {"run",
                                         "--trace",
                                         trace,
                                         "--cluster",
                                         TestData("tiny_cluster.json"),
                                         "--out",
                                         dir.File("out.sqlite")};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_TRUE(Contains(r.out, "warning") &&
              Contains(r.out, "no job started: every job was rejected (none fits the cluster"))
      << Describe(args, r);
  const CliResult c = RunCli({"compare", "--trace", trace, "--cluster",
                              TestData("tiny_cluster.json"), "--out", dir.File("c.sqlite")});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_TRUE(Contains(c.err, "clustersim compare: warning: no job started")) << c.err;
}

// --- output folders ---------------------------------------------------------------------------

TEST(OutputFolders, AMissingFolderIsAnErrorUnlessMkdirAsksForIt) {
  TempDir dir;
  const std::string missing = dir.File("missing");
  const std::string trace = TestData("tiny_trace.csv"), cluster = TestData("tiny_cluster.json");
  const std::string message = "the folder " + missing +
                              "/deeper does not exist (create it "
                              "first, or add --mkdir to create it)";
  const std::string spec = dir.File("spec.json");
  WriteFile(spec, R"({"traces": [")" + trace + R"("], "clusters": [")" + cluster + R"("]})");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"run", "--trace", trace, "--cluster", cluster, "--out", missing + "/deeper/x.sqlite"},
           {"compare", "--trace", trace, "--cluster", cluster, "--out",
            missing + "/deeper/x.sqlite"},
           {"trace", "generate", "--jobs", "10", "--out", missing + "/deeper/t.csv"},
           {"trace", "convert", trace, "--out", missing + "/deeper/t.csv"},
           {"merge", missing + "/deeper/m.sqlite", dir.path()},
           {"sweep", spec, "--out", missing + "/deeper/sweep"},
       }) {
    const CliResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, kBadInput) << Describe(args, r);
    EXPECT_TRUE(Contains(r.err, message)) << Describe(args, r);
    EXPECT_FALSE(Exists(missing)) << "made the folder: " << Describe(args, r);
  }
  const std::vector<std::string> made = {
      "run",    "--trace", trace, "--cluster", cluster, "--out", missing + "/deeper/x.sqlite",
      "--mkdir"};
  const CliResult r = RunCli(made);
  EXPECT_EQ(r.exit_code, 0) << Describe(made, r);
  EXPECT_TRUE(Exists(missing + "/deeper/x.sqlite"));
}

// --- validate: what the replay cannot reproduce ------------------------------------------------

TEST(ValidateWarnings, ARecordHoldingMoreGpusThanTheClusterIsWarnedAboutWithTheFactor) {
  TempDir dir;
  const std::string log = dir.File("log.csv");
  // Two 8-GPU jobs recorded running together over [0, 100): 16 GPUs on the 8-GPU tiny cluster,
  // twice its size in the 50 s intervals [0, 50) and [50, 100).
  WriteFile(log,
            "job_id,submit_time,gpus,duration,recorded_start,recorded_end\n"
            "a,0,8,100,0,100\nb,0,8,100,0,100\n");
  const std::vector<std::string> args = {
      "validate",   "--trace", log,     "--cluster",         TestData("tiny_cluster.json"),
      "--interval", "50",      "--out", dir.File("v.sqlite")};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_TRUE(Contains(r.err, "the recorded schedule holds more GPUs than cluster")) << r.err;
  EXPECT_TRUE(Contains(r.err, "up to 2.00x its 8 GPUs (16 GPUs on average over the 50 s interval"))
      << r.err;
}

TEST(ValidateWarnings, PartitionsAndQueuesTheReplayDoesNotModelAreWarnedAbout) {
  TempDir dir;
  const std::string log = dir.File("log.swf");
  // SWF fields: 1 job, 2 submit, 3 wait, 4 run, 5 processors, 6-14, 15 queue, 16 partition,
  // 17, 18. Two partitions (1, 2) and two queues (0, 1).
  WriteFile(log,
            "; MaxProcs: 8\n"
            "1 0 0 100 4 -1 -1 4 -1 -1 1 1 1 -1 0 1 -1 -1\n"
            "2 10 0 50 2 -1 -1 2 -1 -1 1 2 1 -1 1 2 -1 -1\n"
            "3 20 5 30 2 -1 -1 2 -1 -1 1 3 1 -1 1 2 -1 -1\n");
  const std::vector<std::string> args = {
      "validate", "--trace",           log, "--cluster", TestData("tiny_cluster.json"),
      "--out",    dir.File("v.sqlite")};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_TRUE(Contains(r.err,
                       "the log names 2 partitions (\"2\" 2 jobs, \"1\" 1 jobs) that the "
                       "replay does not model"))
      << r.err;
  EXPECT_TRUE(Contains(r.err,
                       "the log names 2 queues or priority classes (\"1\" 2 jobs, \"0\" 1 "
                       "jobs) that policy fcfs does not model"))
      << r.err;
}

TEST(ValidateWarnings, PartitionsAreNotWarnedAboutWhenTheClusterSpecModelsThem) {
  TempDir dir;
  const std::string log = dir.File("log.swf");
  WriteFile(log,
            "; MaxProcs: 8\n"
            "1 0 0 100 4 -1 -1 4 -1 -1 1 1 1 -1 0 1 -1 -1\n"
            "2 10 0 50 2 -1 -1 2 -1 -1 1 2 1 -1 0 2 -1 -1\n");
  // The same two partitions as site partitions of the cluster spec (docs/cluster.md#site-model).
  const std::string cluster = dir.File("site.json");
  WriteFile(cluster,
            R"({"nodes":[{"name":"n1","count":1,"gpu_type":"A100-80GB","gpus_per_node":4},)"
            R"({"name":"n2","count":1,"gpu_type":"A100-80GB","gpus_per_node":4}],)"
            R"("site":{"partitions":[{"name":"1","nodes":["n1"],"default":true},)"
            R"({"name":"2","nodes":["n2"]}]}})");
  const std::vector<std::string> args = {"validate", "--trace", log,  "--cluster",
                                         cluster,    "--out",   dir.File("v.sqlite")};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_FALSE(Contains(r.err, "partitions")) << r.err;
}

// --- progress for logs and batch jobs ----------------------------------------------------------

TEST(Progress, LongCommandsLogLinesWithAnEtaWhenStderrIsNotATerminal) {
  TempDir dir;
  const std::string trace = dir.File("t.csv");
  // --progress always: stderr is a file here, so log lines at every interval (1 ms). The load
  // is computed on the default cluster's 144 GPUs.
  const std::vector<std::string> generate = {"trace",
                                             "generate",
                                             "--jobs",
                                             "300000",
                                             "--gpus",
                                             "144",
                                             "--out",
                                             trace,
                                             "--progress",
                                             "always",
                                             "--progress-interval",
                                             "0.001"};
  const CliResult g = RunCli(generate);
  ASSERT_EQ(g.exit_code, 0) << Describe(generate, g);
  EXPECT_TRUE(Contains(g.err, "clustersim trace generate: progress ")) << g.err;
  EXPECT_TRUE(Contains(g.err, ", ETA ")) << g.err;
  for (const std::string command : {"run", "compare", "validate"}) {
    std::vector<std::string> args = {command,      "--trace", trace,
                                     "--progress", "always",  "--progress-interval",
                                     "0.001",      "--out",   dir.File(command + ".sqlite")};
    if (command == "validate") args.insert(args.end(), {"--submit-is-start"});
    if (command == "compare") args.insert(args.end(), {"--policies", "fcfs,sjf"});
    const CliResult r = RunCli(args);
    ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
    EXPECT_TRUE(Contains(r.err, "clustersim " + command + ": progress ")) << r.err;
    EXPECT_TRUE(Contains(r.err, ", ETA ")) << r.err;
    EXPECT_FALSE(Contains(r.err, "\r")) << "terminal control characters in a log";
  }
  // auto, the default, prints nothing when stderr is not a terminal.
  const CliResult quiet = RunCli({"run", "--trace", trace, "--out", dir.File("quiet.sqlite")});
  ASSERT_EQ(quiet.exit_code, 0);
  EXPECT_FALSE(Contains(quiet.err, "progress")) << quiet.err;
  ExpectRefused({"run", "--trace", trace, "--progress", "alwyas"},
                "--progress alwyas: expected auto, always or never; did you mean \"always\"?");
}

// --- the small ones ----------------------------------------------------------------------------

TEST(SmallOnes, EveryScriptIsExecutableWithAnInterpreterLine) {
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(SourceDir() + "/scripts")) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".py" && ext != ".sh" && ext != ".sbatch")) continue;
    EXPECT_NE(
        std::filesystem::status(entry.path()).permissions() & std::filesystem::perms::owner_exec,
        std::filesystem::perms::none)
        << entry.path() << " is not executable";
    EXPECT_EQ(ReadFile(entry.path().string()).rfind("#!", 0), 0u) << entry.path();
  }
}

TEST(SmallOnes, TheTourRelativeTracePathsWorkWithTheTracesInstalledElsewhere) {
  // An installed clustersim keeps its traces in PREFIX/share/clustersim/traces
  // ($CLUSTERSIM_DATA_DIR overrides it); the tour's `traces/...` paths resolve there when the
  // working folder has no such file (the test's working folder has no traces/).
  TempDir share;
  std::filesystem::create_directories(share.File("traces/philly"));
  WriteFile(share.File("traces/philly/tour.csv"), ReadFile(TestData("tiny_trace.csv")));
  ASSERT_FALSE(Exists("traces/philly/tour.csv"));
  ::setenv("CLUSTERSIM_DATA_DIR", share.File("traces").c_str(), 1);
  const CliResult r = RunCli({"trace", "stats", "traces/philly/tour.csv"});
  ::unsetenv("CLUSTERSIM_DATA_DIR");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "jobs            6")) << r.out;
}

TEST(SmallOnes, PythonDocsStateTheBuildOptionAsCMakeAndQuickstartSetIt) {
  const std::string cmake = ReadFile(SourceDir() + "/CMakeLists.txt");
  const std::string quickstart = ReadFile(SourceDir() + "/scripts/quickstart.sh");
  const std::string docs = ReadFile(SourceDir() + "/docs/python.md");
  const size_t option = cmake.find("option(CLUSTERSIM_BUILD_PYTHON");
  ASSERT_NE(option, std::string::npos);
  const bool on = cmake.find(" ON)", option) < cmake.find(" OFF)", option);
  ASSERT_TRUE(on) << "the docs below describe a default of ON";
  ASSERT_TRUE(Contains(quickstart, "-DCLUSTERSIM_BUILD_PYTHON=OFF"));
  EXPECT_FALSE(Contains(docs, "(default ON) turns it off")) << "the sentence the issue quoted";
  EXPECT_TRUE(Contains(docs, "`scripts/quickstart.sh` configures `build/` with it OFF"));
}

TEST(SmallOnes, ScriptsHelpShowsTheirWholeDescription) {
  // Each script's --help describes it with its whole docstring, not its first line (which ends
  // mid-sentence in most of them).
  for (const char* name :
       {"check_readme.py", "cosched_ablation.py", "fgd_openb.py", "hetero_results.py",
        "model_results.py", "openb_cpu_results.py", "make_default_trace.py", "check_layers.py"}) {
    const std::string path = SourceDir() + "/scripts/" + name;
    const std::string text = ReadFile(path);
    const size_t begin = text.find("\"\"\"") + 3;
    const std::string doc = text.substr(begin, text.find("\"\"\"", begin) - begin);
    std::vector<std::string> lines = Lines(doc);
    while (!lines.empty() && lines.back().find_first_not_of(' ') == std::string::npos) {
      lines.pop_back();
    }
    ASSERT_FALSE(lines.empty()) << name;
    TempDir capture;
    const std::string help = capture.File("help");
    const std::string command = "/usr/bin/python3 " + path + " --help > " + help + " 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << name << ": " << ReadFile(help);
    EXPECT_TRUE(Contains(ReadFile(help), lines.back()))
        << name << ": --help lacks \"" << lines.back() << "\"";
  }
}

TEST(SmallOnes, ValidateSearchShowsATraceWarningOnceNotOncePerConfiguration) {
  TempDir dir;
  const std::string log = dir.File("log.csv");
  // Job c takes no time: the sanity report's "zero durations" warning.
  WriteFile(log,
            "job_id,submit_time,gpus,duration,recorded_start,recorded_end\n"
            "a,0,4,100,0,100\nb,10,8,50,100,150\nc,20,1,0,150,150\n");
  const std::vector<std::string> args = {"validate",
                                         "--trace",
                                         log,
                                         "--cluster",
                                         TestData("tiny_cluster.json"),
                                         "--search",
                                         "policy=fcfs,sjf,easy",
                                         "--jobs",
                                         "1",
                                         "--out",
                                         dir.File("v.sqlite")};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  size_t count = 0;
  for (const std::string& line : Lines(r.err)) count += Contains(line, "zero duration");
  EXPECT_EQ(count, 1u) << r.err;
}

}  // namespace
}  // namespace clustersim::testing
