// Engine semantics (docs/engine.md) and fcfs schedules with each placement, computed by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sim/engine/summary.h"
#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::ExpectInterval;
using testing::MakeJob;
using testing::Nodes;
using testing::TestSim;

// The trace shared by the three placement tests. Cluster: 2 nodes x 4 A100 (GPUs 0-3 on node 0,
// 4-7 on node 1); runtime model `trace`, so every job runs exactly its duration.
//   A t=0 3 GPUs 5 s;  B t=0 2 GPUs 100 s;  C t=6 2 GPUs 100 s;  D t=7 4 GPUs 10 s.
std::vector<Job> PlacementTrace() {
  return {MakeJob("A", 0, 3, 5), MakeJob("B", 0, 2, 100), MakeJob("C", 6, 2, 100),
          MakeJob("D", 7, 4, 10)};
}

TEST(FcfsSchedule, FirstFitBlocksTheFourGpuJobUntilANodeEmpties) {
  // t=0: A -> node 0 {0,1,2}; B: node 0 has 1 free, node 1 is the lowest with >= 2 -> {4,5}.
  // t=5: A ends (node 0: 4 free, node 1: 2 free).
  // t=6: C (2 GPUs): lowest-index node with >= 2 free is node 0 -> {0,1}.
  // t=7: D (4 GPUs): node 0 has 2 free, node 1 has 2 free -> waits (head of line).
  // t=100: B ends -> node 1 has 4 free -> D starts on {4,5,6,7}, ends 110. C ends 106.
  TestSim sim(Nodes(2, 4), PlacementTrace(), "fcfs", "first-fit");
  sim.Run();
  ExpectInterval(sim.Of("A"), 0, 5);
  ExpectInterval(sim.Of("B"), 0, 100);
  ExpectInterval(sim.Of("C"), 6, 106);
  ExpectInterval(sim.Of("D"), 100, 110);
}

TEST(FcfsSchedule, BestFitPacksTheSmallJobOnTheFullerNode) {
  // Same as first-fit until t=6: node 0 has 4 free, node 1 has 2 free. C (2 GPUs) goes to the
  // node with the fewest free that still fits: node 1 -> {6,7}. At t=7 node 0 is empty, so D
  // starts at once on {0,1,2,3} and ends at 17. C ends 106, B ends 100.
  TestSim sim(Nodes(2, 4), PlacementTrace(), "fcfs", "best-fit");
  sim.Run();
  ExpectInterval(sim.Of("A"), 0, 5);
  ExpectInterval(sim.Of("B"), 0, 100);
  ExpectInterval(sim.Of("C"), 6, 106);
  ExpectInterval(sim.Of("D"), 7, 17);
}

TEST(FcfsSchedule, PoolCountsGpusAcrossNodes) {
  // Pool takes the lowest-index free GPUs anywhere: A {0,1,2}, B {3,4}. At t=5 A ends: free
  // {0,1,2,5,6,7}. C at t=6 -> {0,1}. D at t=7 needs 4 of the free {2,5,6,7}: starts at 7, ends
  // 17, spanning both nodes.
  TestSim sim(Nodes(2, 4), PlacementTrace(), "fcfs", "pool");
  sim.Run();
  ExpectInterval(sim.Of("A"), 0, 5);
  ExpectInterval(sim.Of("B"), 0, 100);
  ExpectInterval(sim.Of("C"), 6, 106);
  ExpectInterval(sim.Of("D"), 7, 17);
  EXPECT_EQ(sim.Of("D").max_nodes, 2);
}

TEST(FcfsSchedule, HeadOfLineBlockingHoldsBackASmallJobThatWouldFit) {
  // 1 node x 4 GPUs. X t=0 3 GPUs 10 s; Y t=1 2 GPUs 5 s (does not fit: 1 free);
  // Z t=2 1 GPU 1 s would fit but must wait behind Y (strict FCFS).
  // t=10: X ends; Y starts [10,15]; Z starts [10,11] (both fit: 2 + 1 <= 4).
  TestSim sim(Nodes(1, 4), {MakeJob("X", 0, 3, 10), MakeJob("Y", 1, 2, 5), MakeJob("Z", 2, 1, 1)});
  sim.Run();
  ExpectInterval(sim.Of("X"), 0, 10);
  ExpectInterval(sim.Of("Y"), 10, 15);
  ExpectInterval(sim.Of("Z"), 10, 11);
}

