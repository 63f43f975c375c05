// Model-aware runs (docs/models.md, sim/engine/model_runtime.h): OOM after start-up with half-batch
// resubmission and a retry limit, the goodput rate factor, elastic starts, GPU shares. A toy model
// keeps every figure computable by hand: 1,000 parameters (model state ~18 KB, negligible), 1 GiB
// of activations per sample, a saturated rate of 100 samples/s on a V100-16GB (1e9 FLOPs per sample
// at 8e-4 of the V100's 125e12), a fixed 0.08 s per micro-batch (so b / (b + 8) of the saturated
// rate at micro-batch b), no other overheads, and a gradient noise scale of 64 samples.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/engine/model_runtime.h"
#include "sim/engine/summary.h"
#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::Nodes;
using testing::TestSim;

const char kToyCatalog[] = R"({"models": [
  {"name": "Toy", "family": "other", "architecture": "cnn",
   "parameters": 1000, "layers": 1, "hidden_size": 1, "attention_heads": 0,
   "sequence_length": 0, "image_size": 1,
   "precision": "mixed-fp16", "optimizer": "adam", "activation_recomputation": "none",
   "activation_bytes_per_sample": 1073741824, "activation_source": "test",
   "flops_per_sample": 1e9, "flops_source": "test",
   "gradient_noise_scale": [64, 64], "noise_source": "test",
   "reference_batch": 16, "reference_batch_source": "test", "source": "test"}],
  "efficiency": {"chips": {"volta": {"cnn": {"mixed": 8e-4}}, "ampere": {"cnn": {"mixed": 3.2e-4}},
                           "hopper": {"cnn": {"mixed": 1.0e-4}}},
   "layer_overhead_seconds": {"cnn": 0.08}, "step_time_cv": {"cnn": 0},
   "tp_overlap": 0, "bucket_bytes": 25e6, "activation_traffic": 0,
   "attention_efficiency": 1, "runtime_overhead_gib": 1.27, "allocator_fragmentation": 0.01,
   "frameworks": {"pytorch": {}}}})";

const ModelCatalog& Toy() {
  static const ModelCatalog catalog = ModelCatalog::FromJsonText(kToyCatalog, "toy");
  return catalog;
}

Job ToyJob(const std::string& id, double submit, int gpus, double duration, int batch) {
  Job job = MakeJob(id, submit, gpus, duration);
  job.model = Symbol("Toy");
  job.batch_size = batch;
  return job;
}

// B_max on a V100-16GB: floor((16 GiB - 18 KB static - (0.22 GiB driver + 1.27 GiB runtime)) /
// 1.01 GiB per sample) = floor(14.37) = 14.
TEST(ModelRuntime, MaxBatchAndRateFactorByHand) {
  TestSim sim(Nodes(1, 1, "V100-16GB"), {ToyJob("a", 0, 1, 1000, 32)}, "fcfs", "first-fit", {},
              "trace", Params(), &Toy());
  const ModelRuntime& m = *sim.models();
  const int v100 = *sim.cluster().catalog().Find("V100-16GB");
  EXPECT_EQ(m.MaxBatch(0, v100), 14);
  EXPECT_TRUE(m.Fits(0, v100, 14));
  EXPECT_FALSE(m.Fits(0, v100, 15));
  // Goodput per GPU at batch b: throughput b / (b + 8) x 100 times efficiency 64 / (64 + b).
  // Against the user's batch 32: (8/16 / 72) / (32/40 / 96) = (1/144) / (1/120) = 5/6.
  EXPECT_NEAR(m.RateFactor(0, v100, 1, 8), 5.0 / 6.0, 1e-6);
  EXPECT_NEAR(m.RateFactor(0, v100, 1, 32), 1.0, 1e-12);
  // Goodput b / ((b + 8)(64 + b)) peaks at b = sqrt(8 x 64) = 22.6, beyond B_max: the best batch
  // that fits is B_max.
  EXPECT_EQ(m.BestBatch(0, v100, 1), 14);
}

