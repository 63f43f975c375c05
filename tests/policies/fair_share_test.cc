// fair-share (docs/policies.md, policies/fair_share.cc): factor F = 2^(-U/S) per account, decayed
// usage, strict blocking or EASY backfilling. Schedules on tiny traces with every start and end,
// and the usage figures that order the queue, worked out by hand. Runtime model `trace`.
//
// Usage of an account that held g GPUs over [a, b], seen at t >= b, with half-life h:
//   u = g x integral_a^b 2^(-(t - s)/h) ds = g x (h / ln 2) x (2^(-(t - b)/h) - 2^(-(t - a)/h)).
#include <gtest/gtest.h>

#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::ExpectInterval;
using testing::MakeJob;
using testing::Nodes;
using testing::TestSim;

Job UserJob(const std::string& id, const std::string& user, double submit, int gpus,
            double duration) {
  Job job = MakeJob(id, submit, gpus, duration);
  job.user = user;
  return job;
}

TestSim Sim(const std::string& cluster, std::vector<Job> jobs,
            std::map<std::string, std::string> params, const std::string& placement = "first-fit") {
  return testing::PolicySim(cluster, std::move(jobs), "fair-share", placement, std::move(params));
}

// 1 GPU. The heavy user h ran long ago, the light user l recently; then both queue a job, l's
// submitted first:
//   h1 (h) t=0 100 s -> [0, 100);   l1 (l) t=400 50 s -> [400, 450) (the GPU is idle from 100);
//   l2 (l) t=410 50 s and h2 (h) t=420 50 s wait for l1; at t=450 the GPU is free.
std::vector<Job> DecayTrace() {
  return {UserJob("h1", "h", 0, 1, 100), UserJob("l1", "l", 400, 1, 50),
          UserJob("l2", "l", 410, 1, 50), UserJob("h2", "h", 420, 1, 50)};
}

TEST(FairShare, ReordersAHeavyUserAheadOnceItsUsageHasDecayed) {
  // half_life = 100 s. At t=450, with h/ln 2 = 144.27:
  //   u_h = 144.27 x (2^(-350/100) - 2^(-450/100)) = 144.27 x (0.088388 - 0.044194) = 6.376
  //   u_l = 144.27 x (2^(0) - 2^(-50/100))         = 144.27 x (1 - 0.707107)        = 42.26
  //   U_h = 6.376 / 48.63 = 0.131, U_l = 0.869; S = 1/2 each;
  //   F_h = 2^(-0.262) = 0.834 > F_l = 2^(-1.738) = 0.300: h2 goes first although l2 was
  //   submitted earlier. h2 [450, 500), then l2 [500, 550).
  TestSim sim = Sim(Nodes(1, 1), DecayTrace(), {{"half_life", "100"}});
  sim.Run();
  ExpectInterval(sim.Of("h1"), 0, 100);
  ExpectInterval(sim.Of("l1"), 400, 450);
  ExpectInterval(sim.Of("h2"), 450, 500);
  ExpectInterval(sim.Of("l2"), 500, 550);
}

TEST(FairShare, WithoutDecayTheHeavyUserStaysBehind) {
  // half_life = 1e9 s: decay over 450 s is a factor 2^(-4.5e-7) ~ 1, so u_h ~ 100 and u_l ~ 50
  // GPU-seconds: U_h = 2/3 > U_l = 1/3, F_h = 2^(-4/3) = 0.40 < F_l = 2^(-2/3) = 0.63.
  // l2 [450, 500), h2 [500, 550).
  TestSim sim = Sim(Nodes(1, 1), DecayTrace(), {{"half_life", "1e9"}});
  sim.Run();
  ExpectInterval(sim.Of("l2"), 450, 500);
  ExpectInterval(sim.Of("h2"), 500, 550);
}

TEST(FairShare, ByVirtualClusterChargesTheGroupNotTheUser) {
  // The decay trace with a different user on every job and the accounts as virtual clusters:
  // h1, h2 in vc "h", l1, l2 in vc "l". by=vc, half_life = 100: the figures of
  // ReordersAHeavyUserAheadOnceItsUsageHasDecayed: h2 [450, 500), l2 [500, 550).
  std::vector<Job> jobs = DecayTrace();
  for (Job& job : jobs) {
    job.vc = job.user;
    job.user = job.id;
  }
  TestSim sim = Sim(Nodes(1, 1), jobs, {{"half_life", "100"}, {"by", "vc"}});
  sim.Run();
  ExpectInterval(sim.Of("h2"), 450, 500);
  ExpectInterval(sim.Of("l2"), 500, 550);
}