TEST(Engine, CompletionsAtATimestampFreeGpusForArrivalsAtThatTimestamp) {
  // 1 node x 2 GPUs. P t=0 2 GPUs 5 s ends at 5; Q arrives at 5 wanting 2 GPUs: completions are
  // applied before arrivals and before the pass, so Q starts at 5 with no wait.
  TestSim sim(Nodes(1, 2), {MakeJob("P", 0, 2, 5), MakeJob("Q", 5, 2, 1)});
  sim.Run();
  ExpectInterval(sim.Of("Q"), 5, 6);
}

TEST(Engine, EqualSubmitTimesKeepInputOrder) {
  // 1 node x 1 GPU, three jobs submitted at t=3 in input order c, a, b: served in that order.
  TestSim sim(Nodes(1, 1), {MakeJob("c", 3, 1, 1), MakeJob("a", 3, 1, 1), MakeJob("b", 3, 1, 1)});
  sim.Run();
  ExpectInterval(sim.Of("c"), 3, 4);
  ExpectInterval(sim.Of("a"), 4, 5);
  ExpectInterval(sim.Of("b"), 5, 6);
}

TEST(Engine, ZeroLengthJobsEndInAFurtherBatchAtTheSameTime) {
  // 1 GPU. Z0 t=0 duration 0 ends at 0 and frees the GPU within the same timestamp, so Z1
  // (t=0, 1 s) also starts at 0.
  TestSim sim(Nodes(1, 1), {MakeJob("Z0", 0, 1, 0), MakeJob("Z1", 0, 1, 1)});
  Engine& engine = sim.Run();
  ExpectInterval(sim.Of("Z0"), 0, 0);
  ExpectInterval(sim.Of("Z1"), 0, 1);
  // Arrival, arrival, finish Z0, finish Z1; two passes at t=0 and one at t=1.
  EXPECT_EQ(engine.events_processed(), 4u);
  EXPECT_EQ(engine.passes(), 3u);
}

TEST(Engine, JobsStartedCountsJobsThatStartedAtLeastOnce) {
  // 1 node x 2 GPUs. A t=0 2 GPUs 10 s runs [0, 10]; B t=1 2 GPUs waits until 10; C t=2 3 GPUs
  // never fits (rejected). Stopped at t=5: only A started. Run to the end: A and B.
  const std::vector<Job> jobs = {MakeJob("A", 0, 2, 10), MakeJob("B", 1, 2, 10),
                                 MakeJob("C", 2, 3, 1)};
  EngineOptions stopped;
  stopped.stop_time = 5;
  TestSim early(Nodes(1, 2), jobs, "fcfs", "first-fit", stopped);
  EXPECT_EQ(early.Run().jobs_started(), 1);
  TestSim full(Nodes(1, 2), jobs);
  EXPECT_EQ(full.Run().jobs_started(), 2);
  EXPECT_EQ(full.Of("C").state, JobState::kRejected);
}

TEST(Engine, JobsThatCanNeverFitAreRejectedAtArrivalAndDoNotBlockTheQueue) {
  // 2 nodes x 4 GPUs = 8 GPUs. Big (9 GPUs) can never fit; Typed wants H100 which the cluster
  // lacks; Small (1 GPU) behind them starts at once.
  Job typed = MakeJob("Typed", 0, 1, 5);
  typed.gpu_type = "H100-80GB";
  TestSim sim(Nodes(2, 4), {MakeJob("Big", 0, 9, 5), typed, MakeJob("Small", 1, 1, 2)});
  sim.Run();
  EXPECT_EQ(sim.Of("Big").state, JobState::kRejected);
  EXPECT_NE(sim.ReasonOf("Big").find("9 GPUs"), std::string::npos) << sim.ReasonOf("Big");
  EXPECT_EQ(sim.Of("Typed").state, JobState::kRejected);
  EXPECT_NE(sim.ReasonOf("Typed").find("H100-80GB"), std::string::npos);
  ExpectInterval(sim.Of("Small"), 1, 3);
}

