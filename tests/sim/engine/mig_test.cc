// MIG instances (docs/mig.md): hand-worked schedules on one A100-40GB in MIG mode, from the
// profile table of NVIDIA's MIG User Guide (sim/hardware/mig.h):
//
//   profile   memory slices  compute slices  starts (memory slice)
//   1g.5gb    1              1               0,1,2,3,4,5,6
//   1g.10gb   2              1               0,2,4,6
//   2g.10gb   2              2               0,2,4
//   3g.20gb   4              3               0,4
//   4g.20gb   4              4               0
//   7g.40gb   8              7               0
//
// An instance started at s holds memory slices [s, s + size). Placement is first fit by node,
// GPU and start slice.
#include "sim/engine/mig.h"

#include <gtest/gtest.h>

#include "sim/engine/faults.h"
#include "sim/engine/wait_reasons.h"
#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

constexpr const char* kOneMigA100 =
    R"({"nodes":[{"count":1,"gpu_type":"A100-40GB","gpus_per_node":1,"mig":true}]})";

Job MigJob(const std::string& id, double submit, const std::string& profile, double duration) {
  Job job = testing::MakeJob(id, submit, 1, duration);
  job.mig_profile = MigProfileId(profile);
  return job;
}

TEST(Mig, ThreeHalfGpuInstancesStartAtZeroZeroAndOneHundred) {
  // 3g.20gb holds 4 memory slices and starts at 0 or 4 only: two fit (slices 0-3 and 4-7), the
  // third waits for the first to end at 100.
  testing::TestSim sim(kOneMigA100, {MigJob("a", 0, "3g.20gb", 100), MigJob("b", 0, "3g.20gb", 100),
                                     MigJob("c", 0, "3g.20gb", 100)});
  sim.Run();
  testing::ExpectInterval(sim.Of("a"), 0, 100);
  testing::ExpectInterval(sim.Of("b"), 0, 100);
  testing::ExpectInterval(sim.Of("c"), 100, 200);
  EXPECT_EQ(sim.ActiveOf("a").allocation.mig_start, 0);
  EXPECT_EQ(sim.ActiveOf("b").allocation.mig_start, 4);
  EXPECT_EQ(sim.ActiveOf("c").allocation.mig_start, 0);  // the first free start when a leaves
}

TEST(Mig, EightSmallestInstancesStartSevenAtZeroAndOneAtOneHundred) {
  // 1g.5gb holds 1 memory slice and starts at 0..6, never 7: seven fit, the eighth waits.
  std::vector<Job> jobs;
  for (int i = 0; i < 8; ++i) jobs.push_back(MigJob("j" + std::to_string(i), 0, "1g.5gb", 100));
  testing::TestSim sim(kOneMigA100, jobs);
  sim.Run();
  for (int i = 0; i < 7; ++i) {
    testing::ExpectInterval(sim.Of("j" + std::to_string(i)), 0, 100);
    EXPECT_EQ(sim.ActiveOf("j" + std::to_string(i)).allocation.mig_start, i);
  }
  testing::ExpectInterval(sim.Of("j7"), 100, 200);
}

TEST(Mig, FourAndThreeComputeSlicesShareAGpuButTwoFoursNever) {
  // 4g.20gb at 0 holds slices 0-3; 3g.20gb then fits at 4 (slices 4-7): both start at 0.
  testing::TestSim mixed(kOneMigA100,
                         {MigJob("four", 0, "4g.20gb", 100), MigJob("three", 0, "3g.20gb", 50)});
  mixed.Run();
  testing::ExpectInterval(mixed.Of("four"), 0, 100);
  testing::ExpectInterval(mixed.Of("three"), 0, 50);
  EXPECT_EQ(mixed.ActiveOf("three").allocation.mig_start, 4);
  // Two 4g.20gb: the only start is 0, held by the first until 100, although slices 4-7 are free.
  testing::TestSim fours(kOneMigA100,
                         {MigJob("x", 0, "4g.20gb", 100), MigJob("y", 0, "4g.20gb", 100)});
  fours.Run();
  testing::ExpectInterval(fours.Of("x"), 0, 100);
  testing::ExpectInterval(fours.Of("y"), 100, 200);
}

