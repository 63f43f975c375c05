// `clustersim site-from` (workloads/site_inference.h) on a synthetic log whose site is known: the
// log is the schedule clustersim itself produced on a site model with whole-node jobs on 8 nodes
// of 8 processors, a per-user limit of 3 running jobs, one 10-hour downtime and wall-time kills
// after a 60 s grace. The inference must find each of them from the recorded schedule alone.
#include "workloads/site_inference.h"

#include <gtest/gtest.h>

#include <random>

#include "policies/registry.h"
#include "sim/engine/engine.h"
#include "sim/hardware/topology.h"
#include "sim/util/error.h"
#include "workloads/transforms.h"

namespace clustersim {
namespace {

constexpr double kHour = 3600;
constexpr double kDowntimeStart = 10 * 86400;  // day 10
constexpr double kDowntimeEnd = kDowntimeStart + 10 * kHour;

constexpr const char* kKnownSite = R"({"nodes":[{"name":"n","count":8,"gpu_type":"A100-80GB",
  "gpus_per_node":1}],
 "site":{"partitions":[{"name":"batch","processors_per_gpu":8}],
         "user_limits":[{"max_running_jobs":3}],
         "downtime":[{"start":864000,"end":900000}],
         "walltime":{"kill":true,"grace":60}}})";

// Six users submitting 8, 16 and 32-processor jobs of 1 to 4 hours (requested: the next whole
// hour; one job in ten runs 30 min past it and is killed) for 30 days, more than the machine
// can run: it is full whenever nothing stops it.
std::vector<Job> SyntheticJobs() {
  std::mt19937_64 rng(7);
  std::vector<Job> jobs;
  double t = 0;
  for (int i = 0; t < 30 * 86400; ++i) {
    t += std::uniform_real_distribution<double>(0, 1200)(rng);
    Job job;
    job.id = std::to_string(i + 1);
    job.submit_time = std::floor(t);
    job.gpus = 8 << std::uniform_int_distribution<int>(0, 2)(rng);  // processors
    const double hours = std::uniform_real_distribution<double>(1, 4)(rng);
    job.walltime = std::ceil(hours) * kHour;
    job.duration = std::floor(hours * kHour);
    if (i % 10 == 0) job.duration = job.walltime + 1800;
    job.user = "u" + std::to_string(std::uniform_int_distribution<int>(0, 5)(rng));
    jobs.push_back(job);
  }
  return jobs;
}

// Replays the jobs on the known site and returns the log a site would have recorded: each
// job's start and end, its run time (as long as it ran) and what it requested.
Trace RecordedLog() {
  const Cluster cluster(ClusterSpec::FromJsonText(kKnownSite, "known", HardwareCatalog::Default()),
                        HardwareCatalog::Default());
  const Topology topology(cluster);
  const auto runtime = MakeRuntimeModel("trace", cluster, topology);
  const auto placement =
      FindPlacement("pool").make(PlacementEnv{&cluster, &topology, runtime.get()}, Params());
  const auto policy = FindPolicy("easy").make(Params());
  Trace trace;
  trace.path = "synthetic";
  trace.jobs = SyntheticJobs();
  trace.unix_origin = 978307200;  // 2001-01-01
  Engine engine(trace, cluster, *placement, *runtime, *policy, "easy", EngineOptions());
  engine.Run();
  Trace log = trace;
  for (size_t i = 0; i < log.jobs.size(); ++i) {
    const JobRun& run = engine.runs()[i];
    EXPECT_GE(run.first_start, 0) << "job " << log.jobs[i].id << " never ran";
    log.jobs[i].recorded_start = run.first_start;
    log.jobs[i].recorded_end = run.end_time;
    log.jobs[i].duration = run.end_time - run.first_start;
  }
  return log;
}

