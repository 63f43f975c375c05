// cosched (policies/cosched.cc): schedules and batches computed by hand in the comments, on
// clusters small enough to follow. Runtime model `trace`, so a job progresses at
// RateFactor x ShareSpeed (1 at its user's configuration on a whole GPU). Model-aware runs use
// the compiled-in model and hardware catalogs, through a ModelRuntime built from the same sorted
// job list TestSim runs (so job indices agree).
//
// Memory figures used below (sim/models/memory_model.h, docs/models.md: M(B) = 1.01 x (state +
// k B); 18 B/param for mixed precision + Adam, 14 for mixed + SGD with momentum; capacity = the
// GPU's usable memory - 1.27 GiB of runtime overhead; 1 GiB = 2^30 B):
// - BERT-large (340M params, Adam, k = 154,511,078.4 B/sample at sequence 128) on V100-16GB
//   (15.78 GiB usable): B_max = floor((15,579,993,866.24 - 6,181,200,000) / 156,056,189.184) =
//   60. The user's batch 128 and its half 64 do not fit; 32 does.
// - ResNet-50 (25.6M params, SGD momentum, k = 43,452,416 B/sample) on A100-80GB (79.35 GiB
//   usable): M(256) = 1.01 x (25.6e6 x 14 + 256 k) = 11,597,040,680.96 B <= half the capacity
//   (83,837,761,617.92 B / 2 = 41,918,880,808.96 B); two of them fit on one GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "sim/engine/mig.h"
#include "sim/engine/model_runtime.h"
#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::Nodes;
using testing::TestSim;

Params ParamsOf(std::map<std::string, std::string> values) { return Params(std::move(values)); }

Job ModelJob(const std::string& id, double submit, int gpus, double duration,
             const std::string& model, int batch) {
  Job job = MakeJob(id, submit, gpus, duration);
  job.model = model;
  job.batch_size = batch;
  return job;
}

// A model-aware run on the compiled-in catalogs.
TestSim ModelSim(const std::string& cluster_json, std::vector<Job> jobs, const std::string& policy,
                 std::map<std::string, std::string> params = {}, double preemption_cost = 0) {
  EngineOptions options;
  options.preemption_cost_seconds = preemption_cost;
  return TestSim(cluster_json, std::move(jobs), policy, "first-fit", options, "trace",
                 ParamsOf(std::move(params)), &ModelCatalog::Default());
}

TEST(Cosched, StartsAJobWhoseUserBatchDoesNotFitWithABatchThatFitsWhereFcfsRunsOutOfMemory) {
  // One V100-16GB, BERT-large (sequence 128, mixed precision + Adam; docs/models.md). By hand:
  // state 340e6 x 18 B x 1.01 = 6,181,200,000 B; activations 154,511,078.4 B per sample x 1.01 =
  // 156,056,189.184 B; capacity (15.78 usable - 1.27 runtime) GiB = 15,579,993,866.24 B; B_max =
  // floor(9,398,793,866.24 / 156,056,189.184) = floor(60.2) = 60.
  // fcfs starts it at the user's 128 at t=0: out of memory after the 120 s start-up, again at 64
  // (> 60), and runs at 32 from t=240.
  // cosched picks the goodput-maximizing batch <= B_max. Goodput b / (c + b t_s) x phi / (phi + b)
  // peaks at b = sqrt(c phi / t_s): with the fixed step time c = optimizer 0.011 s + 24 layers x
  // 0.15 ms = 0.015 s, t_s ~ 5 ms per sample and phi = sqrt(2100 x 20000) = 6481, that is ~140 >
  // 60, so the best batch is B_max itself. It starts at t=0 and never runs out of memory.
  const std::vector<Job> jobs = {ModelJob("bert", 0, 1, 1000, "BERT-large", 128)};
  TestSim fcfs = ModelSim(Nodes(1, 1, "V100-16GB"), jobs, "fcfs");
  fcfs.Run();
  EXPECT_EQ(fcfs.ModelOf("bert").oom_failures, 2);
  EXPECT_EQ(fcfs.ModelOf("bert").batch, 32);
  EXPECT_DOUBLE_EQ(fcfs.ModelOf("bert").oom_delay, 240);

  TestSim cosched = ModelSim(Nodes(1, 1, "V100-16GB"), jobs, "cosched");
  cosched.Run();
  const JobRun& run = cosched.Of("bert");
  EXPECT_EQ(run.state, JobState::kCompleted);
  EXPECT_EQ(cosched.ModelOf("bert").oom_failures, 0);
  EXPECT_EQ(cosched.ModelOf("bert").batch, 60);
  EXPECT_DOUBLE_EQ(run.first_start, 0);
  // M(60) = 1.01 x (6.12e9 + 60 x 154,511,078.4) = 15,544,571,351.04 B <= 15,579,993,866.24 B.
  EXPECT_NEAR(cosched.ModelOf("bert").memory_per_gpu, 15544571351.04, 1e-2);
}

