// The site model (docs/cluster.md#site-model) on hand-worked schedules: partitions as node sets,
// per-user and per-group limits, run windows and drain points on a weekly calendar, downtime,
// the wall-time kill and its grace, the scheduler's cycle. Each expected time is worked out in
// the comment above it from the rules as docs/cluster.md states them.
#include <gtest/gtest.h>

#include "policies/registry.h"
#include "sim/engine/engine.h"
#include "sim/engine/faults.h"
#include "sim/engine/site_rules.h"
#include "sim/hardware/topology.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

// 2001-01-01 00:00 UTC, a Monday: the trace's time 0 for the calendar tests.
constexpr double kMonday = 978307200;
constexpr double kHour = 3600;

Job MakeJob(const std::string& id, double submit, int gpus, double duration,
            const std::string& user = "", double walltime = -1) {
  Job job;
  job.id = id;
  job.submit_time = submit;
  job.gpus = gpus;
  job.duration = duration;
  job.user = user;
  job.walltime = walltime;
  return job;
}

// A run of `policy` on the cluster spec `cluster` (with its "site"); the trace starts at
// `unix_origin` (NaN: unknown).
class SiteSim {
 public:
  SiteSim(const std::string& cluster, std::vector<Job> jobs, const std::string& policy = "fcfs",
          const std::string& placement = "first-fit", double unix_origin = kMonday,
          std::map<std::string, std::string> params = {})
      : cluster_(ClusterSpec::FromJsonText(cluster, "site-test", HardwareCatalog::Default()),
                 HardwareCatalog::Default()),
        topology_(cluster_),
        runtime_(MakeRuntimeModel("trace", cluster_, topology_)),
        params_(std::move(params)),
        placement_(FindPlacement(placement).make(
            PlacementEnv{&cluster_, &topology_, runtime_.get()}, params_)),
        policy_(FindPolicy(policy).make(params_)) {
    trace_.path = "site-test-trace";
    trace_.jobs = std::move(jobs);
    std::stable_sort(trace_.jobs.begin(), trace_.jobs.end(),
                     [](const Job& a, const Job& b) { return a.submit_time < b.submit_time; });
    trace_.unix_origin = unix_origin;
    EngineOptions options;
    options.check_invariants = true;
    engine_ = std::make_unique<Engine>(trace_, cluster_, *placement_, *runtime_, *policy_, policy,
                                       options);
  }
  Engine& Run() {
    engine_->Run();
    return *engine_;
  }
  const JobRun& Of(const std::string& id) const { return engine_->runs()[IndexOf(id)]; }
  const std::string& ReasonOf(const std::string& id) const {
    return engine_->reason(IndexOf(id));
  }
  std::string TypeOf(const std::string& id) const {
    return cluster_.catalog().gpu(Of(id).gpu_type).name;
  }
  JobId IndexOf(const std::string& id) const {
    for (size_t i = 0; i < trace_.jobs.size(); ++i) {
      if (trace_.jobs[i].id == id) return static_cast<JobId>(i);
    }
    throw std::out_of_range(id);
  }
  const Engine& engine() const { return *engine_; }

 private:
  Cluster cluster_;
  Topology topology_;
  std::unique_ptr<RuntimeModel> runtime_;
  Params params_;
  std::unique_ptr<Placement> placement_;
  std::unique_ptr<Policy> policy_;
  Trace trace_;
  std::unique_ptr<Engine> engine_;
};

// Two nodes of 4 GPUs in two partitions, a and b.
constexpr const char* kTwoPartitions = R"({"nodes":[
  {"name":"na","count":1,"gpu_type":"A100-80GB","gpus_per_node":4},
  {"name":"nb","count":1,"gpu_type":"A100-80GB","gpus_per_node":4}],
 "site":{"partitions":[{"name":"a","nodes":["na"],"default":true},
                       {"name":"b","nodes":["nb"],"names":["b","2"],"processors_per_gpu":2}]}})";

TEST(SitePartitions, AJobRunsOnlyOnItsPartitionsNodes) {
  // J1 fills a's node; J2 (partition a, 4 GPUs) must wait for it although b's node is free:
  // EASY reserves a's node at 100 for J2, and J3 (partition b) starts at 0 on b's node beside it.
  Job j1 = MakeJob("J1", 0, 4, 100, "", 100);
  j1.partition = "a";
  Job j2 = MakeJob("J2", 1, 4, 100, "", 100);
  j2.partition = "a";
  Job j3 = MakeJob("J3", 2, 4, 50, "", 50);  // 4 processors = 2 GPUs at 2 processors per GPU
  j3.partition = "2";
  SiteSim sim(kTwoPartitions, {j1, j2, j3}, "easy", "first-fit", NAN);
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("J1").first_start, 0);
  EXPECT_DOUBLE_EQ(sim.Of("J2").first_start, 100);
  EXPECT_DOUBLE_EQ(sim.Of("J3").first_start, 2);
  EXPECT_EQ(sim.Of("J3").max_gpus, 2);
  // Both node groups are A100s in different partitions: each gets a type of its own.
  EXPECT_EQ(sim.TypeOf("J1"), "A100-80GB@a");
  EXPECT_EQ(sim.TypeOf("J3"), "A100-80GB@b");
}