TEST(SiteFrom, FindsTheSizeDowntimeKillsAndUserLimitOfAKnownSite) {
  const Trace log = RecordedLog();
  LogHeader header;
  header.max_procs = 64;
  header.max_nodes = 8;
  const InferredSite site = InferSite(log, header, SiteInferenceOptions());
  ASSERT_EQ(site.pools.size(), 1u);
  EXPECT_EQ(site.pools[0].nodes, 8);
  EXPECT_EQ(site.pools[0].node_size, 8);
  EXPECT_TRUE(site.pools[0].whole_nodes);
  EXPECT_EQ(site.pools[0].peak_processors, 64);
  // The one downtime: it ends when the site came back, and starts when the last job before it
  // ended (the site drained: no job may run into a downtime), at most a longest requested
  // time (4 h) before it.
  ASSERT_EQ(site.downtimes.size(), 1u);
  EXPECT_DOUBLE_EQ(site.downtimes[0].end, kDowntimeEnd);
  EXPECT_LE(site.downtimes[0].start, kDowntimeStart);
  EXPECT_GE(site.downtimes[0].start, kDowntimeStart - 4 * kHour);
  EXPECT_GT(site.downtimes[0].waiting, 0);
  // Killed 60 s after the requested time: every overrun is exactly the grace.
  EXPECT_TRUE(site.kill);
  EXPECT_DOUBLE_EQ(site.grace_seconds, 60);
  ASSERT_EQ(site.caps.size(), 1u);
  EXPECT_EQ(site.caps[0].max_running_jobs, 3);
  EXPECT_GE(site.caps[0].users_at_cap, 3);
  // The spec it writes loads, and holds what was found.
  const ClusterSpec spec = ClusterSpec::FromJsonText(SiteSpecJson(site, SiteInferenceOptions()),
                                                     "inferred", HardwareCatalog::Default());
  ASSERT_EQ(spec.site.partitions.size(), 1u);
  EXPECT_EQ(spec.site.partitions[0].processors_per_gpu, 8);
  EXPECT_EQ(spec.groups[0].count, 8);
  ASSERT_EQ(spec.site.user_limits.size(), 1u);
  EXPECT_EQ(spec.site.user_limits[0].limits.max_running_jobs, 3);
  EXPECT_DOUBLE_EQ(spec.site.over_time_limit_seconds, 60);
}

// One processor. A runs [0, 10 h); B, submitted at 1 h, waits until 30 h (C, submitted at 20 h,
// runs [20 h, 30 h) first); D, submitted at 21 h, runs [31 h, 32 h). Nothing runs in
// [10 h, 20 h) while B waits: a downtime of 10 h. Split at half the jobs, the earlier part is A
// and B (the split is C's submission, 20 h): its record is whole only before 20 h, where the same
// downtime ends. Read without that bound, A and B alone would show nothing running from 10 h to
// B's start at 30 h, a downtime over the 10 hours in which C ran.
TEST(SiteFrom, TheEarlierPartOfASplitLogSeesOnlyTheUseRecordedBeforeTheSplit) {
  Trace log;
  auto add = [&](const char* id, double submit, double start, double end) {
    Job job;
    job.id = id;
    job.submit_time = submit * kHour;
    job.gpus = 1;
    job.duration = (end - start) * kHour;
    job.recorded_start = start * kHour;
    job.recorded_end = end * kHour;
    log.jobs.push_back(job);
  };
  add("A", 0, 0, 10);
  add("B", 1, 30, 31);
  add("C", 20, 20, 30);
  add("D", 21, 31, 32);
  LogHeader header;
  header.max_procs = 1;
  header.max_nodes = 1;
  const InferredSite whole = InferSite(log, header, SiteInferenceOptions());
  ASSERT_EQ(whole.downtimes.size(), 1u);
  EXPECT_DOUBLE_EQ(whole.downtimes[0].start, 10 * kHour);
  EXPECT_DOUBLE_EQ(whole.downtimes[0].end, 20 * kHour);

  const double split = SplitTime(log, 0.5, "hand-made");
  EXPECT_DOUBLE_EQ(split, 20 * kHour);
  Trace earlier = log;
  TraceFilter before_split;
  before_split.window_end = split;
  ApplyFilter(before_split, &earlier);
  ASSERT_EQ(earlier.jobs.size(), 2u);
  SiteInferenceOptions options;
  options.observed_until = split;
  const InferredSite site = InferSite(earlier, header, options);
  ASSERT_EQ(site.downtimes.size(), 1u);
  EXPECT_DOUBLE_EQ(site.downtimes[0].start, 10 * kHour);
  EXPECT_DOUBLE_EQ(site.downtimes[0].end, 20 * kHour);
  EXPECT_EQ(site.downtimes[0].waiting, 1);  // B
}

TEST(SiteFrom, ASplitNeedsTwoJobsAndAnEarlierPart) {
  Trace log;
  for (int i = 0; i < 2; ++i) {
    Job job;
    job.id = std::to_string(i);
    job.submit_time = 100;
    log.jobs.push_back(job);
  }
  EXPECT_THROW(SplitTime(log, 0.5, "x"), InputError);  // both at the split time
  EXPECT_THROW(SplitTime(log, 1.0, "x"), InputError);
  log.jobs.resize(1);
  EXPECT_THROW(SplitTime(log, 0.5, "x"), InputError);
}