TEST(Cosched, StartsAJobOnFewerGpusThanRequestedWhenOnlyThatManyAreFree) {
  // 1 node x 4 A100-80GB. B (no model, 2 GPUs, 500 s) and, at t=10, A (ResNet-50, 4 GPUs,
  // 4000 s). At t=10 two GPUs are free; A's floor is max(min_gpus 1, ceil(0.5 x 4)) = 2: it
  // starts at 10 on 2 GPUs (fcfs waits for B until 500). B ends at 500; A may grow an interval
  // (600 s) after its start, so a timer brings a pass at 610, where it grows to 4 GPUs (no
  // preemption cost): GPU-seconds = 2 x 600 + 4 x (end - 610).
  const std::vector<Job> jobs = {MakeJob("B", 0, 2, 500),
                                 ModelJob("A", 10, 4, 4000, "ResNet-50", 256)};
  TestSim sim = ModelSim(Nodes(1, 4), jobs, "cosched");
  sim.Run();
  const JobRun& a = sim.Of("A");
  EXPECT_EQ(a.state, JobState::kCompleted);
  EXPECT_DOUBLE_EQ(a.first_start, 10);
  EXPECT_EQ(sim.ModelOf("A").oom_failures, 0);
  EXPECT_EQ(a.max_gpus, 4);
  EXPECT_NEAR(a.gpu_seconds, 2 * 600 + 4 * (a.end_time - 610), 1e-6);

  TestSim fcfs = ModelSim(Nodes(1, 4), jobs, "fcfs");
  fcfs.Run();
  EXPECT_DOUBLE_EQ(fcfs.Of("A").first_start, 500);

  // min_fraction=1: whole requests only, so A waits for B as under fcfs.
  TestSim whole = ModelSim(Nodes(1, 4), jobs, "cosched", {{"min_fraction", "1"}});
  whole.Run();
  EXPECT_DOUBLE_EQ(whole.Of("A").first_start, 500);
  EXPECT_EQ(whole.Of("A").max_gpus, 4);
}

