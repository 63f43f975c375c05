// The allocation log, the sample and series distances, and the comparison with a recorded schedule
// (sim/engine/allocation_log.h, sim/util/statistics.h, sim/engine/validation.h), against values
// worked out by hand in the comments.
#include "sim/engine/validation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "sim/engine/summary.h"
#include "sim/util/error.h"
#include "sim/util/statistics.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::Nodes;
using testing::TestSim;

// ---------------------------------------------------------------------------------------------
// Sample distances

TEST(Statistics, KolmogorovSmirnovAndWassersteinOfUnequalSamples) {
  // a = {1,2,3}, b = {2,4}. F_a: 1/3 on [1,2), 2/3 on [2,3), 1 from 3; F_b: 1/2 on [2,4), 1 from 4.
  // |F_a - F_b|: 1/3 on [1,2), 1/6 on [2,3), 1/2 on [3,4), 0 after. KS = 1/2;
  // W1 = 1/3 + 1/6 + 1/2 = 1 (also the integral of |Q_a - Q_b| over u: 1/3 + 0 + 1/3 + 1/3).
  EXPECT_DOUBLE_EQ(KolmogorovSmirnov({1, 2, 3}, {2, 4}), 0.5);
  EXPECT_DOUBLE_EQ(Wasserstein1({1, 2, 3}, {2, 4}), 1.0);
  EXPECT_DOUBLE_EQ(KolmogorovSmirnov({2, 4}, {3, 1, 2}), 0.5);  // symmetric, order-free
}

TEST(Statistics, WassersteinOfEqualSamplesIsTheMeanGapOfTheSortedValues) {
  // a = {0,0,3}, b = {2,1,2}: sorted pairs (0,1), (0,2), (3,2): (1 + 2 + 1) / 3 = 4/3.
  // F_a = 2/3 on [0,3); F_b = 1/3 on [1,2), 1 from 2: |diff| 2/3, 1/3, 1/3 on [0,1), [1,2),
  // [2,3): KS = 2/3.
  EXPECT_DOUBLE_EQ(Wasserstein1({0, 0, 3}, {2, 1, 2}), 4.0 / 3);
  EXPECT_DOUBLE_EQ(KolmogorovSmirnov({0, 0, 3}, {2, 1, 2}), 2.0 / 3);
  EXPECT_DOUBLE_EQ(Wasserstein1({5, 7}, {7, 5}), 0.0);
  EXPECT_DOUBLE_EQ(KolmogorovSmirnov({5, 7}, {7, 5}), 0.0);
  // Disjoint samples: KS 1, W1 the distance of the means.
  EXPECT_DOUBLE_EQ(KolmogorovSmirnov({0, 1}, {10, 11}), 1.0);
  EXPECT_DOUBLE_EQ(Wasserstein1({0, 1}, {10, 11}), 10.0);
  EXPECT_TRUE(std::isnan(Wasserstein1({}, {1})));
}

TEST(Statistics, CorrelationAndMeanAbsoluteError) {
  // x = (1,2,3), y = (2,4,7): deviations (-1,0,1) and (-7/3,-1/3,8/3); Sxy = 5, Sxx = 2,
  // Syy = 114/9: r = 5 / sqrt(228/9). MAE = (1 + 2 + 4) / 3.
  EXPECT_DOUBLE_EQ(PearsonCorrelation({1, 2, 3}, {2, 4, 7}), 5 / std::sqrt(228.0 / 9));
  EXPECT_DOUBLE_EQ(PearsonCorrelation({1, 2, 3}, {3, 2, 1}), -1.0);
  EXPECT_DOUBLE_EQ(MeanAbsoluteError({1, 2, 3}, {2, 4, 7}), 7.0 / 3);
  EXPECT_TRUE(std::isnan(PearsonCorrelation({1, 1, 1}, {1, 2, 3})));  // constant: undefined
  EXPECT_TRUE(std::isnan(PearsonCorrelation({1}, {2})));
}

