// Deadlines, data locality and node limits (docs/deadlines.md), on hand-computed schedules: EDF
// with a deadline met and one missed, a locality constraint that moves a job, the node-count
// limit, the engine refusing a start against the constraints, the admission control of
// deadline-elastic, and the weighted policy's choice of batch.
#include <gtest/gtest.h>

#include "sim/engine/summary.h"
#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::ExpectInterval;
using testing::MakeJob;
using testing::Nodes;
using testing::TestSim;

// A trace builder: jobs and their constraints (Trace::constraints), handed to a TestSim.
struct Jobs {
  std::vector<Job> jobs;
  std::vector<JobConstraints> constraints;
  Job& Add(const std::string& id, double submit, int gpus, double duration) {
    jobs.push_back(MakeJob(id, submit, gpus, duration));
    return jobs.back();
  }
  // A job in tensor-parallel groups of `tp` GPUs (each group shares a node).
  Job& AddGroups(const std::string& id, double submit, int gpus, double duration, int tp) {
    Job& job = Add(id, submit, gpus, duration);
    job.tensor_parallel = static_cast<uint16_t>(tp);
    return job;
  }
  JobConstraints& Constrain(Job& job) {
    constraints.emplace_back();
    job.constraints = static_cast<uint32_t>(constraints.size());
    return constraints.back();
  }
  void Deadline(Job& job, double after_submit) { Constrain(job).deadline = after_submit; }
};

// A TestSim (--check on) that keeps the allocation log, for GpusOf.
TestSim Sim(const std::string& cluster, const Jobs& jobs, const std::string& policy,
            const std::string& placement = "first-fit",
            std::map<std::string, std::string> params = {}, EngineOptions options = {}) {
  options.record_allocations = true;
  // The schedules here are worked out with exact plans (by default a job without a wall time is
  // planned with a modelled user estimate, docs/backfilling.md#user-estimates).
  params.emplace("walltime", "exact");
  return TestSim(cluster, jobs.jobs, policy, placement, options, "trace",
                 Params(std::move(params)), nullptr, {}, jobs.constraints);
}

// The GPUs of the job's first running interval (allocation log).
std::vector<int> GpusOf(TestSim& sim, const std::string& id) {
  const AllocationLog& log = sim.engine().allocations();
  for (const AllocationInterval& interval : log.intervals) {
    if (interval.job != sim.IndexOf(id)) continue;
    return std::vector<int>(log.gpus.begin() + interval.gpu_offset,
                            log.gpus.begin() + interval.gpu_offset + interval.gpu_count);
  }
  return {};
}

double Metric(const Engine& engine, const std::string& name) {
  return SummaryValue(ComputeSummary(engine), name);
}

// One node of 4 GPUs. X (2 GPUs, 0-100) and Y (2 GPUs, 0-30) run; at t=5 arrive A (4 GPUs, 60 s,
// deadline 150) and B (4 GPUs, 20 s, deadline 140), at t=6 E (2 GPUs, 50 s, no deadline).
Jobs EdfJobs() {
  Jobs j;
  j.Add("X", 0, 2, 100);
  j.Add("Y", 0, 2, 30);
  Job& a = j.Add("A", 5, 4, 60);
  j.Deadline(a, 145);  // absolute 150
  Job& b = j.Add("B", 5, 4, 20);
  j.Deadline(b, 135);  // absolute 140
  j.Add("E", 6, 2, 50);
  return j;
}

TEST(Edf, MeetsTheEarlierDeadlineAndMissesTheOtherWithABackfilledJobBetween) {
  // At t=30 (Y ends) the head is B (deadline 140 < 150): it needs 4 GPUs, 2 are free, and its
  // reservation is t=100 when X ends. E fits now and ends at 80 <= 100: backfilled at 30. B runs
  // 100-120 and meets 140; A runs 120-180 and misses 150 by 30.
  TestSim sim = Sim(Nodes(1, 4), EdfJobs(), "edf");
  sim.Run();
  ExpectInterval(sim.Of("Y"), 0, 30);
  ExpectInterval(sim.Of("X"), 0, 100);
  ExpectInterval(sim.Of("E"), 30, 80);
  ExpectInterval(sim.Of("B"), 100, 120);
  ExpectInterval(sim.Of("A"), 120, 180);
  const Engine& e = sim.engine();
  EXPECT_EQ(Metric(e, "sla_jobs"), 2);
  EXPECT_EQ(Metric(e, "sla_met"), 1);
  EXPECT_EQ(Metric(e, "sla_violations"), 1);
  EXPECT_DOUBLE_EQ(Metric(e, "sla_violation_rate"), 0.5);
  EXPECT_DOUBLE_EQ(Metric(e, "sla_lateness_seconds_mean"), 15);  // (0 + 30) / 2
  EXPECT_DOUBLE_EQ(Metric(e, "sla_late_lateness_seconds_mean"), 30);
}

