// The native trace format (CSV and JSON): field mapping, ordering and the errors it reports.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <vector>

#include "sim/util/error.h"
#include "workloads/reader.h"

namespace clustersim {
namespace {

class NativeReader : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/clustersim-native-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // Returns the error message of loading `text`, or "" if it loads.
  std::string ErrorOf(const std::string& text, const std::string& name = "t.csv") {
    try {
      LoadTrace(Write(name, text));
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  std::string dir_;
};

TEST_F(NativeReader, ReadsRequiredAndOptionalColumnsInAnyOrder) {
  const std::string path = Write("t.csv",
                                 "duration,gpus,job_id,submit_time,user,gpu_type,walltime,status\n"
                                 "100,2,a,10,alice,A100-80GB|H100-80GB,200,Pass\n"
                                 "5.5,1,\"b,quoted\",3,,,,\n");
  const Trace trace = LoadTrace(path);
  EXPECT_EQ(trace.format, "native");
  ASSERT_EQ(trace.jobs.size(), 2u);
  // Sorted by submit time: b (3) before a (10).
  const Job& b = trace.jobs[0];
  EXPECT_EQ(b.id, "b,quoted");
  EXPECT_EQ(b.submit_time, 3);
  EXPECT_EQ(b.duration, 5.5);
  EXPECT_EQ(b.walltime, -1);
  EXPECT_EQ(b.line, 3);
  const Job& a = trace.jobs[1];
  EXPECT_EQ(a.id, "a");
  EXPECT_EQ(a.gpus, 2);
  EXPECT_EQ(a.user, "alice");
  EXPECT_EQ(a.gpu_type, "A100-80GB|H100-80GB");
  EXPECT_EQ(a.walltime, 200);
  EXPECT_EQ(a.trace_status, "Pass");
  EXPECT_EQ(trace.sha256.size(), 64u);
}

TEST_F(NativeReader, ReadsHostDemandsInCoresAndGib) {
  const Trace csv = LoadTrace(Write("h.csv",
                                    "job_id,submit_time,gpus,duration,cpus,host_memory_gib\n"
                                    "a,0,2,10,12.5,64\n"
                                    "b,1,1,10,,\n"));
  EXPECT_EQ(csv.jobs[0].cpu_milli, 12500);
  EXPECT_EQ(csv.jobs[0].memory_mib, 65536);
  EXPECT_EQ(csv.jobs[1].cpu_milli, 0);  // empty: not stated
  EXPECT_EQ(csv.jobs[1].memory_mib, 0);
  const Trace json = LoadTrace(Write(
      "h.json",
      R"([{"job_id":"a","submit_time":0,"gpus":2,"duration":10,"cpus":0.5,"host_memory_gib":1.5}])"));
  EXPECT_EQ(json.jobs[0].cpu_milli, 500);
  EXPECT_EQ(json.jobs[0].memory_mib, 1536);
  const std::string e = ErrorOf(
      "job_id,submit_time,gpus,duration,cpus\n"
      "a,0,1,10,-2\n",
      "bad.csv");
  EXPECT_NE(e.find("bad.csv:2:10: cpus"), std::string::npos) << e;
}

TEST_F(NativeReader, ReadsModelParallelismAndChecksItAgainstTheGpus) {
  const Trace csv = LoadTrace(Write("p.csv",
                                    "job_id,submit_time,gpus,duration,tp,pp,dp\n"
                                    "a,0,64,10,8,2,4\n"
                                    "b,1,16,10,8,,\n"
                                    "c,2,4,10,,,\n"));
  EXPECT_EQ(csv.jobs[0].tensor_parallel, 8);
  EXPECT_EQ(csv.jobs[0].pipeline_parallel, 2);
  EXPECT_EQ(csv.jobs[1].tensor_parallel, 8);
  EXPECT_EQ(csv.jobs[1].pipeline_parallel, 0);  // empty: not stated
  EXPECT_EQ(csv.jobs[2].tensor_parallel, 0);
  const Trace json = LoadTrace(
      Write("p.json", R"([{"job_id":"a","submit_time":0,"gpus":32,"duration":10,"tp":4,"pp":8}])"));
  EXPECT_EQ(json.jobs[0].tensor_parallel, 4);
  EXPECT_EQ(json.jobs[0].pipeline_parallel, 8);
  const std::string header = "job_id,submit_time,gpus,duration,tp,pp,dp\n";
  // 8 x 2 x 2 = 32, not 64: the dp field, column 15 of "a,0,64,10,8,2,2".
  std::string e = ErrorOf(header + "a,0,64,10,8,2,2\n", "d.csv");
  EXPECT_NE(e.find("d.csv:2:15: dp: tp x pp x dp = 8 x 2 x 2 = 32, but gpus is 64"),
            std::string::npos)
      << e;
  // tp 3 does not divide 16 GPUs: the tp field, column 11 of "a,0,16,10,3,,".
  e = ErrorOf(header + "a,0,16,10,3,,\n", "t.csv");
  EXPECT_NE(e.find("t.csv:2:11: tp: tp x pp = 3 does not divide gpus = 16"), std::string::npos)
      << e;
  // tp 4 x pp 3 = 12 does not divide 16: the pp field, column 13.
  e = ErrorOf(header + "a,0,16,10,4,3,\n", "q.csv");
  EXPECT_NE(e.find("q.csv:2:13: pp: tp x pp = 12 does not divide gpus = 16"), std::string::npos)
      << e;
  e = ErrorOf(header + "a,0,16,10,70000,,\n", "m.csv");
  EXPECT_NE(e.find("m.csv:2:11: tp: expected at most 65535"), std::string::npos) << e;
}

TEST_F(NativeReader, ReadsAntiAffinityGroupsAndTheirSpreadDomain) {
  const Trace csv = LoadTrace(Write("g.csv",
                                    "job_id,submit_time,gpus,duration,group,spread\n"
                                    "a,0,1,10,web,node\n"
                                    "b,1,1,10,db,rack\n"
                                    "c,2,1,10,,\n"));
  ASSERT_NE(csv.ConstraintsOf(csv.jobs[0]), nullptr);
  EXPECT_EQ(csv.ConstraintsOf(csv.jobs[0])->group.str(), "web");
  EXPECT_EQ(csv.ConstraintsOf(csv.jobs[0])->spread, SpreadDomain::kNode);
  EXPECT_EQ(csv.ConstraintsOf(csv.jobs[1])->spread, SpreadDomain::kRack);
  EXPECT_EQ(csv.ConstraintsOf(csv.jobs[2]), nullptr);  // both empty: no rule
  const Trace json = LoadTrace(Write(
      "g.json",
      R"([{"job_id":"a","submit_time":0,"gpus":1,"duration":10,"group":"w","spread":"rack"}])"));
  EXPECT_EQ(json.ConstraintsOf(json.jobs[0])->group.str(), "w");
  EXPECT_EQ(json.ConstraintsOf(json.jobs[0])->spread, SpreadDomain::kRack);
  const std::string header = "job_id,submit_time,gpus,duration,group,spread\n";
  // "a,0,1,10,web,zone": spread at column 14.
  std::string e = ErrorOf(header + "a,0,1,10,web,zone\n", "s.csv");
  EXPECT_NE(e.find("s.csv:2:14: spread: expected node or rack, got \"zone\""), std::string::npos)
      << e;
  // A spread without a group, and a group without a spread.
  e = ErrorOf(header + "a,0,1,10,,node\n", "n.csv");
  EXPECT_NE(e.find("n.csv:2:11: spread: a spread needs a group"), std::string::npos) << e;
  e = ErrorOf(header + "a,0,1,10,web,\n", "w.csv");
  EXPECT_NE(e.find("w.csv:2:14: spread: group web needs a spread domain: expected node or rack"),
            std::string::npos)
      << e;
  e = ErrorOf("job_id,submit_time,gpus,duration,group\na,0,1,10,web\n", "o.csv");
  EXPECT_NE(e.find("o.csv:2:10: spread: group web needs a spread domain"), std::string::npos)
      << e;
}

TEST_F(NativeReader, EqualSubmitTimesKeepFileOrder) {
  const Trace trace =
      LoadTrace(Write("t.csv", "job_id,submit_time,gpus,duration\nz,5,1,1\ny,5,1,1\nx,1,1,1\n"));
  EXPECT_EQ(trace.jobs[0].id, "x");
  EXPECT_EQ(trace.jobs[1].id, "z");
  EXPECT_EQ(trace.jobs[2].id, "y");
}

TEST_F(NativeReader, ErrorsNameLineColumnAndWhatWasExpected) {
  const std::string header = "job_id,submit_time,gpus,duration\n";
  // Line 3, "b,x,1,1": the submit_time field starts at column 3.
  EXPECT_NE(ErrorOf(header + "a,0,1,1\nb,x,1,1\n").find("t.csv:3:3: submit_time: expected a number"),
            std::string::npos);
  // Negative duration: "a,0,1,-4", duration starts at column 7.
  EXPECT_NE(ErrorOf(header + "a,0,1,-4\n").find("t.csv:2:7: duration: expected a value >= 0"),
            std::string::npos);
  // Negative GPU count at column 5.
  EXPECT_NE(ErrorOf(header + "a,0,-2,1\n").find("t.csv:2:5: gpus: expected an integer >= 0"),
            std::string::npos);
  // Negative submit time at column 3.
  EXPECT_NE(ErrorOf(header + "a,-1,1,1\n").find("t.csv:2:3:"), std::string::npos);
  // Missing field: "a,0,1" has 3 of 4 fields; reported at the end of the line (column 6).
  const std::string missing = ErrorOf(header + "a,0,1\n");
  EXPECT_NE(missing.find("t.csv:2:6: missing field"), std::string::npos) << missing;
  EXPECT_NE(missing.find("duration"), std::string::npos) << missing;
  // Extra field: "a,0,1,1,9": the fifth field starts at column 9.
  EXPECT_NE(ErrorOf(header + "a,0,1,1,9\n").find("t.csv:2:9: extra field"), std::string::npos);
  // Fractional GPU count.
  EXPECT_NE(ErrorOf(header + "a,0,1.5,1\n").find("gpus: expected an integer"), std::string::npos);
  // Duplicate id names the first line.
  EXPECT_NE(ErrorOf(header + "a,0,1,1\na,1,1,1\n").find("first on line 2"), std::string::npos);
  // Unknown column, missing required column.
  EXPECT_NE(ErrorOf("job_id,submit_time,gpus,duration,color\n").find("t.csv:1:34: unknown column"),
            std::string::npos);
  // Unterminated quote at column 1 of line 2.
  EXPECT_NE(ErrorOf(header + "\"a,0,1,1\n").find("t.csv:2:1:"), std::string::npos);
  // Infinite values are not numbers of seconds.
  EXPECT_NE(ErrorOf(header + "a,inf,1,1\n").find("t.csv:2:3:"), std::string::npos);
}

TEST_F(NativeReader, AMissingRequiredColumnIsNamedAndAForeignHeaderIsNotNative) {
  // Every column a native name: detected as native, and the missing one is named.
  const std::string missing = ErrorOf("job_id,submit_time,gpus\na,0,1\n");
  EXPECT_NE(missing.find("lacks the required column \"duration\""), std::string::npos) << missing;
  // A Helios-style header shares job_id and submit_time but is not native.
  const std::string foreign = ErrorOf("job_id,user,vc,gpu_num,state,submit_time,duration\n");
  EXPECT_NE(foreign.find("cannot detect the trace format"), std::string::npos) << foreign;
}

TEST_F(NativeReader, ReadsTheJsonFormWithTheSameKeys) {
  const Trace trace = LoadTrace(Write("t.json", R"({"jobs":[
      {"job_id":"x","submit_time":7,"gpus":4,"duration":60,"vc":"research","priority":2},
      {"job_id":"y","submit_time":1,"gpus":1,"duration":0,"walltime":null}]})"));
  EXPECT_EQ(trace.format, "native-json");
  ASSERT_EQ(trace.jobs.size(), 2u);
  EXPECT_EQ(trace.jobs[0].id, "y");
  EXPECT_EQ(trace.jobs[1].vc, "research");
  EXPECT_EQ(trace.jobs[1].priority, 2);
  EXPECT_NE(ErrorOf(R"([{"job_id":"x","submit_time":-1,"gpus":1,"duration":1}])", "n.json")
                .find("jobs[0].submit_time: expected a value >= 0"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"([{"job_id":"x","submit_time":1,"gpus":1}])", "m.json")
                .find("missing required key \"duration\""),
            std::string::npos);
}

TEST_F(NativeReader, ReadsPerJobPrecisionAndSequenceLength) {
  const Trace trace = LoadTrace(
      Write("p.csv",
            "job_id,submit_time,gpus,duration,model,precision,sequence_length\n"
            "a,0,1,10,BERT-large,fp32,512\n"
            "b,1,1,10,BERT-large,,\n"));
  ASSERT_EQ(trace.jobs.size(), 2u);
  EXPECT_EQ(trace.jobs[0].precision, "fp32");
  EXPECT_EQ(trace.jobs[0].sequence_length, 512);
  EXPECT_TRUE(trace.jobs[1].precision.empty());  // the model's recipe
  EXPECT_EQ(trace.jobs[1].sequence_length, 0);
  // "a,0,1,10,BERT-large,fp8,": the precision field starts at column 21.
  const std::string bad =
      ErrorOf("job_id,submit_time,gpus,duration,model,precision\na,0,1,10,BERT-large,fp8\n");
  EXPECT_NE(bad.find("t.csv:2:21: precision: expected fp32, tf32, mixed-fp16 or mixed-bf16"),
            std::string::npos)
      << bad;
  const Trace json = LoadTrace(Write(
      "p.json",
      R"([{"job_id":"x","submit_time":0,"gpus":1,"duration":1,"precision":"tf32","sequence_length":384}])"));
  EXPECT_EQ(json.jobs[0].precision, "tf32");
  EXPECT_EQ(json.jobs[0].sequence_length, 384);
  const std::string bad_json = ErrorOf(
      R"([{"job_id":"x","submit_time":0,"gpus":1,"duration":1,"precision":"int8"}])", "q.json");
  EXPECT_NE(bad_json.find("jobs[0].precision: expected fp32, tf32"), std::string::npos) << bad_json;
}

// A native CSV of 150,000 jobs (2.8 MB: more than the reader's 1 MiB buffer, and what a reader
// parsing a large file in parts, e.g. two halves split at a line start, would split). Row i is job
// "j<i>" submitted at i with i % 8 + 1 GPUs and a duration of i % 100 + 1 s. Around the middle of
// the file, rows end in CRLF, blank lines (empty and "\r") come between them and every fifth id is
// quoted with a comma in it ("j<i>,x"). The file ends without a final newline. `change` may replace
// a row's text. Records each row's line number (counted while writing, 1 = the header) in lines_.
class NativeReaderLargeFile : public NativeReader {
 protected:
  static constexpr int kRows = 150'000;
  static bool InMiddle(int i) { return i >= kRows / 2 - 3000 && i < kRows / 2 + 3000; }
  static std::string IdOf(int i) {
    return "j" + std::to_string(i) + (InMiddle(i) && i % 5 == 0 ? ",x" : "");
  }

