// The native trace format (CSV and JSON): field mapping, ordering and the errors it reports.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

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
