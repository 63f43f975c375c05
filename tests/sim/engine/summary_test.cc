// Percentiles, queued time, bounded slowdown, preemptions per job and Jain's index of the run summary
// (sim/engine/summary.h), on schedules small enough to follow by hand. Runtime `trace`: a job
// progresses at rate 1, so it runs exactly its trace duration.
#include "sim/engine/summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::Nodes;
using testing::PolicySim;
using testing::TestSim;

// Linear interpolation between closest ranks: for 1..101 the rank of q is 100q, so p50 = 51,
// p95 = 96, p99 = 100; for {1, 2, 3, 4} the median's rank is 1.5, halfway between 2 and 3.
TEST(Percentile, InterpolatesBetweenClosestRanksAsWorkedOutByHand) {
  std::vector<double> values;
  for (int i = 101; i >= 1; --i) values.push_back(i);
  std::shuffle(values.begin(), values.end(), std::mt19937(5));
  EXPECT_EQ(Percentiles(values, {0.50, 0.95, 0.99}), (std::vector<double>{51, 96, 100}));
  std::vector<double> four = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(Percentile(four, 0.5), 2.5);
  four = {4, 1, 3, 2};
  EXPECT_EQ(Percentiles(four, {0.5, 1.0}), (std::vector<double>{2.5, 4}));
}

// Percentiles narrows each selection to the values above the previous rank: it must give what
// separate Percentile calls give, duplicates included.
TEST(Percentile, SeveralAtOnceEqualOneAtATime) {
  std::mt19937 rng(11);
  for (int n : {1, 2, 3, 10, 997, 20000}) {
    std::vector<double> values;
    for (int i = 0; i < n; ++i) values.push_back(static_cast<double>(rng() % 50) * 0.25);
    const std::vector<double> qs = {0.05, 0.5, 0.95, 0.99, 1.0};
    std::vector<double> expected;
    for (double q : qs) {
      std::vector<double> copy = values;
      expected.push_back(Percentile(copy, q));
    }
    EXPECT_EQ(Percentiles(values, qs), expected) << n << " values";
  }
}

TEST(QueuedTime, CountsEveryWaitOfAJobPreemptedTwiceAndEqualsTheFirstWaitOtherwise) {
  // srtf on 1 node x 4 GPUs. L (4 GPUs, 100 s) starts at 0. S1 (2 GPUs, 10 s) arrives at 30, when
  // L has 70 s left: L is preempted, S1 runs [30,40], L resumes at 40. S2 (2 GPUs, 10 s) arrives
  // at 60, when L has 70 - 20 = 50 s left: L is preempted again, S2 runs [60,70], L resumes at
  // 70 and ends at 120. L waited [30,40] and [60,70]: queued 20 s, first-start wait 0, JCT 120,
  // run 100, 2 preemptions (free here). S1 and S2 never wait.
  EngineOptions free;
  free.preemption_cost_seconds = 0;
  TestSim sim(Nodes(1, 4),
              {MakeJob("L", 0, 4, 100), MakeJob("S1", 30, 2, 10), MakeJob("S2", 60, 2, 10)},
              "srtf", "first-fit", free);
  const Engine& engine = sim.Run();
  const JobRun& l = sim.Of("L");
  EXPECT_DOUBLE_EQ(l.first_start, 0);
  EXPECT_DOUBLE_EQ(l.end_time, 120);
  EXPECT_EQ(l.preemptions, 2);
  EXPECT_DOUBLE_EQ(l.queued_seconds, 20);
  EXPECT_DOUBLE_EQ(l.queued_seconds + l.run_seconds, l.end_time - 0);
  EXPECT_DOUBLE_EQ(sim.Of("S1").queued_seconds, 0);
  EXPECT_DOUBLE_EQ(sim.Of("S2").queued_seconds, 0);

  const auto summary = ComputeSummary(engine);
  // Queued [20, 0, 0]: mean 20/3; sorted [0, 0, 20], linear interpolation between closest ranks:
  // p50 at rank 1 = 0, p95 at rank 1.9 = 0 + 0.9 x 20 = 18, p99 at rank 1.98 = 19.6.
  EXPECT_NEAR(SummaryValue(summary, "queued_seconds_mean"), 20.0 / 3, 1e-12);
  EXPECT_NEAR(SummaryValue(summary, "queued_seconds_p50"), 0, 1e-12);
  EXPECT_NEAR(SummaryValue(summary, "queued_seconds_p95"), 18, 1e-12);
  EXPECT_NEAR(SummaryValue(summary, "queued_seconds_p99"), 19.6, 1e-12);
  // First-start waits are all 0: the figure that hid L's 20 s.
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "wait_seconds_mean"), 0);
  // Bounded slowdown: L 120 / max(100, 10) = 1.2; S1, S2 10 / max(10, 10) = 1. Mean 3.2 / 3.
  EXPECT_NEAR(SummaryValue(summary, "bsld_mean"), 3.2 / 3, 1e-12);
  EXPECT_NEAR(SummaryValue(summary, "bsld_max"), 1.2, 1e-12);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "bsld_threshold_seconds"), 10);
  // 2 preemptions over 3 started jobs.
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "preemptions"), 2);
  EXPECT_NEAR(SummaryValue(summary, "preemptions_per_job"), 2.0 / 3, 1e-12);
}

