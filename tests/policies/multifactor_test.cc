// multifactor (policies/multifactor.cc, docs/policies.md#multifactor) on hand-worked schedules:
// the fair-share factor with its half-life decay, partition priority tiers, queue (QOS)
// priorities, and the backfill limits bf_max_job_test and bf_window.
#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::Nodes;
using testing::PolicySim;

Job UserJob(const std::string& id, double submit, int gpus, double duration,
            const std::string& user, double walltime = -1) {
  Job job = MakeJob(id, submit, gpus, duration);
  job.user = user;
  job.walltime = walltime;
  return job;
}

// One GPU. u ran [0, 100), v ran [1000, 1100); at 2000 V2 and U2 arrive together (V2 first in
// the trace). With a half-life h = 1000 s their usages at 2000 are the same amount decayed by
// 2^(-1900/h) and 2^(-900/h): u holds 1/3 of the total, v 2/3, each with a share of 1/2, so
// F_u = 2^(-(1/3)/(1/2)) = 0.63 > F_v = 2^(-(2/3)/(1/2)) = 0.40 and U2 goes first. Without decay
// both used 100 GPU-seconds: equal factors, and submission order puts V2 first.
std::vector<Job> FairShareJobs() {
  return {UserJob("U1", 0, 1, 100, "u"), UserJob("V1", 1000, 1, 100, "v"),
          UserJob("V2", 2000, 1, 100, "v"), UserJob("U2", 2000, 1, 100, "u")};
}

TEST(Multifactor, FairShareWithDecayFavorsTheUserWhoseUsageIsOlder) {
  auto sim = PolicySim(Nodes(1, 1), FairShareJobs(), "multifactor", "first-fit",
                       {{"weight_fairshare", "1000"}, {"half_life", "1000"},
                        {"calc_period", "1"}, {"bf_interval", "0"}});
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("U2").first_start, 2000);
  EXPECT_DOUBLE_EQ(sim.Of("V2").first_start, 2100);
}

TEST(Multifactor, FairShareWithoutDecayTiesAndKeepsSubmissionOrder) {
  auto sim = PolicySim(Nodes(1, 1), FairShareJobs(), "multifactor", "first-fit",
                       {{"weight_fairshare", "1000"}, {"half_life", "inf"},
                        {"calc_period", "1"}, {"bf_interval", "0"}});
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("V2").first_start, 2000);
  EXPECT_DOUBLE_EQ(sim.Of("U2").first_start, 2100);
}

TEST(Multifactor, SharesGivenAsParametersHoldWithASitesPriorityWeights) {
  // The site sets the weight (1000) and the half-life (1000 s); the shares come from --param:
  // v 3, u 1 (of 4). At 2000 u holds 1/3 of the decayed usage and v 2/3 (as above):
  // F_u = 2^(-(1/3)/(1/4)) = 0.40 < F_v = 2^(-(2/3)/(3/4)) = 0.54, so V2 goes first; with equal
  // shares U2 would (0.63 against 0.40).
  const std::string cluster = R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":1}],
    "site":{"priority":{"fairshare":1000,"half_life":1000}}})";
  auto sim = PolicySim(cluster, FairShareJobs(), "multifactor", "first-fit",
                       {{"shares", "v:3"}, {"calc_period", "1"}, {"bf_interval", "0"}});
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("V2").first_start, 2000);
  EXPECT_DOUBLE_EQ(sim.Of("U2").first_start, 2100);
}

TEST(Multifactor, JobsWithoutAWallTimeArePlannedWithModelledEstimates) {
  // Four GPUs, no wall times. R (2 GPUs, 3600 s) runs from 0; H (4 GPUs, t = 1) is reserved at
  // R's estimated end; C (2 GPUs, t = 2, 3590 s) fits beside R now. Planned with true durations
  // C ends at 3592, by R's end and H's reservation (3600): backfilled at 2. The modelled user
  // estimates (policies/user_estimates.h) lie between a job's run time and M, the longest run
  // rounded up to an hour (1 h here), on the model's values (..., 55 min, 1 h): R's and C's are
  // 1 h. So C would end at 3602, on H's GPUs: it waits. R [0, 3600], H [3600, 3700], C from 3700.
  std::vector<Job> jobs = {MakeJob("R", 0, 2, 3600), MakeJob("H", 1, 4, 100),
                           MakeJob("C", 2, 2, 3590)};
  auto sim = PolicySim(Nodes(1, 4), jobs, "multifactor", "first-fit", {{"bf_interval", "0"}});
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("H").first_start, 3600);
  EXPECT_DOUBLE_EQ(sim.Of("C").first_start, 3700);
  EXPECT_NE(sim.engine().policy_planning_estimates().find("modelled user estimates for 3 jobs"),
            std::string::npos)
      << sim.engine().policy_planning_estimates();
}