TEST(Cosched, CoLocatesTwoSmallJobsOnOneGpuWhenNoWholeGpuIsFreeForBoth) {
  // 1 node x 2 A100-80GB. L (no model, 1 GPU, 5000 s) takes GPU 0 at t=0. At t=10, S1 and S2
  // (ResNet-50, 1 GPU, user batch 256, 700 s each) arrive; one whole GPU is free.
  // Best batch on one A100-80GB: noise scale sqrt(1000 x 30000) = 5477, b_half = 16 (plus well
  // under one sample of optimizer time): goodput ~ b / ((b + 16)(b + 5477)) peaks near
  // sqrt(16 x 5477) = 296; of the candidates 256 gives 256 / (272 x 5733) = 1.642e-4 and 512
  // gives 512 / (528 x 5989) = 1.619e-4: 256, the user's batch (rate factor 1).
  // M(256) = 11.44e9 B is at most half the capacity and the pair (22.9e9 B) fits: S1 would take
  // the last free GPU while S2 could use no other, so both start at t=10 on halves of GPU 1.
  // Each runs at ShareSpeed(500) = 500/500 x 0.7: 700 / 0.7 = 1000 s, ending at 1010.
  const std::vector<Job> jobs = {MakeJob("L", 0, 1, 5000),
                                 ModelJob("S1", 10, 1, 700, "ResNet-50", 256),
                                 ModelJob("S2", 10, 1, 700, "ResNet-50", 256)};
  TestSim sim = ModelSim(Nodes(1, 2), jobs, "cosched");
  Engine& engine = sim.Run();
  for (const char* id : {"S1", "S2"}) {
    const JobRun& run = sim.Of(id);
    EXPECT_EQ(run.state, JobState::kCompleted) << id;
    EXPECT_DOUBLE_EQ(run.first_start, 10) << id;
    EXPECT_EQ(sim.ModelOf(id).batch, 256) << id;
    EXPECT_EQ(sim.ActiveOf(id).allocation.milli, 500) << id;
    EXPECT_NEAR(run.end_time, 1010, 1e-6) << id;
    EXPECT_EQ(sim.ModelOf(id).oom_failures, 0) << id;
  }
  // Both shares on one GPU: each held half a GPU for 1000 s; L held GPU 0 for 5000 s.
  EXPECT_NEAR(engine.metrics().busy_gpu_seconds(), 5000 + 2 * 0.5 * 1000, 1e-6);

  // With share=false S2 waits for S1's whole GPU: S1 [10, 710], S2 [710, 1410].
  TestSim apart = ModelSim(Nodes(1, 2), jobs, "cosched", {{"share", "false"}});
  apart.Run();
  EXPECT_DOUBLE_EQ(apart.Of("S1").first_start, 10);
  EXPECT_DOUBLE_EQ(apart.Of("S1").end_time, 710);
  EXPECT_DOUBLE_EQ(apart.Of("S2").first_start, 710);
  EXPECT_EQ(apart.ActiveOf("S2").allocation.milli, 0);
}

TEST(Cosched, DoesNotShareWhenAWholeGpuIsFreeForEachJob) {
  // 1 node x 3 A100-80GB, the same jobs as above: S1 and S2 each get a whole GPU at t=10 and
  // run at full speed, [10, 710].
  const std::vector<Job> jobs = {MakeJob("L", 0, 1, 5000),
                                 ModelJob("S1", 10, 1, 700, "ResNet-50", 256),
                                 ModelJob("S2", 10, 1, 700, "ResNet-50", 256)};
  TestSim sim = ModelSim(Nodes(1, 3), jobs, "cosched");
  sim.Run();
  for (const char* id : {"S1", "S2"}) {
    EXPECT_EQ(sim.ActiveOf(id).allocation.milli, 0) << id;
    EXPECT_DOUBLE_EQ(sim.Of(id).end_time, 710) << id;
  }
}

TEST(Cosched, AStarvingJobIsNotOvertaken) {
  // 1 node x 4 GPUs, no model information. A (1 GPU, 1000 s) at 0; Big (4 GPUs, 100 s) at 1;
  // S1 (1 GPU, 1000 s) at 500; S2 (1 GPU, 1000 s) at 1200.
  // starvation_seconds=100: from t=101 Big starves. At 500 it does not fit (3 free) and holds
  // the GPUs: S1 waits. At 1000 A ends: Big runs [1000, 1100]; at 1100 S1 starts [1100, 2100];
  // S2 starts at 1200 [1200, 2200].
  const std::vector<Job> jobs = {MakeJob("A", 0, 1, 1000), MakeJob("Big", 1, 4, 100),
                                 MakeJob("S1", 500, 1, 1000), MakeJob("S2", 1200, 1, 1000)};
  TestSim held(Nodes(1, 4), jobs, "cosched", "first-fit", {}, "trace",
               ParamsOf({{"starvation_seconds", "100"}}));
  held.Run();
  EXPECT_DOUBLE_EQ(held.Of("Big").first_start, 1000);
  EXPECT_DOUBLE_EQ(held.Of("S1").first_start, 1100);
  EXPECT_DOUBLE_EQ(held.Of("S2").first_start, 1200);

  // Without the hold the small jobs keep one GPU busy: S1 [500, 1500] overlaps A's end, S2
  // [1200, 2200] overlaps S1's; Big starts only at 2200.
  TestSim free(Nodes(1, 4), jobs, "cosched", "first-fit", {}, "trace",
               ParamsOf({{"starvation_seconds", "inf"}}));
  free.Run();
  EXPECT_DOUBLE_EQ(free.Of("S1").first_start, 500);
  EXPECT_DOUBLE_EQ(free.Of("S2").first_start, 1200);
  EXPECT_DOUBLE_EQ(free.Of("Big").first_start, 2200);
}

