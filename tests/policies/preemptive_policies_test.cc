// sjf, srtf and las (docs/policies.md, #srtf, #las): schedules computed by hand in the comments, on
// clusters small enough to follow. Runtime model `trace` throughout, so a job progresses at rate 1
// and its remaining work is its trace duration minus the time it has run (minus restore overhead).
// TestSim runs the engine with --check invariants on (no GPU held twice, busy GPU-seconds equal
// the jobs' GPU-seconds). Preemption is free (--preemption-cost 0, the classical model the
// schedules are worked out in) unless a test sets a cost.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "sim/util/error.h"
#include "tests/cli/cli_test_util.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::ExpectInterval;
using testing::MakeJob;
using testing::Nodes;
using testing::TestSim;

// The engine's options with free preemption: these tests are about the policies' order.
EngineOptions FreePreemption() {
  EngineOptions options;
  options.preemption_cost_seconds = 0;
  return options;
}

// Preempted work is neither lost nor double counted: the job ran exactly its duration (plus any
// restore overhead), on `gpus` GPUs the whole time.
void ExpectWorkAccounted(const TestSim& sim, const std::string& id, double duration, int gpus,
                         double overhead = 0) {
  const JobRun& run = sim.Of(id);
  EXPECT_DOUBLE_EQ(run.run_seconds, duration + overhead);
  EXPECT_DOUBLE_EQ(run.gpu_seconds, (duration + overhead) * gpus);
  EXPECT_DOUBLE_EQ(sim.CostsOf(id).overhead_seconds, overhead);
  EXPECT_DOUBLE_EQ(sim.ActiveOf(id).work_left, 0);
}

Params ParamsOf(std::map<std::string, std::string> values) { return Params(std::move(values)); }

// ---------------------------------------------------------------------------------------------
// sjf

TEST(Sjf, StartsTheShortestJobFirstAndBlocksAtTheFirstJobThatDoesNotFit) {
  // 1 node x 4 GPUs. A (4 GPUs, 100 s) runs [0,100]; meanwhile B (2 GPUs, 50 s, t=10),
  // C (3 GPUs, 20 s, t=20), D (1 GPU, 60 s, t=30) and E (3 GPUs, 50 s, t=40) queue up.
  // Order by trace duration, ties by submit order: C 20, B 50, E 50 (B submitted first), D 60.
  // t=100: C starts [100,120] (1 GPU left); B (2) does not fit: blocking, so D (1 GPU) waits too.
  // t=120: B starts [120,170] (2 left); E (3) does not fit: D is blocked again.
  // t=170: E starts [170,220] (1 left), then D [170,230].
  TestSim sim(Nodes(1, 4),
              {MakeJob("A", 0, 4, 100), MakeJob("B", 10, 2, 50), MakeJob("C", 20, 3, 20),
               MakeJob("D", 30, 1, 60), MakeJob("E", 40, 3, 50)},
              "sjf", "first-fit", FreePreemption());
  sim.Run();
  ExpectInterval(sim.Of("A"), 0, 100);
  ExpectInterval(sim.Of("C"), 100, 120);
  ExpectInterval(sim.Of("B"), 120, 170);
  ExpectInterval(sim.Of("E"), 170, 220);
  ExpectInterval(sim.Of("D"), 170, 230);
}

// ---------------------------------------------------------------------------------------------
// srtf