TEST(Multifactor, AHigherPartitionTierGoesFirstWhateverItsSubmission) {
  // L1 fills the node until 100; L2 (lo, t = 1) and H1 (hi, t = 2) wait; at 100 H1's partition
  // has tier 1 and starts first, L2 after it at 200.
  const std::string cluster = R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}],
    "site":{"partitions":[{"name":"lo","default":true},{"name":"hi","priority_tier":1}]}})";
  Job l1 = MakeJob("L1", 0, 4, 100);
  Job l2 = MakeJob("L2", 1, 4, 100);
  Job h1 = MakeJob("H1", 2, 4, 100);
  h1.partition = "hi";
  auto sim = PolicySim(cluster, {l1, l2, h1}, "multifactor", "first-fit", {{"bf_interval", "0"}});
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("H1").first_start, 100);
  EXPECT_DOUBLE_EQ(sim.Of("L2").first_start, 200);
}

TEST(Multifactor, QueuePrioritiesActAsQos) {
  // The site gives queue express priority 10, normal 1; weight_qos 100: E (express, t = 2) gets
  // 100 against N's 10 and starts first when the node frees at 100.
  const std::string cluster = R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4}],
    "site":{"priority":{"qos":100,"qos_priority":{"express":10,"normal":1}}}})";
  Job first = MakeJob("F", 0, 4, 100);
  Job normal = MakeJob("N", 1, 4, 100);
  normal.priority_class = "normal";
  Job express = MakeJob("E", 2, 4, 100);
  express.priority_class = "express";
  auto sim = PolicySim(cluster, {first, normal, express}, "multifactor", "first-fit",
                       {{"bf_interval", "0"}});
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("E").first_start, 100);
  EXPECT_DOUBLE_EQ(sim.Of("N").first_start, 200);
}

// Four GPUs. J1 (2 GPUs, t = 0) runs [0, 100); J2 (4 GPUs, t = 1) can start at 100 only; J3
// (2 GPUs, t = 2) fits now beside J1.
std::vector<Job> BackfillJobs(double j3_walltime) {
  return {UserJob("J1", 0, 2, 100, "a", 100), UserJob("J2", 1, 4, 100, "a", 100),
          UserJob("J3", 2, 2, j3_walltime, "a", j3_walltime)};
}

TEST(Multifactor, BackfillStartsAJobThatEndsBeforeTheReservationsAhead) {
  // J2 is reserved [100, 200); J3 (50 s) ends at 52: it starts at 2.
  auto sim = PolicySim(Nodes(1, 4), BackfillJobs(50), "multifactor", "first-fit",
                       {{"bf_interval", "0"}});
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("J3").first_start, 2);
  EXPECT_DOUBLE_EQ(sim.Of("J2").first_start, 100);
}

TEST(Multifactor, BfMaxJobTestLimitsHowDeepBackfillLooks) {
  // Only J2 is tested: J3 waits behind it (the main scheduler stops at J2's partition), J2
  // starts at 100 and J3 after it, at 200.
  auto sim = PolicySim(Nodes(1, 4), BackfillJobs(50), "multifactor", "first-fit",
                       {{"bf_interval", "0"}, {"bf_max_job_test", "1"}});
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("J2").first_start, 100);
  EXPECT_DOUBLE_EQ(sim.Of("J3").first_start, 200);
}

TEST(Multifactor, BfWindowLeavesJobsBeyondItUnreserved) {
  // J3 requests 150 s. With the default window J2 holds [100, 200), so J3's earliest slot is
  // 200. With a 10 s window J2's slot at 100 is beyond it: no reservation, J3 starts at 2 and J2
  // only when J3 ends, at 152.
  auto wide = PolicySim(Nodes(1, 4), BackfillJobs(150), "multifactor", "first-fit",
                        {{"bf_interval", "0"}});
  wide.Run();
  EXPECT_DOUBLE_EQ(wide.Of("J2").first_start, 100);
  EXPECT_DOUBLE_EQ(wide.Of("J3").first_start, 200);
  auto narrow = PolicySim(Nodes(1, 4), BackfillJobs(150), "multifactor", "first-fit",
                          {{"bf_interval", "0"}, {"bf_window", "10"}});
  narrow.Run();
  EXPECT_DOUBLE_EQ(narrow.Of("J3").first_start, 2);
  EXPECT_DOUBLE_EQ(narrow.Of("J2").first_start, 152);
}

TEST(Multifactor, BackfillRunsEveryBfIntervalOnly) {
  // bf_interval 30: the first backfill cycle is at J2's arrival (1; at 0 nothing waited), when
  // J3 has not arrived; the next may come 30 s later, at 31, a pass the policy's timer asks for:
  // J3 starts then (it still ends, at 81, before J2's reservation at 100).
  auto sim = PolicySim(Nodes(1, 4), BackfillJobs(50), "multifactor", "first-fit",
                       {{"bf_interval", "30"}});
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("J3").first_start, 31);
}

}  // namespace
}  // namespace clustersim