TEST(SiteFrom, ASiteThatNeverKilledIsToldApart) {
  // Runs far past the requested time (8 h in all, a third of the overruns): no kill.
  Trace log;
  for (int i = 0; i < 30; ++i) {
    Job job;
    job.id = std::to_string(i);
    job.submit_time = i * 100.0;
    job.gpus = 1;
    job.walltime = 3600;
    job.duration = i % 3 == 0 ? 3600 + 8 * kHour : 3600 + 10;
    job.recorded_start = job.submit_time;
    job.recorded_end = job.submit_time + job.duration;
    log.jobs.push_back(job);
  }
  const InferredSite site = InferSite(log, LogHeader(), SiteInferenceOptions());
  EXPECT_FALSE(site.kill);
}

// A job of the record: submitted, started and ended as given, on `gpus` processors.
Job RecordedJob(const std::string& id, const std::string& partition, double submit, double start,
                double end, int gpus = 1) {
  Job job;
  job.id = id;
  job.partition = partition;
  job.submit_time = submit;
  job.gpus = gpus;
  job.duration = end - start;
  job.recorded_start = start;
  job.recorded_end = end;
  return job;
}

TEST(SiteFrom, ALogShorterThanADayIsSizedByItsPeakNotOneNode) {
  // A 10-hour log (no header): 8 processors in use from 0 to 9 h, 24 from 1 h to 3 h (three
  // 8-processor jobs at once). A level must be held 1 % of the 10-hour span, 360 s: 24 is held
  // 2 h, so the pool has 24 processors. With a day's hold nothing would qualify (one node).
  Trace log;
  auto add = [&](const std::string& id, double start, double end) {
    log.jobs.push_back(RecordedJob(id, "", start, start, end, 8));
  };
  add("a", 0, 9 * kHour);
  add("b", 1 * kHour, 3 * kHour);
  add("c", 1 * kHour, 3 * kHour);
  add("d", 9 * kHour, 10 * kHour);
  const InferredSite site = InferSite(log, LogHeader(), SiteInferenceOptions());
  ASSERT_EQ(site.pools.size(), 1u);
  EXPECT_EQ(site.pools[0].peak_processors, 24);
  EXPECT_NE(site.pools[0].size_evidence.find("360 s (1 % of the log)"), std::string::npos)
      << site.pools[0].size_evidence;
}

TEST(SiteFrom, ADowntimeFoundInOnePoolHoldsThatPoolOnly) {
  // Partition a: job 1 runs [0, 1 h); job 2, submitted at 0.5 h, runs only at [10 h, 11 h): a
  // ran nothing for 9 h while a job waited, a downtime of a. Partition b ran throughout (job 3
  // [0, 12 h), job 4 [2 h, 3 h)). The spec's downtime names partition a: b keeps running.
  Trace log;
  log.jobs = {RecordedJob("1", "a", 0, 0, kHour),
              RecordedJob("2", "a", 0.5 * kHour, 10 * kHour, 11 * kHour),
              RecordedJob("3", "b", 0, 0, 12 * kHour),
              RecordedJob("4", "b", 2 * kHour, 2 * kHour, 3 * kHour)};
  const InferredSite site = InferSite(log, LogHeader(), SiteInferenceOptions());
  ASSERT_EQ(site.pools.size(), 2u);
  ASSERT_EQ(site.downtimes.size(), 1u);
  EXPECT_DOUBLE_EQ(site.downtimes[0].start, kHour);
  EXPECT_DOUBLE_EQ(site.downtimes[0].end, 10 * kHour);
  EXPECT_EQ(site.pools[site.downtimes[0].pool].name, "a");
  const ClusterSpec spec = ClusterSpec::FromJsonText(SiteSpecJson(site, SiteInferenceOptions()),
                                                     "inferred", HardwareCatalog::Default());
  ASSERT_EQ(spec.site.downtimes.size(), 1u);
  ASSERT_EQ(spec.site.downtimes[0].partitions.size(), 1u);
  EXPECT_EQ(spec.site.partitions[spec.site.downtimes[0].partitions[0]].name, "a");
}

TEST(SiteFrom, JobsWithoutAPartitionBesideAPartitionNamedBatchGetAPoolOfTheirOwn) {
  // Half the jobs name partition "batch", half none: two pools, "batch" and "batch_2", and the
  // spec loads (a pool named "batch" twice would not).
  Trace log;
  log.jobs = {RecordedJob("1", "batch", 0, 0, kHour), RecordedJob("2", "", 0, 0, kHour)};
  const InferredSite site = InferSite(log, LogHeader(), SiteInferenceOptions());
  ASSERT_EQ(site.pools.size(), 2u);
  EXPECT_NE(site.pools[0].name, site.pools[1].name);
  EXPECT_NO_THROW(ClusterSpec::FromJsonText(SiteSpecJson(site, SiteInferenceOptions()), "inferred",
                                            HardwareCatalog::Default()));
}

}  // namespace
}  // namespace clustersim