TEST(Oom, UserBatchTooLargeFailsAfterStartupAndRetriesWithHalfTheBatch) {
  // Batch 32 and 16 do not fit (B_max 14); 8 does. Start-up 120 s: OOM at 120 and 240, then the
  // job runs at batch 8, 5/6 as fast as at its user's batch: 1000 s of work take 1200 s.
  TestSim sim(Nodes(1, 1, "V100-16GB"), {ToyJob("a", 0, 1, 1000, 32)}, "fcfs", "first-fit", {},
              "trace", Params(), &Toy());
  Engine& engine = sim.Run();
  const JobRun& a = sim.Of("a");
  const ModelRun& am = sim.ModelOf("a");
  EXPECT_EQ(a.state, JobState::kCompleted);
  EXPECT_EQ(am.oom_failures, 2);
  EXPECT_EQ(am.batch, 8);
  EXPECT_DOUBLE_EQ(a.first_start, 0);
  EXPECT_DOUBLE_EQ(sim.ActiveOf("a").last_start, 240);
  EXPECT_DOUBLE_EQ(am.oom_delay, 240);
  EXPECT_DOUBLE_EQ(am.oom_gpu_seconds, 240);
  EXPECT_NEAR(a.end_time, 240 + 1200, 1e-3);
  // M(8) = (1 + 1% fragmentation) x (1,000 parameters x 18 B + 8 x 1 GiB) = 8,675,852,117.92 B.
  EXPECT_NEAR(am.memory_per_gpu, 1.01 * (18e3 + 8.0 * (1 << 30)), 1.0);
  const auto summary = ComputeSummary(engine);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "oom_rate"), 1.0);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "oom_failures"), 2);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "oom_wasted_gpu_hours"), 240.0 / 3600);
  EXPECT_DOUBLE_EQ(SummaryValue(summary, "oom_delay_mean_seconds"), 240);
}

TEST(Oom, RetryLimitEndsTheJobOomFailed) {
  ModelRuntimeOptions options;
  options.oom_retries = 1;
  options.oom_startup_seconds = 60;
  // 32 fails at 60, the one retry at 16 fails at 120: oom-failed then; the second job waited.
  TestSim sim(Nodes(1, 1, "V100-16GB"), {ToyJob("a", 0, 1, 1000, 32), ToyJob("b", 0, 1, 500, 4)},
              "fcfs", "first-fit", {}, "trace", Params(), &Toy(), options);
  sim.Run();
  const JobRun& a = sim.Of("a");
  EXPECT_EQ(a.state, JobState::kOomFailed);
  EXPECT_EQ(sim.ModelOf("a").oom_failures, 2);
  EXPECT_DOUBLE_EQ(a.end_time, 120);
  EXPECT_NE(sim.ReasonOf("a").find("out of GPU memory: Toy at batch 16"), std::string::npos);
  // b waits behind a: a goes back to the head of the queue (submission order) and takes the
  // GPU again at 60; b starts at 120, at its own batch 4 (which fits): rate 1, 500 s.
  const JobRun& b = sim.Of("b");
  EXPECT_DOUBLE_EQ(b.first_start, 120);
  EXPECT_NEAR(b.end_time, 620, 1e-6);
}

TEST(Oom, TheWallTimeStillKillsDuringAStartThatRunsOutOfMemory) {
  // Requested wall time 60 s, start-up 120 s: the kill comes first, at 60, while the start is
  // running out of memory; the 60 s are wasted, nothing progressed.
  Job job = ToyJob("a", 0, 1, 1000, 32);
  job.walltime = 60;
  TestSim sim(Nodes(1, 1, "V100-16GB"), {job}, "fcfs", "first-fit", {}, "trace", Params(), &Toy());
  sim.Run();
  EXPECT_EQ(sim.Of("a").state, JobState::kTimeout);
  EXPECT_DOUBLE_EQ(sim.Of("a").end_time, 60);
  EXPECT_DOUBLE_EQ(sim.Of("a").run_seconds, 60);
  EXPECT_DOUBLE_EQ(sim.ModelOf("a").oom_gpu_seconds, 60);
  EXPECT_EQ(sim.ModelOf("a").oom_failures, 0);  // killed before its OOM
  EXPECT_DOUBLE_EQ(sim.ActiveOf("a").work_left, 1000);
}

TEST(Oom, BackfillingReservationsStayFiniteWhileAStartRunsOutOfMemory) {
  // Four V100-16GB GPUs, easy. A (1 GPU, batch 32) runs out of memory at 120 and, with no
  // retries, ends oom-failed; B (2 GPUs, batch 4: fits) runs 10,000 s; C (4 GPUs) waits at the
  // head: its reservation is at B's end, 10,000 (A's estimate while it starts is its work at
  // its rate, finite). D (1 GPU, 50,000 s) would delay C, so it does not backfill: C starts at
  // 10,000, D after C at 10,100.
  ModelRuntimeOptions options;
  options.oom_retries = 0;
  TestSim sim(Nodes(1, 4, "V100-16GB"),
              {ToyJob("A", 0, 1, 1000, 32), ToyJob("B", 0, 2, 10000, 4), MakeJob("C", 1, 4, 100),
               MakeJob("D", 2, 1, 50000)},
              "easy", "first-fit", {}, "trace", Params(), &Toy(), options);
  sim.Run();
  EXPECT_EQ(sim.Of("A").state, JobState::kOomFailed);
  EXPECT_DOUBLE_EQ(sim.Of("A").end_time, 120);
  EXPECT_DOUBLE_EQ(sim.Of("C").first_start, 10000);
  EXPECT_DOUBLE_EQ(sim.Of("D").first_start, 10100);
}

