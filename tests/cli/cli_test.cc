// End-to-end tests of the clustersim command line: every bad input gets its error (file, line,
// column and what was expected), exit code 2 and no output database; Ctrl-C stops a run with exit
// code 130 and a valid, partial database; --help and the list / cluster show commands print what
// they promise.
//
// The executable is run as a child process (posix_spawn) with stdout and stderr captured; the bad
// inputs are small files in tests/data/bad/ whose exact bytes are repeated in the comments below
// so that each expected line:column can be checked by hand.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>

#include <chrono>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/cli/cli_test_util.h"

namespace clustersim::testing {
namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitInterrupted = 130;

std::string TinyCluster() { return TestData("tiny_cluster.json"); }
std::string GoodTrace() { return TestData("tiny_trace.csv"); }

// Asserts that a failed run left nothing behind in `dir`: no database at `out` and no temporary
// sibling (the writer's "<out>.tmp-<pid>").
void ExpectNoOutput(const TempDir& dir, const std::string& out) {
  EXPECT_FALSE(Exists(out)) << out << " was created by a run that failed";
  const auto temporaries = EntriesContaining(dir.path(), ".tmp-");
  EXPECT_TRUE(temporaries.empty()) << "temporary file left behind: " << temporaries.front();
}

// ---------------------------------------------------------------------------------------------
// Bad native CSV traces. Each case runs `clustersim run --trace tests/data/bad/<file>` on a good
// cluster and expects exit code 2, "<path>:<line>:<column>:" and the words in `expected` on
// stderr, and no database.
//
// Column arithmetic: columns are 1-based character positions of the offending field. The header
// "job_id,submit_time,gpus,duration" puts job_id at 1, submit_time at 8 (6 letters + comma),
// gpus at 20 (8 + 11 + 1) and duration at 25 (20 + 4 + 1).
struct BadTraceCase {
  const char* name;  // test name suffix
  const char* file;  // under tests/data/bad/
  int line;
  int column;
  std::vector<std::string> expected;  // substrings of stderr besides "path:line:column:"
  std::vector<std::string> extra_args = {};
};

std::ostream& operator<<(std::ostream& os, const BadTraceCase& c) { return os << c.name; }

const BadTraceCase kBadTraces[] = {
    // missing_field.csv:
    //   1 job_id,submit_time,gpus,duration
    //   2 j1,0,1,100
    //   3 j2,10,2
    // Line 3 has 3 of 4 fields; the error points just past its end: "j2,10,2" is 7 characters,
    // so column 8.
    {"MissingField", "missing_field.csv", 3, 8, {"expected 4 fields", "duration is missing"}},
    // extra_field.csv:
    //   1 job_id,submit_time,gpus,duration
    //   2 j1,0,1,100,7
    // "j1," is 1-3, "0," 4-5, "1," 6-7, "100," 8-11, so the fifth field "7" starts at column 12.
    {"ExtraField", "extra_field.csv", 2, 12, {"extra field", "expected 4 fields, got 5"}},
    // non_numeric.csv:
    //   1 job_id,submit_time,gpus,duration
    //   2 j1,0,1,100
    //   3 j2,10,2,abc
    // "j2," is 1-3, "10," 4-6, "2," 7-8, so duration "abc" starts at column 9.
    {"NonNumericDuration", "non_numeric.csv", 3, 9, {"duration", "expected a number", "abc"}},
    // non_numeric_gpus.csv:
    //   1 job_id,submit_time,gpus,duration
    //   2 j1,0,four,100
    // "j1," is 1-3, "0," 4-5, so gpus "four" starts at column 6.
    {"NonNumericGpus", "non_numeric_gpus.csv", 2, 6, {"gpus", "expected an integer", "four"}},
    // negative_time.csv:
    //   1 job_id,submit_time,gpus,duration
    //   2 j1,-5,1,100
    // "j1," is 1-3, so submit_time "-5" starts at column 4.
    {"NegativeSubmitTime", "negative_time.csv", 2, 4, {"submit_time", "expected a value >= 0"}},
    // negative_duration.csv:
    //   1 job_id,submit_time,gpus,duration
    //   2 j1,0,1,100
    //   3 j2,20,1,-30
    // "j2," is 1-3, "20," 4-6, "1," 7-8, so duration "-30" starts at column 9.
    {"NegativeDuration", "negative_duration.csv", 3, 9, {"duration", "expected a value >= 0"}},
    // negative_gpus.csv:
    //   1 job_id,submit_time,gpus,duration
    //   2 j1,0,-2,100
    // "j1," is 1-3, "0," 4-5, so gpus "-2" starts at column 6.
    {"NegativeGpuCount", "negative_gpus.csv", 2, 6, {"gpus", "expected an integer >= 0"}},
    // unknown_column.csv:
    //   1 job_id,submit_time,gpus,duration,color
    //   2 j1,0,1,100,red
    // duration starts at 25 and is 8 letters (25-32), its comma is 33, so "color" starts at 34.
    // The message lists the known columns.
    {"UnknownColumn",
     "unknown_column.csv",
     1,
     34,
     {"unknown column \"color\"", "expected: job_id,submit_time,gpus,duration"}},
    // missing_column.csv (no duration):
    //   1 job_id,submit_time,gpus
    //   2 j1,0,1
    // The header as a whole is wrong, reported at its first character: 1:1. Named format.
    {"MissingRequiredColumnWithFormat",
     "missing_column.csv",
     1,
     1,
     {"required column \"duration\""},
     {"--format", "native"}},
    // The same file with the format auto-detected (what a user types): the user must still learn
    // that "duration" is missing, not only that the format is unknown.
    {"MissingRequiredColumnIsNamed", "missing_column.csv", 1, 1, {"duration"}},
    // unterminated_quote.csv:
    //   1 job_id,submit_time,gpus,duration,user
    //   2 j1,0,1,100,"alice
    // "j1," 1-3, "0," 4-5, "1," 6-7, "100," 8-11, so the quote opening "alice starts at 12.
    {"UnterminatedQuote", "unterminated_quote.csv", 2, 12, {"unterminated", "quoted field"}},
    // duplicate_job_id.csv:
    //   1 job_id,submit_time,gpus,duration
    //   2 j1,0,1,100
    //   3 j2,5,1,100
    //   4 j1,9,1,100
    // The second "j1" is on line 4 at column 1; the message names the first occurrence (line 2).
    {"DuplicateJobId",
     "duplicate_job_id.csv",
     4,
     1,
     {"duplicate job_id \"j1\"", "first on line 2"}},
    // unknown_gpu_type.csv:
    //   1 job_id,submit_time,gpus,duration,gpu_type
    //   2 j1,0,1,100,A100-80GB
    //   3 j2,5,1,100,Z900-1TB
    // "j2," 1-3, "5," 4-5, "1," 6-7, "100," 8-11, so gpu_type "Z900-1TB" starts at column 12. The
    // message lists the catalog's names.
    {"UnknownGpuType",
     "unknown_gpu_type.csv",
     3,
     12,
     {"unknown GPU type \"Z900-1TB\"", "A100-80GB", "H100-80GB"}},
};

class BadTrace : public ::testing::TestWithParam<BadTraceCase> {};

TEST_P(BadTrace, FailsWithPositionExitCode2AndNoDatabase) {
  const BadTraceCase& c = GetParam();
  TempDir dir;
  const std::string out = dir.File("out.sqlite");
  const std::string trace = TestData(std::string("bad/") + c.file);
  std::vector<std::string> args = {"run",         "--trace", trace, "--cluster",
                                   TinyCluster(), "--out",   out,   "--no-progress"};
  args.insert(args.end(), c.extra_args.begin(), c.extra_args.end());
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(args, r);
  const std::string position =
      trace + ":" + std::to_string(c.line) + ":" + std::to_string(c.column) + ":";
  EXPECT_NE(r.err.find(position), std::string::npos)
      << "expected \"" << position << "\" on stderr\n"
      << Describe(args, r);
  for (const auto& words : c.expected) {
    EXPECT_NE(r.err.find(words), std::string::npos) << "expected \"" << words << "\" on stderr\n"
                                                    << Describe(args, r);
  }
  EXPECT_EQ(r.out.find("written to"), std::string::npos) << Describe(args, r);
  ExpectNoOutput(dir, out);
}

INSTANTIATE_TEST_SUITE_P(NativeCsv, BadTrace, ::testing::ValuesIn(kBadTraces),
                         [](const auto& info) { return std::string(info.param.name); });

// A bad trace must not touch an existing database: the run is appended in one transaction only
// after the inputs were read, so the file keeps exactly its one earlier run.
TEST(BadInput, LeavesAnExistingDatabaseUnchanged) {
  TempDir dir;
  const std::string out = dir.File("out.sqlite");
  const std::vector<std::string> good = {"run",         "--trace", GoodTrace(), "--cluster",
                                         TinyCluster(), "--out",   out,         "--no-progress"};
  const CliResult first = RunCli(good);
  ASSERT_EQ(first.exit_code, 0) << Describe(good, first);
  const std::string before = ReadFile(out);
  for (const char* file : {"non_numeric.csv", "unknown_gpu_type.csv"}) {
    const std::vector<std::string> bad = {
        "run",       "--trace",      TestData(std::string("bad/") + file),
        "--cluster", TinyCluster(),  "--out",
        out,         "--no-progress"};
    const CliResult r = RunCli(bad);
    EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(bad, r);
    EXPECT_EQ(ReadFile(out), before) << file << " changed the existing database";
  }
  Database db(out);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM runs"), 1);
  EXPECT_TRUE(EntriesContaining(dir.path(), ".tmp-").empty());
  EXPECT_TRUE(EntriesContaining(dir.path(), "-journal").empty());
}

TEST(BadInput, MissingTraceFileIsNamed) {
  TempDir dir;
  const std::string out = dir.File("out.sqlite");
  const std::string trace = dir.File("no_such_trace.csv");
  const std::vector<std::string> args = {"run",         "--trace", trace, "--cluster",
                                         TinyCluster(), "--out",   out,   "--no-progress"};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(args, r);
  EXPECT_NE(r.err.find(trace), std::string::npos) << Describe(args, r);
  EXPECT_NE(r.err.find("cannot open"), std::string::npos) << Describe(args, r);
  ExpectNoOutput(dir, out);
}

// --out naming a file that is not a SQLite database: refused, and the file is left as it was.
TEST(BadInput, OutputThatIsNotADatabaseIsRefusedAndKept) {
  TempDir dir;
  const std::string out = dir.File("notes.sqlite");
  const std::string text = "these are my notes, not a database\n";
  WriteFile(out, text);
  const std::vector<std::string> args = {"run",         "--trace", GoodTrace(), "--cluster",
                                         TinyCluster(), "--out",   out,         "--no-progress"};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(args, r);
  EXPECT_NE(r.err.find(out), std::string::npos) << Describe(args, r);
  EXPECT_EQ(ReadFile(out), text);
  EXPECT_TRUE(EntriesContaining(dir.path(), ".tmp-").empty());
}

// ---------------------------------------------------------------------------------------------
// Bad cluster specs, policies, placements and runtime models: exit code 2, the message names the
// file (for specs) and lists what would have been valid, no database.

struct BadRunCase {
  const char* name;
  std::vector<std::string> args;      // added to run --trace <good> --out <out>
  std::vector<std::string> expected;  // substrings of stderr
};

std::ostream& operator<<(std::ostream& os, const BadRunCase& c) { return os << c.name; }

std::vector<BadRunCase> BadRunCases() {
  const std::string bad = TestData("bad/");
  return {
      // cluster_syntax_error.json:
      //   1 {"nodes": [
      //   2   {"count": 2, "gpu_type": "A100-80GB", "gpus_per_node": 4},
      //   3 ]}
      // A trailing comma: after "}," the parser expects a value and finds ']' at line 3,
      // column 1.
      {"ClusterSyntaxError",
       {"--cluster", bad + "cluster_syntax_error.json"},
       {bad + "cluster_syntax_error.json:3:1:", "invalid JSON", "syntax error"}},
      // {"network": {"nodes_per_rack": 4}}
      {"ClusterWithoutNodes",
       {"--cluster", bad + "cluster_no_nodes.json"},
       {bad + "cluster_no_nodes.json", "missing required key \"nodes\""}},
      // {"nodes": [{"count": 2, "gpus_per_node": 4}]}
      {"NodeGroupWithoutGpuType",
       {"--cluster", bad + "cluster_no_gpu_type.json"},
       {bad + "cluster_no_gpu_type.json", "nodes[0]", "missing required key \"gpu_type\""}},
      // {"nodes": [{"count": 2, "gpu_type": "A100-81GB", "gpus_per_node": 4}]}
      {"ClusterUnknownGpuType",
       {"--cluster", bad + "cluster_unknown_gpu_type.json"},
       {bad + "cluster_unknown_gpu_type.json", "unknown GPU type \"A100-81GB\"", "A100-80GB",
        "H100-80GB", "V100-16GB"}},
      // {"nodes": [{"count": 0, ...}]}
      {"ClusterCountZero",
       {"--cluster", bad + "cluster_count_zero.json"},
       {bad + "cluster_count_zero.json", "nodes[0].count", "expected a positive integer"}},
      // {"nodes": [{"count": -3, ...}]}
      {"ClusterCountNegative",
       {"--cluster", bad + "cluster_count_negative.json"},
       {bad + "cluster_count_negative.json", "nodes[0].count", "expected a positive integer"}},
      {"UnknownClusterPreset",
       {"--cluster", "no-such-preset"},
       {"no-such-preset", "dgx-a100", "dgx1-v100"}},
      {"UnknownPolicy",
       {"--cluster", TinyCluster(), "--policy", "no-such-policy"},
       {"unknown policy \"no-such-policy\"", "fcfs"}},
      {"UnknownPlacement",
       {"--cluster", TinyCluster(), "--placement", "no-such-placement"},
       {"unknown placement \"no-such-placement\"", "pool", "first-fit", "best-fit"}},
      {"UnknownRuntimeModel",
       {"--cluster", TinyCluster(), "--runtime-model", "warp-drive"},
       {"unknown runtime model \"warp-drive\"", "trace", "hardware"}},
      {"UnknownPolicyParameter",
       {"--cluster", TinyCluster(), "--param", "no_such_knob=3"},
       {"no_such_knob"}},
      {"NonPositiveInterval",
       {"--cluster", TinyCluster(), "--interval", "0"},
       {"--interval", "positive"}},
      {"DurationWithAnUnknownUnit",
       {"--cluster", TinyCluster(), "--stop-time", "100x"},
       {"--stop-time 100x: unit \"x\": expected s, min, h or d"}},
      {"MttrThatIsNotADuration",
       {"--cluster", TinyCluster(), "--mttr", "soon"},
       {"--mttr soon", "a number of hours"}},
      // The removed option names its replacement with the inverse factor, never silently
      // inverted.
      {"LoadScaleIsRefusedNamingLoadFactor",
       {"--cluster", TinyCluster(), "--load-scale", "0.5"},
       {"--load-scale was removed", "Use --load-factor 2:", "larger is heavier"}},
      {"LoadScaleWithEqualsSign",
       {"--cluster", TinyCluster(), "--load-scale=4"},
       {"Use --load-factor 0.25:"}},
  };
}

class BadRun : public ::testing::TestWithParam<BadRunCase> {};

TEST_P(BadRun, FailsWithExitCode2ListingValidValuesAndNoDatabase) {
  const BadRunCase& c = GetParam();
  TempDir dir;
  const std::string out = dir.File("out.sqlite");
  std::vector<std::string> args = {"run", "--trace", GoodTrace(), "--out", out, "--no-progress"};
  args.insert(args.end(), c.args.begin(), c.args.end());
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(args, r);
  for (const auto& words : c.expected) {
    EXPECT_NE(r.err.find(words), std::string::npos) << "expected \"" << words << "\" on stderr\n"
                                                    << Describe(args, r);
  }
  ExpectNoOutput(dir, out);
}

INSTANTIATE_TEST_SUITE_P(Inputs, BadRun, ::testing::ValuesIn(BadRunCases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ClusterShow, BadSpecFailsWithLineAndColumn) {
  const std::string spec = TestData("bad/cluster_syntax_error.json");
  const std::vector<std::string> args = {"cluster", "show", spec};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(args, r);
  EXPECT_NE(r.err.find(spec + ":3:1:"), std::string::npos) << Describe(args, r);
}

TEST(Cli, UnknownCommandFailsWithExitCode2) {
  const std::vector<std::string> args = {"frobnicate"};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(args, r);
  EXPECT_NE(r.err.find("frobnicate"), std::string::npos) << Describe(args, r);
  EXPECT_NE(r.err.find("run"), std::string::npos) << Describe(args, r);
}

TEST(Cli, UnknownOptionFailsWithExitCode2) {
  const std::vector<std::string> args = {"run", "--no-such-option"};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(args, r);
  EXPECT_NE(r.err.find("no-such-option"), std::string::npos) << Describe(args, r);
}

// ---------------------------------------------------------------------------------------------
// Ctrl-C. The run replays 200,000 jobs on 8 GPUs with --check, which walks every job after every
// pass: O(jobs) per pass and about two passes per job, far more than the 15 s this test may take,
// so the run is still going when the signal arrives. The test waits for the first progress line
// (--progress always: printed once the simulation has processed its first event, so the signal
// lands inside the simulation, not in the CSV reader, however loaded the machine is), sends the
// signal and expects exit code 130 and a valid database holding a partial run.

// Reads what is available on `fd` into *text, waiting at most `timeout_ms`. Returns false at EOF.
bool ReadSome(int fd, std::string* text, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return true;
  char buffer[4096];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n <= 0) return false;
  text->append(buffer, static_cast<size_t>(n));
  return true;
}

// Interruption and crash safety (issue 7): SIGINT and SIGTERM stop the run cleanly with a valid
// partial database marked interrupted; SIGKILL leaves either no database (a new file is written
// under a temporary name and renamed only when complete) or, when appending, the database as it
// was (the open transaction is rolled back by SQLite's journal).
struct Interruption {
  int signal;
  bool append;  // the database already holds one run
  const char* name;
};

class Interrupt : public ::testing::TestWithParam<Interruption> {};

TEST_P(Interrupt, LeavesAValidDatabaseAndNothingMisleading) {
  const int signal = GetParam().signal;
  using Clock = std::chrono::steady_clock;
  TempDir dir;
  constexpr int kJobs = 200'000;
  const std::string trace = dir.File("big.csv");
  {
    std::string text = "job_id,submit_time,gpus,duration\n";
    text.reserve(kJobs * 24);
    for (int i = 0; i < kJobs; ++i) {
      text += "j" + std::to_string(i) + "," + std::to_string(i) + "," + std::to_string(1 + i % 4) +
              "," + std::to_string(500 + (i % 7) * 100) + "\n";
    }
    WriteFile(trace, text);
  }
  const std::string out = dir.File("out.sqlite");
  if (GetParam().append) {
    const std::vector<std::string> first = {"run",  "--trace", TestData("tiny_trace.csv"),
                                            "--cluster", TinyCluster(), "--out", out,
                                            "--no-progress"};
    const CliResult r = RunCli(first);
    ASSERT_EQ(r.exit_code, 0) << Describe(first, r);
  }
  const std::vector<std::string> args = {"run",        "--trace",  trace,    "--cluster",
                                         TinyCluster(), "--check",  "--out",  out,
                                         "--progress", "always",   "--progress-interval", "0.05"};
  int err_pipe[2];
  ASSERT_EQ(::pipe(err_pipe), 0);
  const std::string out_path = dir.File("stdout");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, err_pipe[0]);
  posix_spawn_file_actions_addclose(&actions, err_pipe[1]);
  std::vector<char*> argv = Argv(args);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(err_pipe[1]);
  ASSERT_EQ(spawned, 0) << "posix_spawn " << argv[0] << ": " << std::strerror(spawned);