TEST(Mig, AHalfAtSliceZeroBlocksTheFourSliceProfileWhoseOnlyStartIsZero) {
  // First fit puts 3g.20gb at 0 (slices 0-3); 4g.20gb may start only at 0, so it waits for the
  // 3g to end at 60 although four slices (4-7) are free: the fragmentation MIG layouts have.
  testing::TestSim sim(kOneMigA100,
                       {MigJob("three", 0, "3g.20gb", 60), MigJob("four", 0, "4g.20gb", 100)});
  sim.Run();
  testing::ExpectInterval(sim.Of("three"), 0, 60);
  testing::ExpectInterval(sim.Of("four"), 60, 160);
}

TEST(Mig, AJobBlockedByTheLayoutWaitsForMigFragmentation) {
  // As above: at t = 0 the 4g.20gb finds slices 4-7 free (4 >= its 4 memory slices) but not its
  // start 0: fragmentation_mig.
  EngineOptions options;
  options.wait_reasons = true;
  testing::TestSim sim(kOneMigA100,
                       {MigJob("three", 0, "3g.20gb", 60), MigJob("four", 0, "4g.20gb", 100)},
                       "fcfs", "first-fit", options);
  sim.Run();
  const auto waits = sim.engine().wait_reasons().Seconds(sim.IndexOf("four"));
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].first, WaitReason::kFragmentationMig);
  EXPECT_DOUBLE_EQ(waits[0].second, 60);
}

TEST(Mig, AJobShortOfCpusWaitsForCpusNotForTheLayout) {
  // One A100-80GB in MIG mode on a node of 10 CPUs. a (4g.40gb, 100 s) and b (3g.40gb, 1,000 s)
  // at 0 state no CPUs: each is charged its share, floor(10,000 x 571 / 1,000) = 5,710 and
  // floor(10,000 x 428 / 1,000) = 4,280 milli-CPUs. c (4g.40gb, 6 CPUs) at 1 finds no free slices
  // until a ends (capacity, 99 s), then its slices but 5,720 milli-CPUs: it waits for b's CPUs
  // (fragmentation_cpus, 900 s) and runs [1000, 1050].
  EngineOptions options;
  options.wait_reasons = true;
  Job c = MigJob("c", 1, "4g.40gb", 50);
  c.cpu_milli = 6000;
  testing::TestSim sim(
      R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":1,"mig":true,"cpus":10}]})",
      {MigJob("a", 0, "4g.40gb", 100), MigJob("b", 0, "3g.40gb", 1000), c}, "fcfs", "first-fit",
      options);
  sim.Run();
  testing::ExpectInterval(sim.Of("c"), 1000, 1050);
  const auto waits = sim.engine().wait_reasons().Seconds(sim.IndexOf("c"));
  ASSERT_EQ(waits.size(), 2u);
  EXPECT_EQ(waits[0].first, WaitReason::kCapacity);
  EXPECT_DOUBLE_EQ(waits[0].second, 99);
  EXPECT_EQ(waits[1].first, WaitReason::kFragmentationCpus);
  EXPECT_DOUBLE_EQ(waits[1].second, 900);
}

TEST(Mig, TwoSliceInstancesNeverStartAtSliceSix) {
  // 2g.10gb starts at 0, 2 or 4: three fit (compute 6 of 7); a fourth would need slices 6-7,
  // not a start of its profile, so it waits for the first to end at 100.
  testing::TestSim sim(kOneMigA100,
                       {MigJob("a", 0, "2g.10gb", 100), MigJob("b", 0, "2g.10gb", 100),
                        MigJob("c", 0, "2g.10gb", 100), MigJob("d", 0, "2g.10gb", 100)});
  sim.Run();
  testing::ExpectInterval(sim.Of("a"), 0, 100);
  testing::ExpectInterval(sim.Of("b"), 0, 100);
  testing::ExpectInterval(sim.Of("c"), 0, 100);
  testing::ExpectInterval(sim.Of("d"), 100, 200);
  // A 1g.10gb (starts 0, 2, 4, 6) takes slices 6-7 beside the three at once.
  testing::TestSim fits(kOneMigA100,
                        {MigJob("a", 0, "2g.10gb", 100), MigJob("b", 0, "2g.10gb", 100),
                         MigJob("c", 0, "2g.10gb", 100), MigJob("e", 0, "1g.10gb", 100)});
  fits.Run();
  testing::ExpectInterval(fits.Of("e"), 0, 100);
  EXPECT_EQ(fits.ActiveOf("e").allocation.mig_start, 6);
}