TEST(Oom, AJobWithoutAModelNeverRunsOutOfMemory) {
  // The same trace with and without the memory model: jobs naming no model behave identically.
  auto fingerprint = [](bool models) {
    TestSim sim(Nodes(2, 2, "V100-16GB"),
                {MakeJob("a", 0, 2, 100), MakeJob("b", 5, 1, 50), MakeJob("c", 5, 4, 30)}, "fcfs",
                "first-fit", {}, "trace", Params(), models ? &Toy() : nullptr);
    return sim.Run().fingerprint();
  };
  EXPECT_EQ(fingerprint(true), fingerprint(false));
}

TEST(Oom, ModelTooLargeForTheRequestedGpusIsRejected) {
  // A model whose one sample needs more than a GPU (activations 20 GiB > 14.4 GiB usable)
  // cannot run on one V100-16GB at any layout of one GPU.
  std::string big = kToyCatalog;
  big.replace(big.find("1073741824"), 10, "21474836480");
  const ModelCatalog catalog = ModelCatalog::FromJsonText(big, "big");
  TestSim sim(Nodes(1, 1, "V100-16GB"), {ToyJob("a", 0, 1, 100, 1)}, "fcfs", "first-fit", {},
              "trace", Params(), &catalog);
  sim.Run();
  EXPECT_EQ(sim.Of("a").state, JobState::kRejected);
  EXPECT_NE(sim.ReasonOf("a").find("model Toy needs"), std::string::npos);
}

TEST(Checkpoints, SaveAndRestoreTakeTheModelStateOverTheStorageBandwidth) {
  // Toy's checkpoint: weights 2 + optimizer 12 bytes per parameter = 14,000 bytes; at 1e-5 GB/s
  // (10 KB/s) a save or restore takes 1.4 s. Checkpoints every 300 s of computing; the node fails
  // at 700 s for 100 s. 0-300 compute, 300-301.4 save, 301.4-601.4 compute, 601.4-602.8 save
  // (600 s of work durable), 602.8-700 lost (97.2 s); 800-801.4 restore; 400 s of work left:
  // 801.4-1101.4 compute, 1101.4-1102.8 save, 1102.8-1202.8 compute.
  EngineOptions options;
  options.faults.checkpoint_interval_seconds = 300;
  options.faults.checkpoint_cost_seconds = 50;  // the constants apply to jobs without a model
  options.faults.restore_cost_seconds = 50;
  FailureRecord failure;
  failure.time = 700;
  failure.node = 0;
  failure.duration = 100;
  options.faults.trace = {failure};
  ModelRuntimeOptions model_options;
  model_options.storage_gbps = 1e-5;
  TestSim sim(Nodes(1, 1, "V100-16GB"), {ToyJob("a", 0, 1, 1000, 8)}, "fcfs", "first-fit", options,
              "trace", Params(), &Toy(), model_options);
  // Batch 8 is the user's: rate 1.
  EXPECT_NEAR(sim.models()->CheckpointSeconds(0), 1.4, 1e-9);
  sim.Run();
  const JobRun& a = sim.Of("a");
  EXPECT_NEAR(a.end_time, 1202.8, 1e-6);
  EXPECT_NEAR(sim.CostsOf("a").lost_gpu_seconds, 97.2, 1e-6);
  EXPECT_NEAR(sim.CostsOf("a").checkpoint_seconds, 3 * 1.4, 1e-6);
  EXPECT_NEAR(sim.CostsOf("a").overhead_seconds, 1.4, 1e-6);
}

// An elastic test policy: starts the queue head on `gpus` GPUs at `batch`, optionally as a share.
class ElasticOnce : public Policy {
 public:
  ElasticOnce(int gpus, int batch, int milli) : gpus_(gpus), batch_(batch), milli_(milli) {}
  bool Elastic() const override { return true; }
  void Schedule(SchedulingContext& context) override {
    for (JobId id = context.QueueFront(); id != kNoJob;) {
      const JobId next = context.QueueNext(id);
      Allocation a;
      a.gpu_type = context.cluster().node(0).gpu_type;
      if (milli_ > 0) {
        a.gpus = {0};  // every job on GPU 0's shares
        a.milli = milli_;
        if (context.resources().free_milli(0) < milli_) return;
      } else {
        for (int g = 0;
             g < context.cluster().total_gpus() && static_cast<int>(a.gpus.size()) < gpus_; ++g) {
          if (context.resources().IsGpuFree(g)) a.gpus.push_back(g);
        }
        if (static_cast<int>(a.gpus.size()) < gpus_) return;
      }
      a.batch = batch_;
      context.Start(id, a);
      id = next;
    }
  }

