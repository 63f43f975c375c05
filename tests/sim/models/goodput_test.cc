// Throughput and goodput (docs/models.md#goodput). Step-time terms are hand computations on a
// catalog whose efficiency tables are set in the test (every term isolated); catalog-level
// agreement with published measurements is tests/sim/models/model_validation_test.cc.
#include "sim/models/goodput.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/hardware/collectives.h"
#include "sim/util/error.h"

namespace clustersim {
namespace {

const GpuSpec& Gpu(const std::string& name) {
  const HardwareCatalog& c = HardwareCatalog::Default();
  return c.gpu(*c.Find(name));
}

// A GPT-like decoder of 2 layers, hidden 1024, 16 heads, sequence 1024, 1e8 parameters, no
// vocabulary; efficiency tables with u = 0.5 everywhere, no overheads, no attention penalty, no
// element-wise traffic, no variability, unless `overrides` sets some.
ModelCatalog TestCatalog(const std::string& overrides = "") {
  const std::string text = R"({"models":[{"name":"tiny-gpt","family":"transformer",
    "architecture":"decoder","parameters":1e8,"layers":2,"hidden_size":1024,
    "attention_heads":16,"sequence_length":1024,"image_size":0,"precision":"mixed-bf16",
    "optimizer":"adam","activation_recomputation":"selective","activation_bytes_per_sample":1,
    "flops_per_sample":1,"gradient_noise_scale":[1000,1000],"reference_batch":64}],
    "efficiency":{"chips":{"volta":{"decoder":{"mixed":0.5}},"ampere":{"decoder":{"mixed":0.5}},
      "hopper":{"decoder":{"mixed":0.5}}},
    "layer_overhead_seconds":{"decoder":0},"step_time_cv":{"decoder":0},
    "tp_overlap":0.5,"bucket_bytes":25e6,"activation_traffic":0,
    "attention_efficiency":1,"runtime_overhead_gib":1.27,"allocator_fragmentation":0.01,
    "frameworks":{"pytorch":{"softmax_bytes_mixed":4}})" +
                           overrides + "}}";
  return ModelCatalog::FromJsonText(text, "test.json");
}

TEST(Goodput, StatisticalEfficiencyIsAtMostOne) {
  // phi / (phi + M): 1 at M = 0, 1/2 at M = phi, decreasing.
  EXPECT_DOUBLE_EQ(StatisticalEfficiency(1000, 0), 1.0);
  EXPECT_DOUBLE_EQ(StatisticalEfficiency(1000, 1000), 0.5);
  EXPECT_LT(StatisticalEfficiency(1000, 2000), StatisticalEfficiency(1000, 1000));
  // Every recommendation of a catalog model has an efficiency <= 1, also below its reference batch.
  const ModelCatalog& catalog = ModelCatalog::Default();
  const ThroughputModel t(catalog.Require("LLaMA-13B"), catalog.efficiency(), Gpu("A100-80GB"),
                          HardwareCatalog::Default(), {4, 1});
  for (int64_t b : {1, 2, 4}) {
    EXPECT_LE(t.Estimate(b, 1, {}, 500).statistical_efficiency, 1.0);
  }
}