TEST(BoundedSlowdown, TheThresholdBoundsShortJobsOnly) {
  // fcfs on 1 node x 4 GPUs: A (4 GPUs, 100 s) runs [0,100]; B (4 GPUs, 2 s, t=10) waits 90 s and
  // runs [100,102]: JCT 92, run 2. Slowdown 92 / 2 = 46; bounded slowdown with threshold 10 s:
  // 92 / 10 = 9.2; with 1 s: 92 / 2 = 46 (the run time exceeds the threshold); with 100 s:
  // max(1, 92 / 100) = 1. A: JCT 100 = run: 1 under every threshold.
  TestSim sim = PolicySim(Nodes(1, 4), {MakeJob("A", 0, 4, 100), MakeJob("B", 10, 4, 2)}, "fcfs");
  const Engine& engine = sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("B").queued_seconds, 90);
  EXPECT_DOUBLE_EQ(BoundedSlowdown(92, 2, 10), 9.2);
  EXPECT_DOUBLE_EQ(BoundedSlowdown(92, 2, 1), 46);
  EXPECT_DOUBLE_EQ(BoundedSlowdown(92, 2, 100), 1);
  EXPECT_DOUBLE_EQ(BoundedSlowdown(100, 100, 10), 1);
  EXPECT_NEAR(SummaryValue(ComputeSummary(engine), "bsld_mean"), (9.2 + 1) / 2, 1e-12);
  EXPECT_NEAR(SummaryValue(ComputeSummary(engine, {1.0}), "bsld_mean"), (46 + 1) / 2.0, 1e-12);
  EXPECT_NEAR(SummaryValue(ComputeSummary(engine, {100.0}), "bsld_mean"), 1, 1e-12);
  EXPECT_NEAR(SummaryValue(ComputeSummary(engine), "slowdown_mean"), (46 + 1) / 2.0, 1e-12);
}

TEST(QueuedTime, AJobStillQueuedWhenTheRunStopsCountsUntilTheStop) {
  // fcfs, stop at 50: A (4 GPUs, 100 s) runs from 0; B (4 GPUs, t=10) is still waiting at 50.
  EngineOptions options;
  options.stop_time = 50;
  TestSim sim(Nodes(1, 4), {MakeJob("A", 0, 4, 100), MakeJob("B", 10, 4, 10)}, "fcfs", "first-fit",
              options);
  const Engine& engine = sim.Run();
  EXPECT_EQ(sim.Of("B").state, JobState::kUnfinished);
  EXPECT_DOUBLE_EQ(sim.Of("B").queued_seconds, 40);
  // Neither job ended; both arrived, so both count up to the run's end at 50 (right-censored,
  // docs/metrics.md#jobs): A ran from 0 (wait 0, queued 0, JCT so far 50), B waited from 10 (wait,
  // queued and JCT so far 40). Means: queued (0 + 40) / 2 = 20, wait 20, JCT (50 + 40) / 2 = 45.
  const std::vector<SummaryRow> summary = ComputeSummary(engine);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "end_seconds"), 50);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "queued_seconds_mean"), 20);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "wait_seconds_mean"), 20);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "jct_seconds_mean"), 45);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "jobs_unfinished"), 2);
  // Slowdowns are over the jobs that ended: none.
  EXPECT_TRUE(std::isnan(SummaryValue(summary, "bsld_mean")));
}