 private:
  int gpus_, batch_, milli_;
};

TEST(Elastic, StartOnFewerGpusAtAChosenBatchProgressesAtTheGoodputRatio) {
  // Requested 2 GPUs at batch 8 per GPU; started on 1 GPU at batch 8: one replica instead of two.
  // Goodput: 1 x (8/16 x 100) x E(8) against 2 x (8/16 x 100) x E(16), E(M) = 80 / (64 + M):
  // ratio (80/72) / (2 x 80/80) = 0.5555...; 1000 s of work would take 1800 s. The user's two
  // replicas also pay a ring all-reduce per 0.16 s step: 2 (n-1) x 2 us hop latency = 4 us (the
  // 2 KB of gradients add 13 ns), which the single replica saves: 1800 / (1 + 4e-6 / 0.16).
  std::vector<Job> jobs = {ToyJob("a", 0, 2, 1000, 8)};
  TestSim sim(Nodes(1, 2, "V100-16GB"), jobs, std::make_unique<ElasticOnce>(1, 8, 0), {}, &Toy());
  sim.Run();
  const JobRun& a = sim.Of("a");
  EXPECT_EQ(a.state, JobState::kCompleted);
  EXPECT_EQ(a.max_gpus, 1);
  EXPECT_EQ(sim.ModelOf("a").oom_failures, 0);
  EXPECT_NEAR(a.end_time, 1800 / (1 + 4e-6 / 0.16), 1e-3);
}

TEST(Elastic, AStartThatWouldRunOutOfMemoryIsAPolicyBug) {
  std::vector<Job> jobs = {ToyJob("a", 0, 1, 1000, 8)};
  TestSim sim(Nodes(1, 1, "V100-16GB"), jobs, std::make_unique<ElasticOnce>(1, 15, 0), {}, &Toy());
  EXPECT_THROW(sim.Run(), InternalError);
}

TEST(Sharing, TwoJobsShareOneGpuWhenTheirMemoryFitsAndRunAtTheColocationSpeed) {
  // Two 1-GPU jobs at batch 4 (4 GiB each; 8 GiB of 14.4 usable) on halves of one GPU. Each runs
  // at 0.7 of its speed (the default co-location speed) and at its user's batch: 700 s of work
  // take 1000 s. A third job (batch 8: 8 GiB more, 16 > 14.4) cannot join; the policy leaves it.
  std::vector<Job> jobs = {ToyJob("a", 0, 1, 700, 4), ToyJob("b", 0, 1, 700, 4)};
  TestSim sim(Nodes(1, 1, "V100-16GB"), jobs, std::make_unique<ElasticOnce>(1, 4, 500), {}, &Toy());
  Engine& engine = sim.Run();
  EXPECT_NEAR(sim.Of("a").end_time, 1000, 1e-6);
  EXPECT_NEAR(sim.Of("b").end_time, 1000, 1e-6);
  EXPECT_DOUBLE_EQ(sim.Of("a").first_start, 0);
  EXPECT_DOUBLE_EQ(sim.Of("b").first_start, 0);
  // Busy GPU-seconds count each half: 2 x 0.5 x 1000.
  EXPECT_NEAR(engine.metrics().busy_gpu_seconds(), 1000, 1e-6);
}

TEST(Sharing, ASharedStartBeyondTheGpusMemoryIsAPolicyBug) {
  // Batch 8 each: 8 + 8 GiB > 14.4 GiB usable.
  std::vector<Job> jobs = {ToyJob("a", 0, 1, 700, 8), ToyJob("b", 0, 1, 700, 8)};
  TestSim sim(Nodes(1, 1, "V100-16GB"), jobs, std::make_unique<ElasticOnce>(1, 8, 500), {}, &Toy());
  EXPECT_THROW(sim.Run(), InternalError);
}

TEST(Sharing, FractionalTraceJobsRunTheirTraceTimeOnTheirShare) {
  // gpu_milli 300 and 500 on one GPU (no model): speed 1, each its trace duration.
  Job a = MakeJob("a", 0, 1, 100);
  a.gpu_milli = 300;
  Job b = MakeJob("b", 0, 1, 200);
  b.gpu_milli = 300;
  TestSim sim(Nodes(1, 1, "V100-16GB"), {a, b}, std::make_unique<ElasticOnce>(1, 0, 300));
  Engine& engine = sim.Run();
  EXPECT_DOUBLE_EQ(sim.Of("a").end_time, 100);
  EXPECT_DOUBLE_EQ(sim.Of("b").end_time, 200);
  EXPECT_NEAR(engine.metrics().busy_gpu_seconds(), 0.3 * 100 + 0.3 * 200, 1e-9);
}

}  // namespace
}  // namespace clustersim