TEST(Engine, FirstFitRejectsAJobNeedingMoreNodesThanExist) {
  // 2 nodes x 4: first-fit places 8 GPUs as two whole nodes and 6 as one whole node plus 2 GPUs
  // of the other; 12 would need three whole nodes and is rejected at arrival.
  TestSim sim(Nodes(2, 4),
              {MakeJob("Eight", 0, 8, 1), MakeJob("Six", 0, 6, 1), MakeJob("Twelve", 0, 12, 1)});
  sim.Run();
  ExpectInterval(sim.Of("Eight"), 0, 1);
  ExpectInterval(sim.Of("Six"), 1, 2);
  EXPECT_EQ(sim.Of("Twelve").state, JobState::kRejected);
}

TEST(Engine, WallTimeKillsAJobThatRunsPastIt) {
  Job job = MakeJob("W", 0, 1, 100);
  job.walltime = 30;
  TestSim sim(Nodes(1, 1), {job, MakeJob("Next", 0, 1, 5)});
  sim.Run();
  EXPECT_EQ(sim.Of("W").state, JobState::kTimeout);
  EXPECT_DOUBLE_EQ(sim.Of("W").end_time, 30);
  ExpectInterval(sim.Of("Next"), 30, 35);
}

TEST(Engine, StopTimeLeavesRunningAndQueuedJobsUnfinished) {
  EngineOptions options;
  options.stop_time = 50;
  TestSim sim(Nodes(1, 1), {MakeJob("Long", 0, 1, 100), MakeJob("Waiting", 1, 1, 1)}, "fcfs",
              "first-fit", options);
  sim.Run();
  EXPECT_EQ(sim.Of("Long").state, JobState::kUnfinished);
  EXPECT_DOUBLE_EQ(sim.Of("Long").run_seconds, 50);
  EXPECT_EQ(sim.Of("Waiting").state, JobState::kUnfinished);
}

// A policy that runs fcfs but preempts job 0 at t=4 and keeps it off the GPUs until t=6.
class PreemptOnce final : public Policy {
 public:
  void Schedule(SchedulingContext& context) override {
    if (!timers_set_) {
      context.SetTimer(4, 0, 1);
      context.SetTimer(6, 0, 2);
      timers_set_ = true;
    }
    if (context.now() >= 4 && context.now() < 6) return;
    Allocation allocation;
    for (JobId id = context.QueueFront(); id != kNoJob; id = context.QueueFront()) {
      if (!context.TryPlace(id, &allocation)) return;
      context.Start(id, std::move(allocation));
    }
  }
  void OnTimer(SchedulingContext& context, JobId id, int tag) override {
    if (tag == 1) context.Preempt(id);
  }

 private:
  bool timers_set_ = false;
};

TEST(Engine, PreemptedJobResumesWithItsRemainingWorkAndStaleFinishEventsAreIgnored) {
  // J (2 GPUs, 10 s) starts at 0, is preempted at 4 with 6 s of work left, resumes at 6 and
  // ends at 12 (preemption free here). Its first finish event (t=10) is stale and must not end
  // it.
  EngineOptions free;
  free.preemption_cost_seconds = 0;
  TestSim sim(Nodes(1, 2), {MakeJob("J", 0, 2, 10)}, std::make_unique<PreemptOnce>(), free);
  Engine& engine = sim.Run();
  const JobRun& run = sim.Of("J");
  ExpectInterval(run, 0, 12);
  EXPECT_EQ(run.preemptions, 1);
  EXPECT_DOUBLE_EQ(run.run_seconds, 10);
  EXPECT_DOUBLE_EQ(run.gpu_seconds, 20);
  // Processed: arrival, timer(4), timer(6), finish(12). The stale finish at 10 is not counted.
  EXPECT_EQ(engine.events_processed(), 4u);
}

