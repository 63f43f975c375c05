// The malformed-input corpus (tests/malformed/, listed with the expected answers in
// tests/malformed/expected.tsv; bad options are rows without a file of their own) run through
// the real clustersim executable: every file must give
// its expected exit code and message (file:line:column and what was expected, where the format
// has lines), never a crash (a signal) or an internal error (exit 3), and a failed run must leave
// no output file behind. A few cases are generated here instead of committed: 10 MB lines, and a
// command-line value that is not UTF-8.
#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <sstream>

#include "tests/cli/cli_test_util.h"

namespace clustersim::testing {
namespace {

const std::string kMalformed = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/malformed";

struct Case {
  int row = 0;  // line in expected.tsv
  std::string file;
  std::string command;
  int exit_code = 0;
  std::string expected;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << "expected.tsv:" << c.row << " " << c.file << " (" << c.command << ")";
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(text);
  while (std::getline(in, field, separator)) out.push_back(field);
  return out;
}

std::vector<Case> ReadManifest() {
  std::vector<Case> cases;
  std::ifstream in(kMalformed + "/expected.tsv");
  std::string line;
  int row = 0;
  while (std::getline(in, line)) {
    ++row;
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = Split(line, '\t');
    if (f.size() != 4)
      throw std::runtime_error("expected.tsv:" + std::to_string(row) + ": 4 fields");
    cases.push_back({row, f[0], f[1], std::stoi(f[2]), f[3]});
  }
  return cases;
}

// Runs `command` ({file}, {data}, {out} substituted) and checks the answer.
void Check(const std::string& file, const std::string& command, int exit_code,
           const std::string& expected) {
  TempDir dir;
  const std::string out = dir.File("out");
  std::vector<std::string> args;
  for (const std::string& word : Split(command, ' ')) {
    if (word.empty()) continue;
    args.push_back(Replace(Replace(Replace(word, "{file}", file), "{data}", CLUSTERSIM_TEST_DATA),
                           "{out}", out));
  }
  // No case writes more than a few kilobytes; an absurd size that were accepted (--jobs 1e11,
  // --inflate 1e15) stops at 64 MB instead of filling the disk. The bad-options rows ("-", no
  // file) run this build's clustersim only: another build may accept what this one refuses.
  SpawnLimits limits;
  limits.own_binary = file.empty();
  limits.max_file_bytes = 64ul << 20;
  const CliResult r = RunCli(args, limits);
  const std::string what = Describe(args, r);
  ASSERT_GE(r.exit_code, 0) << what;
  EXPECT_LT(r.exit_code, 128) << "killed by a signal: " << what;
  EXPECT_NE(r.exit_code, 3) << "internal error: " << what;
  EXPECT_EQ(r.exit_code, exit_code) << what;
  // A command that succeeds may report on stdout or stderr (cluster-from --out uses stderr).
  const std::string text = exit_code == 0 ? r.out + r.err : r.err;
  EXPECT_NE(text.find(Replace(expected, "{file}", file)), std::string::npos)
      << "expected \"" << Replace(expected, "{file}", file) << "\" in " << what;
  if (exit_code != 0) {
    EXPECT_EQ(r.err.rfind("clustersim: error: ", 0), 0u) << what;
    EXPECT_FALSE(Exists(out)) << "a failed command left its output behind: " << what;
  }
}

class MalformedInput : public ::testing::TestWithParam<Case> {};

TEST_P(MalformedInput, GivesItsExpectedAnswer) {
  const Case& c = GetParam();
  SCOPED_TRACE("tests/malformed/expected.tsv:" + std::to_string(c.row));
  // "-": a case of the command line alone (a bad option), with no file of its own.
  Check(c.file == "-" ? "" : kMalformed + "/" + c.file, c.command, c.exit_code, c.expected);
}

INSTANTIATE_TEST_SUITE_P(Manifest, MalformedInput, ::testing::ValuesIn(ReadManifest()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name =
                               "row" + std::to_string(info.param.row) + "_" +
                               (info.param.file == "-" ? "options" : info.param.file);
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

// Every committed file is in the manifest, so none sits there untested.
TEST(MalformedCorpus, EveryFileIsListedInTheManifest) {
  std::set<std::string> listed;
  for (const Case& c : ReadManifest()) listed.insert(c.file);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kMalformed)) {
    if (!entry.is_regular_file()) continue;
    const std::string relative = std::filesystem::relative(entry.path(), kMalformed).string();
    if (relative == "expected.tsv" || relative == "README.md") continue;
    // A PAI task table is read through its job table.
    if (entry.path().filename() == "pai_task_table.csv") continue;
    EXPECT_TRUE(listed.count(relative)) << relative << " is not in tests/malformed/expected.tsv";
  }
}

constexpr size_t kTenMegabytes = 10 * 1024 * 1024;

TEST(MalformedLongLine, TenMegabytesWithoutCommasIsOneFieldOfFour) {
  TempDir dir;
  const std::string path = dir.File("long.csv");
  WriteFile(path, "job_id,submit_time,gpus,duration\n" + std::string(kTenMegabytes, 'x') + "\n");
  Check(path, "trace stats {file}", 2,
        "{file}:2:" + std::to_string(kTenMegabytes + 1) +
            ": missing field(s): expected 4 fields (submit_time is missing), got 1");
}

TEST(MalformedLongLine, ATenMegabyteJobIdIsAValidJob) {
  TempDir dir;
  const std::string path = dir.File("long_id.csv");
  WriteFile(path, "job_id,submit_time,gpus,duration\n" + std::string(kTenMegabytes, 'a') +
                      ",0,1,10\nb,5,2,20\n");
  Check(path, "trace stats {file}", 0, "jobs            2");
}

TEST(MalformedLongLine, TenMegabytesWithoutANewlineIsNoKnownFormat) {
  TempDir dir;
  const std::string path = dir.File("one_line");
  WriteFile(path, std::string(kTenMegabytes, 'x'));
  Check(path, "trace stats {file}", 2, "{file}:1:1: cannot detect the trace format");
}

TEST(MalformedLongLine, ANativeJsonTraceOnOneTenMegabyteLineIsRead) {
  TempDir dir;
  const std::string path = dir.File("one_line.json");
  std::string text = "[";
  int jobs = 0;
  while (text.size() < kTenMegabytes) {
    text += (jobs ? "," : "") + std::string("{\"job_id\":\"j") + std::to_string(jobs) +
            "\",\"submit_time\":" + std::to_string(jobs) + ",\"gpus\":1,\"duration\":60}";
    ++jobs;
  }
  WriteFile(path, text + "]");
  Check(path, "trace stats {file}", 0, "jobs            " + std::to_string(jobs));
}

TEST(MalformedLongLine, AnErrorAtTheEndOfATenMegabyteLineNamesItsColumn) {
  TempDir dir;
  const std::string path = dir.File("cluster_job_log");
  std::string text = "[";
  while (text.size() < kTenMegabytes) {
    text += std::string(text.size() > 1 ? "," : "") +
            "{\"status\":\"Pass\",\"vc\":\"v\",\"jobid\":\"j\",\"user\":\"u\","
            "\"submitted_time\":\"2017-10-07 01:11:39\",\"attempts\":[]}";
  }
  text += ",{\"jobid\": 7x}]";  // the 'x' is the error
  WriteFile(path, text);
  const size_t column = text.rfind('x') + 1;
  Check(path, "trace stats {file} --format philly-json", 2,
        "{file}:1:" + std::to_string(column) + ": invalid JSON: syntax error");
}

// trace convert quotes what the native reader would split or trim, so the jobs read back the same.
TEST(MalformedText, ConvertQuotesBlanksCommasQuotesAndCarriageReturns) {
  TempDir dir;
  const std::string out = dir.File("converted.csv");
  const std::vector<std::string> args = {
      "trace", "convert", kMalformed + "/native_json/text_needing_quotes.json", "--to", "native",
      "--out", out};
  const CliResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_EQ(ReadFile(out),
            "job_id,submit_time,gpus,duration,walltime,gpu_type,user,vc,priority,model,batch_size,"
            "status\n\" a,\"\"b\"\" \",0,1,1,,,\"u\r\",,0,,,\n");
}

// A user name in Latin-1 bytes: the trace keeps it as bytes (see traces/README.md), and the same
// bytes given to --user select its job and are recorded in the runs table without stopping the
// run (the filter is stored as JSON, which must be UTF-8).
TEST(MalformedEncoding, ALatin1UserFilterSelectsItsJobs) {
  TempDir dir;
  const std::string out = dir.File("out.sqlite");
  const std::vector<std::string> args = {"run",
                                         "--trace",
                                         kMalformed + "/native/latin1_user.csv",
                                         "--cluster",
                                         TestData("tiny_cluster.json"),
                                         "--out",
                                         out,
                                         "--user",
                                         "Jos\xe9"};
  const CliResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(args, r);
  EXPECT_NE(r.out.find("completed 1 "), std::string::npos) << Describe(args, r);
}

}  // namespace
}  // namespace clustersim::testing
