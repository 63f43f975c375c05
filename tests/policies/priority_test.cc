// priority (docs/policies.md#priority): schedules computed by hand in the comments. Runtime model
// `trace` throughout (a job progresses at rate 1), so a preempted job's remaining work is its
// duration minus the time it has run, and it resumes after its preemption cost (save + restore)
// of overhead. TestSim runs with --check invariants on.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "sim/engine/priority_class.h"
#include "sim/engine/summary.h"
#include "sim/util/error.h"
#include "tests/sim/engine/pool_test_util.h"
#include "tests/test_util.h"
#include "workloads/generator.h"
#include "workloads/reader.h"

namespace clustersim {
namespace {

using testing::ExpectInterval;
using testing::Nodes;
using testing::Summary;
using testing::TestSim;
using testing::TempPath;

Job MakeJob(const std::string& id, double submit, int gpus, double duration, int priority,
            const std::string& vc = "") {
  Job job = testing::MakeJob(id, submit, gpus, duration);
  job.priority = priority;
  job.vc = vc;
  return job;
}

TestSim Sim(const std::string& cluster, std::vector<Job> jobs,
            std::map<std::string, std::string> params, double preemption_cost = 0,
            const std::string& placement = "first-fit") {
  EngineOptions options;
  options.preemption_cost_seconds = preemption_cost;
  return TestSim(cluster, std::move(jobs), "priority", placement, options, "trace",
                 Params(std::move(params)));
}

TEST(Priority, AHighJobOnAFullClusterStartsAtOnceAndTheCheapestLowestClassJobStops) {
  // 1 node x 8 GPUs, preemption cost 30 s. At 0: L1 (level 0, 4 GPUs), L2 (level 0, 2 GPUs) and
  // M (level 1, 2 GPUs), 1000 s each: the cluster is full. At 100 H (level 2, 2 GPUs, 50 s).
  // Candidates, lowest level first, then cost (GPUs x 30 s): L2 (60), L1 (120), then M.
  // Preempting L2 frees 2 GPUs: H fits, starts at once and runs [100,150]. L2 had run 100 s;
  // at 150 it resumes, pays 30 s of save + restore and its 900 s left: it ends at 1080.
  // L1 and M are never touched.
  TestSim sim = Sim(Nodes(1, 8),
                    {MakeJob("L1", 0, 4, 1000, 0), MakeJob("L2", 0, 2, 1000, 0),
                     MakeJob("M", 0, 2, 1000, 1), MakeJob("H", 100, 2, 50, 2)},
                    {}, 30);
  const Engine& engine = sim.Run();
  ExpectInterval(sim.Of("H"), 100, 150);
  ExpectInterval(sim.Of("L2"), 0, 1080);
  ExpectInterval(sim.Of("L1"), 0, 1000);
  ExpectInterval(sim.Of("M"), 0, 1000);
  EXPECT_EQ(sim.Of("L2").preemptions, 1);
  EXPECT_EQ(sim.Of("L1").preemptions + sim.Of("M").preemptions + sim.Of("H").preemptions, 0);
  EXPECT_DOUBLE_EQ(sim.CostsOf("L2").overhead_seconds, 30);
  EXPECT_DOUBLE_EQ(sim.CostsOf("L2").preemption_gpu_seconds, 60);  // 2 GPUs x 30 s
  // Per-class summary rows: level 2 waited 0 s, level 0 lost 60 GPU-seconds to preemption.
  EXPECT_DOUBLE_EQ(Summary(engine, "wait_seconds_mean", "priority:2"), 0);
  EXPECT_DOUBLE_EQ(Summary(engine, "preemptions", "priority:0"), 1);
  EXPECT_DOUBLE_EQ(Summary(engine, "preemption_gpu_hours", "priority:0"), 60.0 / 3600);
  EXPECT_DOUBLE_EQ(Summary(engine, "preemption_gpu_hours", "priority:1"), 0);
  EXPECT_DOUBLE_EQ(Summary(engine, "jct_seconds_mean", "priority:2"), 50);
  EXPECT_DOUBLE_EQ(Summary(engine, "preemption_gpu_hours", "all"), 60.0 / 3600);
}

TEST(Priority, APreemptedJobResumesAtOnceWhenTheHigherJobEndsPlusItsRestore) {
  // 1 node x 4 GPUs, preemption cost 30 s. L (level 0, 4 GPUs, 1000 s) from 0. H (level 2,
  // 4 GPUs, 200 s) at 100 preempts L and starts at once. U (level 3, 4 GPUs, 50 s) at 150
  // preempts H (run 50 s, 150 s left) and runs [150,200]. At 200 H, the higher of the two
  // waiting, resumes at once: 30 s restore + 150 s: it ends at 380. L then resumes: 30 s + its
  // 900 s left: [380, 1310].
  TestSim sim =
      Sim(Nodes(1, 4),
          {MakeJob("L", 0, 4, 1000, 0), MakeJob("H", 100, 4, 200, 2), MakeJob("U", 150, 4, 50, 3)},
          {}, 30);
  sim.Run();
  ExpectInterval(sim.Of("U"), 150, 200);
  ExpectInterval(sim.Of("H"), 100, 380);
  ExpectInterval(sim.Of("L"), 0, 1310);
  EXPECT_DOUBLE_EQ(sim.CostsOf("H").overhead_seconds, 30);
  EXPECT_DOUBLE_EQ(sim.Of("H").run_seconds, 50 + 30 + 150);
  EXPECT_DOUBLE_EQ(sim.Of("L").run_seconds, 100 + 30 + 900);
}

TEST(Priority, VictimsComeFromTheLowestClassAndOnlyThoseTheHeadNeedsStop) {
  // 1 node x 8 GPUs, pool, cost 10 s. At 0: A (level 0, 1 GPU), B (level 0, 4 GPUs), C (level
  // 1, 1 GPU), D (level 1, 2 GPUs), 1000 s each. At 10 H (level 2, 3 GPUs, 100 s).
  // Order: A (cost 10), B (40), C (10), D (20). Taking A leaves 1 GPU free, taking B too 5:
  // H fits. Giving back, costliest first: without B only A's 1 GPU is free (H needs 3), so B
  // stays a victim; without A, B's 4 GPUs suffice: A is given back. Only B stops.
  TestSim sim =
      Sim(Nodes(1, 8),
          {MakeJob("A", 0, 1, 1000, 0), MakeJob("B", 0, 4, 1000, 0), MakeJob("C", 0, 1, 1000, 1),
           MakeJob("D", 0, 2, 1000, 1), MakeJob("H", 10, 3, 100, 2)},
          {}, 10, "pool");
  sim.Run();
  ExpectInterval(sim.Of("H"), 10, 110);
  EXPECT_EQ(sim.Of("B").preemptions, 1);
  for (const char* id : {"A", "C", "D"}) EXPECT_EQ(sim.Of(id).preemptions, 0) << id;
  // B resumes at 110: 10 s restore + 990 s left.
  ExpectInterval(sim.Of("B"), 0, 1110);
}

TEST(Priority, AmongEqualCostsTheNewestStartedJobStops) {
  // 1 node x 4 GPUs. A (level 0, 2 GPUs) starts at 0, B (level 0, 2 GPUs) at 5; H (level 1,
  // 2 GPUs, 10 s) at 20. A and B cost the same: B, started last, is preempted (it has run
  // least since its start). B ran 15 s and resumes at 30 with 985 s left: ends at 1015.
  TestSim sim = Sim(
      Nodes(1, 4),
      {MakeJob("A", 0, 2, 1000, 0), MakeJob("B", 5, 2, 1000, 0), MakeJob("H", 20, 2, 10, 1)}, {});
  sim.Run();
  ExpectInterval(sim.Of("H"), 20, 30);
  ExpectInterval(sim.Of("A"), 0, 1000);
  ExpectInterval(sim.Of("B"), 5, 1015);
}

TEST(Priority, MinSliceDelaysTheHighJobToTheFirstMomentAVictimReachesItsSlice) {
  // 1 node x 4 GPUs, min_slice = 100 s. L1 (level 0, 2 GPUs) starts at 0, L2 (level 0, 2 GPUs)
  // at 50. H (level 1, 2 GPUs, 10 s) arrives at 60: neither has run 100 s. L1 reaches its
  // slice at 100, L2 at 150: H preempts L1 at 100 (a timer wakes the policy then) and runs
  // [100,110]; L1 resumes at 110 with 900 s left: [0,1010]. L2 is untouched: [50,1050].
  TestSim sim =
      Sim(Nodes(1, 4),
          {MakeJob("L1", 0, 2, 1000, 0), MakeJob("L2", 50, 2, 1000, 0), MakeJob("H", 60, 2, 10, 1)},
          {{"min_slice", "100"}});
  sim.Run();
  ExpectInterval(sim.Of("H"), 100, 110);
  ExpectInterval(sim.Of("L1"), 0, 1010);
  ExpectInterval(sim.Of("L2"), 50, 1050);
  EXPECT_EQ(sim.Of("L2").preemptions, 0);
}

TEST(Priority, MinSliceEndsWhereTheWakeUpIsSetEvenWhenTheDifferenceRoundsBelowIt) {
  // In doubles 0.3 + 0.6 = 0.8999999999999999 and 0.8999999999999999 - 0.3 = 0.5999999999999999,
  // below 0.6: a slice measured as now - start would never end at the wake-up set for it, and
  // the policy would wake at the same moment forever. L (level 0, 4 GPUs, 10 s) starts at 0.3;
  // H (level 1, 4 GPUs, 1 s) arrives at 0.4 and preempts L when its slice ends, at 0.3 + 0.6.
  static_assert((0.3 + 0.6) - 0.3 < 0.6);
  TestSim sim = Sim(Nodes(1, 4), {MakeJob("L", 0.3, 4, 10, 0), MakeJob("H", 0.4, 4, 1, 1)},
                    {{"min_slice", "0.6"}});
  const Engine& engine = sim.Run();
  ExpectInterval(sim.Of("H"), 0.3 + 0.6, 0.3 + 0.6 + 1);
  EXPECT_EQ(sim.Of("L").preemptions, 1);
  EXPECT_LT(engine.events_processed(), 20u);
}

TEST(Priority, AGuaranteedClassIsNeverPreempted) {
  // 1 node x 4 GPUs, guaranteed = low (level 0). G (level 0, 4 GPUs, 100 s) from 0; H (level 1,
  // 4 GPUs, 10 s) at 10 cannot preempt it and starts when G ends: [100,110].
  TestSim sim = Sim(Nodes(1, 4), {MakeJob("G", 0, 4, 100, 0), MakeJob("H", 10, 4, 10, 1)},
                    {{"guaranteed", "low"}});
  sim.Run();
  ExpectInterval(sim.Of("G"), 0, 100);
  ExpectInterval(sim.Of("H"), 100, 110);
  EXPECT_EQ(sim.Of("G").preemptions, 0);
}

TEST(Priority, AgingPromotesAStarvingJobOneClass) {
  // 1 node x 2 GPUs, all jobs 2 GPUs. H1 (level 1, 300 s) runs [0,300]. S (level 0, 100 s)
  // arrives at 10, H2 (level 1, 300 s) at 20, H3 (level 1, 300 s) at 550.
  // Without aging: H2 [300,600], H3 [600,900], S [900,1000].
  // With max_wait = 500: S is promoted to level 1 at 510 (waiting since 10). At 600 level 1
  // holds S (submitted 10) and H3 (550): fcfs inside the class puts S first: S [600,700],
  // H3 [700,1000]. A promoted job does not preempt its new class: H2 keeps running until 600.
  std::vector<Job> jobs = {MakeJob("H1", 0, 2, 300, 1), MakeJob("S", 10, 2, 100, 0),
                           MakeJob("H2", 20, 2, 300, 1), MakeJob("H3", 550, 2, 300, 1)};
  TestSim plain = Sim(Nodes(1, 2), jobs, {});
  plain.Run();
  ExpectInterval(plain.Of("H3"), 600, 900);
  ExpectInterval(plain.Of("S"), 900, 1000);

  TestSim aged = Sim(Nodes(1, 2), jobs, {{"max_wait", "500"}});
  aged.Run();
  ExpectInterval(aged.Of("H2"), 300, 600);
  ExpectInterval(aged.Of("S"), 600, 700);
  ExpectInterval(aged.Of("H3"), 700, 1000);
  EXPECT_EQ(aged.Of("H2").preemptions, 0);
}

TEST(Priority, AVcBelowItsQuotaReclaimsBorrowedGpusNewestFirst) {
  // 1 node x 8 GPUs, pool, quota a:4, b:4. VC b submits B1..B4 (level 2, 2 GPUs, 1000 s) at
  // 0, 1, 2, 3: all start; B1 and B2 are within b's quota, B3 and B4 borrow a's idle GPUs.
  // At 100 VC a submits A1 and A2 (level 0, 2 GPUs, 100 s). A1 is within a's quota and does
  // not fit: it reclaims the newest borrowed job, B4, whatever its class; A2 then reclaims
  // B3. A1 and A2 run [100,200]. B3 (ran 98 s) and B4 (ran 97 s) restart at 200 on the GPUs
  // A left, borrowing again: they end at 200 + 902 = 1102 and 200 + 903 = 1103.
  // Borrowing marks follow b's holdings: when B1 ends at 1000, B3 (the older restart, lower
  // id) fits in b's quota again, and B4 when B2 ends at 1001. Borrowed GPU-seconds:
  // B3 2 x (98 + 800) = 1796, B4 2 x (97 + 801) = 1796; B1, B2 none.
  const std::vector<Job> jobs = {
      MakeJob("B1", 0, 2, 1000, 2, "b"),  MakeJob("B2", 1, 2, 1000, 2, "b"),
      MakeJob("B3", 2, 2, 1000, 2, "b"),  MakeJob("B4", 3, 2, 1000, 2, "b"),
      MakeJob("A1", 100, 2, 100, 0, "a"), MakeJob("A2", 100, 2, 100, 0, "a")};
  TestSim sim = Sim(Nodes(1, 8), jobs, {{"quota", "a:4,b:4"}}, 0, "pool");
  const Engine& engine = sim.Run();
  ExpectInterval(sim.Of("A1"), 100, 200);
  ExpectInterval(sim.Of("A2"), 100, 200);
  ExpectInterval(sim.Of("B3"), 2, 1102);
  ExpectInterval(sim.Of("B4"), 3, 1103);
  ExpectInterval(sim.Of("B1"), 0, 1000);
  EXPECT_EQ(sim.Of("B1").preemptions + sim.Of("B2").preemptions, 0);
  EXPECT_DOUBLE_EQ(sim.CostsOf("B3").borrowed_gpu_seconds, 1796);
  EXPECT_DOUBLE_EQ(sim.CostsOf("B4").borrowed_gpu_seconds, 1796);
  EXPECT_DOUBLE_EQ(sim.CostsOf("B1").borrowed_gpu_seconds, 0);
  EXPECT_DOUBLE_EQ(sim.CostsOf("A1").borrowed_gpu_seconds, 0);
  EXPECT_DOUBLE_EQ(Summary(engine, "borrowed_gpu_hours", "vc:b"), 3592.0 / 3600);
  EXPECT_DOUBLE_EQ(Summary(engine, "borrowed_gpu_hours", "vc:a"), 0);
  EXPECT_DOUBLE_EQ(Summary(engine, "preemptions", "vc:b"), 2);
  EXPECT_DOUBLE_EQ(Summary(engine, "wait_seconds_mean", "vc:a"), 0);
  // The same quotas from a JSON file give the same schedule.
  const std::string file = TempPath("priority_reclaim_quota.json");
  std::ofstream(file) << R"({"a": 4, "b": 4})";
  TestSim from_file = Sim(Nodes(1, 8), jobs, {{"quota", file}}, 0, "pool");
  EXPECT_EQ(from_file.Run().fingerprint(), engine.fingerprint());
}

TEST(Priority, ABorrowingJobNeverBlocksAndNeverTakesAnotherVcsQuota) {
  // 1 node x 4 GPUs, quota a:2, b:2. A1 (a, level 0, 2 GPUs, 100 s) at 0 is within a's quota.
  // At 10 B1 (b, level 3, 4 GPUs, 50 s) exceeds b's quota: it may only borrow idle GPUs or
  // preempt borrowing jobs; A1 is within its quota, so B1 waits. B2 (b, level 0, 2 GPUs,
  // 30 s) at 20 is within b's quota and starts at once despite B1's higher class: [20,50].
  // At 100 A1 ends; B1 starts [100,150].
  TestSim sim = Sim(Nodes(1, 4),
                    {MakeJob("A1", 0, 2, 100, 0, "a"), MakeJob("B1", 10, 4, 50, 3, "b"),
                     MakeJob("B2", 20, 2, 30, 0, "b")},
                    {{"quota", "a:2,b:2"}});
  sim.Run();
  ExpectInterval(sim.Of("A1"), 0, 100);
  ExpectInterval(sim.Of("B2"), 20, 50);
  ExpectInterval(sim.Of("B1"), 100, 150);
  EXPECT_EQ(sim.Of("A1").preemptions, 0);
  EXPECT_DOUBLE_EQ(sim.CostsOf("B1").borrowed_gpu_seconds, 50 * 4);
}

TEST(Priority, MaxJobTestLeavesJobsPastTheCapUnexaminedUntilTheNextPass) {
  // 1 node x 4 GPUs, quota a:0: every job of a borrows, all level 0, so nothing preempts.
  // J0 (2 GPUs, 100 s) starts at 0. At 10 J1 (4 GPUs, 50 s) does not fit and is skipped
  // (borrowing never blocks). At 20 J2 (1 GPU, 30 s) arrives.
  // No cap: the borrowing walk examines J1 (no fit), then J2, which fits: [20,50]. At 100 J0
  // ends and J1 starts: [100,150].
  // max_job_test=1: each walk examines J1 only. J2 waits; the next pass is at 100 (J0 ends),
  // when J1 starts [100,150]; at 150 J1 ends and J2, now first, starts: [150,180].
  // max_job_test=2 reaches J2 at 20: the schedule without a cap.
  auto jobs = [] {
    return std::vector<Job>{MakeJob("J0", 0, 2, 100, 0, "a"), MakeJob("J1", 10, 4, 50, 0, "a"),
                            MakeJob("J2", 20, 1, 30, 0, "a")};
  };
  TestSim none = Sim(Nodes(1, 4), jobs(), {{"quota", "a:0"}});
  none.Run();
  ExpectInterval(none.Of("J2"), 20, 50);
  ExpectInterval(none.Of("J1"), 100, 150);
  TestSim one = Sim(Nodes(1, 4), jobs(), {{"quota", "a:0"}, {"max_job_test", "1"}});
  one.Run();
  ExpectInterval(one.Of("J0"), 0, 100);
  ExpectInterval(one.Of("J1"), 100, 150);
  ExpectInterval(one.Of("J2"), 150, 180);
  TestSim two = Sim(Nodes(1, 4), jobs(), {{"quota", "a:0"}, {"max_job_test", "2"}});
  two.Run();
  ExpectInterval(two.Of("J2"), 20, 50);
  ExpectInterval(two.Of("J1"), 100, 150);
}

TEST(Priority, TheQuotaWalkTriesAJobWhoseCpusFitAfterOneOfTheSameGpusDidNot) {
  // 1 node x 8 GPUs and 32 CPUs, host limits on; quota a:0 (every job borrows, nothing
  // preempts). J0 (4 GPUs, 4 CPUs, 100 s) starts at 0. At 10 J1 (4 GPUs, 30 CPUs) does not fit:
  // 28 CPUs are free. At 20 J2 (4 GPUs, 4 CPUs, 30 s) fits (4 GPUs and 28 CPUs free) and starts
  // at once: [20,50]; a walk that took J1's refusal for every 4-GPU job would hold it until J0
  // ends. J1 starts when J0 ends, with the node's 32 CPUs free: [100,150].
  auto with_cpus = [](Job job, int cpus) {
    job.cpu_milli = cpus * 1000;
    return job;
  };
  const std::string node =
      R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":8,"cpus":32,)"
      R"("host_memory_gib":256}]})";
  TestSim sim = Sim(node,
                    {with_cpus(MakeJob("J0", 0, 4, 100, 0, "a"), 4),
                     with_cpus(MakeJob("J1", 10, 4, 50, 0, "a"), 30),
                     with_cpus(MakeJob("J2", 20, 4, 30, 0, "a"), 4)},
                    {{"quota", "a:0"}});
  ASSERT_TRUE(sim.Run().host_limited());
  ExpectInterval(sim.Of("J0"), 0, 100);
  ExpectInterval(sim.Of("J2"), 20, 50);
  ExpectInterval(sim.Of("J1"), 100, 150);
}

TEST(Priority, MaxJobTestEndsTheBackfillingScanAfterThatManyJobs) {
  // 1 node x 4 GPUs, backfill=easy, walltime exact, all level 0 (nothing preempts). J0 (2 GPUs,
  // 100 s) starts at 0. J1 (4 GPUs, 50 s) at 10 is the blocked head, reserved at 100. J2 (3
  // GPUs, 10 s) at 20 does not fit in the 2 free GPUs. J3 (1 GPU, 20 s) at 30 ends at 50 <= 100.
  // No cap: the scan reaches J3 at 30: [30,50]; J1 [100,150]; J2 [150,160].
  // max_job_test=2: the scan examines J1 (the head) and J2 only, so J3 waits; at 100 J1 starts
  // [100,150] and nothing fits beside it; at 150 the strict pass (never capped) starts J2
  // [150,160] and J3 [150,170]. max_job_test=3 reaches J3: the schedule without a cap.
  auto jobs = [] {
    return std::vector<Job>{MakeJob("J0", 0, 2, 100, 0), MakeJob("J1", 10, 4, 50, 0),
                            MakeJob("J2", 20, 3, 10, 0), MakeJob("J3", 30, 1, 20, 0)};
  };
  const std::map<std::string, std::string> easy = {{"backfill", "easy"}, {"walltime", "exact"}};
  auto with = [&](const std::string& cap) {
    std::map<std::string, std::string> params = easy;
    if (!cap.empty()) params["max_job_test"] = cap;
    return params;
  };
  TestSim none = Sim(Nodes(1, 4), jobs(), with(""));
  none.Run();
  ExpectInterval(none.Of("J3"), 30, 50);
  ExpectInterval(none.Of("J1"), 100, 150);
  ExpectInterval(none.Of("J2"), 150, 160);
  TestSim two = Sim(Nodes(1, 4), jobs(), with("2"));
  two.Run();
  ExpectInterval(two.Of("J1"), 100, 150);
  ExpectInterval(two.Of("J2"), 150, 160);
  ExpectInterval(two.Of("J3"), 150, 170);
  TestSim three = Sim(Nodes(1, 4), jobs(), with("3"));
  three.Run();
  ExpectInterval(three.Of("J3"), 30, 50);
}

TEST(Priority, AnExclusiveClassHoldsWholeNodes) {
  // 2 nodes x 4 GPUs, exclusive = 2. X (level 2, 1 GPU, 100 s) at 0 takes all of node 0;
  // Y (level 0, 4 GPUs, 500 s) node 1. Z (level 0, 1 GPU, 50 s) at 1 finds nothing free
  // (X's three idle GPUs are X's) and starts when X ends: [100,150].
  TestSim sim =
      Sim(Nodes(2, 4),
          {MakeJob("X", 0, 1, 100, 2), MakeJob("Y", 0, 4, 500, 0), MakeJob("Z", 1, 1, 50, 0)},
          {{"exclusive", "2"}});
  const Engine& engine = sim.Run();
  ExpectInterval(sim.Of("X"), 0, 100);
  ExpectInterval(sim.Of("Z"), 100, 150);
  EXPECT_EQ(sim.Of("X").max_gpus, 4);
  EXPECT_DOUBLE_EQ(sim.Of("X").gpu_seconds, 400);  // held whole: 4 GPUs x 100 s
  EXPECT_DOUBLE_EQ(engine.metrics().busy_gpu_seconds(), 400 + 4 * 500 + 50);
}

TEST(Priority, AnExclusiveJobWithoutGpusHoldsItsCpusOnOneNodeNotWholeNodes) {
  // 2 nodes x 8 A100s with 32 CPUs each, every job of level 0, exclusive = 0, backfill = easy.
  // P (1 GPU, 30 CPUs, 100 s) at 0 holds all of node 0; Q (1 GPU, 30 CPUs, 200 s) all of node 1.
  // A (0 GPUs, 10 CPUs, 50 s) at 1: 2 CPUs are free on each node, so it waits at the head. Whole
  // nodes are counted in GPUs: A holds its CPUs on one node, like any CPU-only job, and its
  // reservation is node 0 at 100, when P's 30 CPUs come back: [100, 150], holding no GPU.
  // (Taken as a request for 0 whole nodes it fitted nowhere, even on the empty cluster: the
  // run stopped with an internal error.)
  auto with_cpus = [](Job job, int cpus) {
    job.cpu_milli = cpus * 1000;
    return job;
  };
  TestSim sim = Sim(testing::kTwoHostNodes,
                    {with_cpus(MakeJob("P", 0, 1, 100, 0), 30),
                     with_cpus(MakeJob("Q", 0, 1, 200, 0), 30),
                     with_cpus(MakeJob("A", 1, 0, 50, 0), 10)},
                    {{"exclusive", "0"}, {"backfill", "easy"}});
  sim.Run();
  ExpectInterval(sim.Of("P"), 0, 100);
  ExpectInterval(sim.Of("Q"), 0, 200);
  ExpectInterval(sim.Of("A"), 100, 150);
  EXPECT_EQ(sim.Of("P").max_gpus, 8);  // a whole node
  EXPECT_EQ(sim.Of("A").max_gpus, 0);
  EXPECT_EQ(sim.Of("A").max_nodes, 1);
}

TEST(Priority, EasysScanTriesAJobOfSharedNodesAfterAnExclusiveOneOfTheSameGpusDidNotFit) {
  // 2 nodes x 4 GPUs, backfill = easy with exact run times, exclusive = 1, guaranteed = 0
  // (nothing preempts).
  // At 0 A (level 0, 2 GPUs, 1000 s) takes GPUs 0-1 of node 0, B (level 0, 4 GPUs, 1000 s)
  // node 1. At 1 H (level 2, 4 GPUs, 100 s) does not fit: the head, reserved at 1000. At 2 X
  // (level 1, exclusive, 2 GPUs, 10 s) finds no free node. At 3 Y (level 0, 2 GPUs, 10 s) fits
  // on node 0's two free GPUs and ends at 13, before the reservation: [3, 13]. A scan that took
  // X's refusal for Y's (both ask 2 GPUs) would hold Y until X or H had run.
  TestSim sim =
      Sim(Nodes(2, 4),
          {MakeJob("A", 0, 2, 1000, 0), MakeJob("B", 0, 4, 1000, 0), MakeJob("H", 1, 4, 100, 2),
           MakeJob("X", 2, 2, 10, 1), MakeJob("Y", 3, 2, 10, 0)},
          {{"backfill", "easy"}, {"exclusive", "1"}, {"guaranteed", "0"}, {"walltime", "exact"}});
  sim.Run();
  ExpectInterval(sim.Of("Y"), 3, 13);
  ExpectInterval(sim.Of("H"), 1000, 1100);
  ExpectInterval(sim.Of("X"), 1000, 1010);
}

TEST(Priority, WithinLasAPreemptedJobWithMoreServiceWaitsBehindANewOne) {
  // 1 node x 2 GPUs, thresholds 100 GPU-s (two queues). P (level 0, 2 GPUs, 500 s) from 0.
  // H (level 1, 2 GPUs, 100 s) at 200 preempts P (400 GPU-s attained: queue 1). Q (level 0,
  // 2 GPUs, 50 s) arrives at 250 (queue 0). At 300: fcfs would resume P first (P [300,600],
  // Q [600,650]); las puts Q first: Q [300,350], P resumes [350,650].
  std::vector<Job> jobs = {MakeJob("P", 0, 2, 500, 0), MakeJob("H", 200, 2, 100, 1),
                           MakeJob("Q", 250, 2, 50, 0)};
  TestSim fcfs = Sim(Nodes(1, 2), jobs, {});
  fcfs.Run();
  ExpectInterval(fcfs.Of("Q"), 600, 650);
  ExpectInterval(fcfs.Of("P"), 0, 600);
  TestSim las = Sim(Nodes(1, 2), jobs, {{"within", "las"}, {"thresholds", "100"}});
  las.Run();
  ExpectInterval(las.Of("Q"), 300, 350);
  ExpectInterval(las.Of("P"), 0, 650);
}

TEST(Priority, WithinFairShareTheLighterUserGoesFirstInsideAClass) {
  // 1 node x 2 GPUs, no decay. U1a (user u1, 2 GPUs, 100 s) runs [0,100]. U1b (u1) at 10 and
  // U2 (u2) at 20, both level 0, 2 GPUs, 100 s. At 100 u1 has used 200 GPU-s, u2 nothing:
  // F(u1) = 2^(-1/0.5) = 0.25 < F(u2) = 1: U2 [100,200], then U1b [200,300] (fcfs would run
  // U1b first). A job of a higher class still goes first: V (u1, level 1, 50 s) at 30 (level 0
  // guaranteed here, so V cannot preempt U1a) runs [100,150] before both; then u1 has used 300
  // GPU-s and u2 none: U2 [150,250], U1b [250,350].
  auto job = [](const std::string& id, double submit, int level, const std::string& user) {
    Job j = MakeJob(id, submit, 2, id == "V" ? 50 : 100, level);
    j.user = user;
    return j;
  };
  TestSim sim =
      Sim(Nodes(1, 2), {job("U1a", 0, 0, "u1"), job("U1b", 10, 0, "u1"), job("U2", 20, 0, "u2")},
          {{"within", "fair-share"}, {"half_life", "inf"}});
  sim.Run();
  ExpectInterval(sim.Of("U2"), 100, 200);
  ExpectInterval(sim.Of("U1b"), 200, 300);
  TestSim with_v = Sim(Nodes(1, 2),
                       {job("U1a", 0, 0, "u1"), job("U1b", 10, 0, "u1"), job("U2", 20, 0, "u2"),
                        job("V", 30, 1, "u1")},
                       {{"within", "fair-share"}, {"half_life", "inf"}, {"guaranteed", "0"}});
  with_v.Run();
  ExpectInterval(with_v.Of("V"), 100, 150);
  ExpectInterval(with_v.Of("U2"), 150, 250);
  ExpectInterval(with_v.Of("U1b"), 250, 350);
}

TEST(Priority, EasyBackfillingLetsASmallJobPassAHeadItCannotPreempt) {
  // 1 node x 4 GPUs, guaranteed = 0, walltime exact. A (level 0, 3 GPUs, 100 s) from 0 is
  // guaranteed, so H (level 1, 4 GPUs, 50 s, at 10) cannot preempt it and waits: its
  // reservation is t=100. S (level 0, 1 GPU, 50 s) at 20 ends at 70 <= 100: with
  // backfill=easy it starts at once; with backfill=none it waits behind H: [150,200].
  std::vector<Job> jobs = {MakeJob("A", 0, 3, 100, 0), MakeJob("H", 10, 4, 50, 1),
                           MakeJob("S", 20, 1, 50, 0)};
  TestSim strict = Sim(Nodes(1, 4), jobs, {{"guaranteed", "0"}});
  strict.Run();
  ExpectInterval(strict.Of("H"), 100, 150);
  ExpectInterval(strict.Of("S"), 150, 200);
  TestSim easy =
      Sim(Nodes(1, 4), jobs, {{"guaranteed", "0"}, {"backfill", "easy"}, {"walltime", "exact"}});
  easy.Run();
  ExpectInterval(easy.Of("S"), 20, 70);
  ExpectInterval(easy.Of("H"), 100, 150);
}

TEST(Priority, WithOneClassAndNoQuotaItSchedulesExactlyAsFcfs) {
  // Every job at level 0 and nothing to preempt: the order is submission order with strict
  // blocking, fcfs's rule (policies/fcfs.cc), so the event stream is the same.
  GeneratorOptions generator;
  generator.jobs = 3000;
  generator.cluster_gpus = 64;
  generator.load = 0.9;
  generator.durations = "philly";
  generator.seed = 21;
  const std::string path = TempPath("priority_fcfs.csv");
  WriteSyntheticTrace(generator, path);
  const Trace trace = LoadTrace(path);
  TestSim fcfs(Nodes(8, 8), trace.jobs, "fcfs");
  TestSim priority(Nodes(8, 8), trace.jobs, "priority");
  EXPECT_EQ(fcfs.Run().fingerprint(), priority.Run().fingerprint());
}

TEST(Priority, BadParametersAreRejectedWithTheirName) {
  auto make = [](std::map<std::string, std::string> values) {
    FindPolicy("priority").make(Params(std::move(values)));
  };
  EXPECT_THROW(make({{"within", "sjf"}}), InputError);
  EXPECT_THROW(make({{"guaranteed", "platinum"}}), InputError);
  EXPECT_THROW(make({{"quota", "a:4,b"}}), InputError);
  EXPECT_THROW(make({{"quota", "a:4,a:2"}}), InputError);
  EXPECT_THROW(make({{"quota", "a:2.5"}}), InputError);
  EXPECT_THROW(make({{"min_slice", "-1"}}), InputError);
  EXPECT_THROW(make({{"max_job_test", "-1"}}), InputError);
  EXPECT_THROW(make({{"max_job_test", "2.5"}}), InputError);
  EXPECT_THROW(make({{"quota", "a:4"}, {"backfill", "easy"}}), InputError);
  // quota=FILE.json: {"vc": GPUs, ...}; the same checks.
  const std::string good = TempPath("priority_quota.json");
  const std::string bad = TempPath("priority_quota_bad.json");
  std::ofstream(good) << R"({"a": 4, "b": 0})";
  std::ofstream(bad) << R"({"a": -4})";
  EXPECT_NO_THROW(make({{"quota", good}}));
  EXPECT_THROW(make({{"quota", bad}}), InputError);
  EXPECT_THROW(make({{"quota", TempPath("no_such_quota.json")}}), InputError);
  try {
    make({{"guaranteed", "platinum"}});
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("guaranteed"), std::string::npos) << e.what();
  }
}

TEST(PriorityClass, MapsNamesToLevelsOverridesFirstCaseInsensitive) {
  const PriorityMap map = ParsePriorityMap("LS=5, be = -1,Gold=2", "--priority-map");
  EXPECT_EQ(map, (PriorityMap{{"ls", 5}, {"be", -1}, {"gold", 2}}));
  EXPECT_EQ(PriorityLevelOf("ls", map), 5);  // the override wins over the built-in 2
  EXPECT_EQ(PriorityLevelOf("GOLD", map), 2);
  EXPECT_EQ(PriorityLevelOf("Guaranteed"), 3);  // built-in: openb qos
  EXPECT_EQ(PriorityLevelOf("Burstable"), 1);
  EXPECT_EQ(PriorityLevelOf("urgent"), 3);
  EXPECT_EQ(PriorityLevelOf("gold"), std::nullopt);
  EXPECT_STREQ(PriorityLevelName(2), "high");
  EXPECT_STREQ(PriorityLevelName(7), "");
  EXPECT_EQ(ParsePriorityLevels("low, LS,7", "guaranteed"), (std::set<int>{0, 2, 7}));
  for (const char* bad : {"LS", "LS=high", "=2", "LS=1,ls=2", "LS=1,", "LS=2147483648"}) {
    try {
      ParsePriorityMap(bad, "--priority-map");
      ADD_FAILURE() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--priority-map"), std::string::npos) << e.what();
    }
  }
}

TEST(Priority, WarnsOfSettingsWithNothingToActOn) {
  auto warning = [](const std::vector<Job>& jobs, std::map<std::string, std::string> values) {
    Trace trace;
    trace.jobs = jobs;
    return FindPolicy("priority").make(Params(std::move(values)))->IdleWarning(trace, nullptr);
  };
  Job a = MakeJob("a", 0, 1, 10, 0, "x");
  a.user = "u";
  Job b = MakeJob("b", 1, 1, 10, 2, "y");
  b.user = "v";
  // Two levels, two users, existing VCs and levels: nothing to warn of.
  EXPECT_EQ(warning({a, b}, {{"within", "fair-share"}, {"guaranteed", "2"}, {"quota", "x:1"}}), "");
  // One level and no quota: the policy is fcfs.
  const std::string one = warning({a}, {});
  EXPECT_NE(one.find("every job of the trace has the same level"), std::string::npos) << one;
  EXPECT_NE(one.find("--priority-map"), std::string::npos) << one;
  // One level with quotas is a meaningful run (VC quotas alone).
  EXPECT_EQ(warning({a}, {{"quota", "x:1"}}), "");
  const std::string absent =
      warning({a, b}, {{"guaranteed", "3"}, {"exclusive", "low,1"}, {"quota", "x:1,zz:2"}});
  EXPECT_NE(absent.find("guaranteed: no job of the trace has level 3"), std::string::npos)
      << absent;
  EXPECT_NE(absent.find("exclusive: no job of the trace has level 1"), std::string::npos) << absent;
  EXPECT_NE(absent.find("virtual cluster zz"), std::string::npos) << absent;
  b.user = "u";
  EXPECT_NE(warning({a, b}, {{"within", "fair-share"}}).find("charged to one user"),
            std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Soak: classes, quotas, failures and preemption for every `within`, under --check.

struct SoakCase {
  std::string within;
  std::string mode;  // "quota", "strict" or "easy"
};

class PrioritySoak : public ::testing::TestWithParam<SoakCase> {};

TEST_P(PrioritySoak, ClassesQuotasFailuresAndPreemptionKeepEveryInvariant) {
  GeneratorOptions generator;
  generator.jobs = 2500;
  generator.cluster_gpus = 64;
  generator.load = 0.95;
  generator.durations = "philly";
  generator.seed = 13;
  const std::string path = TempPath("priority_soak.csv");
  WriteSyntheticTrace(generator, path);
  Trace trace = LoadTrace(path);
  // Seeded classes (0..3) and VCs (v0..v3) for every job.
  std::mt19937_64 rng(5);
  for (Job& job : trace.jobs) {
    job.priority = static_cast<int>(rng() % 4);
    job.vc = "v" + std::to_string(rng() % 4);
    job.user = "u" + std::to_string(rng() % 9);
  }
  EngineOptions options;
  options.preemption_cost_seconds = 45;
  options.faults.node_mtbf_seconds.assign(HardwareCatalog::Default().gpus().size(), 5 * 86400.0);
  options.faults.mttr_seconds = 3600;
  options.faults.checkpoint_interval_seconds = 1800;
  options.faults.checkpoint_cost_seconds = 20;
  options.faults.restore_cost_seconds = 60;
  options.faults.seed = 3;
  std::map<std::string, std::string> params = {{"within", GetParam().within},
                                               {"min_slice", "600"},
                                               {"max_wait", "20000"},
                                               {"guaranteed", "1"},
                                               {"exclusive", "3"}};
  if (GetParam().mode == "quota") params["quota"] = "v0:24,v1:16,v2:16";  // v3: none
  if (GetParam().mode == "easy") params["backfill"] = "easy";
  auto run = [&] {
    auto sim = std::make_unique<TestSim>(Nodes(8, 8), trace.jobs, "priority", "first-fit", options,
                                         "trace", Params(params));
    sim->Run();
    return sim;
  };
  const auto sim = run();
  const Engine& engine = sim->engine();
  int64_t finished = 0, preemptions = 0;
  double borrowed = 0;
  for (size_t i = 0; i < engine.runs().size(); ++i) {
    const JobRun& r = engine.runs()[i];
    const JobCosts& costs = engine.costs(static_cast<JobId>(i));
    finished += r.state == JobState::kCompleted || r.state == JobState::kRejected;
    preemptions += r.preemptions;
    borrowed += costs.borrowed_gpu_seconds;
    EXPECT_LE(costs.borrowed_gpu_seconds, r.gpu_seconds * (1 + 1e-9));
  }
  EXPECT_EQ(finished, static_cast<int64_t>(trace.jobs.size()));
  EXPECT_GT(preemptions, 0);
  EXPECT_GT(engine.failures(), 0);
  if (GetParam().mode == "quota") {
    EXPECT_GT(borrowed, 0);
  } else {
    EXPECT_EQ(borrowed, 0);
  }
  EXPECT_EQ(run()->engine().fingerprint(), engine.fingerprint());
}

INSTANTIATE_TEST_SUITE_P(EveryWithin, PrioritySoak,
                         ::testing::Values(SoakCase{"fcfs", "quota"}, SoakCase{"fcfs", "strict"},
                                           SoakCase{"fcfs", "easy"},
                                           SoakCase{"fair-share", "quota"},
                                           SoakCase{"fair-share", "strict"},
                                           SoakCase{"fair-share", "easy"}, SoakCase{"las", "quota"},
                                           SoakCase{"las", "strict"}, SoakCase{"las", "easy"}),
                         [](const ::testing::TestParamInfo<SoakCase>& info) {
                           std::string name = info.param.within + "_" + info.param.mode;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace clustersim