// fcfs, but job 0 is preempted at t=4 and then declined (admission control turning away a
// requeued job).
class PreemptThenDecline final : public Policy {
 public:
  void Schedule(SchedulingContext& context) override {
    if (!timer_set_) {
      context.SetTimer(4, 0, 1);
      timer_set_ = true;
    }
    if (preempted_ && context.run(0).state == JobState::kQueued) {
      context.Decline(0, "declined after a preemption");
    }
    Allocation allocation;
    for (JobId id = context.QueueFront(); id != kNoJob; id = context.QueueFront()) {
      if (!context.TryPlace(id, &allocation)) return;
      context.Start(id, std::move(allocation));
    }
  }
  void OnTimer(SchedulingContext& context, JobId id, int /*tag*/) override {
    context.Preempt(id);
    preempted_ = true;
  }

 private:
  bool timer_set_ = false;
  bool preempted_ = false;
};

TEST(Engine, AJobDeclinedAfterItRanCountsAsStartedAndInNoDistribution) {
  // One GPU. A (10 s) starts at 0; B (3 s) arrives at 1 and waits. At 4 A is preempted and
  // declined; B starts at 4 (waited 3 s) and ends at 7. A is rejected, so it counts in no wait
  // or JCT (docs/metrics.md#jobs: rejected jobs count in none), but it started: one preemption
  // over the two jobs that started (0.5, as results/README.md defines preemptions_per_job).
  // Both the run's rows and the per-VC rows (two VCs) follow the same rule.
  EngineOptions free;
  free.preemption_cost_seconds = 0;
  Job a = MakeJob("A", 0, 1, 10);
  Job b = MakeJob("B", 1, 1, 3);
  a.vc = Symbol("x");
  b.vc = Symbol("y");
  TestSim sim(Nodes(1, 1), {a, b}, std::make_unique<PreemptThenDecline>(), free);
  Engine& engine = sim.Run();
  EXPECT_EQ(sim.Of("A").state, JobState::kRejected);
  EXPECT_EQ(sim.Of("A").preemptions, 1);
  ExpectInterval(sim.Of("B"), 4, 7);
  EXPECT_EQ(engine.jobs_started(), 2);
  const auto summary = ComputeSummary(engine);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "jobs_rejected"), 1);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "jobs_completed"), 1);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "wait_seconds_mean"), 3);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "wait_seconds_p50"), 3);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "jct_seconds_mean"), 6);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "preemptions_per_job"), 0.5);
  auto in_scope = [&summary](const std::string& metric, const std::string& scope) {
    for (const SummaryRow& row : summary) {
      if (row.metric == metric && row.scope == scope) return row.value;
    }
    return std::nan("");
  };
  EXPECT_DOUBLE_EQ(in_scope("jobs_total", "vc:x"), 1);
  EXPECT_DOUBLE_EQ(in_scope("wait_seconds_mean", "vc:y"), 3);
  EXPECT_TRUE(std::isnan(in_scope("wait_seconds_mean", "vc:x"))) << "A counts in no wait";
}

TEST(Engine, SameInputsGiveTheSameFingerprintAndDifferentInputsDoNot) {
  auto jobs = PlacementTrace();
  TestSim a(Nodes(2, 4), jobs), b(Nodes(2, 4), jobs);
  jobs[3].duration = 11;
  TestSim c(Nodes(2, 4), jobs);
  EXPECT_EQ(a.Run().fingerprint(), b.Run().fingerprint());
  EXPECT_NE(a.engine().fingerprint(), c.Run().fingerprint());
}

TEST(Engine, PreemptionCostDelaysProgressAfterResume) {
  // As above with a save + restore cost of 3 s: J runs [0,4) (4 s of work done), resumes at 6,
  // spends [6,9) restoring, then needs 6 s more: ends at 15. Running time 4 + 9 = 13 s.
  EngineOptions options;
  options.preemption_cost_seconds = 3;
  TestSim sim(Nodes(1, 2), {MakeJob("J", 0, 2, 10)}, std::make_unique<PreemptOnce>(), options);
  sim.Run();
  const JobRun& run = sim.Of("J");
  ExpectInterval(run, 0, 15);
  EXPECT_DOUBLE_EQ(run.run_seconds, 13);
  EXPECT_DOUBLE_EQ(sim.CostsOf("J").overhead_seconds, 3);
}