TEST(Srtf, PreemptsALongJobWhenAShorterOneArrivesAndResumesItWithItsRemainingWork) {
  // 1 node x 4 GPUs. L (4 GPUs, 100 s) starts at 0. S (2 GPUs, 10 s) arrives at 30, when L has
  // 70 s left: order S, L; S takes 2 of the 4 GPUs, L (4) no longer fits and is preempted.
  // S runs [30,40]; L resumes at 40 with 70 s left and ends at 110.
  // L ran 30 + 70 = 100 s on 4 GPUs: 400 GPU-seconds; S 10 s on 2: 20. Busy total 420.
  TestSim sim(Nodes(1, 4), {MakeJob("L", 0, 4, 100), MakeJob("S", 30, 2, 10)}, "srtf", "first-fit", FreePreemption());
  Engine& engine = sim.Run();
  ExpectInterval(sim.Of("L"), 0, 110);
  ExpectInterval(sim.Of("S"), 30, 40);
  EXPECT_EQ(sim.Of("L").preemptions, 1);
  EXPECT_EQ(sim.Of("S").preemptions, 0);
  ExpectWorkAccounted(sim, "L", 100, 4);
  ExpectWorkAccounted(sim, "S", 10, 2);
  EXPECT_DOUBLE_EQ(engine.metrics().busy_gpu_seconds(), 420);
}

TEST(Srtf, SkipsAJobThatDoesNotFitAndStartsTheShorterOnesBehindIt) {
  // 1 node x 4 GPUs. L (4 GPUs, 100 s) starts at 0. At 30 (L has 70 s left) arrive S (2 GPUs,
  // 10 s), B (3 GPUs, 15 s) and M (1 GPU, 50 s). Order S 10, B 15, M 50, L 70:
  //   S takes 2 (2 left); B (3) does not fit: skipped; M takes 1 (1 left); L (4): preempted.
  // t=40: S ends. Order B 15, M 40 (running), L 70: B takes 3, M keeps its GPU, L waits.
  //   B runs [40,55].
  // t=55: B ends. M 25, L 70: L (4) does not fit beside M. t=80: M ends; L runs [80,150].
  TestSim sim(Nodes(1, 4),
              {MakeJob("L", 0, 4, 100), MakeJob("S", 30, 2, 10), MakeJob("B", 30, 3, 15),
               MakeJob("M", 30, 1, 50)},
              "srtf", "first-fit", FreePreemption());
  sim.Run();
  ExpectInterval(sim.Of("S"), 30, 40);
  ExpectInterval(sim.Of("B"), 40, 55);
  ExpectInterval(sim.Of("M"), 30, 80);
  ExpectInterval(sim.Of("L"), 0, 150);
  EXPECT_EQ(sim.Of("L").preemptions, 1);
  EXPECT_EQ(sim.Of("M").preemptions, 0);
  ExpectWorkAccounted(sim, "L", 100, 4);
}

TEST(Srtf, AChosenRunningJobKeepsItsGpusRatherThanMigrating) {
  // 2 nodes x 4 GPUs, first-fit. X (4 GPUs, 1000 s) starts at 0 on node 0. C (4 GPUs, 20 s)
  // arrives at 10: order C 20, X 990. A fresh packing would put C on node 0 and move X to node 1;
  // X keeps node 0 instead and C starts on node 1: [10,30]. X is never preempted: [0,1000].
  TestSim sim(Nodes(2, 4), {MakeJob("X", 0, 4, 1000), MakeJob("C", 10, 4, 20)}, "srtf", "first-fit", FreePreemption());
  sim.Run();
  ExpectInterval(sim.Of("X"), 0, 1000);
  ExpectInterval(sim.Of("C"), 10, 30);
  EXPECT_EQ(sim.Of("X").preemptions, 0);
  ExpectWorkAccounted(sim, "X", 1000, 4);
}