// ---------------------------------------------------------------------------------------------
// The allocation log

TEST(AllocationLog, IndexRangesAreCompact) {
  const std::vector<int32_t> gpus = {0, 1, 2, 3, 8, 10, 11};
  EXPECT_EQ(IndexRanges(gpus), "0-3,8,10-11");
  EXPECT_EQ(IndexRanges(std::vector<int32_t>{7}), "7");
  EXPECT_EQ(IndexRanges(std::vector<int32_t>{}), "");
}

TEST(AllocationLog, APreemptedJobHasOneIntervalPerStart) {
  // srtf on 1 node x 4 GPUs: L (4 GPUs, 100 s) runs [0,30), is preempted by S (2 GPUs, 10 s),
  // which runs [30,40) on GPUs 0-1; L resumes [40,110) (preemption free here). GPU-seconds
  // 120 + 20 + 280 = 420.
  EngineOptions options;
  options.record_allocations = true;
  options.preemption_cost_seconds = 0;
  TestSim sim(Nodes(1, 4), {MakeJob("L", 0, 4, 100), MakeJob("S", 30, 2, 10)}, "srtf", "first-fit",
              options);
  Engine& engine = sim.Run();
  const AllocationLog& log = engine.allocations();
  ASSERT_EQ(log.intervals.size(), 3u);
  EXPECT_EQ(engine.starts(), 3);
  const JobId l = sim.IndexOf("L");
  const JobId s = sim.IndexOf("S");
  struct Expected {
    JobId job;
    double start, end;
    IntervalEnd why;
    const char* gpus;
  };
  const Expected expected[] = {{l, 0, 30, IntervalEnd::kPreempt, "0-3"},
                               {s, 30, 40, IntervalEnd::kFinish, "0-1"},
                               {l, 40, 110, IntervalEnd::kFinish, "0-3"}};
  for (size_t i = 0; i < 3; ++i) {
    const AllocationInterval& got = log.intervals[i];
    EXPECT_EQ(got.job, expected[i].job) << i;
    EXPECT_DOUBLE_EQ(got.start, expected[i].start) << i;
    EXPECT_DOUBLE_EQ(got.end, expected[i].end) << i;
    EXPECT_EQ(got.why, expected[i].why) << i;
    EXPECT_EQ(IndexRanges(log.GpusOf(got)), expected[i].gpus) << i;
  }
  EXPECT_DOUBLE_EQ(log.GpuSeconds(), 420);
  EXPECT_DOUBLE_EQ(engine.metrics().busy_gpu_seconds(), 420);
}

TEST(AllocationLog, FailuresTimeoutsAndTheEndOfTheRunCloseIntervals) {
  // One GPU. a (1000 s) runs [0,700) when its node fails for 100 s, restarts at 800 and ends at
  // 1800 (no checkpoints: it starts over). b (wall time 50 s, 100 s of work) waits for a and is
  // killed at 1850; c (100 s) starts at 1850 and is cut by --stop-time 1900.
  EngineOptions options;
  options.record_allocations = true;
  options.stop_time = 1900;
  FailureRecord failure;
  failure.time = 700;
  failure.node = 0;
  failure.duration = 100;
  options.faults.trace = {failure};
  Job b = MakeJob("b", 1, 1, 100);
  b.walltime = 50;
  TestSim sim(Nodes(1, 1), {MakeJob("a", 0, 1, 1000), b, MakeJob("c", 2, 1, 100)}, "fcfs",
              "first-fit", options);
  Engine& engine = sim.Run();
  const AllocationLog& log = engine.allocations();
  ASSERT_EQ(log.intervals.size(), 4u);
  EXPECT_EQ(log.intervals[0].why, IntervalEnd::kFailure);
  EXPECT_DOUBLE_EQ(log.intervals[0].end, 700);
  EXPECT_EQ(log.intervals[1].why, IntervalEnd::kFinish);
  EXPECT_DOUBLE_EQ(log.intervals[1].start, 800);
  EXPECT_DOUBLE_EQ(log.intervals[1].end, 1800);
  EXPECT_EQ(log.intervals[2].why, IntervalEnd::kTimeout);
  EXPECT_DOUBLE_EQ(log.intervals[2].end, 1850);
  EXPECT_EQ(log.intervals[3].why, IntervalEnd::kRunEnd);
  EXPECT_DOUBLE_EQ(log.intervals[3].start, 1850);
  EXPECT_DOUBLE_EQ(log.intervals[3].end, 1900);
  EXPECT_EQ(engine.starts(), 4);
  EXPECT_DOUBLE_EQ(log.GpuSeconds(), 700 + 1000 + 50 + 50);
  EXPECT_STREQ(IntervalEndName(IntervalEnd::kRunEnd), "run-end");
}