  std::string WriteRows(const std::map<int, std::string>& change = {}) {
    std::string text = "job_id,submit_time,gpus,duration\n";
    int64_t line = 1;
    lines_.assign(kRows, 0);
    for (int i = 0; i < kRows; ++i) {
      const std::string id = InMiddle(i) && i % 5 == 0 ? "\"" + IdOf(i) + "\"" : IdOf(i);
      std::string row = id + "," + std::to_string(i) + "," + std::to_string(i % 8 + 1) + "," +
                        std::to_string(i % 100 + 1);
      if (auto it = change.find(i); it != change.end()) row = it->second;
      lines_[i] = ++line;
      text += row;
      if (i + 1 == kRows) break;  // no final newline
      text += InMiddle(i) ? "\r\n" : "\n";
      if (InMiddle(i) && i % 3 == 0) {
        text += "\n";
        ++line;
      } else if (InMiddle(i) && i % 3 == 1) {
        text += "\r\n";
        ++line;
      }
    }
    EXPECT_GT(text.size(), size_t{5} << 19);  // well over 2 MiB of rows
    return Write("big.csv", text);
  }
  std::string ErrorOfRows(const std::map<int, std::string>& change, std::string* path) {
    *path = WriteRows(change);
    try {
      LoadTrace(*path);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  std::vector<int64_t> lines_;
};

TEST_F(NativeReaderLargeFile, EveryJobKeepsItsFieldsAndLineThroughTheMiddle) {
  const std::string path = WriteRows();
  const Trace trace = LoadTrace(path);
  ASSERT_EQ(trace.jobs.size(), size_t{kRows});
  int wrong = 0;
  for (int i = 0; i < kRows && wrong < 5; ++i) {
    const Job& job = trace.jobs[i];  // submit times 0, 1, 2, ...: sorted order is file order
    const bool ok = job.id == IdOf(i) && job.line == lines_[i] && job.submit_time == i &&
                    job.gpus == i % 8 + 1 && job.duration == i % 100 + 1;
    if (!ok) {
      ++wrong;
      ADD_FAILURE() << "row " << i << ": got id " << job.id << " line " << job.line << " submit "
                    << job.submit_time << " gpus " << job.gpus << " duration " << job.duration
                    << "; expected id " << IdOf(i) << " line " << lines_[i];
    }
  }
  // The same file compressed: the same jobs.
  ASSERT_EQ(std::system(("gzip -c '" + path + "' > '" + path + ".gz'").c_str()), 0);
  const Trace gz = LoadTrace(path + ".gz");
  ASSERT_EQ(gz.jobs.size(), trace.jobs.size());
  for (size_t i = 0; i < gz.jobs.size(); ++i) {
    ASSERT_EQ(gz.jobs[i].id, trace.jobs[i].id) << i;
    ASSERT_EQ(gz.jobs[i].line, trace.jobs[i].line) << i;
  }
}

TEST_F(NativeReaderLargeFile, TheEarliestLineInTheFileIsTheErrorReported) {
  std::string path;
  // Bad rows near the start and the end: row 100's gpus (column 10 of "j100,100,-2,1") wins.
  const std::string both = ErrorOfRows({{100, "j100,100,-2,1"}, {kRows - 100, "jz,0,-3,1"}}, &path);
  EXPECT_EQ(both, path + ":102:10: gpus: expected an integer >= 0, got -2");
  // Only near the end: its line is counted through the blank lines of the middle.
  const int late = kRows - 100;
  const std::string second = ErrorOfRows({{late, "jz,0,-3,1"}}, &path);
  EXPECT_EQ(second, path + ":" + std::to_string(lines_[late]) +
                        ":6: gpus: expected an integer >= 0, got -3");
  // A row near the end missing a field, and an unterminated quote right after the middle.
  const int middle = kRows / 2 + 10;
  const std::string quote = ErrorOfRows({{middle, "\"jq,1,1,1"}, {late, "jz,0,1"}}, &path);
  EXPECT_EQ(quote, path + ":" + std::to_string(lines_[middle]) +
                       ":1: unterminated quoted field: expected a closing '\"'");
  const std::string missing = ErrorOfRows({{late, "jz,0,1"}}, &path);
  EXPECT_EQ(missing, path + ":" + std::to_string(lines_[late]) +
                         ":7: missing field(s): expected 4 fields (duration is missing), got 3");
  // A parse error comes before a duplicate id on an earlier line (ids are checked at the end).
  const std::string parse_first = ErrorOfRows({{200, "j10,0,1,1"}, {late, "jz,0,-3,1"}}, &path);
  EXPECT_NE(parse_first.find(":" + std::to_string(lines_[late]) + ":6: gpus"), std::string::npos)
      << parse_first;
}

TEST_F(NativeReaderLargeFile, ADuplicateFarApartNamesBothLines) {
  std::string path;
  const int late = kRows - 50;
  const std::string e = ErrorOfRows({{late, "j10,0,1,1"}}, &path);
  EXPECT_EQ(e, path + ":" + std::to_string(lines_[late]) +
                   ":1: duplicate job_id \"j10\" (first on line 12)");
  // Two duplicates, one in each half of the file: the one that appears earlier in the file is
  // reported.
  const std::string two = ErrorOfRows({{300, "j20,0,1,1"}, {late, "j10,0,1,1"}}, &path);
  EXPECT_EQ(two, path + ":302:1: duplicate job_id \"j20\" (first on line 22)");
  // A quoted id with a comma, duplicated across the middle.
  const int quoted = kRows / 2 - 2000;  // in the middle region, a multiple of 5: "j73000,x"
  ASSERT_EQ(quoted % 5, 0);
  const int later = kRows / 2 + 2500;
  const std::string comma = ErrorOfRows({{later, "\"j73000,x\",1,1,1"}}, &path);
  EXPECT_EQ(comma, path + ":" + std::to_string(lines_[later]) +
                       ":1: duplicate job_id \"j73000,x\" (first on line " +
                       std::to_string(lines_[quoted]) + ")");
}

// Ids that end in increasing numbers skip the duplicate search; every way out of that case must
// still find a duplicate, and ids that only look alike as numbers are different ids.
TEST_F(NativeReader, NumberedIdsAreCheckedWhetherOrNotTheyIncrease) {
  const std::string header = "job_id,submit_time,gpus,duration\n";
  EXPECT_EQ(ErrorOf(header + "1,0,1,1\n2,0,1,1\n10,0,1,1\n"), "");
  // Increasing until a repeat (line 5 repeats line 3's "2").
  EXPECT_NE(ErrorOf(header + "1,0,1,1\n2,0,1,1\n3,0,1,1\n2,0,1,1\n")
                .find(":5:1: duplicate job_id \"2\" (first on line 3)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(header + "7,0,1,1\n7,0,1,1\n").find(":3:1: duplicate job_id \"7\""),
            std::string::npos);
  // Not increasing from the start, then a repeat.
  EXPECT_NE(ErrorOf(header + "5,0,1,1\n3,0,1,1\n5,0,1,1\n")
                .find(":4:1: duplicate job_id \"5\" (first on line 2)"),
            std::string::npos);
  // "1" and "01" (and "1" and "1.0") are different texts, so different ids.
  EXPECT_EQ(ErrorOf(header + "1,0,1,1\n01,0,1,1\n1.0,0,1,1\n"), "");
  // With a prefix: increasing, then a repeat; "j9" then "k9" differ by their prefix, "j9" and
  // "j09" by their digits.
  EXPECT_EQ(ErrorOf(header + "j8,0,1,1\nj9,0,1,1\nk9,0,1,1\nj09,0,1,1\n"), "");
  EXPECT_NE(ErrorOf(header + "j8,0,1,1\nj9,0,1,1\nj10,0,1,1\nj9,0,1,1\n")
                .find(":5:1: duplicate job_id \"j9\" (first on line 3)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(header + "j8,0,1,1\nk9,0,1,1\nj8,0,1,1\n")
                .find(":4:1: duplicate job_id \"j8\" (first on line 2)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(header + "a,0,1,1\na,0,1,1\n").find(":3:1: duplicate job_id \"a\""),
            std::string::npos);
  // Integers too long for 64 bits that agree in their first 18 digits.
  EXPECT_EQ(ErrorOf(header + "1000000000000000000001,0,1,1\n1000000000000000000002,0,1,1\n"), "");
  EXPECT_NE(ErrorOf(header + "1000000000000000000001,0,1,1\n1000000000000000000001,0,1,1\n")
                .find(":3:1: duplicate job_id"),
            std::string::npos);
}

TEST_F(NativeReader, ReadsTheBundledDefaultTrace) {
  // traces/philly_default.csv: 11,160 jobs (scripts/make_default_trace.py); its first data row is
  // "philly-26974,25,1,594,103959".
  const Trace trace = LoadTrace(std::string(CLUSTERSIM_SOURCE_DIR) + "/traces/philly_default.csv");
  ASSERT_EQ(trace.jobs.size(), 11160u);
  EXPECT_EQ(trace.jobs[0].id, "philly-26974");
  EXPECT_EQ(trace.jobs[0].submit_time, 25);
  EXPECT_EQ(trace.jobs[0].duration, 594);
  EXPECT_EQ(trace.jobs[0].vc, "103959");
}

}  // namespace
}  // namespace clustersim