TEST(Cosched, GrowsAJobStartedOnFewerGpusAtTheNextReoptimization) {
  // 1 node x 4 A100-80GB. B (no model, 2 GPUs, 300 s) and A (ResNet-50, 4 GPUs, 20000 s) at 0.
  // Order (age_weight 300 s per GPU): B (0 + 600) before A (0 + 1200); A starts on the 2 GPUs
  // left, at about half its rate, and the re-optimization timer is set for 600. B ends at 300.
  // At 600 two GPUs are free and nobody waits: A grows to 4 GPUs (remaining work ~ 19700 s at
  // about half speed: the saving is hours, far above 2 x the 10 s preemption cost), pays 10 s of
  // restore, and holds 4 GPUs from then on: GPU-seconds = 2 x 600 + 4 x (end - 600).
  const std::vector<Job> jobs = {MakeJob("B", 0, 2, 300),
                                 ModelJob("A", 0, 4, 20000, "ResNet-50", 256)};
  TestSim grown = ModelSim(Nodes(1, 4), jobs, "cosched", {}, /*preemption_cost=*/10);
  grown.Run();
  const JobRun& a = grown.Of("A");
  EXPECT_EQ(a.state, JobState::kCompleted);
  EXPECT_DOUBLE_EQ(a.first_start, 0);
  EXPECT_EQ(a.max_gpus, 4);
  EXPECT_DOUBLE_EQ(grown.CostsOf("A").overhead_seconds, 10);  // exactly one resize
  EXPECT_NEAR(a.gpu_seconds, 2 * 600 + 4 * (a.end_time - 600), 1e-6);

  // A reallocation cost above any possible saving (the remaining time is at most ~40000 s at
  // half speed, 2 x 1e6 s of cost): the job is not grown, holds 2 GPUs throughout and ends later.
  TestSim kept = ModelSim(Nodes(1, 4), jobs, "cosched", {}, /*preemption_cost=*/1e6);
  kept.Run();
  EXPECT_EQ(kept.Of("A").max_gpus, 2);
  EXPECT_DOUBLE_EQ(kept.CostsOf("A").overhead_seconds, 0);
  EXPECT_GT(kept.Of("A").end_time, a.end_time);
}

TEST(Cosched, WithoutModelsBackfillsWholeRequestsSmallJobsFirst) {
  // 1 node x 4 GPUs, no model information: whole requests. A (3 GPUs, 100 s) at 0, B (2 GPUs,
  // 100 s) at 1, C (1 GPU, 100 s) at 2. At 2, C fits in the free GPU and starts although B
  // waits (greedy backfill; C's key 2 + 300 is before B's 1 + 600 anyway). B starts at 100.
  TestSim sim(Nodes(1, 4),
              {MakeJob("A", 0, 3, 100), MakeJob("B", 1, 2, 100), MakeJob("C", 2, 1, 100)},
              "cosched");
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("A").first_start, 0);
  EXPECT_DOUBLE_EQ(sim.Of("C").first_start, 2);
  EXPECT_DOUBLE_EQ(sim.Of("B").first_start, 100);
  EXPECT_EQ(sim.Of("B").max_gpus, 2);
}