TEST(FairShare, SharesWeighTheUsage) {
  // 2 GPUs. a1 (alice) and b1 (bob) t=0, 1 GPU 100 s each: [0, 100). At t=100 both have the
  // same usage u (U = 1/2 each). Waiting: b2 (bob, t=1, 2 GPUs 10 s), a2 (alice, t=2, 2 GPUs 10 s).
  // Equal shares: F equal, ties by submit order: b2 [100, 110), a2 [110, 120).
  // shares=alice:3,bob:1: S_a = 3/4, S_b = 1/4: F_a = 2^(-0.5/0.75) = 0.63 > F_b = 2^(-2) =
  // 0.25: a2 [100, 110), b2 [110, 120).
  const std::vector<Job> jobs = {UserJob("a1", "alice", 0, 1, 100), UserJob("b1", "bob", 0, 1, 100),
                                 UserJob("b2", "bob", 1, 2, 10), UserJob("a2", "alice", 2, 2, 10)};
  TestSim equal = Sim(Nodes(1, 2), jobs, {});
  equal.Run();
  ExpectInterval(equal.Of("b2"), 100, 110);
  ExpectInterval(equal.Of("a2"), 110, 120);
  TestSim weighted = Sim(Nodes(1, 2), jobs, {{"shares", "alice:3,bob:1"}});
  weighted.Run();
  ExpectInterval(weighted.Of("a2"), 100, 110);
  ExpectInterval(weighted.Of("b2"), 110, 120);
}

// 1 node x 4 GPUs, default half-life (7 days: decay is negligible and never changes the order
// below). h1 (h) t=0 3 GPUs 100 s; l1 (l) t=1 4 GPUs 10 s; h2 (h) t=2 1 GPU 50 s;
// h3 (h) t=3 1 GPU 200 s.
// While l has used nothing, U_l = 0 and F_l = 1 > F_h = 2^(-1/(1/2)) = 0.25: l1 is ahead of h's
// jobs whenever it waits.
std::vector<Job> BackfillTrace() {
  return {UserJob("h1", "h", 0, 3, 100), UserJob("l1", "l", 1, 4, 10), UserJob("h2", "h", 2, 1, 50),
          UserJob("h3", "h", 3, 1, 200)};
}

TEST(FairShare, EasyBackfillStartsAJobBehindTheBlockedHeadIfItEndsInTime) {
  // t=0: h1 [0, 100). t=1: l1 (4) does not fit (1 free): head.
  // t=2: order l1, h2. l1's reservation: t_s = 100 (h1 ends, 4 free), extra 0. h2 fits now and
  //      ends 52 <= 100: [2, 52).
  // t=3: h3 arrives; 0 free.
  // t=52: h2 ends; l1 still does not fit; h3 (1 free) would end 252 > 100 and its GPU is one of
  //      l1's reserved four: refused.
  // t=100: h1 ends: l1 [100, 110); h3 finds 0 free. t=110: h3 [110, 310).
  TestSim sim = Sim(Nodes(1, 4), BackfillTrace(), {{"backfill", "easy"}, {"walltime", "exact"}});
  sim.Run();
  ExpectInterval(sim.Of("h1"), 0, 100);
  ExpectInterval(sim.Of("l1"), 100, 110);
  ExpectInterval(sim.Of("h2"), 2, 52);
  ExpectInterval(sim.Of("h3"), 110, 310);
}

TEST(FairShare, StrictBlockingHoldsEveryJobBehindTheBlockedHead) {
  // backfill=none: h2 and h3 wait behind l1. t=100: h1 ends; l1 [100, 110). t=110: l has
  // nothing waiting; h2 and h3 (1 GPU each) both start: h2 [110, 160), h3 [110, 310).
  TestSim sim = Sim(Nodes(1, 4), BackfillTrace(), {});
  sim.Run();
  ExpectInterval(sim.Of("h1"), 0, 100);
  ExpectInterval(sim.Of("l1"), 100, 110);
  ExpectInterval(sim.Of("h2"), 110, 160);
  ExpectInterval(sim.Of("h3"), 110, 310);
}

TEST(FairShare, RejectsAMalformedSharesParameter) {
  EXPECT_THROW(Sim(Nodes(1, 1), {}, {{"shares", "alice"}}), InputError);
  EXPECT_THROW(Sim(Nodes(1, 1), {}, {{"shares", "alice:0"}}), InputError);
  EXPECT_THROW(Sim(Nodes(1, 1), {}, {{"by", "group"}}), InputError);
  EXPECT_THROW(Sim(Nodes(1, 1), {}, {{"half_life", "0"}}), InputError);
}

}  // namespace
}  // namespace clustersim