  std::string err;
  int status = 0;
  auto exited = [&] { return ::waitpid(pid, &status, WNOHANG) == pid; };
  auto kill_and_reap = [&] {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    ::close(err_pipe[0]);
  };

  // 1. Wait (at most 60 s: the machine may be loaded) for the first progress line: the
  // simulation is under way.
  const auto start = Clock::now();
  bool open = true;
  const std::string ready = "clustersim run: progress ";
  while (open && err.find(ready) == std::string::npos &&
         Clock::now() - start < std::chrono::seconds(60)) {
    open = ReadSome(err_pipe[0], &err, 100);
  }
  if (err.find(ready) == std::string::npos) {
    const bool gone = exited();
    if (!gone) kill_and_reap();
    FAIL() << "clustersim never printed a progress line"
           << (gone ? " (it exited early)" : " within 60 s") << "; stderr: " << err;
  }
  // 2. Interrupt it, unless it has already ended (stderr at EOF means the child is exiting:
  // reap it rather than race its exit with the signal).
  if (!open ? ::waitpid(pid, &status, 0) == pid : exited()) {
    ::close(err_pipe[0]);
    FAIL() << "the run finished before the signal was sent (exit code "
           << (WIFEXITED(status) ? WEXITSTATUS(status) : -1)
           << "); the test needs a run that lasts longer: make the trace bigger. stdout: "
           << ReadFile(out_path) << "\nstderr: " << err;
  }
  ASSERT_EQ(::kill(pid, signal), 0) << std::strerror(errno);
  const auto interrupted_at = Clock::now();
  // 3. It must stop and write its partial results promptly (at most 12 s).
  while (open && Clock::now() - interrupted_at < std::chrono::seconds(12)) {
    open = ReadSome(err_pipe[0], &err, 100);
  }
  if (open) {
    kill_and_reap();
    FAIL() << "clustersim did not exit within 12 s of signal " << signal << "; stderr: " << err;
  }
  ::close(err_pipe[0]);
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  const double stop_seconds = std::chrono::duration<double>(Clock::now() - interrupted_at).count();
  const std::string stdout_text = ReadFile(out_path);
  const std::string what = "stdout: " + stdout_text + "\nstderr: " + err;