TEST(Cosched, UnderHostLimitsAJobWhoseCpusFitIsTriedAfterOneOfTheSameGpusWhoseCpusDidNot) {
  // 1 node x 8 GPUs and 32 CPUs, no model information. J0 (4 GPUs, 4 CPUs, 100 s) at 0 leaves 4
  // GPUs and 28 CPUs. J1 (4 GPUs, 30 CPUs, 50 s) at 10 does not fit. J2 (4 GPUs, 4 CPUs, 30 s) at
  // 20 fits and starts at once: [20, 50]. A pass that took J1's failure as a bound on every
  // request of 4 GPUs or more would hold J2 until J1 has run. J1 starts when J0 ends: [100, 150].
  auto with_cpus = [](Job job, int cpus) {
    job.cpu_milli = cpus * 1000;
    return job;
  };
  TestSim sim(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":8,"cpus":32,)"
              R"("host_memory_gib":256}]})",
              {with_cpus(MakeJob("J0", 0, 4, 100), 4), with_cpus(MakeJob("J1", 10, 4, 50), 30),
               with_cpus(MakeJob("J2", 20, 4, 30), 4)},
              "cosched");
  ASSERT_TRUE(sim.Run().host_limited());
  testing::ExpectInterval(sim.Of("J0"), 0, 100);
  testing::ExpectInterval(sim.Of("J2"), 20, 50);
  testing::ExpectInterval(sim.Of("J1"), 100, 150);
}

TEST(Cosched, ATensorParallelJobThatDoesNotFitBoundsNoPlainJob) {
  // 2 nodes x 4 GPUs, no model information. A (2 GPUs, 1000 s) at 0 takes GPUs 0-1. T (6 GPUs in
  // tensor-parallel groups of 3, each within a node) at 1 finds one group's room (node 1) but
  // not two. P (6 GPUs, 10 s) at 2 fits across the nodes (node 1 whole and GPUs 2-3): [2, 12].
  // Taking T's failure as a bound on every request of 6 GPUs would hold P until A ends. T starts
  // when A ends: [1000, 1100].
  Job t = MakeJob("T", 1, 6, 100);
  t.tensor_parallel = 3;
  TestSim sim(Nodes(2, 4), {MakeJob("A", 0, 2, 1000), t, MakeJob("P", 2, 6, 10)}, "cosched");
  sim.Run();
  testing::ExpectInterval(sim.Of("P"), 2, 12);
  testing::ExpectInterval(sim.Of("T"), 1000, 1100);
}

TEST(Cosched, AMigInstanceStartsOnAGpuOthersInstancesPartlyHold) {
  // 1 node x 2 A100-40GB in MIG mode (docs/mig.md). A (1 whole GPU, 1000 s) takes GPU 0 and M1
  // (1g.5gb, 1000 s) slice 0 of GPU 1 at 0: no GPU is wholly free. M2 (1g.5gb, 10 s) at 2 fits in
  // GPU 1's free slices: [2, 12]. Counting wholly free GPUs for it would hold it until 1000.
  auto mig = [](const std::string& id, double submit, double duration) {
    Job job = MakeJob(id, submit, 1, duration);
    job.mig_profile = MigProfileId("1g.5gb");
    return job;
  };
  TestSim sim(R"({"nodes":[{"count":1,"gpu_type":"A100-40GB","gpus_per_node":2,"mig":true}]})",
              {MakeJob("A", 0, 1, 1000), mig("M1", 0, 1000), mig("M2", 2, 10)}, "cosched");
  sim.Run();
  testing::ExpectInterval(sim.Of("M2"), 2, 12);
}

TEST(Cosched, AMigInstanceWithAModelIsPlacedAsItsInstanceNotByCountsOfWholeGpus) {
  // 1 x A100-80GB in MIG mode; J0 and J1 ask for 3g.40gb (two such instances fit on one GPU,
  // docs/mig.md) and name a model with a batch. J1 fits beside J0 at once: [1, 101]. Chosen
  // among counts of wholly free GPUs (none once J0 runs) it would wait for J0's end.
  auto mig = [](const std::string& id, double submit) {
    Job job = ModelJob(id, submit, 1, 100, "ResNet-50", 32);
    job.mig_profile = MigProfileId("3g.40gb");
    return job;
  };
  TestSim sim =
      ModelSim(R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":1,"mig":true}]})",
               {mig("J0", 0), mig("J1", 1)}, "cosched");
  sim.Run();
  testing::ExpectInterval(sim.Of("J0"), 0, 100);
  testing::ExpectInterval(sim.Of("J1"), 1, 101);
}