TEST(Edf, EasyInSubmissionOrderMissesBoth) {
  // The control: the same backfilling in submission order. A (submitted first) runs 100-160 and
  // misses 150 by 10, B 160-180 misses 140 by 40.
  TestSim sim = Sim(Nodes(1, 4), EdfJobs(), "easy");
  sim.Run();
  ExpectInterval(sim.Of("E"), 30, 80);
  ExpectInterval(sim.Of("A"), 100, 160);
  ExpectInterval(sim.Of("B"), 160, 180);
  EXPECT_EQ(Metric(sim.engine(), "sla_violations"), 2);
  EXPECT_DOUBLE_EQ(Metric(sim.engine(), "sla_lateness_seconds_mean"), 25);
}

TEST(Edf, WithoutDeadlinesSchedulesLikeEasyAndSaysSo) {
  Jobs j = EdfJobs();
  for (Job& job : j.jobs) job.constraints = 0;
  j.constraints.clear();
  TestSim edf = Sim(Nodes(1, 4), j, "edf");
  TestSim easy = Sim(Nodes(1, 4), j, "easy");
  edf.Run();
  easy.Run();
  for (const char* id : {"X", "Y", "A", "B", "E"}) {
    EXPECT_EQ(edf.Of(id).first_start, easy.Of(id).first_start) << id;
  }
  Trace trace;
  trace.jobs = j.jobs;
  EXPECT_NE(FindPolicy("edf").make(Params())->IdleWarning(trace, nullptr), "");
  EXPECT_TRUE(std::isnan(Metric(edf.engine(), "sla_jobs")));  // no SLA rows without deadlines
}

TEST(Locality, DataNodesMoveAJobOffTheNodeFirstFitWouldTake) {
  // Two nodes of 4 GPUs. J (2 GPUs) would go to node 0 (GPUs 0, 1); its data is on node 1.
  Jobs j;
  Job& job = j.Add("J", 0, 2, 10);
  j.Constrain(job).data_nodes = "1";
  TestSim sim = Sim(Nodes(2, 4), j, "fcfs");
  sim.Run();
  EXPECT_EQ(GpusOf(sim, "J"), (std::vector<int>{4, 5}));
  // Without it: node 0.
  Jobs free;
  free.Add("J", 0, 2, 10);
  TestSim plain = Sim(Nodes(2, 4), free, "fcfs");
  plain.Run();
  EXPECT_EQ(GpusOf(plain, "J"), (std::vector<int>{0, 1}));
}