TEST(SitePartitions, AJobLargerThanItsPartitionIsRejectedAndAnUnknownOneRunsInTheDefault) {
  Job big = MakeJob("big", 0, 6, 10);  // 6 GPUs: no partition a node holds them
  big.partition = "a";
  Job stray = MakeJob("stray", 0, 1, 10);
  stray.partition = "nowhere";
  SiteSim sim(kTwoPartitions, {big, stray}, "fcfs", "first-fit", NAN);
  sim.Run();
  EXPECT_EQ(sim.Of("big").state, JobState::kRejected);
  EXPECT_NE(sim.ReasonOf("big").find("no placement exists"), std::string::npos);
  EXPECT_EQ(sim.TypeOf("stray"), "A100-80GB@a");
  ASSERT_EQ(sim.engine().site()->warnings().size(), 1u);
  EXPECT_NE(sim.engine().site()->warnings()[0].find("1 jobs name partitions the site does not "
                                                    "model (nowhere: 1)"),
            std::string::npos);
}

constexpr const char* kOneNodeCapOne = R"({"nodes":[{"count":1,"gpu_type":"A100-80GB",
  "gpus_per_node":4}], "site":{"user_limits":[{"max_running_jobs":1}]}})";

TEST(SiteLimits, AUserAtTheRunningJobLimitWaitsWhileOthersPass) {
  // u's U1 runs [0, 100); U2 (t = 0) is held by u's limit of 1 running job, so fcfs passes over
  // it and starts V1 at 10; U2 starts when U1 ends, at 100.
  SiteSim sim(kOneNodeCapOne,
              {MakeJob("U1", 0, 1, 100, "u"), MakeJob("U2", 0, 1, 50, "u"),
               MakeJob("V1", 10, 1, 10, "v")},
              "fcfs", "first-fit", NAN);
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("U1").first_start, 0);
  EXPECT_DOUBLE_EQ(sim.Of("V1").first_start, 10);
  EXPECT_DOUBLE_EQ(sim.Of("U2").first_start, 100);
}

TEST(SiteLimits, ALimitInForceForAPeriodEndsWithIt) {
  // The limit holds until t = 50: U2 starts then, not at U1's end (100).
  SiteSim sim(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}],
                  "site":{"user_limits":[{"max_running_jobs":1,"until":50}]}})",
              {MakeJob("U1", 0, 1, 100, "u"), MakeJob("U2", 0, 1, 50, "u")}, "fcfs",
              "first-fit", NAN);
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("U2").first_start, 50);
}

TEST(SiteLimits, GpuAndGroupLimitsAndTheSubmitLimit) {
  // u may hold 3 GPUs: U1 (2) runs [0, 100), U2 (2) waits until 100. Group g may run 1 job:
  // G2 waits for G1 (ends 30). u may have 2 jobs in the system: U3, submitted while U1 and U2
  // are there, is rejected at submission.
  Job g1 = MakeJob("G1", 0, 1, 30, "x");
  g1.vc = "g";
  Job g2 = MakeJob("G2", 0, 1, 30, "y");
  g2.vc = "g";
  SiteSim sim(R"({"nodes":[{"count":2,"gpu_type":"A100-80GB","gpus_per_node":4}],
                  "site":{"user_limits":[{"max_gpus":3,"max_jobs":2,"names":["u"]}],
                          "group_limits":[{"max_running_jobs":1}]}})",
              {MakeJob("U1", 0, 2, 100, "u"), MakeJob("U2", 0, 2, 50, "u"),
               MakeJob("U3", 5, 1, 10, "u"), g1, g2},
              "fcfs", "first-fit", NAN);
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("U1").first_start, 0);
  EXPECT_DOUBLE_EQ(sim.Of("U2").first_start, 100);
  EXPECT_DOUBLE_EQ(sim.Of("G1").first_start, 0);
  EXPECT_DOUBLE_EQ(sim.Of("G2").first_start, 30);
  EXPECT_EQ(sim.Of("U3").state, JobState::kRejected);
  EXPECT_NE(sim.ReasonOf("U3").find("max_jobs"), std::string::npos);
}