TEST(AllocationLog, NothingIsRecordedUnlessAsked) {
  TestSim sim(Nodes(1, 4), {MakeJob("L", 0, 4, 100), MakeJob("S", 30, 2, 10)}, "srtf");
  Engine& engine = sim.Run();
  EXPECT_TRUE(engine.allocations().intervals.empty());
  EXPECT_EQ(engine.starts(), 3);
}

// ---------------------------------------------------------------------------------------------
// Validation against a recorded schedule

Job Recorded(Job job, double start, double end, const std::string& user) {
  job.recorded_start = start;
  job.recorded_end = end;
  job.user = user;
  return job;
}

double RowValue(const ValidationReport& r, const std::string& scope, const std::string& metric) {
  const ValidationRow* row = r.Find(scope, metric);
  EXPECT_NE(row, nullptr) << scope << " " << metric;
  return row ? row->value : std::nan("");
}

TEST(Validation, ComparesWithTheRecordJobByJobAsDistributionsAndAsSeries) {
  // 1 node x 4 GPUs, fcfs, runtime trace. Trace and record:
  //   J0 t=0  4 GPUs 100 s, recorded [0,100)      (wait 0)
  //   J1 t=10 2 GPUs  50 s, recorded [100,150)    (wait 90)
  //   J2 t=20 2 GPUs 100 s, recorded [150,250)    (wait 130)
  // Simulated: J0 [0,100); J1 and J2 both start at 100: J1 [100,150), J2 [100,200); waits 0, 90,
  // 80. Start errors 0, 0, -50 s.
  // Waits (s): simulated {0,80,90}, recorded {0,90,130}: means 170/3 and 220/3; p50 80 and 90;
  // p95 (rank 1.9) 80 + 0.9 x 10 = 89 and 90 + 0.9 x 40 = 126. KS: the CDFs differ by 1/3 on
  // [80,130): 1/3. W1: sorted gaps (0, 10, 40) / 3 = 50/3 s.
  // Series on 50 s buckets from 0 to 250 (the recorded end):
  //   utilization simulated (1, 1, 1, .5, 0), recorded (1, 1, .5, .5, .5): means .7 and .7, MAE
  //   (.5 + .5) / 5 = .2, correlation Sxy / sqrt(Sxx Syy) = .30 / sqrt(.80 x .30);
  //   queue simulated: J1 waits [10,100), J2 [20,100): (40 + 30) / 50 = 1.4, then 2, 0, 0, 0;
  //   recorded: J1 [10,100), J2 [20,150): 1.4, 2, 1, 0, 0. Means .68 and .88, MAE 1/5.
  EngineOptions options;
  options.record_allocations = true;
  TestSim sim(Nodes(1, 4),
              {Recorded(MakeJob("J0", 0, 4, 100), 0, 100, "a"),
               Recorded(MakeJob("J1", 10, 2, 50), 100, 150, "b"),
               Recorded(MakeJob("J2", 20, 2, 100), 150, 250, "b")},
              "fcfs", "first-fit", options);
  Engine& engine = sim.Run();
  const ValidationReport r = ComputeValidation(engine, 50);
  const double h = 3600;
  EXPECT_EQ(r.jobs, 3);
  EXPECT_EQ(r.jobs_recorded, 3);
  EXPECT_EQ(r.jobs_compared, 3);
  EXPECT_EQ(r.jobs_rejected, 0);
  const ValidationRow* mean = r.Find("all", "wait_mean_hours");
  ASSERT_NE(mean, nullptr);
  EXPECT_DOUBLE_EQ(mean->simulated, 170.0 / 3 / h);
  EXPECT_DOUBLE_EQ(mean->recorded, 220.0 / 3 / h);
  EXPECT_DOUBLE_EQ(mean->value, -50.0 / 3 / h);
  EXPECT_DOUBLE_EQ(r.Find("all", "wait_p50_hours")->simulated, 80 / h);
  EXPECT_DOUBLE_EQ(r.Find("all", "wait_p50_hours")->recorded, 90 / h);
  EXPECT_NEAR(r.Find("all", "wait_p95_hours")->simulated, 89 / h, 1e-12);
  EXPECT_NEAR(r.Find("all", "wait_p95_hours")->recorded, 126 / h, 1e-12);
  EXPECT_DOUBLE_EQ(RowValue(r, "all", "wait_ks"), 1.0 / 3);
  EXPECT_DOUBLE_EQ(RowValue(r, "all", "wait_wasserstein_hours"), 50.0 / 3 / h);
  EXPECT_DOUBLE_EQ(RowValue(r, "all", "start_error_mean_hours"), -50.0 / 3 / h);
  EXPECT_DOUBLE_EQ(RowValue(r, "all", "start_error_abs_mean_hours"), 50.0 / 3 / h);
  EXPECT_DOUBLE_EQ(RowValue(r, "all", "start_error_p50_hours"), 0);

  ASSERT_FALSE(r.series.empty());
  const ValidationSeries& all = r.series.front();
  EXPECT_EQ(all.scope, "all");
  EXPECT_DOUBLE_EQ(all.t0, 0);
  const std::vector<double> sim_util = {1, 1, 1, .5, 0}, rec_util = {1, 1, .5, .5, .5};
  const std::vector<double> sim_queue = {1.4, 2, 0, 0, 0}, rec_queue = {1.4, 2, 1, 0, 0};
  ASSERT_EQ(all.simulated_utilization.size(), 5u);
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_NEAR(all.simulated_utilization[k], sim_util[k], 1e-12) << k;
    EXPECT_NEAR(all.recorded_utilization[k], rec_util[k], 1e-12) << k;
    EXPECT_NEAR(all.simulated_queue[k], sim_queue[k], 1e-12) << k;
    EXPECT_NEAR(all.recorded_queue[k], rec_queue[k], 1e-12) << k;
  }
  EXPECT_NEAR(RowValue(r, "all", "utilization_mae"), 0.2, 1e-12);
  EXPECT_NEAR(RowValue(r, "all", "utilization_correlation"), 0.30 / std::sqrt(0.80 * 0.30), 1e-12);
  EXPECT_NEAR(r.Find("all", "queue_length_mean")->simulated, 0.68, 1e-12);
  EXPECT_NEAR(r.Find("all", "queue_length_mean")->recorded, 0.88, 1e-12);
  EXPECT_NEAR(RowValue(r, "all", "queue_length_mae"), 0.2, 1e-12);

  // Per user: b's waits are simulated {90, 80}, recorded {90, 130}: W1 = (10 + 40) / 2 = 25 s.
  EXPECT_DOUBLE_EQ(RowValue(r, "user:b", "wait_wasserstein_hours"), 25 / h);
  EXPECT_DOUBLE_EQ(RowValue(r, "user:a", "wait_wasserstein_hours"), 0);
  // All three are of size class 2-4: its figures are those of all.
  EXPECT_DOUBLE_EQ(RowValue(r, "size:2-4", "wait_ks"), 1.0 / 3);
  EXPECT_NEAR(RowValue(r, "size:2-4", "utilization_mae"), 0.2, 1e-12);
}