TEST(Locality, AlphaLetsAShareOfTheGpusRunOffTheDataNodes) {
  // Three nodes of 4 GPUs; B (3 GPUs, 0-100) holds node 1 but one GPU. J (4 GPUs, data on node 1)
  // needs ceil(0.25 x 4) = 1 GPU there with alpha 0.25: node 1's last GPU (7) and 3 of the
  // fullest other node (node 0, lowest index among the full ones).
  Jobs j;
  Job& b = j.Add("B", 0, 3, 100);
  j.Constrain(b).data_nodes = "1";
  Job& job = j.Add("J", 1, 4, 10);
  j.Constrain(job).data_nodes = "1";
  EngineOptions options;
  options.constraints.locality_alpha = 0.25;
  TestSim sim = Sim(Nodes(3, 4), j, "fcfs", "first-fit", {}, options);
  sim.Run();
  EXPECT_EQ(GpusOf(sim, "B"), (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(GpusOf(sim, "J"), (std::vector<int>{0, 1, 2, 7}));
  ExpectInterval(sim.Of("J"), 1, 11);
  // With alpha 1 (the default) J needs all 4 on node 1: it waits for B.
  TestSim strict = Sim(Nodes(3, 4), j, "fcfs");
  strict.Run();
  ExpectInterval(strict.Of("J"), 100, 110);
  EXPECT_EQ(GpusOf(strict, "J"), (std::vector<int>{4, 5, 6, 7}));
}

TEST(Locality, AJobWhoseDataNodesCannotHoldItIsRejectedWithTheReason) {
  Jobs j;
  Job& job = j.Add("J", 0, 8, 10);
  j.Constrain(job).data_nodes = "1";
  TestSim sim = Sim(Nodes(2, 4), j, "fcfs");
  sim.Run();
  EXPECT_EQ(sim.Of("J").state, JobState::kRejected);
  EXPECT_EQ(sim.ReasonOf("J"),
            "requests 8 GPUs; no placement of this cluster meets 8 of its GPUs (alpha 1) on its "
            "data nodes 1 (docs/deadlines.md#constraints)");
}

TEST(NodeLimit, KeepsAPoolPlacementOnOneNode) {
  // Four nodes of 4 GPUs, `pool` placement (the lowest-index free GPUs). H0, F and H1 (2 GPUs
  // each) hold GPUs 0-5; `pool` gives J (4 GPUs) GPUs 6-9, on nodes 1 and 2. With max_nodes 1 it
  // goes to one node: node 2, the fullest (ties: lowest index).
  Jobs j;
  j.Add("H0", 0, 2, 100);
  j.Add("F", 0, 2, 100);  // GPUs 2-3
  j.Add("H1", 0, 2, 100);
  Jobs limited = j;
  Job& job = limited.Add("J", 1, 4, 10);
  limited.Constrain(job).max_nodes = 1;
  j.Add("J", 1, 4, 10);
  TestSim free_sim = Sim(Nodes(4, 4), j, "fcfs", "pool");
  free_sim.Run();
  EXPECT_EQ(GpusOf(free_sim, "J"), (std::vector<int>{6, 7, 8, 9}));
  TestSim sim = Sim(Nodes(4, 4), limited, "fcfs", "pool");
  sim.Run();
  EXPECT_EQ(GpusOf(sim, "J"), (std::vector<int>{8, 9, 10, 11}));
  EXPECT_EQ(sim.Of("J").max_nodes, 1);
}

TEST(NodeLimit, ATensorParallelGroupIsNotSplitBySearchingForTheLimit) {
  // Two nodes of 4 GPUs; A and B (3 GPUs each) hold 3 of each node. T (2 GPUs in one
  // tensor-parallel group, at most 2 nodes) fits on no node until A ends: [100, 200] on node 0,
  // not at once on one free GPU of each node (the limit's search knows no groups).
  Jobs j;
  j.Add("A", 0, 3, 100);
  j.Add("B", 0, 3, 200);
  Job& t = j.AddGroups("T", 1, 2, 100, 2);
  j.Constrain(t).max_nodes = 2;
  TestSim sim = Sim(Nodes(2, 4), j, "fcfs");
  sim.Run();
  testing::ExpectInterval(sim.Of("T"), 100, 200);
  EXPECT_EQ(GpusOf(sim, "T"), (std::vector<int>{0, 1}));
}

TEST(TensorGroups, ConservativeWithPoolPlansThemPerNode) {
  // Two nodes of 4 GPUs, `pool`. A (3 GPUs) holds GPUs 0-2 to 500, B (3 GPUs) 4-6 to 1,000. C (4
  // GPUs in one tensor-parallel group of 4) at 1: 5 GPUs are free by count at 500, but no node
  // has 4 until B ends: its promise and its start are 1,000 (before, it was promised 500, which
  // the run's check refused).
  Jobs j;
  j.Add("A", 0, 3, 500);
  j.Add("B", 0, 3, 1000);
  j.AddGroups("C", 1, 4, 100, 4);
  TestSim sim = Sim(Nodes(2, 4), j, "conservative", "pool");
  sim.Run();
  testing::ExpectInterval(sim.Of("C"), 1000, 1100);
  EXPECT_EQ(GpusOf(sim, "C"), (std::vector<int>{0, 1, 2, 3}));
}

TEST(TensorGroups, DeadlineElasticStartsOnWholeGroups) {
  // Two nodes of 4 GPUs; J (8 GPUs in groups of 4, 100 s on 8, deadline 1,000 s after submit).
  // The fewest GPUs that meet the deadline in whole groups: 4 (200 s), on node 0: [0, 200]
  // (before, it planned 1 GPU, which no group placement gives, and never started).
  Jobs j;
  j.Deadline(j.AddGroups("J", 0, 8, 100, 4), 1000);
  TestSim sim = Sim(Nodes(2, 4), j, "deadline-elastic");
  sim.Run();
  testing::ExpectInterval(sim.Of("J"), 0, 200);
  EXPECT_EQ(GpusOf(sim, "J").size(), 4u);
}

TEST(TensorGroups, WeightedKeepsEachGroupOnOneNode) {
  // Two nodes of 6 GPUs; J (8 GPUs in groups of 4): the allocator's 6 + 2 would split a group;
  // the run's placement gives 4 + 4: GPUs 0-3 and 6-9.
  Jobs j;
  j.AddGroups("J", 0, 8, 100, 4);
  EngineOptions options;
  options.record_allocations = true;
  TestSim sim(Nodes(2, 6), j.jobs, "weighted", "first-fit", options);
  sim.Run();
  testing::ExpectInterval(sim.Of("J"), 0, 100);
  EXPECT_EQ(GpusOf(sim, "J"), (std::vector<int>{0, 1, 2, 3, 6, 7, 8, 9}));
}

TEST(NodeLimit, AJobLargerThanItsNodesAllowIsRejectedAndTheRunLimitApplies) {
  // 12 GPUs on nodes of 4 need 3 nodes; --max-nodes-per-job 2 allows 8.
  Jobs j;
  j.Add("big", 0, 12, 10);
  j.Add("ok", 0, 8, 10);
  EngineOptions options;
  options.constraints.max_nodes_per_job = 2;
  TestSim sim = Sim(Nodes(4, 4), j, "fcfs", "first-fit", {}, options);
  sim.Run();
  EXPECT_EQ(sim.Of("big").state, JobState::kRejected);
  EXPECT_EQ(sim.ReasonOf("big"),
            "requests 12 GPUs; no placement of this cluster meets at most 2 nodes (max_nodes) "
            "(docs/deadlines.md#constraints)");
  ExpectInterval(sim.Of("ok"), 0, 10);
}

// Starts the queue head on the lowest-index free GPUs, whatever its constraints.
class Careless final : public Policy {
 public:
  void Schedule(SchedulingContext& context) override {
    const JobId id = context.QueueFront();
    if (id == kNoJob) return;
    Allocation a;
    a.gpu_type = context.cluster().node(0).gpu_type;
    for (int g = 0; static_cast<int>(a.gpus.size()) < context.active(id).request.gpus; ++g) {
      a.gpus.push_back(g);
    }
    context.Start(id, a);
  }
};

TEST(Constraints, TheEngineStopsAPolicyStartingAJobAgainstThem) {
  Jobs j;
  Job& job = j.Add("J", 0, 2, 10);
  j.Constrain(job).data_nodes = "1";
  TestSim sim(Nodes(2, 4), j.jobs, std::make_unique<Careless>(), EngineOptions{}, nullptr,
              j.constraints);
  try {
    sim.Run();
    FAIL() << "expected a policy bug";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("against its placement constraints: 0 of 2 GPUs on its "
                                         "data nodes; needs 2 (alpha 1)"),
              std::string::npos)
        << e.what();
  }
}

TEST(DeadlineElastic, AdmitsOnTheFewestGpusAndDeclinesWhatCannotBeMet) {
  // One node of 4 GPUs, trace runtime, linear scaling of elastic starts. At t=0: A (4 GPUs,
  // 100 s, deadline 400), B (4 GPUs, 100 s, deadline 250), C (1 GPU, 50 s, no deadline).
  // Admission by deadline: B's fewest GPUs ending by 250 are 2 (200 s); then A on the 2 left:
  // 1 GPU ends at 400 <= 400. C, best effort, takes the last GPU until 50 (the plan leaves it
  // free). D (4 GPUs, 100 s, deadline 150) at t=10: the earliest it could end is 450 (1 GPU from
  // 50) and later for more GPUs: declined.
  Jobs j;
  Job& a = j.Add("A", 0, 4, 100);
  j.Deadline(a, 400);
  Job& b = j.Add("B", 0, 4, 100);
  j.Deadline(b, 250);
  j.Add("C", 0, 1, 50);
  Job& d = j.Add("D", 10, 4, 100);
  j.Deadline(d, 140);
  TestSim sim = Sim(Nodes(1, 4), j, "deadline-elastic", "pool");
  sim.Run();
  ExpectInterval(sim.Of("B"), 0, 200);
  EXPECT_EQ(GpusOf(sim, "B"), (std::vector<int>{0, 1}));
  ExpectInterval(sim.Of("A"), 0, 400);
  EXPECT_EQ(sim.Of("A").max_gpus, 1);
  ExpectInterval(sim.Of("C"), 0, 50);
  EXPECT_EQ(sim.Of("D").state, JobState::kRejected);
  EXPECT_NE(sim.ReasonOf("D").find("declined at admission"), std::string::npos);
  const Engine& e = sim.engine();
  EXPECT_EQ(Metric(e, "sla_jobs"), 3);
  EXPECT_EQ(Metric(e, "sla_met"), 2);
  EXPECT_EQ(Metric(e, "sla_rejected"), 1);
}

TEST(DeadlineElastic, DeclinedJobsWaitAsBestEffortWhenAsked) {
  Jobs j;
  Job& a = j.Add("A", 0, 4, 100);
  j.Deadline(a, 50);  // cannot be met even alone on 4 GPUs
  TestSim sim = Sim(Nodes(1, 4), j, "deadline-elastic", "pool", {{"declined", "best-effort"}});
  sim.Run();
  ExpectInterval(sim.Of("A"), 0, 100);
  EXPECT_EQ(sim.Of("A").max_gpus, 4);
}

TEST(DeadlineElastic, TheGpusOfAJobThatEndsBeforeItsWallTimeAreFreeInThePlanAtOnce) {
  // One node of 4 GPUs; every job asks for 4 GPUs and a wall time of 100 s and runs 10 s, so the
  // plan holds a running job's GPUs until its start + 100 unless its end gives them back.
  // A runs 0-10. B (best effort, t=5) waits for A and starts at A's end: 10-20. C (t=12,
  // deadline 125) is planned behind B's estimated end (110): 3 GPUs, 40/3 s, ends 123.3. B ends
  // at 20; the plan without B puts C on 1 GPU at once: 40 s, 20-60, by its deadline.
  Jobs j;
  j.Add("A", 0, 4, 10).walltime = 100;
  j.Add("B", 5, 4, 10).walltime = 100;
  Job& c = j.Add("C", 12, 4, 10);
  c.walltime = 100;
  j.Deadline(c, 113);  // absolute 125
  TestSim sim = Sim(Nodes(1, 4), j, "deadline-elastic", "pool", {{"walltime", "trace"}});
  sim.Run();
  ExpectInterval(sim.Of("A"), 0, 10);
  ExpectInterval(sim.Of("B"), 10, 20);
  ExpectInterval(sim.Of("C"), 20, 60);
  EXPECT_EQ(sim.Of("C").max_gpus, 1);
}

TEST(DeadlineElastic, NoElasticStartRunsPastTheJobsWallTime) {
  // One node of 4 GPUs; A (4 GPUs, 100 s on 4, wall time 150, deadline 400). On 1 GPU it would
  // end at 400, by its deadline, but run 400 s, past its wall time: killed at 150. 2 GPUs run
  // 200 s, past it too. The fewest GPUs within both: 3, 133.3 s: [0, 133.3], completed.
  Jobs j;
  Job& a = j.Add("A", 0, 4, 100);
  a.walltime = 150;
  j.Deadline(a, 400);
  TestSim sim = Sim(Nodes(1, 4), j, "deadline-elastic", "pool", {{"walltime", "trace"}});
  sim.Run();
  testing::ExpectInterval(sim.Of("A"), 0, 400.0 / 3);
  EXPECT_EQ(sim.Of("A").max_gpus, 3);
}

TEST(DeadlineElastic, AJobStartedOnFewerGpusHoldsThemUntilItsTrueEnd) {
  // One node of 4 GPUs, no wall times (modelled user estimates plan the running jobs). A (4 GPUs,
  // 1,000 s on 4, deadline 4,000) starts on 1 GPU: it runs 4,000 s, [0, 4000]. Its modelled
  // estimate was drawn for 4 GPUs: between its 1,000 s and the model's limit M, 1 h. B (t = 1,
  // 4 GPUs in one group of 4, 1,000 s, deadline 4,700) needs all 4 GPUs: after A, [4000, 5000],
  // late, so it is declined. Planned with A's estimate (at most 3,600) B would have been admitted
  // and missed its deadline.
  Jobs j;
  Job& a = j.Add("A", 0, 4, 1000);
  j.Deadline(a, 4000);
  j.Deadline(j.AddGroups("B", 1, 4, 1000, 4), 4699);
  TestSim sim = Sim(Nodes(1, 4), j, "deadline-elastic", "pool", {{"walltime", "trace"}});
  sim.Run();
  testing::ExpectInterval(sim.Of("A"), 0, 4000);
  EXPECT_EQ(sim.Of("A").max_gpus, 1);
  EXPECT_EQ(sim.Of("B").state, JobState::kRejected);
  EXPECT_NE(sim.ReasonOf("B").find("declined at admission"), std::string::npos);
}

TEST(DeadlineElastic, ABestEffortJobStartsWhenExactlyItsGpusAreFree) {
  // One node of 4 GPUs, first-fit, no deadlines: every job is best effort, started in submission
  // order where it fits now. A (2 GPUs) runs 0-100. B (4 GPUs, t=1) finds 2 free and waits. C
  // (2 GPUs, t=2) finds exactly its 2 free and starts: 2-12. B starts when A ends: 100-110.
  Jobs j;
  j.Add("A", 0, 2, 100);
  j.Add("B", 1, 4, 10);
  j.Add("C", 2, 2, 10);
  TestSim sim = Sim(Nodes(1, 4), j, "deadline-elastic");
  sim.Run();
  ExpectInterval(sim.Of("A"), 0, 100);
  ExpectInterval(sim.Of("C"), 2, 12);
  ExpectInterval(sim.Of("B"), 100, 110);
}

TEST(Weighted, UtilizationAloneFillsTheNodeWhereFirstFitDecreasingDoesNot) {
  // One node of 4 GPUs at t=0: J1 (3 GPUs), J2 (2 GPUs), J3 (2 GPUs), 100 s each. With only
  // w_util the value of a job is its share of the free GPUs: the exact allocator starts J2 and J3
  // (4 of 4); first-fit decreasing takes J1 first and nothing else fits (3 of 4).
  Jobs j;
  j.Add("J1", 0, 3, 100);
  j.Add("J2", 0, 2, 100);
  j.Add("J3", 0, 2, 100);
  const std::map<std::string, std::string> util = {{"w_util", "1"},  {"w_wait", "0"},
                                                   {"w_throughput", "0"}, {"w_fair", "0"},
                                                   {"w_sla", "0"}};
  auto with = [&](const char* allocator) {
    auto params = util;
    params["allocator"] = allocator;
    return Sim(Nodes(1, 4), j, "weighted", "first-fit", params);
  };
  TestSim exact = with("exact");
  exact.Run();
  ExpectInterval(exact.Of("J2"), 0, 100);
  ExpectInterval(exact.Of("J3"), 0, 100);
  ExpectInterval(exact.Of("J1"), 100, 200);
  TestSim greedy = with("greedy");
  greedy.Run();
  ExpectInterval(greedy.Of("J1"), 0, 100);
  ExpectInterval(greedy.Of("J2"), 100, 200);
  ExpectInterval(greedy.Of("J3"), 100, 200);
}

TEST(Weighted, WarnsOfDpUnderANodeAwarePlacementAndOfAnEnergyWeightOnOneGpuType) {
  // The three jobs above with allocator=dp. With pool, dp's knapsack starts J2 and J3. With
  // first-fit every job keeps to the fewest nodes its size needs (one), a node limit dp does not
  // model: each pass falls back to first-fit decreasing, J1 first, and the run warns of it.
  Jobs j;
  j.Add("J1", 0, 3, 100);
  j.Add("J2", 0, 2, 100);
  j.Add("J3", 0, 2, 100);
  const std::map<std::string, std::string> dp = {
      {"w_util", "1"}, {"w_wait", "0"},   {"w_throughput", "0"}, {"w_fair", "0"},
      {"w_sla", "0"},  {"w_energy", "1"}, {"allocator", "dp"}};
  TestSim pool = Sim(Nodes(1, 4), j, "weighted", "pool", dp);
  pool.Run();
  ExpectInterval(pool.Of("J2"), 0, 100);
  ExpectInterval(pool.Of("J1"), 100, 200);
  TestSim first_fit = Sim(Nodes(1, 4), j, "weighted", "first-fit", dp);
  first_fit.Run();
  ExpectInterval(first_fit.Of("J1"), 0, 100);
  const auto weighted = FindPolicy("weighted").make(Params(dp));
  const std::string on_first_fit =
      weighted->PlacementWarning(first_fit.cluster(), first_fit.engine().placement());
  EXPECT_NE(on_first_fit.find("allocator=dp"), std::string::npos) << on_first_fit;
  // One GPU type: a job's energy is the same wherever it runs, and the energy term is 0.
  EXPECT_NE(on_first_fit.find("w_energy"), std::string::npos) << on_first_fit;
  const std::string on_pool = weighted->PlacementWarning(pool.cluster(), pool.engine().placement());
  EXPECT_EQ(on_pool.find("allocator=dp"), std::string::npos) << on_pool;
  TestSim two_types = Sim(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":4},
                                        {"count":1,"gpu_type":"V100-32GB","gpus_per_node":4}]})",
                          j, "weighted", "pool", dp);
  EXPECT_EQ(weighted->PlacementWarning(two_types.cluster(), two_types.engine().placement()), "");
}