TEST(Srtf, AnEvictedJobWhoseGpusTheNewcomerDidNotTakeKeepsRunning) {
  // 2 nodes x 4 GPUs (GPUs 0-3 node 0, 4-7 node 1), first-fit. At 0: X (1 GPU, 1000 s),
  // P (2 GPUs, 900 s), Q (3 GPUs, 800 s). Order Q, P, X: Q -> node 0 {0,1,2}; P -> node 1 {4,5}
  // (node 0 has 1 free); X -> node 0 {3}. Free: {6,7}.
  // t=10: W (4 GPUs, 100 s) arrives; order W 100, Q 790, P 890, X 990. W needs a whole node.
  //   Evicting the lowest-priority job X frees GPU 3: no node has 4 free. Evicting P next frees
  //   node 1: W takes {4,5,6,7}. P's GPUs are gone and 2 GPUs fit nowhere else (only GPU 3 is
  //   left): P is preempted with 890 s left. X's GPU was not taken: X keeps running, untouched.
  // W [10,110]; Q [0,800]; at 110 P restarts on node 1 and ends 110 + 890 = 1000; X [0,1000].
  TestSim sim(Nodes(2, 4),
              {MakeJob("X", 0, 1, 1000), MakeJob("P", 0, 2, 900), MakeJob("Q", 0, 3, 800),
               MakeJob("W", 10, 4, 100)},
              "srtf", "first-fit", FreePreemption());
  sim.Run();
  ExpectInterval(sim.Of("W"), 10, 110);
  ExpectInterval(sim.Of("Q"), 0, 800);
  ExpectInterval(sim.Of("P"), 0, 1000);
  ExpectInterval(sim.Of("X"), 0, 1000);
  EXPECT_EQ(sim.Of("X").preemptions, 0);
  EXPECT_EQ(sim.Of("P").preemptions, 1);
  ExpectWorkAccounted(sim, "P", 900, 2);
}

TEST(Srtf, MigratesAnEvictedJobThatStillFitsElsewhereAndChargesItAPreemption) {
  // 2 nodes x 4 GPUs, first-fit, preemption cost 5 s. At 0: F (2 GPUs, 10 s), H (2 GPUs, 500 s),
  // E (2 GPUs, 1000 s). Order F, H, E: F -> node 0 {0,1}, H -> node 0 {2,3}, E -> node 1 {4,5}.
  // t=10: F ends: node 0 has {0,1} free, node 1 {6,7}.
  // t=20: W (4 GPUs, 100 s) arrives; order W 100, H 480, E 980. 4 GPUs are free but on two
  //   nodes. Evicting E frees node 1: W takes {4,5,6,7}. E then fits on {0,1}: it is preempted
  //   and restarted there at once, paying 5 s of restore: 980 s left from 25 -> ends 1005.
  // W [20,120]; H [0,500]. E ran [0,20] and [20,1005]: 1005 s, 5 of them overhead.
  EngineOptions options;
  options.preemption_cost_seconds = 5;
  TestSim sim(Nodes(2, 4),
              {MakeJob("F", 0, 2, 10), MakeJob("H", 0, 2, 500), MakeJob("E", 0, 2, 1000),
               MakeJob("W", 20, 4, 100)},
              "srtf", "first-fit", options);
  sim.Run();
  ExpectInterval(sim.Of("F"), 0, 10);
  ExpectInterval(sim.Of("W"), 20, 120);
  ExpectInterval(sim.Of("H"), 0, 500);
  ExpectInterval(sim.Of("E"), 0, 1005);
  EXPECT_EQ(sim.Of("E").preemptions, 1);
  EXPECT_EQ(sim.Of("H").preemptions, 0);
  ExpectWorkAccounted(sim, "E", 1000, 2, 5);
}

TEST(Srtf, RemainingWorkDoesNotShrinkWhileARestoreIsBeingPaid) {
  // 1 node x 4 GPUs, preemption cost 5 s. L (4 GPUs, 100 s) starts at 0; S (2 GPUs, 10 s)
  // arrives at 30 and preempts it (L: 70 s left, 5 s of restore owed). S runs [30,40].
  // t=40: L resumes and pays its restore over [40,45]. T (2 GPUs, 69 s) arrives at 42: L has
  //   still 70 s of work left (the 2 s since 40 went to the restore, not to progress), so T
  //   (69) goes first and L (4) no longer fits: preempted again, owing 3 + 5 = 8 s of restore.
  // T runs [42,111]. t=111: L resumes, restores over [111,119], works 70 s: ends at 189.
  // L ran 30 + 2 + 78 = 110 s, 10 of them overhead (2 + 8).
  EngineOptions options;
  options.preemption_cost_seconds = 5;
  TestSim sim(Nodes(1, 4),
              {MakeJob("L", 0, 4, 100), MakeJob("S", 30, 2, 10), MakeJob("T", 42, 2, 69)},
              "srtf", "first-fit", options);
  sim.Run();
  ExpectInterval(sim.Of("S"), 30, 40);
  ExpectInterval(sim.Of("T"), 42, 111);
  ExpectInterval(sim.Of("L"), 0, 189);
  EXPECT_EQ(sim.Of("L").preemptions, 2);
  ExpectWorkAccounted(sim, "L", 100, 4, 10);
}