TEST(Validation, RecordedAttemptsHoldGpusOnlyWhileRunningAndQueueBetween) {
  // 1 node x 2 GPUs, bucket 100 s. One job submitted at 0, 2 GPUs, 200 s of work, recorded as two
  // attempts [50,150) on 2 GPUs and [250,350) on 1 GPU. Recorded utilization: bucket 0 holds 2
  // GPUs for 50 s -> 0.5 x 2/2 = .5; bucket 1: 2 GPUs for 50 s -> .5; bucket 2: 1 GPU for 50 s
  // -> .25; bucket 3: 1 GPU for 50 s -> .25. Recorded queue: [0,50) and [150,250): .5, .5, .5, 0.
  // Simulated: [0,200) on 2 GPUs -> 1, 1, 0, 0; no queue.
  EngineOptions options;
  options.record_allocations = true;
  Job job = MakeJob("j", 0, 2, 200);
  job.recorded_start = 50;
  job.recorded_end = 350;
  job.recorded_attempt_begin = 0;
  job.recorded_attempt_count = 2;
  TestSim sim(Nodes(1, 2), {job}, "fcfs", "first-fit", options);
  sim.trace().recorded_attempts = {{50, 150, 2}, {250, 350, 1}};
  Engine& engine = sim.Run();
  const ValidationReport r = ComputeValidation(engine, 100);
  const ValidationSeries& all = r.series.front();
  const std::vector<double> rec_util = {.5, .5, .25, .25}, rec_queue = {.5, .5, .5, 0};
  const std::vector<double> sim_util = {1, 1, 0, 0};
  ASSERT_EQ(all.recorded_utilization.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_NEAR(all.recorded_utilization[k], rec_util[k], 1e-12) << k;
    EXPECT_NEAR(all.recorded_queue[k], rec_queue[k], 1e-12) << k;
    EXPECT_NEAR(all.simulated_utilization[k], sim_util[k], 1e-12) << k;
    EXPECT_NEAR(all.simulated_queue[k], 0, 1e-12) << k;
  }
  EXPECT_DOUBLE_EQ(RowValue(r, "all", "start_error_mean_hours"), -50.0 / 3600);
}

