// The readers of public trace formats (workloads/philly_csv.cc, philly_json.cc, helios.cc,
// acme.cc, pai2020.cc, openb.cc, swf.cc): counts, first and last jobs and rows checked field by
// field on the real files bundled in traces/ (expected values read off the raw lines, quoted in
// comments), small files written to the published schemas for the formats not available offline,
// auto-detection, and the errors malformed files give (file, line, column, what was expected).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/hardware/cluster.h"
#include "sim/util/error.h"
#include "workloads/failure_trace.h"
#include "workloads/openb_cluster.h"
#include "workloads/reader.h"
#include "workloads/transforms.h"

namespace clustersim {
namespace {

const std::string kTraces = std::string(CLUSTERSIM_SOURCE_DIR) + "/traces";

const Job& Find(const Trace& trace, const std::string& id) {
  for (const Job& job : trace.jobs) {
    if (job.id == id) return job;
  }
  throw std::out_of_range("no job " + id);
}

class TraceReader : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/clustersim-readers-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // Returns the message of the InputError loading `text` gives, or "" if it loads.
  std::string ErrorOf(const std::string& text, const std::string& name = "t.csv",
                      const std::string& format = "") {
    try {
      LoadTrace(Write(name, text), format);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  // Names of the registered readers whose detector claims `path`.
  std::vector<std::string> Claimants(const std::string& path) {
    std::ifstream in(path);
    std::string first;
    while (std::getline(in, first) && first.find_first_not_of(" \t\r") == std::string::npos) {
    }
    std::vector<std::string> names;
    for (const TraceReaderEntry* e : TraceReaders()) {
      if (e->detect(path, first)) names.push_back(e->name);
    }
    return names;
  }

  std::string dir_;
};

// Published examples (msr-fiddle/philly-traces README) plus the edge cases: no attempts, an
// attempt with None times, several details, a last attempt still running, null fields, an
// unknown key holding a container.
const char* const kPhillyJson = R"([
  {
    "status": "Pass",
    "vc": "ee9e8c",
    "jobid": "application_1506638472019_14199",
    "attempts": [
      {"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23",
       "detail": [{"ip": "m47",
                   "gpus": ["gpu0", "gpu1", "gpu2", "gpu3", "gpu4", "gpu5", "gpu6", "gpu7"]}]},
      {"start_time": "2017-10-07 01:13:30", "end_time": "2017-10-09 06:53:12",
       "detail": [{"ip": "m412",
                   "gpus": ["gpu0", "gpu1", "gpu2", "gpu3", "gpu4", "gpu5", "gpu6", "gpu7"]}]}
    ],
    "submitted_time": "2017-10-07 01:11:39",
    "user": "ce2f4c"
  },
  {"status": "Killed", "vc": "11cb48", "jobid": "application_2", "attempts": [],
   "submitted_time": "2017-10-07 01:11:00", "user": "u2"},
  {"status": "Failed", "vc": "11cb48", "jobid": "application_3",
   "attempts": [
     {"start_time": "None", "end_time": "None", "detail": [{"ip": "m1", "gpus": ["gpu0"]}]},
     {"start_time": "2017-10-07 02:00:00", "end_time": "2017-10-07 02:10:00",
      "detail": [{"ip": "m2", "gpus": ["gpu0", "gpu1"]}, {"ip": "m3", "gpus": ["gpu3"]}]}],
   "submitted_time": "2017-10-07 01:30:00", "user": "u3"},
  {"status": "Pass", "vc": "vc4", "jobid": "application_4", "user": null, "extra": {"a": [1, 2]},
   "attempts": [{"start_time": "2017-10-09 00:00:00", "end_time": null,
                 "detail": [{"ip": "m5", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3"]}]}],
   "submitted_time": "2017-10-08 23:00:00"}
]
)";

const char* const kHelios =
    "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,"
    "queue\n"
    // The three rows of the HeliosData README.
    "1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,"
    "2020-06-10 04:55:09,36848,0\n"
    "1425512,uVMrF,vchbv,4,16,1,FAILED,2020-06-09 18:41:27,2020-06-09 18:41:27,"
    "2020-06-09 18:45:36,249,0\n"
    "1425513,uzqls,vcpDC,1,1,1,CANCELLED,2020-06-09 18:41:28,2020-06-09 18:41:28,"
    "2020-06-17 14:15:21,675233,0\n"
    // A CPU-only job with an empty duration (end - start = 300 s), the earliest submission.
    "1425514,uzqls,vcpDC,0,4,1,COMPLETED,2020-06-09 18:40:00,2020-06-09 18:40:10,"
    "2020-06-09 18:45:10,,10\n"
    // Cancelled before it started: no start, end or duration.
    "1425515,uzqls,vcpDC,8,32,1,CANCELLED,2020-06-09 18:50:00,,,,\n";

const char* const kAcmeSeren =
    "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,"
    "queue,gpu_time\n"
    // The two rows of the AcmeTrace README (trace_seren.csv).
    "5778432,u5907,1,8,128,Other,FAILED,2023-03-01 00:18:22+08:00,2023-03-01 00:18:54+08:00,"
    "2023-03-01 00:20:51+08:00,117,32,936.0\n"
    "5778469,u5907,1,8,128,Other,COMPLETED,2023-03-01 00:23:58+08:00,2023-03-01 00:24:11+08:00,"
    "2023-03-01 01:09:04+08:00,2693,13,21544.0\n"
    // Other offsets: 11:20:00-05:00 is 16:20:00 UTC = 00:20:00+08:00, 98 s after the first job.
    // Empty duration: end - start = 3600 s.
    "5778470,u1,2,16,256,Pretrain,COMPLETED,2023-02-28 11:20:00-05:00,2023-02-28 16:30:00Z,"
    "2023-02-28 17:30:00+00:00,,600,57600.0\n";

const char* const kAcmeKalos =
    "job_id,user,node_num,gpu_num,cpu_num,mem_per_pod_GB,shared_mem_per_pod,type,state,"
    "submit_time,start_time,end_time,fail_time,stop_time,duration,queue,gpu_time\n"
    // The two rows of the AcmeTrace README (trace_kalos.csv).
    "dlctk696s0jbvitv,uf794,8,64,960,1000,100.0,Other,FAILED,2023-05-17 11:00:58+00:00,"
    "2023-05-17 11:01:08+00:00,2023-05-17 11:01:16+00:00,2023-05-17 11:01:16+00:00,,18,10.0,"
    "1152.0\n"
    "dlc1t2ypl09b8qtp,uf794,8,64,960,1000,100.0,Other,CANCELLED,2023-05-17 11:28:42+00:00,"
    "2023-05-17 11:28:54+00:00,2023-05-17 11:30:04+00:00,,2023-05-17 11:30:04+00:00,82,12.0,"
    "5248.0\n";

const char* const kPaiJobs =
    "job_name,inst_id,user,status,start_time,end_time\n"
    "j1,i1,u1,Terminated,1000.0,2000.0\n"
    "j2,i2,u2,Running,1500.0,\n"
    "j3,i3,u1,Failed,900.0,1200.0\n"
    "j4,i4,u3,Waiting,1600.0,\n"
    "j5,i5,u3,Terminated,1700.0,1800.0\n";
// As published: no header line.
const char* const kPaiTasks =
    "j1,ps,1.0,Terminated,1010.0,1990.0,600.0,29.296875,,\n"
    "j1,worker,2.0,Terminated,1020.0,2000.0,400.0,29.296875,50.0,V100\n"
    "j2,tensorflow,1.0,Running,1600.0,,600.0,10.0,25.0,T4\n"
    "j3,worker,4.0,Failed,950.0,1100.0,800.0,10.0,100.0,P100\n"
    "j3,evaluator,1.0,Failed,960.0,1150.0,100.0,10.0,100.0,V100M32\n"
    "j5,worker,1.0,Terminated,1750.0,1790.0,200.0,5.0,100.0,MISC\n"
    "orphan,worker,1.0,Terminated,1.0,2.0,100.0,1.0,100.0,T4\n";

const char* const kOpenbHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

// ---------------------------------------------------------------- real files

TEST_F(TraceReader, ReadsTheRealPhillyCsv) {
  const Trace trace = LoadTrace(kTraces + "/philly/pollux_philly.csv");
  EXPECT_EQ(trace.format, "philly-csv");
  ASSERT_EQ(trace.jobs.size(), 82247u);
  // Earliest row, line 31568: "2017-09-04 10:30:41,2240194.0,8,17921552.0,7f04ca".
  const Job& first = trace.jobs.front();
  EXPECT_EQ(first.id, "philly-31568");
  EXPECT_EQ(first.line, 31568);
  EXPECT_EQ(first.submit_time, 0);
  EXPECT_EQ(first.gpus, 8);
  EXPECT_EQ(first.duration, 2240194);
  EXPECT_EQ(first.vc, "7f04ca");
  EXPECT_TRUE(first.user.empty());
  EXPECT_TRUE(first.trace_status.empty());
  EXPECT_EQ(first.walltime, -1);
  // Latest row, line 62255: "2017-12-22 08:02:11,64.0,1,64.0,11cb48": 109 days minus 2:28:30
  // after the earliest = 9417600 - 8910 s.
  const Job& last = trace.jobs.back();
  EXPECT_EQ(last.id, "philly-62255");
  EXPECT_EQ(last.submit_time, 9408690);
  EXPECT_EQ(last.gpus, 1);
  EXPECT_EQ(last.duration, 64);
  EXPECT_EQ(last.vc, "11cb48");
  // Line 2: "2017-10-09 07:01:55,66.0,1,66.0,11cb48": 35 days minus 3:28:46 = 3024000 - 12526.
  const Job& row2 = Find(trace, "philly-2");
  EXPECT_EQ(row2.submit_time, 3011474);
  EXPECT_EQ(row2.gpus, 1);
  EXPECT_EQ(row2.duration, 66);
  EXPECT_EQ(row2.vc, "11cb48");
  // Line 23198: "2017-12-12 21:38:32,7673.0,128,982144.0,ee9e8c": 99 days plus 11:07:51.
  const Job& big = Find(trace, "philly-23198");
  EXPECT_EQ(big.submit_time, 8553600 + 40071);
  EXPECT_EQ(big.gpus, 128);
  EXPECT_EQ(big.duration, 7673);
  EXPECT_EQ(big.vc, "ee9e8c");
}

TEST_F(TraceReader, PhillyCsvIdsMatchTheBundledDefaultTrace) {
  // scripts/make_default_trace.py names jobs "philly-<line>" too: the default trace's first job
  // "philly-26974,25,1,594,103959" is line 26974 of pollux_philly.csv,
  // "2017-11-03 00:00:25,594.0,1,594.0,103959".
  const Trace trace = LoadTrace(kTraces + "/philly/pollux_philly.csv");
  const Job& job = Find(trace, "philly-26974");
  EXPECT_EQ(job.duration, 594);
  EXPECT_EQ(job.gpus, 1);
  EXPECT_EQ(job.vc, "103959");
  EXPECT_EQ(job.submit_time - Find(trace, "philly-2").submit_time,
            // 2017-11-03 00:00:25 - 2017-10-09 07:01:55 = 24 days 16:58:30
            24 * 86400 + 16 * 3600 + 58 * 60 + 30);
}

TEST_F(TraceReader, ReadsTheRealOpenbPodList) {
  const Trace trace = LoadTrace(kTraces + "/alibaba_gpu_v2023/openb_pod_list_default.csv");
  EXPECT_EQ(trace.format, "openb");
  ASSERT_EQ(trace.jobs.size(), 8152u);
  // Line 2: "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0" (censored: Running).
  const Job& first = trace.jobs.front();
  EXPECT_EQ(first.id, "openb-pod-0000");
  EXPECT_EQ(first.line, 2);
  EXPECT_EQ(first.submit_time, 0);
  EXPECT_EQ(first.gpus, 1);
  EXPECT_EQ(first.gpu_milli, 0);
  EXPECT_EQ(first.cpu_milli, 12000);
  EXPECT_EQ(first.memory_mib, 16384);
  EXPECT_EQ(first.duration, 12537496);
  EXPECT_EQ(first.trace_status, "Running");
  EXPECT_TRUE(first.gpu_type.empty());
  // Line 8153: "openb-pod-8151,3152,5600,1,590,,BE,Failed,12901761,12901792,12901762".
  const Job& last = trace.jobs.back();
  EXPECT_EQ(last.id, "openb-pod-8151");
  EXPECT_EQ(last.submit_time, 12901761);
  EXPECT_EQ(last.duration, 30);  // deletion - scheduled
  EXPECT_EQ(last.gpus, 1);
  EXPECT_EQ(last.gpu_milli, 590);
  EXPECT_EQ(last.cpu_milli, 3152);
  EXPECT_EQ(last.memory_mib, 5600);
  EXPECT_EQ(last.trace_status, "Failed");
  // Line 7: "openb-pod-0005,20000,65536,0,0,,LS,Running,2759674,12902960,2759676" (CPU only).
  const Job& cpu = Find(trace, "openb-pod-0005");
  EXPECT_EQ(cpu.gpus, 0);
  EXPECT_EQ(cpu.gpu_milli, 0);
  EXPECT_EQ(cpu.cpu_milli, 20000);
  EXPECT_EQ(cpu.submit_time, 2759674);
  EXPECT_EQ(cpu.duration, 12902960 - 2759676);
  // Line 19: "openb-pod-0017,88000,327680,8,1000,,Burstable,Succeeded,9437497,10769854,9437497".
  const Job& eight = Find(trace, "openb-pod-0017");
  EXPECT_EQ(eight.gpus, 8);
  EXPECT_EQ(eight.gpu_milli, 0);
  EXPECT_EQ(eight.duration, 10769854 - 9437497);
  EXPECT_EQ(eight.trace_status, "Succeeded");
  // Line 63: "openb-pod-0061,11908,47104,1,1000,,BE,Pending,10001278,10001403," (never scheduled:
  // its lifetime, deletion - creation).
  const Job& pending = Find(trace, "openb-pod-0061");
  EXPECT_EQ(pending.duration, 125);
  EXPECT_EQ(pending.trace_status, "Pending");
  int cpu_only = 0;
  for (const Job& job : trace.jobs) cpu_only += job.gpus == 0;
  EXPECT_EQ(cpu_only, 1088);  // awk -F, '$4==0' counts 1088 rows
  // qos is the priority class, mapped by the built-in table: LS 2, BE 0, Burstable 1.
  EXPECT_EQ(first.priority_class, "LS");
  EXPECT_EQ(first.priority, 2);
  EXPECT_EQ(last.priority_class, "BE");
  EXPECT_EQ(last.priority, 0);
  EXPECT_EQ(eight.priority_class, "Burstable");
  EXPECT_EQ(eight.priority, 1);
  // Counted with awk -F, on column 7: 4647 LS, 3398 BE, 100 Burstable, 7 Guaranteed.
  std::map<int, int> by_level;
  for (const Job& job : trace.jobs) ++by_level[job.priority];
  EXPECT_EQ(by_level, (std::map<int, int>{{0, 3398}, {1, 100}, {2, 4647}, {3, 7}}));
}

TEST_F(TraceReader, PriorityMapOverridesTheBuiltInLevelsOfOpenbQos) {
  TraceFilter filter;
  filter.priority_map = {{"ls", 5}, {"be", 1}};
  const Trace trace =
      LoadTrace(kTraces + "/alibaba_gpu_v2023/openb_pod_list_default.csv", "", filter);
  EXPECT_EQ(Find(trace, "openb-pod-0000").priority, 5);  // LS
  EXPECT_EQ(Find(trace, "openb-pod-8151").priority, 1);  // BE
  EXPECT_EQ(Find(trace, "openb-pod-0017").priority, 1);  // Burstable: built-in
  EXPECT_EQ(trace.priority_map, filter.priority_map);
}

TEST_F(TraceReader, SwfQueuesAreClassesNamedByTheHeader) {
  // Queues 0 and 1 are named in the header, queue 2 is not, -1 is no queue.
  const std::string text =
      "; Queue:  0  interactive\n"
      "; Queue:  1  batch\n"
      "1 10 -1 100 4 -1 -1 4 -1 -1 1 3 2 -1 0 -1 -1 -1\n"
      "2 20 -1 100 4 -1 -1 4 -1 -1 1 3 2 -1 1 -1 -1 -1\n"
      "3 30 -1 100 4 -1 -1 4 -1 -1 1 3 2 -1 2 -1 -1 -1\n"
      "4 40 -1 100 4 -1 -1 4 -1 -1 1 3 2 -1 -1 -1 -1 -1\n";
  TraceFilter filter;
  filter.priority_map = {{"interactive", 3}, {"2", 1}};
  const Trace trace = LoadTrace(Write("q.swf", text), "", filter);
  ASSERT_EQ(trace.jobs.size(), 4u);
  EXPECT_EQ(trace.jobs[0].priority_class, "interactive");
  EXPECT_EQ(trace.jobs[0].priority, 3);
  EXPECT_EQ(trace.jobs[1].priority_class, "batch");
  EXPECT_EQ(trace.jobs[1].priority, 0);  // no level anywhere: 0
  EXPECT_EQ(trace.jobs[2].priority_class, "2");
  EXPECT_EQ(trace.jobs[2].priority, 1);
  EXPECT_TRUE(trace.jobs[3].priority_class.empty());
  EXPECT_EQ(trace.jobs[3].priority, 0);
}

TEST_F(TraceReader, SwfReadsPartitionsUnknownFieldsAndJobsCancelledBeforeTheyStarted) {
  const std::string text =
      "; UnixStartTime: 1000000\n"
      "; Partition: 1 thin\n"
      "; Partition: 2 fat\n"
      "1 10 5 100 4 -1 -1 4 200 -1 1 3 1 -1 -1 1 -1 -1\n"
      // Cancelled after waiting 30 s, never ran: withdrawn at 20 + 30.
      "2 20 30 -1 8 -1 -1 8 200 -1 5 3 1 -1 -1 2 -1 -1\n"
      // Nothing known: kept in its place (the previous submit time) and rejected later.
      "-1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
      "4 30 0 50 2 -1 -1 2 -1 -1 1 3 1 -1 -1 7 -1 -1\n";
  const Trace trace = LoadTrace(Write("p.swf", text));
  ASSERT_EQ(trace.jobs.size(), 4u);
  EXPECT_EQ(trace.unix_origin, 1000000);
  const Job& thin = Find(trace, "1");
  EXPECT_EQ(thin.partition, "thin");
  EXPECT_EQ(thin.recorded_start, 15);
  EXPECT_EQ(thin.recorded_end, 115);
  const Job& cancelled = Find(trace, "2");
  EXPECT_EQ(cancelled.partition, "fat");
  EXPECT_EQ(cancelled.gpus, 0);
  EXPECT_EQ(cancelled.trace_status, "cancelled:never-started");
  EXPECT_FALSE(cancelled.has_recorded_start());
  EXPECT_EQ(cancelled.recorded_end, 50);
  const Job& unknown = Find(trace, "-1");
  EXPECT_EQ(unknown.submit_time, 20);
  EXPECT_EQ(unknown.gpus, 0);
  EXPECT_EQ(unknown.trace_status, ":no-submit-time");
  EXPECT_FALSE(unknown.has_recorded_start());
  EXPECT_EQ(Find(trace, "4").partition, "7");  // no header name: the number
}

TEST_F(TraceReader, ReadsTheBundledSacctSample) {
  const Trace trace = LoadTrace(kTraces + "/slurm/sacct_sample.txt");
  EXPECT_EQ(trace.format, "sacct");
  // 13 job lines, the pending range 1012_[4-6%2] giving 3 tasks; 5 step lines are not jobs.
  ASSERT_EQ(trace.jobs.size(), 17u);
  EXPECT_EQ(trace.unix_origin, 1709539200);  // 2024-03-04T08:00:00, the earliest submission
  const Job& first = Find(trace, "1001");
  EXPECT_EQ(first.submit_time, 0);
  EXPECT_EQ(first.recorded_start, 1);
  EXPECT_EQ(first.recorded_end, 5401);
  EXPECT_EQ(first.duration, 5400);
  EXPECT_EQ(first.gpus, 2);
  EXPECT_EQ(first.cpu_milli, 8000);
  EXPECT_EQ(first.memory_mib, 65536);
  EXPECT_EQ(first.walltime, 7200);
  EXPECT_EQ(first.user, "alice");
  EXPECT_EQ(first.vc, "vision");
  EXPECT_EQ(first.partition, "gpu");
  EXPECT_EQ(first.priority_class, "normal");
  EXPECT_EQ(first.trace_status, "completed");
  // gres/gpu:a100=8 and gres/gpu=8 are the same 8 GPUs.
  const Job& timeout = Find(trace, "1002");
  EXPECT_EQ(timeout.gpus, 8);
  EXPECT_EQ(timeout.trace_status, "timeout");
  EXPECT_EQ(timeout.walltime, 12 * 3600);
  // Cancelled before it started: 0 GPUs, withdrawn at its End.
  const Job& cancelled = Find(trace, "1004");
  EXPECT_EQ(cancelled.gpus, 0);
  EXPECT_EQ(cancelled.trace_status, "cancelled:never-started");
  EXPECT_FALSE(cancelled.has_recorded_start());
  EXPECT_EQ(cancelled.recorded_end, 3 * 3600);
  EXPECT_EQ(cancelled.walltime, 86400);
  // A CPU-only job; MM:SS and minutes time limits.
  const Job& cpu = Find(trace, "1005");
  EXPECT_EQ(cpu.gpus, 0);
  EXPECT_EQ(cpu.cpu_milli, 2000);
  EXPECT_EQ(cpu.memory_mib, 4000);
  EXPECT_EQ(cpu.walltime, 1800);
  EXPECT_EQ(Find(trace, "1009").walltime, 600);
  // Running when the log was taken: to the latest time of the file, 1007's end (19 h after the
  // origin).
  const Job& running = Find(trace, "1010");
  EXPECT_EQ(running.trace_status, "running:running-at-end");
  EXPECT_EQ(running.recorded_start, 6 * 3600 + 2);
  EXPECT_EQ(running.recorded_end, 19 * 3600 + 2);
  EXPECT_EQ(running.duration, 13 * 3600);
  // Pending: never started; several partitions; array tasks.
  const Job& pending = Find(trace, "1011");
  EXPECT_EQ(pending.trace_status, "pending:never-started");
  EXPECT_EQ(pending.partition, "gpu,debug");
  for (const char* task : {"1012_4", "1012_5", "1012_6"}) {
    EXPECT_EQ(Find(trace, task).trace_status, "pending:never-started") << task;
  }
  EXPECT_EQ(Find(trace, "1003_3").trace_status, "timeout");
  EXPECT_EQ(Find(trace, "1013").walltime, -1);  // UNLIMITED
  // sacct -p (a trailing '|') reads the same.
  std::ifstream in(kTraces + "/slurm/sacct_sample.txt");
  std::string line, bars;
  while (std::getline(in, line)) bars += line + "|\n";
  EXPECT_EQ(LoadTrace(Write("p.txt", bars)).jobs.size(), 17u);
}

TEST_F(TraceReader, SacctAddsTypedGpuEntriesOfTwoTypesAndCountsAnUntypedTotalOnce) {
  const std::string header =
      "JobID|Submit|Start|End|Partition|AllocTRES|ReqTRES|State|Timelimit|User|Account|QOS\n";
  const std::string times = "|2024-03-04T08:00:00|2024-03-04T08:00:01|2024-03-04T09:00:01|gpu|";
  const Trace trace = LoadTrace(Write(
      "typed.txt", header + "1" + times +
                       "gres/gpu:a100=4,gres/gpu:v100=4||COMPLETED|1:00:00|a|b|c\n" + "2" + times +
                       "gres/gpu=8,gres/gpu:a100=4,gres/gpu:v100=4||COMPLETED|1:00:00|a|b|c\n" +
                       "3" + times + "gres/gpu=2,gres/gpu:a100=2||COMPLETED|1:00:00|a|b|c\n"));
  EXPECT_EQ(Find(trace, "1").gpus, 8);
  EXPECT_EQ(Find(trace, "2").gpus, 8);
  EXPECT_EQ(Find(trace, "3").gpus, 2);
}

TEST_F(TraceReader, MalformedSacctRecordsNameLineColumnAndWhatWasExpected) {
  const std::string header =
      "JobID|Submit|Start|End|Partition|AllocTRES|ReqTRES|State|Timelimit|User|Account|QOS\n";
  const std::string ok_times = "7|2024-03-04T08:00:00|2024-03-04T08:00:01|2024-03-04T09:00:01|";
  // Timelimit "1-xx:00" at column 89.
  std::string e =
      ErrorOf(header + ok_times + "gpu|cpu=4|cpu=4|COMPLETED|1-xx:00|a|b|c\n", "s.txt");
  EXPECT_NE(e.find("s.txt:2:89: Timelimit: expected [D-]HH:MM:SS"), std::string::npos) << e;
  // A TRES count that is no number: at the item, column 73.
  e = ErrorOf(header + ok_times + "gpu|cpu=4,gres/gpu=two|cpu=4|COMPLETED|1:00|a|b|c\n", "s.txt");
  EXPECT_NE(e.find("s.txt:2:73: AllocTRES: gres/gpu: expected a count"), std::string::npos) << e;
  // End before Start, at End's column 43.
  e = ErrorOf(header + "7|2024-03-04T08:00:00|2024-03-04T08:00:01|2024-03-04T07:00:01|gpu|cpu=4|"
                       "cpu=4|COMPLETED|1:00|a|b|c\n",
              "s.txt");
  EXPECT_NE(e.find("s.txt:2:43: End: before the Start"), std::string::npos) << e;
  // Too few fields: after the end of the line.
  e = ErrorOf(header + "7|2024-03-04T08:00:00|Unknown\n", "s.txt");
  EXPECT_NE(e.find("s.txt:2:30: missing field(s): expected 12 fields (End is missing)"),
            std::string::npos)
      << e;
  // A backwards array range.
  e = ErrorOf(header + "12_[9-3]|2024-03-04T08:00:00|Unknown|Unknown|gpu||cpu=4|PENDING|1:00|a|b|c\n",
              "s.txt");
  EXPECT_NE(e.find("s.txt:2:1: JobID: expected an array range"), std::string::npos) << e;
}

TEST_F(TraceReader, ReadsTheRealLublinSwf) {
  const Trace trace = LoadTrace(kTraces + "/swf/lublin_256.swf");
  EXPECT_EQ(trace.format, "swf");
  ASSERT_EQ(trace.jobs.size(), 10000u);
  // Line 8: "1    5094 -1   12072  16 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1".
  const Job& first = trace.jobs.front();
  EXPECT_EQ(first.id, "1");
  EXPECT_EQ(first.line, 8);
  EXPECT_EQ(first.submit_time, 5094);
  EXPECT_EQ(first.duration, 12072);
  EXPECT_EQ(first.gpus, 16);
  EXPECT_EQ(first.walltime, -1);
  EXPECT_EQ(first.trace_status, "completed");
  EXPECT_TRUE(first.user.empty());
  EXPECT_TRUE(first.vc.empty());
  // Line 11: "4    7287 -1    9053 128 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1".
  const Job& fourth = Find(trace, "4");
  EXPECT_EQ(fourth.submit_time, 7287);
  EXPECT_EQ(fourth.duration, 9053);
  EXPECT_EQ(fourth.gpus, 128);
  // Line 10007: "10000 7711701 -1   13929   3 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1".
  const Job& last = trace.jobs.back();
  EXPECT_EQ(last.id, "10000");
  EXPECT_EQ(last.line, 10007);
  EXPECT_EQ(last.submit_time, 7711701);
  EXPECT_EQ(last.duration, 13929);
  EXPECT_EQ(last.gpus, 3);
}

TEST_F(TraceReader, ReadsTheRealNasaSwfAsShippedGzipped) {
  // As the Parallel Workloads Archive ships it: gzip, read without decompressing first.
  const std::string path = kTraces + "/swf/NASA-iPSC-1993-3.1-cln.swf.gz";
  const Trace trace = LoadTrace(path);
  EXPECT_EQ(trace.format, "swf");
  ASSERT_EQ(trace.jobs.size(), 18239u);
  // Line 33: "    1        0     -1   1451  128     -1    -1   -1     -1    -1 -1   1   1  -1 -1 -1
  // -1 -1" (status -1: unknown).
  const Job& first = trace.jobs.front();
  EXPECT_EQ(first.id, "1");
  EXPECT_EQ(first.line, 33);
  EXPECT_EQ(first.submit_time, 0);
  EXPECT_EQ(first.duration, 1451);
  EXPECT_EQ(first.gpus, 128);
  EXPECT_EQ(first.user, "1");
  EXPECT_EQ(first.vc, "1");
  EXPECT_TRUE(first.trace_status.empty());
  // Line 38: "   57    25574     -1     10    1     -1    -1   -1     -1    -1 -1   4   1   2 -1 -1
  // -1 -1".
  const Job& job57 = Find(trace, "57");
  EXPECT_EQ(job57.line, 38);
  EXPECT_EQ(job57.submit_time, 25574);
  EXPECT_EQ(job57.duration, 10);
  EXPECT_EQ(job57.gpus, 1);
  EXPECT_EQ(job57.user, "4");
  EXPECT_EQ(job57.vc, "1");
  // Line 248: "  658   168848     -1      0  128 ..." (a run time of 0 s is kept).
  EXPECT_EQ(Find(trace, "658").duration, 0);
  // Line 18271: "42264  7948936     -1     86  128     -1    -1   -1     -1    -1 -1  12   2  -1 -1
  // -1 -1 -1".
  const Job& last = trace.jobs.back();
  EXPECT_EQ(last.id, "42264");
  EXPECT_EQ(last.line, 18271);
  EXPECT_EQ(last.submit_time, 7948936);
  EXPECT_EQ(last.duration, 86);
  EXPECT_EQ(last.gpus, 128);
  EXPECT_EQ(last.user, "12");
  EXPECT_EQ(last.vc, "2");
}

// ---------------------------------------------------------------- published schemas

TEST_F(TraceReader, PhillyJsonSumsAttemptsAndMarksIncompleteRecords) {
  const Trace trace = LoadTrace(Write("cluster_job_log", kPhillyJson), "philly-json");
  EXPECT_EQ(trace.format, "philly-json");
  ASSERT_EQ(trace.jobs.size(), 4u);
  // The earliest submission (01:11:00) is application_2, with no attempts.
  const Job& none = trace.jobs[0];
  EXPECT_EQ(none.id, "application_2");
  EXPECT_EQ(none.submit_time, 0);
  EXPECT_EQ(none.gpus, 0);
  EXPECT_EQ(none.duration, 0);
  EXPECT_EQ(none.trace_status, "Killed:no-attempts");
  // Two complete attempts of 8 GPUs: 74 s + (2 days 05:39:42) = 74 + 193182 s.
  const Job& two = Find(trace, "application_1506638472019_14199");
  EXPECT_EQ(two.submit_time, 39);
  EXPECT_EQ(two.gpus, 8);
  EXPECT_EQ(two.duration, 74 + 193182);
  EXPECT_EQ(two.trace_status, "Pass");
  EXPECT_EQ(two.user, "ce2f4c");
  EXPECT_EQ(two.vc, "ee9e8c");
  EXPECT_EQ(two.line, 2);
  // First attempt with None times (1 GPU, counted), second of 10 minutes on 3 GPUs.
  const Job& missing = Find(trace, "application_3");
  EXPECT_EQ(missing.submit_time, 1140);
  EXPECT_EQ(missing.gpus, 1);
  EXPECT_EQ(missing.duration, 600);
  EXPECT_EQ(missing.trace_status, "Failed:missing-times");
  // Running when the log was taken: censored at the latest time in the file, 2017-10-09 06:53:12.
  const Job& running = Find(trace, "application_4");
  EXPECT_EQ(running.submit_time, 86400 + 21 * 3600 + 49 * 60);
  EXPECT_EQ(running.gpus, 4);
  EXPECT_EQ(running.duration, 6 * 3600 + 53 * 60 + 12);
  EXPECT_EQ(running.trace_status, "Pass:running-at-end");
  EXPECT_TRUE(running.user.empty());
}

TEST_F(TraceReader, HeliosMapsStatesAndDurations) {
  const Trace trace = LoadTrace(Write("cluster_log.csv", kHelios));
  EXPECT_EQ(trace.format, "helios");
  ASSERT_EQ(trace.jobs.size(), 5u);
  const Job& cpu = trace.jobs[0];  // submitted 18:40:00, the earliest
  EXPECT_EQ(cpu.id, "1425514");
  EXPECT_EQ(cpu.submit_time, 0);
  EXPECT_EQ(cpu.gpus, 0);
  EXPECT_EQ(cpu.cpu_milli, 4000);
  EXPECT_EQ(cpu.duration, 300);
  const Job& a = Find(trace, "1425511");
  EXPECT_EQ(a.submit_time, 61);
  EXPECT_EQ(a.user, "uXBbc");
  EXPECT_EQ(a.vc, "vcJkd");
  EXPECT_EQ(a.gpus, 1);
  EXPECT_EQ(a.cpu_milli, 1000);
  EXPECT_EQ(a.duration, 36848);
  EXPECT_EQ(a.trace_status, "COMPLETED");
  const Job& b = Find(trace, "1425512");
  EXPECT_EQ(b.gpus, 4);
  EXPECT_EQ(b.cpu_milli, 16000);
  EXPECT_EQ(b.duration, 249);
  EXPECT_EQ(b.trace_status, "FAILED");
  EXPECT_EQ(Find(trace, "1425513").trace_status, "CANCELLED");
  const Job& never = Find(trace, "1425515");
  EXPECT_EQ(never.submit_time, 600);
  EXPECT_EQ(never.gpus, 8);
  EXPECT_EQ(never.duration, 0);
}

TEST_F(TraceReader, AcmeConvertsTimezoneOffsetsToUtc) {
  const Trace seren = LoadTrace(Write("trace_seren.csv", kAcmeSeren));
  EXPECT_EQ(seren.format, "acme");
  ASSERT_EQ(seren.jobs.size(), 3u);
  EXPECT_EQ(seren.jobs[0].id, "5778432");
  EXPECT_EQ(seren.jobs[0].submit_time, 0);
  EXPECT_EQ(seren.jobs[0].gpus, 8);
  EXPECT_EQ(seren.jobs[0].cpu_milli, 128000);
  EXPECT_EQ(seren.jobs[0].duration, 117);
  EXPECT_EQ(seren.jobs[0].trace_status, "FAILED");
  EXPECT_EQ(seren.jobs[0].user, "u5907");
  // 2023-02-28 11:20:00-05:00 is 98 s after 2023-03-01 00:18:22+08:00.
  EXPECT_EQ(seren.jobs[1].id, "5778470");
  EXPECT_EQ(seren.jobs[1].submit_time, 98);
  EXPECT_EQ(seren.jobs[1].gpus, 16);
  EXPECT_EQ(seren.jobs[1].duration, 3600);
  EXPECT_EQ(seren.jobs[2].id, "5778469");
  EXPECT_EQ(seren.jobs[2].submit_time, 336);
  EXPECT_EQ(seren.jobs[2].duration, 2693);
  EXPECT_EQ(seren.jobs[2].trace_status, "COMPLETED");

  // Kalos: extra columns are ignored, queue is a decimal.
  const Trace kalos = LoadTrace(Write("trace_kalos.csv", kAcmeKalos));
  EXPECT_EQ(kalos.format, "acme");
  ASSERT_EQ(kalos.jobs.size(), 2u);
  EXPECT_EQ(kalos.jobs[0].id, "dlctk696s0jbvitv");
  EXPECT_EQ(kalos.jobs[0].gpus, 64);
  EXPECT_EQ(kalos.jobs[0].cpu_milli, 960000);
  EXPECT_EQ(kalos.jobs[0].duration, 18);
  EXPECT_EQ(kalos.jobs[1].submit_time, 27 * 60 + 44);
  EXPECT_EQ(kalos.jobs[1].trace_status, "CANCELLED");
}

TEST_F(TraceReader, Pai2020AggregatesTasksWithFractionalGpus) {
  const std::string path = Write("pai_job_table.csv", kPaiJobs);
  Write("pai_task_table.csv", kPaiTasks);
  const Trace trace = LoadTrace(path);
  EXPECT_EQ(trace.format, "pai2020");
  ASSERT_EQ(trace.jobs.size(), 5u);  // the orphan task row makes no job
  // j3 submitted first (900): two GPU tasks, 4 x 100% P100 + 1 x 100% V100M32.
  const Job& j3 = trace.jobs[0];
  EXPECT_EQ(j3.id, "j3");
  EXPECT_EQ(j3.submit_time, 0);
  EXPECT_EQ(j3.gpus, 5);
  EXPECT_EQ(j3.gpu_milli, 0);
  EXPECT_EQ(j3.cpu_milli, 33000);
  EXPECT_EQ(j3.memory_mib, 50 * 1024);  // (4 + 1) instances x plan_mem 10
  EXPECT_EQ(j3.gpu_type, "V100-32GB|P100-16GB");
  EXPECT_EQ(j3.duration, 200);  // 1150 - 950
  EXPECT_EQ(j3.trace_status, "Failed");
  // j1: a CPU ps and 2 workers of 50% V100 = one whole GPU.
  const Job& j1 = Find(trace, "j1");
  EXPECT_EQ(j1.submit_time, 100);
  EXPECT_EQ(j1.gpus, 1);
  EXPECT_EQ(j1.gpu_milli, 0);
  EXPECT_EQ(j1.cpu_milli, 14000);
  EXPECT_EQ(j1.memory_mib, 90000);  // 3 instances x 29.296875 GiB x 1024
  EXPECT_EQ(j1.gpu_type, "V100-16GB");
  EXPECT_EQ(j1.duration, 990);  // 2000 - 1010
  EXPECT_EQ(j1.user, "u1");
  EXPECT_EQ(j1.line, 2);
  // j2: 25% of a T4, still running: censored at the latest time in the tables (2000).
  const Job& j2 = Find(trace, "j2");
  EXPECT_EQ(j2.gpus, 1);
  EXPECT_EQ(j2.gpu_milli, 250);
  EXPECT_EQ(j2.gpu_type, "T4-16GB");
  EXPECT_EQ(j2.duration, 400);
  EXPECT_EQ(j2.trace_status, "Running");
  // j4 has no task rows.
  const Job& j4 = Find(trace, "j4");
  EXPECT_EQ(j4.gpus, 0);
  EXPECT_EQ(j4.duration, 0);
  EXPECT_EQ(j4.trace_status, "Waiting:no-tasks");
  // j5: MISC = any GPU type.
  const Job& j5 = Find(trace, "j5");
  EXPECT_EQ(j5.gpus, 1);
  EXPECT_TRUE(j5.gpu_type.empty());
  EXPECT_EQ(j5.duration, 40);
}

TEST_F(TraceReader, Pai2020ReadsTheHeaderlessPublishedTables) {
  // The tables as published (no header line) are recognized by the job table's file name.
  std::string jobs = kPaiJobs;
  jobs = jobs.substr(jobs.find('\n') + 1);
  ASSERT_EQ(std::system(("mkdir -p " + dir_ + "/raw").c_str()), 0);
  const std::string path = Write("raw/pai_job_table.csv", jobs);
  Write("raw/pai_task_table.csv",
        "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,"
        "gpu_type\n" +
            std::string(kPaiTasks));
  const Trace trace = LoadTrace(path);
  EXPECT_EQ(trace.format, "pai2020");
  ASSERT_EQ(trace.jobs.size(), 5u);
  EXPECT_EQ(Find(trace, "j1").line, 1);
  EXPECT_EQ(Find(trace, "j2").gpu_milli, 250);
}

TEST_F(TraceReader, OpenbMapsGpuSpecsToCatalogNames) {
  const Trace trace = LoadTrace(
      Write("openb.csv", std::string(kOpenbHeader) +
                             "p0,6000,12288,1,460,V100M16|V100M32|V100M32,LS,Running,0,100,0\n"
                             "p1,6000,12288,1,1000,A10|T4,LS,Succeeded,5,50,10\n"
                             "p2,6000,12288,2,1000,G2,BE,Failed,6,60,\n"
                             "p3,6000,12288,1,1000,P100,BE,Failed,7,70,7\n"));
  ASSERT_EQ(trace.jobs.size(), 4u);
  EXPECT_EQ(trace.jobs[0].gpu_type, "V100-16GB|V100-32GB");
  EXPECT_EQ(trace.jobs[0].gpu_type_column, 21);
  EXPECT_EQ(trace.jobs[0].gpu_milli, 460);
  EXPECT_EQ(trace.jobs[1].gpu_type, "A10|T4-16GB");
  EXPECT_EQ(trace.jobs[1].duration, 40);
  EXPECT_EQ(trace.jobs[2].gpu_type, "G2");
  EXPECT_EQ(trace.jobs[2].duration, 54);  // never scheduled: deletion - creation
  EXPECT_EQ(trace.jobs[3].gpu_type, "P100-16GB");
}

// ---------------------------------------------------------------- detection

TEST_F(TraceReader, EachFormatIsDetectedFromItsOwnHeader) {
  EXPECT_EQ(Claimants(kTraces + "/philly/pollux_philly.csv"),
            std::vector<std::string>{"philly-csv"});
  EXPECT_EQ(Claimants(kTraces + "/alibaba_gpu_v2023/openb_pod_list_default.csv"),
            std::vector<std::string>{"openb"});
  EXPECT_EQ(Claimants(kTraces + "/swf/lublin_256.swf"), std::vector<std::string>{"swf"});
  EXPECT_EQ(Claimants(Write("cluster_log.csv", kHelios)), std::vector<std::string>{"helios"});
  EXPECT_EQ(Claimants(Write("trace_seren.csv", kAcmeSeren)), std::vector<std::string>{"acme"});
  EXPECT_EQ(Claimants(Write("trace_kalos.csv", kAcmeKalos)), std::vector<std::string>{"acme"});
  EXPECT_EQ(Claimants(Write("pai_job_table.csv", kPaiJobs)), std::vector<std::string>{"pai2020"});
  // An SWF log without header comments starts with 18 numbers.
  EXPECT_EQ(Claimants(Write("x.swf", "1 0 -1 10 4 -1 -1 4 100 -1 1 3 2 -1 0 -1 -1 -1\n")),
            std::vector<std::string>{"swf"});
  // A Philly job log is claimed by its own detector and by the generic native-json one; LoadTrace
  // tries generic detectors last, so the log is read as philly-json.
  const std::string log = Write("cluster_job_log", kPhillyJson);
  EXPECT_EQ(Claimants(log), (std::vector<std::string>{"native-json", "philly-json"}));
  EXPECT_EQ(LoadTrace(log).format, "philly-json");
}

TEST_F(TraceReader, NativeHeadersStillGoToTheNativeReader) {
  for (const std::string header :
       {"job_id,submit_time,gpus,duration", "job_id,submit_time,gpus,duration,user,vc,status",
        "duration,gpus,job_id,submit_time,gpu_type,walltime"}) {
    const std::string path = Write("n.csv", header + "\n");
    EXPECT_EQ(Claimants(path), std::vector<std::string>{"native"}) << header;
  }
  const Trace trace = LoadTrace(Write("n.csv", "job_id,submit_time,gpus,duration,vc\na,0,1,5,x\n"));
  EXPECT_EQ(trace.format, "native");
}

// ---------------------------------------------------------------- malformed files

TEST_F(TraceReader, MalformedCsvRowsNameLineColumnAndWhatWasExpected) {
  const std::string philly = "timestamp,duration,num_gpus,gpu_time,cluster\n";
  // Truncated line: "2017-10-09 07:01:55,66.0,1,66.0" is 31 characters; reported at column 32.
  std::string e = ErrorOf(philly + "2017-10-09 07:01:55,66.0,1,66.0\n");
  EXPECT_NE(e.find("t.csv:2:32: missing field(s): expected 5 fields (cluster is missing)"),
            std::string::npos)
      << e;
  // Extra field at column 40.
  e = ErrorOf(philly + "2017-10-09 07:01:55,66.0,1,66.0,11cb48,x\n");
  EXPECT_NE(e.find("t.csv:2:40: extra field"), std::string::npos) << e;
  // Non-numeric num_gpus at column 26.
  e = ErrorOf(philly + "2017-10-09 07:01:55,66.0,x,66.0,11cb48\n");
  EXPECT_NE(e.find("t.csv:2:26: num_gpus: expected an integer"), std::string::npos) << e;
  // Malformed timestamp (no seconds) at column 1 of line 3.
  e = ErrorOf(philly + "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n2017-10-09 07:01,1,1,1,a\n");
  EXPECT_NE(e.find("t.csv:3:1: timestamp: expected a time YYYY-MM-DD HH:MM:SS"), std::string::npos)
      << e;
  // Impossible date.
  EXPECT_NE(ErrorOf(philly + "2017-02-30 00:00:00,1,1,1,a\n").find("t.csv:2:1:"),
            std::string::npos);
  // Negative duration at column 21.
  e = ErrorOf(philly + "2017-10-09 07:01:55,-5,1,-5,11cb48\n");
  EXPECT_NE(e.find("t.csv:2:21: duration: expected a value >= 0"), std::string::npos) << e;
  // A header lacking a required column.
  e = ErrorOf("timestamp,duration,num_gpus,gpu_time\n");
  EXPECT_NE(e.find("t.csv:1:1: header lacks the required column \"cluster\""), std::string::npos)
      << e;
  // Unterminated quote at column 33.
  e = ErrorOf(philly + "2017-10-09 07:01:55,66.0,1,66.0,\"11cb48\n");
  EXPECT_NE(e.find("t.csv:2:33: unterminated quoted field"), std::string::npos) << e;

  const std::string helios =
      "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,"
      "queue\n";
  // gpu_num "four" at column 8.
  e = ErrorOf(helios + "1,u,vc,four,1,1,COMPLETED,2020-06-09 18:41:01,,,5,0\n");
  EXPECT_NE(e.find("t.csv:2:8: gpu_num: expected an integer"), std::string::npos) << e;
  e = ErrorOf(helios + "1,u,vc,1,1,1,COMPLETED,2020-06-09,,,5,0\n");
  EXPECT_NE(e.find("t.csv:2:24: submit_time: expected a time"), std::string::npos) << e;
  e = ErrorOf(helios + "1,u,vc,1,1,1,COMPLETED,2020-06-09 18:41:01,,,5\n");
  EXPECT_NE(e.find("(queue is missing)"), std::string::npos) << e;

  const std::string acme =
      "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,"
      "queue,gpu_time\n";
  // A zone offset of one digit is not a zone: column 26.
  e = ErrorOf(acme + "1,u,1,8,128,Other,FAILED,2023-03-01 00:18:22+8,,,117,32,936.0\n");
  EXPECT_NE(e.find("t.csv:2:26: submit_time: expected a time"), std::string::npos) << e;

  // openb: a share of one GPU above 1000, several GPUs sharing, times out of order, a model
  // outside the openb list, the time-less multigpu50 list.
  e = ErrorOf(std::string(kOpenbHeader) + "p,1000,1,1,1500,,LS,Running,0,10,0\n");
  EXPECT_NE(e.find("t.csv:2:12: gpu_milli: expected an integer in [0, 1000]"), std::string::npos)
      << e;
  e = ErrorOf(std::string(kOpenbHeader) + "p,1000,1,2,500,,LS,Running,0,10,0\n");
  EXPECT_NE(e.find("t.csv:2:12: gpu_milli: expected 1000 for a pod of 2 GPUs"), std::string::npos)
      << e;
  e = ErrorOf(std::string(kOpenbHeader) + "p,1000,1,1,500,,LS,Running,20,10,20\n");
  EXPECT_NE(e.find("t.csv:2:31: deletion_time: expected a time >= scheduled_time"),
            std::string::npos)
      << e;
  e = ErrorOf(std::string(kOpenbHeader) + "p,1000,1,1,500,T4|K80,LS,Running,0,10,0\n");
  EXPECT_NE(e.find("t.csv:2:16: gpu_spec: unknown GPU model \"K80\""), std::string::npos) << e;
  e = ErrorOf("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nopenb-pod-0000,12000,16384,1,1000\n");
  EXPECT_NE(e.find("t.csv:1:1: this openb pod list has no creation_time/deletion_time"),
            std::string::npos)
      << e;
}

TEST_F(TraceReader, MalformedSwfLinesNameLineColumnAndWhatWasExpected) {
  const std::string header = "; Version: 2\n; MaxProcs: 128\n";
  // 17 fields: the think time is missing; reported after the end of the line.
  std::string e = ErrorOf(header + "1 0 -1 10 4 -1 -1 4 100 -1 1 3 2 -1 0 -1 -1\n", "t.swf");
  EXPECT_NE(e.find("t.swf:3:44: missing field(s): expected 18 whitespace-separated fields (field "
                   "18, think time, is missing)"),
            std::string::npos)
      << e;
  e = ErrorOf(header + "1 0 -1 10 4 -1 -1 4 100 -1 1 3 2 -1 0 -1 -1 -1 7\n", "t.swf");
  EXPECT_NE(e.find("t.swf:3:48: extra field"), std::string::npos) << e;
  // Non-numeric run time at column 8.
  e = ErrorOf(header + "1 0 -1 ten 4 -1 -1 4 100 -1 1 3 2 -1 0 -1 -1 -1\n", "t.swf");
  EXPECT_NE(e.find("t.swf:3:8: field 4 (run time): expected a number"), std::string::npos) << e;
  // Unknown status code 7 at column 28.
  e = ErrorOf(header + "1 0 -1 10 4 -1 -1 4 100 -1 7 3 2 -1 0 -1 -1 -1\n", "t.swf");
  EXPECT_NE(e.find("t.swf:3:28: field 11 (status): expected -1, 0, 1, 2, 3, 4 or 5"),
            std::string::npos)
      << e;
  // Negative submit time at column 3.
  e = ErrorOf(header + "1 -5 -1 10 4 -1 -1 4 100 -1 1 3 2 -1 0 -1 -1 -1\n", "t.swf");
  EXPECT_NE(e.find("t.swf:3:3: field 2 (submit time): expected seconds >= 0"), std::string::npos)
      << e;
}

TEST_F(TraceReader, SwfKeepsUnknownRunTimesAndProcessorsAsDocumented) {
  const Trace trace = LoadTrace(Write("t.swf",
                                      "; MaxProcs: 64\n"
                                      // Allocated unknown: requested processors; requested time.
                                      "1 10 -1 100 -1 -1 -1 8 3600 -1 0 3 2 -1 0 -1 -1 -1\n"
                                      "; a comment between jobs\n"
                                      // Run time unknown -> 0; failed; 1000 KB per processor.
                                      "2 20 -1 -1 4 -1 -1 4 -1 1000 0 -1 -1 -1 0 -1 -1 -1\n"
                                      // No processors at all -> 0 GPUs (rejected by the engine).
                                      "3 30 -1 50 -1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"
                                      // Decimal fields are numbers too.
                                      "4 40.5 -1 7.25 2 1.5 -1 2 0 -1 4 -1 -1 -1 0 -1 -1 -1\n"));
  ASSERT_EQ(trace.jobs.size(), 4u);
  EXPECT_EQ(trace.jobs[0].gpus, 8);
  EXPECT_EQ(trace.jobs[0].walltime, 3600);
  EXPECT_EQ(trace.jobs[0].trace_status, "failed");
  EXPECT_EQ(trace.jobs[0].user, "3");
  EXPECT_EQ(trace.jobs[0].vc, "2");
  EXPECT_EQ(trace.jobs[1].line, 4);
  EXPECT_EQ(trace.jobs[1].duration, 0);
  EXPECT_EQ(trace.jobs[1].walltime, -1);
  EXPECT_EQ(trace.jobs[1].trace_status, "failed");
  EXPECT_EQ(trace.jobs[1].memory_mib, 4);  // ceil(1000 KB x 4 processors / 1024)
  EXPECT_EQ(trace.jobs[0].memory_mib, 0);  // -1: not given
  EXPECT_EQ(trace.jobs[2].gpus, 0);
  EXPECT_EQ(trace.jobs[2].trace_status, "completed");
  EXPECT_EQ(trace.jobs[3].submit_time, 40.5);
  EXPECT_EQ(trace.jobs[3].duration, 7.25);
  EXPECT_EQ(trace.jobs[3].walltime, -1);  // requested time 0 = not given
  EXPECT_EQ(trace.jobs[3].trace_status, "partial-failed");
}

TEST_F(TraceReader, MalformedPhillyJsonNamesLineAndColumn) {
  // A month 13 on line 3; the error points into that line.
  std::string e = ErrorOf(
      "[\n  {\"jobid\": \"a\", \"attempts\": [],\n   \"submitted_time\": "
      "\"2017-13-07 01:11:39\"}\n]\n",
      "log.json", "philly-json");
  EXPECT_NE(e.find("log.json:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("jobs[0].submitted_time: expected a time YYYY-MM-DD HH:MM:SS, got "
                   "\"2017-13-07 01:11:39\""),
            std::string::npos)
      << e;
  // Truncated file: invalid JSON at the end.
  e = ErrorOf("[\n  {\"jobid\": \"a\", \"attempts\": [\n", "log.json", "philly-json");
  EXPECT_NE(e.find("log.json:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("invalid JSON"), std::string::npos) << e;
  // Wrong types.
  e = ErrorOf("[{\"jobid\": \"a\", \"submitted_time\": \"2017-10-07 01:11:39\", \"attempts\": 5}]",
              "log.json", "philly-json");
  EXPECT_NE(e.find("log.json:1:"), std::string::npos) << e;
  EXPECT_NE(e.find("jobs[0].attempts: expected a list or null"), std::string::npos) << e;
  e = ErrorOf(
      "[{\"jobid\": \"a\", \"submitted_time\": \"2017-10-07 01:11:39\", \"attempts\": "
      "[{\"start_time\": 12}]}]",
      "log.json", "philly-json");
  EXPECT_NE(e.find("jobs[0].attempts[0].start_time: expected a time"), std::string::npos) << e;
  e = ErrorOf("[{\"jobid\": \"a\", \"submitted_time\": \"2017-10-07 01:11:39\"},\n 5]", "log.json",
              "philly-json");
  EXPECT_NE(e.find("log.json:2:3: jobs[1]: expected a job object"), std::string::npos) << e;
  e = ErrorOf("{\"jobs\": []}", "log.json", "philly-json");
  EXPECT_NE(e.find("log.json:1:1: expected a JSON list of jobs"), std::string::npos) << e;
  e = ErrorOf("[\n{\"jobid\": \"a\", \"attempts\": []}]", "log.json", "philly-json");
  EXPECT_NE(e.find("log.json:2: jobs[0] (a): missing the key \"submitted_time\""),
            std::string::npos)
      << e;
  // An attempt that ends before it starts.
  e = ErrorOf(
      "[{\"jobid\": \"a\", \"submitted_time\": \"2017-10-07 01:11:39\", \"attempts\": "
      "[{\"start_time\": \"2017-10-07 02:00:00\", \"end_time\": \"2017-10-07 01:00:00\"}]}]",
      "log.json", "philly-json");
  EXPECT_NE(e.find("jobs[0].attempts[0].end_time: expected a time >= start_time"),
            std::string::npos)
      << e;
}

TEST_F(TraceReader, MalformedPaiTablesNameTheirFileLineAndColumn) {
  const std::string path = Write("pai_job_table.csv", kPaiJobs);
  // No task table beside the job table.
  std::string e = ErrorOf(kPaiJobs, "pai_job_table.csv");
  EXPECT_NE(e.find("PAI 2020 task table not found: expected " + dir_ + "/pai_task_table.csv"),
            std::string::npos)
      << e;
  // An unknown GPU type on line 2 of the task table, column 56.
  Write("pai_task_table.csv", "j1,worker,2.0,Terminated,1020.0,2000.0,400.0,29.3,50.0,K80\n");
  e = ErrorOf(kPaiJobs, "pai_job_table.csv");
  EXPECT_NE(e.find("pai_task_table.csv:1:56: gpu_type: expected V100, V100M32, P100, T4 or MISC"),
            std::string::npos)
      << e;
  // inst_num not a number.
  Write("pai_task_table.csv", "j1,worker,two,Terminated,1020.0,2000.0,400.0,29.3,50.0,T4\n");
  e = ErrorOf(kPaiJobs, "pai_job_table.csv");
  EXPECT_NE(e.find("pai_task_table.csv:1:11: inst_num: expected an integer"), std::string::npos)
      << e;
  // A task row with 9 fields.
  Write("pai_task_table.csv", "j1,worker,2.0,Terminated,1020.0,2000.0,400.0,29.3,50.0\n");
  e = ErrorOf(kPaiJobs, "pai_job_table.csv");
  EXPECT_NE(e.find("pai_task_table.csv:1:55: missing field(s): expected 10 fields"),
            std::string::npos)
      << e;
  // A duplicate job_name in the job table.
  Write("pai_task_table.csv", "");
  e = ErrorOf(std::string(kPaiJobs) + "j1,i9,u1,Terminated,1.0,2.0\n", "pai_job_table.csv");
  EXPECT_NE(e.find("pai_job_table.csv:7:1: duplicate job_name \"j1\" (first on line 2)"),
            std::string::npos)
      << e;
  (void)path;
}

TEST_F(TraceReader, AnUnknownFormatIsReportedWithTheValidNames) {
  const std::string e = ErrorOf("foo,bar\n1,2\n");
  EXPECT_NE(e.find("t.csv:1:1: cannot detect the trace format"), std::string::npos) << e;
  EXPECT_NE(e.find("philly-csv"), std::string::npos) << e;
  EXPECT_NE(e.find("swf"), std::string::npos) << e;
}

// Every prefix of a valid file either loads or gives an InputError with a position: never
// another exception or a crash.
void ExpectSameJobs(const Trace& a, const Trace& b, const std::string& what) {
  EXPECT_EQ(a.format, b.format) << what;
  EXPECT_EQ(a.sha256, b.sha256) << what;
  ASSERT_EQ(a.jobs.size(), b.jobs.size()) << what;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const Job& x = a.jobs[i];
    const Job& y = b.jobs[i];
    const std::string at = what + " job " + std::to_string(i);
    EXPECT_EQ(x.id, y.id) << at;
    EXPECT_EQ(x.submit_time, y.submit_time) << at;
    EXPECT_EQ(x.gpus, y.gpus) << at;
    EXPECT_EQ(x.duration, y.duration) << at;
    EXPECT_EQ(x.walltime, y.walltime) << at;
    EXPECT_EQ(x.line, y.line) << at;
    EXPECT_EQ(x.gpu_type_column, y.gpu_type_column) << at;
    EXPECT_EQ(x.priority, y.priority) << at;
    EXPECT_EQ(x.batch_size, y.batch_size) << at;
    EXPECT_EQ(x.gpu_milli, y.gpu_milli) << at;
    EXPECT_EQ(x.cpu_milli, y.cpu_milli) << at;
    EXPECT_EQ(x.gpu_type, y.gpu_type) << at;
    EXPECT_EQ(x.user, y.user) << at;
    EXPECT_EQ(x.vc, y.vc) << at;
    EXPECT_EQ(x.model, y.model) << at;
    EXPECT_EQ(x.trace_status, y.trace_status) << at;
  }
}

TEST_F(TraceReader, EveryFormatReadsGzipJobForJobAsThePlainFile) {
  // Each file is compressed by the gzip program into a copy whose name does not end in .gz: the
  // readers must find gzip by its magic bytes, detect the format from the decompressed header
  // and read the same jobs, lines and content hash.
  struct Sample {
    std::string path, format;
  };
  std::vector<Sample> samples = {
      {kTraces + "/philly_default.csv", "native"},
      {kTraces + "/philly/pollux_philly.csv", ""},
      {kTraces + "/alibaba_gpu_v2023/openb_pod_list_default.csv", "openb"},
      {kTraces + "/swf/lublin_256.swf", "swf"},
      {Write("cluster_job_log", kPhillyJson), "philly-json"},
      {Write("cluster_log.csv", kHelios), "helios"},
      {Write("trace_seren.csv", kAcmeSeren), "acme"},
      {Write("jobs.json", R"({"jobs": [{"job_id": "a", "submit_time": 5, "gpus": 2,
                               "duration": 60, "user": "u"},
                              {"job_id": "b", "submit_time": 1, "gpus": 1, "duration": 7}]})"),
       "native-json"},
  };
  for (const Sample& s : samples) {
    const std::string copy =
        dir_ + "/gzip_copy_" + std::filesystem::path(s.path).filename().string();
    ASSERT_EQ(std::system(("gzip -c '" + s.path + "' > '" + copy + "'").c_str()), 0);
    const Trace plain = LoadTrace(s.path);
    const Trace gz = LoadTrace(copy);
    if (!s.format.empty()) {
      EXPECT_EQ(gz.format, s.format) << s.path;
    }
    EXPECT_GT(gz.jobs.size(), 0u) << s.path;
    ExpectSameJobs(plain, gz, s.path);
  }
  // PAI: both tables gzipped, the task table found beside the job table with its .gz name; and
  // the headerless job table still recognised by its (gzip) name.
  const std::string jobs = Write("pai_job_table.csv", kPaiJobs);
  Write("pai_task_table.csv", kPaiTasks);
  const Trace plain = LoadTrace(jobs);
  ASSERT_EQ(std::system(("cd '" + dir_ + "' && gzip pai_job_table.csv pai_task_table.csv").c_str()),
            0);
  ExpectSameJobs(plain, LoadTrace(jobs + ".gz"), "pai2020");
}

TEST_F(TraceReader, FailureTracesAndOpenbNodeListsReadGzipToo) {
  auto gzip_copy = [&](const std::string& path) {
    const std::string copy = path + ".copy";  // no .gz: found by its magic bytes
    EXPECT_EQ(std::system(("gzip -c '" + path + "' > '" + copy + "'").c_str()), 0);
    return copy;
  };
  const HardwareCatalog& catalog = HardwareCatalog::Default();
  const Cluster cluster(ClusterSpec::Load("dgx-a100", catalog), catalog);
  const std::string failures =
      Write("failures.csv", "time,node,duration,gpu\n10,0,50,\n5,3,20,7\n");
  const std::vector<FailureRecord> plain = LoadFailureTrace(failures, cluster);
  const std::vector<FailureRecord> gz = LoadFailureTrace(gzip_copy(failures), cluster);
  ASSERT_EQ(plain.size(), 2u);
  ASSERT_EQ(gz.size(), plain.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(gz[i].time, plain[i].time);
    EXPECT_EQ(gz[i].node, plain[i].node);
    EXPECT_EQ(gz[i].gpu, plain[i].gpu);
    EXPECT_EQ(gz[i].duration, plain[i].duration);
    EXPECT_EQ(gz[i].line, plain[i].line);
  }
  const std::string nodes = dir_ + "/node_list.csv";
  std::filesystem::copy_file(kTraces + "/alibaba_gpu_v2023/openb_node_list_gpu_node.csv", nodes,
                             std::filesystem::copy_options::overwrite_existing);
  const std::map<std::string, std::string> map = {{"G2", "A100-40GB"}, {"G3", "V100-32GB"}};
  const OpenbClusterResult a = OpenbNodeListToClusterSpec(nodes, map, catalog);
  const OpenbClusterResult b = OpenbNodeListToClusterSpec(gzip_copy(nodes), map, catalog);
  EXPECT_EQ(a.spec_json, b.spec_json);
  EXPECT_EQ(a.gpus, b.gpus);
  EXPECT_EQ(a.gpu_nodes, 1213);  // README: 1213 GPU nodes, 6212 GPUs
  EXPECT_EQ(a.gpus, 6212);
}

TEST_F(TraceReader, TruncatedGzipTracesAreErrorsNamingTheLineReached) {
  std::string text = "job_id,submit_time,gpus,duration\n";
  for (int i = 0; i < 20000; ++i) {
    text += "j" + std::to_string(i) + "," + std::to_string(i * 37 % 1009) + ",1," +
            std::to_string(i % 997) + "\n";
  }
  const std::string plain = Write("whole.csv", text);
  ASSERT_EQ(std::system(("gzip -c '" + plain + "' > '" + dir_ + "/whole.csv.gz'").c_str()), 0);
  std::ifstream in(dir_ + "/whole.csv.gz", std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string gz = bytes.str();
  const std::string cut = dir_ + "/cut.csv.gz";
  std::ofstream(cut, std::ios::binary) << gz.substr(0, gz.size() * 2 / 3);
  for (const char* format : {"", "native"}) {
    try {
      LoadTrace(cut, format);
      ADD_FAILURE() << "a truncated gzip file loaded";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.file(), cut);
      EXPECT_GT(e.line(), 1) << what;  // the line the data stopped in
      EXPECT_NE(what.find("the gzip data ends early (truncated file?)"), std::string::npos) << what;
    }
  }
}

TEST_F(TraceReader, TruncatedFilesNeverCrash) {
  struct Sample {
    std::string name, format, text;
  };
  std::vector<Sample> samples = {
      {"cluster_job_log", "philly-json", kPhillyJson},
      {"cluster_log.csv", "helios", kHelios},
      {"trace_seren.csv", "acme", kAcmeSeren},
      {"o.csv", "openb",
       std::string(kOpenbHeader) + "p0,6000,12288,1,460,V100M16|T4,LS,Running,0,"
                                   "100,0\np1,1,1,0,0,,BE,Pending,5,9,\n"},
      {"t.swf", "swf", "; MaxProcs: 8\n1 10 -1 100 4 -1 -1 8 3600 -1 0 3 2 -1 0 -1 -1 -1\n"},
      {"p.csv", "philly-csv",
       "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"},
  };
  Write("pai_task_table.csv", kPaiTasks);
  samples.push_back({"pai_job_table.csv", "pai2020", kPaiJobs});
  for (const Sample& s : samples) {
    for (size_t n = 0; n <= s.text.size(); ++n) {
      const std::string path = Write(s.name, s.text.substr(0, n));
      try {
        LoadTrace(path, s.format);
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << s.format << " prefix " << n << ": " << e.what();
      }
    }
  }
}

// ---------------------------------------------------------------- recorded schedules

void ExpectRecord(const Job& job, double start, double end) {
  EXPECT_DOUBLE_EQ(job.recorded_start, start) << job.id;
  EXPECT_DOUBLE_EQ(job.recorded_end, end) << job.id;
}
void ExpectNoRecord(const Job& job) {
  EXPECT_FALSE(job.has_recorded_start()) << job.id;
  EXPECT_FALSE(job.has_recorded_end()) << job.id;
}

TEST_F(TraceReader, PhillyJsonKeepsEveryAttemptAsTheRecordedSchedule) {
  // Origin: application_2's submission, 2017-10-07 01:11:00.
  const Trace trace = LoadTrace(Write("cluster_job_log", kPhillyJson), "philly-json");
  ExpectNoRecord(Find(trace, "application_2"));  // no attempts
  // Attempts 01:12:09-01:13:23 and 01:13:30-10-09 06:53:12 (+ 2 d 05:39:42 = 193182 s), 8 GPUs.
  const Job& two = Find(trace, "application_1506638472019_14199");
  ExpectRecord(two, 69, 150 + 193182);
  ASSERT_EQ(two.recorded_attempt_count, 2u);
  const RecordedAttempt* a = &trace.recorded_attempts[two.recorded_attempt_begin];
  EXPECT_DOUBLE_EQ(a[0].start, 69);
  EXPECT_DOUBLE_EQ(a[0].end, 143);
  EXPECT_EQ(a[0].gpus, 8);
  EXPECT_DOUBLE_EQ(a[1].start, 150);
  EXPECT_DOUBLE_EQ(a[1].end, 193332);
  // The attempt with None times is not recorded; 02:00:00-02:10:00 on 3 GPUs is.
  const Job& missing = Find(trace, "application_3");
  ExpectRecord(missing, 2940, 3540);
  ASSERT_EQ(missing.recorded_attempt_count, 1u);
  EXPECT_EQ(trace.recorded_attempts[missing.recorded_attempt_begin].gpus, 3);
  // Running at the end: 10-09 00:00:00 (168540 s) to the latest time in the file, 06:53:12.
  const Job& running = Find(trace, "application_4");
  ExpectRecord(running, 168540, 193332);
  ASSERT_EQ(running.recorded_attempt_count, 1u);
  EXPECT_EQ(trace.recorded_attempts[running.recorded_attempt_begin].gpus, 4);
  EXPECT_EQ(trace.recorded_attempts.size(), 4u);

  // Filters keep each kept job's attempts with it, and only those.
  TraceFilter first_two;
  first_two.first_n = 2;  // application_2 and the two-attempt job
  const Trace kept = LoadTrace(Write("cluster_job_log2", kPhillyJson), "philly-json", first_two);
  ASSERT_EQ(kept.jobs.size(), 2u);
  ASSERT_EQ(kept.recorded_attempts.size(), 2u);
  EXPECT_EQ(kept.jobs[1].recorded_attempt_begin, 0u);
  EXPECT_DOUBLE_EQ(kept.recorded_attempts[1].end, 193332);
}

TEST_F(TraceReader, SlurmStyleLogsAndPaiRecordStartsAndEnds) {
  // Helios: origin 18:40:00; 1425511 ran 18:41:01 to 06-10 04:55:09 (61 + 36848 s).
  const Trace helios = LoadTrace(Write("cluster_log.csv", kHelios));
  ExpectRecord(Find(helios, "1425511"), 61, 61 + 36848);
  ExpectRecord(Find(helios, "1425514"), 10, 310);
  ExpectNoRecord(Find(helios, "1425515"));  // cancelled before it started
  // Acme: origin 00:18:22+08:00; started 00:18:54, ended 00:20:51.
  const Trace seren = LoadTrace(Write("trace_seren.csv", kAcmeSeren));
  ExpectRecord(Find(seren, "5778432"), 32, 149);
  // 16:30:00Z - 16:18:22Z.
  ExpectRecord(Find(seren, "5778470"), 698, 698 + 3600);
  // PAI: origin 900 (j3). j1's tasks ran 1010 to 2000; j2 is censored at 2000.
  const std::string path = Write("pai_job_table.csv", kPaiJobs);
  Write("pai_task_table.csv", kPaiTasks);
  const Trace pai = LoadTrace(path);
  ExpectRecord(Find(pai, "j1"), 110, 1100);
  ExpectRecord(Find(pai, "j2"), 700, 1100);
  ExpectRecord(Find(pai, "j3"), 50, 250);
  ExpectNoRecord(Find(pai, "j4"));
}

TEST_F(TraceReader, OpenbRecordsScheduledAndDeletionTimes) {
  const Trace trace = LoadTrace(kTraces + "/alibaba_gpu_v2023/openb_pod_list_default.csv");
  ExpectRecord(trace.jobs.front(), 0, 12537496);                   // line 2
  ExpectRecord(trace.jobs.back(), 12901762, 12901792);             // line 8153
  ExpectRecord(Find(trace, "openb-pod-0005"), 2759676, 12902960);  // line 7: waited 2 s
  // Line 63, Pending: never scheduled, deleted (withdrawn) at 10001403.
  const Job& pending = Find(trace, "openb-pod-0061");
  EXPECT_FALSE(pending.has_recorded_start());
  EXPECT_DOUBLE_EQ(pending.recorded_end, 10001403);
  int scheduled = 0;
  for (const Job& job : trace.jobs) scheduled += job.has_recorded_start();
  EXPECT_EQ(scheduled, 7255);  // awk -F, '$11 != ""' counts 7255 rows (and 897 Pending)
}

TEST_F(TraceReader, SwfRecordsKnownWaitsAndSubmitIsStartFillsTheRest) {
  const std::string path =
      Write("w.swf",
            "; a comment\n"
            "1 100 30 50 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"   // wait 30, run 50
            "2 110 -1 40 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"   // wait unknown
            "3 120 0 -1 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1\n");  // run time unknown
  const Trace trace = LoadTrace(path);
  ExpectRecord(Find(trace, "1"), 130, 180);
  ExpectNoRecord(Find(trace, "2"));
  EXPECT_DOUBLE_EQ(Find(trace, "3").recorded_start, 120);
  EXPECT_FALSE(Find(trace, "3").has_recorded_end());
  TraceFilter submit_is_start;
  submit_is_start.submit_is_start = true;
  const Trace filled = LoadTrace(path, "", submit_is_start);
  ExpectRecord(Find(filled, "1"), 130, 180);  // a recorded start is kept
  ExpectRecord(Find(filled, "2"), 110, 150);  // submit, submit + run time
  // A job with a recorded start is kept as recorded (its end stays unknown).
  EXPECT_DOUBLE_EQ(Find(filled, "3").recorded_start, 120);
  EXPECT_FALSE(Find(filled, "3").has_recorded_end());
  EXPECT_NE(submit_is_start.ToJson().find("\"submit_is_start\":true"), std::string::npos);
  EXPECT_NE(ErrorOf("1 100 -2 50 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1\n", "bad.swf")
                .find("bad.swf:1:7: field 3 (wait time): expected seconds >= 0 or -1"),
            std::string::npos);
}

TEST_F(TraceReader, TheNasaLogRecordsNoWaitsButItsSubmitTimesAreStarts) {
  const std::string path = dir_ + "/nasa.swf";
  ASSERT_EQ(
      std::system(("gzip -dc " + kTraces + "/swf/NASA-iPSC-1993-3.1-cln.swf.gz > " + path).c_str()),
      0);
  const Trace plain = LoadTrace(path);
  for (const Job& job : plain.jobs) ExpectNoRecord(job);  // wait -1 throughout
  TraceFilter submit_is_start;
  submit_is_start.submit_is_start = true;
  const Trace filled = LoadTrace(path, "", submit_is_start);
  ExpectRecord(filled.jobs.front(), 0, 1451);  // line 33: submit 0, run time 1451
  ExpectRecord(Find(filled, "57"), 25574, 25584);
}

TEST_F(TraceReader, NativeRecordedColumnsAreKeptAsGivenAndCounted) {
  const Trace trace =
      LoadTrace(Write("n.csv",
                      "job_id,submit_time,gpus,duration,recorded_start,recorded_end\n"
                      "a,0,1,10,5,15\n"
                      "b,1,1,10,,\n"
                      "c,10,1,5,4,3\n"));
  ExpectRecord(Find(trace, "a"), 5, 15);
  ExpectNoRecord(Find(trace, "b"));
  // c starts before its submission and ends before its start: kept, and counted.
  ExpectRecord(Find(trace, "c"), 4, 3);
  const std::string report = CheckTraceSanity(trace, nullptr).ToText();
  EXPECT_NE(report.find("1 recorded starts before the submission (kept as recorded) (first "
                        "lines: 4)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("1 recorded ends before the recorded start"), std::string::npos) << report;
  EXPECT_NE(ErrorOf("job_id,submit_time,gpus,duration,recorded_start\na,10,1,5,x\n")
                .find("t.csv:2:10: recorded_start"),
            std::string::npos);
  // trace convert keeps the two columns (and only writes them when some job has a record).
  const std::string converted = dir_ + "/back.csv";
  WriteNativeCsv(trace, converted);
  const Trace back = LoadTrace(converted);
  ExpectRecord(Find(back, "a"), 5, 15);
  ExpectNoRecord(Find(back, "b"));
  ExpectRecord(Find(back, "c"), 4, 3);
}

}  // namespace
}  // namespace clustersim