// Runs srtf and, after every pass, checks that the running jobs are exactly those the rule
// selects: all runnable jobs by (remaining work, submit order), each taken if it fits in the GPUs
// the ones before it leave. On one node first-fit is GPU counting, so this is the whole rule.
class CheckedSrtf final : public Policy {
 public:
  explicit CheckedSrtf(int gpus) : gpus_(gpus), inner_(FindPolicy("srtf").make(Params())) {}
  void OnArrival(SchedulingContext& context, JobId id) override { inner_->OnArrival(context, id); }
  void OnCompletion(SchedulingContext& context, JobId id) override {
    inner_->OnCompletion(context, id);
  }
  void Schedule(SchedulingContext& context) override {
    inner_->Schedule(context);
    std::vector<std::pair<double, JobId>> runnable;
    auto remaining = [&context](JobId id) {
      const JobRun& run = context.run(id);
      const ActiveRun& live = context.active(id);
      if (run.state != JobState::kRunning) return live.work_left;
      const double ran = context.now() - live.last_start;
      return std::max(0.0, live.work_left - (ran - std::min(ran, live.overhead_left)) * live.rate);
    };
    for (JobId id = context.QueueFront(); id != kNoJob; id = context.QueueNext(id)) {
      runnable.emplace_back(remaining(id), id);
    }
    for (JobId id : context.running()) runnable.emplace_back(remaining(id), id);
    std::sort(runnable.begin(), runnable.end());
    int left = gpus_;
    for (const auto& [work, id] : runnable) {
      const int need = context.active(id).request.gpus;
      const bool selected = need <= left;
      if (selected) left -= need;
      EXPECT_EQ(context.run(id).state == JobState::kRunning, selected)
          << "job " << context.job(id).id << " at t=" << context.now();
    }
    ++passes;
  }
  int passes = 0;

 private:
  int gpus_;
  std::unique_ptr<Policy> inner_;
};

TEST(Srtf, AfterEveryPassExactlyTheGreedySelectionByRemainingWorkRuns) {
  // 400 random jobs (1-8 GPUs, 1-3000 s, bursts of arrivals) on 1 node x 8 GPUs.
  std::mt19937_64 rng(7);
  std::vector<Job> jobs;
  double t = 0;
  for (int i = 0; i < 400; ++i) {
    t += static_cast<double>(rng() % 4 == 0 ? rng() % 2000 : rng() % 50);
    // One draw at a time, the duration first as g++ drew them: the order of two draws in one
    // argument list is unspecified, and the suite must see the same jobs with g++ and clang.
    const double duration = static_cast<double>(1 + rng() % 3000);
    const int gpus = 1 + static_cast<int>(rng() % 8);
    jobs.push_back(MakeJob("j" + std::to_string(i), t, gpus, duration));
  }
  auto policy = std::make_unique<CheckedSrtf>(8);
  CheckedSrtf* checked = policy.get();
  EngineOptions options;
  options.preemption_cost_seconds = 7;
  TestSim sim(Nodes(1, 8), jobs, std::move(policy), options);
  Engine& engine = sim.Run();
  EXPECT_GT(checked->passes, 400);
  int preemptions = 0;
  for (const JobRun& run : engine.runs()) {
    EXPECT_EQ(run.state, JobState::kCompleted);
    preemptions += run.preemptions;
  }
  EXPECT_GT(preemptions, 20);  // the check exercised preemption
}