TEST(Goodput, OneGpuStepIsFlopsOverAchievedPeakPlusTheOptimizer) {
  // FLOPs per sample 6 N s + 12 L s^2 h = 6 x 1e8 x 1024 + 12 x 2 x 1024^2 x 1024 = 6.144e11 +
  // 2.5769803776e10 = 6.40169803776e11; selective recomputation adds the forward attention
  // products 4 L s^2 h = 8.589934592e9: 6.48759738368e11 executed. On an A100 (312e12 peak) at
  // u = 0.5: 6.48759738368e11 / 156e12 = 4.15871627e-3 s per sample. Optimizer: weights 2e8 +
  // gradients 4e8 + 2 x optimizer 12e8 = 3e9 B / 2.039e12 B/s = 1.4713094654e-3 s.
  const ModelCatalog c = TestCatalog();
  const ThroughputModel t(c.Require("tiny-gpt"), c.efficiency(), Gpu("A100-80GB"),
                          HardwareCatalog::Default());
  const StepEstimate e = t.Estimate(4, 1, {}, 1000);
  EXPECT_NEAR(e.compute_seconds, 4 * 6.48759738368e11 / 156e12, 1e-12);
  EXPECT_NEAR(e.optimizer_seconds, 3e9 / 2.039e12, 1e-12);
  EXPECT_DOUBLE_EQ(e.tp_comm_seconds, 0);
  EXPECT_DOUBLE_EQ(e.comm_seconds, 0);
  EXPECT_NEAR(e.step_seconds, e.compute_seconds + e.optimizer_seconds, 1e-15);
  EXPECT_NEAR(e.samples_per_second, 4 / e.step_seconds, 1e-9);
  // MFU counts model FLOPs (no recomputation) against the 16-bit peak.
  EXPECT_NEAR(e.mfu, 6.40169803776e11 * e.samples_per_second / 312e12, 1e-12);
}

TEST(Goodput, WeightGemmsRunAtTheFractionTheirArithmeticIntensityAllows) {
  // Smoothed roofline over the layer's four weight GEMMs, FLOP weights 3 : 1 : 4 : 4, 2-byte
  // elements: 1 / (1 + ridge x sum w_i (1/m + 1/k_i + 1/n_i) / 12), ridge = 312e12 / 2.039e12
  // FLOPs per byte on an A100 80GB. Hidden 1024, TP 1, m = b x 1024 tokens.
  //   b = 1: 3 (2/1024 + 1/3072) + 3/1024 + 8 (2/1024 + 1/4096) = 0.02734375
  //   b = 4: 3 (1/4096 + 1/1024 + 1/3072) + (1/4096 + 2/1024) + 8 (2/4096 + 1/1024) = 0.0185546875
  const ModelCatalog c = TestCatalog(R"(,"gemm_intensity":true)");
  const ThroughputModel t(c.Require("tiny-gpt"), c.efficiency(), Gpu("A100-80GB"),
                          HardwareCatalog::Default());
  const double ridge = 312e12 / 2.039e12;
  const double g1 = 1 / (1 + ridge * 0.02734375 / 12), g4 = 1 / (1 + ridge * 0.0185546875 / 12);
  EXPECT_NEAR(t.GemmEfficiency(1), g1, 1e-12);
  EXPECT_NEAR(t.GemmEfficiency(4), g4, 1e-12);
  EXPECT_GT(g4, g1);  // larger GEMMs, higher intensity
  // The compute time of a micro-batch divides by it (the rest as in the test above).
  EXPECT_NEAR(t.Estimate(4, 1, {}, 1000).compute_seconds, 4 * 6.48759738368e11 / (156e12 * g4),
              1e-12);
  // Tensor parallelism splits n (or k) by TP: lower intensity. TP 4, b = 1: QKV n = 768, output
  // k = 256, MLP n or k = 1024: 3 (2/1024 + 1/768) + (2/1024 + 1/256) + 8 (3/1024) = 0.0390625.
  const ThroughputModel tp4(c.Require("tiny-gpt"), c.efficiency(), Gpu("A100-80GB"),
                            HardwareCatalog::Default(), {4, 1});
  EXPECT_NEAR(tp4.GemmEfficiency(1), 1 / (1 + ridge * 0.0390625 / 12), 1e-12);
  // Off unless the catalog asks for it (the other tests of this file).
  const ModelCatalog off = TestCatalog();
  EXPECT_DOUBLE_EQ(ThroughputModel(off.Require("tiny-gpt"), off.efficiency(), Gpu("A100-80GB"),
                                   HardwareCatalog::Default())
                       .GemmEfficiency(1),
                   1.0);
}