TEST(Weighted, ThroughputAloneStartsTheShortJobsFirst) {
  // The same three jobs, durations 300, 100, 100 s, on 4 GPUs: with only w_throughput a job's
  // value is its completion rate 1/d over the queue's; J2 and J3 (1/100 each) beat J1 (1/300).
  Jobs j;
  j.Add("J1", 0, 3, 300);
  j.Add("J2", 0, 2, 100);
  j.Add("J3", 0, 2, 100);
  TestSim sim = Sim(Nodes(1, 4), j, "weighted", "first-fit",
                    {{"w_util", "0"}, {"w_wait", "0"}, {"w_throughput", "1"}, {"w_fair", "0"},
                     {"w_sla", "0"}, {"allocator", "exact"}});
  sim.Run();
  ExpectInterval(sim.Of("J2"), 0, 100);
  ExpectInterval(sim.Of("J3"), 0, 100);
  ExpectInterval(sim.Of("J1"), 100, 400);
}

TEST(Weighted, FairnessSeesTheGpusAUserGaveBackWhenItsJobEnded) {
  // w_util 0.8, w_fair 0.2 on one node of 4 GPUs. Bob's B1 (1 GPU) starts alone at 0; Alice's A1
  // (3 GPUs) at 1 (nothing = 0.8 + 0.2 x 1 = 1.0; A1: util 0, held (3, 1), J = 16/20 = 0.8,
  // fair 0.2/0.5 = 0.4, score 0.08). At 101 A1 has ended: held (alice 0, bob 1), 3 GPUs free,
  // and A2 or B2 (2 GPUs each) can start. A2: util 1/3, held (2, 1), J = 9/10, fair 0.2, score
  // 0.8/3 + 0.04 = 0.307; B2: held (0, 3), J = 1/2, fair 1, score 0.8/3 + 0.2 = 0.467: A2
  // starts, B2 when A2 ends. Were A1's 3 GPUs still counted for Alice, A2 would give (5, 1),
  // J = 36/52, score 0.39, and B2 (3, 3), J = 1, score 0.267: B2 would start at 101.
  Jobs j;
  j.Add("B1", 0, 1, 1000).user = "bob";
  j.Add("A1", 1, 3, 100).user = "alice";
  j.Add("B2", 40, 2, 100).user = "bob";
  j.Add("A2", 50, 2, 100).user = "alice";
  TestSim sim = Sim(Nodes(1, 4), j, "weighted", "first-fit",
                    {{"w_util", "0.8"}, {"w_wait", "0"}, {"w_throughput", "0"}, {"w_fair", "0.2"},
                     {"w_sla", "0"}});
  sim.Run();
  ExpectInterval(sim.Of("B1"), 0, 1000);
  ExpectInterval(sim.Of("A1"), 1, 101);
  ExpectInterval(sim.Of("A2"), 101, 201);
  ExpectInterval(sim.Of("B2"), 201, 301);
}

}  // namespace
}  // namespace clustersim