TEST(Cosched, RejectsParametersOutOfRange) {
  const PolicyEntry& entry = FindPolicy("cosched");
  EXPECT_THROW(entry.make(ParamsOf({{"min_fraction", "0"}})), InputError);
  EXPECT_THROW(entry.make(ParamsOf({{"min_fraction", "1.5"}})), InputError);
  EXPECT_THROW(entry.make(ParamsOf({{"interval", "0"}})), InputError);
  EXPECT_THROW(entry.make(ParamsOf({{"age_weight", "-1"}})), InputError);
  EXPECT_THROW(entry.make(ParamsOf({{"realloc_margin", "-1"}})), InputError);
  EXPECT_NO_THROW(entry.make(ParamsOf({{"starvation_seconds", "inf"}, {"share", "false"}})));
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

TEST(CoschedShares, AFractionalPodJoinsAPartlySharedGpuAtOnce) {
  // One A100-80GB, frag-aware placement, no models. p0 holds 500 thousandths from t=0; p1 asks
  // for 300 at t=100: 500 are free on the shared GPU, so it starts at once, and runs its trace
  // time on its share (speed 1): ends at 1100.
  Job p0 = MakeJob("p0", 0, 1, 10000);
  p0.gpu_milli = 500;
  Job p1 = MakeJob("p1", 100, 1, 1000);
  p1.gpu_milli = 300;
  TestSim sim(Nodes(1, 1), {p0, p1}, "cosched", "frag-aware");
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("p1").first_start, 100);
  EXPECT_DOUBLE_EQ(sim.Of("p1").end_time, 1100);
  EXPECT_EQ(sim.ActiveOf("p1").allocation.milli, 300);
}

TEST(CoschedCounts, AModelParallelJobGetsWholeReplicasOnly) {
  // LLaMA-7B needs TP = 2 on an A100-80GB (tests/sim/models/memory_model_test.cc), so a replica is
  // 2 GPUs. With 3 of 8 GPUs free (X holds 5), L (4 requested, floor 2) starts on 2 GPUs, not 3: a
  // third GPU would hold no replica.
  std::vector<Job> jobs = {MakeJob("X", 0, 5, 100000), ModelJob("L", 1, 4, 1000, "LLaMA-7B", 1)};
  TestSim sim = ModelSim(Nodes(1, 8), jobs, "cosched");
  sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("L").first_start, 1);
  EXPECT_EQ(sim.Of("L").max_gpus, 2);
  EXPECT_EQ(sim.ModelOf("L").oom_failures, 0);
}

// Shares under host limits (docs/resources.md): a stated CPU demand D is charged D on the node of
// a share, so a share needs D free CPUs there, and a pair needs both demands together. One node,
// 2 x A100-80GB, 8 CPUs, host memory not declared (never a limit). The jobs are those of
// Cosched.CoLocatesTwoSmallJobsOnOneGpuWhenNoWholeGpuIsFreeForBoth, with CPU demands.
constexpr const char* kEightCpuNode =
    R"({"nodes":[{"count":1,"gpu_type":"A100-80GB","gpus_per_node":2,"cpus":8}]})";

Job WithCpus(Job job, int cores) {
  job.cpu_milli = cores * 1000;
  return job;
}