  if (signal == SIGKILL) {
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << what;
    if (!GetParam().append) {
      // Only the temporary file can be there, under a name that says it is one.
      EXPECT_FALSE(Exists(out)) << "a database appeared although the run was killed\n" << what;
      return;
    }
    Database db(out);
    EXPECT_EQ(db.Value("PRAGMA integrity_check"), "ok");
    const auto runs = db.Query("SELECT run_id, status FROM runs");
    ASSERT_EQ(runs.size(), 1u) << "the killed run left rows behind";
    EXPECT_EQ(runs[0][1], "complete");
    EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs WHERE run_id <> 1"), 0);
    return;
  }
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << "\n" << what;
  ASSERT_NE(WEXITSTATUS(status), 0)
      << "the run completed despite SIGINT: it finished before the signal was handled\n"
      << what;
  EXPECT_EQ(WEXITSTATUS(status), kExitInterrupted) << what;
  EXPECT_NE(stdout_text.find("interrupted"), std::string::npos) << what;
  EXPECT_LT(stop_seconds, 12.0);

  ASSERT_TRUE(Exists(out)) << "no database after the signal\n" << what;
  EXPECT_TRUE(EntriesContaining(dir.path(), ".tmp-").empty());
  Database db(out);
  EXPECT_EQ(db.Value("PRAGMA integrity_check"), "ok");
  const auto runs = db.Query("SELECT run_id, status, events FROM runs ORDER BY run_id DESC");
  ASSERT_EQ(runs.size(), GetParam().append ? 2u : 1u);
  EXPECT_EQ(runs[0][1], "interrupted");
  EXPECT_GT(std::stoll(runs[0][2].value_or("0")), 0)
      << "no event was processed: the signal arrived before the simulation started";
  const std::string run = " run_id = " + runs[0][0].value_or("0");
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs WHERE" + run), kJobs);
  const double unfinished =
      db.Number("SELECT COUNT(*) FROM jobs WHERE status = 'unfinished' AND" + run);
  EXPECT_GT(unfinished, 0);
  EXPECT_EQ(db.Number("SELECT value FROM summary WHERE metric = 'jobs_unfinished' AND "
                      "scope = 'all' AND" + run),
            unfinished);
  // Nothing unfinished has an end time; everything that ended has one.
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs WHERE status = 'unfinished' AND end_time IS NOT "
                      "NULL"),
            0);
  EXPECT_EQ(db.Number("SELECT COUNT(*) FROM jobs WHERE status = 'completed' AND end_time IS "
                      "NULL"),
            0);
}