TEST(QueuedTime, AJobNotYetSubmittedWhenTheRunStopsCountsNowhere) {
  // Stop at 50: C is submitted at 60, after the stop. It is unfinished but never arrived, so the
  // distributions are A's alone: JCT 50, wait 0.
  EngineOptions options;
  options.stop_time = 50;
  TestSim sim(Nodes(1, 4), {MakeJob("A", 0, 4, 100), MakeJob("C", 60, 1, 10)}, "fcfs",
              "first-fit", options);
  const std::vector<SummaryRow> summary = ComputeSummary(sim.Run());
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "jct_seconds_mean"), 50);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "wait_seconds_mean"), 0);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "jobs_unfinished"), 2);
}

TEST(QueuedTime, EqualsJctMinusRunTimeForEveryJobOfARandomPreemptiveWorkload) {
  // las preempts often; whatever the schedule, a job that ended was either queued or running.
  std::mt19937 rng(7);
  std::vector<Job> jobs;
  double t = 0;
  for (int i = 0; i < 300; ++i) {
    t += std::uniform_real_distribution<double>(0, 20)(rng);
    const int gpus = 1 << std::uniform_int_distribution<int>(0, 3)(rng);
    jobs.push_back(MakeJob("j" + std::to_string(i), t, gpus,
                           std::uniform_real_distribution<double>(1, 900)(rng)));
  }
  TestSim sim = PolicySim(Nodes(2, 8), jobs, "las");
  const Engine& engine = sim.Run();
  int preempted = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobRun& run = engine.runs()[i];
    ASSERT_EQ(run.state, JobState::kCompleted);
    const double jct = run.end_time - engine.trace().jobs[i].submit_time;
    EXPECT_NEAR(run.queued_seconds + run.run_seconds, jct, 1e-9 * std::max(1.0, jct));
    EXPECT_GE(run.queued_seconds, run.first_start - engine.trace().jobs[i].submit_time - 1e-9);
    preempted += run.preemptions > 0;
  }
  EXPECT_GT(preempted, 10);  // the property was exercised on preempted jobs
}

TEST(JainIndex, IsLeftOutWithoutUsersAndComputedOverTheUsersOtherwise) {
  // A (4 GPUs, 100 s) and B (4 GPUs, 2 s) one after the other.
  std::vector<Job> jobs = {MakeJob("A", 0, 4, 100), MakeJob("B", 10, 4, 2)};
  {
    TestSim sim = PolicySim(Nodes(1, 4), jobs, "fcfs");
    const auto summary = ComputeSummary(sim.Run());
    EXPECT_TRUE(std::isnan(SummaryValue(summary, "jain_index_users")));
    EXPECT_DOUBLE_EQ(SummaryValue(summary, "users"), 0);
  }
  // alice holds 400 GPU-seconds, bob 8: Jain = (400 + 8)^2 / (2 x (400^2 + 8^2))
  // = 166464 / 320128.
  jobs[0].user = "alice";
  jobs[1].user = "bob";
  TestSim sim = PolicySim(Nodes(1, 4), jobs, "fcfs");
  const auto summary = ComputeSummary(sim.Run());
  EXPECT_NEAR(SummaryValue(summary, "jain_index_users"), 166464.0 / 320128.0, 1e-12);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "users"), 2);
}

}  // namespace
}  // namespace clustersim