TEST(Mig, AWholeGpuJobWaitsForTheLastInstanceToEnd) {
  // A job without a profile needs the GPU with no instance: it starts when the 1g.5gb ends.
  testing::TestSim sim(kOneMigA100,
                       {MigJob("slice", 0, "1g.5gb", 100), testing::MakeJob("whole", 0, 1, 10)});
  sim.Run();
  testing::ExpectInterval(sim.Of("slice"), 0, 100);
  testing::ExpectInterval(sim.Of("whole"), 100, 110);
  EXPECT_EQ(sim.ActiveOf("whole").allocation.mig_profile, -1);
}

TEST(Mig, AnInstanceWaitsForAWholeGpuJobOnItsGpu) {
  // A MIG-mode GPU without instances is an ordinary GPU to a job without a profile; an instance
  // needs it back (its layout changes only on free slices).
  testing::TestSim sim(kOneMigA100,
                       {testing::MakeJob("whole", 0, 1, 30), MigJob("slice", 0, "1g.5gb", 100)});
  sim.Run();
  testing::ExpectInterval(sim.Of("whole"), 0, 30);
  testing::ExpectInterval(sim.Of("slice"), 30, 130);
}

TEST(Mig, WholeGpuJobsUseGpusNotInMigModeAlongsideInstances) {
  const std::string cluster =
      R"({"nodes":[{"count":1,"gpu_type":"A100-40GB","gpus_per_node":1,"mig":true},)"
      R"({"count":1,"gpu_type":"A100-40GB","gpus_per_node":1}]})";
  testing::TestSim sim(cluster, {MigJob("slice", 0, "1g.5gb", 100),
                                 testing::MakeJob("whole", 0, 1, 10),
                                 MigJob("slice2", 0, "7g.40gb", 100)});
  sim.Run();
  testing::ExpectInterval(sim.Of("slice"), 0, 100);
  testing::ExpectInterval(sim.Of("whole"), 0, 10);  // on the GPU not in MIG mode
  EXPECT_EQ(sim.ActiveOf("whole").allocation.milli, 0);
  // 7g.40gb needs all 8 slices of a MIG GPU: after the 1g.5gb.
  testing::ExpectInterval(sim.Of("slice2"), 100, 200);
}

TEST(Mig, JobsWhoseProfileNoMigGpuOffersAreRejectedWithAReason) {
  testing::TestSim sim(kOneMigA100, {MigJob("typo", 0, "3g.21gb", 10),
                                     MigJob("other-type", 0, "3g.40gb", 10),
                                     MigJob("fine", 0, "3g.20gb", 10)});
  sim.Run();
  EXPECT_EQ(sim.Of("typo").state, JobState::kRejected);
  EXPECT_NE(sim.ReasonOf("typo").find("unknown MIG profile \"3g.21gb\""), std::string::npos)
      << sim.ReasonOf("typo");
  EXPECT_EQ(sim.Of("other-type").state, JobState::kRejected);  // an A100-80GB / H100 profile
  EXPECT_NE(sim.ReasonOf("other-type").find("no GPU in MIG mode"), std::string::npos)
      << sim.ReasonOf("other-type");
  testing::ExpectInterval(sim.Of("fine"), 0, 10);
  // No group in MIG mode: every MIG job is rejected, naming why.
  testing::TestSim plain(testing::Nodes(1, 8, "A100-40GB"), {MigJob("m", 0, "1g.5gb", 10)});
  plain.Run();
  EXPECT_EQ(plain.Of("m").state, JobState::kRejected);
  EXPECT_NE(plain.ReasonOf("m").find("no node group has \"mig\": true"), std::string::npos)
      << plain.ReasonOf("m");
}

TEST(Mig, PoliciesThatPlanOnWholeGpusRejectMigJobsWithAReason) {
  for (const std::string policy : {"conservative", "gavel", "deadline-elastic"}) {
    testing::TestSim sim(kOneMigA100,
                         {MigJob("a", 0, "3g.20gb", 10), testing::MakeJob("b", 0, 1, 10)}, policy);
    sim.Run();
    EXPECT_EQ(sim.Of("a").state, JobState::kRejected) << policy;
    EXPECT_EQ(sim.ReasonOf("a"),
              "policy " + policy + " does not place MIG instances (docs/mig.md)");
    testing::ExpectInterval(sim.Of("b"), 0, 10);
  }
}