INSTANTIATE_TEST_SUITE_P(Signals, Interrupt,
                         ::testing::Values(Interruption{SIGINT, false, "SigInt"},
                                           Interruption{SIGTERM, true, "SigTermAppending"},
                                           Interruption{SIGKILL, false, "SigKill"},
                                           Interruption{SIGKILL, true, "SigKillAppending"}),
                         [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------
// Help and listing commands.

TEST(Help, TopLevelHelpListsTheCommands) {
  const std::vector<std::string> args = {"--help"};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  for (const char* word : {"usage", "run", "cluster show", "list"}) {
    EXPECT_NE(r.out.find(word), std::string::npos) << word << "\n" << Describe(args, r);
  }
}

TEST(Help, EveryCommandTheTopLevelHelpListsAnswersItsOwnHelp) {
  // The command names are read from the listing itself (two-space indent, then the name), so a
  // command listed but not dispatched (as site-from once was) fails here.
  const CliResult top = RunCli({"--help"});
  ASSERT_EQ(top.exit_code, 0);
  const size_t from = top.out.find("commands:\n");
  ASSERT_NE(from, std::string::npos) << top.out;
  std::istringstream lines(top.out.substr(from + 10));
  std::string line;
  int commands = 0;
  while (std::getline(lines, line)) {
    if (line.size() < 3 || line.compare(0, 2, "  ") != 0 || line[2] == ' ') continue;
    std::istringstream words(line);
    std::vector<std::string> args;
    std::string word;
    words >> word;
    args.push_back(word);
    if (word == "cluster") args.push_back("show");
    args.push_back("--help");
    const CliResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
    EXPECT_EQ(r.err.find("unknown command"), std::string::npos) << Describe(args, r);
    ++commands;
  }
  EXPECT_EQ(commands, 16);  // run ... reliability, as listed
}

TEST(Help, RunHelpListsItsOptions) {
  const std::vector<std::string> args = {"run", "--help"};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  for (const char* option : {"--trace", "--cluster", "--policy", "--placement", "--runtime-model",
                             "--out", "--check", "--seed"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option << "\n" << Describe(args, r);
  }
}

TEST(Help, DefaultsAreShownAsWritten) {
  // Boost prints a double default through lexical_cast: 0.9 as 0.90000000000000002.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"run", "--help"},
                                               {"trace", "generate", "--help"},
                                               {"compare", "--help"},
                                               {"queueing", "--help"},
                                               {"advise", "--help"}}) {
    const CliResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
    EXPECT_FALSE(std::regex_search(r.out, std::regex("[0-9]\\.[0-9]*0000000")))
        << Describe(args, r);
  }
  const CliResult generate = RunCli({"trace", "generate", "--help"});
  EXPECT_NE(generate.out.find("(=0.9)"), std::string::npos) << generate.out;
  const CliResult run = RunCli({"run", "--help"});
  EXPECT_NE(run.out.find("--interval arg (=300)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("--load-factor arg (=1)"), std::string::npos) << run.out;
}

// Preemption costs something by default (docs/engine.md#preemption-cost): las on the bundled
// trace with default options preempts, and the moves cost GPU-hours; the run states the cost in
// its summary and its runs row. At --preemption-cost 0 the run warns that moves are free.
TEST(PreemptionCost, LasOnTheBundledTraceByDefaultPaysForItsPreemptions) {
  TempDir dir;
  const std::string db = dir.File("las.sqlite");
  const CliResult r = RunCli({"run", "--policy", "las", "--out", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("preemption cost      30 s per preemption, resize or migration"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("cost nothing"), std::string::npos) << r.out;
  Database database(db);
  auto summary = [&](const std::string& metric) {
    return std::stod(*database.Query("SELECT value FROM summary WHERE metric = '" + metric +
                                     "' AND scope = 'all'")[0][0]);
  };
  EXPECT_GT(summary("preemptions"), 0);
  EXPECT_GT(summary("preemption_gpu_hours"), 0);
  EXPECT_EQ(std::stod(*database.Query("SELECT preemption_cost_seconds FROM runs")[0][0]), 30);
}

TEST(PreemptionCost, ZeroIsPossibleAndWarnedAbout) {
  TempDir dir;
  const CliResult r = RunCli({"run", "--policy", "las", "--first", "300", "--preemption-cost",
                              "0", "--out", dir.File("free.sqlite")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--preemption-cost 0: preemptions, resizes and migrations cost nothing"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("preemption cost      0 s per"), std::string::npos) << r.out;
}

TEST(Cli, VersionIsPrinted) {
  for (const char* flag : {"--version", "version"}) {
    const CliResult r = RunCli({flag});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_TRUE(std::regex_match(r.out, std::regex("clustersim [0-9]+\\.[0-9]+\\.[0-9]+\n")))
        << r.out;
  }
}

// The fingerprint line of a run's summary.
std::string Fingerprint(const CliResult& r) {
  std::smatch m;
  return std::regex_search(r.out, m, std::regex("fingerprint +([0-9a-f]{16})")) ? m[1].str() : "";
}

TEST(Durations, EveryTimeOptionTakesUnitsAndPlainSeconds) {
  // The same settings written in seconds and with units give the same run; --mttr counts plain
  // numbers in hours (0.5 = 30min). A stop time of 25 s ends the tiny trace's run early.
  TempDir dir;
  auto run = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args = {"run",         "--trace",       GoodTrace(), "--cluster",
                                     TinyCluster(), "--no-progress", "--out",     dir.File(name)};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
    return r;
  };
  const CliResult seconds =
      run("a.sqlite",
          {"--stop-time", "25", "--interval", "60", "--preemption-cost", "90", "--node-mtbf", "1",
           "--mttr", "0.5", "--checkpoint-interval", "7200", "--restore-cost", "120"});
  const CliResult units =
      run("b.sqlite",
          {"--stop-time", "25s", "--interval", "1min", "--preemption-cost", "1.5min", "--node-mtbf",
           "60min", "--mttr", "30min", "--checkpoint-interval", "2h", "--restore-cost", "2min"});
  ASSERT_FALSE(Fingerprint(seconds).empty()) << seconds.out;
  EXPECT_EQ(Fingerprint(seconds), Fingerprint(units));
  const CliResult whole = run("c.sqlite", {});
  EXPECT_NE(Fingerprint(whole), Fingerprint(seconds)) << "the stop time did not act";
}

TEST(TraceStats, ClusterGivesTheOfferedLoadRelativeToIt) {
  // tiny_trace.csv: GPU-seconds 4x100 + 8x50 + 2x30 + 16x10 + 1x10 + 1x100 = 1,130 over the span
  // 0..200 s; tiny_cluster.json has 2 x 4 = 8 GPUs: 1130 / (8 x 200) = 0.706.
  const std::vector<std::string> args = {"trace", "stats", GoodTrace(), "--cluster", TinyCluster()};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_NE(r.out.find("0.706 of the cluster's 8 GPUs"), std::string::npos) << r.out;
  const CliResult plain = RunCli({"trace", "stats", GoodTrace()});
  EXPECT_EQ(plain.out.find("of the cluster's"), std::string::npos) << plain.out;
}

TEST(TraceStats, ReadsTheBundledGzipSwfLogDirectly) {
  const std::string nasa =
      std::string(CLUSTERSIM_SOURCE_DIR) + "/traces/swf/NASA-iPSC-1993-3.1-cln.swf.gz";
  const CliResult r = RunCli({"trace", "stats", nasa});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(swf format"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("jobs            18239"), std::string::npos) << r.out;  // traces/README.md
}

TEST(Help, ClusterShowHelpListsItsOptionsAndPresets) {
  const std::vector<std::string> args = {"cluster", "show", "--help"};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  for (const char* word : {"--dot", "--hardware", "dgx-a100", "dgx1-v100"}) {
    EXPECT_NE(r.out.find(word), std::string::npos) << word << "\n" << Describe(args, r);
  }
}

TEST(List, PoliciesIncludeFcfs) {
  const std::vector<std::string> args = {"list", "policies"};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_TRUE(std::regex_search(r.out, std::regex("(^|\n)fcfs +\\S"))) << Describe(args, r);
}

TEST(List, PlacementsIncludePoolFirstFitAndBestFit) {
  const std::vector<std::string> args = {"list", "placements"};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  for (const char* name : {"pool", "first-fit", "best-fit"}) {
    EXPECT_TRUE(std::regex_search(r.out, std::regex(std::string("(^|\n)") + name + " +\\S")))
        << name << "\n"
        << Describe(args, r);
  }
}

TEST(List, GpusIncludeH100AndV100) {
  const std::vector<std::string> args = {"list", "gpus"};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_TRUE(std::regex_search(r.out, std::regex("(^|\n)H100-80GB +\\S"))) << Describe(args, r);
  EXPECT_TRUE(std::regex_search(r.out, std::regex("(^|\n)V100-16GB +\\S"))) << Describe(args, r);
}

TEST(List, UnknownListFailsWithExitCode2) {
  const std::vector<std::string> args = {"list", "--what", "teapots"};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, kExitBadInput) << Describe(args, r);
  EXPECT_NE(r.err.find("policies"), std::string::npos) << Describe(args, r);
}

TEST(ClusterShow, Dgx1V100HasEightGpusPerNodeInAHybridCubeMesh) {
  const std::vector<std::string> args = {"cluster", "show", "dgx1-v100"};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  // The node-group row: group, nodes, gpu_type, gpus (per node), topology, ...
  EXPECT_TRUE(std::regex_search(r.out, std::regex("V100-32GB +8 +hybrid-cube-mesh")))
      << Describe(args, r);
}

TEST(ClusterShow, DotWritesAGraphvizGraph) {
  TempDir dir;
  const std::string dot = dir.File("a100.dot");
  const std::vector<std::string> args = {"cluster", "show", "dgx-a100", "--dot", dot};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  ASSERT_TRUE(Exists(dot)) << Describe(args, r);
  const std::string text = ReadFile(dot);
  EXPECT_EQ(text.rfind("graph", 0), 0u) << "file begins with: " << text.substr(0, 80);
  EXPECT_NE(text.find("--"), std::string::npos) << "no edges in the graph";
  // dgx-a100: 16 nodes, 8 per rack: two rack boxes, each holding its leaf and eight node boxes.
  EXPECT_NE(text.find("subgraph cluster_rack1 {"), std::string::npos);
  EXPECT_EQ(text.find("subgraph cluster_rack2 {"), std::string::npos);
  EXPECT_NE(text.find("subgraph cluster_node15 {"), std::string::npos);
  EXPECT_NE(text.find("label=\"node 0: 8 x A100-80GB (nvswitch)\""), std::string::npos);
  const size_t rack1 = text.find("subgraph cluster_rack1 {");
  EXPECT_LT(text.find("subgraph cluster_node7 {"), rack1);
  EXPECT_GT(text.find("subgraph cluster_node8 {"), rack1);
  EXPECT_GT(text.find("\"rack1/leaf\""), rack1);
}

}  // namespace
}  // namespace clustersim::testing