TEST(Validation, SimulatedSeriesAgreeWithTheMetricsTimeseries) {
  // The simulated series are rebuilt from the allocation log and the jobs' outcomes; the
  // timeseries rows integrate the engine's state independently. With every job recorded, every
  // whole interval must agree. 300 random jobs on 2 x 4 GPUs, with preemptions (srtf).
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> gap(0, 60), duration(1, 900);
  std::uniform_int_distribution<int> gpus(1, 4);
  std::vector<Job> jobs;
  double t = 0;
  for (int i = 0; i < 300; ++i) {
    t += gap(rng);
    // One draw at a time, the duration first as g++ drew them: the order of two draws in one
    // argument list is unspecified, and the suite must see the same jobs with g++ and clang.
    const double d = duration(rng);
    Job job = MakeJob("j" + std::to_string(i), t, gpus(rng), d);
    job.recorded_start = t;  // what the record says does not matter here
    jobs.push_back(job);
  }
  EngineOptions options;
  options.record_allocations = true;
  options.timeseries_interval_seconds = 120;
  TestSim sim(Nodes(2, 4), jobs, "srtf", "first-fit", options);
  Engine& engine = sim.Run();
  const ValidationReport r = ComputeValidation(engine, 120);
  const ValidationSeries& all = r.series.front();
  int compared = 0;
  for (const TimeseriesRow& row : engine.metrics().rows()) {
    if (row.gpu_type >= 0 || row.t_end - row.t_start != 120) continue;
    const double k = (row.t_start - all.t0) / 120;
    ASSERT_EQ(k, std::floor(k));
    const size_t bucket = static_cast<size_t>(k);
    ASSERT_LT(bucket, all.simulated_utilization.size());
    EXPECT_NEAR(all.simulated_utilization[bucket], row.utilization, 1e-9) << row.t_start;
    EXPECT_NEAR(all.simulated_queue[bucket], row.queue_length, 1e-9) << row.t_start;
    ++compared;
  }
  EXPECT_GT(compared, 50);
  int64_t preemptions = 0;
  for (const JobRun& run : engine.runs()) preemptions += run.preemptions;
  EXPECT_GT(preemptions, 0);
}