TEST(Mig, EightyGigabyteTypesOfferTheDoubledNames) {
  const std::string cluster =
      R"({"nodes":[{"count":1,"gpu_type":"H100-80GB","gpus_per_node":1,"mig":true}]})";
  testing::TestSim sim(cluster, {MigJob("a", 0, "3g.40gb", 100), MigJob("b", 0, "3g.40gb", 100),
                                 MigJob("c", 0, "3g.40gb", 100)});
  sim.Run();
  testing::ExpectInterval(sim.Of("a"), 0, 100);
  testing::ExpectInterval(sim.Of("b"), 0, 100);
  testing::ExpectInterval(sim.Of("c"), 100, 200);
}

TEST(Mig, MigModeOnAGpuTypeWithoutProfilesIsRefused) {
  EXPECT_THROW(
      {
        try {
          ClusterSpec::FromJsonText(
              R"({"nodes":[{"count":1,"gpu_type":"V100-32GB","gpus_per_node":8,"mig":true}]})",
              "c.json", HardwareCatalog::Default());
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find("V100-32GB has no MIG profiles"), std::string::npos)
              << e.what();
          throw;
        }
      },
      InputError);
  EXPECT_THROW(ClusterSpec::FromJsonText(
                   R"({"nodes":[{"count":1,"gpu_type":"A100-40GB","gpus_per_node":8,"mig":1}]})",
                   "c.json", HardwareCatalog::Default()),
               InputError);
}

// Engine options with node 0 down over [time, time + duration) (a failure trace of one record).
EngineOptions NodeZeroDown(double time, double duration) {
  EngineOptions options;
  FailureRecord failure;
  failure.time = time;
  failure.node = 0;
  failure.duration = duration;
  options.faults.trace = {failure};
  return options;
}

// A node failure takes back the MIG instances on it like any job's GPUs. a (3g.20gb, 100 s, no
// checkpoints) runs from 0; the node fails at 50 for 100 s: a loses its 50 s, waits for the
// repair and runs again [150, 250]. (Before, the failure did not find a, whose instance is not
// a whole GPU, and the run stopped on a GPU allocated twice.)
TEST(Mig, ANodeFailureSendsTheInstancesOnItBackToTheQueue) {
  const EngineOptions options = NodeZeroDown(50, 100);
  testing::TestSim sim(kOneMigA100, {MigJob("a", 0, "3g.20gb", 100)}, "fcfs", "first-fit", options);
  sim.Run();
  testing::ExpectInterval(sim.Of("a"), 0, 250);
}

TEST(Mig, AnInstanceWaitingForAFailedGpuWaitsForNodesDown) {
  // The only MIG GPU is down [0, 100); a (1g.5gb, 50 s) arrives at 10 and starts at its repair:
  // [100, 150], its 90 s of waiting `nodes_down` (it would fit were the GPU up), not `capacity`.
  EngineOptions options = NodeZeroDown(0, 100);
  options.wait_reasons = true;
  testing::TestSim sim(kOneMigA100, {MigJob("a", 10, "1g.5gb", 50)}, "fcfs", "first-fit", options);
  sim.Run();
  testing::ExpectInterval(sim.Of("a"), 100, 150);
  const auto seconds = sim.engine().wait_reasons().Seconds(sim.IndexOf("a"));
  ASSERT_EQ(seconds.size(), 1u);
  EXPECT_EQ(WaitReasonName(seconds[0].first), std::string("nodes_down"));
  EXPECT_DOUBLE_EQ(seconds[0].second, 90);
}