// Days 07-16 allow 4 h, nights 15 h; no job runs across a 07:00 or a 16:00.
constexpr const char* kWindows = R"({"nodes":[{"count":1,"gpu_type":"A100-80GB",
  "gpus_per_node":4}], "site":{"partitions":[{"name":"p",
    "run_windows":[{"days":"all","start":"07:00","end":"16:00","max_time":"4h"},
                   {"days":"all","start":"16:00","end":"07:00","max_time":"15h"}],
    "drains":[{"days":"all","at":["07:00","16:00"]}]}], "walltime":{"kill":false}}})";

TEST(SiteRunWindows, AJobStartsOnlyInAWindowThatAllowsItsWallTime) {
  // Monday. A (08:00, 5 h requested) exceeds the day's 4 h: it starts at 16:00, in the night
  // window (15 h); 16:00 + 5 h = 21:00 crosses no drain point. B (14:00, 3 h) fits the day's
  // 4 h but would run across 16:00: it waits for 16:00 too. C (14:00, 1 h) starts at once.
  SiteSim sim(kWindows,
              {MakeJob("A", 8 * kHour, 1, 1000, "", 5 * kHour),
               MakeJob("B", 14 * kHour, 1, 1000, "", 3 * kHour),
               MakeJob("C", 14 * kHour, 1, 1000, "", 1 * kHour)});
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("A").first_start, 16 * kHour);
  EXPECT_DOUBLE_EQ(sim.Of("B").first_start, 16 * kHour);
  EXPECT_DOUBLE_EQ(sim.Of("C").first_start, 14 * kHour);
}

TEST(SiteRunWindows, AJobNoWindowEverAllowsIsRejected) {
  // 20 h: more than every window (15 h at most) and than the longest stretch between drain
  // points (16:00 to 07:00, 15 h).
  SiteSim sim(kWindows, {MakeJob("D", 0, 1, 10, "", 20 * kHour)});
  sim.Run();
  EXPECT_EQ(sim.Of("D").state, JobState::kRejected);
  EXPECT_NE(sim.ReasonOf("D").find("never allow more than 15 h"), std::string::npos);
}

TEST(SiteRunWindows, CalendarsNeedTheTracesStartDate) {
  EXPECT_THROW(SiteSim(kWindows, {MakeJob("A", 0, 1, 10)}, "fcfs", "first-fit", NAN),
               InputError);
}

TEST(SiteDowntime, NoJobStartsInADowntimeNorRunsIntoIt) {
  // Down [100, 200). J1 (t = 0, 50 s requested) ends by 100: starts at 0. J2 (t = 0, 150 s)
  // would reach into the downtime: starts at 200. J3 (t = 120) starts at 200 too.
  SiteSim sim(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}],
                  "site":{"downtime":[{"start":100,"end":200}]}})",
              {MakeJob("J1", 0, 1, 50, "", 50), MakeJob("J2", 0, 1, 50, "", 150),
               MakeJob("J3", 120, 1, 10, "", 10)},
              "fcfs", "first-fit", NAN);
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("J1").first_start, 0);
  EXPECT_DOUBLE_EQ(sim.Of("J2").first_start, 200);
  EXPECT_DOUBLE_EQ(sim.Of("J3").first_start, 200);
}

TEST(SiteWalltime, JobsAreKilledAtTheirRequestedTimePlusTheGraceOrNotAtAll) {
  // 100 s of work, 60 s requested: with a 10 s grace the job is killed at 70; without kills it
  // runs its 100 s.
  const std::vector<Job> jobs = {MakeJob("J", 0, 1, 100, "", 60)};
  SiteSim grace(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}],
                    "site":{"walltime":{"kill":true,"grace":10}}})",
                jobs, "fcfs", "first-fit", NAN);
  grace.Run();
  EXPECT_EQ(grace.Of("J").state, JobState::kTimeout);
  EXPECT_DOUBLE_EQ(grace.Of("J").end_time, 70);
  SiteSim none(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}],
                   "site":{"walltime":{"kill":false}}})",
               jobs, "fcfs", "first-fit", NAN);
  none.Run();
  EXPECT_EQ(none.Of("J").state, JobState::kCompleted);
  EXPECT_DOUBLE_EQ(none.Of("J").end_time, 100);
}

TEST(SiteScheduler, APollingSchedulerStartsJobsAtItsCycles) {
  // Cycle 60 s: J1 submitted at 10 starts at 60. With on_submit the submission is a pass: 10.
  const std::vector<Job> jobs = {MakeJob("J1", 10, 1, 5)};
  SiteSim cycle(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}],
                    "site":{"scheduler":{"cycle":60}}})",
                jobs, "fcfs", "first-fit", NAN);
  cycle.Run();
  EXPECT_DOUBLE_EQ(cycle.Of("J1").first_start, 60);
  SiteSim submit(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}],
                     "site":{"scheduler":{"cycle":60,"on_submit":true}}})",
                 jobs, "fcfs", "first-fit", NAN);
  submit.Run();
  EXPECT_DOUBLE_EQ(submit.Of("J1").first_start, 10);
}