TEST(CoschedHost, PairsTwoSharesOnlyWhenTheNodeHasTheCpusOfBoth) {
  // L (no model, 2 CPUs) holds GPU 0 from t=0: 6 CPUs free. At t=10 S1 (4 CPUs) is about to take
  // the last free GPU and S2 could use no other. Together they need 4 + 4 = 8 > 6 CPUs: no pair.
  // S1 starts alone on the whole GPU 1 [10, 710] (2 CPUs left); S2 waits for it and runs
  // [710, 1410] on GPU 1.
  std::vector<Job> jobs = {WithCpus(MakeJob("L", 0, 1, 5000), 2),
                           WithCpus(ModelJob("S1", 10, 1, 700, "ResNet-50", 256), 4),
                           WithCpus(ModelJob("S2", 10, 1, 700, "ResNet-50", 256), 4)};
  TestSim apart = ModelSim(kEightCpuNode, jobs, "cosched");  // --check on
  apart.Run();
  ASSERT_TRUE(apart.engine().host_limited());
  EXPECT_DOUBLE_EQ(apart.Of("S1").first_start, 10);
  EXPECT_DOUBLE_EQ(apart.Of("S1").end_time, 710);
  EXPECT_EQ(apart.ActiveOf("S1").allocation.milli, 0);
  EXPECT_DOUBLE_EQ(apart.Of("S2").first_start, 710);
  EXPECT_DOUBLE_EQ(apart.Of("S2").end_time, 1410);
  EXPECT_EQ(apart.ActiveOf("S2").allocation.milli, 0);

  // With S2 at 2 CPUs the pair needs 4 + 2 = 6, exactly what is free: both start at t=10 on
  // halves of GPU 1 and end at 10 + 700 / 0.7 = 1010, as without host limits.
  jobs[2] = WithCpus(jobs[2], 2);
  TestSim paired = ModelSim(kEightCpuNode, jobs, "cosched");
  paired.Run();
  for (const char* id : {"S1", "S2"}) {
    EXPECT_DOUBLE_EQ(paired.Of(id).first_start, 10) << id;
    EXPECT_EQ(paired.ActiveOf(id).allocation.milli, 500) << id;
    EXPECT_NEAR(paired.Of(id).end_time, 1010, 1e-6) << id;
  }
}

TEST(CoschedHost, JoinsAHalfSharedGpuOnlyWhenItsNodeHasTheCpus) {
  // L (2 CPUs) holds GPU 0 over [0, 1500]. S1 and S2 (2 CPUs each) pair on GPU 1 at t=10 (2 + 2 +
  // 2 = 6 of 8 CPUs); S1 ends at 1010 and leaves half of GPU 1 free, with 8 - 2 - 2 = 4 CPUs.
  // At t=1100 S3 (ResNet-50, 1 GPU) arrives; no whole GPU is free and the half-shared GPU has
  // the memory for it (2 x M(256) = 22.9e9 B <= 83.8e9 B), so only CPUs decide:
  // - 5 CPUs > 4: it may not join; it waits for L and starts on the whole GPU 0 at 1500,
  //   [1500, 2200];
  // - 4 CPUs: it joins the half of GPU 1 at once, at 1100.
  std::vector<Job> jobs = {WithCpus(MakeJob("L", 0, 1, 1500), 2),
                           WithCpus(ModelJob("S1", 10, 1, 700, "ResNet-50", 256), 2),
                           WithCpus(ModelJob("S2", 10, 1, 5000, "ResNet-50", 256), 2),
                           WithCpus(ModelJob("S3", 1100, 1, 700, "ResNet-50", 256), 5)};
  TestSim waits = ModelSim(kEightCpuNode, jobs, "cosched");  // --check on
  waits.Run();
  ASSERT_TRUE(waits.engine().host_limited());
  EXPECT_NEAR(waits.Of("S1").end_time, 1010, 1e-6);
  EXPECT_EQ(waits.ActiveOf("S2").allocation.milli, 500);
  EXPECT_DOUBLE_EQ(waits.Of("S3").first_start, 1500);
  EXPECT_EQ(waits.ActiveOf("S3").allocation.milli, 0);
  EXPECT_DOUBLE_EQ(waits.Of("S3").end_time, 2200);

  jobs[3] = WithCpus(jobs[3], 4);
  TestSim joins = ModelSim(kEightCpuNode, jobs, "cosched");
  joins.Run();
  EXPECT_DOUBLE_EQ(joins.Of("S3").first_start, 1100);
  EXPECT_EQ(joins.ActiveOf("S3").allocation.milli, 500);
}

}  // namespace
}  // namespace clustersim