TEST(PreemptivePolicies, RunJobsAtUnequalRatesUnderTheHardwareModelAndFinishEveryOne) {
  // V100 and A100 nodes under the `hardware` runtime model: jobs progress at rates other than 1
  // (srtf then sorts its running jobs by remaining work each time it needs them). With a restore
  // cost, on every placement: the engine's --check invariants hold after every pass, every job
  // completes, and the run is deterministic.
  const std::string cluster = R"({"nodes":[
    {"count":2,"gpu_type":"V100-32GB","gpus_per_node":8},
    {"count":2,"gpu_type":"A100-80GB","gpus_per_node":8}]})";
  std::mt19937_64 rng(11);
  std::vector<Job> jobs;
  double t = 0;
  const int sizes[] = {1, 1, 1, 2, 4, 8, 16};
  for (int i = 0; i < 300; ++i) {
    t += static_cast<double>(rng() % 120);
    // One draw at a time, the duration first as g++ drew them: the order of two draws in one
    // argument list is unspecified, and the suite must see the same jobs with g++ and clang.
    const double duration = static_cast<double>(60 + rng() % 7200);
    const int gpus = sizes[rng() % 7];
    jobs.push_back(MakeJob("j" + std::to_string(i), t, gpus, duration));
  }
  EngineOptions options;
  options.preemption_cost_seconds = 20;
  for (const std::string policy : {"srtf", "las"}) {
    for (const std::string placement : {"pool", "first-fit", "best-fit"}) {
      TestSim a(cluster, jobs, policy, placement, options, "hardware");
      TestSim b(cluster, jobs, policy, placement, options, "hardware");
      a.Run();
      b.Run();
      EXPECT_EQ(a.engine().fingerprint(), b.engine().fingerprint()) << policy << placement;
      int preemptions = 0;
      for (const JobRun& run : a.engine().runs()) {
        EXPECT_EQ(run.state, JobState::kCompleted) << policy << " " << placement;
        preemptions += run.preemptions;
      }
      EXPECT_GT(preemptions, 0) << policy << " " << placement;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// las (default thresholds 3250, 7200 GPU-seconds: queues 0, 1, 2)

TEST(Las, DemotesAFourGpuJobAtTheExactCrossingOf3250GpuSecondsWhereANewOneGpuJobPreemptsIt) {
  // 1 node x 4 GPUs. A (4 GPUs, 2000 s) starts at 100 in queue 0; its service reaches 3250
  // GPU-seconds after 3250 / 4 = 812.5 s: demotion timer at 912.5.
  // t=400: B (1 GPU, 100 s) arrives at the back of queue 0, behind the running A: no room.
  // t=912.5: A moves to queue 1. The pass: queue 0 [B] takes 1 GPU; queue 1 [A] needs 4 of the 3
  //   left: preempted with 2000 - 812.5 = 1187.5 s left. B runs [912.5, 1012.5].
  // t=1012.5: A resumes (service 3250; next threshold 7200 at 1012.5 + 3950 / 4 = 2000, where it
  //   moves to queue 2 alone) and ends at 1012.5 + 1187.5 = 2200.
  TestSim sim(Nodes(1, 4), {MakeJob("A", 100, 4, 2000), MakeJob("B", 400, 1, 100)}, "las", "first-fit", FreePreemption());
  sim.Run();
  ExpectInterval(sim.Of("B"), 912.5, 1012.5);
  ExpectInterval(sim.Of("A"), 100, 2200);
  EXPECT_EQ(sim.Of("A").preemptions, 1);
  ExpectWorkAccounted(sim, "A", 2000, 4);
  ExpectWorkAccounted(sim, "B", 100, 1);
}

TEST(Las, HandComputedScheduleWithDemotionsThroughAllThreeQueues) {
  // 1 node x 4 GPUs. A (4 GPUs, 2000 s) t=0; B (1 GPU, 100 s) t=300; C (2 GPUs, 2000 s) t=400.
  // t=0: A starts in queue 0; crosses 3250 at 3250 / 4 = 812.5.
  // t=300, 400: B and C wait in queue 0 behind the running A.
  // t=812.5: A -> back of queue 1. Pass: B (1) and C (2) fit; A (4) does not fit in the 1 left:
  //   preempted (1187.5 s left, service 3250). B [812.5, 912.5]; C starts, crosses 3250 at
  //   812.5 + 3250 / 2 = 2437.5.
  // t=912.5: B ends. Queue 1 [A] needs 4, 2 free beside C (queue 0, ahead): waits.
  // t=2437.5: C -> back of queue 1, behind the waiting A: queue 1 = [A, C]. A takes all 4 GPUs;
  //   C (2) does not fit: preempted with 2000 - 1625 = 375 s left (service 3250). A resumes at
  //   service 3250 and crosses 7200 at 2437.5 + 3950 / 4 = 3425.
  // t=3425: A -> queue 2 (1187.5 - 987.5 = 200 s left). Queue 1 [C] comes first: C takes 2 and
  //   A (4) is preempted. C ends at 3425 + 375 = 3800 (its 7200 crossing would be at 5400).
  // t=3800: A resumes in queue 2 (no more thresholds) and ends at 4000.
  TestSim sim(Nodes(1, 4),
              {MakeJob("A", 0, 4, 2000), MakeJob("B", 300, 1, 100), MakeJob("C", 400, 2, 2000)},
              "las", "first-fit", FreePreemption());
  sim.Run();
  ExpectInterval(sim.Of("A"), 0, 4000);
  ExpectInterval(sim.Of("B"), 812.5, 912.5);
  ExpectInterval(sim.Of("C"), 812.5, 3800);
  EXPECT_EQ(sim.Of("A").preemptions, 2);
  EXPECT_EQ(sim.Of("B").preemptions, 0);
  EXPECT_EQ(sim.Of("C").preemptions, 1);
  ExpectWorkAccounted(sim, "A", 2000, 4);
  ExpectWorkAccounted(sim, "B", 100, 1);
  ExpectWorkAccounted(sim, "C", 2000, 2);
}

TEST(Las, KeepsRunningJobsAheadOfQueuedOnesInTheirQueue) {
  // 1 node x 4 GPUs; every job stays in queue 0 (at most 400 GPU-seconds each).
  // R (2 GPUs, 100 s) starts at 0. X (4 GPUs, 50 s) arrives at 10: does not fit. Y (2 GPUs,
  // 200 s) arrives at 20: queue 0 = [R, X, Y]; X is skipped, Y fits and starts [20,220]. After
  // the pass queue 0 is reordered with running jobs first: [R, Y, X].
  // t=100: R ends. [Y, X]: Y keeps its GPUs; X (4) does not fit beside it. (Had X stayed ahead
  //   of Y, X would have preempted Y here.) t=220: Y ends; X runs [220,270].
  TestSim sim(Nodes(1, 4),
              {MakeJob("R", 0, 2, 100), MakeJob("X", 10, 4, 50), MakeJob("Y", 20, 2, 200)},
              "las", "first-fit", FreePreemption());
  sim.Run();
  ExpectInterval(sim.Of("R"), 0, 100);
  ExpectInterval(sim.Of("Y"), 20, 220);
  ExpectInterval(sim.Of("X"), 220, 270);
  EXPECT_EQ(sim.Of("Y").preemptions, 0);
}

TEST(Las, PaysTheEnginePreemptionCostWhenAPreemptedJobResumes) {
  // As the 812.5 s demotion with A starting at 0 and a restore cost of 30 s.
  // 1 node x 4 GPUs. A (4 GPUs, 2000 s) t=0; B (1 GPU, 100 s) t=300.
  // t=812.5: A (service 3250) -> queue 1; B preempts it: B [812.5, 912.5]; A owes 30 s.
  // t=912.5: A resumes: restore [912.5, 942.5], then 1187.5 s of work: ends at 2130. (Its service
  //   counts the GPUs held while restoring: it crosses 7200 at 912.5 + 3950 / 4 = 1900.)
  // A held its GPUs 812.5 + 1217.5 = 2030 s, 30 of them restoring.
  EngineOptions options;
  options.preemption_cost_seconds = 30;
  TestSim sim(Nodes(1, 4), {MakeJob("A", 0, 4, 2000), MakeJob("B", 300, 1, 100)}, "las",
              "first-fit", options);
  sim.Run();
  ExpectInterval(sim.Of("B"), 812.5, 912.5);
  ExpectInterval(sim.Of("A"), 0, 2130);
  EXPECT_EQ(sim.Of("A").preemptions, 1);
  ExpectWorkAccounted(sim, "A", 2000, 4, 30);
}

// The starvation scenario: 1 GPU, thresholds=100 (queues 0 and 1). L (1000 s) starts at 0 and
// is demoted at 100, where S1 (queued since 50) preempts it. Short jobs (80 s each, so 80
// GPU-seconds: they never leave queue 0) keep queue 0 busy: S1 t=50, S2 t=150, S3 t=250,
// S4 t=330, S5 t=410.
std::vector<Job> StarvationTrace() {
  return {MakeJob("L", 0, 1, 1000), MakeJob("S1", 50, 1, 80),  MakeJob("S2", 150, 1, 80),
          MakeJob("S3", 250, 1, 80), MakeJob("S4", 330, 1, 80), MakeJob("S5", 410, 1, 80)};
}

TEST(Las, WithoutTheStarvationGuardALowQueueJobWaitsForQueueZeroToEmpty) {
  // t=100: L -> queue 1, preempted; S1 [100,180], S2 [180,260], S3 [260,340], S4 [340,420],
  // S5 [420,500]; L resumes at 500 with 900 s left: ends 1400.
  TestSim sim(Nodes(1, 1), StarvationTrace(), "las", "first-fit", FreePreemption(), "trace",
              ParamsOf({{"thresholds", "100"}}));
  sim.Run();
  ExpectInterval(sim.Of("S1"), 100, 180);
  ExpectInterval(sim.Of("S2"), 180, 260);
  ExpectInterval(sim.Of("S3"), 260, 340);
  ExpectInterval(sim.Of("S4"), 340, 420);
  ExpectInterval(sim.Of("S5"), 420, 500);
  ExpectInterval(sim.Of("L"), 0, 1400);
  EXPECT_EQ(sim.Of("L").preemptions, 1);
}

TEST(Las, StarvationGuardPromotesAJobThatWaitedTooLongToTheBackOfQueueZero) {
  // starvation_seconds=200. L is preempted at 100, so at 300 it moves to the back of queue 0
  // with its service counted from 0 again. S1 [100,180], S2 [180,260], S3 [260,340] as before.
  // t=300: queue 0 = [S3 (running), L]; no room. t=330: S4 queues behind L.
  // t=340: S3 ends; L comes before S4: L runs from 340 and crosses 100 GPU-seconds at 440.
  // t=440: L -> queue 1; S4 preempts it (800 s left). S4 [440,520], S5 [520,600].
  // t=600: queue 0 is empty; L resumes (its starvation timer of 640 is void) and ends at 1400.
  TestSim sim(Nodes(1, 1), StarvationTrace(), "las", "first-fit", FreePreemption(), "trace",
              ParamsOf({{"thresholds", "100"}, {"starvation_seconds", "200"}}));
  sim.Run();
  ExpectInterval(sim.Of("S1"), 100, 180);
  ExpectInterval(sim.Of("S2"), 180, 260);
  ExpectInterval(sim.Of("S3"), 260, 340);
  ExpectInterval(sim.Of("S4"), 440, 520);
  ExpectInterval(sim.Of("S5"), 520, 600);
  ExpectInterval(sim.Of("L"), 0, 1400);
  EXPECT_EQ(sim.Of("L").preemptions, 2);
  ExpectWorkAccounted(sim, "L", 1000, 1);
}

TEST(Las, ThresholdsParameterMovesTheDemotionPoint) {
  // thresholds=3240,7200: A (4 GPUs, 2000 s, t=100) crosses 3240 at 100 + 3240 / 4 = 910, where
  // B (1 GPU, 100 s, t=400) preempts it: B [910,1010]; A resumes with 2000 - 810 = 1190 s left
  // and ends at 2200.
  TestSim sim(Nodes(1, 4), {MakeJob("A", 100, 4, 2000), MakeJob("B", 400, 1, 100)}, "las",
              "first-fit", FreePreemption(), "trace", ParamsOf({{"thresholds", "3240,7200"}}));
  sim.Run();
  ExpectInterval(sim.Of("B"), 910, 1010);
  ExpectInterval(sim.Of("A"), 100, 2200);
}

TEST(Las, RejectsMalformedParametersNamingThem) {
  const PolicyEntry& las = FindPolicy("las");
  for (const std::string bad : {"", "abc", "3250,", "7200,3250", "3250,3250", "-1", "0,10",
                                "3250;7200", "inf"}) {
    try {
      las.make(ParamsOf({{"thresholds", bad}}));
      ADD_FAILURE() << "thresholds=" << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("thresholds"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(las.make(ParamsOf({{"starvation_seconds", "-5"}})), InputError);
  EXPECT_NO_THROW(las.make(ParamsOf({{"thresholds", "100, 200 ,300"}})));
}

// ---------------------------------------------------------------------------------------------
// The command line

class LasCommandLine : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteFile(dir_.File("cluster.json"), Nodes(1, 4));
    testing::WriteFile(dir_.File("trace.csv"),
                       "job_id,submit_time,gpus,duration\nA,100,4,2000\nB,400,1,100\n");
  }
  testing::CliResult Run(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"run", "--trace", dir_.File("trace.csv"), "--cluster",
                                     dir_.File("cluster.json"), "--policy", "las",
                                     "--runtime-model", "trace", "--out", dir_.File("out.sqlite")};
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::RunCli(args);
  }
  // B's start time in the newest run.
  double StartOfB() {
    testing::Database db(dir_.File("out.sqlite"));
    return db.Number(
        "SELECT start_time FROM jobs WHERE job_id = 'B' AND run_id = (SELECT MAX(run_id) FROM "
        "runs)");
  }
  testing::TempDir dir_;
};

TEST_F(LasCommandLine, ParamThresholdsSetsTheDemotionThresholds) {
  // Default 3250: B starts at 100 + 3250 / 4 = 912.5; with 3240: at 100 + 3240 / 4 = 910.
  testing::CliResult r = Run({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_DOUBLE_EQ(StartOfB(), 912.5);
  r = Run({"--param", "thresholds=3240,7200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_DOUBLE_EQ(StartOfB(), 910);
}

TEST_F(LasCommandLine, ABadThresholdsValueIsAnErrorNamingTheParameter) {
  const testing::CliResult r = Run({"--param", "thresholds=7200,3240"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("thresholds"), std::string::npos) << r.err;
}

TEST(PolicyList, VerboseListingShowsTheLasParametersWithDefaults) {
  const testing::CliResult r = testing::RunCli({"list", "policies", "--verbose"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("thresholds (3250,7200)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("starvation_seconds (0 = off)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sjf"), std::string::npos);
  EXPECT_NE(r.out.find("srtf"), std::string::npos);
}

}  // namespace
}  // namespace clustersim