TEST(Goodput, TensorParallelAllReducesFourTimesPerLayer) {
  // TP 4, micro-batch 2: each of the 4 all-reduces per layer moves 2 x 1024 x 1024 elements of
  // 2 bytes = 4,194,304 B over a 4-GPU ring of 300 GB/s, 2 us per step:
  //   2 x 3/4 x 4,194,304 / 300e9 + 6 x 2e-6 = 2.097152e-5 + 1.2e-5 = 3.297152e-5 s;
  // 2 layers x 4 = 8 of them per micro-batch: 2.6377216e-4 s, x 3 micro-batches (no pipeline).
  const ModelCatalog c = TestCatalog();
  const ThroughputModel t(c.Require("tiny-gpt"), c.efficiency(), Gpu("A100-80GB"),
                          HardwareCatalog::Default(), {4, 1});
  DataParallelSetup dp;
  dp.tp_ring_gbps = 300;
  dp.tp_hop_seconds = 2e-6;
  const StepEstimate e = t.Estimate(2, 3, dp, 1000);
  EXPECT_NEAR(e.tp_comm_seconds, 3 * 8 * (2.0 * 3 / 4 * 4194304 / 300e9 + 6 * 2e-6), 1e-15);
  EXPECT_NEAR(RingAllReduceSeconds(4, 4194304, 300, 2e-6), 3.297152e-5, 1e-15);
  // With communication overlap (tp_overlap 0.5) half of it is exposed.
  ThroughputOptions overlap;
  overlap.tp_comm_overlap = true;
  const ThroughputModel o(c.Require("tiny-gpt"), c.efficiency(), Gpu("A100-80GB"),
                          HardwareCatalog::Default(), {4, 1}, overlap);
  EXPECT_NEAR(o.Estimate(2, 3, dp, 1000).tp_comm_seconds, e.tp_comm_seconds / 2, 1e-15);
}

TEST(Goodput, PipelineBubbleIsPpMinusOneStageSlots) {
  // PP 2, N = 6 micro-batches: (6 + 2 - 1) = 7 stage slots; the bubble is 1 / 7 of the compute.
  // Each stage computes half the layers: t_stage = b x F_exec / (2 x u x peak).
  const ModelCatalog c = TestCatalog();
  const ThroughputModel t(c.Require("tiny-gpt"), c.efficiency(), Gpu("A100-80GB"),
                          HardwareCatalog::Default(), {1, 2});
  DataParallelSetup dp;
  dp.pp_gbps = 300;
  dp.pp_latency_seconds = 0;
  const StepEstimate e = t.Estimate(1, 6, dp, 1000);
  EXPECT_NEAR(e.compute_seconds, 7 * 6.48759738368e11 / (2 * 156e12), 1e-12);
  // Sends: 2 per micro-batch and slot of 1 x 1024 x 1024 x 2 bytes at 300 GB/s.
  EXPECT_NEAR(e.pp_comm_seconds, 7 * 2 * (2097152 / 300e9), 1e-15);
}

// The bucket pipeline simulated bucket by bucket: bucket i (1..k) is ready at i W / k and sent
// after the previous one, taking T / k; returns when the last send ends, less W.
double SimulatedBucketPipeline(double comm, double window, int buckets) {
  double free_at = 0;
  for (int i = 1; i <= buckets; ++i) {
    free_at = std::max(free_at, i * window / buckets) + comm / buckets;
  }
  return free_at - window;
}

TEST(Goodput, BucketedAllReduceExposesOneBucketOrTheExcessOverTheWindow) {
  // The closed form agrees with the pipeline simulated send by send.
  for (int k : {1, 2, 3, 16, 80}) {
    for (double comm : {0.0, 1e-3, 7e-3, 0.3}) {
      for (double window : {0.0, 1e-3, 2.79e-3, 0.135}) {
        EXPECT_NEAR(ExposedBucketedSeconds(comm, window, k),
                    SimulatedBucketPipeline(comm, window, k), 1e-15)
            << k << " " << comm << " " << window;
      }
    }
  }
  // By hand: T = 8 ms in 4 buckets; a window of 20 ms hides all but the last bucket (2 ms); a
  // window of 4 ms hides 4 x (1 - 1/4) = 3 ms of it (5 ms exposed); no window exposes all 8 ms.
  EXPECT_DOUBLE_EQ(ExposedBucketedSeconds(8e-3, 20e-3, 4), 2e-3);
  EXPECT_DOUBLE_EQ(ExposedBucketedSeconds(8e-3, 4e-3, 4), 5e-3);
  EXPECT_DOUBLE_EQ(ExposedBucketedSeconds(8e-3, 0, 4), 8e-3);
}