TEST(Validation, RejectedJobsAreLeftOutAndATraceWithoutARecordIsAnError) {
  EngineOptions options;
  options.record_allocations = true;
  // A 9-GPU job cannot run on 4 GPUs: rejected, left out though it has a record.
  TestSim sim(Nodes(1, 4),
              {Recorded(MakeJob("big", 0, 9, 10), 0, 10, "u"),
               Recorded(MakeJob("ok", 1, 1, 10), 1, 11, "u")},
              "fcfs", "first-fit", options);
  const ValidationReport r = ComputeValidation(sim.Run(), 60);
  EXPECT_EQ(r.jobs_rejected, 1);
  EXPECT_EQ(r.jobs_recorded, 1);
  EXPECT_EQ(r.jobs_compared, 1);
  EXPECT_DOUBLE_EQ(RowValue(r, "all", "wait_wasserstein_hours"), 0);

  TestSim bare(Nodes(1, 4), {MakeJob("a", 0, 1, 10)}, "fcfs", "first-fit", options);
  EXPECT_THROW(ComputeValidation(bare.Run(), 60), InputError);
}

TEST(Validation, AFeasibleRecordReplayedWithoutConstraintsIsReproducedExactly) {
  // Jobs that never overlap in the record (each submitted after the previous one ended, started at
  // once) on a cluster holding the largest: any work-conserving policy starts each at its
  // submission, so every distance is 0 and the series coincide.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> gap(0, 500), duration(1, 1000);
  std::uniform_int_distribution<int> gpus(1, 8);
  std::vector<Job> jobs;
  double t = 0;
  for (int i = 0; i < 200; ++i) {
    const double d = duration(rng);
    Job job = MakeJob("j" + std::to_string(i), t, gpus(rng), d);
    job.recorded_start = t;
    job.recorded_end = t + d;
    jobs.push_back(job);
    t += d + gap(rng);
  }
  EngineOptions options;
  options.record_allocations = true;
  TestSim sim(Nodes(1, 8), jobs, "fcfs", "pool", options);
  const ValidationReport r = ComputeValidation(sim.Run(), 600);
  EXPECT_EQ(r.jobs_compared, 200);
  EXPECT_EQ(RowValue(r, "all", "wait_ks"), 0);
  EXPECT_EQ(RowValue(r, "all", "wait_wasserstein_hours"), 0);
  EXPECT_EQ(RowValue(r, "all", "start_error_abs_mean_hours"), 0);
  EXPECT_NEAR(RowValue(r, "all", "utilization_mae"), 0, 1e-12);
  EXPECT_NEAR(RowValue(r, "all", "utilization_correlation"), 1, 1e-12);
  EXPECT_NEAR(RowValue(r, "all", "queue_length_mae"), 0, 1e-12);
  EXPECT_EQ(r.Find("all", "queue_length_mean")->recorded, 0);
}

TEST(Validation, SizeClasses) {
  Job share = MakeJob("s", 0, 1, 1);
  share.gpu_milli = 250;
  EXPECT_EQ(SizeClass(share), "<1");
  EXPECT_EQ(SizeClass(MakeJob("a", 0, 1, 1)), "1");
  EXPECT_EQ(SizeClass(MakeJob("a", 0, 4, 1)), "2-4");
  EXPECT_EQ(SizeClass(MakeJob("a", 0, 8, 1)), "5-8");
  EXPECT_EQ(SizeClass(MakeJob("a", 0, 32, 1)), "9-32");
  EXPECT_EQ(SizeClass(MakeJob("a", 0, 33, 1)), "33+");
}

}  // namespace
}  // namespace clustersim