TEST(Engine, WallTimeCountsRunningTimeAcrossPreemptions) {
  // J (10 s of work, wall time 7 s) runs [0,4), is preempted, resumes at 6 with 3 s of wall time
  // left: killed at 9 with 3 s of work undone (preemption free here).
  Job job = MakeJob("J", 0, 2, 10);
  job.walltime = 7;
  EngineOptions free;
  free.preemption_cost_seconds = 0;
  TestSim sim(Nodes(1, 2), {job}, std::make_unique<PreemptOnce>(), free);
  sim.Run();
  EXPECT_EQ(sim.Of("J").state, JobState::kTimeout);
  EXPECT_DOUBLE_EQ(sim.Of("J").end_time, 9);
  EXPECT_DOUBLE_EQ(sim.ActiveOf("J").work_left, 3);
}

// A policy that starts J (job 0) on GPUs 0-1 and M (job 1) on GPU 2 at t=0, resizes J to GPUs
// 0, 1, 3, 4 at t=10 and migrates M to GPU 5 at t=20 (preempted and started there at once).
class MovesTwice final : public Policy {
 public:
  void Schedule(SchedulingContext& context) override {
    if (context.now() > 0) return;
    context.SetTimer(10, 0, 1);
    context.SetTimer(20, 1, 2);
    context.Start(0, OnGpus(context, {0, 1}));
    context.Start(1, OnGpus(context, {2}));
  }
  void OnTimer(SchedulingContext& context, JobId id, int tag) override {
    if (tag == 1) context.Resize(id, OnGpus(context, {0, 1, 3, 4}));
    if (tag == 2) {
      context.Preempt(id);
      context.Start(id, OnGpus(context, {5}));
    }
  }

 private:
  static Allocation OnGpus(const SchedulingContext& context, std::vector<int> gpus) {
    Allocation a;
    a.gpu_type = context.cluster().node(0).gpu_type;
    a.gpus = std::move(gpus);
    return a;
  }
};

// Every move pays the preemption cost and counts in preemption GPU-seconds, at 30 s:
// J (2 GPUs, 100 s) runs [0,10) (10 s of work), is resized to 4 GPUs at 10: it restores for 30 s
// on its 4 GPUs, then does its 90 s left: ends at 130; charged 4 x 30 = 120 GPU-s.
// M (1 GPU, 100 s) runs [0,20), migrates at 20: 30 s on its new GPU, then 80 s: ends at 130;
// charged 1 x 30 = 30 GPU-s, one preemption. In all 150 GPU-s = 150 / 3600 GPU-h.
TEST(Engine, ResizeAndMigrationPayThePreemptionCostAndCountInPreemptionGpuHours) {
  EngineOptions options;
  options.preemption_cost_seconds = 30;
  TestSim sim(Nodes(1, 8), {MakeJob("J", 0, 2, 100), MakeJob("M", 0, 1, 100)},
              std::make_unique<MovesTwice>(), options);
  Engine& engine = sim.Run();
  ExpectInterval(sim.Of("J"), 0, 130);
  ExpectInterval(sim.Of("M"), 0, 130);
  EXPECT_DOUBLE_EQ(sim.CostsOf("J").preemption_gpu_seconds, 120);
  EXPECT_DOUBLE_EQ(sim.CostsOf("M").preemption_gpu_seconds, 30);
  EXPECT_DOUBLE_EQ(sim.CostsOf("J").overhead_seconds, 30);
  EXPECT_DOUBLE_EQ(sim.CostsOf("M").overhead_seconds, 30);
  EXPECT_EQ(sim.Of("J").preemptions, 0);
  EXPECT_EQ(sim.Of("M").preemptions, 1);
  // J held 2 GPUs for 10 s and 4 for 120 s.
  EXPECT_DOUBLE_EQ(sim.Of("J").gpu_seconds, 2 * 10 + 4 * 120);
  const auto summary = ComputeSummary(engine);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "preemption_gpu_hours"), 150.0 / 3600);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "preemptions"), 1);
}