TEST(Mig, ResourcesAcceptOnlyDocumentedStartsOnFreeSlices) {
  const Cluster cluster(ClusterSpec::FromJsonText(kOneMigA100, "c", HardwareCatalog::Default()),
                        HardwareCatalog::Default());
  Resources r(cluster);
  const auto profiles = GpuMigProfiles(cluster, 0);
  const int one = FindMigProfile(profiles, "1g.5gb");
  const int two = FindMigProfile(profiles, "2g.10gb");
  const int three = FindMigProfile(profiles, "3g.20gb");
  EXPECT_FALSE(r.MigFits(0, one, 7));    // 1g.5gb never at slice 7
  EXPECT_FALSE(r.MigFits(0, two, 6));    // 2g.10gb: 0, 2, 4
  EXPECT_FALSE(r.MigFits(0, three, 2));  // 3g.20gb: 0, 4
  EXPECT_TRUE(r.MigFits(0, three, 4));
  r.AllocateMig(0, three, 4);  // slices 4-7
  EXPECT_EQ(r.mig_used(0), 0b1111'0000);
  EXPECT_FALSE(r.IsGpuFree(0));
  EXPECT_EQ(r.free_milli(0), 0);
  EXPECT_FALSE(r.MigFits(0, one, 5));
  EXPECT_TRUE(r.MigFits(0, two, 2));
  r.ReleaseMig(0, three, 4);
  EXPECT_EQ(r.mig_used(0), 0);
  EXPECT_TRUE(r.IsGpuFree(0));
}

TEST(Mig, TheCheckerFindsOverlapsAndUndocumentedStarts) {
  const Cluster cluster(ClusterSpec::FromJsonText(kOneMigA100, "c", HardwareCatalog::Default()),
                        HardwareCatalog::Default());
  const auto profiles = GpuMigProfiles(cluster, 0);
  auto instance = [&](const char* name, int start) {
    Allocation a;
    a.gpus = {0};
    a.gpu_type = cluster.node(0).gpu_type;
    a.mig_profile = static_cast<int8_t>(FindMigProfile(profiles, name));
    a.mig_start = static_cast<int8_t>(start);
    return a;
  };
  const Allocation four = instance("4g.20gb", 0);
  const Allocation three = instance("3g.20gb", 4);
  const Allocation four_again = instance("4g.20gb", 0);
  const Allocation three_at_two = instance("3g.20gb", 2);
  EXPECT_EQ(CheckMigLayouts(cluster, {&four, &three}), "");
  EXPECT_NE(CheckMigLayouts(cluster, {&four, &four_again}).find("overlaps"), std::string::npos);
  EXPECT_NE(CheckMigLayouts(cluster, {&three_at_two}).find("not one of its documented starts"),
            std::string::npos);
}

TEST(Mig, AnInstanceCountsItsComputeSlicesAsItsShareOfTheGpu) {
  // 3g.20gb: 3 of 7 compute slices = 428 thousandths (rounded down); over 100 s, 42.8 GPU-s.
  testing::TestSim sim(kOneMigA100, {MigJob("a", 0, "3g.20gb", 100)});
  sim.Run();
  EXPECT_EQ(sim.ActiveOf("a").allocation.milli, 428);
  EXPECT_NEAR(sim.Of("a").gpu_seconds, 42.8, 1e-9);
}

TEST(Mig, AnInstanceHoldsItsMemorySlicesOfTheGpusMemory) {
  // Two A100-40GB (40 GiB each) in MIG mode; 1g.10gb on GPU 0 for 100 s: 1 of 7 compute slices
  // (142 thousandths: 14.2 GPU-s) but 2 of 8 memory slices, 10 GiB. GPU memory held: 1,000
  // GiB-s, a quarter of GPU 0's; free memory 30 and 40 GiB, so F_mem = 1 - 40/70 = 3/7.
  // (Counted by the compute share, the instance would hold 5.68 GiB: 568 GiB-s.)
  testing::TestSim sim(
      R"({"nodes":[{"count":1,"gpu_type":"A100-40GB","gpus_per_node":2,"mig":true}]})",
      {MigJob("a", 0, "1g.10gb", 100)});
  sim.Run();
  EXPECT_NEAR(sim.Of("a").gpu_seconds, 14.2, 1e-9);
  const Metrics& metrics = sim.engine().metrics();
  EXPECT_NEAR(metrics.memory_used_gib_seconds(), 1000, 1e-9);
  EXPECT_NEAR(metrics.f_mem_seconds(), 100 * 3.0 / 7, 1e-9);
  EXPECT_DOUBLE_EQ(metrics.memory_used_gib_now(), 0);
}

}  // namespace
}  // namespace clustersim