TEST(Goodput, DataParallelAllReduceOverlapsOnlyTheLastBackwardPass) {
  // 8 replicas, ring 100 GB/s, no latency: T = 2 x 7/8 x 4e8 B (FP32 gradients) / 100e9 =
  // 7e-3 s in k = 4e8 / 25e6 = 16 buckets of 4.375e-4 s (PyTorch DDP's 25 MB).
  // Window: the backward share of a micro-batch, 1 - forward / executed FLOPs = 1 -
  // (6.40169803776e11 / 3) / 6.48759738368e11 = 0.671079 (selective recomputation), times
  // t_micro = 6.48759738368e11 / 156e12 = 4.158716e-3 s per sample: W(1) = 2.79083e-3 s.
  const ModelCatalog c = TestCatalog();
  const ThroughputModel t(c.Require("tiny-gpt"), c.efficiency(), Gpu("A100-80GB"),
                          HardwareCatalog::Default());
  DataParallelSetup dp;
  dp.replicas = 8;
  dp.ring_gbps = 100;
  const double total = 2.0 * 7 / 8 * 4e8 / 100e9;
  const double window1 = (1 - 6.40169803776e11 / 3 / 6.48759738368e11) * 6.48759738368e11 / 156e12;
  EXPECT_NEAR(window1, 2.79083e-3, 1e-8);
  // Micro-batch 1: communication dominates, T - W + W / 16 = 4.384e-3 s exposed.
  EXPECT_NEAR(t.Estimate(1, 1, dp, 1000).comm_seconds, total - window1 + window1 / 16, 1e-12);
  // Three micro-batches: the first two accumulate locally (no_sync); the window is still the
  // last one's backward pass.
  EXPECT_NEAR(t.Estimate(1, 3, dp, 1000).comm_seconds, total - window1 + window1 / 16, 1e-12);
  // Micro-batch 4: W = 1.116e-2 s > T, only the last bucket stays exposed.
  EXPECT_NEAR(t.Estimate(4, 1, dp, 1000).comm_seconds, total / 16, 1e-12);
  // advise --overlap 0.5: at most half of T hides.
  DataParallelSetup capped = dp;
  capped.comm_overlap = 0.5;
  EXPECT_NEAR(t.Estimate(4, 1, capped, 1000).comm_seconds, total / 2, 1e-12);
  // After the backward pass (no overlap) in FP16: T at half the bytes, all exposed.
  ThroughputOptions post;
  post.allreduce_after_backward = true;
  post.allreduce_bytes_per_parameter = 2;
  const ThroughputModel p(c.Require("tiny-gpt"), c.efficiency(), Gpu("A100-80GB"),
                          HardwareCatalog::Default(), {}, post);
  EXPECT_NEAR(p.Estimate(4, 1, dp, 1000).comm_seconds, total / 2, 1e-12);
}