// The default is 30 s (the Pollux artifact's re-allocation delay), and docs/engine.md gives its
// source, so that a reader can check it.
TEST(Engine, PreemptionCostsThirtySecondsByDefaultWithItsSourceInTheDocs) {
  EXPECT_EQ(kDefaultPreemptionCostSeconds, 30);
  EXPECT_EQ(EngineOptions().preemption_cost_seconds, kDefaultPreemptionCostSeconds);
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/engine.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t section = doc.find("## Preemption cost");
  ASSERT_NE(section, std::string::npos);
  const std::string text = doc.substr(section, doc.find("\n## ", section + 1) - section);
  for (const char* needed : {"**Default: 30 s.**", "petuum/adaptdl", "simulator/simulator.py",
                             "rescale_time = 30", "Pollux", "OSDI'21", "--preemption-cost 0"}) {
    EXPECT_NE(text.find(needed), std::string::npos) << needed;
  }
}

// A broken policy: starts the head on GPUs that are already busy.
class DoubleBooker final : public Policy {
 public:
  void Schedule(SchedulingContext& context) override {
    for (JobId id = context.QueueFront(); id != kNoJob; id = context.QueueFront()) {
      Allocation a;
      a.gpu_type = context.cluster().node(0).gpu_type;
      a.gpus = {0};
      context.Start(id, a);
    }
  }
};

TEST(Engine, AnInvalidDecisionStopsTheRunNamingThePolicy) {
  TestSim sim(Nodes(1, 2), {MakeJob("a", 0, 1, 5), MakeJob("b", 0, 1, 5)},
              std::make_unique<DoubleBooker>());
  try {
    sim.Run();
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("test-policy"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("busy"), std::string::npos) << e.what();
  }
}

// Strict fcfs that promises the blocked head a start at the current time (and then, ignored,
// 5 s later): a promise it cannot keep while the head's GPUs are busy.
class EagerPromiser final : public Policy {
 public:
  explicit EagerPromiser(bool keeps) : keeps_(keeps) {}
  void Schedule(SchedulingContext& context) override {
    Allocation a;
    for (JobId id = context.QueueFront(); id != kNoJob; id = context.QueueFront()) {
      if (!context.TryPlace(id, &a)) {
        context.Promise(id, context.now());
        context.Promise(id, context.now() + 5);
        return;
      }
      context.Start(id, a);
    }
  }
  bool KeepsPromises() const override { return keeps_; }

 private:
  bool keeps_;
};

// 1 GPU. a t=0 10 s; b t=0 5 s: b is promised 0 at t=0 and starts at 10.
std::vector<Job> PromiseTrace() { return {MakeJob("a", 0, 1, 10), MakeJob("b", 0, 1, 5)}; }

TEST(Engine, WithCheckAStartAfterTheFirstPromiseStopsAPolicyThatKeepsPromises) {
  TestSim sim(Nodes(1, 1), PromiseTrace(), std::make_unique<EagerPromiser>(true));
  try {
    sim.Run();
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("promised"), std::string::npos) << e.what();
  }
}

TEST(Engine, TheFirstPromiseIsKeptAndAnEstimateIsNotChecked) {
  TestSim sim(Nodes(1, 1), PromiseTrace(), std::make_unique<EagerPromiser>(false));
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.engine().promised_start(sim.IndexOf("b")), 0);
  EXPECT_TRUE(std::isnan(sim.engine().promised_start(sim.IndexOf("a"))));
  ExpectInterval(sim.Of("b"), 10, 15);
}

TEST(Engine, PromisesAreNotCheckedOnceAJobRunsPastItsPlan) {
  // a plans 5 s (its wall time) but runs 10 (no kill): plans no longer hold from its start.
  EngineOptions options;
  options.enforce_walltime = false;
  std::vector<Job> jobs = PromiseTrace();
  jobs[0].walltime = 5;
  TestSim sim(Nodes(1, 1), jobs, std::make_unique<EagerPromiser>(true), options);
  sim.Run();
  EXPECT_FALSE(sim.engine().plans_held());
  ExpectInterval(sim.Of("b"), 10, 15);
}

}  // namespace
}  // namespace clustersim