TEST(SiteScheduler, AJobStartsNoEarlierThanItsDrawnLatency) {
  // The latency of the only job is the first exponential draw of the run's seed stream
  // (seed 0 here), mean 30 s: it starts at submission + that draw.
  SiteSim sim(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}],
                  "site":{"scheduler":{"latency":30}}})",
              {MakeJob("J1", 100, 1, 5)}, "fcfs", "first-fit", NAN);
  sim.Run();
  ExponentialSource draws(uint64_t{0} ^ 0x5C4EDu);
  EXPECT_DOUBLE_EQ(sim.Of("J1").first_start, 100 + draws.Next(30));
}

TEST(SiteScheduler, TheLatencyHoldsWhenTheSiteHasADowntimeToo) {
  // As above, with a downtime far ahead (from 100,000): J1 (5 s) still starts at 100 + its
  // latency, long before the downtime, not at the downtime's end.
  SiteSim sim(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}],
                  "site":{"scheduler":{"latency":30},
                          "downtime":[{"start":100000,"end":100100}]}})",
              {MakeJob("J1", 100, 1, 5)}, "fcfs", "first-fit", NAN);
  sim.Run();
  ExponentialSource draws(uint64_t{0} ^ 0x5C4EDu);
  EXPECT_DOUBLE_EQ(sim.Of("J1").first_start, 100 + draws.Next(30));
}

TEST(SiteScheduler, UnderACycleBackfillingPromisesAreEstimates) {
  // 1 GPU, cycle 60 s. A (t = 5, 100 s) starts at the pass at 60 and ends at 160; B (t = 10,
  // 50 s) is promised A's end, 160, but the next pass is at 180: B starts then. The engine's
  // promise check (--check) does not hold a start the cycle delays against its promise.
  for (const char* policy : {"easy", "conservative"}) {
    SiteSim sim(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":1}],
                    "site":{"scheduler":{"cycle":60}}})",
                {MakeJob("A", 5, 1, 100, "", 100), MakeJob("B", 10, 1, 50, "", 50)}, policy,
                "first-fit", NAN);
    sim.Run();
    EXPECT_DOUBLE_EQ(sim.Of("A").first_start, 60) << policy;
    EXPECT_DOUBLE_EQ(sim.Of("B").first_start, 180) << policy;
    EXPECT_DOUBLE_EQ(sim.engine().promised_start(sim.IndexOf("B")), 160) << policy;
  }
}

TEST(SiteLimits, ARuleNotYetInForceRejectsNothing) {
  // From t = 1000 u may run no job, and no window allows more than 1 h. J1 (t = 0, 2 h
  // requested, 10 s) may start before both: it runs [0, 10]. J2 (t = 2000) is rejected: both
  // rules are in force for ever then.
  const std::string rules = R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}],
      "site":{"user_limits":[{"max_running_jobs":0,"from":1000}],
              "partitions":[{"name":"p","run_windows":[{"days":"all","max_time":"1h",
                                                        "from":1000}]}]}})";
  SiteSim sim(rules,
              {MakeJob("J1", 0, 1, 10, "u", 2 * kHour), MakeJob("J2", 2000, 1, 10, "u", 600)});
  sim.Run();
  EXPECT_EQ(sim.Of("J1").state, JobState::kCompleted) << sim.ReasonOf("J1");
  EXPECT_DOUBLE_EQ(sim.Of("J1").first_start, 0);
  EXPECT_EQ(sim.Of("J2").state, JobState::kRejected);
  EXPECT_NE(sim.ReasonOf("J2").find("allows no running job"), std::string::npos)
      << sim.ReasonOf("J2");
}

TEST(SitePolicies, ASubmissionLimitAloneHoldsUnderEveryPolicy) {
  // max_jobs acts at submission: sjf runs with it. u may have 1 job in the system: U2,
  // submitted while U1 runs, is rejected.
  SiteSim sim(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}],
                  "site":{"user_limits":[{"max_jobs":1}]}})",
              {MakeJob("U1", 0, 1, 100, "u"), MakeJob("U2", 5, 1, 10, "u")}, "sjf", "first-fit",
              NAN);
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("U1").first_start, 0);
  EXPECT_EQ(sim.Of("U2").state, JobState::kRejected);
  EXPECT_NE(sim.ReasonOf("U2").find("max_jobs"), std::string::npos);
}

TEST(SitePolicies, APolicyThatDoesNotAskMayStartIsRefusedWhenTheSiteHasLimits) {
  EXPECT_THROW(SiteSim(kOneNodeCapOne, {MakeJob("J", 0, 1, 5, "u")}, "sjf", "first-fit", NAN),
               InputError);
}

}  // namespace
}  // namespace clustersim