TEST(Goodput, StackBucketsFollowTheStacksDefaults) {
  // A stack with Megatron-Core's rule, max(4e7, 1e6 x DP) parameters per bucket: on 8 replicas
  // 4e7 parameters x 4 B = 1.6e8 B, k = ceil(4e8 / 1.6e8) = 3, so at micro-batch 4 (window
  // longer than T) one third of T stays exposed; on 64 replicas 6.4e7 parameters, k = 2.
  // One with 64 MB buckets (Horovod's fusion buffer): k = ceil(4e8 / 6.4e7) = 7.
  const ModelCatalog c =
      TestCatalog(R"(,"frameworks":{"pytorch":{},"mcore":{"bucket_parameters":[4e7,1e6]},)"
                  R"("horovod":{"bucket_bytes":64e6}})");
  DataParallelSetup dp;
  dp.ring_gbps = 100;
  ThroughputOptions options;
  options.framework = &c.efficiency().FrameworkNamed("mcore");
  const ThroughputModel m(c.Require("tiny-gpt"), c.efficiency(), Gpu("A100-80GB"),
                          HardwareCatalog::Default(), {}, options);
  dp.replicas = 8;
  EXPECT_NEAR(m.Estimate(4, 1, dp, 1000).comm_seconds, 2.0 * 7 / 8 * 4e8 / 100e9 / 3, 1e-12);
  dp.replicas = 64;
  EXPECT_NEAR(m.Estimate(8, 1, dp, 1000).comm_seconds, 2.0 * 63 / 64 * 4e8 / 100e9 / 2, 1e-12);
  options.framework = &c.efficiency().FrameworkNamed("horovod");
  const ThroughputModel h(c.Require("tiny-gpt"), c.efficiency(), Gpu("A100-80GB"),
                          HardwareCatalog::Default(), {}, options);
  dp.replicas = 8;
  EXPECT_NEAR(h.Estimate(4, 1, dp, 1000).comm_seconds, 2.0 * 7 / 8 * 4e8 / 100e9 / 7, 1e-12);
}

TEST(Goodput, RemovedOverlapShareIsRejected) {
  // The catalog no longer takes a fixed overlap share: naming one is an error, not ignored.
  EXPECT_THROW(TestCatalog(R"(,"dp_overlap":0.9)"), InputError);
}

TEST(Goodput, SynchronizedGpusWaitForTheSlowest) {
  // cv 0.02 on 8 GPUs: compute x (1 + 0.02 x sqrt(2 ln 8)) = x 1.040785.
  const ModelCatalog c = TestCatalog(R"(,"step_time_cv":{"decoder":0.02})");
  const ThroughputModel t(c.Require("tiny-gpt"), c.efficiency(), Gpu("A100-80GB"),
                          HardwareCatalog::Default());
  DataParallelSetup dp;
  dp.replicas = 8;
  dp.ring_gbps = 1e9;  // communication negligible
  EXPECT_NEAR(t.Estimate(1, 1, dp, 1000).compute_seconds,
              6.48759738368e11 / 156e12 * (1 + 0.02 * std::sqrt(2 * std::log(8.0))), 1e-12);
}

TEST(Goodput, TargetGlobalBatchUsesGradientAccumulation) {
  // BERT-large on a V100-16GB at sequence 128: 16 GiB - (0.22 GiB driver + 1.27 GiB overhead) -
  // 6.1812e9 B state = 9,398,793,866 B free; / 1.56056e8 B per sample (memory_model_test.cc) =
  // 60.2: B_max = 60. A global batch of 512 on one GPU: ceil(512 / 60) = 9 accumulation steps of
  // ceil(512 / 9) = 57.
  const ModelCatalog& catalog = ModelCatalog::Default();
  const ThroughputModel t(catalog.Require("BERT-large"), catalog.efficiency(), Gpu("V100-16GB"),
                          HardwareCatalog::Default());
  ASSERT_EQ(MaxBatch(t.memory(), GpuMemoryBytes(Gpu("V100-16GB"))), 60);
  const auto plan = RecommendBatch(t, {}, 1e4, 512);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->accumulation, 9);
  EXPECT_EQ(plan->micro_batch, 57);
  EXPECT_EQ(plan->global_batch, 513);
}

TEST(Goodput, ModelsThatDoNotFitGetNoRecommendation) {
  const ModelCatalog& catalog = ModelCatalog::Default();
  const ThroughputModel t(catalog.Require("LLaMA-13B"), catalog.efficiency(), Gpu("V100-16GB"),
                          HardwareCatalog::Default());
  EXPECT_FALSE(RecommendBatch(t, {}, 500).has_value());
}

}  // namespace
}  // namespace clustersim
